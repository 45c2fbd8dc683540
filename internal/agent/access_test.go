package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
)

// accessCase is one fixture whose editor starts runs that wait: for the
// approval of a write, for the approval of a read marked approval-bound,
// or for input. The provider's script is pushed round by round, so a
// decision that must not run anything fails the test if it asks for one.
type accessCase struct {
	f   *fixture
	srv *llmtest.Server
	// ran records, per run, who each tool call ran as.
	ran sync.Map
}

func newAccessCase(t *testing.T, dsn string) *accessCase {
	t.Helper()
	a := &accessCase{}
	record := func(ctx context.Context, call tool.Call, _ map[string]any) (tool.Result, error) {
		a.ran.Store(call.RunID, call.Actor.Username)
		return tool.Text("done"), nil
	}
	writer := newTestTool("update_page_title", tool.GroupContent, tool.EditorContent, func(s *tool.Spec) { s.Effect = tool.NonIdempotentWrite })
	flagged := newTestTool("read_flagged", tool.GroupContent, tool.EditorContent, func(s *tool.Spec) { s.RequiresApproval = true })
	ask := newTestTool("ask_editor", tool.GroupContent, tool.EditorContent, func(s *tool.Spec) {
		s.InputRequest = json.RawMessage(`{"type":"object","properties":{"choice":{"type":"string"}},"required":["choice"]}`)
	})
	writer.run, flagged.run, ask.run = record, record, record
	a.f = newFixture(t, fixtureParams{extra: []tool.Tool{writer, flagged, ask}, storeDSN: dsn})
	a.srv = llmtest.NewOpenAI(t)
	a.f.apply(providerDoc("acc", "openai", "externalGlobal", a.srv, 0, ""))
	return a
}

// wait starts a run of the editor that calls name and waits.
func (a *accessCase) wait(t *testing.T, name string) agent.Result {
	t.Helper()
	a.srv.Push(llmtest.Calls(llmtest.Call("c1", name, `{}`)))
	res := a.f.rt.Run(context.Background(), a.f.request("acc", "editor", "Go."))
	if res.Outcome != agent.OutcomeAwaitingApproval && res.Outcome != agent.OutcomeAwaitingInput {
		t.Fatalf("setup: %+v", res)
	}
	return res
}

type accessActor struct {
	name   string
	user   string
	access agent.Access
}

func token(name string, scopes ...store.Scope) agent.Access {
	return agent.Access{Token: name, Scopes: scopes}
}

// accessActors: three persons and nine service tokens. A token sees what
// its user may see: the intern's tokens see nothing of the editor's run
// whatever their scope (agent:read included — the defect where a token
// read every user's runs), the editor's tokens the editor's run, the
// admin's token every run; only the admin scope widens an intern's token.
// Within what it sees a token acts only by its scopes: the admin user's
// token without a scope may do nothing.
var accessActors = []accessActor{
	{"admin", "admin", agent.Access{}},
	{"owner", "editor", agent.Access{}},
	{"other", "intern", agent.Access{}},
	{"token-none", "admin", token("ci-none")},
	{"token-read", "intern", token("ci-read", store.ScopeAgentRead)},
	{"token-approve", "intern", token("ci-approve", store.ScopeAgentApprove)},
	{"token-cancel", "intern", token("ci-cancel", store.ScopeAgentCancel)},
	{"token-admin", "intern", token("ci-admin", store.ScopeAdmin)},
	{"owner-read", "editor", token("ed-read", store.ScopeAgentRead)},
	{"owner-approve", "editor", token("ed-approve", store.ScopeAgentApprove)},
	{"owner-cancel", "editor", token("ed-cancel", store.ScopeAgentCancel)},
	{"admin-read", "admin", token("ad-read", store.ScopeAgentRead)},
}

// Outcomes of one cell of the access matrix.
const (
	yes     = "ok"
	no      = "denied"  // ErrAccessDenied, or a decision refused run_access_denied
	hidden  = "hidden"  // the inbox answers, without the run
	notPerm = "notPerm" // refused approver_not_permitted
	// Rights: may deny only, or neither (the run is readable).
	denyOnly = "denyOnly"
	none     = "none"
)

// TestAccessMatrix: every actor against every operation on runs, on
// SQLite and PostgreSQL.
func TestAccessMatrix(t *testing.T) {
	forStores(t, testAccessMatrix)
}

