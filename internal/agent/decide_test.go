package agent_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // "pgx" driver for the raw connection

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/dbtest"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/secret"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
)

// forStores runs fn on SQLite and, when configured, PostgreSQL.
func forStores(t *testing.T, fn func(t *testing.T, dsn func(testing.TB) string)) {
	for _, db := range []struct {
		name string
		dsn  func(testing.TB) string
	}{
		{"sqlite", func(testing.TB) string { return "" }},
		{"postgres", func(tb testing.TB) string { return dbtest.Postgres(tb) }},
	} {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			fn(t, db.dsn)
		})
	}
}

// rawDB opens the fixture's store database directly, for what a test
// must do behind the store's back (corrupt a row, make a write fail).
func (f *fixture) rawDB() *sql.DB {
	f.t.Helper()
	driver, dsn := "pgx", f.dsn
	if path, ok := strings.CutPrefix(f.dsn, "sqlite:"); ok {
		driver, dsn = "sqlite", path
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = db.Close() })
	return db
}

func (f *fixture) exec(q string) {
	f.t.Helper()
	if _, err := f.rawDB().ExecContext(context.Background(), q); err != nil {
		f.t.Fatalf("%s: %v", q, err)
	}
}

// approvalCase is a run of the editor waiting for approval of a turn with
// a read and a write, whose provider answers "Renamed." afterwards.
type approvalCase struct {
	f      *fixture
	writer *testTool
	srv    *llmtest.Server
	res    agent.Result
	// actors records who each write ran as; fence the row as the write
	// saw it.
	actors *sync.Map
	fence  atomic.Value
}

func newApprovalCase(t *testing.T, dsn string, configExtra string, continues bool) *approvalCase {
	t.Helper()
	c := &approvalCase{actors: &sync.Map{}}
	c.writer = newTestTool("update_page_title", tool.GroupContent, tool.EditorContent, func(s *tool.Spec) { s.Effect = tool.NonIdempotentWrite })
	c.writer.run = func(ctx context.Context, call tool.Call, _ map[string]any) (tool.Result, error) {
		c.actors.Store(call.Actor.Username, true)
		if row, err := c.f.st.Run(ctx, call.RunID); err == nil {
			c.fence.Store(row)
		}
		return tool.Text("title updated"), nil
	}
	c.f = newFixture(t, fixtureParams{extra: []tool.Tool{c.writer}, storeDSN: dsn})
	rounds := []llmtest.Round{llmtest.Calls(llmtest.Call("call_1", "search_records", `{"query":"Aqua"}`), llmtest.Call("call_2", "update_page_title", `{}`))}
	if continues {
		rounds = append(rounds, llmtest.Text("Renamed."))
	}
	c.srv = llmtest.NewOpenAI(t, rounds...)
	c.f.apply(providerDoc("writer", "openai", "externalGlobal", c.srv, 0, configExtra))
	c.res = c.f.rt.Run(context.Background(), c.f.request("writer", "editor", "Rename page 6."))
	if c.res.Outcome != agent.OutcomeAwaitingApproval {
		t.Fatalf("setup: %+v", c.res)
	}
	return c
}

func (c *approvalCase) approve(as string, approved bool, digest string) (agent.Result, error) {
	return c.f.rt.Approve(context.Background(), agent.ApproveParams{
		RunID: c.res.RunID, Approver: c.f.user(as), Approved: approved, Digest: digest,
	})
}

func refusal(err error) agent.RefusalCode {
	var re *agent.RefusedError
	if errors.As(err, &re) {
		return re.Code
	}
	return ""
}

// checkStillWaiting fails unless the run waits for approval with its
// state and nothing of the turn ran.
func (c *approvalCase) checkStillWaiting(t *testing.T) {
	t.Helper()
	run := c.f.run(c.res.RunID)
	if run.Status != store.RunWaitingForApproval || !run.HasSuspendedState || run.LeaseOwner != "" || run.ToolCalls != 0 {
		t.Errorf("run after a refusal = %+v", run)
	}
	if n := c.writer.calls.Load(); n != 0 {
		t.Errorf("the write ran %d time(s)", n)
	}
	if n := len(c.srv.Requests()); n != 1 {
		t.Errorf("%d provider requests; nothing may run after a refusal", n)
	}
}

