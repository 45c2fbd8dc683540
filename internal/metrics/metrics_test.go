package metrics_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/goleak"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/builtin"
	"github.com/t3agent/t3agent/internal/dbtest"
	"github.com/t3agent/t3agent/internal/demo/demotest"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/metrics"
	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/telemetry"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixedNow is the clock of the store, the site and telemetry.
func fixedNow() time.Time { return time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC) }

// fixture is the agent runtime over a real demo site, the builtin tools
// behind the real gate, a real store and real telemetry, with the metrics
// hooked in as serve hooks them, on a registry of its own.
type fixture struct {
	t    *testing.T
	st   store.Store
	site *typo3.Site
	cfgs *agentconfig.Service
	rt   *agent.Runtime
	reg  *prometheus.Registry
}

func newFixture(t *testing.T, dsn string) *fixture {
	t.Helper()
	ctx := t.Context()
	f := &fixture{t: t, reg: prometheus.NewPedanticRegistry()}
	logger := slog.New(slog.DiscardHandler)
	demo := demotest.New(t, typo3.DialectSQLite)
	tc, err := tca.Load(tca.LoadParams{ProjectRoot: demo.Root})
	if err != nil {
		t.Fatal(err)
	}
	if f.site, err = typo3.NewSite(typo3.SiteParams{DB: demo.Open(t), TCA: tc, Root: demo.Root, Now: fixedNow}); err != nil {
		t.Fatal(err)
	}
	if f.st, err = store.Open(ctx, dsn, store.OpenParams{Now: fixedNow}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.st.Close() })

	events := metrics.NewEvents()
	f.reg.MustRegister(events, metrics.NewStore(metrics.StoreParams{Store: f.st, Now: func() time.Time { return fixedNow().Add(90 * time.Second) }}))

	reg, err := tool.NewRegistry(builtin.Tools(f.site, readpolicy.New(tc)))
	if err != nil {
		t.Fatal(err)
	}
	g, err := gate.New(gate.Params{Registry: reg, Store: f.st, Logger: logger, OnCallFinished: events.ToolCall, OnDenied: events.Denied})
	if err != nil {
		t.Fatal(err)
	}
	f.cfgs = agentconfig.New(agentconfig.Params{Store: f.st, LookupEnv: func(name string) (string, bool) {
		return llmtest.Key, name == "LLMTEST_KEY"
	}})
	tel := telemetry.New(telemetry.Params{Store: f.st, Now: fixedNow, OnCall: events.ProviderCall})
	providers := agent.NewProviders(agent.ProvidersParams{Keys: f.cfgs, Now: fixedNow, Logger: logger,
		Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }})
	t.Cleanup(providers.Close)
	if f.rt, err = agent.New(agent.Params{Gate: g, Store: f.st, Providers: providers, Telemetry: tel, Now: fixedNow,
		Logger: logger, LeaseOwner: "interactive:test:1", Configs: f.cfgs, Users: f.site}); err != nil {
		t.Fatal(err)
	}
	return f
}

// apply declares a priced provider (2.50 and 10 dollars per million
// tokens) on srv, its model and a configuration, all named id.
func (f *fixture) apply(id string, srv *llmtest.Server) {
	f.t.Helper()
	d, err := agentconfig.ParseDocument(fmt.Appendf(nil, `
providers:
  - identifier: %[1]s
    adapter: openai
    endpoint: %[2]s
    api_key: env:LLMTEST_KEY
    trust_zone: externalGlobal
    max_retries: 0
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
    max_tokens: 1000
`, id, srv.BaseURL()))
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.cfgs.Apply(f.t.Context(), agentconfig.ApplyParams{Document: d, By: "test"}); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) run(id, question string) agent.Result {
	f.t.Helper()
	cfg, err := f.cfgs.Resolve(f.t.Context(), id)
	if err != nil {
		f.t.Fatal(err)
	}
	user, err := f.site.BackendUserByName(f.t.Context(), "editor")
	if err != nil {
		f.t.Fatal(err)
	}
	return f.rt.Run(f.t.Context(), agent.Request{
		Config: cfg, Actor: user, Caller: agent.Caller{Source: "test", Operation: "metrics"},
		Messages: []llm.Message{{Role: llm.RoleUser, Content: question}},
	})
}

