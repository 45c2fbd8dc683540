package agent_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/builtin"
	"github.com/t3agent/t3agent/internal/demo/demotest"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/logtest"
	"github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/secret"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/telemetry"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixedNow is the clock of every fixture: runs, telemetry days, the site.
func fixedNow() time.Time { return time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC) }

// fixture is the whole runtime over a real demo site (SQLite), the real
// builtin tools behind the real gate, a real store and real telemetry.
type fixture struct {
	t         testing.TB
	site      *demotest.Site
	tsite     *typo3.Site
	st        store.Store
	dsn       string
	reg       *tool.Registry
	gate      *gate.Gate
	cfgs      *agentconfig.Service
	tel       *telemetry.Recorder
	providers *agent.Providers
	keyring   *secret.Keyring
	key       string // the keyring's key, encoded
	rt        *agent.Runtime
	sleeps    *sleeps
	logs      *logtest.Buffer
	// mcp is the MCP client whose catalogue the registry loads, when
	// fixtureParams.mcp asked for one.
	mcp *mcp.Service
}

type fixtureParams struct {
	// extra tools are registered beside the builtins.
	extra []tool.Tool
	// providers add tools the registry loads (and reloads on Refresh).
	providers []tool.Provider
	// storeDSN overrides the SQLite store file (the benchmark on PostgreSQL).
	storeDSN string
	// noKeyring leaves the runtime without a master key.
	noKeyring bool
	// mcp adds an MCP client (over the fixture's store) whose catalogue
	// the registry loads; see importSite.
	mcp bool
}

