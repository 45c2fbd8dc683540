package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/t3agent/t3agent/internal/chat/chattest"
	"github.com/t3agent/t3agent/internal/dbtest"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/store"
)

// streamLag is how late a live stream may show a change another process
// made: its poll (chat.stream_poll, 1 s by default) and the read.
const streamLag = 2 * time.Second

// TestSeveralProcessesOneStore runs three `t3agent serve` processes on
// one PostgreSQL store, as behind a load balancer without sticky
// sessions: A serves the API only (--no-worker), B and C also run the
// workers. One login works on all three. A conversation is created and
// written to on one process, worked on by another, streamed from all
// three and approved on another still; queued runs are approved on any.
// Every turn happens exactly once, every stream shows every lasting
// state within streamLag of its writing, and when a worker process is
// killed (SIGKILL) in the middle of a queued run or a chat turn, the
// others take the work over.
func TestSeveralProcessesOneStore(t *testing.T) {
	t.Parallel()
	pg := dbtest.Postgres(t)
	ctx := context.Background()
	work := t.TempDir()
	out, _, err := run(t, ctx, work, nil, "demo", "init", "--pages", "30", "--content", "40", "--fast-hashes", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var demo struct {
		Users []struct{ Username, Password string } `json:"users"`
	}
	if err := json.Unmarshal([]byte(out), &demo); err != nil {
		t.Fatal(err)
	}
	password := ""
	for _, u := range demo.Users {
		if u.Username == "admin" {
			password = u.Password
		}
	}

	llm := llmtest.NewOpenAI(t)
	writes := &writeServer{}
	mcpURL := writes.start(t)
	env := []string{
		"T3AGENT_STORE_DSN=" + pg, "DEMO_OPENAI_KEY=" + llmtest.Key, "T3AGENT_CHAT_TASK=chat",
		"T3AGENT_CHAT_POLL_INTERVAL=50ms", "T3AGENT_CHAT_MAX_ACTIVE_PER_USER=10", "T3AGENT_LOG_LEVEL=debug",
	}
	for _, args := range [][]string{
		{"apply", "-f", agentsDoc(t, llm.BaseURL(), "tasks:\n  - identifier: chat\n    configuration: assistant\n")},
		{"mcp", "add", "docs", "--url", mcpURL, "--data-class", "editorContent", "--enable", "--as", "admin"},
		{"mcp", "import", "docs", "--as", "admin"},
		{"tools", "enable", "mcp_docs_publish", "--as", "admin"},
	} {
		if _, errOut, err := run(t, ctx, work, env, args...); err != nil {
			t.Fatalf("%v: %v (%s)", args, err, errOut)
		}
	}

	a := startServeProcess(t, work, env, "A", "--no-worker")
	b := startServeProcess(t, work, env, "B")
	c := startServeProcess(t, work, env, "C")
	h := &apiClient{t: t, hc: &http.Client{Transport: &http.Transport{}}}
	t.Cleanup(h.hc.CloseIdleConnections)
	h.login(a, password) // one session, used on every process

	// A: a conversation created on A, its turn worked by B or C (A runs
	// no worker), streamed from A, B and C, approved on B.
	id := h.createConversation(a)
	streams := []*stream{h.openStream(a, id), h.openStream(b, id), h.openStream(c, id)}
	llm.Push(llmtest.Calls(llmtest.Call("call_1", "mcp_docs_publish", `{"text":"hello"}`)), llmtest.Text("Published hello."))
	h.send(a, id, "Publish hello.")
	// The person decides once the card shows (a stream polls for what
	// other processes change, so a state that lasts less than a poll may
	// show only as the state after it).
	for _, s := range streams {
		s.await(t, "awaiting approval", func(v view) bool { return v.Status == "awaiting_approval" })
	}
	h.decide(b, id)
	final := streams[0].await(t, "the answer", func(v view) bool { return v.Status == "idle" && v.MessageCount >= 2 })
	for _, s := range streams {
		s.await(t, "the answer on every stream", func(v view) bool { return v.UpdatedAt.Equal(final.UpdatedAt) })
		s.close()
		s.checkLag(t, "awaiting_approval", "idle")
	}
	h.transcript(c, id, "user:Publish hello.", "assistant:Published hello.")
	if n := writes.calls.Load(); n != 1 {
		t.Fatalf("the MCP server saw %d writes, want 1", n)
	}

	// B: six conversations at once, each created on one process, written
	// on the next and streamed on the third.
	procs := []*proc{a, b, c}
	var ids []int64
	var ss []*stream
	for i := range 6 {
		ids = append(ids, h.createConversation(procs[i%3]))
		ss = append(ss, h.openStream(procs[(i+2)%3], ids[i]))
		llm.Push(llmtest.Text("Noted."))
	}
	for i, id := range ids {
		h.send(procs[(i+1)%3], id, fmt.Sprintf("Note %d.", i))
	}
	for i, id := range ids {
		ss[i].await(t, "the answer", func(v view) bool { return v.Status == "idle" && v.MessageCount == 2 })
		ss[i].close()
		ss[i].checkLag(t, "idle")
		h.transcript(procs[i%3], id, fmt.Sprintf("user:Note %d.", i), "assistant:Noted.")
	}

	// C: a queued run waits for approval; C approves it.
	llm.Push(llmtest.Calls(llmtest.Call("call_2", "mcp_docs_publish", `{"text":"queued"}`)), llmtest.Text("Published queued."))
	runID := enqueue(t, work, env, "Publish queued.")
	digest := h.awaitRun(a, runID, "waiting_for_approval")
	if res := h.decideRun(c, runID, digest); res.Outcome != "completed" || res.Content != "Published queued." {
		t.Fatalf("approving the queued run on C: %+v", res)
	}
	if n := writes.calls.Load(); n != 2 {
		t.Fatalf("the MCP server saw %d writes, want 2", n)
	}

	// D: the worker process of a chat turn dies while the model thinks.
	// Cleanup fails the turn; the person retries on A; the other worker
	// answers. The turn is answered once.
	asked, hold := make(chan struct{}, 1), make(chan struct{})
	t.Cleanup(func() { close(hold) })
	llm.Push(llmtest.Round{Check: func(testing.TB, llmtest.Request) { asked <- struct{}{} }, Hold: hold}, llmtest.Text("Answered after all."))
	id = h.createConversation(a)
	live := h.openStream(a, id)
	h.send(a, id, "Are you there?")
	waitFor(t, asked, "the provider call of the chat turn")
	victim := ownerOf(t, pg, func(st store.Store) string {
		cv, err := st.Conversation(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return cv.ClaimID
	}, b, c)
	survivor := map[*proc]*proc{b: c, c: b}[victim]
	victim.kill(t)
	if out, _, err := run(t, ctx, work, env, "chat", "cleanup", "--stale-after", "1ms"); err != nil || !strings.Contains(out, "1 stale turn(s) failed") {
		t.Fatalf("chat cleanup = %q, %v", out, err)
	}
	live.await(t, "the failed turn", func(v view) bool { return v.Status == "failed" })
	h.retry(a, id) // on another process than the turn's
	live.await(t, "the answer", func(v view) bool { return v.Status == "idle" && v.MessageCount == 2 })
	live.close()
	live.checkLag(t, "failed", "idle")
	h.transcript(survivor, id, "user:Are you there?", "assistant:Answered after all.")

	// E: a replacement process joins; the worker of a queued run dies in
	// the middle of it; its lease runs out, the reaper requeues it and
	// the other worker completes it.
	d := startServeProcess(t, work, env, "D")
	asked2, hold2 := make(chan struct{}, 1), make(chan struct{})
	t.Cleanup(func() { close(hold2) })
	llm.Push(llmtest.Round{Check: func(testing.TB, llmtest.Request) { asked2 <- struct{}{} }, Hold: hold2}, llmtest.Text("Done after all."))
	runID = enqueue(t, work, env, "Look around.")
	waitFor(t, asked2, "the provider call of the queued run")
	victim = ownerOf(t, pg, func(st store.Store) string {
		r, err := st.Run(ctx, runID)
		if err != nil {
			t.Fatal(err)
		}
		return r.LeaseOwner
	}, survivor, d)
	victim.kill(t)
	expireLeasesIn(t, pg)
	// The run of the chat turn that died with C or B has no request to
	// retry (the turn was retried as a new run): it is dead-lettered.
	if out, _, err := run(t, ctx, work, env, "runs", "reap"); err != nil || out != "Reaped: 1 requeued, 1 dead-lettered, 0 out of retries.\n" {
		t.Fatalf("runs reap = %q, %v", out, err)
	}
	expireLeasesIn(t, pg) // skip the backoff
	h.awaitRun(a, runID, "completed")
	st := openPG(t, pg)
	if r, err := st.Run(ctx, runID); err != nil || r.RequeueCount != 1 || r.Status != store.RunCompleted {
		t.Errorf("the run taken over = %+v, %v", r, err)
	}
	if llm.Remaining() != 0 {
		t.Errorf("%d scripted answers were never asked for", llm.Remaining())
	}
}

// proc is one `t3agent serve` child process.
type proc struct {
	name string
	cmd  *exec.Cmd
	url  string
	logs *chattest.SyncBuffer
	done chan struct{} // closed when its stderr ends
}

var servingLine = regexp.MustCompile(`msg=serving url=(\S+)`)

// startServe runs `t3agent serve` in a child process (this test binary,
// re-executed as TestCrashChild) and waits until it serves.
func startServeProcess(t *testing.T, work string, env []string, name string, args ...string) *proc {
	t.Helper()
	return startProcess(t, work, env, name, append([]string{"serve", "--listen", "127.0.0.1:0", "--workers", "2"}, args...)...)
}

// startProcess runs a serving command (serve, demo) in a child process
// and waits until it serves.
func startProcess(t *testing.T, work string, env []string, name string, args ...string) *proc {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"work": work, "args": args})
	p := &proc{name: name, logs: &chattest.SyncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	p.cmd.Env = append(append(os.Environ(), env...), crashChildEnv+"="+string(b))
	p.cmd.Stdout = p.logs
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urls := make(chan string, 1)
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
		for sc.Scan() {
			fmt.Fprintln(p.logs, sc.Text())
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case urls <- m[1]:
				default:
				}
			}
		}
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
		_ = p.cmd.Wait()
		if t.Failed() {
			t.Logf("process %s:\n%s", p.name, p.logs.String())
		}
	})
	select {
	case p.url = <-urls:
	case <-p.done:
		t.Fatalf("process %s ended before serving:\n%s", name, p.logs.String())
	case <-time.After(time.Minute):
		t.Fatalf("process %s did not serve within a minute:\n%s", name, p.logs.String())
	}
	return p
}

