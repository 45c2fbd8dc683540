package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/secret"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/telemetry"
)

// storeDir is a working directory with a t3agent.yaml, a master key and
// an empty store; the site database is never opened by these commands.
func storeDir(t *testing.T) string {
	t.Helper()
	work := t.TempDir()
	key, err := secret.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"master.key": key + "\n",
		"t3agent.yaml": "data_dir: .\nstore:\n  dsn: sqlite:t3agent.db\nsite:\n  dsn: sqlite:site.db\n" +
			"security:\n  master_key_file: master.key\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(work, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return work
}

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// docExample is the first YAML block of docs/configuration.md: the
// documented example must apply as it is.
func docExample(t *testing.T) string {
	t.Helper()
	return markdownYAML(t, filepath.Join("docs", "configuration.md"), "")
}

// markdownYAML is the first YAML block of a markdown file of the
// repository after the text after.
func markdownYAML(t *testing.T, file, after string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", file))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)" + regexp.QuoteMeta(after) + ".*?```yaml\n(.*?)```").FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s has no yaml block after %q", file, after)
	}
	return string(m[1])
}

func mustRun(t *testing.T, work string, env []string, args ...string) string {
	t.Helper()
	out, _, err := run(t, context.Background(), work, env, args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return out
}

func TestApplyAndConfigCommands(t *testing.T) {
	t.Parallel()
	work := storeDir(t)
	example := docExample(t)
	writeFile(t, work, "agents.yaml", example)

	out := mustRun(t, work, nil, "apply", "-f", "agents.yaml")
	if !strings.Contains(out, "13 created, 0 updated, 0 unchanged, 0 deleted.") ||
		!regexp.MustCompile(`configuration\s+editor-assistant\s+created`).MatchString(out) {
		t.Fatalf("first apply:\n%s", out)
	}
	if out := mustRun(t, work, nil, "apply", "-f", "agents.yaml"); !strings.Contains(out, "0 created, 0 updated, 13 unchanged, 0 deleted.") {
		t.Errorf("second apply:\n%s", out)
	}
	var rep agentconfig.ApplyReport
	if err := json.Unmarshal([]byte(mustRun(t, work, nil, "apply", "-f", "agents.yaml", "--json")), &rep); err != nil ||
		rep.Changed() || len(rep.Changes) != 13 {
		t.Errorf("apply --json = %+v (%v)", rep, err)
	}
	writeFile(t, work, "agents.yaml", strings.Replace(example, "temperature: 0.2", "temperature: 0.3", 1))
	out = mustRun(t, work, nil, "apply", "-f", "agents.yaml")
	if !regexp.MustCompile(`configuration\s+editor-assistant\s+updated \(temperature\)`).MatchString(out) ||
		!strings.Contains(out, "0 created, 1 updated, 12 unchanged") {
		t.Errorf("apply of one change:\n%s", out)
	}

	// The refusal docs/configuration.md quotes, word for word.
	writeFile(t, work, "hot.yaml", strings.Replace(example, "temperature: 0.2                   # Anthropic", "temperature: 1.5                   # Anthropic", 1))
	_, _, err := run(t, context.Background(), work, nil, "apply", "-f", "hot.yaml")
	quoted := `configuration "editor-assistant-anthropic" (line 74): temperature: must be between 0 and 1 for this provider, not 1.5`
	if err == nil || !strings.Contains(err.Error(), quoted) {
		t.Errorf("apply of a too hot Anthropic configuration: %v", err)
	}

	list := mustRun(t, work, nil, "config", "list")
	for _, want := range []string{"env:OPENAI_API_KEY", "http://127.0.0.1:11434/v1", "$0.40 / $1.60", "unlimited",
		"editor-assistant-anthropic,local-assistant", "100 requests/day, $10.00/month"} {
		if !strings.Contains(list, want) {
			t.Errorf("config list lacks %q:\n%s", want, list)
		}
	}

	// A configuration as a run sees it: the global fallback lowers its zone.
	show := mustRun(t, work, nil, "config", "show", "editor-assistant")
	for _, want := range []string{
		"configuration  editor-assistant — Answers editors' questions",
		"trust zone     externalGlobal (least trusted along the fallback chain; ceiling editorContent)",
		"guardrails     secret-redaction (mandatory), pii-redaction, provider-content-filter",
		"fallbacks      editor-assistant-anthropic (claude-sonnet-4-5 on anthropic, externalGlobal), local-assistant (qwen2.5:14b on ollama, local)",
		"four eyes      yes", "temperature    0.3", "500 requests/day, 2000000 tokens/day, $5.00/day, $60.00/month",
		"  You help the editors of this TYPO3 site.",
	} {
		if !strings.Contains(show, want) {
			t.Errorf("config show lacks %q:\n%s", want, show)
		}
	}
	if local := mustRun(t, work, nil, "config", "show", "local-assistant"); !strings.Contains(local, "trust zone     local (") ||
		!strings.Contains(local, "tool groups    content, structure, configuration") {
		t.Errorf("config show local-assistant:\n%s", local)
	}
	var resolved struct {
		Provider  struct{ Identifier, APIKey string }
		Fallbacks []json.RawMessage
	}
	if err := json.Unmarshal([]byte(mustRun(t, work, nil, "config", "show", "editor-assistant", "--json")), &resolved); err != nil ||
		len(resolved.Fallbacks) != 2 || resolved.Provider.Identifier != "openai" || resolved.Provider.APIKey != "env:OPENAI_API_KEY" {
		t.Errorf("config show --json = %+v (%v)", resolved, err)
	}
	for name, want := range map[string]string{
		"backend-chat": "task           backend-chat",
		"qwen-local":   "model          qwen-local (qwen2.5:14b on ollama, context 32768",
		"ollama":       "provider       ollama (openai_compatible at http://127.0.0.1:11434/v1, key none, zone local, timeout 5m0s, 0 retries)",
	} {
		if out := mustRun(t, work, nil, "config", "show", name); !strings.Contains(out, want) {
			t.Errorf("config show %s lacks %q:\n%s", name, want, out)
		}
	}

	// Prune: dry first, then for real.
	writeFile(t, work, "small.yaml", `
providers:
  - identifier: ollama
    adapter: openai_compatible
    endpoint: http://127.0.0.1:11434/v1
    trust_zone: local
`)
	out = mustRun(t, work, nil, "apply", "-f", "small.yaml", "--prune", "--dry-run")
	if !strings.Contains(out, "0 created, 1 updated, 0 unchanged, 12 deleted. Dry run: nothing was written.") {
		t.Errorf("dry prune:\n%s", out)
	}
	if again := mustRun(t, work, nil, "config", "list"); again != list {
		t.Error("a dry run changed the configuration")
	}
	if out := mustRun(t, work, nil, "apply", "-f", "small.yaml", "--prune"); !strings.Contains(out, "12 deleted.") {
		t.Errorf("prune:\n%s", out)
	}
	if out := mustRun(t, work, nil, "config", "list"); regexp.MustCompile(`(?m)^(openai|anthropic|editor-assistant|backend-chat|editor)\s`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^ollama\s`).MatchString(out) {
		t.Errorf("after prune:\n%s", out)
	}
}

func TestApplySealsLiteralKeys(t *testing.T) {
	t.Parallel()
	work := storeDir(t)
	key := "sk-" + "proj-" + "Lm4Nq8Rs2Tv6Wx0Yz3Ab7Cd1Ef5Gh9Ij"
	writeFile(t, work, "keys.yaml", `
providers:
  - identifier: openai
    adapter: openai
    api_key: `+key+`
    trust_zone: externalGlobal
`)
	mustRun(t, work, nil, "apply", "-f", "keys.yaml")
	var raw []byte
	for _, f := range []string{"t3agent.db", "t3agent.db-wal"} {
		b, _ := os.ReadFile(filepath.Join(work, f))
		raw = append(raw, b...)
	}
	if len(raw) == 0 || bytes.Contains(raw, []byte(key)) {
		t.Errorf("the database (%d bytes) holds the key in clear, or is missing", len(raw))
	}
	for _, args := range [][]string{{"config", "list"}, {"config", "list", "--json"}, {"config", "show", "openai"}, {"config", "show", "openai", "--json"}} {
		out := mustRun(t, work, nil, args...)
		if strings.Contains(out, key) || strings.Contains(out, "t3s1:") || !strings.Contains(out, "sealed") {
			t.Errorf("%v shows the key or its sealed form:\n%s", args, out)
		}
	}
	if out := mustRun(t, work, nil, "apply", "-f", "keys.yaml"); !strings.Contains(out, "1 unchanged") {
		t.Errorf("re-applying a literal key:\n%s", out)
	}
}

func TestApplyErrors(t *testing.T) {
	t.Parallel()
	work := storeDir(t)
	writeFile(t, work, "bad.yaml", `
providers:
  - identifier: openai
    adapter: openai
    api_key: sk-`+"live-hunter2-hunter2-hunter2"+`
    trust_zone: externalGlobal
configurations:
  - identifier: support
    model: gpt-5
    max_rounds: 50
`)
	writeFile(t, work, "typo.yaml", "providers:\n  - identifier: x\n    adaptor: openai\n"+
		"configurations:\n  - identifier: support\n    model: gpt-5\n    max_rounds: 50\n    budgets:\n      cost_per_dya: 5\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"apply"}, "apply needs -f FILE.yaml"},
		{[]string{"apply", "-f", "missing.yaml"}, "missing.yaml cannot be read"},
		{[]string{"apply", "-f", "bad.yaml"}, `bad.yaml: the configuration is refused, nothing was applied: configuration "support" (line 8): model: no model "gpt-5" in this file or the store; configuration "support" (line 8): max_rounds: must be between 1 and 20, not 50`},
		{[]string{"apply", "-f", "typo.yaml"}, `typo.yaml: the configuration is refused, nothing was applied: provider "x" (line 2): adaptor: is not a known key; did you mean adapter?`},
		{[]string{"config", "show", "nope"}, `there is no configuration, task, model or provider "nope"`},
		{[]string{"config", "show"}, "accepts 1 arg"},
	} {
		_, _, err := run(t, context.Background(), work, nil, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%v: err = %v\nwant one line containing %q", c.args, err, c.want)
		}
	}
	// Every problem of the file at once: unknown keys at every level,
	// invalid values and dangling references.
	_, _, err := run(t, context.Background(), work, nil, "apply", "-f", "typo.yaml")
	for _, want := range []string{
		`provider "x" (line 2): adaptor: is not a known key; did you mean adapter?`,
		`provider "x" (line 2): adapter: "" is not openai`,
		`provider "x" (line 2): trust_zone: "" is not local`,
		`configuration "support" (line 5): budgets.cost_per_dya: is not a known key; did you mean cost_per_day?`,
		`configuration "support" (line 5): model: no model "gpt-5" in this file or the store`,
		`configuration "support" (line 5): max_rounds: must be between 1 and 20, not 50`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("apply -f typo.yaml: err = %v\nwant it to list %q", err, want)
		}
	}
	if out := mustRun(t, work, nil, "config", "list", "--json"); !strings.Contains(out, `"providers": []`) {
		t.Errorf("a refused file left records:\n%s", out)
	}
}

func TestUsageCommand(t *testing.T) {
	t.Parallel()
	work := storeDir(t)
	st, err := store.Open(context.Background(), "sqlite:"+filepath.Join(work, "t3agent.db"), store.OpenParams{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	rec := telemetry.New(telemetry.Params{Store: st, Now: func() time.Time { return now }})
	priced := agentconfig.Entry{
		Configuration: agentconfig.Configuration{Identifier: "support"},
		Model:         agentconfig.Model{Identifier: "gpt", ModelID: "gpt-4.1-mini", Prices: &agentconfig.Prices{Input: agentconfig.Dollar, Output: 4 * agentconfig.Dollar}},
		Provider:      agentconfig.Provider{Identifier: "openai"},
	}
	local := agentconfig.Entry{
		Configuration: agentconfig.Configuration{Identifier: "local"},
		Model:         agentconfig.Model{Identifier: "qwen", ModelID: "qwen2.5"},
		Provider:      agentconfig.Provider{Identifier: "ollama"},
	}
	calls := []telemetry.CallParams{
		{Source: "chat", Username: "editor", Entry: priced, Usage: &llm.Usage{InputTokens: 1000, OutputTokens: 250}}, // $0.002
		{Source: "chat", Username: "editor", Entry: priced, Usage: &llm.Usage{InputTokens: 1000, OutputTokens: 250}},
		{Source: "cli", Username: "admin", Entry: local, Usage: &llm.Usage{InputTokens: 50, OutputTokens: 5}},
		{Source: "cli", Username: "admin", Entry: priced, Err: &llm.Error{Class: llm.FailRateLimit}},
	}
	for i, c := range calls {
		if i == 3 {
			now = now.AddDate(0, 0, 1)
		}
		if _, err := rec.RecordCall(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	now = time.Date(2025, 2, 28, 9, 0, 0, 0, time.UTC)
	if _, err := rec.RecordCall(context.Background(), calls[0]); err != nil { // before --since
		t.Fatal(err)
	}
	_ = st.Close()

	usage := func(by string) map[string]store.UsageTotal {
		t.Helper()
		var rep struct {
			By    string
			Rows  []store.UsageRow
			Total store.UsageTotal
		}
		out := mustRun(t, work, nil, "usage", "--by", by, "--since", "2025-03-01", "--until", "2025-03-31", "--json")
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("usage --by %s --json: %v in %s", by, err, out)
		}
		m := map[string]store.UsageTotal{"total": rep.Total}
		for _, r := range rep.Rows {
			m[r.Key] = r.UsageTotal
		}
		return m
	}
	editor := store.UsageTotal{Requests: 2, InputTokens: 2000, OutputTokens: 500, Cost: int64(agentconfig.Dollar) / 250}
	total := store.UsageTotal{Requests: 4, Errors: 1, InputTokens: 2050, OutputTokens: 505, Cost: editor.Cost, Unpriced: 1}
	for by, want := range map[string]map[string]store.UsageTotal{
		"user":     {"editor": editor, "admin": {Requests: 2, Errors: 1, InputTokens: 50, OutputTokens: 5, Unpriced: 1}, "total": total},
		"config":   {"support": {Requests: 3, Errors: 1, InputTokens: 2000, OutputTokens: 500, Cost: editor.Cost}, "local": {Requests: 1, InputTokens: 50, OutputTokens: 5, Unpriced: 1}, "total": total},
		"source":   {"chat": editor, "cli": {Requests: 2, Errors: 1, InputTokens: 50, OutputTokens: 5, Unpriced: 1}, "total": total},
		"model":    {"gpt": {Requests: 3, Errors: 1, InputTokens: 2000, OutputTokens: 500, Cost: editor.Cost}, "qwen": {Requests: 1, InputTokens: 50, OutputTokens: 5, Unpriced: 1}, "total": total},
		"provider": {"openai": {Requests: 3, Errors: 1, InputTokens: 2000, OutputTokens: 500, Cost: editor.Cost}, "ollama": {Requests: 1, InputTokens: 50, OutputTokens: 5, Unpriced: 1}, "total": total},
		"day":      {"2025-03-14": {Requests: 3, InputTokens: 2050, OutputTokens: 505, Cost: editor.Cost, Unpriced: 1}, "2025-03-15": {Requests: 1, Errors: 1}, "total": total},
	} {
		got := usage(by)
		if len(got) != len(want) {
			t.Errorf("usage --by %s = %+v, want %+v", by, got, want)
			continue
		}
		for k, w := range want {
			if got[k] != w {
				t.Errorf("usage --by %s: %s = %+v, want %+v", by, k, got[k], w)
			}
		}
	}

	out := mustRun(t, work, nil, "usage", "--by", "user", "--since", "2025-03-01", "--until", "2025-03-31")
	for _, want := range []string{"USER", "editor", "$0.004", "total", "$0.004 (+1 unpriced)", "Usage 2025-03-01 to 2025-03-31 (UTC days)."} {
		if !strings.Contains(out, want) {
			t.Errorf("usage table lacks %q:\n%s", want, out)
		}
	}
	if out := mustRun(t, work, nil, "usage", "--since", "2025-02-01", "--until", "2025-02-28", "--by", "day"); !strings.Contains(out, "2025-02-28") || strings.Contains(out, "2025-03-14") {
		t.Errorf("usage in February:\n%s", out)
	}
	if out := mustRun(t, work, nil, "usage", "--since", "2030-01-01"); out != "No LLM usage since 2030-01-01.\n" {
		t.Errorf("usage without rows = %q", out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"usage", "--by", "team"}, `--by: "team" is not user, config, source, model, provider or day`},
		{[]string{"usage", "--since", "March"}, `--since: "March" is not a day`},
		{[]string{"usage", "--since", "0d"}, "counts no days"},
		{[]string{"usage", "--since", "2025-03-02", "--until", "2025-03-01"}, "--until is before --since"},
	} {
		_, _, err := run(t, context.Background(), work, nil, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want %q", c.args, err, c.want)
		}
	}
}
