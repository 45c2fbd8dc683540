// Package chattest builds the whole chat over real parts for tests
// anywhere in the repository: a store (SQLite in a temporary directory,
// or PostgreSQL), the demo TYPO3 site, the builtin tools, a real MCP
// server (the official go-sdk over httptest) imported through the real
// mcp.Service, a local input tool, the gate, a keyring, agent
// configurations applied through agentconfig with a provider pointing at
// a scripted OpenAI-compatible server (llmtest), the agent runtime and
// the chat Service.
//
//	f := chattest.New(t, chattest.Options{Rounds: []llmtest.Round{
//		llmtest.Calls(llmtest.Call("c1", chattest.WriteTool, `{"text":"hello"}`)),
//		llmtest.Text("Published."),
//	}})
//	v, _ := f.Service.Create(ctx, f.Users["editor"])
//	f.Service.Send(ctx, f.Users["editor"], chat.SendParams{ID: v.Conversation.ID, Content: "Publish hello"})
//	f.Drain(t) // → awaiting_approval
//
// What the fixture declares:
//
//   - provider "llmtest" (trust zone local, no retries), model
//     "llmtest-model", configuration "chat-config" (system prompt
//     ConfigPrompt, plus Options.ConfigYAML) and task "chat" (prompt
//     template TaskPrompt) — the chat's default task;
//   - MCP server "notes" with ReadTool (remote "lookup_note", read-only)
//     and WriteTool (remote "publish_note", a non-idempotent write, so
//     approval bound), both enabled and open to editors; WriteCalls
//     counts the calls of WriteTool the server received;
//   - InputTool ("ask_variant"), a local tool that asks for input with the
//     schema InputSchema (title "Which variant should I use?") and
//     answers "variant <choice> chosen".
//
// One Clock drives the store, the site, the runtime and the chat, so
// tests of cleanup and reconcile advance it instead of waiting.
package chattest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/builtin"
	"github.com/t3agent/t3agent/internal/chat"
	"github.com/t3agent/t3agent/internal/dbtest"
	"github.com/t3agent/t3agent/internal/demo"
	"github.com/t3agent/t3agent/internal/demo/demotest"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/secret"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/telemetry"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

// Names the fixture declares.
const (
	Task          = "chat"
	Configuration = "chat-config"
	MCPServer     = "notes"
	// ReadTool and WriteTool are the registry names of the MCP server's
	// tools "lookup_note" and "publish_note".
	ReadTool     = "mcp_notes_lookup_note"
	WriteTool    = "mcp_notes_publish_note"
	InputTool    = "ask_variant"
	ConfigPrompt = "You are the site assistant of Nordlicht Pumps."
	TaskPrompt   = "Help the editors of Nordlicht Pumps with their pages."
)

// InputSchema is what InputTool asks for.
const InputSchema = `{"type":"object","title":"Which variant should I use?","properties":{"choice":{"type":"string","enum":["a","b"]}},"required":["choice"]}`

// Start is the fixture clock's first instant.
var Start = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// Options configure New. The zero value is a configured chat on SQLite
// with an empty provider script.
type Options struct {
	// Postgres puts the store on the machine's PostgreSQL (package
	// dbtest; the test skips when T3AGENT_TEST_POSTGRES_DSN is unset).
	Postgres bool
	// Rounds is the provider's script (see llmtest).
	Rounds []llmtest.Round
	// Cycle replays Rounds endlessly (load tests); AllowUnused accepts
	// rounds never requested.
	Cycle       bool
	AllowUnused bool
	// Latency delays every provider answer by this much (a proxy in
	// front of the scripted server).
	Latency time.Duration
	// Settings replace the chat's settings; nil means
	// chat.Settings{Task: Task}.
	Settings *chat.Settings
	// ConfigYAML is added to the configuration's YAML, e.g.
	// "require_second_approver: true" or "active: false".
	ConfigYAML string
	// TracerProvider is handed to every part that makes spans (the MCP
	// client, the gate, the providers, the runtime, the chat); nil makes
	// none. TraceContent is the runtime's option of that name.
	TracerProvider trace.TracerProvider
	TraceContent   bool
}