// kill ends the process with SIGKILL: nothing it had in flight is
// finished or released.
func (p *proc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.done
	_ = p.cmd.Wait()
}

// ownerOf names the process whose pid appears in the lease or claim owner
// read by owner ("worker:<host>:<pid>:…", "chat:<host>:<pid>:…").
func ownerOf(t *testing.T, dsn string, owner func(store.Store) string, candidates ...*proc) *proc {
	t.Helper()
	o := owner(openPG(t, dsn))
	for _, p := range candidates {
		if strings.Contains(o, ":"+strconv.Itoa(p.cmd.Process.Pid)+":") {
			return p
		}
	}
	t.Fatalf("the owner %q is none of the worker processes", o)
	return nil
}

func openPG(t *testing.T, dsn string) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), dsn, store.OpenParams{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// expireLeasesIn moves every lease and backoff into the past, as if the
// dead process's time had run out.
func expireLeasesIn(t *testing.T, dsn string) {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`UPDATE runs SET lease_expires = '2000-01-01 00:00:00+00' WHERE lease_expires IS NOT NULL AND status = 'running'`,
		`UPDATE runs SET available_at = '2000-01-01 00:00:00+00' WHERE available_at IS NOT NULL AND status = 'queued'`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
}

// enqueue queues a run through the CLI and returns its id.
func enqueue(t *testing.T, work string, env []string, prompt string) string {
	t.Helper()
	out, errOut, err := run(t, context.Background(), work, env, "run", "--enqueue", "-C", "assistant", "--as", "admin", prompt)
	if err != nil {
		t.Fatalf("run --enqueue: %v (%s)", err, errOut)
	}
	return strings.TrimSpace(out)
}

// writeServer is an MCP server with one write tool, publish, counting
// its calls.
type writeServer struct{ calls atomic.Int64 }

func (w *writeServer) start(t *testing.T) string {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "writer", Version: "1.0.0"}, nil)
	s.AddTool(&sdk.Tool{Name: "publish", Description: "Publishes a text.", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			w.calls.Add(1)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "published"}}}, nil
		})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(func() {
		srv.Close()
		for ss := range s.Sessions() {
			_ = ss.Close()
		}
	})
	return srv.URL
}

