package agentconfig_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
)

// graph stores configurations straight through the store, as a UI edit or
// a concurrent writer could leave them, which apply would refuse.
type graph struct {
	configs  []store.LLMConfiguration
	inactive map[string]bool // configuration, model "m_<zone>" or provider "p_<zone>" identifiers
}

func (g graph) store(t *testing.T, e *env) {
	t.Helper()
	p := store.ApplyAgentConfigParams{UpdatedBy: "test"}
	for _, z := range []tool.TrustZone{tool.ZoneLocal, tool.ZonePrivateHosted, tool.ZoneExternalEU, tool.ZoneExternalGlobal} {
		p.SaveProviders = append(p.SaveProviders, store.LLMProvider{
			Identifier: "p_" + string(z), Adapter: "openai_compatible", Endpoint: "http://x/v1", TrustZone: string(z),
			Active: !g.inactive["p_"+string(z)],
		})
		p.SaveModels = append(p.SaveModels, store.LLMModel{
			Identifier: "m_" + string(z), Provider: "p_" + string(z), ModelID: "x", Active: !g.inactive["m_"+string(z)],
		})
	}
	for _, c := range g.configs {
		c.Active = !g.inactive[c.Identifier]
		p.SaveConfigurations = append(p.SaveConfigurations, c)
	}
	if err := e.st.ApplyAgentConfig(t.Context(), p); err != nil {
		t.Fatal(err)
	}
}

func cfg(id string, zone tool.TrustZone, fallbacks ...string) store.LLMConfiguration {
	return store.LLMConfiguration{
		Identifier: id, Model: "m_" + string(zone), MaxRounds: 5, PrivacyLevel: "metadata",
		FallbackChain: fallbacks, AllowedToolGroups: []string{"content", "system"},
	}
}

func chainOf(r *agentconfig.Resolved) []string {
	var out []string
	for _, e := range r.Chain() {
		out = append(out, e.Configuration.Identifier)
	}
	return out
}

func TestResolveChainsAndZones(t *testing.T) {
	t.Parallel()
	const (
		local   = tool.ZoneLocal
		private = tool.ZonePrivateHosted
		eu      = tool.ZoneExternalEU
		global  = tool.ZoneExternalGlobal
	)
	cases := []struct {
		name     string
		configs  []store.LLMConfiguration
		inactive []string
		resolve  string
		chain    []string
		skipped  []string // identifier:reason
		zone     tool.TrustZone
	}{
		{"alone", []store.LLMConfiguration{cfg("a", local)}, nil, "a", []string{"a"}, nil, local},
		{"a global fallback lowers a local configuration", []store.LLMConfiguration{cfg("a", local, "b"), cfg("b", global)},
			nil, "a", []string{"a", "b"}, nil, global},
		{"a local fallback does not raise a global one", []store.LLMConfiguration{cfg("a", global, "b"), cfg("b", local)},
			nil, "a", []string{"a", "b"}, nil, global},
		{"the least trusted of several", []store.LLMConfiguration{cfg("a", local, "b", "c"), cfg("b", eu), cfg("c", private)},
			nil, "a", []string{"a", "b", "c"}, nil, eu},
		{"fallbacks of fallbacks follow, depth first", []store.LLMConfiguration{
			cfg("a", local, "b", "d"), cfg("b", private, "c"), cfg("c", eu), cfg("d", private)},
			nil, "a", []string{"a", "b", "c", "d"}, nil, eu},
		{"a diamond lists each once", []store.LLMConfiguration{cfg("a", local, "b", "c"), cfg("b", local, "c"), cfg("c", private)},
			nil, "a", []string{"a", "b", "c"}, nil, private},
		{"missing entries are skipped", []store.LLMConfiguration{cfg("a", local, "gone", "b"), cfg("b", private)},
			nil, "a", []string{"a", "b"}, []string{"gone:missing"}, private},
		{"an inactive fallback and its own chain are skipped", []store.LLMConfiguration{
			cfg("a", local, "b", "c"), cfg("b", global, "d"), cfg("c", private), cfg("d", global)},
			[]string{"b"}, "a", []string{"a", "c"}, []string{"b:inactive"}, private},
		{"a fallback on an inactive provider is skipped", []store.LLMConfiguration{cfg("a", local, "b"), cfg("b", global)},
			[]string{"p_externalGlobal"}, "a", []string{"a"}, []string{"b:inactive"}, local},
		{"a fallback on an inactive model is skipped", []store.LLMConfiguration{cfg("a", local, "b"), cfg("b", eu)},
			[]string{"m_externalEu"}, "a", []string{"a"}, []string{"b:inactive"}, local},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, envParams{})
			inactive := map[string]bool{}
			for _, id := range c.inactive {
				inactive[id] = true
			}
			graph{configs: c.configs, inactive: inactive}.store(t, e)
			r, err := e.svc.Resolve(t.Context(), c.resolve)
			if err != nil {
				t.Fatal(err)
			}
			if got := chainOf(r); !slices.Equal(got, c.chain) {
				t.Errorf("chain = %q, want %q", got, c.chain)
			}
			var skipped []string
			for _, s := range r.Skipped {
				skipped = append(skipped, s.Identifier+":"+s.Reason)
			}
			if !slices.Equal(skipped, c.skipped) {
				t.Errorf("skipped = %q, want %q", skipped, c.skipped)
			}
			gc := r.GateConfig()
			if r.TrustZone() != c.zone || gc.TrustZone != c.zone || gc.Name != c.resolve ||
				!slices.Equal(gc.AllowedGroups, []string{"content", "system"}) {
				t.Errorf("gate config = %+v, want zone %s", gc, c.zone)
			}
		})
	}
}

func TestResolveRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envParams{})
	graph{
		configs: []store.LLMConfiguration{
			cfg("loop_a", tool.ZoneLocal, "loop_b"), cfg("loop_b", tool.ZoneLocal, "loop_c"), cfg("loop_c", tool.ZoneLocal, "loop_a"),
			cfg("off", tool.ZoneLocal), cfg("on_off_model", tool.ZoneExternalEU), cfg("ok", tool.ZoneLocal),
		},
		inactive: map[string]bool{"off": true, "m_externalEu": true},
	}.store(t, e)
	for _, c := range []struct {
		id   string
		err  error
		want string
	}{
		{"loop_a", agentconfig.ErrCycle, "loop_a → loop_b → loop_c → loop_a"},
		{"loop_b", agentconfig.ErrCycle, "loop_b → loop_c → loop_a → loop_b"},
		{"nothing", agentconfig.ErrNotFound, `there is no configuration "nothing"`},
		{"off", agentconfig.ErrInactive, `configuration "off" is inactive`},
		{"on_off_model", agentconfig.ErrInactive, `model "m_externalEu" of configuration "on_off_model" is inactive`},
	} {
		_, err := e.svc.Resolve(t.Context(), c.id)
		if !errors.Is(err, c.err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Resolve(%s) = %v, want %v containing %q", c.id, err, c.err, c.want)
		}
	}
	if _, err := e.svc.Resolve(t.Context(), "ok"); err != nil {
		t.Errorf("Resolve(ok) = %v", err)
	}
}

func TestResolveChainLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envParams{})
	var configs []store.LLMConfiguration
	for i := range agentconfig.MaxChain + 3 {
		var next []string
		if i < agentconfig.MaxChain+2 {
			next = []string{fmt.Sprintf("c%02d", i+1)}
		}
		configs = append(configs, cfg(fmt.Sprintf("c%02d", i), tool.ZoneLocal, next...))
	}
	graph{configs: configs}.store(t, e)
	r, err := e.svc.Resolve(t.Context(), "c00")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(r.Chain()); n != agentconfig.MaxChain {
		t.Errorf("chain of %d entries, want %d", n, agentconfig.MaxChain)
	}
	if len(r.Skipped) != 1 || r.Skipped[0].Reason != "chain_limit" || r.Skipped[0].Identifier != "c16" {
		t.Errorf("skipped = %+v, want c16 beyond the limit", r.Skipped)
	}
}