// TestApproveRunsAsOwner: an admin approves an editor's turn; the write
// runs once, as the editor, through the fence, after the decision event.
func TestApproveRunsAsOwner(t *testing.T) {
	forStores(t, func(t *testing.T, dsn func(testing.TB) string) {
		c := newApprovalCase(t, dsn(t), "", true)
		res, err := c.approve("admin", true, c.res.Pending.Digest)
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcome != agent.OutcomeCompleted || res.Content != "Renamed." || res.RunID != c.res.RunID || res.ToolCalls != 2 || res.Rounds != 2 {
			t.Fatalf("result = %+v", res)
		}
		if c.writer.calls.Load() != 1 {
			t.Errorf("the write ran %d times", c.writer.calls.Load())
		}
		if _, ok := c.actors.Load("editor"); !ok {
			t.Error("the write did not run as the run's owner")
		}
		if _, ok := c.actors.Load("admin"); ok {
			t.Error("the write ran as the approver")
		}
		// The fence: the row was leased by the resuming segment and held
		// the pending effect while the write ran.
		if row, _ := c.fence.Load().(store.Run); row.PendingEffect != "non_idempotent_write" || !strings.HasPrefix(row.LeaseOwner, "resume:") || row.Status != store.RunRunning {
			t.Errorf("row during the write = %+v", row)
		}
		evs := c.f.events(res.RunID)
		checkSeq(t, evs)
		if got := kinds(evs); got != "context request llm approval decision tool tool context request llm" {
			t.Errorf("events: %s", got)
		}
		d := payloads[agent.DecisionPayload](t, evs, agent.EventDecision)
		if len(d) != 1 || !d[0].Approved || d[0].DecidedBy != "admin" {
			t.Errorf("decision: %+v", d)
		}
		run := c.f.run(res.RunID)
		if run.Status != store.RunCompleted || run.PendingEffect != "" || run.HasSuspendedState || run.ToolCalls != 2 {
			t.Errorf("run = %+v", run)
		}
		// The model read both results.
		msgs := messages(t, c.srv.Requests()[1])
		if last := msgs[len(msgs)-1]; last["content"] != "title updated" {
			t.Errorf("last message of the second request = %v", last)
		}
	})
}

// TestApproveRace: two approvers at once; exactly one wins and the write
// runs once.
func TestApproveRace(t *testing.T) {
	forStores(t, func(t *testing.T, dsn func(testing.TB) string) {
		c := newApprovalCase(t, dsn(t), "", true)
		var wins, refused atomic.Int64
		var wg sync.WaitGroup
		for _, who := range []string{"admin", "editor", "admin", "editor"} {
			wg.Go(func() {
				_, err := c.approve(who, true, c.res.Pending.Digest)
				switch code := refusal(err); {
				case err == nil:
					wins.Add(1)
				case code == agent.RefusedAlreadyResuming || code == agent.RefusedNotWaiting:
					refused.Add(1)
				default:
					t.Errorf("a losing approval: %v", err)
				}
			})
		}
		wg.Wait()
		if wins.Load() != 1 || refused.Load() != 3 {
			t.Errorf("%d won, %d refused; want exactly one winner", wins.Load(), refused.Load())
		}
		if c.writer.calls.Load() != 1 {
			t.Errorf("the write ran %d times", c.writer.calls.Load())
		}
		if d := payloads[agent.DecisionPayload](t, c.f.events(c.res.RunID), agent.EventDecision); len(d) != 1 {
			t.Errorf("%d decisions stored", len(d))
		}
	})
}

