package system

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/t3agent/t3agent/internal/builtin/introspect"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3/dotenv"
)

// secretEnvName is the reference's rule for environment names whose
// values get_env hides.
var secretEnvName = regexp.MustCompile(`(?i)PASS|PASSWORD|PWD|SECRET|TOKEN|KEY|SALT|CREDENTIAL|AUTH|PRIVATE|MASTER|ENCRYPT|DSN|DATABASE_URL|APIKEY|API_KEY`)

// maxEnvLines caps get_env.
const maxEnvLines = 300

type getEnv struct {
	env
	raw bool
}

func (t *getEnv) Spec() tool.Spec {
	name, class, enabled := "get_env", tool.SystemDiagnostics, true
	desc := "Environment variables, clearly labelled by source: source dotenv (default when the project has one) is " +
		"the TYPO3 project's .env file, source t3agent is the environment of the t3agent process itself (not the " +
		"web server's, which t3agent cannot see). One `NAME=value` line each, at most 300; values of names that " +
		"look like credentials (PASSWORD, SECRET, TOKEN, KEY, SALT, AUTH, DSN, DATABASE_URL, …) show as " +
		"[redacted], URL passwords as ***. prefix keeps names starting with it. Use it to see TYPO3_CONTEXT or " +
		"the variables site configurations read with %env()%."
	if t.raw {
		name, class, enabled = "get_env_raw", tool.SecretAdjacent, false
		desc = "Like get_env, but values are shown without get_env's broad name rule (every name containing KEY, " +
			"AUTH, PRIVATE, …); only what t3agent's credential rule recognises (a password, secret or API key name " +
			"holding a real value, URL passwords, API key and token formats, private keys) is still masked. Disabled by default; an administrator enables it " +
			"for local models only."
	}
	return introspect.Spec(name, tool.GroupSystem, class, enabled, desc,
		`{"type":"object","properties":{`+
			`"source":{"type":"string","enum":["dotenv","t3agent"],"description":"dotenv: the project's .env; t3agent: t3agent's own process environment."},`+
			`"prefix":{"type":"string","maxLength":100,"description":"Only names starting with this text (case-insensitive)."}`+
			`},"additionalProperties":false}`)
}

func (t *getEnv) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	if res, ok := introspect.Authorize(call); !ok {
		return res, nil
	}
	source, err := introspect.String(args, "source")
	if err != nil || (source != "" && source != "dotenv" && source != "t3agent") {
		return tool.Errorf("source must be dotenv or t3agent."), nil
	}
	prefix, err := introspect.String(args, "prefix")
	if err != nil {
		return tool.Errorf("%s.", err.Error()), nil
	}
	var vars []dotenv.Var
	var label string
	if source != "t3agent" {
		root, _ := t.root()
		file, exists, err := dotenv.Read(root)
		switch {
		case err != nil:
			return tool.Errorf("The project's .env cannot be read: %s.", introspect.Cut(err.Error(), 200)), nil
		case exists:
			vars, label = file, "The TYPO3 project's .env file"
		case source == "dotenv":
			return tool.Text("The TYPO3 project has no .env file (or no installation folder is configured)."), nil
		}
	}
	if label == "" {
		for _, kv := range os.Environ() {
			n, v, _ := strings.Cut(kv, "=")
			vars = append(vars, dotenv.Var{Name: n, Value: v})
		}
		sort.SliceStable(vars, func(i, j int) bool { return vars[i].Name < vars[j].Name })
		label = "The environment of the t3agent process (not the web server's)"
	}
	out := introspect.NewOutput(maxEnvLines + 1)
	rule := "credential-like names redacted"
	if t.raw {
		rule = "shown as is except credentials the secret redaction recognises"
	}
	out.Line("%s, %s:", label, rule)
	n := 0
	for _, v := range vars {
		if prefix != "" && !strings.HasPrefix(strings.ToUpper(v.Name), strings.ToUpper(prefix)) {
			continue
		}
		n++
		value := v.Value
		switch {
		case t.raw:
			value = introspect.Value(v.Name, value)
		case secretEnvName.MatchString(v.Name):
			value = introspect.Redacted
		default:
			value = introspect.Value(v.Name, value)
		}
		out.Line("%s=%s", v.Name, introspect.Cut(value, 400))
	}
	if n == 0 {
		out.Line("(no variables%s)", map[bool]string{true: " with that prefix", false: ""}[prefix != ""])
	}
	return tool.Text(out.String()), nil
}

