package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/store"
)

func TestRunAndRuns(t *testing.T) {
	t.Parallel()
	work := demoDir(t)
	ctx := context.Background()
	srv := llmtest.NewOpenAI(t,
		llmtest.Calls(llmtest.Call("call_1", "search_records", `{"query":"Aqua 200","limit":2}`)).WithUsage(700, 12),
		llmtest.Text("The Aqua 200 is described on page 6.").WithUsage(900, 9),
	)
	env := []string{"DEMO_OPENAI_KEY=" + llmtest.Key}
	doc := filepath.Join(t.TempDir(), "agents.yaml")
	if err := os.WriteFile(doc, fmt.Appendf(nil, `
providers:
  - identifier: demo-openai
    adapter: openai
    endpoint: %s
    api_key: env:DEMO_OPENAI_KEY
    trust_zone: externalGlobal
models:
  - identifier: demo-model
    provider: demo-openai
    model_id: gpt-demo
    context_length: 128000
    input_price: 2.50
    output_price: 10
configurations:
  - identifier: assistant
    model: demo-model
    system_prompt: You help editors of Nordlicht Pumps.
`, srv.BaseURL()), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, ctx, work, env, "apply", "-f", doc); err != nil {
		t.Fatal(err)
	}

	out, errOut, err := run(t, ctx, work, env, "run", "-C", "assistant", "--as", "editor", "Where is the Aqua 200 described?")
	if err != nil {
		t.Fatalf("run: %v (stderr %s)", err, errOut)
	}
	if out != "The Aqua 200 is described on page 6.\n" {
		t.Errorf("stdout = %q, want the answer alone", out)
	}
	// 1600 × $2.50/M + 21 × $10/M.
	m := regexp.MustCompile(`completed · 2 round\(s\) · 1 tool call\(s\) · 1600 in / 21 out tokens · \$0\.00421 · run ([0-9a-f-]{36})`).FindStringSubmatch(errOut)
	if m == nil {
		t.Fatalf("summary line missing from stderr: %q", errOut)
	}
	id := m[1]
	if !strings.Contains(string(srv.Request(1).Body), "pages:6") {
		t.Error("the tool result did not reach the model")
	}

	out, _, err = run(t, ctx, work, env, "runs", "list", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var runs []store.Run
	if err := json.Unmarshal([]byte(out), &runs); err != nil || len(runs) != 1 || runs[0].ID != id ||
		runs[0].Status != store.RunCompleted || runs[0].OwnerUsername != "editor" || runs[0].CallerSource != "cli" {
		t.Fatalf("runs list = %s (%v)", out, err)
	}
	out, _, err = run(t, ctx, work, env, "runs", "list", "--user", "admin")
	if err != nil || strings.Contains(out, id) || !strings.HasPrefix(out, "RUN") {
		t.Errorf("runs list --user admin = %q, %v", out, err)
	}

	out, _, err = run(t, ctx, work, env, "runs", "show", id)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Run " + id, "status         completed", "user           editor (uid 2)", "configuration  assistant",
		"caller         cli / run", "tokens         1600 in / 21 out", "cost           $0.00421", "Events (7)",
		"context", "gpt-demo via assistant: 2 messages, 4 tool(s)", "answered tool_calls: 700 in / 12 out tokens, $0.00187; calls search_records",
		"search_records [call_1]: ok", "answered stop",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("runs show lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Aqua 200 is described") {
		t.Error("runs show printed content of a metadata-only run")
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--as", "editor", "hi"}, "run needs --configuration NAME (-C)"},
		{[]string{"run", "-C", "assistant", "hi"}, "run needs --as USER"},
		{[]string{"run", "-C", "nope", "--as", "editor", "hi"}, `--configuration nope: agentconfig: not found: there is no configuration "nope"`},
		{[]string{"run", "-C", "assistant", "--as", "former", "hi"}, "cannot act"},
		{[]string{"runs", "show", "0195f1c2-0000-7000-8000-000000000000"}, "there is no run 0195f1c2-0000-7000-8000-000000000000"},
		{[]string{"runs", "list", "--status", "sleeping"}, `--status: "sleeping" is not`},
	} {
		_, _, err := run(t, ctx, work, env, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: err = %v, want one sentence containing %q", c.args, err, c.want)
		}
	}

	// A run that fails still prints its summary and exits non-zero.
	srv.Push(llmtest.Status(401))
	_, errOut, err = run(t, ctx, work, env, "run", "-C", "assistant", "--as", "editor", "Again?")
	if err == nil || !strings.Contains(err.Error(), "The model provider failed (auth, HTTP 401)") || !strings.Contains(errOut, "failed (provider_failed)") {
		t.Errorf("failing run: err = %v, stderr %q", err, errOut)
	}
}