// TestApproveStaleDigest: a stale or missing digest is refused after the
// claim, the run is released with a refused event, and nothing runs.
func TestApproveStaleDigest(t *testing.T) {
	forStores(t, func(t *testing.T, dsn func(testing.TB) string) {
		c := newApprovalCase(t, dsn(t), "", true)
		for _, digest := range []string{"", strings.Repeat("0", 64), c.res.Pending.Digest[:63] + "x"} {
			if _, err := c.approve("admin", true, digest); refusal(err) != agent.RefusedStaleTurn {
				t.Errorf("digest %q: %v, want stale_turn", digest, err)
			}
			// A denial faces the digest too.
			if _, err := c.approve("editor", false, digest); refusal(err) != agent.RefusedStaleTurn {
				t.Errorf("denial with digest %q: %v, want stale_turn", digest, err)
			}
		}
		c.checkStillWaiting(t)
		r := payloads[agent.RefusedPayload](t, c.f.events(c.res.RunID), agent.EventRefused)
		if len(r) != 6 || r[0].Reason != agent.RefusedStaleTurn || r[0].By != "admin" {
			t.Errorf("refused events: %+v", r)
		}
		checkSeq(t, c.f.events(c.res.RunID))
		// The right digest still works afterwards.
		if res, err := c.approve("admin", true, c.res.Pending.Digest); err != nil || res.Outcome != agent.OutcomeCompleted {
			t.Fatalf("approval after refusals: %+v, %v", res, err)
		}
	})
}

// TestApproveChecksInOrder: the checks before the claim leave the row
// untouched: the wrong status, a user without the right, four-eyes.
func TestApproveChecksInOrder(t *testing.T) {
	forStores(t, testApproveChecksInOrder)
}

func testApproveChecksInOrder(t *testing.T, dsn func(testing.TB) string) {
	c := newApprovalCase(t, dsn(t), "require_second_approver: true", true)
	// What each may decide, read out by the same rule: the initiator may
	// deny only, the second person both, a stranger nothing.
	ctx := context.Background()
	for _, w := range []struct {
		user string
		want agent.Rights
	}{
		{"editor", agent.Rights{MayDeny: true, Reason: agent.RefusedSelfApproval}},
		{"admin", agent.Rights{MayApprove: true, MayDeny: true}},
	} {
		if got, err := c.f.rt.Rights(ctx, c.f.user(w.user), agent.Access{}, c.res.RunID); err != nil || got != w.want {
			t.Errorf("rights of %s = %+v, %v, want %+v", w.user, got, err, w.want)
		}
	}
	if _, err := c.f.rt.Rights(ctx, c.f.user("intern"), agent.Access{}, c.res.RunID); !errors.Is(err, agent.ErrAccessDenied) {
		t.Errorf("rights of a stranger: %v, want ErrAccessDenied", err)
	}
	if _, err := c.approve("intern", true, c.res.Pending.Digest); refusal(err) != agent.RefusedAccessDenied {
		t.Errorf("another editor: %v, want run_access_denied", err)
	}
	// The right comes before the digest: a stranger learns nothing.
	if _, err := c.approve("intern", true, ""); refusal(err) != agent.RefusedAccessDenied {
		t.Errorf("another editor without digest: %v, want run_access_denied", err)
	}
	// Four-eyes: the initiator may not approve, even with the right digest.
	if _, err := c.approve("editor", true, c.res.Pending.Digest); refusal(err) != agent.RefusedSelfApproval {
		t.Errorf("self-approval: %v, want self_approval_denied", err)
	}
	c.checkStillWaiting(t)
	if evs := c.f.events(c.res.RunID); kinds(evs) != "context request llm approval" {
		t.Errorf("a check before the claim wrote events: %s", kinds(evs))
	}
	// … but may deny: the calls are answered "denied by the operator".
	res, err := c.approve("editor", false, c.res.Pending.Digest)
	if err != nil || res.Outcome != agent.OutcomeCompleted {
		t.Fatalf("self-denial: %+v, %v", res, err)
	}
	if c.writer.calls.Load() != 0 {
		t.Error("a denied write ran")
	}
	msgs := messages(t, c.srv.Requests()[1])
	for _, m := range msgs[len(msgs)-2:] {
		if m["role"] != "tool" || !strings.Contains(m["content"].(string), "denied by the operator") {
			t.Errorf("answer to a denied call: %v", m)
		}
	}
	if _, err := c.approve("admin", true, c.res.Pending.Digest); refusal(err) != agent.RefusedNotWaiting {
		t.Errorf("a decision on a finished run: %v, want run_not_waiting", err)
	}
}