// apiClient speaks /api/v1 with one login session to any process.
type apiClient struct {
	t      *testing.T
	hc     *http.Client
	cookie string
	csrf   string
}

func (h *apiClient) do(p *proc, method, path string, body any, want int, out any) {
	h.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, p.url+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if h.cookie != "" {
		req.Header.Set("Cookie", h.cookie)
		req.Header.Set("X-CSRF-Token", h.csrf)
	}
	resp, err := h.hc.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s on %s: %v", method, path, p.name, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		h.t.Fatalf("%s %s on %s = %d %s, want %d", method, path, p.name, resp.StatusCode, b, want)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			h.t.Fatalf("%s %s on %s: %v in %s", method, path, p.name, err, b)
		}
	}
	if c := resp.Header.Get("Set-Cookie"); c != "" {
		h.cookie, _, _ = strings.Cut(c, ";")
	}
}

func (h *apiClient) login(p *proc, password string) {
	h.t.Helper()
	var out struct {
		CSRF string `json:"csrfToken"`
	}
	h.do(p, "POST", "/api/v1/login", map[string]string{"username": "admin", "password": password}, http.StatusOK, &out)
	h.csrf = out.CSRF
}

func (h *apiClient) createConversation(p *proc) int64 {
	h.t.Helper()
	var v view
	h.do(p, "POST", "/api/v1/chat/conversations", map[string]any{}, http.StatusCreated, &v)
	return v.ID
}

