package web

import (
	"context"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/chat/chattest"
	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/store"
)

// startRun runs one turn as user through the fixture's configuration,
// the provider answering rounds, and returns the result.
func (e *apiEnv) startRun(user, prompt string, rounds ...llmtest.Round) agent.Result {
	e.t.Helper()
	ctx := context.Background()
	cfg, err := e.f.Tasks.Resolve(ctx, chattest.Configuration)
	if err != nil {
		e.t.Fatal(err)
	}
	e.f.LLM.Push(rounds...)
	res := e.f.Runtime.Run(ctx, agent.Request{
		Config: cfg, Messages: []llm.Message{{Role: llm.RoleUser, Content: prompt}},
		Actor: e.f.Users[user], Caller: agent.Caller{Source: "test", Operation: "api"},
	})
	if res.RunID == "" {
		e.t.Fatalf("run as %s did not start: %+v", user, res)
	}
	return res
}

// waitingForWrite starts a run of user that waits for approval of a
// call of the MCP write tool; it returns the run id and the digest.
func (e *apiEnv) waitingForWrite(user string) (string, string) {
	e.t.Helper()
	res := e.startRun(user, "Publish hello", llmtest.Calls(llmtest.Call("c1", chattest.WriteTool, `{"text":"hello"}`)))
	if res.Outcome != agent.OutcomeAwaitingApproval || res.Pending == nil {
		e.t.Fatalf("run did not wait for approval: %+v", res)
	}
	return res.RunID, res.Pending.Digest
}