func TestResolveTask(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envParams{})
	e.mustApply(t, fullDoc, false)
	task, r, err := e.svc.ResolveTask(t.Context(), "chat")
	if err != nil {
		t.Fatal(err)
	}
	if task.Configuration != "support" || r.Configuration.Identifier != "support" || r.Model.ModelID != "gpt-4o-mini" ||
		r.Provider.Identifier != "openai" || !slices.Equal(chainOf(r), []string{"support", "careful", "local"}) {
		t.Errorf("task %+v resolves to %q via %s", task, chainOf(r), r.Provider.Identifier)
	}
	if _, _, err := e.svc.ResolveTask(t.Context(), "missing"); !errors.Is(err, agentconfig.ErrNotFound) {
		t.Errorf("ResolveTask(missing) = %v", err)
	}
	// The resolved form prints no key: JSON and every fmt verb.
	b, _ := json.Marshal(r)
	for _, s := range []string{string(b), fmt.Sprintf("%v", r), fmt.Sprintf("%+v", r), fmt.Sprintf("%#v", r)} {
		if strings.Contains(s, literalKey) || strings.Contains(s, "t3s1:") {
			t.Errorf("a resolved configuration prints its key: %.300s", s)
		}
	}
	if !strings.Contains(string(b), `"apiKey":"env:OPENAI_API_KEY"`) || !strings.Contains(fmt.Sprintf("%+v", r.Fallbacks[0].Provider), "sealed") {
		t.Errorf("the key references are not shown as env:NAME and sealed: %s", b)
	}
}

// zoneTool is a tool of one group and data class.
type zoneTool struct{ spec tool.Spec }

func (z zoneTool) Spec() tool.Spec { return z.spec }
func (z zoneTool) Execute(context.Context, tool.Call, map[string]any) (tool.Result, error) {
	return tool.Text("ok"), nil
}

func newZoneTool(name, group string, class tool.DataClass) zoneTool {
	return zoneTool{tool.Spec{
		Name: name, Description: "test", InputSchema: json.RawMessage(`{"type":"object"}`),
		Group: group, Effect: tool.ReadOnly, DataClass: class, EnabledByDefault: true,
	}}
}

// TestResolvedThroughTheGate: the real gate offers a systemDiagnostics
// tool to a local configuration, and withholds it once the configuration
// falls back to an externalGlobal one.
func TestResolvedThroughTheGate(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envParams{})
	reg, err := tool.NewRegistry([]tool.Tool{
		newZoneTool("system_status", tool.GroupSystem, tool.SystemDiagnostics),
		newZoneTool("page_content", tool.GroupContent, tool.EditorContent),
		newZoneTool("schema", tool.GroupStructure, tool.InternalConfiguration),
	})
	if err != nil {
		t.Fatal(err)
	}
	g, err := gate.New(gate.Params{Registry: reg, Store: e.st})
	if err != nil {
		t.Fatal(err)
	}
	graph{configs: []store.LLMConfiguration{
		cfg("local_only", tool.ZoneLocal), cfg("local_with_global", tool.ZoneLocal, "global"), cfg("global", tool.ZoneExternalGlobal),
	}}.store(t, e)
	decide := func(id string) map[string]gate.Decision {
		r, err := e.svc.Resolve(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		ds, err := g.Explain(t.Context(), gate.ExplainParams{Config: r})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]gate.Decision{}
		for _, d := range ds {
			m[d.Tool] = d
		}
		return m
	}
	local := decide("local_only")
	if !local["system_status"].Allowed || !local["page_content"].Allowed || local["schema"].Reason != gate.ReasonConfigurationGroup {
		t.Errorf("local configuration: %+v", local)
	}
	lowered := decide("local_with_global")
	if d := lowered["system_status"]; d.Allowed || d.Reason != gate.ReasonTrustZone || d.Zone != tool.ZoneExternalGlobal {
		t.Errorf("local with a global fallback: system_status = %+v, want denied for trust_zone", d)
	}
	if !lowered["page_content"].Allowed {
		t.Errorf("local with a global fallback: page_content = %+v, want allowed", lowered["page_content"])
	}
}

// countingStore counts the full reads of the real store underneath.
type countingStore struct {
	store.AgentConfigs
	snapshots atomic.Int64
}

func (c *countingStore) AgentConfigSnapshot(ctx context.Context) (store.AgentConfigSnapshot, error) {
	c.snapshots.Add(1)
	return c.AgentConfigs.AgentConfigSnapshot(ctx)
}