// TestApproveFourEyesSecondPerson: under four-eyes an admin who is not
// the initiator approves.
func TestApproveFourEyesSecondPerson(t *testing.T) {
	forStores(t, testApproveFourEyesSecondPerson)
}

func testApproveFourEyesSecondPerson(t *testing.T, dsn func(testing.TB) string) {
	c := newApprovalCase(t, dsn(t), "require_second_approver: true", true)
	res, err := c.approve("admin", true, c.res.Pending.Digest)
	if err != nil || res.Outcome != agent.OutcomeCompleted || c.writer.calls.Load() != 1 {
		t.Fatalf("second-person approval: %+v, %v (writes %d)", res, err, c.writer.calls.Load())
	}
}

// TestApproveApproverGateDenies: the write tool was disabled since the
// turn was suspended, so the approver's own gate denies it: refused as
// the tool's unavailability (not the approver's), released, nothing runs.
func TestApproveApproverGateDenies(t *testing.T) {
	forStores(t, func(t *testing.T, dsn func(testing.TB) string) {
		c := newApprovalCase(t, dsn(t), "", false)
		if _, err := c.f.gate.Availability().SetTool(context.Background(), gate.SetToolParams{Name: "update_page_title", Enabled: false, By: "test"}); err != nil {
			t.Fatal(err)
		}
		_, err := c.approve("admin", true, c.res.Pending.Digest)
		if refusal(err) != agent.RefusedToolUnavailable || !strings.Contains(err.Error(), "update_page_title is disabled") {
			t.Fatalf("approval of a disabled write: %v, want tool_unavailable naming the tool", err)
		}
		c.checkStillWaiting(t)
	})
}

// TestApproveNotAuditable: when the decision event cannot be stored, the
// write never runs and the run waits again.
func TestApproveNotAuditable(t *testing.T) {
	forStores(t, func(t *testing.T, dsn func(testing.TB) string) {
		c := newApprovalCase(t, dsn(t), "", false)
		if strings.HasPrefix(c.f.dsn, "sqlite:") {
			c.f.exec(`CREATE TRIGGER refuse_decision BEFORE INSERT ON run_events WHEN NEW.kind = 'decision'
				BEGIN SELECT RAISE(ABORT, 'decisions refused'); END`)
		} else {
			c.f.exec(`CREATE FUNCTION refuse_decision() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN IF NEW.kind = 'decision' THEN RAISE EXCEPTION 'decisions refused'; END IF; RETURN NEW; END $$;
				CREATE TRIGGER refuse_decision BEFORE INSERT ON run_events FOR EACH ROW EXECUTE FUNCTION refuse_decision()`)
		}
		if _, err := c.approve("admin", true, c.res.Pending.Digest); refusal(err) != agent.RefusedNotAuditable {
			t.Fatalf("approval without its event: %v, want approval_not_auditable", err)
		}
		c.checkStillWaiting(t)
		if r := payloads[agent.RefusedPayload](t, c.f.events(c.res.RunID), agent.EventRefused); len(r) != 1 || r[0].Reason != agent.RefusedNotAuditable {
			t.Errorf("refused events: %+v", r)
		}
	})
}

// TestApproveCorruptState: a corrupt state, or a state sealed with
// another key, is refused and the row stays as it was.
func TestApproveCorruptState(t *testing.T) {
	forStores(t, testApproveCorruptState)
}

