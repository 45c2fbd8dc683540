package web

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/chat/chattest"
	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/servicetoken"
	"github.com/t3agent/t3agent/internal/settings"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/telemetry"
)

// opsEnv serves the API with its Ops over the chat fixture.
func opsEnv(t *testing.T, rounds ...llmtest.Round) *apiEnv {
	t.Helper()
	f := chattest.New(t, chattest.Options{Rounds: rounds, AllowUnused: true})
	return serve(t, f, func(a *API) {
		a.Ops = &Ops{
			Tokens:   servicetoken.New(servicetoken.Params{Store: f.Store, Users: f.Site, Now: f.Clock.Now}),
			Settings: settings.New(f.Store),
			Usage:    telemetry.New(telemetry.Params{Store: f.Store, Now: f.Clock.Now}),
			Grants:   f.Store, Configs: f.Tasks, Starter: f.Runtime,
		}
	})
}

// TestUsageRoute: the ledger by one key with the budget bars, as JSON and
// CSV, for admins only.
func TestUsageRoute(t *testing.T) {
	t.Parallel()
	e := opsEnv(t, llmtest.Text("The answer."))
	ctx := context.Background()
	cfg, err := e.f.Tasks.Resolve(ctx, chattest.Configuration)
	if err != nil {
		t.Fatal(err)
	}
	res := e.f.Runtime.Run(ctx, agent.Request{Config: cfg, Actor: e.f.Users["editor"], Caller: agent.Caller{Source: "cli", Operation: "run"},
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "Hello"}}})
	if res.Outcome != agent.OutcomeCompleted {
		t.Fatalf("the run: %+v", res)
	}
	admin, editor := e.login("admin"), e.login("editor")
	adminTok := e.token("ops", "admin", store.ScopeAdmin)
	reader := e.token("reader", "editor", store.ScopeAgentRead)
	check(t, []call{
		{"by user", admin, "GET", "/api/v1/usage?by=user", nil, nil, 200, []string{`"by":"user"`, `"key":"editor","requests":1`, `"budgets":[]`, `"total":{"requests":1`}, nil},
		{"by configuration for an admin token", adminTok, "GET", "/api/v1/usage?by=configuration&since=7d", nil, nil, 200, []string{`"key":"` + chattest.Configuration + `"`}, nil},
		{"csv", admin, "GET", "/api/v1/usage?by=model&format=csv", nil, nil, 200, []string{"model,requests,errors,input_tokens,output_tokens,cost_usd,unpriced_requests\n", "llmtest-model,1,0,", "total,1,0,"}, nil},
		{"csv by Accept", admin, "GET", "/api/v1/usage", nil, []string{"Accept", "text/csv"}, 200, []string{"day,requests"}, nil},
		{"an editor", editor, "GET", "/api/v1/usage", nil, nil, 403, []string{errBody("adminRequired")}, nil},
		{"a reading token", reader, "GET", "/api/v1/usage", nil, nil, 403, []string{errBody("insufficientScope")}, nil},
		{"bad key", admin, "GET", "/api/v1/usage?by=moon", nil, nil, 400, []string{"by must be day"}, nil},
		{"bad day", admin, "GET", "/api/v1/usage?since=yesterday", nil, nil, 400, []string{"is not a day"}, nil},
		{"until before since", admin, "GET", "/api/v1/usage?since=2026-02-01&until=2026-01-01", nil, nil, 400, []string{"until is before since"}, nil},
		{"bad format", admin, "GET", "/api/v1/usage?format=xml", nil, nil, 400, []string{"format must be json or csv"}, nil},
	})
}