// TestRunRoutes covers the runs, events, inbox and decision routes with
// every answer they give: who sees which runs, the runtime's refusals
// mapped to their codes, and decisions carried out in the request.
func TestRunRoutes(t *testing.T) {
	t.Parallel()
	e := setup(t, envOptions{})
	editor, admin, intern := e.login("editor"), e.login("admin"), e.login("intern")
	// A token sees what its user may see: the intern's tokens nothing of
	// the editor's or the admin's runs, the editor's tokens the editor's
	// runs; only the admin scope widens an intern's token to every run.
	reader := e.token("reader", "intern", store.ScopeAgentRead)
	internCanceller := e.token("intern-canceller", "intern", store.ScopeAgentCancel)
	edReader := e.token("ed-reader", "editor", store.ScopeAgentRead)
	approver := e.token("approver", "editor", store.ScopeAgentApprove)
	canceller := e.token("canceller", "editor", store.ScopeAgentCancel)
	root := e.token("root", "intern", store.ScopeAdmin)

	a, digestA := e.waitingForWrite("editor")
	inputRes := e.startRun("editor", "Pick a variant", llmtest.Calls(llmtest.Call("c1", chattest.InputTool, `{}`)))
	if inputRes.Outcome != agent.OutcomeAwaitingInput {
		t.Fatalf("run did not wait for input: %+v", inputRes)
	}
	b, digestB := inputRes.RunID, inputRes.Pending.Digest
	c := e.startRun("admin", "Hello", llmtest.Text("Hello, admin.")).RunID
	d, digestD := e.waitingForWrite("editor")

	check(t, []call{
		// Lists: a person sees their own runs, an admin and a read token all.
		{"editor's runs", editor, "GET", "/api/v1/runs", nil, nil, 200, []string{a, b, d}, []string{c}},
		{"editor names another owner", editor, "GET", "/api/v1/runs?owner=admin", nil, nil, 403, []string{errBody("runAccessDenied")}, nil},
		{"editor names themselves", editor, "GET", "/api/v1/runs?owner=editor&status=waiting_for_input", nil, nil, 200, []string{b}, []string{a, c}},
		{"admin's runs", admin, "GET", "/api/v1/runs", nil, nil, 200, []string{a, b, c, d, `"next":""`}, nil},
		{"admin filters by owner", admin, "GET", "/api/v1/runs?owner=admin", nil, nil, 200, []string{c}, []string{a}},
		{"an intern's read token sees none of the others' runs", reader, "GET", "/api/v1/runs", nil, nil, 200, []string{`"runs":[]`}, []string{a, b, c, d}},
		{"an intern's read token names another owner", reader, "GET", "/api/v1/runs?owner=editor", nil, nil, 403, []string{errBody("runAccessDenied")}, nil},
		{"an editor's read token sees the editor's runs", edReader, "GET", "/api/v1/runs", nil, nil, 200, []string{a, b, d}, []string{c}},
		{"an admin-scope token sees all", root, "GET", "/api/v1/runs", nil, nil, 200, []string{a, b, c, d}, nil},
		{"bad status", admin, "GET", "/api/v1/runs?status=sleeping", nil, nil, 400, []string{errBody("badRequest"), "status must be one of"}, nil},
		{"bad limit", admin, "GET", "/api/v1/runs?limit=0", nil, nil, 400, []string{"limit must be a whole number from 1 to 1000"}, nil},
		{"limit too high", admin, "GET", "/api/v1/runs?limit=1001", nil, nil, 400, []string{errBody("badRequest")}, nil},

		// One run.
		{"own waiting run", editor, "GET", "/api/v1/runs/" + a, nil, nil, 200,
			[]string{`"status":"waiting_for_approval"`, `"digest":"` + digestA, `"name":"` + chattest.WriteTool, `"owner":"editor"`, `"mayApprove":true`, `"mayDeny":true`}, []string{"signature", "decideReason"}},
		{"a completed run has no pending turn", admin, "GET", "/api/v1/runs/" + c, nil, nil, 200, []string{`"status":"completed"`, `"pending":null`}, nil},
		{"another's run", intern, "GET", "/api/v1/runs/" + a, nil, nil, 403, []string{errBody("runAccessDenied"), `"message":"You may not see or act on this run."`}, nil},
		{"no such run", editor, "GET", "/api/v1/runs/no-such-run", nil, nil, 404, []string{errBody("runNotFound")}, nil},
		{"a too long id", editor, "GET", "/api/v1/runs/" + strings.Repeat("x", 129), nil, nil, 400, []string{errBody("badRequest")}, nil},
		{"an intern's read token on the editor's run", reader, "GET", "/api/v1/runs/" + a, nil, nil, 403, []string{errBody("runAccessDenied")}, []string{digestA}},
		{"an intern's read token on the admin's events", reader, "GET", "/api/v1/runs/" + c + "/events", nil, nil, 403, []string{errBody("runAccessDenied")}, []string{`"kind"`}},
		{"an editor's read token on the editor's run", edReader, "GET", "/api/v1/runs/" + a, nil, nil, 200, []string{a, `"mayApprove":false`, `"mayDeny":false`, `"decideReason":"runAccessDenied"`}, nil},
		{"an admin-scope token on the admin's events", root, "GET", "/api/v1/runs/" + c + "/events", nil, nil, 200, []string{`"seq":0`}, nil},
		{"events", editor, "GET", "/api/v1/runs/" + a + "/events", nil, nil, 200, []string{`"seq":0`, `"kind":"request"`, `"summary":"`}, nil},
		{"events after", editor, "GET", "/api/v1/runs/" + a + "/events?after=1000", nil, nil, 200, []string{`"events":[]`}, nil},
		{"events with a bad after", editor, "GET", "/api/v1/runs/" + a + "/events?after=-2", nil, nil, 400, []string{errBody("badRequest")}, nil},
		{"events of another's run", intern, "GET", "/api/v1/runs/" + a + "/events", nil, nil, 403, []string{errBody("runAccessDenied")}, nil},
		{"events of no run", admin, "GET", "/api/v1/runs/none/events", nil, nil, 404, []string{errBody("runNotFound")}, nil},

		// The inbox.
		{"editor's inbox", editor, "GET", "/api/v1/inbox", nil, nil, 200, []string{a, b, d, `"inputTool":"` + chattest.InputTool}, nil},
		{"intern's inbox is empty", intern, "GET", "/api/v1/inbox", nil, nil, 200, []string{`"items":[]`}, nil},
		{"an approve token's inbox is its user's", approver, "GET", "/api/v1/inbox", nil, nil, 200, []string{a, b, `"mayApprove":false`, `"mayDeny":true`, `"decideReason":"approverNotPermitted"`}, nil},
		{"an admin-scope token's inbox spans owners", root, "GET", "/api/v1/inbox", nil, nil, 200, []string{a, b}, nil},

		// Refusals of decisions.
		{"approve without a body", editor, "POST", "/api/v1/runs/" + a + "/approve", nil, nil, 400, []string{"must be a JSON object"}, nil},
		{"approve with broken JSON", editor, "POST", "/api/v1/runs/" + a + "/approve", `{"digest":`, nil, 400, []string{errBody("badRequest")}, nil},
		{"approve a stale turn", editor, "POST", "/api/v1/runs/" + a + "/approve", map[string]string{"digest": strings.Repeat("0", 64)}, nil, 409, []string{errBody("staleTurn")}, nil},
		{"approve another's run", intern, "POST", "/api/v1/runs/" + a + "/approve", map[string]string{"digest": digestA}, nil, 403, []string{errBody("runAccessDenied")}, nil},
		{"a token may not release a write", approver, "POST", "/api/v1/runs/" + a + "/approve", map[string]string{"digest": digestA}, nil, 403, []string{errBody("approverNotPermitted")}, nil},
		{"input on a run waiting for approval", editor, "POST", "/api/v1/runs/" + a + "/input", map[string]any{"digest": digestA, "data": map[string]string{"choice": "a"}}, nil, 409, []string{errBody("runNotWaiting")}, nil},
		{"input that is no object", editor, "POST", "/api/v1/runs/" + b + "/input", map[string]any{"digest": digestB, "data": "a"}, nil, 400, []string{"data must be a JSON object"}, nil},
		{"input against the schema", editor, "POST", "/api/v1/runs/" + b + "/input", map[string]any{"digest": digestB, "data": map[string]string{"choice": "z"}}, nil, 422, []string{errBody("invalidInput")}, nil},
		{"a token never answers input", approver, "POST", "/api/v1/runs/" + b + "/input", map[string]any{"digest": digestB, "data": map[string]string{"choice": "a"}}, nil, 403, []string{errBody("approverNotPermitted")}, nil},
		{"input for no run", editor, "POST", "/api/v1/runs/none/input", map[string]any{"digest": "x", "data": map[string]string{}}, nil, 404, []string{errBody("runNotFound")}, nil},
		{"approve no run", editor, "POST", "/api/v1/runs/none/approve", map[string]string{"digest": "x"}, nil, 404, []string{errBody("runNotFound")}, nil},
		{"cancel without the scope", reader, "POST", "/api/v1/runs/" + d + "/cancel", nil, nil, 403, []string{errBody("insufficientScope")}, nil},
		{"cancel another's run", intern, "POST", "/api/v1/runs/" + d + "/cancel", nil, nil, 403, []string{errBody("runAccessDenied")}, nil},
		{"an intern's cancel token on the editor's run", internCanceller, "POST", "/api/v1/runs/" + d + "/cancel", nil, nil, 403, []string{errBody("runAccessDenied")}, nil},
		{"cancel with the scope", canceller, "POST", "/api/v1/runs/" + d + "/cancel", nil, nil, 200, []string{`"cancelled":true`}, nil},
		{"cancel an ended run", editor, "POST", "/api/v1/runs/" + d + "/cancel", nil, nil, 409, []string{errBody("runFinished")}, nil},
		{"approve a cancelled run", editor, "POST", "/api/v1/runs/" + d + "/approve", map[string]string{"digest": digestD}, nil, 409, []string{errBody("runNotWaiting")}, nil},
	})

	// Pages: next names the last run of a full page; the page after it
	// starts below it and ends the listing.
	seen := map[string]bool{}
	before := ""
	for page := 1; ; page++ {
		var out struct {
			Runs []struct{ ID string } `json:"runs"`
			Next string                `json:"next"`
		}
		admin.do("GET", "/api/v1/runs?limit=3&before="+before, nil).decode(t, &out)
		for _, r := range out.Runs {
			if seen[r.ID] {
				t.Errorf("run %s listed twice", r.ID)
			}
			seen[r.ID] = true
		}
		if out.Next == "" {
			if page != 2 || len(out.Runs) != 1 {
				t.Errorf("page %d ends the listing with %d runs", page, len(out.Runs))
			}
			break
		}
		if page > 2 || len(out.Runs) != 3 || out.Next != out.Runs[2].ID {
			t.Fatalf("page %d: %+v", page, out)
		}
		before = out.Next
	}
	if len(seen) != 4 {
		t.Errorf("the pages listed %d runs, want 4", len(seen))
	}

	// Decisions carried out in the request.
	e.f.LLM.Push(llmtest.Text("Published."))
	check(t, []call{{"approve", editor, "POST", "/api/v1/runs/" + a + "/approve", map[string]string{"digest": digestA, "reason": "fine"}, nil, 200,
		[]string{`"outcome":"completed"`, `"content":"Published."`, `"runId":"` + a}, nil}})
	if n := e.f.WriteCalls(); n != 1 {
		t.Errorf("the MCP server saw %d write calls, want 1", n)
	}
	e.f.LLM.Push(llmtest.Text("Variant a it is."))
	check(t, []call{
		{"approve again", editor, "POST", "/api/v1/runs/" + a + "/approve", map[string]string{"digest": digestA}, nil, 409, []string{errBody("runNotWaiting")}, nil},
		{"input", editor, "POST", "/api/v1/runs/" + b + "/input", map[string]any{"digest": digestB, "data": map[string]string{"choice": "a"}}, nil, 200,
			[]string{`"outcome":"completed"`, `"content":"Variant a it is."`}, nil},
		{"the decision is in the events", editor, "GET", "/api/v1/runs/" + a + "/events", nil, nil, 200, []string{`"kind":"decision"`, `"decidedBy":"editor"`}, nil},
		{"the inbox is empty", editor, "GET", "/api/v1/inbox", nil, nil, 200, []string{`"items":[]`}, nil},
	})
}

