package cli_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/t3agent/t3agent/internal/cli"
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
	// The API's shape of a run.
	var runs []struct {
		ID           string `json:"id"`
		Status       string `json:"status"`
		Owner        string `json:"owner"`
		CallerSource string `json:"callerSource"`
		Cost         string `json:"cost"`
	}
	if err := json.Unmarshal([]byte(out), &runs); err != nil || len(runs) != 1 || runs[0].ID != id ||
		runs[0].Status != string(store.RunCompleted) || runs[0].Owner != "editor" || runs[0].CallerSource != "cli" || runs[0].Cost != "$0.00421" {
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
		"context", "gpt-demo via assistant: 2 messages, 11 tool(s)", "answered tool_calls: 700 in / 12 out tokens, $0.00187; calls search_records",
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

// newWriteServer is a real MCP server with one write tool, "shout", that
// counts its calls.
func newWriteServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var calls atomic.Int64
	s := sdk.NewServer(&sdk.Implementation{Name: "write-server", Version: "1.0.0"}, nil)
	s.AddTool(&sdk.Tool{Name: "shout", Description: "Shouts.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			calls.Add(1)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "HEY"}}}, nil
		})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(func() {
		srv.Close()
		for ss := range s.Sessions() {
			_ = ss.Close()
		}
	})
	return srv, &calls
}

// TestRunsDecisions: a run waits for approval of an MCP write; the inbox
// shows it with its digest; approve without the digest or as someone
// without the right is refused; approve with it runs the write once;
// deny answers the model; cancel wins once.
func TestRunsDecisions(t *testing.T) {
	t.Parallel()
	work := demoDir(t)
	ctx := context.Background()
	mcpSrv, shouts := newWriteServer(t)
	call := llmtest.Calls(llmtest.Call("call_1", "mcp_docs_shout", `{}`))
	srv := llmtest.NewOpenAI(t, call, llmtest.Text("Shouted."), call, llmtest.Text("Not shouted."), call)
	env := []string{"DEMO_OPENAI_KEY=" + llmtest.Key}
	doc := agentsDoc(t, srv.BaseURL(), "")
	ok := func(args ...string) (string, string) {
		t.Helper()
		out, errOut, err := run(t, ctx, work, env, args...)
		if err != nil {
			t.Fatalf("%v: %v (stderr %s)", args, err, errOut)
		}
		return out, errOut
	}
	fails := func(want string, args ...string) string {
		t.Helper()
		_, errOut, err := run(t, ctx, work, env, args...)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%v: err = %v, want %q", args, err, want)
		}
		return errOut
	}
	ok("apply", "-f", doc)
	ok("mcp", "add", "docs", "--url", mcpSrv.URL, "--data-class", "editorContent", "--enable", "--as", "admin")
	ok("mcp", "import", "docs", "--as", "admin")
	ok("tools", "enable", "mcp_docs_shout", "--as", "admin")

	waiting := func() (id, digest string) {
		t.Helper()
		errOut := fails("waits for approval (mcp_docs_shout)", "run", "-C", "assistant", "--as", "admin", "Shout.")
		m := regexp.MustCompile(`run ([0-9a-f-]{36})`).FindStringSubmatch(errOut)
		if m == nil {
			t.Fatalf("no run id in %q", errOut)
		}
		out, _ := ok("runs", "inbox", "--as", "admin", "--json")
		var items []struct {
			Run struct {
				ID string `json:"id"`
			} `json:"run"`
			Pending struct {
				Digest string `json:"digest"`
			} `json:"pending"`
		}
		if err := json.Unmarshal([]byte(out), &items); err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			if it.Run.ID == m[1] {
				return m[1], it.Pending.Digest
			}
		}
		t.Fatalf("run %s is not in the inbox: %s", m[1], out)
		return "", ""
	}

	id, digest := waiting()
	if out, _ := ok("runs", "inbox", "--as", "admin"); !strings.Contains(out, "digest "+digest) || !strings.Contains(out, "call call_1 mcp_docs_shout {}") {
		t.Errorf("inbox:\n%s", out)
	}
	if out, _ := ok("runs", "inbox", "--as", "editor"); !strings.Contains(out, "Nothing waits") {
		t.Errorf("inbox of an editor:\n%s", out)
	}
	fails("refused (stale_turn)", "runs", "approve", id, "--as", "admin", "--digest", strings.Repeat("0", 64))
	if out, _ := ok("runs", "show", id); !strings.Contains(out, "decision by admin refused (stale_turn); waiting again") {
		t.Errorf("runs show lacks the refusal:\n%s", out)
	}
	fails("refused (run_access_denied)", "runs", "approve", id, "--as", "editor", "--digest", digest)
	fails("only an admin or the run's owner may act on it", "runs", "approve", id, "--as", "editor")
	fails("approve needs --as USER", "runs", "approve", id, "--digest", digest)

	// Without --digest the pending turn is shown with its digest. Stdin
	// that is no terminal (a pipe) is not asked: the refusal names the
	// digest to pass, or --yes.
	shown := func(errOut string) {
		t.Helper()
		if !strings.Contains(errOut, "Run "+id+" · waiting_for_approval · admin · assistant") ||
			!strings.Contains(errOut, "call call_1 mcp_docs_shout {}") || !strings.Contains(errOut, "digest "+digest) {
			t.Errorf("the pending turn is not shown:\n%s", errOut)
		}
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	_ = pw.Close()
	defer pr.Close()
	_, errOut, err := runIn(t, ctx, work, env, pr, false, "runs", "approve", id, "--as", "admin")
	want := "run " + id + ": approve without --digest asks for confirmation on a terminal; pass --digest " + digest + " to approve exactly the turn shown, or --yes"
	if err == nil || err.Error() != want {
		t.Errorf("approve with a pipe as stdin: err = %v, want %q", err, want)
	}
	shown(errOut)
	// A person answering anything but y decides nothing.
	_, errOut, err = runIn(t, ctx, work, env, strings.NewReader("n\n"), true, "runs", "approve", id, "--as", "admin")
	if err == nil || !strings.Contains(err.Error(), "nothing was decided (the answer was not y); the run still waits") || !strings.Contains(errOut, "Approve this turn? [y/N] ") {
		t.Errorf("approve answered n: err = %v\n%s", err, errOut)
	}
	if shouts.Load() != 0 {
		t.Fatal("a refused approval ran the write")
	}
	out, errOut, err := runIn(t, ctx, work, env, strings.NewReader("y\n"), true, "runs", "approve", id, "--as", "admin")
	if err != nil || out != "Shouted.\n" {
		t.Errorf("approve answered y: %q, %v (stderr %s)", out, err, errOut)
	}
	shown(errOut)
	if shouts.Load() != 1 {
		t.Errorf("the write ran %d times", shouts.Load())
	}
	fails("refused (run_not_waiting)", "runs", "approve", id, "--as", "admin", "--digest", digest)
	fails("refused (run_not_waiting)", "runs", "approve", id, "--as", "admin", "--yes")

	// --yes decides the turn shown, for scripts.
	id, digest = waiting()
	if out, errOut := ok("runs", "deny", id, "--as", "admin", "--yes", "--reason", "not today"); out != "Not shouted.\n" || !strings.Contains(errOut, "digest "+digest) {
		t.Errorf("deny --yes printed %q (stderr %s)", out, errOut)
	}
	if shouts.Load() != 1 {
		t.Error("a denied write ran")
	}
	if out, _ := ok("runs", "show", id); !strings.Contains(out, "denied by admin") {
		t.Errorf("runs show lacks the decision:\n%s", out)
	}

	id, _ = waiting()
	if out, _ := ok("runs", "cancel", id, "--as", "admin"); !strings.Contains(out, "cancelled") {
		t.Errorf("cancel printed %q", out)
	}
	fails("has already ended", "runs", "cancel", id, "--as", "admin")
}