// TestTokenRoutes: an admin creates a token (the secret once), it works
// as a bearer until it is revoked; everyone else is refused.
func TestTokenRoutes(t *testing.T) {
	t.Parallel()
	e := opsEnv(t)
	admin, editor := e.login("admin"), e.login("editor")
	reader := e.token("reader", "editor", store.ScopeAgentRead)
	res := admin.do("POST", "/api/v1/tokens", map[string]any{"name": "ci", "user": "editor", "scopes": []string{"agent:read"}, "expiresInDays": 30})
	if res.code != 201 {
		t.Fatalf("create: %d %s", res.code, res.body)
	}
	var created struct {
		Name, Secret, State string
	}
	res.decode(t, &created)
	if !strings.HasPrefix(created.Secret, servicetoken.Prefix) || created.State != "active" {
		t.Fatalf("created: %s", res.body)
	}
	tok := e.anonymous()
	tok.bearer = created.Secret
	check(t, []call{
		{"the new token works", tok, "GET", "/api/v1/me", nil, nil, 200, []string{`"token":"ci"`}, nil},
		{"list", admin, "GET", "/api/v1/tokens", nil, nil, 200, []string{`"name":"ci"`, `"state":"active"`, `"name":"reader"`}, []string{created.Secret, "secretHash", "SecretHash"}},
		{"taken name", admin, "POST", "/api/v1/tokens", map[string]any{"name": "ci", "user": "editor", "scopes": []string{"agent:read"}}, nil, 409, []string{errBody("tokenNameTaken")}, nil},
		{"bad scope", admin, "POST", "/api/v1/tokens", map[string]any{"name": "x", "user": "editor", "scopes": []string{"agent:write"}}, nil, 400, []string{`is not a scope`}, nil},
		{"admin scope for an editor", admin, "POST", "/api/v1/tokens", map[string]any{"name": "x", "user": "editor", "scopes": []string{"admin"}}, nil, 400, []string{"admin needs a TYPO3 admin"}, nil},
		{"disabled user", admin, "POST", "/api/v1/tokens", map[string]any{"name": "x", "user": "former", "scopes": []string{"agent:read"}}, nil, 400, []string{"cannot act"}, nil},
		{"bad lifetime", admin, "POST", "/api/v1/tokens", map[string]any{"name": "x", "user": "editor", "scopes": []string{"agent:read"}, "expiresInDays": -1}, nil, 400, []string{"expiresInDays"}, nil},
		{"an editor lists", editor, "GET", "/api/v1/tokens", nil, nil, 403, []string{errBody("adminRequired")}, nil},
		{"an editor creates", editor, "POST", "/api/v1/tokens", map[string]any{"name": "y", "user": "editor", "scopes": []string{"agent:read"}}, nil, 403, []string{errBody("adminRequired")}, nil},
		{"a token creates", reader, "POST", "/api/v1/tokens", map[string]any{"name": "y", "user": "editor", "scopes": []string{"agent:read"}}, nil, 403, []string{errBody("insufficientScope")}, nil},
		{"an editor revokes", editor, "DELETE", "/api/v1/tokens/ci", nil, nil, 403, []string{errBody("adminRequired")}, nil},
		{"revoke", admin, "DELETE", "/api/v1/tokens/ci", nil, nil, 204, nil, nil},
		{"the revoked token is refused", tok, "GET", "/api/v1/me", nil, nil, 401, []string{errBody("invalidToken")}, nil},
		{"revoke an unknown token", admin, "DELETE", "/api/v1/tokens/nope", nil, nil, 404, []string{errBody("tokenNotFound")}, nil},
		{"grants of an editor", editor, "GET", "/api/v1/grants", nil, nil, 200, []string{`"grants":[]`}, nil},
		{"grants need a session", reader, "GET", "/api/v1/grants", nil, nil, 403, []string{errBody("sessionRequired")}, nil},
		{"revoke an unknown grant", editor, "POST", "/api/v1/grants/nope/revoke", nil, nil, 404, []string{errBody("grantNotFound")}, nil},
	})
}

// TestSettingsRoutes: admins read and change the settings; a bad value
// changes nothing; the gate follows the stored mode.
func TestSettingsRoutes(t *testing.T) {
	t.Parallel()
	e := opsEnv(t)
	admin, editor := e.login("admin"), e.login("editor")
	reader := e.token("reader", "admin", store.ScopeAgentRead)
	check(t, []call{
		{"show", admin, "GET", "/api/v1/settings", nil, nil, 200, []string{`"key":"tools.data_class_enforcement","value":"enforce","default":"enforce","values":["enforce","observe"],"set":false`}, nil},
		{"observe", admin, "PUT", "/api/v1/settings", map[string]any{"settings": map[string]string{"tools.data_class_enforcement": "observe"}}, nil, 200, []string{`"value":"observe"`, `"set":true`}, nil},
		{"a typo", admin, "PUT", "/api/v1/settings", map[string]any{"settings": map[string]string{"tools.data_class_enforcement": "Observe"}}, nil, 400, []string{"takes enforce or observe"}, nil},
		{"an unknown key", admin, "PUT", "/api/v1/settings", map[string]any{"settings": map[string]string{"nope": "x"}}, nil, 400, []string{"is not a setting"}, nil},
		{"nothing", admin, "PUT", "/api/v1/settings", map[string]any{"settings": map[string]string{}}, nil, 400, []string{"at least one"}, nil},
		{"still observe", admin, "GET", "/api/v1/settings", nil, nil, 200, []string{`"value":"observe"`}, nil},
		{"an editor", editor, "GET", "/api/v1/settings", nil, nil, 403, []string{errBody("adminRequired")}, nil},
		{"an editor changes", editor, "PUT", "/api/v1/settings", map[string]any{"settings": map[string]string{"tools.data_class_enforcement": "observe"}}, nil, 403, []string{errBody("adminRequired")}, nil},
		{"a reading token", reader, "GET", "/api/v1/settings", nil, nil, 403, []string{errBody("insufficientScope")}, nil},
		{"reset", admin, "PUT", "/api/v1/settings", map[string]any{"settings": map[string]string{"tools.data_class_enforcement": ""}}, nil, 200, []string{`"value":"enforce"`, `"set":false`}, nil},
	})
}

