package mcpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/chat/chattest"
	"github.com/t3agent/t3agent/internal/gate"
	mcpclient "github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/mcpserver"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
)

var runTools = []string{mcpserver.ToolRunResult, mcpserver.ToolRunStatus}

// offer is the gate's offer for user on cfg, as names, with the run tools,
// sorted: what tools/list must answer.
func (e *env) offer(user string, cfg gate.Configuration) []string {
	e.t.Helper()
	o, err := e.f.Gate.Offer(context.Background(), gate.OfferParams{Actor: e.f.Users[user], Config: cfg})
	if err != nil {
		e.t.Fatal(err)
	}
	names := append(o.Names(), runTools...)
	slices.Sort(names)
	return names
}

// TestListIsTheGatesOffer: tools/list answers exactly the gate's offer
// for the token's user, in the same order on every revision: an editor's
// token sees the editor's offer, never an admin-only tool.
func TestListIsTheGatesOffer(t *testing.T) {
	t.Parallel()
	for _, pg := range []bool{false, true} {
		name := map[bool]string{false: "sqlite", true: "postgres"}[pg]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := setup(t, envOptions{postgres: pg})
			strict := gate.Config{Name: "mcp", TrustZone: tool.ZoneExternalGlobal}
			chatCfg, err := e.f.Tasks.Resolve(context.Background(), chattest.Configuration)
			if err != nil {
				t.Fatal(err)
			}
			for _, version := range []string{modern, older} {
				for _, c := range []struct {
					token, user, path string
					cfg               gate.Configuration
				}{
					{"editor-host", "editor", "/mcp", strict},
					{"admin-host", "admin", "/mcp", strict},
					{"editor-host", "editor", "/mcp/" + chattest.Configuration, chatCfg},
					{"admin-host", "admin", "/mcp/" + chattest.Configuration, chatCfg},
				} {
					cs := e.connect(c.path, e.tokens[c.token], version, nil)
					if got := cs.InitializeResult().ProtocolVersion; got != version {
						t.Errorf("%s negotiated %s", version, got)
					}
					got := toolNames(t, cs)
					if want := e.offer(c.user, c.cfg); !slices.Equal(got, want) {
						t.Errorf("%s %s %s: tools/list = %v, want the gate's offer %v", version, c.user, c.path, got, want)
					}
				}
			}
			editor := toolNames(t, e.connect("/mcp/"+chattest.Configuration, e.tokens["editor-host"], modern, nil))
			admin := toolNames(t, e.connect("/mcp/"+chattest.Configuration, e.tokens["admin-host"], modern, nil))
			if slices.Equal(editor, admin) {
				t.Error("the editor sees the admin's tools")
			}
			for _, n := range editor {
				if en, ok := e.f.Gate.Registry().Get(context.Background(), n); ok && en.Spec.AdminOnly {
					t.Errorf("the editor is offered admin-only %s", n)
				}
			}
		})
	}
}

