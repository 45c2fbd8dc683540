package web

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/chat/chattest"
	"github.com/t3agent/t3agent/internal/store"
)

// adminEnv is the API with the MCP client and the configuration service.
func adminEnv(t *testing.T) *apiEnv {
	t.Helper()
	f := chattest.New(t, chattest.Options{})
	return serve(t, f, func(a *API) { a.MCP, a.AgentConfig = f.MCP, f.Tasks })
}

// TestAdminRoutesAuthorization: every admin route refuses an editor, a
// token without the admin scope, and a token with the admin scope whose
// user is no admin; it admits an admin's session and an admin's token
// with the admin scope.
func TestAdminRoutesAuthorization(t *testing.T) {
	t.Parallel()
	e := adminEnv(t)
	editor := e.login("editor")
	reader := e.token("reader", "admin", store.ScopeAgentRead, store.ScopeAgentRun, store.ScopeAgentApprove, store.ScopeAgentCancel)
	editorAdminScope := e.token("editor-admin", "editor", store.ScopeAdmin)
	admin := e.login("admin")
	adminToken := e.token("root", "admin", store.ScopeAdmin)
	routes := []struct{ method, path string }{
		{"POST", "/api/v1/tools/" + chattest.ReadTool + "/call"},
		{"POST", "/api/v1/tools/" + chattest.ReadTool + "/enable"},
		{"POST", "/api/v1/tools/" + chattest.ReadTool + "/disable"},
		{"POST", "/api/v1/tools/groups/content/enable"},
		{"POST", "/api/v1/tools/groups/content/disable"},
		{"GET", "/api/v1/mcp/servers"},
		{"POST", "/api/v1/mcp/servers"},
		{"GET", "/api/v1/mcp/servers/notes"},
		{"PATCH", "/api/v1/mcp/servers/notes"},
		{"DELETE", "/api/v1/mcp/servers/notes"},
		{"POST", "/api/v1/mcp/servers/notes/import"},
		{"POST", "/api/v1/mcp/servers/notes/ping"},
		{"POST", "/api/v1/mcp/servers/notes/enable"},
		{"POST", "/api/v1/mcp/servers/notes/disable"},
		{"PUT", "/api/v1/mcp/tools/" + chattest.ReadTool + "/effect"},
		{"GET", "/api/v1/configurations"},
		{"GET", "/api/v1/configurations/" + chattest.Configuration},
		{"POST", "/api/v1/configurations/apply"},
	}
	for _, rt := range routes {
		var body any
		if rt.method != "GET" && rt.method != "DELETE" {
			body = map[string]any{}
		}
		check(t, []call{
			{"editor", editor, rt.method, rt.path, body, nil, 403, []string{errBody("adminRequired")}, nil},
			{"token without admin", reader, rt.method, rt.path, body, nil, 403, []string{errBody("insufficientScope")}, nil},
			{"admin scope of an editor", editorAdminScope, rt.method, rt.path, body, nil, 403, []string{errBody("adminRequired")}, nil},
		})
	}
	// Admitted: reads answer 200 for the admin's session and token.
	check(t, []call{
		{"admin lists servers", admin, "GET", "/api/v1/mcp/servers", nil, nil, 200, []string{`"identifier":"notes"`, `"orphanedTools":0`}, []string{"credential\":"}},
		{"admin token lists servers", adminToken, "GET", "/api/v1/mcp/servers", nil, nil, 200, []string{`"identifier":"notes"`}, nil},
		{"admin token reads the configuration", adminToken, "GET", "/api/v1/configurations", nil, nil, 200, []string{`"identifier":"` + chattest.Configuration + `"`, `"apiKey":"env:LLMTEST_KEY"`}, nil},
	})
}

// TestToolAdminRoutes: a tool switched off is denied by the gate and
// back on allowed; a group likewise; the playground call runs a tool
// through the gate as the admin, refuses an unconfirmed write, and
// answers a denied tool with the gate's neutral result.
func TestToolAdminRoutes(t *testing.T) {
	t.Parallel()
	e := adminEnv(t)
	admin := e.login("admin")
	callPath := "/api/v1/tools/" + chattest.ReadTool + "/call"
	check(t, []call{
		{"call", admin, "POST", callPath, map[string]any{"arguments": map[string]any{"title": "n1"}}, nil, 200,
			[]string{`"allowed":true`, `"isError":false`, "pumps are blue"}, nil},
		{"bad arguments", admin, "POST", callPath, map[string]any{"arguments": map[string]any{"nope": 1}}, nil, 200, []string{`"isError":true`}, nil},
		{"unconfirmed write", admin, "POST", "/api/v1/tools/" + chattest.WriteTool + "/call", map[string]any{"arguments": map[string]any{}}, nil, 400, []string{"confirmWrite"}, nil},
		{"unknown tool", admin, "POST", "/api/v1/tools/no_such/call", nil, nil, 404, []string{errBody("toolNotFound")}, nil},
		{"disable", admin, "POST", "/api/v1/tools/" + chattest.ReadTool + "/disable", nil, nil, 200, []string{`"enabled":false`}, nil},
		{"denied call", admin, "POST", callPath, map[string]any{"arguments": map[string]any{"title": "n1"}}, nil, 200,
			[]string{`"reason":"tool_disabled"`, `is not available`}, nil},
		{"enable", admin, "POST", "/api/v1/tools/" + chattest.ReadTool + "/enable", nil, nil, 200, []string{`"enabled":true`}, nil},
		{"unknown tool toggle", admin, "POST", "/api/v1/tools/no_such/enable", nil, nil, 404, []string{errBody("toolNotFound")}, nil},
		{"group off", admin, "POST", "/api/v1/tools/groups/mcp_notes/disable", nil, nil, 200, []string{`"group":"mcp_notes"`, `"enabled":false`}, nil},
		{"group denied", admin, "GET", "/api/v1/tools/" + chattest.ReadTool + "/explain", nil, nil, 200, []string{`"reason":"tool_disabled"`}, nil},
		{"group on", admin, "POST", "/api/v1/tools/groups/mcp_notes/enable", nil, nil, 200, []string{`"enabled":true`}, nil},
		{"unknown group", admin, "POST", "/api/v1/tools/groups/No-Such/enable", nil, nil, 404, []string{errBody("toolGroupNotFound")}, nil},
	})
}