// scrape gathers the registry, as /metrics would, keyed by name and then
// by the series' labels ("k=v,k=v", sorted; "" for none).
func scrape(t *testing.T, g prometheus.Gatherer) map[string]map[string]*dto.Metric {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	out := map[string]map[string]*dto.Metric{}
	for _, mf := range mfs {
		series := map[string]*dto.Metric{}
		for _, m := range mf.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			series[strings.Join(ls, ",")] = m
		}
		out[mf.GetName()] = series
	}
	return out
}

// value is a counter's, gauge's or histogram's (its count) value of one
// series; the test fails when the series is missing.
func value(t *testing.T, s map[string]map[string]*dto.Metric, name, labels string) float64 {
	t.Helper()
	m, ok := s[name][labels]
	if !ok {
		t.Errorf("no series %s{%s}", name, labels)
		return 0
	}
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	t.Errorf("%s{%s} has no value", name, labels)
	return 0
}

func want(t *testing.T, s map[string]map[string]*dto.Metric, name, labels string, v float64) {
	t.Helper()
	if got := value(t, s, name, labels); got != v {
		t.Errorf("%s{%s} = %v, want %v", name, labels, got, v)
	}
}

// sqliteStore opens a store in a new SQLite file, on the fixed clock;
// it is closed when t ends.
func sqliteStore(t *testing.T) store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "t3agent.db"), store.OpenParams{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// databases runs fn on a SQLite store and, when configured, PostgreSQL.
func databases(t *testing.T, fn func(t *testing.T, dsn string)) {
	t.Run("SQLite", func(t *testing.T) {
		t.Parallel()
		fn(t, "sqlite:"+filepath.Join(t.TempDir(), "t3agent.db"))
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		t.Parallel()
		fn(t, dbtest.Postgres(t))
	})
}

// TestAgentTurnMetrics drives real agent turns against a scripted
// provider, then scrapes: provider calls, tokens, cost and latency by
// provider and model; tool calls by tool and outcome (an unknown name as
// other); denials matching the governance events; and, from the store,
// runs by status and outcome, the queue, conversations and MCP health.
func TestAgentTurnMetrics(t *testing.T) {
	t.Parallel()
	databases(t, testAgentTurnMetrics)
}

func testAgentTurnMetrics(t *testing.T, dsn string) {
	ctx := t.Context()
	f := newFixture(t, dsn)
	srv := llmtest.NewOpenAI(t,
		llmtest.Calls(
			llmtest.Call("call_1", "search_records", `{"query":"Aqua 200","limit":3}`),
			llmtest.Call("call_2", "get_page_content", `{"uid": 6,`),
			llmtest.Call("call_3", "drop_database", `{}`),
		).WithUsage(900, 40),
		llmtest.Text("The Aqua 200 is on page 6.").WithUsage(1600, 60),
	)
	f.apply("main", srv)
	if res := f.run("main", "Where is the Aqua 200 described?"); res.Outcome != agent.OutcomeCompleted {
		t.Fatalf("first run: %+v", res)
	}
	broken := llmtest.NewOpenAI(t, llmtest.Status(401))
	f.apply("broken", broken)
	if res := f.run("broken", "Hello"); res.Outcome != agent.OutcomeFailed || res.Termination != agent.TerminationProviderFailed {
		t.Fatalf("second run: %+v", res)
	}

	// The queue, a conversation and an MCP server, as other processes
	// would leave them in the shared store.
	p := store.CreateRunParams{ID: "queued-1", OwnerUsername: "editor", OwnerUID: 2, Configuration: "main",
		CallerSource: "api", CallerOperation: "run", Privacy: "metadata"}
	if _, err := f.st.EnqueueRun(ctx, store.EnqueueRunParams{CreateRunParams: p, QueuedRequest: "sealed"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.CreateConversation(ctx, store.CreateConversationParams{OwnerUID: 2, OwnerUsername: "editor"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.CreateMCPServer(ctx, store.CreateMCPServerParams{Identifier: "docs", Name: "Docs", URL: "https://docs.example/mcp",
		AuthKind: store.MCPAuthNone, Effect: store.MCPEffectReadOnly, Enabled: true, CreatedBy: "admin"}); err != nil {
		t.Fatal(err)
	}
	contact := fixedNow().Add(-time.Minute)
	if err := f.st.RecordMCPContact(ctx, store.RecordMCPContactParams{Identifier: "docs", Latency: 250 * time.Millisecond, At: contact}); err != nil {
		t.Fatal(err)
	}

	s := scrape(t, f.reg)
	// Provider calls: two answers from main, one 401 from broken.
	want(t, s, "t3agent_provider_calls_total", "model=main-model,outcome=ok,provider=main", 2)
	want(t, s, "t3agent_provider_calls_total", "model=broken-model,outcome=auth,provider=broken", 1)
	want(t, s, "t3agent_provider_tokens_total", "direction=input,model=main-model,provider=main", 2500)
	want(t, s, "t3agent_provider_tokens_total", "direction=output,model=main-model,provider=main", 100)
	// 2500 × $2.50/M + 100 × $10/M.
	if got := value(t, s, "t3agent_provider_cost_dollars_total", "model=main-model,provider=main"); got < 0.0072499 || got > 0.0072501 {
		t.Errorf("cost = %v, want 0.00725", got)
	}
	want(t, s, "t3agent_provider_call_duration_seconds", "model=main-model,provider=main", 2)
	want(t, s, "t3agent_provider_call_duration_seconds", "model=broken-model,provider=broken", 1)
	if _, ok := s["t3agent_provider_unpriced_calls_total"]; ok {
		t.Error("calls on priced models were counted as unpriced")
	}

	// Tool calls: one answered, one with bad arguments, one refused for a
	// name the registry does not hold.
	want(t, s, "t3agent_tool_calls_total", "outcome=ok,tool=search_records", 1)
	want(t, s, "t3agent_tool_calls_total", "outcome=invalid_arguments,tool=get_page_content", 1)
	want(t, s, "t3agent_tool_calls_total", "outcome=denied,tool=other", 1)
	want(t, s, "t3agent_tool_call_duration_seconds", "outcome=ok,tool=search_records", 1)
	if len(s["t3agent_tool_calls_total"]) != 3 {
		t.Errorf("tool call series: %v", keys(s["t3agent_tool_calls_total"]))
	}

	// Denials: as many as the gate recorded governance events, by reason.
	evs, err := f.st.GovernanceEvents(ctx, store.ListGovernanceEventsParams{Limit: store.MaxGovernanceEventLimit})
	if err != nil {
		t.Fatal(err)
	}
	byReason := map[string]float64{}
	for _, ev := range evs {
		byReason[ev.Reason]++
	}
	var denied float64
	for _, m := range s["t3agent_gate_denials_total"] {
		denied += m.Counter.GetValue()
	}
	if denied != float64(len(evs)) || len(evs) == 0 {
		t.Errorf("%v denials counted, %d governance events recorded", denied, len(evs))
	}
	want(t, s, "t3agent_gate_denials_total", "reason=not_registered,stage=call", 1)
	for reason, n := range byReason {
		var got float64
		for labels, m := range s["t3agent_gate_denials_total"] {
			if strings.HasPrefix(labels, "reason="+reason+",") {
				got += m.Counter.GetValue()
			}
		}
		if got != n {
			t.Errorf("denials for %s = %v, want %v (the governance events)", reason, got, n)
		}
	}

	// From the store.
	want(t, s, "t3agent_store_up", "", 1)
	want(t, s, "t3agent_runs", "status=completed", 1)
	want(t, s, "t3agent_runs", "status=failed", 1)
	want(t, s, "t3agent_runs", "status=queued", 1)
	want(t, s, "t3agent_runs", "status=running", 0)
	want(t, s, "t3agent_runs", "status=waiting_for_approval", 0)
	want(t, s, "t3agent_runs_finished_total", "outcome=completed,termination=completed", 1)
	want(t, s, "t3agent_runs_finished_total", "outcome=failed,termination=provider_failed", 1)
	want(t, s, "t3agent_run_queue_depth", "", 1)
	want(t, s, "t3agent_run_queue_ready", "", 1)
	want(t, s, "t3agent_run_queue_oldest_age_seconds", "", 90)
	want(t, s, "t3agent_chat_conversations", "status=idle", 1)
	want(t, s, "t3agent_chat_conversations", "status=locked", 0)
	want(t, s, "t3agent_mcp_server_enabled", "server=docs", 1)
	want(t, s, "t3agent_mcp_server_import_status", "server=docs,status=never_imported", 1)
	want(t, s, "t3agent_mcp_server_import_status", "server=docs,status=ok", 0)
	want(t, s, "t3agent_mcp_server_tools", "server=docs", 0)
	want(t, s, "t3agent_mcp_server_last_contact_timestamp_seconds", "server=docs", float64(contact.Unix()))
	want(t, s, "t3agent_mcp_server_last_latency_seconds", "server=docs", 0.25)

	// No label carries a run id, a user name or a conversation.
	for name, series := range s {
		for labels := range series {
			for _, bad := range []string{"editor", "queued-1", "Aqua"} {
				if strings.Contains(labels, bad) {
					t.Errorf("%s{%s} carries %q", name, labels, bad)
				}
			}
		}
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestLint: every metric's name, type, unit and help pass Prometheus's
// own linter, with every series present.
func TestLint(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st := sqliteStore(t)
	if _, err := st.CreateMCPServer(ctx, store.CreateMCPServerParams{Identifier: "docs", Name: "Docs", URL: "https://docs.example/mcp",
		AuthKind: store.MCPAuthNone, Effect: store.MCPEffectReadOnly, CreatedBy: "admin"}); err != nil {
		t.Fatal(err)
	}
	if err := st.RecordMCPContact(ctx, store.RecordMCPContactParams{Identifier: "docs", Latency: time.Millisecond, At: fixedNow()}); err != nil {
		t.Fatal(err)
	}
	ev := metrics.NewEvents()
	in, out, cost := int64(10), int64(5), int64(1000)
	ev.ProviderCall(ctx, store.RecordLLMCallParams{Provider: "p", Model: "m", Success: true, InputTokens: &in, OutputTokens: &out, Cost: &cost})
	ev.ProviderCall(ctx, store.RecordLLMCallParams{Provider: "p", Model: "unpriced", Success: true, InputTokens: &in})
	ev.ToolCall(ctx, gate.CallReport{Tool: "t", Registered: true, Outcome: gate.OutcomeOK})
	ev.Denied(ctx, gate.Denial{Tool: "t", Reason: gate.ReasonTrustZone, Stage: gate.StageOffer})
	for name, c := range map[string]prometheus.Collector{
		"events": ev,
		"store":  metrics.NewStore(metrics.StoreParams{Store: st}),
	} {
		problems, err := testutil.CollectAndLint(c)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, p := range problems {
			t.Errorf("%s: %s: %s", name, p.Metric, p.Text)
		}
	}
	// 11 series of the calls above, and 7 reasons × 3 stages of denials.
	if n := testutil.CollectAndCount(ev); n != 11+21 {
		t.Errorf("events collected %d series, want 32", n)
	}
}

// TestLabelsAreBounded: names and values outside the vocabularies count
// as other, so a model calling made-up tools or a newer outcome cannot
// grow the series without bound.
func TestLabelsAreBounded(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ev := metrics.NewEvents()
	for i := range 50 {
		ev.ToolCall(ctx, gate.CallReport{Tool: fmt.Sprintf("made_up_%d", i), Outcome: gate.OutcomeDenied})
		ev.ToolCall(ctx, gate.CallReport{Tool: "search_records", Registered: true, Outcome: gate.Outcome(fmt.Sprintf("new_%d", i))})
		ev.Denied(ctx, gate.Denial{Tool: fmt.Sprintf("x%d", i), Reason: gate.Reason(fmt.Sprintf("r%d", i)), Stage: gate.Stage(fmt.Sprintf("s%d", i))})
		ev.ProviderCall(ctx, store.RecordLLMCallParams{Provider: "p", Model: "m", ErrorClass: fmt.Sprintf("class_%d", i)})
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(ev)
	s := scrape(t, reg)
	want(t, s, "t3agent_tool_calls_total", "outcome=denied,tool=other", 50)
	want(t, s, "t3agent_tool_calls_total", "outcome=other,tool=search_records", 50)
	want(t, s, "t3agent_gate_denials_total", "reason=other,stage=other", 50)
	want(t, s, "t3agent_provider_calls_total", "model=m,outcome=other,provider=p", 50)
	for name, most := range map[string]int{"t3agent_tool_calls_total": 2, "t3agent_gate_denials_total": 21 + 1, "t3agent_provider_calls_total": 1} {
		if n := len(s[name]); n > most {
			t.Errorf("%s has %d series: %v", name, n, keys(s[name]))
		}
	}
	// A nil *Events takes every hook and counts nothing.
	var none *metrics.Events
	none.ToolCall(ctx, gate.CallReport{Tool: "t"})
	none.Denied(ctx, gate.Denial{})
	none.ProviderCall(ctx, store.RecordLLMCallParams{})
}

// TestStoreDown: a store that does not answer gives t3agent_store_up 0
// and none of the store's series, instead of stale or zero values.
func TestStoreDown(t *testing.T) {
	t.Parallel()
	st := sqliteStore(t)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(metrics.NewStore(metrics.StoreParams{Store: st}))
	s := scrape(t, reg)
	want(t, s, "t3agent_store_up", "", 0)
	if len(s) != 1 {
		t.Errorf("a closed store still reported %v", keys(s))
	}
}

// TestDocumented: every metric is in the table of docs/operations.md, and
// the table names no metric that does not exist.
func TestDocumented(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan *prometheus.Desc, 64)
	metrics.NewEvents().Describe(ch)
	metrics.NewStore(metrics.StoreParams{}).Describe(ch)
	close(ch)
	names := map[string]bool{}
	fq := regexp.MustCompile(`fqName: "([a-z0-9_]+)"`)
	for d := range ch {
		m := fq.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("no name in %s", d)
		}
		names[m[1]] = true
		if !strings.Contains(string(doc), "| `"+m[1]+"` |") {
			t.Errorf("docs/operations.md has no row for %s", m[1])
		}
	}
	own := map[string]bool{"t3agent_build_info": true, "t3agent_http_requests_total": true, "t3agent_http_request_duration_seconds": true}
	for _, m := range regexp.MustCompile("(?m)^\\| `(t3agent_[a-z0-9_]+)` \\|").FindAllStringSubmatch(string(doc), -1) {
		if !names[m[1]] && !own[m[1]] && !strings.HasPrefix(m[1], "t3agent_login_") {
			t.Errorf("docs/operations.md lists %s, which no collector of this package reports", m[1])
		}
	}
}

// TestFinishedRunsRecount: the finished runs, whose count reads every
// finished run, are counted again once FinishedEvery has passed; the
// cheap series follow every scrape.
func TestFinishedRunsRecount(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st := sqliteStore(t)
	var mu sync.Mutex
	now := fixedNow()
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(metrics.NewStore(metrics.StoreParams{Store: st, Now: clock, FinishedEvery: time.Minute}))
	finish := func(id string) {
		t.Helper()
		p := store.CreateRunParams{ID: id, OwnerUsername: "editor", OwnerUID: 2, Configuration: "main", CallerSource: "api",
			CallerOperation: "run", Privacy: "metadata", LeaseOwner: "interactive:test:1", Lease: time.Minute}
		if _, err := st.CreateRun(ctx, p); err != nil {
			t.Fatal(err)
		}
		if _, err := st.SettleRun(ctx, store.SettleRunParams{ID: id, LeaseOwner: p.LeaseOwner, Status: store.RunFailed,
			Outcome: "failed", TerminationReason: "budget_exhausted"}); err != nil {
			t.Fatal(err)
		}
	}
	const series = "outcome=failed,termination=budget_exhausted"
	finish("run-1")
	want(t, scrape(t, reg), "t3agent_runs_finished_total", series, 1)
	finish("run-2")
	s := scrape(t, reg)
	want(t, s, "t3agent_runs", "status=failed", 2)
	want(t, s, "t3agent_runs_finished_total", series, 1)
	mu.Lock()
	now = now.Add(time.Minute)
	mu.Unlock()
	want(t, scrape(t, reg), "t3agent_runs_finished_total", series, 2)
}