func testApproveCorruptState(t *testing.T, dsn func(testing.TB) string) {
	c := newApprovalCase(t, dsn(t), "", false)
	key, err := secret.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	other, err := secret.NewKeyring(key)
	if err != nil {
		t.Fatal(err)
	}
	rt2, err := agent.New(agent.Params{Gate: c.f.gate, Store: c.f.st, Providers: c.f.providers, Telemetry: c.f.tel, Keyring: other,
		Now: fixedNow, Configs: c.f.cfgs, Users: c.f.tsite})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := c.f.st.RunSuspendedState(context.Background(), c.res.RunID)
	_, err = rt2.Approve(context.Background(), agent.ApproveParams{RunID: c.res.RunID, Approver: c.f.user("admin"), Approved: true, Digest: c.res.Pending.Digest})
	if refusal(err) != agent.RefusedCorruptState {
		t.Errorf("wrong key: %v, want corrupt_suspended_state", err)
	}
	c.checkStillWaiting(t)
	if after, _ := c.f.st.RunSuspendedState(context.Background(), c.res.RunID); after != before {
		t.Error("a refused decision changed the sealed state")
	}
	c.f.exec(`UPDATE runs SET suspended_state = 'not a sealed state' WHERE id = '` + c.res.RunID + `'`)
	if _, err := c.approve("admin", true, c.res.Pending.Digest); refusal(err) != agent.RefusedCorruptState {
		t.Errorf("corrupt state: %v, want corrupt_suspended_state", err)
	}
	c.checkStillWaiting(t)
	if after, _ := c.f.st.RunSuspendedState(context.Background(), c.res.RunID); after != "not a sealed state" {
		t.Errorf("the corrupt state was changed to %q", after)
	}
}

// TestSubmitInput: an invalid answer is refused before the claim and can
// be resubmitted; only the schema's keys are overlaid.
func TestSubmitInput(t *testing.T) {
	forStores(t, func(t *testing.T, dsn func(testing.TB) string) {
		schema := json.RawMessage(`{"type":"object","properties":{"choice":{"type":"string","enum":["a","b"]}},"required":["choice"]}`)
		var got atomic.Value
		ask := newTestTool("ask_editor", tool.GroupContent, tool.EditorContent, func(s *tool.Spec) { s.InputRequest = schema })
		ask.run = func(_ context.Context, _ tool.Call, args map[string]any) (tool.Result, error) {
			b, _ := json.Marshal(args)
			got.Store(string(b))
			return tool.Text("noted"), nil
		}
		f := newFixture(t, fixtureParams{extra: []tool.Tool{ask}, storeDSN: dsn(t)})
		srv := llmtest.NewOpenAI(t, llmtest.Calls(llmtest.Call("c1", "ask_editor", `{"choice":"b","note":"keep"}`)), llmtest.Text("Variant chosen."))
		f.apply(providerDoc("asking", "openai", "externalGlobal", srv, 0, ""))
		res := f.rt.Run(context.Background(), f.request("asking", "editor", "Which variant?"))
		if res.Outcome != agent.OutcomeAwaitingInput {
			t.Fatalf("setup: %+v", res)
		}
		submit := func(data, digest string) (agent.Result, error) {
			return f.rt.SubmitInput(context.Background(), agent.SubmitInputParams{
				RunID: res.RunID, Submitter: f.user("editor"), Data: json.RawMessage(data), Digest: digest,
			})
		}
		before := len(f.events(res.RunID))
		for _, bad := range []string{`{"choice":"c"}`, `{}`, `[1]`, `nope`} {
			if _, err := submit(bad, res.Pending.Digest); refusal(err) != agent.RefusedInvalidInput {
				t.Errorf("answer %s: %v, want invalid_input", bad, err)
			}
		}
		if run := f.run(res.RunID); run.Status != store.RunWaitingForInput || !run.HasSuspendedState || len(f.events(res.RunID)) != before {
			t.Errorf("an invalid answer changed the run: %+v", run)
		}
		if _, err := submit(`{"choice":"a"}`, "stale"); refusal(err) != agent.RefusedStaleTurn {
			t.Errorf("stale digest: %v", err)
		}
		out, err := submit(`{"choice":"a","note":"smuggled","extra":1}`, res.Pending.Digest)
		if err != nil || out.Outcome != agent.OutcomeCompleted || out.Content != "Variant chosen." {
			t.Fatalf("valid answer: %+v, %v", out, err)
		}
		if got.Load() != `{"choice":"a","note":"keep"}` {
			t.Errorf("the tool got %v; want the person's choice over the model's, other keys the model's", got.Load())
		}
		evs := f.events(res.RunID)
		checkSeq(t, evs)
		in := payloads[agent.InputSubmittedPayload](t, evs, agent.EventInputSubmitted)
		if len(in) != 1 || in[0].SubmittedBy != "editor" || in[0].Tool != "ask_editor" {
			t.Errorf("input events: %+v", in)
		}
		for _, e := range evs {
			if strings.Contains(string(e.Payload), "smuggled") {
				t.Errorf("event %d holds the answer's values", e.Seq)
			}
		}
	})
}

