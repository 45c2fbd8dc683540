package cli_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/cli"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
)

// TestDoctorCommand: one line per finding with its fix, --json for
// monitoring, and the exit code by the worst finding: 1 for the fresh
// demo (no provider yet), 0 once one answers, 2 when it is gone.
func TestDoctorCommand(t *testing.T) {
	t.Parallel()
	work := demoDir(t)
	ctx := context.Background()
	code := func(err error) int {
		var exit cli.ExitError
		if errors.As(err, &exit) {
			return exit.Code
		}
		if err != nil {
			t.Fatalf("doctor failed: %v", err)
		}
		return 0
	}
	if _, _, err := run(t, ctx, work, nil, "runs", "list"); err != nil { // creates the store
		t.Fatal(err)
	}
	out, _, err := run(t, ctx, work, nil, "doctor")
	if code(err) != 1 || !strings.Contains(out, "WARN  providers") || !strings.Contains(out, "Fix: declare a provider") ||
		!strings.Contains(out, "ok    site.read_only") || !strings.HasSuffix(out, "checks: warning.\n") {
		t.Errorf("doctor on the fresh demo = %d:\n%s", code(err), out)
	}

	srv := llmtest.NewOpenAI(t)
	env := []string{"DEMO_OPENAI_KEY=" + llmtest.Key}
	if _, _, err := run(t, ctx, work, env, "apply", "-f", agentsDoc(t, srv.BaseURL(), "")); err != nil {
		t.Fatal(err)
	}
	out, _, err = run(t, ctx, work, env, "doctor")
	if code(err) != 0 || strings.Contains(out, "WARN") || strings.Contains(out, "ERROR") || !strings.HasSuffix(out, "checks: ok.\n") {
		t.Errorf("doctor with a provider = %d:\n%s", code(err), out)
	}

	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	if _, _, err := run(t, ctx, work, env, "apply", "-f", agentsDoc(t, dead.URL+"/v1", "")); err != nil {
		t.Fatal(err)
	}
	out, _, err = run(t, ctx, work, env, "doctor", "--json")
	var rep struct {
		Findings []struct{ Check, Severity, Message, Fix string } `json:"findings"`
	}
	if jerr := json.Unmarshal([]byte(out), &rep); jerr != nil || code(err) != 2 {
		t.Fatalf("doctor --json = %d, %v:\n%s", code(err), jerr, out)
	}
	found := false
	for _, f := range rep.Findings {
		if f.Check == "provider:demo-openai" {
			found = f.Severity == "error" && strings.Contains(f.Message, "is not reachable") && strings.Contains(f.Fix, "endpoint")
		}
	}
	if !found {
		t.Errorf("no error finding for the dead provider in %s", out)
	}
	if _, _, err := run(t, ctx, t.TempDir(), nil, "doctor"); code(err) != 2 {
		t.Errorf("doctor without a configuration = %v", err)
	}
}