// Fixture is the chat over real parts. Its fields are ready to use.
type Fixture struct {
	Store   store.Store
	Demo    *demotest.Site
	Site    *typo3.Site
	Gate    *gate.Gate
	MCP     *mcp.Service
	Tasks   *agentconfig.Service
	Keyring *secret.Keyring
	Runtime *agent.Runtime
	Service *chat.Service
	// LLM is the scripted provider; push rounds with LLM.Push.
	LLM *llmtest.Server
	// Users are the demo's backend users by name: "admin" (admin),
	// "editor" (group 1, Editors) and "intern" (groups 3, 2, 6, 5).
	Users map[string]*typo3.BackendUser
	Clock *Clock
	// Logs holds every log line of the parts (text handler, debug level).
	Logs *SyncBuffer
	// Logger writes to Logs.
	Logger *slog.Logger

	writes atomic.Int64
	mcpMu  sync.Mutex
	mcpHdr []http.Header
}

// MCPHeaders are the headers of every request the MCP server received.
func (f *Fixture) MCPHeaders() []http.Header {
	f.mcpMu.Lock()
	defer f.mcpMu.Unlock()
	return append([]http.Header(nil), f.mcpHdr...)
}

// WriteCalls is how many calls of WriteTool the MCP server received.
func (f *Fixture) WriteCalls() int { return int(f.writes.Load()) }

// New builds the fixture; everything is closed when the test ends.
func New(t testing.TB, opts Options) *Fixture {
	t.Helper()
	ctx := context.Background()
	f := &Fixture{Clock: NewClock(Start), Logs: &SyncBuffer{}}
	f.Logger = slog.New(slog.NewTextHandler(f.Logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	now := f.Clock.Now

	// The demo site, small: only the fixed records.
	f.Demo = demotest.NewWith(t, typo3.DialectSQLite, demo.InitParams{Pages: 25, Content: 6})
	tc, err := tca.Load(tca.LoadParams{ProjectRoot: f.Demo.Root})
	if err != nil {
		t.Fatal(err)
	}
	if f.Site, err = typo3.NewSite(typo3.SiteParams{DB: f.Demo.Open(t), TCA: tc, Root: f.Demo.Root, Now: now}); err != nil {
		t.Fatal(err)
	}

	dsn := "sqlite:" + filepath.Join(t.TempDir(), "t3agent.db")
	if opts.Postgres {
		dsn = dbtest.Postgres(t)
	}
	if f.Store, err = store.Open(ctx, dsn, store.OpenParams{Now: now, Logger: f.Logger}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Store.Close() })

	key, err := secret.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	if f.Keyring, err = secret.NewKeyring(key); err != nil {
		t.Fatal(err)
	}

	// The MCP server and its catalogue.
	if f.MCP, err = mcp.New(mcp.Params{Store: f.Store, Keyring: f.Keyring, Logger: f.Logger, ClientVersion: "chattest", TracerProvider: opts.TracerProvider}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.MCP.Close() })
	mcpURL := f.startMCP(t)
	reg, err := tool.NewRegistry(append(builtin.Tools(f.Site, readpolicy.New(tc)), newInputTool()), f.MCP.Provider())
	if err != nil {
		t.Fatal(err)
	}
	reg.SetLogger(f.Logger)
	if f.Gate, err = gate.New(gate.Params{Registry: reg, Store: f.Store, Logger: f.Logger, TracerProvider: opts.TracerProvider}); err != nil {
		t.Fatal(err)
	}
	no := false
	if _, err := f.MCP.Add(ctx, mcp.AddParams{
		Identifier: MCPServer, Name: "Notes", URL: mcpURL, DataClass: tool.EditorContent,
		Effect: tool.NonIdempotentWrite, RequiresApproval: &no, AdminOnly: &no, Enabled: true, By: "admin",
	}); err != nil {
		t.Fatalf("chattest: add the MCP server: %v", err)
	}
	if _, err := f.MCP.Import(ctx, mcp.ImportParams{Server: MCPServer, Registry: reg}); err != nil {
		t.Fatalf("chattest: import the MCP server: %v", err)
	}
	if err := f.MCP.SetToolEffect(ctx, mcp.SetToolEffectParams{Name: ReadTool, Effect: tool.ReadOnly}); err != nil {
		t.Fatalf("chattest: %s read-only: %v", ReadTool, err)
	}
	for _, name := range []string{ReadTool, WriteTool} {
		if _, err := f.Gate.Availability().SetTool(ctx, gate.SetToolParams{Name: name, Enabled: true, By: "admin"}); err != nil {
			t.Fatalf("chattest: enable %s: %v", name, err)
		}
	}
	if err := reg.Refresh(ctx); err != nil {
		t.Fatalf("chattest: refresh the registry: %v", err)
	}

	// The provider and the configuration.
	f.LLM = llmtest.New(t, llmtest.Options{Wire: llmtest.OpenAI, Cycle: opts.Cycle, AllowUnused: opts.AllowUnused}, opts.Rounds...)
	endpoint := f.LLM.BaseURL()
	if opts.Latency > 0 {
		endpoint = slowProxy(t, f.LLM.URL, opts.Latency) + "/v1"
	}
	f.Tasks = agentconfig.New(agentconfig.Params{Store: f.Store, Keyring: f.Keyring, LookupEnv: func(name string) (string, bool) {
		if name == "LLMTEST_KEY" {
			return llmtest.Key, true
		}
		return "", false
	}})
	doc, err := agentconfig.ParseDocument([]byte(configYAML(endpoint, opts.ConfigYAML)))
	if err != nil {
		t.Fatalf("chattest: parse the configuration: %v", err)
	}
	if _, err := f.Tasks.Apply(ctx, agentconfig.ApplyParams{Document: doc, By: "admin"}); err != nil {
		t.Fatalf("chattest: apply the configuration: %v", err)
	}

	// The runtime and the chat.
	providers := agent.NewProviders(agent.ProvidersParams{Keys: f.Tasks, Now: now, Logger: f.Logger,
		Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }, TracerProvider: opts.TracerProvider})
	t.Cleanup(providers.Close)
	if f.Runtime, err = agent.New(agent.Params{
		Gate: f.Gate, Store: f.Store, Providers: providers, Telemetry: telemetry.New(telemetry.Params{Store: f.Store, Now: now}),
		Keyring: f.Keyring, Now: now, Logger: f.Logger, LeaseOwner: "interactive:chattest:1", Configs: f.Tasks, Users: f.Site,
		TracerProvider: opts.TracerProvider, TraceContent: opts.TraceContent,
	}); err != nil {
		t.Fatal(err)
	}
	set := chat.Settings{Task: Task}
	if opts.Settings != nil {
		set = *opts.Settings
	}
	if f.Service, err = chat.New(chat.Params{
		Store: f.Store, Runtime: f.Runtime, Tasks: f.Tasks, Users: f.Site, Settings: set,
		SiteName: "Nordlicht Pumps", Now: now, Logger: f.Logger, ClaimPrefix: "chattest", TracerProvider: opts.TracerProvider,
	}); err != nil {
		t.Fatal(err)
	}

	f.Users = map[string]*typo3.BackendUser{}
	for _, name := range []string{"admin", "editor", "intern"} {
		u, err := f.Site.BackendUserByName(ctx, name)
		if err != nil {
			t.Fatalf("chattest: backend user %s: %v", name, err)
		}
		f.Users[name] = u
	}
	return f
}