// TestWorkerCommand: queued runs wait for a worker, which runs them all.
func TestWorkerCommand(t *testing.T) {
	t.Parallel()
	work := demoDir(t)
	ctx := context.Background()
	srv := llmtest.NewOpenAI(t, llmtest.Text("One."), llmtest.Text("Two."))
	env := []string{"DEMO_OPENAI_KEY=" + llmtest.Key}
	doc := agentsDoc(t, srv.BaseURL(), "")
	if _, _, err := run(t, ctx, work, env, "apply", "-f", doc); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for range 2 {
		out, _, err := run(t, ctx, work, env, "run", "--enqueue", "-C", "assistant", "--as", "editor", "Later, please.")
		if err != nil || !regexp.MustCompile(`^[0-9a-f-]{36}\n$`).MatchString(out) {
			t.Fatalf("run --enqueue = %q, %v", out, err)
		}
		ids = append(ids, strings.TrimSpace(out))
	}
	if len(srv.Requests()) != 0 {
		t.Fatal("an enqueued run ran at once")
	}
	out, errOut, err := run(t, ctx, work, env, "worker", "--drain", "--concurrency", "2")
	if err != nil || out != "Worker stopped after 2 run(s), 0 not completed.\n" {
		t.Fatalf("worker = %q, %v (stderr %s)", out, err, errOut)
	}
	for _, id := range ids {
		if !strings.Contains(errOut, "run "+id) {
			t.Errorf("worker stderr lacks the summary of %s: %s", id, errOut)
		}
	}
	if out, _, err := run(t, ctx, work, env, "runs", "reap"); err != nil || out != "Reaped: 0 requeued, 0 dead-lettered, 0 out of retries.\n" {
		t.Errorf("runs reap = %q, %v", out, err)
	}
	if out, _, err := run(t, ctx, work, env, "runs", "reseal"); err != nil || out != "Resealed 0 value(s); 0 could not be opened.\n" {
		t.Errorf("runs reseal = %q, %v", out, err)
	}
	if _, _, err := run(t, ctx, work, env, "worker", "--concurrency", "0"); err == nil || !strings.Contains(err.Error(), "--concurrency must be") {
		t.Errorf("worker --concurrency 0: %v", err)
	}
}