// TestEndpointsNarrow: a configuration's endpoint lists only its groups;
// an externalGlobal configuration, and /mcp itself, never list a tool
// above editorContent, secret-adjacent tools least of all.
func TestEndpointsNarrow(t *testing.T) {
	t.Parallel()
	e := setup(t, envOptions{})
	ctx := context.Background()
	notes := toolNames(t, e.connect("/mcp/"+notesConfig, e.tokens["admin-host"], modern, nil))
	if want := append([]string{chattest.ReadTool, chattest.WriteTool}, runTools...); !slices.Equal(notes, sorted(want)) {
		t.Errorf("/mcp/%s = %v, want only the notes group", notesConfig, notes)
	}
	// The notes server becomes secret-adjacent: the local configuration
	// offers its tools, externalGlobal ones never do.
	class := tool.SecretAdjacent
	if _, err := e.f.MCP.Update(ctx, mcpclient.UpdateParams{Identifier: chattest.MCPServer, DataClass: &class, By: "admin"}); err != nil {
		t.Fatal(err)
	}
	if err := e.f.Gate.Registry().Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	local := toolNames(t, e.connect("/mcp/"+chattest.Configuration, e.tokens["admin-host"], modern, nil))
	if !slices.Contains(local, chattest.ReadTool) {
		t.Fatalf("the local configuration does not offer the secret-adjacent %s, so the test proves nothing: %v", chattest.ReadTool, local)
	}
	for _, path := range []string{"/mcp/" + globalConfig, "/mcp"} {
		for _, n := range toolNames(t, e.connect(path, e.tokens["admin-host"], modern, nil)) {
			en, ok := e.f.Gate.Registry().Get(ctx, n)
			if !ok {
				continue // the run tools
			}
			if en.Spec.DataClass > tool.EditorContent {
				t.Errorf("%s lists %s (%s) to an externalGlobal host", path, n, en.Spec.DataClass)
			}
		}
	}
	if _, err := e.tryConnect("/mcp/no-such-config", e.tokens["admin-host"], modern, nil); err == nil {
		t.Error("an unknown configuration's endpoint answered")
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestReadCall: a read tool runs at once through the gate, its result
// redacted, on both revisions; the call is on record without its
// arguments.
func TestReadCall(t *testing.T) {
	t.Parallel()
	e := setup(t, envOptions{})
	secret := "sk-ant-api03-" + strings.Repeat("x", 40)
	for _, version := range []string{modern, older} {
		cs := e.connect("/mcp", e.tokens["editor-host"], version, nil)
		res := call(t, cs, chattest.ReadTool, map[string]any{"title": "Aqua " + secret})
		if res.IsError || !strings.HasPrefix(text(res), "note Aqua [REDACTED") || strings.Contains(text(res), secret) {
			t.Errorf("%s: read = %q (error %v)", version, text(res), res.IsError)
		}
		res = call(t, cs, "no_such_tool", map[string]any{})
		if !res.IsError || !strings.Contains(text(res), "is not available") {
			t.Errorf("%s: unknown tool = %q", version, text(res))
		}
	}
	calls, err := e.f.Store.MCPCalls(context.Background(), store.ListMCPCallsParams{ActorUsername: "editor"})
	if err != nil || len(calls) != 4 {
		t.Fatalf("records = %+v, %v", calls, err)
	}
	for i, c := range calls {
		client := "test-host"
		if i < 2 {
			client = "unknown" // the older revision names its client only at initialize
		}
		if c.Client != client || c.Credential != "token:editor-host" || c.Method != "tools/call" {
			t.Errorf("record = %+v", c)
		}
		b, _ := json.Marshal(c)
		if strings.Contains(string(b), "Aqua") {
			t.Errorf("a record holds an argument: %s", b)
		}
	}
	if calls[0].Decision != mcpserver.DecisionDenied || calls[1].Decision != mcpserver.DecisionAllowed || calls[1].Outcome != "ok" {
		t.Errorf("decisions = %+v", calls[:2])
	}
}

// TestWriteWaitsForApproval: a write never runs at once: it becomes a
// run waiting for approval, which its own user may not approve (four
// eyes), and which runs once a second person approves; the host follows
// it with the run tools. On both revisions and both stores.
func TestWriteWaitsForApproval(t *testing.T) {
	t.Parallel()
	for _, pg := range []bool{false, true} {
		for _, version := range []string{modern, older} {
			name := map[bool]string{false: "sqlite", true: "postgres"}[pg] + "/" + version
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				e := setup(t, envOptions{postgres: pg})
				ctx := context.Background()
				cs := e.connect("/mcp/"+chattest.Configuration, e.tokens["editor-host"], version, nil)
				res := call(t, cs, chattest.WriteTool, map[string]any{"text": "hello"})
				sc, _ := res.StructuredContent.(map[string]any)
				runID, _ := sc["runId"].(string)
				if res.IsError || runID == "" || !strings.Contains(text(res), runID) || e.f.WriteCalls() != 0 {
					t.Fatalf("write = %q %v (writes %d)", text(res), res.StructuredContent, e.f.WriteCalls())
				}
				st := call(t, cs, mcpserver.ToolRunStatus, map[string]any{"run_id": runID})
				if !strings.Contains(text(st), string(store.RunWaitingForApproval)) {
					t.Errorf("status = %q", text(st))
				}
				if r := call(t, cs, mcpserver.ToolRunResult, map[string]any{"run_id": runID}); r.IsError || !strings.Contains(text(r), "no result") {
					t.Errorf("result before approval = %q", text(r))
				}
				row, err := e.f.Store.Run(ctx, runID)
				if err != nil || row.CallerSource != "mcp" || row.CallerOperation == "" || row.OwnerUsername != "editor" {
					t.Fatalf("run = %+v, %v", row, err)
				}
				item, err := e.f.Runtime.Pending(ctx, e.f.Users["admin"], agent.Access{}, runID)
				if err != nil || len(item.Calls) != 1 || item.Calls[0].Name != chattest.WriteTool {
					t.Fatalf("pending = %+v, %v", item, err)
				}
				_, err = e.f.Runtime.Approve(ctx, agent.ApproveParams{RunID: runID, Approver: e.f.Users["editor"], Approved: true, Digest: item.Digest})
				var re *agent.RefusedError
				if !errorsAs(err, &re) || re.Code != agent.RefusedSelfApproval {
					t.Fatalf("self-approval: %v", err)
				}
				done, err := e.f.Runtime.Approve(ctx, agent.ApproveParams{RunID: runID, Approver: e.f.Users["admin"], Approved: true, Digest: item.Digest})
				if err != nil || done.Outcome != agent.OutcomeCompleted || e.f.WriteCalls() != 1 {
					t.Fatalf("approve: %+v, %v (writes %d)", done, err, e.f.WriteCalls())
				}
				r := call(t, cs, mcpserver.ToolRunResult, map[string]any{"run_id": runID})
				if r.IsError || text(r) != "published: hello" {
					t.Errorf("result = %q", text(r))
				}
				other := e.connect("/mcp/"+chattest.Configuration, e.tokens["intern-host"], version, nil)
				if r := call(t, other, mcpserver.ToolRunResult, map[string]any{"run_id": runID}); !r.IsError {
					t.Errorf("another user read the result: %q", text(r))
				}
			})
		}
	}
}

