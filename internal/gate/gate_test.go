package gate_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

// checks says which of the gate's five checks a tool passes.
type checks struct{ registered, enabled, adminOK, groupOK, zoneOK bool }

func (c checks) firstFailure() gate.Reason {
	switch {
	case !c.registered:
		return gate.ReasonNotRegistered
	case !c.enabled:
		return gate.ReasonToolDisabled
	case !c.adminOK:
		return gate.ReasonRequiresAdmin
	case !c.groupOK:
		return gate.ReasonConfigurationGroup
	case !c.zoneOK:
		return gate.ReasonTrustZone
	}
	return ""
}

// TestReasonsInOrder runs all 32 combinations of passing and failing
// checks: each reason alone and in every combination, where the first
// failing check in the order of SPEC §2 must be the one reported.
func TestReasonsInOrder(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	cfg := gate.Config{Name: "support", AllowedGroups: []string{tool.GroupContent}, TrustZone: tool.ZoneExternalEU}
	var builtins []tool.Tool
	var disabled []string
	all := map[string]checks{}
	for bits := range 32 {
		c := checks{bits&1 == 0, bits&2 == 0, bits&4 == 0, bits&8 == 0, bits&16 == 0}
		name := fmt.Sprintf("t_%05b", bits)
		all[name] = c
		if !c.registered {
			continue
		}
		builtins = append(builtins, newTool(name, func(s *tool.Spec) {
			s.AdminOnly = !c.adminOK
			if !c.groupOK {
				s.Group = tool.GroupFiles
			}
			if !c.zoneOK {
				s.DataClass = tool.SystemDiagnostics // above externalEu's ceiling
			}
		}))
		if !c.enabled {
			disabled = append(disabled, name)
		}
	}
	e := newEnv(t, envParams{builtins: builtins})
	for _, n := range disabled {
		e.setTool(n, false)
	}

	wantEvents := 0
	for _, mode := range []gate.Enforcement{gate.Enforce, gate.Observe} {
		e.setEnforcement(mode)
		for name, c := range all {
			d, err := e.gate.Decide(ctx, gate.DecideParams{Tool: name, Actor: editor(), Config: cfg, RunID: "run-1"})
			if err != nil {
				t.Fatalf("Decide(%s): %v", name, err)
			}
			reason := c.firstFailure()
			want := gate.Decision{
				Tool: name, Allowed: reason == "", Reason: reason,
				DataClass: tool.EditorContent, Zone: tool.ZoneExternalEU, Ceiling: tool.InternalConfiguration,
			}
			switch {
			case !c.registered:
				want.DataClass = tool.SecretAdjacent
			case !c.zoneOK:
				want.DataClass = tool.SystemDiagnostics
			}
			// Observe relaxes the trust-zone check only, and only when it
			// is the first to fail.
			if mode == gate.Observe && reason == gate.ReasonTrustZone {
				want.Allowed, want.ObservedOnly = true, true
			}
			if d != want {
				t.Errorf("%s %+v: Decide = %+v, want %+v", mode, c, d, want)
			}
			if !want.Allowed || want.ObservedOnly {
				wantEvents++
			}
		}
	}
	if got := len(e.events()); got != wantEvents {
		t.Errorf("%d governance events, want one per denied or observed decision (%d)", got, wantEvents)
	}

	// Explain agrees with Decide for every registered tool.
	e.setEnforcement(gate.Enforce)
	list, err := e.gate.Explain(ctx, gate.ExplainParams{Actor: editor(), Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != len(builtins) {
		t.Fatalf("Explain returned %d decisions, want %d", len(list), len(builtins))
	}
	for i, d := range list {
		if i > 0 && list[i-1].Tool >= d.Tool {
			t.Errorf("Explain is not sorted: %s before %s", list[i-1].Tool, d.Tool)
		}
		if want := all[d.Tool].firstFailure(); d.Reason != want || d.Allowed != (want == "") {
			t.Errorf("Explain %s = %+v, want reason %q", d.Tool, d, want)
		}
	}
	if got := len(e.events()); got != wantEvents {
		t.Errorf("Explain recorded %d events; a readout records none", got-wantEvents)
	}
}

func TestAdminOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envParams{builtins: []tool.Tool{newTool("admin_tool", func(s *tool.Spec) { s.AdminOnly = true }), newTool("open_tool")}})
	for _, c := range []struct {
		actor *typo3.BackendUser
		name  string
		want  gate.Reason
	}{
		{admin(), "admin_tool", ""},
		{editor(), "admin_tool", gate.ReasonRequiresAdmin},
		{nil, "admin_tool", gate.ReasonRequiresAdmin},
		// The gate does not require a user for other tools; the tools
		// themselves return no data without one.
		{nil, "open_tool", ""},
		{editor(), "open_tool", ""},
	} {
		d, err := e.gate.Decide(t.Context(), gate.DecideParams{Tool: c.name, Actor: c.actor, Config: gate.Config{TrustZone: tool.ZoneLocal}})
		if err != nil || d.Reason != c.want || d.Allowed != (c.want == "") {
			t.Errorf("Decide(%s as %v) = %+v, %v; want reason %q", c.name, c.actor, d, err, c.want)
		}
	}
}

