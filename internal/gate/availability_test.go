package gate_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
)

// TestAvailabilityMatrix: group override on/off/none × tool override
// on/off/none × default on/off, through the real store and the gate.
func TestAvailabilityMatrix(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	type state int
	const (
		none state = iota
		on
		off
	)
	type combo struct {
		group, override state
		byDefault       bool
	}
	var combos []combo
	var builtins []tool.Tool
	name := func(c combo) string { return fmt.Sprintf("t_g%d_o%d_d%v", c.group, c.override, c.byDefault) }
	group := func(c combo) string { return fmt.Sprintf("grp_%d", c.group) }
	for _, g := range []state{none, on, off} {
		for _, o := range []state{none, on, off} {
			for _, d := range []bool{true, false} {
				c := combo{g, o, d}
				combos = append(combos, c)
				builtins = append(builtins, newTool(name(c), func(s *tool.Spec) {
					s.Group, s.EnabledByDefault = group(c), d
				}))
			}
		}
	}
	e := newEnv(t, envParams{builtins: builtins})
	e.setGroup("grp_1", true)
	e.setGroup("grp_2", false)
	for _, c := range combos {
		if c.override != none {
			e.setTool(name(c), c.override == on)
		}
	}
	ov, err := e.gate.Availability().Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	list, err := e.gate.Explain(ctx, gate.ExplainParams{Config: gate.Config{TrustZone: tool.ZoneLocal}})
	if err != nil {
		t.Fatal(err)
	}
	decisions := map[string]gate.Decision{}
	for _, d := range list {
		decisions[d.Tool] = d
	}
	for _, c := range combos {
		// Written out from SPEC §2: a disabled group wins; then the tool's
		// own override; then its default.
		want := c.byDefault
		switch {
		case c.group == off:
			want = false
		case c.override == on:
			want = true
		case c.override == off:
			want = false
		}
		spec := builtins[0].Spec()
		for _, b := range builtins {
			if b.Spec().Name == name(c) {
				spec = b.Spec()
			}
		}
		if got := ov.Enabled(spec); got != want {
			t.Errorf("%+v: Overrides.Enabled = %v, want %v", c, got, want)
		}
		d := decisions[name(c)]
		if d.Allowed != want || (!want && d.Reason != gate.ReasonToolDisabled) {
			t.Errorf("%+v: gate = %+v, want allowed=%v", c, d, want)
		}
	}
	if !ov.GroupEnabled("never_mentioned") || ov.GroupEnabled("grp_2") || !ov.GroupEnabled("grp_1") {
		t.Error("GroupEnabled is wrong")
	}
	// The zero Overrides is "no overrides at all".
	var zero gate.Overrides
	if !zero.Enabled(builtins[0].Spec()) || zero.Enabled(builtins[1].Spec()) {
		t.Error("zero Overrides does not follow the defaults")
	}
}

func TestAvailabilityToggles(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	e := newEnv(t, envParams{builtins: []tool.Tool{
		newTool("get_page"),
		newTool("ext_tool", func(s *tool.Spec) { s.Group = "my_extension" }),
	}})
	a := e.gate.Availability()

	o, err := a.SetTool(ctx, gate.SetToolParams{Name: "get_page", Enabled: false, By: "alice"})
	if err != nil || o.UpdatedBy != "alice" || o.Enabled {
		t.Fatalf("SetTool = %+v, %v", o, err)
	}
	if _, err := a.SetTool(ctx, gate.SetToolParams{Name: "get_pgae", Enabled: true, By: "alice"}); !errors.Is(err, gate.ErrUnknownTool) {
		t.Errorf("SetTool of an unknown name: %v, want ErrUnknownTool", err)
	}
	if _, err := a.SetTool(ctx, gate.SetToolParams{Name: "get_page", Enabled: true}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("SetTool without an actor: %v, want ErrInvalid", err)
	}
	for _, g := range []string{tool.GroupAccounts, tool.GroupRAG, "mcp_docs", "my_extension"} {
		if _, err := a.SetGroup(ctx, gate.SetGroupParams{Group: g, Enabled: true, By: "bob"}); err != nil {
			t.Errorf("SetGroup(%q): %v", g, err)
		}
	}
	for _, g := range []string{"contnet", "mcp_", "mcp_Docs", "Content", ""} {
		if _, err := a.SetGroup(ctx, gate.SetGroupParams{Group: g, Enabled: false, By: "bob"}); !errors.Is(err, gate.ErrUnknownGroup) {
			t.Errorf("SetGroup(%q): %v, want ErrUnknownGroup", g, err)
		}
	}

	decide := func() gate.Decision {
		d, err := e.gate.Decide(ctx, gate.DecideParams{Tool: "get_page", Config: gate.Config{TrustZone: tool.ZoneLocal}})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if d := decide(); d.Reason != gate.ReasonToolDisabled {
		t.Errorf("after disabling: %+v", d)
	}
	// A tool override cannot re-enable a tool in a disabled group.
	if _, err := a.SetGroup(ctx, gate.SetGroupParams{Group: tool.GroupContent, Enabled: false, By: "bob"}); err != nil {
		t.Fatal(err)
	}
	e.setTool("get_page", true)
	if d := decide(); d.Reason != gate.ReasonToolDisabled {
		t.Errorf("tool on, group off: %+v, want tool_disabled", d)
	}
	if err := a.ClearGroup(ctx, tool.GroupContent); err != nil {
		t.Fatal(err)
	}
	if d := decide(); !d.Allowed {
		t.Errorf("group cleared, tool on: %+v", d)
	}
	if err := a.ClearTool(ctx, "get_page"); err != nil {
		t.Fatal(err)
	}
	if err := a.ClearTool(ctx, "get_page"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("clearing twice: %v, want ErrNotFound", err)
	}
	// A vanished tool's override can still be cleared.
	if _, err := e.st.SetToolOverride(ctx, store.SetToolOverrideParams{Name: "mcp_old_tool", UpdatedBy: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := a.ClearTool(ctx, "mcp_old_tool"); err != nil {
		t.Errorf("ClearTool of a vanished tool: %v", err)
	}
	// A tool override may share its name with a group; the one read of
	// both sets keeps them apart.
	if _, err := e.st.SetToolOverride(ctx, store.SetToolOverrideParams{Name: tool.GroupContent, Enabled: false, UpdatedBy: "x"}); err != nil {
		t.Fatal(err)
	}
	if d := decide(); !d.Allowed {
		t.Errorf("a tool override named like the group disabled the group: %+v", d)
	}
	// Another process's toggle counts from the next decision on: nothing
	// is cached between batches.
	other, err := store.Open(ctx, "sqlite:"+e.path, store.OpenParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.SetToolGroupOverride(ctx, store.SetToolGroupOverrideParams{Group: tool.GroupContent, Enabled: false, UpdatedBy: "carol"}); err != nil {
		t.Fatal(err)
	}
	if d := decide(); d.Reason != gate.ReasonToolDisabled {
		t.Errorf("after another process disabled the group: %+v", d)
	}
	offered, err := e.gate.Offer(ctx, gate.OfferParams{Config: gate.Config{TrustZone: tool.ZoneLocal}})
	if err != nil {
		t.Fatal(err)
	}
	if offered.Has("get_page") {
		t.Errorf("offer after another process disabled the group: %v", offered.Names())
	}
}