func errorsAs(err error, target **agent.RefusedError) bool {
	re, ok := err.(*agent.RefusedError)
	if ok {
		*target = re
	}
	return ok
}

// TestWriteNeedsAConfiguration: /mcp has no configuration to keep a run
// on, so a write there is refused and names the way to do it.
func TestWriteNeedsAConfiguration(t *testing.T) {
	t.Parallel()
	e := setup(t, envOptions{})
	cs := e.connect("/mcp", e.tokens["editor-host"], modern, nil)
	res := call(t, cs, chattest.WriteTool, map[string]any{"text": "hello"})
	if !res.IsError || !strings.Contains(text(res), "/mcp/{configuration}") || e.f.WriteCalls() != 0 {
		t.Errorf("write on /mcp = %q (writes %d)", text(res), e.f.WriteCalls())
	}
}

// TestTypedInput: a tool that needs a person's input answers
// input_required to a 2026-07-28 host and asks an older host that
// declares elicitation (in a session); the answer is laid over the
// arguments. An older host that cannot be asked gets an error naming the
// field.
func TestTypedInput(t *testing.T) {
	t.Parallel()
	e := setup(t, envOptions{})
	asked := 0
	opts := &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked++
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"choice": "b"}}, nil
	}}
	cs := e.connect("/mcp/"+chattest.Configuration, e.tokens["editor-host"], modern, opts)
	res := call(t, cs, chattest.InputTool, map[string]any{"choice": "a"})
	if res.IsError || !strings.Contains(text(res), "variant b chosen") || asked != 1 {
		t.Errorf("modern = %q (asked %d)", text(res), asked)
	}
	old := e.connect("/mcp/"+chattest.Configuration, e.tokens["editor-host"], older, opts)
	res = call(t, old, chattest.InputTool, map[string]any{"choice": "a"})
	if res.IsError || !strings.Contains(text(res), "variant b chosen") || asked != 2 {
		t.Errorf("older with elicitation = %q (asked %d)", text(res), asked)
	}
	plain := e.connect("/mcp/"+chattest.Configuration, e.tokens["editor-host"], older, nil)
	res = call(t, plain, chattest.InputTool, map[string]any{"choice": "a"})
	if !res.IsError || !strings.Contains(text(res), "(choice)") {
		t.Errorf("older without elicitation = %q", text(res))
	}
}

// TestAuthentication: no token, a wrong token and a token without
// agent:run are refused before the protocol, with a challenge naming the
// protected-resource metadata, which names t3agent as the authorization
// server.
func TestAuthentication(t *testing.T) {
	t.Parallel()
	e := setup(t, envOptions{})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	for _, c := range []struct {
		name, token string
		status      int
	}{
		{"none", "", http.StatusUnauthorized},
		{"unknown", "t3a_nope", http.StatusUnauthorized},
		{"read scope only", e.tokens["read-only"], http.StatusUnauthorized},
	} {
		req, _ := http.NewRequest(http.MethodPost, e.ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		ch := resp.Header.Get("WWW-Authenticate")
		if resp.StatusCode != c.status || !strings.Contains(ch, `resource_metadata="`+e.ts.URL+`/.well-known/oauth-protected-resource/mcp"`) {
			t.Errorf("%s: %d %q", c.name, resp.StatusCode, ch)
		}
	}
	resp, err := http.Get(e.ts.URL + "/.well-known/oauth-protected-resource/mcp/" + notesConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var md struct {
		Resource string   `json:"resource"`
		AS       []string `json:"authorization_servers"`
	}
	if err := json.Unmarshal(b, &md); err != nil || md.Resource != e.ts.URL+"/mcp/"+notesConfig || !slices.Equal(md.AS, []string{e.ts.URL}) {
		t.Errorf("metadata = %s", b)
	}
}

// TestRateLimit: calls beyond the per-credential limit are refused with
// the wait, and recorded as such.
func TestRateLimit(t *testing.T) {
	t.Parallel()
	e := setup(t, envOptions{facade: func(p *mcpserver.Params) { p.CallsPerCredential = 2 }})
	cs := e.connect("/mcp", e.tokens["editor-host"], modern, nil)
	for i := range 3 {
		res := call(t, cs, chattest.ReadTool, map[string]any{"title": "x"})
		if limited := res.IsError && strings.Contains(text(res), "too many calls"); limited != (i == 2) {
			t.Errorf("call %d: %q", i, text(res))
		}
	}
	other := e.connect("/mcp", e.tokens["admin-host"], modern, nil)
	if res := call(t, other, chattest.ReadTool, map[string]any{"title": "x"}); res.IsError {
		t.Errorf("another credential was limited: %q", text(res))
	}
	calls, err := e.f.Store.MCPCalls(context.Background(), store.ListMCPCallsParams{ActorUsername: "editor"})
	if err != nil || len(calls) != 3 || calls[0].Decision != mcpserver.DecisionRateLimited {
		t.Errorf("records = %+v, %v", calls, err)
	}
}