// TestCancelEventsStatusInbox covers the readouts and Cancel.
func TestCancelEventsStatusInbox(t *testing.T) {
	c := newApprovalCase(t, "", "", false)
	ctx := context.Background()
	editor, admin, intern := c.f.user("editor"), c.f.user("admin"), c.f.user("intern")
	for _, who := range []string{"editor", "admin"} {
		items, err := c.f.rt.Inbox(ctx, c.f.user(who), agent.Access{})
		if err != nil || len(items) != 1 || items[0].Digest != c.res.Pending.Digest || len(items[0].Calls) != 2 || items[0].Calls[1].Name != "update_page_title" {
			t.Errorf("inbox of %s = %+v, %v", who, items, err)
		}
	}
	if items, err := c.f.rt.Inbox(ctx, intern, agent.Access{}); err != nil || len(items) != 0 {
		t.Errorf("inbox of another editor = %+v, %v", items, err)
	}
	evs, err := c.f.rt.Events(ctx, editor, agent.Access{}, c.res.RunID, 1)
	if err != nil || len(evs) != 2 || evs[0].Seq != 2 || evs[1].Seq != 3 {
		t.Errorf("Events(after 1) = %v, %v", seqs(evs), err)
	}
	if _, err := c.f.rt.Events(ctx, intern, agent.Access{}, c.res.RunID, -1); !errors.Is(err, agent.ErrAccessDenied) {
		t.Errorf("Events for another editor: %v", err)
	}
	st, err := c.f.rt.Status(ctx, admin, agent.Access{}, c.res.RunID)
	if err != nil || st.Status != store.RunWaitingForApproval || !st.HasSuspendedState {
		t.Errorf("Status = %+v, %v", st, err)
	}
	if _, err := c.f.rt.Cancel(ctx, intern, agent.Access{}, c.res.RunID); !errors.Is(err, agent.ErrAccessDenied) {
		t.Errorf("Cancel by another editor: %v", err)
	}
	var wins atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			won, err := c.f.rt.Cancel(ctx, editor, agent.Access{}, c.res.RunID)
			if err != nil {
				t.Error(err)
			}
			if won {
				wins.Add(1)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Errorf("%d cancels won", wins.Load())
	}
	if run := c.f.run(c.res.RunID); run.Status != store.RunCancelled || run.HasSuspendedState || run.TerminationReason != "cancelled" {
		t.Errorf("cancelled run = %+v", run)
	}
	if _, err := c.approve("admin", true, c.res.Pending.Digest); refusal(err) != agent.RefusedNotWaiting {
		t.Errorf("approval of a cancelled run: %v", err)
	}
}

func seqs(evs []store.RunEvent) []int64 {
	out := make([]int64, len(evs))
	for i, e := range evs {
		out[i] = e.Seq
	}
	return out
}

// TestWriteStepNotRecorded: a write whose step cannot be stored fails the
// run; the write ran once and nothing more is called.
func TestWriteStepNotRecorded(t *testing.T) {
	c := newApprovalCase(t, "", "", false)
	c.f.exec(`CREATE TRIGGER refuse_write_step BEFORE INSERT ON run_events
		WHEN NEW.kind = 'tool' AND NEW.payload LIKE '%update_page_title%' BEGIN SELECT RAISE(ABORT, 'refused'); END`)
	res, err := c.approve("admin", true, c.res.Pending.Digest)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != agent.OutcomeFailed || !strings.Contains(res.Error, "could not be recorded") || c.writer.calls.Load() != 1 {
		t.Fatalf("result = %+v (writes %d)", res, c.writer.calls.Load())
	}
	if n := len(c.srv.Requests()); n != 1 {
		t.Errorf("%d provider requests after an unrecorded write", n)
	}
	if run := c.f.run(res.RunID); run.Status != store.RunFailed {
		t.Errorf("run = %+v", run)
	}
}