// TestMCPRoutes: add a server (its credential never shown back), preview
// its import (nothing written), import, ping, change, override a tool's
// effect, disable and remove it.
func TestMCPRoutes(t *testing.T) {
	t.Parallel()
	e := adminEnv(t)
	admin := e.login("admin")
	ctx := context.Background()
	notes, err := e.f.MCP.Server(ctx, chattest.MCPServer)
	if err != nil {
		t.Fatal(err)
	}
	add := map[string]any{"identifier": "notes2", "url": notes.URL, "dataClass": "editorContent", "effect": "read_only", "enabled": true,
		"auth": "header", "authHeader": "X-Notes-Key", "credential": "s3cret-value"}
	check(t, []call{
		{"add", admin, "POST", "/api/v1/mcp/servers", add, nil, 201, []string{`"identifier":"notes2"`, `"hasCredential":true`, `"enabled":true`}, []string{"s3cret-value"}},
		{"add twice", admin, "POST", "/api/v1/mcp/servers", add, nil, 409, []string{errBody("mcpServerExists")}, nil},
		{"bad identifier", admin, "POST", "/api/v1/mcp/servers", map[string]any{"identifier": "Bad-Id", "url": notes.URL}, nil, 400, []string{"does not match"}, nil},
		{"bad class", admin, "POST", "/api/v1/mcp/servers", map[string]any{"identifier": "x", "url": notes.URL, "dataClass": "nope"}, nil, 400, []string{"dataClass must be"}, nil},
		{"preview", admin, "POST", "/api/v1/mcp/servers/notes2/import", map[string]any{"preview": true}, nil, 200,
			[]string{`"preview":true`, `"added":["mcp_notes2_lookup_note","mcp_notes2_publish_note"]`}, nil},
	})
	if tools, err := e.f.MCP.Tools(ctx, "notes2"); err != nil || len(tools) != 0 {
		t.Fatalf("after the preview the catalogue holds %d tools (%v), want none", len(tools), err)
	}
	check(t, []call{
		{"import", admin, "POST", "/api/v1/mcp/servers/notes2/import", nil, nil, 200, []string{`"preview":false`, `"imported":2`}, nil},
		{"preview again", admin, "POST", "/api/v1/mcp/servers/notes2/import", map[string]any{"preview": true}, nil, 200, []string{`"added":null`, `"orphaned":null`}, nil},
		{"ping", admin, "POST", "/api/v1/mcp/servers/notes2/ping", nil, nil, 200, []string{`"server":"notes2"`, `"protocolVersion":"`}, nil},
		{"show", admin, "GET", "/api/v1/mcp/servers/notes2", nil, nil, 200, []string{`"name":"mcp_notes2_lookup_note"`, `"enabled":true`, `"lastContact"`}, []string{"s3cret"}},
		{"rename", admin, "PATCH", "/api/v1/mcp/servers/notes2", map[string]any{"name": "Second notes", "requiresApproval": true}, nil, 200, []string{`"name":"Second notes"`, `"requiresApproval":true`}, nil},
		{"header without credential", admin, "PATCH", "/api/v1/mcp/servers/notes2", map[string]any{"authHeader": "X-Other"}, nil, 400, []string{"needs the credential again"}, nil},
		{"identifier in patch", admin, "PATCH", "/api/v1/mcp/servers/notes2", map[string]any{"identifier": "x"}, nil, 400, []string{"cannot be changed"}, nil},
		{"effect override", admin, "PUT", "/api/v1/mcp/tools/mcp_notes2_publish_note/effect", map[string]any{"effect": "idempotent_write"}, nil, 200, []string{`"effect":"idempotent_write"`}, nil},
		{"bad effect", admin, "PUT", "/api/v1/mcp/tools/mcp_notes2_publish_note/effect", map[string]any{"effect": "sometimes"}, nil, 400, nil, nil},
		{"no effect", admin, "PUT", "/api/v1/mcp/tools/mcp_notes2_publish_note/effect", map[string]any{}, nil, 400, []string{"effect is required"}, nil},
		{"unknown tool effect", admin, "PUT", "/api/v1/mcp/tools/mcp_nope_x/effect", map[string]any{"effect": ""}, nil, 404, []string{errBody("toolNotFound")}, nil},
		{"disable", admin, "POST", "/api/v1/mcp/servers/notes2/disable", nil, nil, 200, []string{`"enabled":false`}, nil},
		{"enable", admin, "POST", "/api/v1/mcp/servers/notes2/enable", nil, nil, 200, []string{`"enabled":true`}, nil},
		{"remove", admin, "DELETE", "/api/v1/mcp/servers/notes2", nil, nil, 204, nil, nil},
		{"gone", admin, "GET", "/api/v1/mcp/servers/notes2", nil, nil, 404, []string{errBody("mcpServerNotFound")}, nil},
		{"ping gone", admin, "POST", "/api/v1/mcp/servers/notes2/ping", nil, nil, 404, []string{errBody("mcpServerNotFound")}, nil},
	})
	// A server that does not answer: the failure is a sentence, 502.
	check(t, []call{
		{"add dead", admin, "POST", "/api/v1/mcp/servers", map[string]any{"identifier": "dead", "url": "http://127.0.0.1:1/mcp"}, nil, 201, nil, nil},
		{"ping dead", admin, "POST", "/api/v1/mcp/servers/dead/ping", nil, nil, 502, []string{errBody("mcpFailed"), "cannot be reached"}, nil},
	})
}