// crashChildEnv carries the arguments of a re-executed test binary that
// runs one command and is killed mid-run (see startChild).
const crashChildEnv = "T3AGENT_TEST_CRASH_CHILD"

// TestCrashChild is the child side of the crash tests; it does nothing in
// a normal run.
func TestCrashChild(t *testing.T) {
	raw := os.Getenv(crashChildEnv)
	if raw == "" {
		t.Skip("only run as the child of a crash test")
	}
	var c struct {
		Work string   `json:"work"`
		Args []string `json:"args"`
	}
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		t.Fatal(err)
	}
	root := cli.NewRootCommand(cli.Env{Stdout: os.Stdout, Stderr: os.Stderr, Environ: os.Environ(), WorkDir: c.Work})
	root.SetArgs(c.Args)
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// startChild runs one command in a child process (this test binary,
// re-executed), to be killed with SIGKILL mid-run.
func startChild(t *testing.T, work string, env []string, args ...string) *exec.Cmd {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"work": work, "args": args})
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), env...), crashChildEnv+"="+string(b))
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("child output:\n%s", out.String())
		}
	})
	return cmd
}

// waitFor waits for a signal from the child's side, failing after a
// generous limit rather than hanging the suite.
func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(2 * time.Minute):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// expireLeases moves the leases and backoffs of every run into the past,
// as if the dead process's time had run out.
func expireLeases(t *testing.T, work string) {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(work, "t3agent-data", "t3agent.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE runs SET lease_expires = '2000-01-01 00:00:00+00:00' WHERE lease_expires IS NOT NULL`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE runs SET available_at = '2000-01-01 00:00:00+00:00' WHERE available_at IS NOT NULL`); err != nil {
		t.Fatal(err)
	}
}