// previewTool is a write tool that can preview its calls.
type previewTool struct {
	*testTool
	preview func(call tool.Call, args map[string]any) ([]string, error)
}

func (p *previewTool) Preview(_ context.Context, call tool.Call, args map[string]any) ([]string, error) {
	return p.preview(call, args)
}

// TestPreviews: at suspend, tools that can preview say what the calls
// would do, as the run's actor; a failing preview is one failed line; the
// previews are kept with the turn and shown in the inbox.
func TestPreviews(t *testing.T) {
	write := func(s *tool.Spec) { s.Effect = tool.IdempotentWrite }
	good := &previewTool{testTool: newTestTool("rename_page", tool.GroupContent, tool.EditorContent, write)}
	good.preview = func(call tool.Call, args map[string]any) ([]string, error) {
		lines := []string{"as " + call.Actor.Username + ": page 6 title → " + args["title"].(string), strings.Repeat("x", 900)}
		for range 30 {
			lines = append(lines, "more")
		}
		return lines, nil
	}
	bad := &previewTool{testTool: newTestTool("delete_page", tool.GroupContent, tool.EditorContent, write)}
	bad.preview = func(tool.Call, map[string]any) ([]string, error) { panic("boom") }
	f := newFixture(t, fixtureParams{extra: []tool.Tool{good, bad}})
	srv := llmtest.NewOpenAI(t, llmtest.Calls(
		llmtest.Call("c1", "search_records", `{"query":"Aqua"}`),
		llmtest.Call("c2", "rename_page", `{"title":"Aqua 200"}`),
		llmtest.Call("c3", "delete_page", `{}`),
	))
	f.apply(providerDoc("writer", "openai", "externalGlobal", srv, 0, ""))
	res := f.rt.Run(context.Background(), f.request("writer", "editor", "Rename page 6."))
	if res.Outcome != agent.OutcomeAwaitingApproval {
		t.Fatalf("result = %+v", res)
	}
	pv := res.Pending.Previews
	if len(pv) != 2 || pv[0].Index != 1 || pv[0].Tool != "rename_page" || pv[0].Failed || len(pv[0].Lines) != agent.MaxPreviewLines ||
		pv[0].Lines[0] != "as editor: page 6 title → Aqua 200" || len(pv[0].Lines[1]) != agent.MaxPreviewLineLen {
		t.Errorf("preview of rename_page = %+v", pv)
	}
	if len(pv) == 2 && (!pv[1].Failed || pv[1].Index != 2 || len(pv[1].Lines) != 1) {
		t.Errorf("preview of a panicking tool = %+v", pv[1])
	}
	if good.calls.Load()+bad.calls.Load() != 0 {
		t.Error("a preview ran the tool")
	}
	items, err := f.rt.Inbox(context.Background(), f.user("admin"), agent.Access{})
	if err != nil || len(items) != 1 || len(items[0].Previews) != 2 || items[0].Previews[0].Lines[0] != pv[0].Lines[0] {
		t.Errorf("inbox = %+v, %v", items, err)
	}
}

// TestApproveRegatesOnResume: a read tool disabled since the suspension
// is not offered on resume: its call is answered "no longer permitted"
// while the approved write runs.
func TestApproveRegatesOnResume(t *testing.T) {
	c := newApprovalCase(t, "", "", true)
	if _, err := c.f.gate.Availability().SetTool(context.Background(), gate.SetToolParams{Name: "search_records", Enabled: false, By: "test"}); err != nil {
		t.Fatal(err)
	}
	res, err := c.approve("admin", true, c.res.Pending.Digest)
	if err != nil || res.Outcome != agent.OutcomeCompleted || c.writer.calls.Load() != 1 {
		t.Fatalf("approval = %+v, %v", res, err)
	}
	msgs := messages(t, c.srv.Requests()[1])
	first := msgs[len(msgs)-2]
	if first["tool_call_id"] != "call_1" || !strings.Contains(first["content"].(string), "no longer permitted") {
		t.Errorf("answer to the disabled read = %v", first)
	}
}