// phpScript prints what get_php_info shows as JSON.
const phpScript = `echo json_encode(['version'=>PHP_VERSION,'sapi'=>PHP_SAPI,'os'=>PHP_OS_FAMILY,` +
	`'extensions'=>get_loaded_extensions(),'ini'=>['memory_limit'=>ini_get('memory_limit'),` +
	`'max_execution_time'=>ini_get('max_execution_time'),'upload_max_filesize'=>ini_get('upload_max_filesize'),` +
	`'post_max_size'=>ini_get('post_max_size'),'date.timezone'=>ini_get('date.timezone')]]);`

// phpTimeout bounds one PHP run.
const phpTimeout = 10 * time.Second

type phpInfo struct {
	env
	raw bool
}

func (t *phpInfo) Spec() tool.Spec {
	name, class, enabled := "get_php_info", tool.SystemDiagnostics, true
	desc := "PHP version, loaded extensions and five ini settings (memory_limit, max_execution_time, " +
		"upload_max_filesize, post_max_size, date.timezone) of the PHP command line on t3agent's machine " +
		"(php -r), labelled as the CLI: the web server's PHP may differ. When that machine has no PHP the " +
		"answer says \"unavailable\"; nothing is guessed. Use it for PHP version and extension questions."
	if t.raw {
		name, class, enabled = "get_php_info_raw", tool.SecretAdjacent, false
		desc = "The full phpinfo() text of the PHP command line on t3agent's machine (php -i), at most 50 kB, " +
			"credentials masked by t3agent's secret redaction; \"unavailable\" without PHP. Disabled by default: " +
			"it shows the CLI's environment and paths."
	}
	return introspect.Spec(name, tool.GroupSystem, class, enabled, desc, `{"type":"object","properties":{},"additionalProperties":false}`)
}

func (t *phpInfo) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	if res, ok := introspect.Authorize(call); !ok {
		return res, nil
	}
	bin, err := exec.LookPath(t.p.PHP)
	if err != nil {
		return tool.Text("PHP information is unavailable: t3agent's machine has no PHP command line (" + t.p.PHP + " not found), and t3agent does not guess the web server's PHP."), nil
	}
	ctx, cancel := context.WithTimeout(ctx, phpTimeout)
	defer cancel()
	argv := []string{"-r", phpScript}
	if t.raw {
		argv = []string{"-i"}
	}
	cmd := exec.CommandContext(ctx, bin, argv...)
	var stdout bytes.Buffer
	cmd.Stdout = &limitWriter{w: &stdout, left: introspect.MaxBytes * 4}
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) || ctx.Err() != nil {
			return tool.Text(fmt.Sprintf("PHP information is unavailable: %s failed (%s).", bin, introspect.Cut(err.Error(), 120))), nil
		}
		return tool.Text("PHP information is unavailable: the PHP command line could not be run."), nil
	}
	if t.raw {
		text := introspect.Text(stdout.String())
		if len(text) > introspect.MaxBytes-200 {
			text = strings.ToValidUTF8(text[:introspect.MaxBytes-200], "") + "\n… (cut)"
		}
		return tool.Text("phpinfo() of the PHP command line on t3agent's machine (" + bin + "; the web server's PHP may differ):\n" + text), nil
	}
	var info struct {
		Version    string            `json:"version"`
		SAPI       string            `json:"sapi"`
		OS         string            `json:"os"`
		Extensions []string          `json:"extensions"`
		INI        map[string]string `json:"ini"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &info); err != nil || info.Version == "" {
		return tool.Text("PHP information is unavailable: " + bin + " did not answer as PHP does."), nil
	}
	out := introspect.NewOutput(20)
	out.Line("PHP %s, %s SAPI on %s (the command line on t3agent's machine, %s; the web server's PHP may differ)",
		introspect.Cut(info.Version, 40), introspect.Cut(info.SAPI, 20), introspect.Cut(info.OS, 20), bin)
	sort.Strings(info.Extensions)
	out.Line("Extensions (%d): %s", len(info.Extensions), introspect.Cut(strings.Join(info.Extensions, ", "), 3000))
	for _, k := range []string{"memory_limit", "max_execution_time", "upload_max_filesize", "post_max_size", "date.timezone"} {
		out.Line("%s = %s", k, introspect.Cut(introspect.Text(info.INI[k]), 100))
	}
	return tool.Text(out.String()), nil
}

// limitWriter keeps at most left bytes and drops the rest.
type limitWriter struct {
	w    *bytes.Buffer
	left int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	n := len(p)
	if l.left > 0 {
		k := min(len(p), l.left)
		l.w.Write(p[:k])
		l.left -= k
	}
	return n, nil
}