func (h *apiClient) send(p *proc, id int64, text string) {
	h.t.Helper()
	h.do(p, "POST", fmt.Sprintf("/api/v1/chat/conversations/%d/messages", id), map[string]string{"content": text}, http.StatusAccepted, nil)
}

func (h *apiClient) retry(p *proc, id int64) {
	h.t.Helper()
	h.do(p, "POST", fmt.Sprintf("/api/v1/chat/conversations/%d/retry", id), nil, http.StatusAccepted, nil)
}

// decide approves the card of conversation id, quoting its digest.
func (h *apiClient) decide(p *proc, id int64) {
	h.t.Helper()
	var page struct {
		Pending *struct {
			Digest string `json:"digest"`
		} `json:"pending"`
	}
	h.do(p, "GET", fmt.Sprintf("/api/v1/chat/conversations/%d", id), nil, http.StatusOK, &page)
	if page.Pending == nil || page.Pending.Digest == "" {
		h.t.Fatalf("conversation %d shows no card on %s", id, p.name)
	}
	h.do(p, "POST", fmt.Sprintf("/api/v1/chat/conversations/%d/approve", id), map[string]string{"digest": page.Pending.Digest}, http.StatusAccepted, nil)
}

// transcript checks the conversation's messages, "role:content" each.
func (h *apiClient) transcript(p *proc, id int64, want ...string) {
	h.t.Helper()
	var page struct {
		Messages []struct{ Role, Content string } `json:"messages"`
	}
	h.do(p, "GET", fmt.Sprintf("/api/v1/chat/conversations/%d/messages", id), nil, http.StatusOK, &page)
	var got []string
	for _, m := range page.Messages {
		got = append(got, m.Role+":"+m.Content)
	}
	if !slices.Equal(got, want) {
		h.t.Errorf("conversation %d: %q, want %q", id, got, want)
	}
}