// TestRunStartRoute: a run starts from a configuration or a task, queued,
// waited for, or as a dry run that calls no provider.
func TestRunStartRoute(t *testing.T) {
	t.Parallel()
	e := opsEnv(t, llmtest.Text("Done in the request."))
	editor := e.login("editor")
	runner := e.token("runner", "editor", store.ScopeAgentRun)
	reader := e.token("reader", "editor", store.ScopeAgentRead)
	res := editor.do("POST", "/api/v1/runs", map[string]any{"task": chattest.Task, "input": "Check the pump pages.", "dryRun": true})
	if res.code != 200 {
		t.Fatalf("dry run: %d %s", res.code, res.body)
	}
	var dry struct {
		DryRun agent.DryRun `json:"dryRun"`
	}
	res.decode(t, &dry)
	d := dry.DryRun
	if d.Configuration != chattest.Configuration || len(d.Messages) != 2 || !strings.Contains(d.Messages[0].Content, chattest.ConfigPrompt) ||
		!strings.Contains(d.Messages[1].Content, chattest.TaskPrompt) || !strings.Contains(d.Messages[1].Content, "Check the pump pages.") {
		t.Errorf("dry run: %+v", d)
	}
	names := []string{}
	for _, tl := range d.Tools {
		names = append(names, tl.Name)
	}
	if !strings.Contains(strings.Join(names, ","), chattest.WriteTool) {
		t.Errorf("the dry run offers %v", names)
	}
	if n := len(e.f.LLM.Requests()); n != 0 {
		t.Errorf("the dry run called the provider %d times", n)
	}
	check(t, []call{
		{"queued by a token", runner, "POST", "/api/v1/runs", map[string]any{"configuration": chattest.Configuration, "input": "Later."}, nil, 202, []string{`"status":"queued"`}, nil},
		{"queued by a person", editor, "POST", "/api/v1/runs", map[string]any{"configuration": chattest.Configuration, "input": "Later."}, nil, 202, []string{`"status":"queued"`, `"owner":"editor"`, `"callerSource":"api"`}, nil},
		{"waited for", editor, "POST", "/api/v1/runs", map[string]any{"configuration": chattest.Configuration, "input": "Now.", "wait": true}, nil, 200, []string{`"outcome":"completed"`, "Done in the request."}, nil},
		{"a reading token", reader, "POST", "/api/v1/runs", map[string]any{"configuration": chattest.Configuration, "input": "x"}, nil, 403, []string{errBody("insufficientScope")}, nil},
		{"both", editor, "POST", "/api/v1/runs", map[string]any{"configuration": chattest.Configuration, "task": chattest.Task, "input": "x"}, nil, 400, []string{"either a task or a configuration"}, nil},
		{"no prompt", editor, "POST", "/api/v1/runs", map[string]any{"configuration": chattest.Configuration}, nil, 400, []string{"prompt is empty"}, nil},
		{"wait and dry", editor, "POST", "/api/v1/runs", map[string]any{"configuration": chattest.Configuration, "input": "x", "wait": true, "dryRun": true}, nil, 400, []string{"not both"}, nil},
		{"unknown configuration", editor, "POST", "/api/v1/runs", map[string]any{"configuration": "nope", "input": "x"}, nil, 404, []string{errBody("configurationNotFound")}, nil},
	})
	var page struct {
		Runs []json.RawMessage `json:"runs"`
	}
	e.login("admin").do("GET", "/api/v1/runs?status=queued", nil).decode(t, &page)
	if len(page.Runs) != 2 {
		t.Errorf("%d queued runs, want 2", len(page.Runs))
	}
}