func configYAML(endpoint, extra string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `
providers:
  - identifier: llmtest
    adapter: openai
    endpoint: %s
    api_key: env:LLMTEST_KEY
    trust_zone: local
    max_retries: 0
models:
  - identifier: llmtest-model
    provider: llmtest
    model_id: llmtest-large
    context_length: 128000
    max_output_tokens: 4096
configurations:
  - identifier: %s
    model: llmtest-model
    system_prompt: %s
    max_tokens: 1000
`, endpoint, Configuration, ConfigPrompt)
	for _, l := range strings.Split(strings.Trim(extra, "\n"), "\n") {
		if strings.TrimSpace(l) != "" {
			b.WriteString("    " + l + "\n")
		}
	}
	fmt.Fprintf(&b, `tasks:
  - identifier: %s
    configuration: %s
    prompt_template: %s
`, Task, Configuration, TaskPrompt)
	return b.String()
}

// startMCP starts the MCP server (stateless, JSON answers) and returns
// its URL.
func (f *Fixture) startMCP(t testing.TB) string {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "notes", Version: "1.0.0"}, nil)
	schema := func(props string, required ...string) map[string]any {
		var p map[string]any
		if err := json.Unmarshal([]byte(props), &p); err != nil {
			panic(err)
		}
		return map[string]any{"type": "object", "properties": p, "required": required}
	}
	text := func(s string) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
	}
	arg := func(req *sdk.CallToolRequest, key string) string {
		var m map[string]any
		_ = json.Unmarshal(req.Params.Arguments, &m)
		v, _ := m[key].(string)
		return v
	}
	s.AddTool(&sdk.Tool{Name: "lookup_note", Description: "Looks a note up by its title.", InputSchema: schema(`{"title":{"type":"string"}}`, "title"),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return text("note " + arg(req, "title") + ": pumps are blue"), nil
		})
	s.AddTool(&sdk.Tool{Name: "publish_note", Description: "Publishes a note on the site.", InputSchema: schema(`{"text":{"type":"string"}}`, "text")},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			f.writes.Add(1)
			return text("published: " + arg(req, "text")), nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s },
		&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mcpMu.Lock()
		f.mcpHdr = append(f.mcpHdr, r.Header.Clone())
		f.mcpMu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		ts.Close()
		for ss := range s.Sessions() {
			_ = ss.Close()
		}
	})
	return ts.URL
}

