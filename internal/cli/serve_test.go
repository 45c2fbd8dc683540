package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/chat"
	"github.com/t3agent/t3agent/internal/chat/chattest"
	"github.com/t3agent/t3agent/internal/cli"
	"github.com/t3agent/t3agent/internal/store"
)

// demoWithLogins creates a small demo and returns its directory and the
// backend users' passwords.
func demoWithLogins(t *testing.T) (string, map[string]string) {
	t.Helper()
	work := t.TempDir()
	out, _, err := run(t, context.Background(), work, nil, "demo", "init", "--pages", "30", "--content", "40", "--fast-hashes", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Users []struct{ Username, Password string } `json:"users"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	pw := map[string]string{}
	for _, u := range res.Users {
		pw[u.Username] = u.Password
	}
	return work, pw
}

// startCommand runs a long-running command (serve, chat worker) in-process
// with after as its timer until the test ends. It returns once the
// command logged a line containing ready, with the rest of that line.
func startCommand(t *testing.T, work string, env []string, after func(time.Duration) <-chan time.Time, ready string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		root := cli.NewRootCommand(cli.Env{Stdout: io.Discard, Stderr: pw, Environ: env, WorkDir: work, After: after})
		root.SetArgs(args)
		err := root.ExecuteContext(ctx)
		_ = pw.CloseWithError(io.EOF)
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("%v: %v", args, err)
		}
	})
	var logs bytes.Buffer
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		logs.WriteString(sc.Text() + "\n")
		if _, rest, ok := strings.Cut(sc.Text(), ready); ok {
			go func() { _, _ = io.Copy(io.Discard, pr) }()
			return rest
		}
	}
	t.Fatalf("%v never logged %q: %v\n%s", args, ready, <-done, logs.String())
	return ""
}

// startServe runs serve on a free port and returns its base URL.
func startServe(t *testing.T, work string, env []string, after func(time.Duration) <-chan time.Time, args ...string) string {
	t.Helper()
	rest := startCommand(t, work, env, after, "msg=serving url=", append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	url, _, _ := strings.Cut(rest, " ")
	return url
}

// api is an HTTP client of a running serve: a service token or a login.
type api struct {
	t      *testing.T
	base   string
	client *http.Client
	bearer string
	csrf   string
}

func (c *api) do(method, path, body string) (int, []byte) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+c.bearer)
	}
	if c.csrf != "" && method != http.MethodGet {
		req.Header.Set("X-CSRF-Token", c.csrf)
	}
	res, err := c.client.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return res.StatusCode, b
}

// login logs a person in with a session and its CSRF token.
func login(t *testing.T, base, user, password string) *api {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &api{t: t, base: base, client: &http.Client{Jar: jar}}
	status, body := c.do(http.MethodPost, "/api/v1/login", fmt.Sprintf(`{"username":%q,"password":%q}`, user, password))
	var res struct {
		CSRF string `json:"csrfToken"`
	}
	if status != http.StatusOK || json.Unmarshal(body, &res) != nil || res.CSRF == "" {
		t.Fatalf("login of %s: %d %s", user, status, body)
	}
	c.csrf = res.CSRF
	return c
}

// servedTool is a tool as GET /api/v1/tools shows it.
type servedTool struct {
	Name     string `json:"name"`
	Effect   string `json:"effect"`
	Decision struct {
		Allowed bool   `json:"allowed"`
		Reason  string `json:"reason"`
	} `json:"decision"`
}

// TestServeSeesMCPChangesFromTheCLI: MCP commands run beside a running
// serve count at its next request, without a restart: enable makes the
// tools usable as declared, set redeclares them, remove takes them away.
func TestServeSeesMCPChangesFromTheCLI(t *testing.T) {
	t.Parallel()
	srv := newMCPServer(t)
	c := &mcpCLI{t: t, work: demoDir(t), env: []string{"MCP_TOKEN=" + mcpToken}}
	c.ok("mcp", "add", "docs", "--url", srv.URL, "--data-class", "editorContent", "--auth", "bearer", "--credential-env", "MCP_TOKEN", "--as", "admin")
	c.ok("mcp", "import", "docs", "--as", "admin")
	token := strings.TrimSpace(c.ok("token", "create", "--name", "ops", "--user", "admin", "--scopes", "admin", "--as", "admin"))
	base := startServe(t, c.work, c.env, nil, "--no-worker")
	served := &api{t: t, base: base, client: http.DefaultClient, bearer: token}

	tools := func() map[string]servedTool {
		t.Helper()
		status, body := served.do(http.MethodGet, "/api/v1/tools", "")
		var res struct {
			Tools []servedTool `json:"tools"`
		}
		if status != http.StatusOK || json.Unmarshal(body, &res) != nil {
			t.Fatalf("GET /api/v1/tools: %d %s", status, body)
		}
		out := map[string]servedTool{}
		for _, x := range res.Tools {
			if strings.HasPrefix(x.Name, "mcp_") {
				out[x.Name] = x
			}
		}
		return out
	}
	if got := tools(); len(got) != 0 {
		t.Fatalf("a disabled server's tools are served: %+v", got)
	}
	c.ok("mcp", "enable", "docs", "--as", "admin")
	got := tools()
	if len(got) != 2 || !got["mcp_docs_echo"].Decision.Allowed || got["mcp_docs_echo"].Effect != "non_idempotent_write" {
		t.Errorf("after mcp enable beside serve: %+v; want both tools allowed as declared", got)
	}
	c.ok("mcp", "set", "docs", "--effect", "read_only", "--as", "admin")
	if got := tools(); got["mcp_docs_echo"].Effect != "read_only" || !got["mcp_docs_echo"].Decision.Allowed {
		t.Errorf("after mcp set --effect read_only beside serve: %+v", got)
	}
	c.ok("tools", "disable", "mcp_docs_shout", "--as", "admin")
	if got := tools(); got["mcp_docs_shout"].Decision.Allowed || got["mcp_docs_shout"].Decision.Reason != "tool_disabled" {
		t.Errorf("after tools disable beside serve: %+v", got)
	}
	c.ok("mcp", "remove", "docs", "--as", "admin")
	if got := tools(); len(got) != 0 {
		t.Errorf("after mcp remove beside serve: %+v", got)
	}
}

// deadWorkersTurns stores, as a chat worker that then died would have
// left them, count locked turns of the demo's editor and, when decided,
// the first with a recorded approval; all updated at.
func deadWorkersTurns(t *testing.T, st store.Store, clock *chatClock, at time.Time, count int) []int64 {
	t.Helper()
	ctx := context.Background()
	clock.set(at)
	defer clock.set(time.Time{})
	var ids []int64
	for i := range count {
		state := store.ConversationState{}
		if i == 0 {
			state = store.ConversationState{RunID: "0195f1c2-0000-7000-8000-00000000000a", Decision: store.DecisionApprove,
				DecisionDigest: "digest", DecisionBy: "editor"}
		}
		c := queueTurn(t, st, "chat", fmt.Sprintf("Turn %d", i), state)
		if _, err := st.ClaimNextConversation(ctx, store.ClaimConversationParams{ID: c.ID, ClaimID: "chat:crashed-host:4711"}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	return ids
}

// checkTimedOut fails unless each conversation failed with timedOut and
// lost its claim, run and recorded decision.
func checkTimedOut(t *testing.T, st store.Store, ids []int64) {
	t.Helper()
	for _, id := range ids {
		c := conversation(t, st, id)
		if c.Status != store.ConversationFailed || c.ErrorCode != string(chat.CodeTimedOut) || c.ClaimID != "" || c.RunID != "" ||
			c.Decision != "" || c.DecisionDigest != "" || c.DecisionBy != "" {
			t.Errorf("conversation %d after the scheduled cleanup: %+v", id, c)
		}
	}
}

// TestServeMaintainsChat: turns a crashed worker left locked hold the
// editor at the active limit (429); serve's scheduled maintenance fails
// them once stale and reconciles a recorded decision no worker picked up,
// and the editor can send again — with serve's own chat worker, and with
// --no-worker.
func TestServeMaintainsChat(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{nil, {"--no-worker"}} {
		t.Run(strings.Join(append([]string{"serve"}, args...), " "), func(t *testing.T) {
			t.Parallel()
			work, passwords := demoWithLogins(t)
			clock := &chatClock{}
			st := demoStore(t, work, clock)
			locked := deadWorkersTurns(t, st, clock, time.Now().Add(-10*time.Minute), 3)
			tm := chattest.NewTimers()
			env := []string{"T3AGENT_CHAT_TASK=chat", "T3AGENT_CHAT_MAX_ACTIVE_PER_USER=3", "T3AGENT_CHAT_MAINTENANCE_INTERVAL=1m"}
			base := startServe(t, work, env, tm.After, args...)
			ed := login(t, base, "editor", passwords["editor"])
			status, body := ed.do(http.MethodPost, "/api/v1/chat/conversations", "{}")
			var created struct {
				ID int64 `json:"id"`
			}
			if status != http.StatusCreated || json.Unmarshal(body, &created) != nil {
				t.Fatalf("create: %d %s", status, body)
			}
			send := func() (int, []byte) {
				return ed.do(http.MethodPost, fmt.Sprintf("/api/v1/chat/conversations/%d/messages", created.ID), `{"content":"Anyone there?"}`)
			}
			if status, body := send(); status != http.StatusTooManyRequests || !strings.Contains(string(body), "tooManyActive") {
				t.Fatalf("send while the crashed worker's turns hold the editor: %d %s", status, body)
			}
			// A decision recorded in another process two minutes ago
			// (within stale_after, past reconcile_grace), for a run that is
			// gone, which no worker of this serve picked up: its slot waits
			// for a poll that never comes.
			if args == nil {
				tm.WaitFor(t, 200*time.Millisecond)
			}
			clock.set(time.Now().Add(-2 * time.Minute))
			decided := queueTurn(t, st, "chat", "Approved elsewhere", store.ConversationState{
				RunID: "0195f1c2-0000-7000-8000-00000000000b", Decision: store.DecisionApprove, DecisionDigest: "digest", DecisionBy: "editor",
			})
			clock.set(time.Time{})

			tm.Pass(time.Minute)
			checkTimedOut(t, st, locked)
			if c := conversation(t, st, decided.ID); c.Status != store.ConversationFailed || c.ErrorCode != string(chat.CodeRunFinishedOutside) {
				t.Errorf("the recorded decision after the scheduled reconcile: %+v", c)
			}
			if status, body := send(); status != http.StatusAccepted {
				t.Errorf("send after the scheduled cleanup: %d %s", status, body)
			}
		})
	}
}

// TestChatWorkerMaintains: `t3agent chat worker` fails the turns a
// crashed worker left locked on its schedule, not before they are stale.
func TestChatWorkerMaintains(t *testing.T) {
	t.Parallel()
	work := demoDir(t)
	clock := &chatClock{}
	st := demoStore(t, work, clock)
	fresh := deadWorkersTurns(t, st, clock, time.Now().Add(-time.Minute), 1)
	stale := deadWorkersTurns(t, st, clock, time.Now().Add(-10*time.Minute), 2)
	tm := chattest.NewTimers()
	startCommand(t, work, []string{"T3AGENT_CHAT_MAINTENANCE_INTERVAL=30s"}, tm.After, "chat worker started", "chat", "worker")
	tm.Pass(30 * time.Second)
	checkTimedOut(t, st, stale)
	if c := conversation(t, st, fresh[0]); c.Status != store.ConversationLocked || !c.HasPendingDecision() {
		t.Errorf("a turn locked a minute ago after the pass: %+v", c)
	}
}