func newFixture(t testing.TB, p fixtureParams) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{t: t, sleeps: &sleeps{}, logs: &logtest.Buffer{}}
	logger := slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	f.site = demotest.New(t, typo3.DialectSQLite)
	db := f.site.Open(t)
	tc, err := tca.Load(tca.LoadParams{ProjectRoot: f.site.Root})
	if err != nil {
		t.Fatal(err)
	}
	f.tsite, err = typo3.NewSite(typo3.SiteParams{DB: db, TCA: tc, Root: f.site.Root, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	dsn := p.storeDSN
	if dsn == "" {
		dsn = "sqlite:" + filepath.Join(t.TempDir(), "t3agent.db")
	}
	f.dsn = dsn
	f.st, err = store.Open(ctx, dsn, store.OpenParams{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.st.Close() })
	if p.mcp {
		if f.mcp, err = mcp.New(mcp.Params{Store: f.st, Logger: logger, ClientVersion: "agent-test"}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = f.mcp.Close() })
		p.providers = append(p.providers, f.mcp.Provider())
	}
	f.reg, err = tool.NewRegistry(append(builtin.Tools(f.tsite, readpolicy.New(tc)), p.extra...), p.providers...)
	if err != nil {
		t.Fatal(err)
	}
	f.gate, err = gate.New(gate.Params{Registry: f.reg, Store: f.st, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if !p.noKeyring {
		key, err := secret.NewKey()
		if err != nil {
			t.Fatal(err)
		}
		f.key = key
		if f.keyring, err = secret.NewKeyring(key); err != nil {
			t.Fatal(err)
		}
	}
	f.cfgs = agentconfig.New(agentconfig.Params{Store: f.st, Keyring: f.keyring, LookupEnv: func(name string) (string, bool) {
		if name == "LLMTEST_KEY" {
			return llmtest.Key, true
		}
		return "", false
	}})
	f.tel = telemetry.New(telemetry.Params{Store: f.st, Now: fixedNow})
	f.providers = agent.NewProviders(agent.ProvidersParams{Keys: f.cfgs, Sleep: f.sleeps.sleep, Now: fixedNow, Logger: logger})
	t.Cleanup(f.providers.Close)
	f.rt, err = agent.New(agent.Params{
		Gate: f.gate, Store: f.st, Providers: f.providers, Telemetry: f.tel, Keyring: f.keyring,
		Now: fixedNow, Logger: logger, LeaseOwner: "interactive:test:1", Configs: f.cfgs, Users: f.tsite,
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// apply stores a configuration document (YAML).
func (f *fixture) apply(doc string) {
	f.t.Helper()
	d, err := agentconfig.ParseDocument([]byte(doc))
	if err != nil {
		f.t.Fatalf("parse configuration: %v", err)
	}
	if _, err := f.cfgs.Apply(context.Background(), agentconfig.ApplyParams{Document: d, By: "test"}); err != nil {
		f.t.Fatalf("apply configuration: %v", err)
	}
}

// provider declares a provider on srv with its model and a configuration
// of the same identifier; extra is YAML added to the configuration.
func providerDoc(id, adapter, zone string, srv *llmtest.Server, retries int, configExtra string) string {
	return fmt.Sprintf(`
providers:
  - identifier: %[1]s
    adapter: %[2]s
    endpoint: %[3]s
    api_key: env:LLMTEST_KEY
    trust_zone: %[4]s
    max_retries: %[5]d
models:
  - identifier: %[1]s-model
    provider: %[1]s
    model_id: %[1]s-large
    context_length: 128000
    max_output_tokens: 4096
    input_price: 2.50
    output_price: 10
configurations:
  - identifier: %[1]s
    model: %[1]s-model
    system_prompt: You are the site assistant of Nordlicht Pumps.
    temperature: 0.2
    max_tokens: 1000
%[6]s`, id, adapter, srv.BaseURL(), zone, retries, indent(configExtra, "    "))
}

func indent(s, by string) string {
	if s == "" {
		return ""
	}
	lines := strings.Split(strings.Trim(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = by + l
	}
	return strings.Join(lines, "\n") + "\n"
}

func (f *fixture) resolve(id string) *agentconfig.Resolved {
	f.t.Helper()
	r, err := f.cfgs.Resolve(context.Background(), id)
	if err != nil {
		f.t.Fatalf("resolve %s: %v", id, err)
	}
	return r
}

func (f *fixture) user(name string) *typo3.BackendUser {
	f.t.Helper()
	u, err := f.tsite.BackendUserByName(context.Background(), name)
	if err != nil {
		f.t.Fatalf("backend user %s: %v", name, err)
	}
	return u
}

// request is a one-question run as user through configuration id.
func (f *fixture) request(id, user, question string) agent.Request {
	return agent.Request{
		Config:   f.resolve(id),
		Messages: []llm.Message{{Role: llm.RoleUser, Content: question}},
		Actor:    f.user(user),
		Caller:   agent.Caller{Source: "test", Operation: "loop"},
	}
}

func (f *fixture) events(runID string) []store.RunEvent {
	f.t.Helper()
	evs, err := f.st.RunEvents(context.Background(), store.ListRunEventsParams{RunID: runID})
	if err != nil {
		f.t.Fatal(err)
	}
	return evs
}

func (f *fixture) run(runID string) store.Run {
	f.t.Helper()
	r, err := f.st.Run(context.Background(), runID)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

func (f *fixture) calls(runID string) []store.LLMCall {
	f.t.Helper()
	calls, err := f.st.LLMCalls(context.Background(), store.ListLLMCallsParams{RunID: runID})
	if err != nil {
		f.t.Fatal(err)
	}
	// Oldest first reads like the run.
	for i, j := 0, len(calls)-1; i < j; i, j = i+1, j-1 {
		calls[i], calls[j] = calls[j], calls[i]
	}
	return calls
}

func kinds(evs []store.RunEvent) string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Kind
	}
	return strings.Join(out, " ")
}

// payload decodes the payload of the events of kind, in order.
func payloads[T any](t testing.TB, evs []store.RunEvent, kind agent.EventKind) []T {
	t.Helper()
	var out []T
	for _, e := range evs {
		if e.Kind != string(kind) {
			continue
		}
		var v T
		if err := json.Unmarshal(e.Payload, &v); err != nil {
			t.Fatalf("event %d (%s): %v", e.Seq, e.Kind, err)
		}
		out = append(out, v)
	}
	return out
}

// golden compares the request bodies the server received, one file each.
func golden(t *testing.T, srv *llmtest.Server, name string) {
	t.Helper()
	for i, r := range srv.Requests() {
		llmtest.Golden(t, filepath.Join("testdata", "golden", fmt.Sprintf("%s_request_%d.json", name, i+1)), r.Body, *update)
	}
}

// messages decodes the OpenAI-wire messages of a request body.
func messages(t testing.TB, r llmtest.Request) []map[string]any {
	t.Helper()
	var body struct {
		Messages []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatal(err)
	}
	return body.Messages
}

// sleeps records the retry waits instead of waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// testTool is a real tool whose spec a test chooses; it counts its calls.
type testTool struct {
	spec  tool.Spec
	calls atomic.Int64
	run   func(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error)
}

func (t *testTool) Spec() tool.Spec { return t.spec }

func (t *testTool) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	t.calls.Add(1)
	if t.run != nil {
		return t.run(ctx, call, args)
	}
	return tool.Text(t.spec.Name + " answered"), nil
}

func newTestTool(name, group string, class tool.DataClass, mut ...func(*tool.Spec)) *testTool {
	s := tool.Spec{
		Name: name, Description: "A test tool: " + name + ".", InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
		Group: group, Effect: tool.ReadOnly, DataClass: class, EnabledByDefault: true,
	}
	for _, m := range mut {
		m(&s)
	}
	return &testTool{spec: s}
}