// slowProxy forwards to target after delay (or until the client gives up).
func slowProxy(t testing.TB, target string, delay time.Duration) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	proxy.Transport = tr
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		timer := time.NewTimer(delay) // simulated provider latency, not synchronisation
		defer timer.Stop()
		select {
		case <-timer.C:
			proxy.ServeHTTP(w, r)
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() {
		ts.Close()
		tr.CloseIdleConnections()
	})
	return ts.URL
}

// inputTool is InputTool: it asks for a variant, then reports it.
type inputTool struct{}

func newInputTool() tool.Tool { return inputTool{} }

func (inputTool) Spec() tool.Spec {
	return tool.Spec{
		Name: InputTool, Description: "Asks the editor which variant to use.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"choice":{"type":"string"}}}`),
		Group:       tool.GroupContent, Effect: tool.ReadOnly, DataClass: tool.EditorContent, EnabledByDefault: true,
		InputRequest: json.RawMessage(InputSchema),
	}
}

func (inputTool) Execute(_ context.Context, _ tool.Call, args map[string]any) (tool.Result, error) {
	choice, _ := args["choice"].(string)
	return tool.Text("variant " + choice + " chosen"), nil
}

// Drain runs a draining chat worker (one slot) until no conversation is
// claimable, failing the test after a minute.
func (f *Fixture) Drain(t testing.TB) {
	t.Helper()
	f.DrainN(t, 1)
}

// DrainN is Drain with n slots.
func (f *Fixture) DrainN(t testing.TB, n int) {
	t.Helper()
	w, err := chat.NewWorker(chat.WorkerParams{Service: f.Service, Concurrency: n, Drain: true, Logger: f.Logger})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w.Start(ctx)
	done := make(chan struct{})
	go func() { w.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		w.Stop()
		t.Fatal("chattest: the chat worker did not drain within a minute")
	}
}

// Conversation reads a conversation as stored.
func (f *Fixture) Conversation(t testing.TB, id int64) store.Conversation {
	t.Helper()
	c, err := f.Store.Conversation(context.Background(), id)
	if err != nil {
		t.Fatalf("chattest: conversation %d: %v", id, err)
	}
	return c
}

// Messages reads every message of a conversation.
func (f *Fixture) Messages(t testing.TB, id int64) []store.ChatMessage {
	t.Helper()
	ms, err := f.Store.ChatMessages(context.Background(), store.ListChatMessagesParams{ConversationID: id, Limit: store.MaxChatMessageLimit})
	if err != nil {
		t.Fatalf("chattest: messages of %d: %v", id, err)
	}
	return ms
}

// Start creates a conversation of user and sends text (the turn is
// queued, not run); it returns the conversation's id.
func (f *Fixture) Start(t testing.TB, user, text string) int64 {
	t.Helper()
	ctx := context.Background()
	v, err := f.Service.Create(ctx, f.Users[user])
	if err != nil {
		t.Fatalf("chattest: create as %s: %v", user, err)
	}
	if _, err := f.Service.Send(ctx, f.Users[user], chat.SendParams{ID: v.Conversation.ID, Content: text}); err != nil {
		t.Fatalf("chattest: send as %s: %v", user, err)
	}
	return v.Conversation.ID
}

// Clock is a settable clock, safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock standing at t.
func NewClock(t time.Time) *Clock { return &Clock{now: t} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// SyncBuffer collects log output written from any goroutine.
type SyncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
