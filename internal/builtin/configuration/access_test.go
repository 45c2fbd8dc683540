package configuration_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/builtin"
	"github.com/t3agent/t3agent/internal/builtin/configuration"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/tool"
)

var toolNames = []string{"get_typoscript", "get_tsconfig", "check_typoscript"}

func TestSpecs(t *testing.T) {
	t.Parallel()
	f := demoFixture(t)
	tools := configuration.Tools(f.site, readpolicy.New(f.site.TCA))
	var names []string
	for _, tl := range tools {
		s := tl.Spec()
		names = append(names, s.Name)
		if err := s.Validate(); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
		if s.Group != tool.GroupConfiguration || s.Effect != tool.ReadOnly || s.DataClass != tool.InternalConfiguration ||
			!s.AdminOnly || !s.EnabledByDefault || s.RequiresApproval || s.Remote {
			t.Errorf("%s: spec %+v", s.Name, s)
		}
		var schema struct {
			Required             []string `json:"required"`
			AdditionalProperties *bool    `json:"additionalProperties"`
			Properties           map[string]struct {
				Type    string   `json:"type"`
				Minimum *float64 `json:"minimum"`
				Enum    []string `json:"enum"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(s.InputSchema, &schema); err != nil {
			t.Fatalf("%s schema: %v", s.Name, err)
		}
		page := schema.Properties["pageUid"]
		if !slices.Equal(schema.Required, []string{"pageUid"}) || schema.AdditionalProperties == nil ||
			*schema.AdditionalProperties || page.Type != "integer" || page.Minimum == nil || *page.Minimum != 0 {
			t.Errorf("%s schema: %s", s.Name, s.InputSchema)
		}
		if s.Name == "get_typoscript" && !slices.Equal(schema.Properties["type"].Enum, []string{"setup", "constants"}) {
			t.Errorf("get_typoscript type enum: %v", schema.Properties["type"].Enum)
		}
	}
	if !slices.Equal(names, toolNames) {
		t.Errorf("tools %v, want %v", names, toolNames)
	}
	// The aggregator offers the group.
	var all []string
	for _, tl := range builtin.Tools(f.site, readpolicy.New(f.site.TCA)) {
		all = append(all, tl.Spec().Name)
	}
	for _, n := range toolNames {
		if !slices.Contains(all, n) {
			t.Errorf("builtin.Tools lacks %s", n)
		}
	}
}

// TestGateRefusesNonAdmins: editors, interns, a disabled user and no user
// never reach the tools; the gate says requires_admin.
func TestGateRefusesNonAdmins(t *testing.T) {
	t.Parallel()
	f := demoFixture(t)
	ctx := context.Background()
	for _, name := range toolNames {
		if r := f.call("admin", name, args("pageUid", 1)); r.IsError {
			t.Errorf("%s as admin: %s", name, r.Content)
		}
		for _, user := range []string{"editor", "intern", "former", ""} {
			want := `Error: tool "` + name + `" is not available.`
			if got := f.refused(user, name, args("pageUid", 1)); got != want {
				t.Errorf("%s as %q: %q, want %q", name, user, got, want)
			}
			d, err := f.gate.Decide(ctx, gate.DecideParams{Tool: name, Actor: f.users[user], Config: euConfig})
			if err != nil {
				t.Fatal(err)
			}
			if d.Allowed || d.Reason != gate.ReasonRequiresAdmin {
				t.Errorf("%s as %q: decision %+v, want requires_admin", name, user, d)
			}
		}
		// internalConfiguration is above the externalGlobal ceiling.
		d, err := f.gate.Decide(ctx, gate.DecideParams{Tool: name, Actor: f.users["admin"],
			Config: gate.Config{Name: "global", TrustZone: tool.ZoneExternalGlobal}})
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed || d.Reason != gate.ReasonTrustZone || d.DataClass != tool.InternalConfiguration {
			t.Errorf("%s for externalGlobal: %+v", name, d)
		}
	}
}

// relaxed is a configuration tool registered without its admin-only
// flag, the registration mistake the tools' own check defends against.
type relaxed struct{ tool.Tool }

func (r relaxed) Spec() tool.Spec {
	s := r.Tool.Spec()
	s.AdminOnly = false
	return s
}

// TestOwnAdminCheck runs the tools through a real gate that lets
// non-admins pass (the flag is dropped), so the tools' own refusal is what
// answers.
func TestOwnAdminCheck(t *testing.T) {
	t.Parallel()
	rf := demoFixtureWith(t, func(tools []tool.Tool) []tool.Tool {
		out := make([]tool.Tool, len(tools))
		for i, tl := range tools {
			out[i] = relaxed{tl}
		}
		return out
	})
	for _, name := range toolNames {
		for user, want := range map[string]string{
			"editor": readpolicy.DeniedPage,
			"intern": readpolicy.DeniedPage,
			"former": readpolicy.DeniedUser,
			"":       readpolicy.DeniedUser,
		} {
			if got := rf.refused(user, name, args("pageUid", 1)); got != want {
				t.Errorf("%s as %q: %q, want %q", name, user, got, want)
			}
		}
		if r := rf.call("admin", name, args("pageUid", 1)); r.IsError {
			t.Errorf("%s as admin: %s", name, r.Content)
		}
		// The gate really let the editor through: it is the tool that
		// answered, with its own sentence rather than the gate's.
		d, err := rf.gate.Decide(context.Background(), gate.DecideParams{Tool: name, Actor: rf.users["editor"],
			Config: euConfig})
		if err != nil || !d.Allowed {
			t.Errorf("%s: the relaxed gate refused the editor: %+v, %v", name, d, err)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func TestPageDenials(t *testing.T) {
	t.Parallel()
	f := demoFixture(t)
	// 11 is deleted, 99999 does not exist, 0 is the tree root and no page.
	for _, uid := range []int{11, 99999, 0} {
		for _, name := range toolNames {
			if got := f.refused("admin", name, args("pageUid", uid)); got != readpolicy.DeniedPage {
				t.Errorf("%s page %d: %q", name, uid, got)
			}
		}
	}
	// Arguments the schema refuses never reach the tool.
	for _, a := range []map[string]any{args(), args("pageUid", -1), args("pageUid", 1, "type", "config"),
		args("pageUid", 1, "path", "page 10"), args("pageUid", 1, "extra", true)} {
		if got := f.refused("admin", "get_typoscript", a); !contains(got, "invalid arguments") {
			t.Errorf("get_typoscript %v: %q", a, got)
		}
	}
	if got := f.refused("admin", "get_typoscript", args("pageUid", 1, "path", "page.nothing")); !contains(got, `no object "page.nothing"`) {
		t.Errorf("missing path: %q", got)
	}
	// Without sys_template 1 page 1 has no TypoScript at all (its site
	// has no sets); Page TSconfig does not depend on templates.
	f.exec("UPDATE sys_template SET hidden = 1 WHERE uid = 1")
	if got := f.refused("admin", "get_typoscript", args("pageUid", 1)); !contains(got, "Page 1 has no TypoScript") {
		t.Errorf("no template: %q", got)
	}
	if got := f.refused("admin", "check_typoscript", args("pageUid", 1)); !contains(got, "Page 1 has no TypoScript") {
		t.Errorf("no template, check: %q", got)
	}
	f.ok("get_tsconfig", args("pageUid", 1))
}
