package web

import (
	"context"
	"testing"

	"github.com/t3agent/t3agent/internal/chat/chattest"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
)

// TestToolRoutes: the gate's decision for the caller, as the CLI's
// tools list/explain compute it, with the configuration or zone asked
// for; the readout records no governance events.
func TestToolRoutes(t *testing.T) {
	t.Parallel()
	e := setup(t, envOptions{})
	editor, admin := e.login("editor"), e.login("admin")
	reader := e.token("reader", "editor", store.ScopeAgentRead)
	ctx := context.Background()
	before, err := e.f.Store.GovernanceEvents(ctx, store.ListGovernanceEventsParams{})
	if err != nil {
		t.Fatal(err)
	}
	// A tool whose class an external global zone may not receive.
	secretive := ""
	for _, en := range e.f.Gate.Registry().List(ctx) {
		if en.Spec.DataClass > tool.EditorContent && en.Spec.EnabledByDefault && !en.Spec.AdminOnly {
			secretive = en.Spec.Name
			break
		}
	}
	if secretive == "" {
		t.Fatal("no enabled tool above editor content is registered")
	}
	check(t, []call{
		{"list", editor, "GET", "/api/v1/tools", nil, nil, 200,
			[]string{`"name":"` + chattest.WriteTool + `"`, `"effect":"non_idempotent_write"`, `"remote":true`, `"zone":"local"`, `"name":"` + chattest.InputTool + `","description":"Asks the editor which variant to use.","group":"content"`, `"requiresInput":true`}, []string{`"inputSchema"`}},
		{"list for a token", reader, "GET", "/api/v1/tools", nil, nil, 200, []string{chattest.WriteTool}, nil},
		{"explain", editor, "GET", "/api/v1/tools/" + chattest.WriteTool + "/explain", nil, nil, 200,
			[]string{`"allowed":true`, `"inputSchema":{`, `"dataClass":"editorContent"`}, nil},
		{"explain at home", editor, "GET", "/api/v1/tools/" + secretive + "/explain", nil, nil, 200, []string{`"allowed":true`}, nil},
		{"explain for an external zone", editor, "GET", "/api/v1/tools/" + secretive + "/explain?zone=externalGlobal", nil, nil, 200,
			[]string{`"allowed":false`, `"reason":"` + string(gate.ReasonTrustZone) + `"`, `"zone":"externalGlobal"`}, nil},
		{"explain outside the groups", editor, "GET", "/api/v1/tools/" + chattest.InputTool + "/explain?groups=structure", nil, nil, 200,
			[]string{`"allowed":false`, `"reason":"` + string(gate.ReasonConfigurationGroup) + `"`}, nil},
		{"explain for a configuration", admin, "GET", "/api/v1/tools/" + chattest.WriteTool + "/explain?configuration=" + chattest.Configuration, nil, nil, 200,
			[]string{`"allowed":true`, `"zone":"local"`}, nil},
		{"unknown tool", editor, "GET", "/api/v1/tools/no_such_tool/explain", nil, nil, 404, []string{errBody("toolNotFound")}, nil},
		{"unknown configuration", editor, "GET", "/api/v1/tools?configuration=nope", nil, nil, 404, []string{errBody("configurationNotFound")}, nil},
		{"configuration and zone", editor, "GET", "/api/v1/tools?configuration=" + chattest.Configuration + "&zone=local", nil, nil, 400, []string{"leave out zone and groups"}, nil},
		{"bad zone", editor, "GET", "/api/v1/tools?zone=moon", nil, nil, 400, []string{"zone must be local"}, nil},
	})
	after, err := e.f.Store.GovernanceEvents(ctx, store.ListGovernanceEventsParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Errorf("the readout recorded %d governance events", len(after)-len(before))
	}
}

// TestAdminOnlyTool: an admin-only tool is denied to an editor and
// offered to an admin.
func TestAdminOnlyTool(t *testing.T) {
	t.Parallel()
	e := setup(t, envOptions{})
	editor, admin := e.login("editor"), e.login("admin")
	var name string
	for _, en := range e.f.Gate.Registry().List(context.Background()) {
		if en.Spec.AdminOnly {
			name = en.Spec.Name
			break
		}
	}
	if name == "" {
		t.Skip("no admin-only tool is registered")
	}
	check(t, []call{
		{"editor", editor, "GET", "/api/v1/tools/" + name + "/explain", nil, nil, 200, []string{`"reason":"requires_admin"`, `"adminOnly":true`}, nil},
		{"admin", admin, "GET", "/api/v1/tools/" + name + "/explain", nil, nil, 200, []string{`"allowed":true`}, nil},
	})
}