func testAccessMatrix(t *testing.T, dsn func(testing.TB) string) {
	a := newAccessCase(t, dsn(t))
	ctx := context.Background()
	shared := a.wait(t, "update_page_title") // the reads leave it as it is
	// want lists the outcome per actor, in accessActors' order.
	ops := []struct {
		name string
		want [12]string
		do   func(t *testing.T, who accessActor) string
	}{
		{"status", [12]string{yes, yes, no, no, no, no, no, yes, yes, no, no, yes}, func(t *testing.T, who accessActor) string {
			row, err := a.f.rt.Status(ctx, a.f.user(who.user), who.access, shared.RunID)
			if err == nil && (row.ID != shared.RunID || row.Status != store.RunWaitingForApproval) {
				t.Errorf("status = %+v", row)
			}
			return readOutcome(t, err)
		}},
		{"events", [12]string{yes, yes, no, no, no, no, no, yes, yes, no, no, yes}, func(t *testing.T, who accessActor) string {
			evs, err := a.f.rt.Events(ctx, a.f.user(who.user), who.access, shared.RunID, 0)
			if err == nil && (len(evs) == 0 || evs[0].Seq != 1) {
				t.Errorf("events after 0 = %v", seqs(evs))
			}
			return readOutcome(t, err)
		}},
		{"list", [12]string{yes, yes, hidden, no, hidden, no, no, yes, yes, no, no, yes}, func(t *testing.T, who accessActor) string {
			page, err := a.f.rt.Runs(ctx, a.f.user(who.user), who.access, store.ListRunsParams{})
			if err != nil {
				return readOutcome(t, err)
			}
			for _, row := range page.Runs {
				if row.OwnerUsername != who.user && who.user != "admin" && !who.access.Has(store.ScopeAdmin) {
					t.Errorf("%s lists a run of %s", who.name, row.OwnerUsername)
				}
			}
			if !slices.ContainsFunc(page.Runs, func(r store.Run) bool { return r.ID == shared.RunID }) {
				return hidden
			}
			return yes
		}},
		{"list-owner", [12]string{yes, yes, no, no, no, no, no, yes, yes, no, no, yes}, func(t *testing.T, who accessActor) string {
			page, err := a.f.rt.Runs(ctx, a.f.user(who.user), who.access, store.ListRunsParams{OwnerUsername: "editor"})
			if err == nil && !slices.ContainsFunc(page.Runs, func(r store.Run) bool { return r.ID == shared.RunID }) {
				t.Errorf("%s naming the owner: %d runs without the shared one", who.name, len(page.Runs))
			}
			return readOutcome(t, err)
		}},
		{"inbox", [12]string{yes, yes, hidden, no, hidden, hidden, no, yes, yes, yes, no, yes}, func(t *testing.T, who accessActor) string {
			items, err := a.f.rt.Inbox(ctx, a.f.user(who.user), who.access)
			if err != nil {
				return readOutcome(t, err)
			}
			i := slices.IndexFunc(items, func(it agent.InboxItem) bool { return it.Run.ID == shared.RunID })
			if i < 0 {
				return hidden
			}
			if it := items[i]; it.Digest != shared.Pending.Digest || len(it.Calls) != 1 || it.Unreadable {
				t.Errorf("inbox item = %+v", it)
			}
			return yes
		}},
		{"pending", [12]string{yes, yes, no, no, no, no, no, yes, yes, yes, no, yes}, func(t *testing.T, who accessActor) string {
			it, err := a.f.rt.Pending(ctx, a.f.user(who.user), who.access, shared.RunID)
			if err == nil && (it.Run.ID != shared.RunID || it.Digest != shared.Pending.Digest || len(it.Calls) != 1 || it.Calls[0].Name != "update_page_title") {
				t.Errorf("pending = %+v", it)
			}
			return readOutcome(t, err)
		}},
		// What each may decide on the waiting write, as the inbox and the
		// chat show it: the rule of Approve, read out.
		{"rights", [12]string{yes, yes, no, no, no, no, no, denyOnly, none, denyOnly, no, none}, func(t *testing.T, who accessActor) string {
			r, err := a.f.rt.Rights(ctx, a.f.user(who.user), who.access, shared.RunID)
			switch {
			case err != nil:
				return readOutcome(t, err)
			case r.MayApprove && r.MayDeny && r.Reason == "":
				return yes
			case !r.MayApprove && r.MayDeny && r.Reason == agent.RefusedApproverNotPermitted:
				return denyOnly
			case !r.MayApprove && !r.MayDeny && r.Reason == agent.RefusedAccessDenied:
				return none
			}
			t.Errorf("rights = %+v", r)
			return ""
		}},
		{"cancel", [12]string{yes, yes, no, no, no, no, no, yes, no, no, yes, no}, func(t *testing.T, who accessActor) string {
			res := a.wait(t, "update_page_title")
			won, err := a.f.rt.Cancel(ctx, a.f.user(who.user), who.access, res.RunID)
			want := store.RunWaitingForApproval
			if err == nil {
				want = store.RunCancelled
				if !won {
					t.Error("the only cancel did not win")
				}
			}
			if got := a.f.run(res.RunID).Status; got != want {
				t.Errorf("status after the cancel = %s, want %s", got, want)
			}
			return readOutcome(t, err)
		}},
		{"approve-read", [12]string{yes, yes, no, no, no, no, no, yes, no, yes, no, no}, func(t *testing.T, who accessActor) string {
			return a.decide(t, who, "read_flagged", true)
		}},
		{"approve-write", [12]string{yes, yes, no, no, no, no, no, notPerm, no, notPerm, no, no}, func(t *testing.T, who accessActor) string {
			return a.decide(t, who, "update_page_title", true)
		}},
		{"deny", [12]string{yes, yes, no, no, no, no, no, yes, no, yes, no, no}, func(t *testing.T, who accessActor) string {
			return a.decide(t, who, "update_page_title", false)
		}},
		{"input", [12]string{yes, yes, no, no, no, no, no, notPerm, no, notPerm, no, no}, func(t *testing.T, who accessActor) string {
			return a.input(t, who)
		}},
	}
	for _, op := range ops {
		for i, who := range accessActors {
			t.Run(op.name+"/"+who.name, func(t *testing.T) {
				if got := op.do(t, who); got != op.want[i] {
					t.Errorf("%s by %s: %s, want %s", op.name, who.name, got, op.want[i])
				}
			})
		}
	}
}