// runRow reads the run's row from the demo's store, lease and fence
// included (the API's shape of a run leaves those internals out).
func runRow(t *testing.T, ctx context.Context, work string, id string) store.Run {
	t.Helper()
	st, err := store.Open(ctx, "sqlite:"+filepath.Join(work, cli.DefaultDataDir, "t3agent.db"), store.OpenParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, err := st.Run(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// demoAgents is an agents document: one OpenAI provider at an endpoint
// (%s) with the key from DEMO_OPENAI_KEY, one model, and the
// configuration "assistant".
const demoAgents = `
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
configurations:
  - identifier: assistant
    model: demo-model
`

// agentsDoc writes demoAgents for endpoint, followed by extra YAML, and
// returns the file's path for `apply -f`.
func agentsDoc(t *testing.T, endpoint, extra string) string {
	t.Helper()
	doc := filepath.Join(t.TempDir(), "agents.yaml")
	if err := os.WriteFile(doc, append(fmt.Appendf(nil, demoAgents, endpoint), extra...), 0o600); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestCrashAfterFencedWrite: a child process approves an MCP write and is
// killed while the write is under way; the reaper dead-letters the run
// (not_retryable) and the MCP server saw exactly one call.
func TestCrashAfterFencedWrite(t *testing.T) {
	t.Parallel()
	work := demoDir(t)
	ctx := context.Background()
	called, release := make(chan struct{}, 8), make(chan struct{})
	var calls atomic.Int64
	s := sdk.NewServer(&sdk.Implementation{Name: "slow-writer", Version: "1.0.0"}, nil)
	s.AddTool(&sdk.Tool{Name: "shout", Description: "Shouts.", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			calls.Add(1)
			called <- struct{}{}
			select { // the write is under way when the process dies
			case <-release:
			case <-ctx.Done():
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "HEY"}}}, nil
		})
	mcpSrv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(func() {
		mcpSrv.Close()
		for ss := range s.Sessions() {
			_ = ss.Close()
		}
	})
	t.Cleanup(func() { close(release) })
	srv := llmtest.NewOpenAI(t, llmtest.Calls(llmtest.Call("call_1", "mcp_docs_shout", `{}`)))
	env := []string{"DEMO_OPENAI_KEY=" + llmtest.Key}
	doc := agentsDoc(t, srv.BaseURL(), "")
	for _, args := range [][]string{
		{"apply", "-f", doc},
		{"mcp", "add", "docs", "--url", mcpSrv.URL, "--data-class", "editorContent", "--enable", "--as", "admin"},
		{"mcp", "import", "docs", "--as", "admin"},
		{"tools", "enable", "mcp_docs_shout", "--as", "admin"},
	} {
		if _, errOut, err := run(t, ctx, work, env, args...); err != nil {
			t.Fatalf("%v: %v (%s)", args, err, errOut)
		}
	}
	out, _, err := run(t, ctx, work, env, "run", "--enqueue", "-C", "assistant", "--as", "admin", "Shout.")
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(out)
	if out, _, err := run(t, ctx, work, env, "worker", "--drain"); err != nil || !strings.Contains(out, "1 run(s), 1 not completed") {
		t.Fatalf("worker = %q, %v", out, err)
	}
	row := runRow(t, ctx, work, id)
	if row.Status != store.RunWaitingForApproval {
		t.Fatalf("run = %+v", row)
	}

	child := startChild(t, work, env, "runs", "approve", id, "--as", "admin", "--digest", row.TurnDigest)
	waitFor(t, called, "the MCP write")
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()

	row = runRow(t, ctx, work, id)
	if row.Status != store.RunRunning || row.PendingEffect != "non_idempotent_write" {
		t.Fatalf("run after the crash = %+v; the write must be fenced", row)
	}
	if out, _, err := run(t, ctx, work, env, "runs", "reap"); err != nil || out != "Reaped: 0 requeued, 0 dead-lettered, 0 out of retries.\n" {
		t.Errorf("reap before the lease expired = %q, %v", out, err)
	}
	expireLeases(t, work)
	if out, _, err := run(t, ctx, work, env, "runs", "reap"); err != nil || out != "Reaped: 0 requeued, 1 dead-lettered, 0 out of retries.\n" {
		t.Fatalf("reap = %q, %v", out, err)
	}
	row = runRow(t, ctx, work, id)
	if row.Status != store.RunFailed || row.TerminationReason != "not_retryable" || !strings.Contains(row.Error, "must not be repeated") {
		t.Errorf("dead-lettered run = %+v", row)
	}
	if out, _, err := run(t, ctx, work, env, "worker", "--drain"); err != nil || !strings.Contains(out, "0 run(s)") {
		t.Errorf("worker after the dead-letter = %q, %v", out, err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the MCP server saw %d calls, want exactly 1", n)
	}
}

// TestCrashReadOnlyRequeued: a worker process is killed while its run
// waits for the provider; the reaper requeues the run and another worker
// completes it.
func TestCrashReadOnlyRequeued(t *testing.T) {
	t.Parallel()
	work := demoDir(t)
	ctx := context.Background()
	asked, hold := make(chan struct{}, 1), make(chan struct{})
	t.Cleanup(func() { close(hold) })
	srv := llmtest.NewOpenAI(t,
		llmtest.Round{Check: func(testing.TB, llmtest.Request) { asked <- struct{}{} }, Hold: hold},
		llmtest.Text("Done after all."),
	)
	env := []string{"DEMO_OPENAI_KEY=" + llmtest.Key}
	doc := agentsDoc(t, srv.BaseURL(), "")
	if _, _, err := run(t, ctx, work, env, "apply", "-f", doc); err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, ctx, work, env, "run", "--enqueue", "-C", "assistant", "--as", "editor", "Look around.")
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(out)
	child := startChild(t, work, env, "worker", "--drain")
	waitFor(t, asked, "the provider call")
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	if row := runRow(t, ctx, work, id); row.Status != store.RunRunning || !strings.HasPrefix(row.LeaseOwner, "worker:") {
		t.Fatalf("run after the crash = %+v", row)
	}
	expireLeases(t, work)
	if out, _, err := run(t, ctx, work, env, "runs", "reap"); err != nil || out != "Reaped: 1 requeued, 0 dead-lettered, 0 out of retries.\n" {
		t.Fatalf("reap = %q, %v", out, err)
	}
	expireLeases(t, work) // skip the backoff
	if out, _, err := run(t, ctx, work, env, "worker", "--drain"); err != nil || out != "Worker stopped after 1 run(s), 0 not completed.\n" {
		t.Fatalf("worker = %q, %v", out, err)
	}
	row := runRow(t, ctx, work, id)
	if row.Status != store.RunCompleted || row.RequeueCount != 1 {
		t.Errorf("run = %+v", row)
	}
}
