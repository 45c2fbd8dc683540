package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/t3agent/t3agent/internal/cli"
	"github.com/t3agent/t3agent/internal/dbtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// run executes the command tree in-process in workDir.
func run(t *testing.T, ctx context.Context, workDir string, env []string, args ...string) (string, string, error) {
	t.Helper()
	return runIn(t, ctx, workDir, env, nil, false, args...)
}

// runIn is run with stdin; interactive says a person answers prompts on it.
func runIn(t *testing.T, ctx context.Context, workDir string, env []string, stdin io.Reader, interactive bool, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	root := cli.NewRootCommand(cli.Env{Stdin: stdin, Stdout: &stdout, Stderr: &stderr, Environ: env, WorkDir: workDir, Interactive: interactive})
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	return stdout.String(), stderr.String(), err
}

func TestVersion(t *testing.T) {
	t.Parallel()
	out, _, err := run(t, context.Background(), t.TempDir(), nil, "version", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]string
	if err := json.Unmarshal([]byte(out), &v); err != nil || v["version"] == "" {
		t.Fatalf("version --json = %q (%v)", out, err)
	}
}

func TestErrorsAreOneSentence(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("site:\n  dsn: sqlite:x.db\nlog:\n  level: loud\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"serve"}, "no configuration found"},
		{[]string{"serve", "--config", bad}, `log.level: "loud" is not one of`},
		{[]string{"tca", "show", "--config", bad}, "log.level:"},
		{[]string{"version", "--log-level", "chatty"}, "--log-level"},
		{[]string{"demo", "import-t3d", "x.xml"}, "--schema is required"},
	}
	for _, c := range cases {
		_, _, err := run(t, context.Background(), dir, nil, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want it to contain %q", c.args, err, c.want)
			continue
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: error spans lines: %q", c.args, err)
		}
	}
}

func TestDemoInitIsIdempotentAndTCACommandsWork(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	ctx := context.Background()
	args := []string{"demo", "init", "--pages", "40", "--content", "80", "--fast-hashes", "--json"}
	out1, _, err := run(t, ctx, work, nil, args...)
	if err != nil {
		t.Fatal(err)
	}
	var first, second struct {
		Existed bool           `json:"existed"`
		Counts  map[string]int `json:"counts"`
		Users   []struct {
			Username, Password string
		} `json:"users"`
	}
	if err := json.Unmarshal([]byte(out1), &first); err != nil {
		t.Fatalf("%v in %s", err, out1)
	}
	if first.Existed || first.Counts["pages"] != 40 || first.Counts["tt_content"] != 80 {
		t.Fatalf("first init: %+v", first)
	}
	key, err := os.Stat(filepath.Join(work, cli.DefaultDataDir, "master.key"))
	if err != nil || key.Mode().Perm() != 0o600 {
		t.Errorf("demo master key missing or readable by others: %v", err)
	}
	db := filepath.Join(work, cli.DefaultDataDir, "site.db")
	before, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	out2, _, err := run(t, ctx, work, nil, args...)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out2), &second); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	if !second.Existed || !after.ModTime().Equal(before.ModTime()) || after.Size() != before.Size() {
		t.Errorf("second init changed the demo: existed=%v mtime %v→%v", second.Existed, before.ModTime(), after.ModTime())
	}
	if len(second.Users) == 0 || second.Users[0].Password != first.Users[0].Password {
		t.Errorf("second init does not report the same logins")
	}

	// The demo's configuration is found from the working directory.
	out, _, err := run(t, ctx, work, nil, "tca", "show")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "TCA from bundled") || !strings.Contains(out, "tt_content") {
		t.Errorf("tca show:\n%s", out)
	}
	out, _, err = run(t, ctx, work, nil, "tca", "show", "pages")
	if err != nil || !strings.Contains(out, "perms") && !strings.Contains(out, "doktype") {
		t.Errorf("tca show pages: %v\n%s", err, out)
	}
	if _, _, err := run(t, ctx, work, nil, "tca", "show", "no_such_table"); err == nil || !strings.Contains(err.Error(), `no table "no_such_table"`) {
		t.Errorf("unknown table: %v", err)
	}

	// Importing the introduction package's real TCA switches the source.
	export := filepath.Join(dbtest.TYPO3Material(t), "tca-introduction.json")
	if _, _, err := run(t, ctx, work, nil, "tca", "import", export); err != nil {
		t.Fatal(err)
	}
	out, _, err = run(t, ctx, work, nil, "tca", "show", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var shown struct {
		Source string           `json:"source"`
		Tables []map[string]any `json:"tables"`
	}
	if err := json.Unmarshal([]byte(out), &shown); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(shown.Source, "tca-export.json") || len(shown.Tables) != 24 {
		t.Errorf("after import: source %q, %d tables", shown.Source, len(shown.Tables))
	}
	// A broken export is refused and the stored one stays.
	broken := filepath.Join(work, "broken.json")
	if err := os.WriteFile(broken, []byte(`{"pages": [`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, ctx, work, nil, "tca", "import", broken); err == nil || !strings.Contains(err.Error(), "not a usable TCA export") {
		t.Errorf("broken export: %v", err)
	}
	out, _, err = run(t, ctx, work, nil, "tca", "show", "--json")
	if err != nil || !strings.Contains(out, `"sys_template"`) {
		t.Errorf("stored export lost after a refused import: %v", err)
	}
}

func TestDemoServesProbes(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, _, err := run(t, ctx, work, nil, "demo", "init", "--pages", "30", "--content", "40", "--fast-hashes"); err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		root := cli.NewRootCommand(cli.Env{Stdout: pw, Stderr: io.Discard, WorkDir: work})
		root.SetArgs([]string{"demo", "--listen", "127.0.0.1:0"})
		err := root.ExecuteContext(ctx)
		_ = pw.CloseWithError(io.EOF)
		done <- err
	}()
	url := ""
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "t3agent demo is serving "); ok {
			url = u
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if url == "" {
		t.Fatalf("demo never announced its URL: %v", <-done)
	}
	// The MCP facade and its OAuth server are mounted (the demo has a master key).
	for _, p := range []string{"/healthz", "/readyz", "/metrics", "/", "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-authorization-server"} {
		resp, err := http.Get(url + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s = %d: %s", p, resp.StatusCode, body)
		}
		// The demo opens on the console's login, which names no backend user.
		if p == "/" && (!strings.Contains(string(body), `id="login-submit"`) || strings.Contains(string(body), "<td>editor</td>") || strings.Contains(string(body), "<td>admin</td>")) {
			t.Errorf("the start page is not the login, or names backend users: %s", body)
		}
	}
	resp, err := http.Post(url+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Errorf("/mcp without a token = %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	http.DefaultClient.CloseIdleConnections()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("demo did not stop cleanly: %v", err)
	}
}