// TestResolveSeesEveryChange: resolving reuses the model it read while
// nothing changed, and sees every change from the next resolve on, an
// apply through the service as much as an operator's own SQL on the
// database; the user limits come from the same model.
func TestResolveSeesEveryChange(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envParams{})
	e.mustApply(t, fullDoc, false)
	cs := &countingStore{AgentConfigs: e.st}
	svc := agentconfig.New(agentconfig.Params{Store: cs, Keyring: e.keys})
	ctx := t.Context()
	resolve := func(what string) *agentconfig.Resolved {
		t.Helper()
		r, err := svc.Resolve(ctx, "support")
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return r
	}
	limits := func(r *agentconfig.Resolved) [3]agentconfig.Budget {
		return [3]agentconfig.Budget{r.UserLimits("editor"), r.UserLimits("admin"), r.UserLimits("nobody")}
	}

	r := resolve("first")
	if want := (agentconfig.Budget{RequestsPerDay: 50, CostPerDay: agentconfig.Dollar * 5 / 4}); limits(r) != [3]agentconfig.Budget{want, {}, {}} {
		t.Errorf("user limits (editor, inactive admin, nobody) = %+v", limits(r))
	}
	for i := range 3 {
		if again := resolve("unchanged"); again.Configuration.SystemPrompt != r.Configuration.SystemPrompt {
			t.Fatalf("resolve %d changed without a write", i)
		}
	}
	if n := cs.snapshots.Load(); n != 1 {
		t.Errorf("4 resolves without a change read the model %d times, want 1", n)
	}
	if _, _, err := svc.ResolveTask(ctx, "chat"); err != nil || cs.snapshots.Load() != 1 {
		t.Errorf("ResolveTask without a change: %v, %d reads", err, cs.snapshots.Load())
	}

	// An apply through another service (another process, say).
	e.mustApply(t, strings.Replace(fullDoc, "You help editors of the Nordlicht site.", "Changed by apply.", 1), false)
	if got := resolve("after apply").Configuration.SystemPrompt; got != "Changed by apply.\n" {
		t.Errorf("after an apply: system prompt %q", got)
	}

	// An operator's SQL, straight on the database file.
	db, err := sql.Open("sqlite", e.path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`UPDATE llm_configurations SET system_prompt = 'Changed by hand.' WHERE identifier = 'support'`,
		`UPDATE llm_user_budgets SET active = 0 WHERE username = 'editor'`,
		`UPDATE llm_user_budgets SET active = 1 WHERE username = 'admin'`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	r = resolve("after SQL")
	if r.Configuration.SystemPrompt != "Changed by hand." || limits(r) != [3]agentconfig.Budget{} {
		t.Errorf("after an operator's SQL: prompt %q, limits %+v", r.Configuration.SystemPrompt, limits(r))
	}
	if _, err := db.ExecContext(ctx, `UPDATE llm_configurations SET active = 0 WHERE identifier = 'support'`); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Resolve(ctx, "support"); !errors.Is(err, agentconfig.ErrInactive) {
		t.Errorf("resolving a configuration switched off by hand: %v, want ErrInactive", err)
	}
	if n := cs.snapshots.Load(); n != 4 {
		t.Errorf("the model was read %d times over 3 changes, want 4", n)
	}
}

// TestResolveConcurrent: many goroutines resolve while another applies;
// each sees a whole model, and the shared one is never written to.
func TestResolveConcurrent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envParams{})
	e.mustApply(t, fullDoc, false)
	ctx := t.Context()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for range 50 {
				r, err := e.svc.Resolve(ctx, "support")
				if err != nil {
					errs <- err
					return
				}
				if p := r.Configuration.SystemPrompt; p != "You help editors of the Nordlicht site.\n" && p != "Second.\n" {
					errs <- fmt.Errorf("system prompt %q", p)
					return
				}
				_ = r.GateConfig()
				_ = r.UserLimits("editor")
			}
		})
	}
	e.mustApply(t, strings.Replace(fullDoc, "You help editors of the Nordlicht site.", "Second.", 1), false)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if r, err := e.svc.Resolve(ctx, "support"); err != nil || r.Configuration.SystemPrompt != "Second.\n" {
		t.Errorf("after the apply: %v, %+v", err, r)
	}
}