// switchProvider is a registry provider whose tools a test swaps, as an
// MCP server's catalogue or approval flag changes while a run waits.
type switchProvider struct {
	mu    sync.Mutex
	tools []tool.Tool
}

func (p *switchProvider) Tools(context.Context) ([]tool.Tool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]tool.Tool(nil), p.tools...), nil
}

func (p *switchProvider) set(ts ...tool.Tool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tools = ts
}

// TestInputWriteUnapproved: a call beside the input call that became
// approval-bound while the run waited for input is refused unrun when the
// input arrives (input is no approval), the model reads why, and the gate
// records write_unapproved.
func TestInputWriteUnapproved(t *testing.T) {
	forStores(t, func(t *testing.T, dsn func(testing.TB) string) {
		ctx := context.Background()
		ask := newTestTool("ask_editor", tool.GroupContent, tool.EditorContent, func(s *tool.Spec) {
			s.InputRequest = json.RawMessage(`{"type":"object","properties":{"choice":{"type":"string"}},"required":["choice"]}`)
		})
		notify := newTestTool("notify_team", tool.GroupContent, tool.EditorContent)
		prov := &switchProvider{tools: []tool.Tool{notify}}
		f := newFixture(t, fixtureParams{extra: []tool.Tool{ask}, providers: []tool.Provider{prov}, storeDSN: dsn(t)})
		srv := llmtest.NewOpenAI(t,
			llmtest.Calls(llmtest.Call("c1", "ask_editor", `{}`), llmtest.Call("c2", "notify_team", `{}`)),
			llmtest.Text("Asked and noted."))
		f.apply(providerDoc("asking", "openai", "externalGlobal", srv, 0, ""))
		res := f.rt.Run(ctx, f.request("asking", "editor", "Ask, then tell the team."))
		if res.Outcome != agent.OutcomeAwaitingInput {
			t.Fatalf("setup: %+v", res)
		}
		// The operator switches approval on for the tool (an MCP server's
		// requires_approval, say) while the run waits.
		bound := newTestTool("notify_team", tool.GroupContent, tool.EditorContent, func(s *tool.Spec) { s.RequiresApproval = true })
		prov.set(bound)
		if err := f.reg.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		out, err := f.rt.SubmitInput(ctx, agent.SubmitInputParams{
			RunID: res.RunID, Submitter: f.user("editor"), Data: json.RawMessage(`{"choice":"a"}`), Digest: res.Pending.Digest,
		})
		if err != nil || out.Outcome != agent.OutcomeCompleted {
			t.Fatalf("input: %+v, %v", out, err)
		}
		if ask.calls.Load() != 1 || notify.calls.Load()+bound.calls.Load() != 0 {
			t.Errorf("calls: ask %d, notify %d; the unapproved call must not run", ask.calls.Load(), notify.calls.Load()+bound.calls.Load())
		}
		msgs := messages(t, srv.Requests()[1])
		if last := msgs[len(msgs)-1]; last["tool_call_id"] != "c2" || !strings.Contains(last["content"].(string), "needs an approval") {
			t.Errorf("answer to the unapproved call = %v", last)
		}
		tools := payloads[agent.ToolPayload](t, f.events(res.RunID), agent.EventTool)
		if len(tools) != 2 || tools[0].IsError || tools[1].Tool != "notify_team" || !tools[1].IsError {
			t.Errorf("tool events = %+v", tools)
		}
		evs, err := f.st.GovernanceEvents(ctx, store.ListGovernanceEventsParams{RunID: res.RunID, Kind: gate.EventWriteUnapproved})
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 1 || evs[0].Kind != gate.EventWriteUnapproved || evs[0].Reason != string(gate.ReasonWriteUnapproved) ||
			evs[0].Tool != "notify_team" || evs[0].ActorUsername != "editor" || evs[0].Configuration != "asking" {
			t.Errorf("governance events = %+v", evs)
		}
	})
}