// TestEnforcementModes proves that only the exact word observes: every
// near miss enforces, and remote tools enforce even in observe mode.
func TestEnforcementModes(t *testing.T) {
	t.Parallel()
	local := newTool("local_diag", func(s *tool.Spec) { s.DataClass = tool.SystemDiagnostics })
	remote := newTool("mcp_ops_diag", func(s *tool.Spec) {
		s.DataClass, s.Group, s.Remote, s.Effect = tool.SystemDiagnostics, "mcp_ops", true, tool.NonIdempotentWrite
	})
	e := newEnv(t, envParams{builtins: []tool.Tool{local, remote}})
	cfg := gate.Config{TrustZone: tool.ZoneExternalGlobal}
	for _, c := range []struct {
		mode     string
		observes bool
	}{
		{"observe", true},
		{"enforce", false},
		{"", false},
		{"Observe ", false},
		{"OBSERVE", false},
		{"Observe", false},
		{" observe", false},
		{"observe\n", false},
		{"obsrve", false},
		{"observed", false},
		{"observe,enforce", false},
		{"log", false},
	} {
		mode := gate.Enforcement(c.mode)
		if mode.Observes() != c.observes {
			t.Errorf("Enforcement(%q).Observes() = %v, want %v", c.mode, mode.Observes(), c.observes)
		}
		// The operator's setting as stored, untrimmed.
		e.setEnforcement(mode)
		d, err := e.gate.Decide(t.Context(), gate.DecideParams{Tool: "local_diag", Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed != c.observes || d.ObservedOnly != c.observes || d.Reason != gate.ReasonTrustZone {
			t.Errorf("mode %q: local tool over the ceiling = %+v, want allowed=observed=%v", c.mode, d, c.observes)
		}
		d, err = e.gate.Decide(t.Context(), gate.DecideParams{Tool: "mcp_ops_diag", Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed || d.ObservedOnly || d.Reason != gate.ReasonTrustZone {
			t.Errorf("mode %q: remote tool over the ceiling = %+v, want denied", c.mode, d)
		}
	}
}

// TestEnforcementLoaded: the mode comes with the overrides in their one
// query: unset enforces, the stored value is taken as it is, a change
// counts from the next load, and a failed read decides nothing.
func TestEnforcementLoaded(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	var cs *countingStore
	e := newEnv(t, envParams{wrap: func(st store.Store) gate.Store {
		cs = &countingStore{Store: st}
		return cs
	}})
	load := func() gate.Overrides {
		t.Helper()
		ov, err := e.gate.Availability().Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return ov
	}
	if m := load().Enforcement(); m != gate.Enforce {
		t.Errorf("without the setting: %q, want enforce", m)
	}
	for _, c := range []struct {
		value    string
		observes bool
	}{{"observe", true}, {"OBSERVE", false}, {"observe ", false}, {"enforce", false}, {"", false}, {"observe", true}} {
		e.setEnforcement(gate.Enforcement(c.value))
		if m := load().Enforcement(); string(m) != c.value || m.Observes() != c.observes {
			t.Errorf("setting %q: loaded %q, observes %v; want it as stored, observes %v", c.value, m, m.Observes(), c.observes)
		}
	}
	if n := cs.settingReads.Load(); n != 0 || cs.bothReads.Load() != 7 {
		t.Errorf("7 loads made %d policy queries and %d setting reads, want 7 and 0", cs.bothReads.Load(), n)
	}
	_ = e.st.Close()
	if _, err := e.gate.Availability().Load(ctx); err == nil {
		t.Error("a load from a closed store succeeded")
	}
}

// TestZoneClassMatrix checks every trust zone against every data class
// with the ceilings written out from SPEC §2, not derived from the code.
func TestZoneClassMatrix(t *testing.T) {
	t.Parallel()
	classes := []tool.DataClass{tool.PublicContent, tool.EditorContent, tool.SourceCode, tool.InternalConfiguration, tool.SystemDiagnostics, tool.SecretAdjacent}
	var builtins []tool.Tool
	for _, c := range classes {
		builtins = append(builtins, newTool("c_"+c.String(), func(s *tool.Spec) { s.DataClass = c }))
	}
	e := newEnv(t, envParams{builtins: builtins})
	const T, F = true, false
	for _, row := range []struct {
		zone    tool.TrustZone
		asZone  tool.TrustZone
		ceiling tool.DataClass
		permits [6]bool // publicContent … secretAdjacent
	}{
		{tool.ZoneLocal, tool.ZoneLocal, tool.SecretAdjacent, [6]bool{T, T, T, T, T, T}},
		{tool.ZonePrivateHosted, tool.ZonePrivateHosted, tool.SystemDiagnostics, [6]bool{T, T, T, T, T, F}},
		{tool.ZoneExternalEU, tool.ZoneExternalEU, tool.InternalConfiguration, [6]bool{T, T, T, T, F, F}},
		{tool.ZoneExternalGlobal, tool.ZoneExternalGlobal, tool.EditorContent, [6]bool{T, T, F, F, F, F}},
		// Empty and unknown zones are the least trusted.
		{"", tool.ZoneExternalGlobal, tool.EditorContent, [6]bool{T, T, F, F, F, F}},
		{"Local", tool.ZoneExternalGlobal, tool.EditorContent, [6]bool{T, T, F, F, F, F}},
	} {
		list, err := e.gate.Explain(t.Context(), gate.ExplainParams{Config: gate.Config{TrustZone: row.zone}})
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]gate.Decision{}
		for _, d := range list {
			byName[d.Tool] = d
		}
		for i, c := range classes {
			d := byName["c_"+c.String()]
			want := gate.Decision{Tool: d.Tool, Allowed: row.permits[i], DataClass: c, Zone: row.asZone, Ceiling: row.ceiling}
			if !want.Allowed {
				want.Reason = gate.ReasonTrustZone
			}
			if d != want {
				t.Errorf("zone %q, class %v: %+v, want %+v", row.zone, c, d, want)
			}
		}
	}
}

func TestUnknownNameAndGroup(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	// An MCP tool whose server declared no class takes its group's, which
	// for an unknown group is secretAdjacent.
	mcp := newTool("mcp_docs_search", func(s *tool.Spec) {
		s.Group, s.Remote, s.Effect = "mcp_docs", true, tool.NonIdempotentWrite
		s.DataClass = tool.GroupDataClass(s.Group)
	})
	e := newEnv(t, envParams{builtins: []tool.Tool{mcp}})
	e.setEnforcement(gate.Observe) // remote output is never let past the ceiling
	d, err := e.gate.Decide(ctx, gate.DecideParams{Tool: "no_such_tool", Actor: admin(), Config: gate.Config{TrustZone: tool.ZoneLocal}})
	if err != nil {
		t.Fatal(err)
	}
	if d.Allowed || d.Reason != gate.ReasonNotRegistered || d.DataClass != tool.SecretAdjacent {
		t.Errorf("unknown name = %+v, want not_registered and secretAdjacent", d)
	}
	for zone, allowed := range map[tool.TrustZone]bool{
		tool.ZoneLocal: true, tool.ZonePrivateHosted: false, tool.ZoneExternalEU: false, tool.ZoneExternalGlobal: false,
	} {
		d, err := e.gate.Decide(ctx, gate.DecideParams{Tool: "mcp_docs_search", Config: gate.Config{TrustZone: zone}})
		if err != nil {
			t.Fatal(err)
		}
		if d.DataClass != tool.SecretAdjacent || d.Allowed != allowed || d.ObservedOnly {
			t.Errorf("unknown group in zone %s = %+v, want secretAdjacent, allowed=%v", zone, d, allowed)
		}
	}
}

func TestNoConfiguration(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envParams{builtins: []tool.Tool{
		newTool("editorial"),
		newTool("structure", func(s *tool.Spec) { s.Group, s.DataClass = tool.GroupStructure, tool.InternalConfiguration }),
	}})
	list, err := e.gate.Explain(t.Context(), gate.ExplainParams{Actor: editor()})
	if err != nil {
		t.Fatal(err)
	}
	// No configuration: every group, but the strictest zone.
	if len(list) != 2 || !list[0].Allowed || list[1].Reason != gate.ReasonTrustZone || list[1].Zone != tool.ZoneExternalGlobal {
		t.Errorf("without a configuration: %+v", list)
	}
}

func TestDecideStoreError(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envParams{builtins: []tool.Tool{newTool("a")}})
	_ = e.st.Close()
	d, err := e.gate.Decide(t.Context(), gate.DecideParams{Tool: "a", Config: gate.Config{TrustZone: tool.ZoneLocal}})
	if err == nil || d.Allowed {
		t.Errorf("Decide on a closed store = %+v, %v; want denied with an error", d, err)
	}
	if _, err := e.gate.Explain(t.Context(), gate.ExplainParams{}); err == nil {
		t.Error("Explain on a closed store succeeded")
	}
	if _, err := e.gate.Offer(t.Context(), gate.OfferParams{}); err == nil {
		t.Error("Offer on a closed store succeeded")
	}
}

func TestNewRefuses(t *testing.T) {
	t.Parallel()
	reg, err := tool.NewRegistry(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gate.New(gate.Params{Registry: reg}); err == nil {
		t.Error("New without a store succeeded")
	}
	e := newEnv(t, envParams{})
	if _, err := gate.New(gate.Params{Registry: reg, Store: e.st, Timeout: -1}); err == nil {
		t.Error("New with a negative timeout succeeded")
	}
	// A builtin whose schema does not compile, or reaches outside itself,
	// fails at start.
	for schema, want := range map[string]string{
		`{"type":"object","properties":{"a":{"type":"nope"}}}`:                  "does not compile",
		`{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}`:    "only references within the schema are allowed",
		`{"type":"object","properties":{"a":{"$ref":"https://example.com/s"}}}`: "only references within the schema are allowed",
	} {
		reg, err := tool.NewRegistry([]tool.Tool{newTool("broken", func(s *tool.Spec) { s.InputSchema = []byte(schema) })})
		if err != nil {
			t.Fatal(err)
		}
		_, err = gate.New(gate.Params{Registry: reg, Store: e.st})
		if err == nil || !strings.Contains(err.Error(), "builtin tool broken") || !strings.Contains(err.Error(), want) {
			t.Errorf("schema %s: New = %v, want an error containing %q", schema, err, want)
		}
	}
}

func TestDecideLoadsOverridesOnce(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	var builtins []tool.Tool
	for i := range 50 {
		builtins = append(builtins, newTool(fmt.Sprintf("t%02d", i)))
	}
	var cs *countingStore
	e := newEnv(t, envParams{builtins: builtins, wrap: func(st store.Store) gate.Store {
		cs = &countingStore{Store: st}
		return cs
	}})
	if _, err := e.gate.Explain(ctx, gate.ExplainParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.gate.Offer(ctx, gate.OfferParams{}); err != nil {
		t.Fatal(err)
	}
	if cs.bothReads.Load() != 2 || cs.toolReads.Load()+cs.groupReads.Load() != 0 {
		t.Errorf("Explain and Offer over 50 tools read the overrides %d times (and %d+%d singly), want one query per call",
			cs.bothReads.Load(), cs.toolReads.Load(), cs.groupReads.Load())
	}
}

func TestConfigurationInterface(t *testing.T) {
	t.Parallel()
	// A Configuration from the full model reduces itself to a Config.
	var c gate.Configuration = fullConfig{zone: tool.ZoneLocal, fallback: tool.ZoneExternalEU}
	e := newEnv(t, envParams{builtins: []tool.Tool{newTool("diag", func(s *tool.Spec) { s.DataClass = tool.SystemDiagnostics })}})
	d, err := e.gate.Decide(t.Context(), gate.DecideParams{Tool: "diag", Config: c})
	if err != nil {
		t.Fatal(err)
	}
	if d.Zone != tool.ZoneExternalEU || d.Allowed {
		t.Errorf("with a local provider falling back to externalEu: %+v, want the fallback's zone", d)
	}
}

// fullConfig stands for the configuration model to come: a provider with
// a fallback, reduced to the least trusted zone.
type fullConfig struct{ zone, fallback tool.TrustZone }

func (f fullConfig) GateConfig() gate.Config {
	return gate.Config{Name: "full", TrustZone: tool.LeastTrusted(f.zone, f.fallback)}
}