type runView struct {
	Run struct {
		Status string `json:"status"`
	} `json:"run"`
	Pending *struct {
		Digest string `json:"digest"`
	} `json:"pending"`
}

// awaitRun reads the run on p until it has status, and returns the digest
// of its pending turn, if any. Another process changes it: there is no
// signal to wait on but the store.
func (h *apiClient) awaitRun(p *proc, id, status string) string {
	h.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		var v runView
		h.do(p, "GET", "/api/v1/runs/"+id, nil, http.StatusOK, &v)
		if v.Run.Status == status {
			if v.Pending != nil {
				return v.Pending.Digest
			}
			return ""
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("run %s is %s, not %s, after 30 s", id, v.Run.Status, status)
		}
		<-tick.C
	}
}

type resultView struct {
	Outcome string `json:"outcome"`
	Content string `json:"content"`
}

func (h *apiClient) decideRun(p *proc, id, digest string) resultView {
	h.t.Helper()
	var res resultView
	h.do(p, "POST", "/api/v1/runs/"+id+"/approve", map[string]string{"digest": digest}, http.StatusOK, &res)
	return res
}

// view is what a conversation stream sends.
type view struct {
	ID           int64     `json:"id"`
	Status       string    `json:"status"`
	MessageCount int       `json:"messageCount"`
	UpdatedAt    time.Time `json:"updatedAt"`
}

// stream is a conversation's live stream on one process, read into a log
// of views with the time each arrived.
type stream struct {
	name   string
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	views  []view
	at     []time.Time
	wake   chan struct{}
}

func (h *apiClient) openStream(p *proc, id int64) *stream {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/api/v1/chat/conversations/%d/stream", p.url, id), nil)
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Cookie", h.cookie)
	resp, err := h.hc.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		cancel()
		h.t.Fatalf("stream of %d on %s: %v %v", id, p.name, resp, err)
	}
	s := &stream{name: p.name, cancel: cancel, done: make(chan struct{}), wake: make(chan struct{}, 1)}
	go func() {
		defer close(s.done)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: ") && event == "conversation":
				var v view
				if json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &v) == nil {
					s.mu.Lock()
					s.views = append(s.views, v)
					s.at = append(s.at, time.Now())
					s.mu.Unlock()
					select {
					case s.wake <- struct{}{}:
					default:
					}
				}
			}
		}
	}()
	h.t.Cleanup(s.close)
	return s
}

func (s *stream) close() {
	s.cancel()
	<-s.done
}

// await waits until the stream has shown a view satisfying pred.
func (s *stream) await(t *testing.T, what string, pred func(view) bool) view {
	t.Helper()
	timeout := time.After(30 * time.Second)
	seen := 0
	for {
		s.mu.Lock()
		views := slices.Clone(s.views[seen:])
		s.mu.Unlock()
		for _, v := range views {
			if pred(v) {
				return v
			}
		}
		seen += len(views)
		select {
		case <-s.wake:
		case <-s.done:
			t.Fatalf("the stream on %s ended before %s", s.name, what)
		case <-timeout:
			t.Fatalf("the stream on %s did not show %s within 30 s; it showed %+v", s.name, what, s.views)
		}
	}
}

// checkLag: every view arrived within streamLag of its writing, and each
// of the lasting statuses was shown.
func (s *stream) checkLag(t *testing.T, statuses ...string) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	shown := map[string]bool{}
	for i, v := range s.views {
		shown[v.Status] = true
		if i == 0 {
			continue // the state when the stream opened
		}
		if lag := s.at[i].Sub(v.UpdatedAt); lag > streamLag {
			t.Errorf("the stream on %s showed %s (written %s) %s late", s.name, v.Status, v.UpdatedAt.Format(time.StampMilli), lag)
		}
	}
	for _, st := range statuses {
		if !shown[st] {
			t.Errorf("the stream on %s never showed %s: %+v", s.name, st, s.views)
		}
	}
}