// TestConfigurationRoutes: the preview reports the change and writes
// nothing; the apply with the preview's digest writes it; an apply
// confirming a preview of another state is refused; a document with
// problems is refused whole with every problem.
func TestConfigurationRoutes(t *testing.T) {
	t.Parallel()
	e := adminEnv(t)
	admin := e.login("admin")
	ctx := context.Background()
	doc := fmt.Sprintf("configurations:\n  - identifier: %s\n    model: llmtest-model\n    system_prompt: Be brief.\n    max_tokens: 500\n", chattest.Configuration)
	res := admin.do("POST", "/api/v1/configurations/apply", map[string]any{"document": doc, "preview": true})
	if res.code != 200 || !strings.Contains(res.body, `"action":"updated","fields":["system_prompt","max_tokens"]`) || !strings.Contains(res.body, `"dryRun":true`) {
		t.Fatalf("preview: %d %s", res.code, res.body)
	}
	var rep struct {
		Digest string `json:"digest"`
	}
	res.decode(t, &rep)
	snap, err := e.f.Tasks.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := snap.Configuration(chattest.Configuration); c.SystemPrompt != chattest.ConfigPrompt {
		t.Fatalf("the preview wrote the prompt %q", c.SystemPrompt)
	}
	check(t, []call{
		{"other document, same digest", admin, "POST", "/api/v1/configurations/apply", map[string]any{"document": strings.Replace(doc, "500", "600", 1), "expect": rep.Digest}, nil, 409, []string{errBody("previewStale")}, nil},
		{"apply", admin, "POST", "/api/v1/configurations/apply", map[string]any{"document": doc, "expect": rep.Digest}, nil, 200, []string{`"action":"updated"`}, []string{`"dryRun"`}},
		{"stale after the apply", admin, "POST", "/api/v1/configurations/apply", map[string]any{"document": doc, "expect": rep.Digest}, nil, 409, []string{errBody("previewStale")}, nil},
		{"problems", admin, "POST", "/api/v1/configurations/apply", map[string]any{"document": "configurations:\n  - identifier: x\n    model: nope\n    temprature: 2\n", "preview": true}, nil, 422,
			[]string{errBody("invalidConfiguration"), `"problems":[`, `"field":"model"`, `"field":"temprature"`}, nil},
		{"not yaml", admin, "POST", "/api/v1/configurations/apply", map[string]any{"document": "[: nope"}, nil, 400, nil, nil},
		{"show", admin, "GET", "/api/v1/configurations/" + chattest.Configuration, nil, nil, 200, []string{`"usable":true`, `"trustZone":"local"`, "Be brief."}, nil},
		{"show unknown", admin, "GET", "/api/v1/configurations/nope", nil, nil, 404, []string{errBody("configurationNotFound")}, nil},
	})
	snap, err = e.f.Tasks.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := snap.Configuration(chattest.Configuration); c.SystemPrompt != "Be brief." || c.UpdatedBy != "admin" {
		t.Errorf("after the apply the configuration is %+v", c)
	}
	var list map[string]json.RawMessage
	admin.do("GET", "/api/v1/configurations", nil).decode(t, &list)
	for _, k := range []string{"providers", "models", "configurations", "tasks", "budgets"} {
		if _, ok := list[k]; !ok {
			t.Errorf("GET /configurations lacks %s", k)
		}
	}
}