// TestRunDenyAndFourEyes: with require_second_approver the initiator may
// deny but not approve (403 selfApprovalDenied); a denial goes on
// without the call.
func TestRunDenyAndFourEyes(t *testing.T) {
	t.Parallel()
	e := setup(t, envOptions{chat: chattest.Options{ConfigYAML: "require_second_approver: true"}})
	editor, admin := e.login("editor"), e.login("admin")
	a, digestA := e.waitingForWrite("editor")
	b, digestB := e.waitingForWrite("editor")
	check(t, []call{
		{"self-approval", editor, "POST", "/api/v1/runs/" + a + "/approve", map[string]string{"digest": digestA}, nil, 403, []string{errBody("selfApprovalDenied")}, nil},
	})
	e.f.LLM.Push(llmtest.Text("Not published."), llmtest.Text("Published."))
	check(t, []call{
		{"the initiator may deny", editor, "POST", "/api/v1/runs/" + a + "/deny", map[string]string{"digest": digestA, "reason": "not now"}, nil, 200,
			[]string{`"outcome":"completed"`, `"content":"Not published."`}, nil},
		{"a second person approves", admin, "POST", "/api/v1/runs/" + b + "/approve", map[string]string{"digest": digestB}, nil, 200,
			[]string{`"content":"Published."`}, nil},
	})
	if n := e.f.WriteCalls(); n != 1 {
		t.Errorf("the MCP server saw %d write calls, want 1 (the approved one)", n)
	}
}