func readOutcome(t *testing.T, err error) string {
	t.Helper()
	switch {
	case err == nil:
		return yes
	case errors.Is(err, agent.ErrAccessDenied):
		return no
	default:
		t.Fatalf("unexpected error: %v", err)
		return ""
	}
}

func decisionOutcome(t *testing.T, err error) string {
	t.Helper()
	switch code := refusal(err); {
	case err == nil:
		return yes
	case code == agent.RefusedAccessDenied:
		return no
	case code == agent.RefusedApproverNotPermitted:
		return notPerm
	default:
		t.Fatalf("unexpected error: %v", err)
		return ""
	}
}

// decide approves or denies a fresh run waiting on a call of name and
// checks what ran: on success the turn ran as the owner (a denial ran
// nothing) and the decision names the token; on a refusal nothing ran and
// the run waits again.
func (a *accessCase) decide(t *testing.T, who accessActor, name string, approved bool) string {
	res := a.wait(t, name)
	before := len(a.f.events(res.RunID))
	// Only a decision that goes through asks the provider again; an
	// unused round fails the test at cleanup, an extra request at once.
	sees := who.user != "intern" || who.access.Has(store.ScopeAdmin)
	mayPass := who.name == "admin" || who.name == "owner" || (sees && who.access.Has(store.ScopeAgentApprove) && (!approved || name == "read_flagged"))
	if mayPass {
		a.srv.Push(llmtest.Text("Done."))
	}
	out, err := a.f.rt.Approve(context.Background(), agent.ApproveParams{
		RunID: res.RunID, Approver: a.f.user(who.user), Access: who.access, Approved: approved, Digest: res.Pending.Digest,
	})
	got := decisionOutcome(t, err)
	ranAs, ran := a.ran.Load(res.RunID)
	row := a.f.run(res.RunID)
	evs := a.f.events(res.RunID)
	switch got {
	case yes:
		if out.Outcome != agent.OutcomeCompleted || row.Status != store.RunCompleted {
			t.Errorf("decision = %+v, run %s", out, row.Status)
		}
		if approved && ranAs != "editor" || !approved && ran {
			t.Errorf("approved %v: the call ran %v as %v", approved, ran, ranAs)
		}
		d := payloads[agent.DecisionPayload](t, evs, agent.EventDecision)
		if len(d) != 1 || d[0].Approved != approved || d[0].DecidedBy != who.user || d[0].Token != who.access.Token {
			t.Errorf("decision event = %+v", d)
		}
	case notPerm:
		// Refused after the claim: released, with a refused event.
		r := payloads[agent.RefusedPayload](t, evs, agent.EventRefused)
		if ran || row.Status != store.RunWaitingForApproval || row.LeaseOwner != "" || len(r) != 1 || r[0].Reason != agent.RefusedApproverNotPermitted {
			t.Errorf("after approver_not_permitted: ran %v, run %+v, refused %+v", ran, row, r)
		}
	default:
		// Refused before the claim: nothing changed.
		if ran || row.Status != store.RunWaitingForApproval || len(evs) != before {
			t.Errorf("after a refusal before the claim: ran %v, run %s, %d events (was %d)", ran, row.Status, len(evs), before)
		}
	}
	return got
}

