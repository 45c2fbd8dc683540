package gate_test

import (
	"slices"
	"testing"

	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/tool"
)

func offerEnv(t *testing.T) *env {
	e := newEnv(t, envParams{builtins: []tool.Tool{
		newTool("b_content"),
		newTool("a_rag", func(s *tool.Spec) { s.Group, s.DataClass = tool.GroupRAG, tool.PublicContent }),
		newTool("c_admin", func(s *tool.Spec) { s.AdminOnly = true }),
		newTool("d_off", func(s *tool.Spec) { s.EnabledByDefault = false }),
		newTool("e_config", func(s *tool.Spec) { s.Group, s.DataClass = tool.GroupConfiguration, tool.InternalConfiguration }),
	}})
	return e
}

func TestOffer(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	e := offerEnv(t)
	cfg := gate.Config{Name: "chat", TrustZone: tool.ZoneExternalEU}

	// nil: every enabled tool the gate allows. Disabled tools are not
	// candidates, so they leave no event; the admin-only one is denied.
	o, err := e.gate.Offer(ctx, gate.OfferParams{Actor: editor(), Config: cfg, RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := o.Names(); !slices.Equal(got, []string{"a_rag", "b_content", "e_config"}) {
		t.Errorf("offered %q", got)
	}
	if o.Len() != 3 || !o.Has("a_rag") || o.Has("c_admin") || o.Has("d_off") {
		t.Errorf("Len/Has disagree with Names %q", o.Names())
	}
	specs := o.Specs()
	if len(specs) != 3 || specs[0].Name != "a_rag" || specs[0].Description == "" {
		t.Errorf("Specs = %+v", specs)
	}
	evs := e.events()
	if len(evs) != 1 || evs[0].Tool != "c_admin" || evs[0].Reason != string(gate.ReasonRequiresAdmin) || evs[0].RunID != "r1" {
		t.Errorf("events = %+v, want the one admin-only denial", evs)
	}
	if ds := o.Decisions(); len(ds) != 4 {
		t.Errorf("Decisions = %+v, want the 4 enabled tools", ds)
	}

	// A requested list is a request, never a grant: asking for a disabled,
	// admin-only or unknown tool gets it denied and recorded.
	o, err = e.gate.Offer(ctx, gate.OfferParams{
		Requested: []string{"d_off", "c_admin", "b_content", "ghost", "b_content"},
		Actor:     editor(), Config: cfg, RunID: "r2",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := o.Names(); !slices.Equal(got, []string{"b_content"}) {
		t.Errorf("offered %q, want only b_content", got)
	}
	reasons := map[string]string{}
	for _, ev := range e.events() {
		if ev.RunID == "r2" {
			reasons[ev.Tool] = ev.Reason
		}
	}
	want := map[string]string{"d_off": "tool_disabled", "c_admin": "requires_admin", "ghost": "not_registered"}
	if len(reasons) != len(want) {
		t.Errorf("events for r2 = %v, want %v", reasons, want)
	}
	for k, v := range want {
		if reasons[k] != v {
			t.Errorf("event for %s = %q, want %q", k, reasons[k], v)
		}
	}
	if ds := o.Decisions(); len(ds) != 4 { // duplicates decided once
		t.Errorf("Decisions = %+v, want 4 (deduplicated)", ds)
	}

	// The configuration's groups narrow the offer.
	o, err = e.gate.Offer(ctx, gate.OfferParams{Actor: admin(), Config: gate.Config{AllowedGroups: []string{tool.GroupRAG}, TrustZone: tool.ZoneLocal}})
	if err != nil {
		t.Fatal(err)
	}
	if got := o.Names(); !slices.Equal(got, []string{"a_rag"}) {
		t.Errorf("allowed groups [rag]: offered %q", got)
	}
}

// TestOfferEmpty: an empty offered set is a legitimate answer, whether
// nothing was requested or nothing passed the gate.
func TestOfferEmpty(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	e := offerEnv(t)
	o, err := e.gate.Offer(ctx, gate.OfferParams{Requested: []string{}, Actor: admin(), Config: gate.Config{TrustZone: tool.ZoneLocal}})
	if err != nil || o.Len() != 0 || len(o.Names()) != 0 || len(o.Specs()) != 0 || len(o.Decisions()) != 0 {
		t.Errorf("empty request: %+v, %v; want nothing offered and no error", o, err)
	}
	if n := len(e.events()); n != 0 {
		t.Errorf("an empty request recorded %d events", n)
	}
	// Only configuration tools allowed, and the zone refuses them.
	o, err = e.gate.Offer(ctx, gate.OfferParams{Actor: admin(), Config: gate.Config{AllowedGroups: []string{tool.GroupConfiguration}, TrustZone: tool.ZoneExternalGlobal}})
	if err != nil || o.Len() != 0 {
		t.Errorf("nothing passes: %v offered, %v; want none and no error", o.Names(), err)
	}
}