// input answers a fresh run waiting for input; service tokens and
// strangers are refused before anything is claimed.
func (a *accessCase) input(t *testing.T, who accessActor) string {
	res := a.wait(t, "ask_editor")
	before := len(a.f.events(res.RunID))
	if who.name == "admin" || who.name == "owner" {
		a.srv.Push(llmtest.Text("Done."))
	}
	out, err := a.f.rt.SubmitInput(context.Background(), agent.SubmitInputParams{
		RunID: res.RunID, Submitter: a.f.user(who.user), Access: who.access, Data: json.RawMessage(`{"choice":"a"}`), Digest: res.Pending.Digest,
	})
	got := decisionOutcome(t, err)
	ranAs, ran := a.ran.Load(res.RunID)
	row := a.f.run(res.RunID)
	if got == yes {
		if out.Outcome != agent.OutcomeCompleted || ranAs != "editor" {
			t.Errorf("input = %+v, ran as %v", out, ranAs)
		}
	} else if ran || row.Status != store.RunWaitingForInput || len(a.f.events(res.RunID)) != before {
		t.Errorf("after a refused input: ran %v, run %s", ran, row.Status)
	}
	return got
}

// TestPending: the pending turn of one run, for the chat's card: an
// approval turn with its digest, an input turn with its schema, a run
// that no longer waits with only the row, a corrupt state as Unreadable.
func TestPending(t *testing.T) {
	t.Parallel()
	a := newAccessCase(t, "")
	ctx := context.Background()
	editor := a.f.user("editor")

	appr := a.wait(t, "update_page_title")
	it, err := a.f.rt.Pending(ctx, editor, agent.Access{}, appr.RunID)
	if err != nil || it.Digest != appr.Pending.Digest || len(it.Calls) != 1 || it.Input != "" || it.Unreadable {
		t.Errorf("approval turn = %+v, %v", it, err)
	}

	in := a.wait(t, "ask_editor")
	it, err = a.f.rt.Pending(ctx, editor, agent.Access{}, in.RunID)
	if err != nil || it.Digest != in.Pending.Digest || it.Input != "ask_editor" || string(it.Schema) != string(in.Pending.InputSchema) || it.Run.Status != store.RunWaitingForInput {
		t.Errorf("input turn = %+v, %v", it, err)
	}

	if _, err := a.f.rt.Cancel(ctx, editor, agent.Access{}, in.RunID); err != nil {
		t.Fatal(err)
	}
	it, err = a.f.rt.Pending(ctx, editor, agent.Access{}, in.RunID)
	if err != nil || it.Run.Status != store.RunCancelled || it.Calls != nil || it.Digest != "" || it.Input != "" || it.Unreadable {
		t.Errorf("a cancelled run = %+v, %v", it, err)
	}

	a.f.exec(`UPDATE runs SET suspended_state = 'not a sealed state' WHERE id = '` + appr.RunID + `'`)
	it, err = a.f.rt.Pending(ctx, editor, agent.Access{}, appr.RunID)
	if err != nil || !it.Unreadable || it.Calls != nil || it.Run.ID != appr.RunID {
		t.Errorf("a corrupt state = %+v, %v", it, err)
	}

	if _, err := a.f.rt.Pending(ctx, editor, agent.Access{}, "no-such-run"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a missing run: %v", err)
	}
}
