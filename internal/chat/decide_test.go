package chat_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/chat"
	"github.com/t3agent/t3agent/internal/chat/chattest"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/store"
)

// waitingForApproval runs a turn that stops at a write and returns the
// conversation with its card.
func waitingForApproval(t *testing.T, f *chattest.Fixture, user string) (int64, chat.Page) {
	t.Helper()
	id := f.Start(t, user, "Publish hello")
	f.Drain(t)
	p := page(t, f, user, id)
	if p.Conversation.Status != store.ConversationAwaitingApproval || p.Pending == nil {
		t.Fatalf("setup: %+v, card %+v", p.Conversation, p.Pending)
	}
	return id, p
}

// TestApproveFlow: a turn calls the write tool and waits; the approval is
// recorded, carried out by the worker, the write runs exactly once and
// the answer lands. On both stores.
func TestApproveFlow(t *testing.T) {
	t.Parallel()
	forStores(t, func(t *testing.T, postgres bool) {
		f := setup(t, chattest.Options{Postgres: postgres, Rounds: rounds(
			beside("I will publish it.", publish("c1", "hello")),
			llmtest.Text("Published."),
		)})
		ctx := context.Background()
		ed := f.Users["editor"]
		id, p := waitingForApproval(t, f, "editor")
		runID := p.Conversation.RunID
		if f.WriteCalls() != 0 {
			t.Fatal("the write ran before the approval")
		}
		changes, cancel := f.Service.Changes(id)
		defer cancel()

		v, err := f.Service.Decide(ctx, ed, chat.DecideParams{ID: id, Approve: true, Digest: p.Pending.Digest, Reason: "fine"})
		if err != nil {
			t.Fatal(err)
		}
		c := v.Conversation
		if c.Status != store.ConversationProcessing || c.Decision != store.DecisionApprove || c.DecisionBy != "editor" ||
			c.DecisionDigest != p.Pending.Digest || c.DecisionReason != "fine" || c.RunID != runID || !c.HasPendingDecision() {
			t.Fatalf("recorded decision: %+v", c)
		}
		select {
		case <-changes:
		default:
			t.Error("the decision was not signalled to the subscriber")
		}
		// A second decision, and a retry, find the decision in flight.
		_, err = f.Service.Decide(ctx, ed, chat.DecideParams{ID: id, Approve: false, Digest: p.Pending.Digest})
		wantCode(t, "second decision", err, chat.CodeNotAwaitingApproval, http.StatusConflict)
		_, err = f.Service.Retry(ctx, ed, id)
		wantCode(t, "retry with a decision in flight", err, chat.CodeDecisionInFlight, http.StatusConflict)

		f.Drain(t)
		c = f.Conversation(t, id)
		if c.Status != store.ConversationIdle || c.ConversationState != (store.ConversationState{}) {
			t.Fatalf("after the approval: %+v", c)
		}
		if got := shape(f.Messages(t, id)); got != "user:Publish hello\nassistant[beside]:I will publish it.\nassistant:Published.\n" {
			t.Errorf("messages:\n%s", got)
		}
		if n := f.WriteCalls(); n != 1 {
			t.Errorf("the MCP server saw %d writes, want 1", n)
		}
		if r := run(t, f, runID); r.Status != store.RunCompleted || r.CallerSource != "chat" || r.CallerOperation != "chatTurn" {
			t.Errorf("run: %+v", r)
		}
		// Nothing is left to claim.
		if ok, err := f.Service.ProcessNext(ctx); ok || err != nil {
			t.Errorf("ProcessNext after the drain: %v, %v", ok, err)
		}
	})
}

// TestDenyFlow: a denial with a reason keeps the reason as a user
// message, the run goes on without the write, and the answer lands.
func TestDenyFlow(t *testing.T) {
	f := setup(t, chattest.Options{Rounds: rounds(
		llmtest.Calls(publish("c1", "hello")),
		llmtest.Text("Understood, nothing was published.").WithCheck(func(t testing.TB, r llmtest.Request) {
			if !strings.Contains(string(r.Body), "denied by the operator") {
				t.Errorf("the model was not told of the denial: %s", r.Body)
			}
		}),
	)})
	ctx := context.Background()
	id, p := waitingForApproval(t, f, "editor")
	v, err := f.Service.Decide(ctx, f.Users["editor"], chat.DecideParams{ID: id, Approve: false, Digest: p.Pending.Digest, Reason: "  Not today  "})
	if err != nil {
		t.Fatal(err)
	}
	if c := v.Conversation; c.Decision != store.DecisionDeny || c.DecisionReason != "Not today" {
		t.Fatalf("recorded: %+v", c)
	}
	f.Drain(t)
	c := f.Conversation(t, id)
	if c.Status != store.ConversationIdle || c.ErrorCode != "" {
		t.Fatalf("after the denial: %+v", c)
	}
	if got := shape(f.Messages(t, id)); got != "user:Publish hello\nuser[denyReason]:Not today\nassistant:Understood, nothing was published.\n" {
		t.Errorf("messages:\n%s", got)
	}
	if f.WriteCalls() != 0 {
		t.Errorf("a denied write ran %d times", f.WriteCalls())
	}
}

// TestHandBack: a recorded decision the runtime refuses hands the card
// back on the same run, with the code and without the decision; the
// cause goes to the log only. A good decision afterwards still works.
func TestHandBack(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		config string
		digest func(real string) string
		code   chat.Code
		cause  string
		// before runs after the turn waits, before the decision.
		before   func(t *testing.T, f *chattest.Fixture)
		postgres bool
	}{
		{name: "stale digest", digest: func(string) string { return "stale" }, code: chat.HandBackStaleTurn, cause: "stale_turn"},
		// The MCP server is removed by another process (its own Service
		// on the store) while the turn waits: the approval is refused as
		// the tool's, not the approver's.
		{name: "tool removed elsewhere", digest: func(d string) string { return d },
			code: chat.HandBackToolUnavailable, cause: "tool_unavailable", before: removeMCPServerElsewhere},
		{name: "tool removed elsewhere, postgres", digest: func(d string) string { return d },
			code: chat.HandBackToolUnavailable, cause: "tool_unavailable", before: removeMCPServerElsewhere, postgres: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t, chattest.Options{Postgres: tc.postgres, ConfigYAML: tc.config, Rounds: rounds(
				llmtest.Calls(publish("c1", "hello")),
				llmtest.Text("Understood."),
			)})
			ctx := context.Background()
			ed := f.Users["editor"]
			id, p := waitingForApproval(t, f, "editor")
			if tc.before != nil {
				tc.before(t, f)
			}
			if _, err := f.Service.Decide(ctx, ed, chat.DecideParams{ID: id, Approve: true, Digest: tc.digest(p.Pending.Digest)}); err != nil {
				t.Fatal(err)
			}
			f.Drain(t)
			c := f.Conversation(t, id)
			want := store.ConversationState{RunID: p.Conversation.RunID, ErrorCode: string(tc.code)}
			if c.Status != store.ConversationAwaitingApproval || c.ConversationState != want {
				t.Fatalf("handed back: %s %+v, want awaiting_approval %+v", c.Status, c.ConversationState, want)
			}
			if f.WriteCalls() != 0 {
				t.Error("a refused approval wrote")
			}
			if !strings.Contains(f.Logs.String(), tc.cause) {
				t.Errorf("the log lacks the cause %q", tc.cause)
			}
			if r := run(t, f, c.RunID); r.Status != store.RunWaitingForApproval {
				t.Errorf("run %s after the refusal", r.Status)
			}
			if q := page(t, f, "editor", id); q.Pending == nil || q.Pending.Digest != p.Pending.Digest {
				t.Errorf("the card changed after the hand-back: %+v", q.Pending)
			}
			// The owner may still deny, which the runtime lets through.
			if _, err := f.Service.Decide(ctx, ed, chat.DecideParams{ID: id, Approve: false, Digest: p.Pending.Digest}); err != nil {
				t.Fatal(err)
			}
			f.Drain(t)
			if c := f.Conversation(t, id); c.Status != store.ConversationIdle || c.ErrorCode != "" {
				t.Errorf("after the denial: %+v", c)
			}
		})
	}
}

// TestFourEyes: with require_second_approver the owner is told a second
// person must approve (mayApprove false, mayDeny true, reason
// secondApproverRequired) and an approval is refused before anything is
// recorded; another person approves the run outside the chat, and the
// conversation follows: the write ran once, the answer is appended and
// the conversation is idle — through the maintenance pass, and through
// reading it. On both stores.
func TestFourEyes(t *testing.T) {
	t.Parallel()
	forStores(t, func(t *testing.T, postgres bool) {
		for _, via := range []string{"maintenance", "read"} {
			t.Run(via, func(t *testing.T) {
				f := setup(t, chattest.Options{Postgres: postgres, ConfigYAML: "require_second_approver: true", Rounds: rounds(
					beside("I will publish it.", publish("c1", "hello")),
					llmtest.Text("Published."),
				)})
				ctx := context.Background()
				ed, admin := f.Users["editor"], f.Users["admin"]
				id, p := waitingForApproval(t, f, "editor")
				runID := p.Conversation.RunID
				v := p.View
				if !v.MayDecide || v.MayApprove || !v.MayDeny || v.DecideReason != chat.CodeSecondApproverRequired {
					t.Errorf("the owner's view: mayDecide %v mayApprove %v mayDeny %v reason %q", v.MayDecide, v.MayApprove, v.MayDeny, v.DecideReason)
				}
				if r := p.Pending.Rights; r.MayApprove || !r.MayDeny || r.Reason != agent.RefusedSelfApproval {
					t.Errorf("the card's rights for the owner: %+v", r)
				}
				events := len(runEvents(t, f, runID))

				_, err := f.Service.Decide(ctx, ed, chat.DecideParams{ID: id, Approve: true, Digest: p.Pending.Digest})
				wantCode(t, "the owner's approval", err, chat.CodeSecondApproverRequired, http.StatusForbidden)
				c := f.Conversation(t, id)
				if c.Status != store.ConversationAwaitingApproval || c.ConversationState != (store.ConversationState{RunID: runID}) {
					t.Errorf("the refused approval recorded something: %s %+v", c.Status, c.ConversationState)
				}
				if r := run(t, f, runID); r.Status != store.RunWaitingForApproval || len(runEvents(t, f, runID)) != events {
					t.Errorf("the refused approval reached the run: %s", r.Status)
				}
				if ok, err := f.Service.ProcessNext(ctx); ok || err != nil {
					t.Errorf("a refused approval queued a turn: %v, %v", ok, err)
				}

				// The second person approves the run, outside the chat.
				res, err := f.Runtime.Approve(ctx, agent.ApproveParams{RunID: runID, Approver: admin, Approved: true, Digest: p.Pending.Digest})
				if err != nil || res.Outcome != agent.OutcomeCompleted {
					t.Fatalf("the admin's approval: %+v, %v", res, err)
				}
				if n := f.WriteCalls(); n != 1 {
					t.Errorf("the MCP server saw %d writes, want 1", n)
				}
				switch via {
				case "maintenance":
					rep, err := f.Service.Maintain(ctx)
					if err != nil || rep.Reconciled != 1 {
						t.Errorf("maintenance: %+v, %v", rep, err)
					}
				case "read":
					if q := page(t, f, "editor", id); q.Conversation.Status != store.ConversationIdle || q.Pending != nil || q.MayDecide {
						t.Errorf("read after the approval: %s, card %+v", q.Conversation.Status, q.Pending)
					}
				}
				c = f.Conversation(t, id)
				if c.Status != store.ConversationIdle || c.ConversationState != (store.ConversationState{}) {
					t.Fatalf("after the approval elsewhere: %s %+v", c.Status, c.ConversationState)
				}
				if got := shape(f.Messages(t, id)); got != "user:Publish hello\nassistant[beside]:I will publish it.\nassistant:Published.\n" {
					t.Errorf("messages:\n%s", got)
				}
				// Followed once: another pass changes nothing.
				if n, err := f.Service.Follow(ctx); n != 0 || err != nil {
					t.Errorf("a second follow: %d, %v", n, err)
				}
			})
		}
	})
}

// TestFollowRunsDecidedElsewhere: a conversation waiting on a run that is
// denied, cancelled or removed outside the chat moves on: the denied
// run's answer is appended (idle), a cancelled or vanished run fails the
// conversation with runFinishedOutside. The owner's own denial under
// four-eyes still goes through the chat.
func TestFollowRunsDecidedElsewhere(t *testing.T) {
	f := setup(t, chattest.Options{ConfigYAML: "require_second_approver: true", Rounds: rounds(
		llmtest.Calls(publish("c1", "one")),
		llmtest.Text("Nothing was published."),
		llmtest.Calls(publish("c2", "two")),
		llmtest.Calls(publish("c4", "four")),
		llmtest.Text("As you wish."),
	)})
	ctx := context.Background()
	ed, admin := f.Users["editor"], f.Users["admin"]

	denied, p := waitingForApproval(t, f, "editor")
	if _, err := f.Runtime.Approve(ctx, agent.ApproveParams{RunID: p.Conversation.RunID, Approver: admin, Approved: false, Digest: p.Pending.Digest}); err != nil {
		t.Fatal(err)
	}
	cancelled, q := waitingForApproval(t, f, "editor")
	if _, err := f.Runtime.Cancel(ctx, admin, agent.Access{}, q.Conversation.RunID); err != nil {
		t.Fatal(err)
	}
	// A conversation waiting on a run the store no longer has.
	vc, err := f.Store.CreateConversation(ctx, store.CreateConversationParams{OwnerUID: ed.UID, OwnerUsername: ed.Username, Task: chattest.Task})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Store.ChangeConversation(ctx, store.ChangeConversationParams{ID: vc.ID, From: []store.ConversationStatus{store.ConversationIdle},
		To: store.ConversationAwaitingApproval, KeepMessages: -1, State: store.ConversationState{RunID: "no-such-run"}}); err != nil {
		t.Fatal(err)
	}
	vanished := vc.ID
	if n, err := f.Service.Follow(ctx); n != 3 || err != nil {
		t.Errorf("follow: %d, %v", n, err)
	}
	if c := f.Conversation(t, denied); c.Status != store.ConversationIdle ||
		shape(f.Messages(t, denied)) != "user:Publish hello\nassistant:Nothing was published.\n" {
		t.Errorf("denied elsewhere: %s\n%s", c.Status, shape(f.Messages(t, denied)))
	}
	for _, id := range []int64{cancelled, vanished} {
		if c := f.Conversation(t, id); c.Status != store.ConversationFailed || c.ErrorCode != string(chat.CodeRunFinishedOutside) {
			t.Errorf("conversation %d: %s %+v", id, c.Status, c.ConversationState)
		}
	}

	own, o := waitingForApproval(t, f, "editor")
	if _, err := f.Service.Decide(ctx, ed, chat.DecideParams{ID: own, Approve: false, Digest: o.Pending.Digest}); err != nil {
		t.Fatalf("the owner's denial under four-eyes: %v", err)
	}
	f.Drain(t)
	if c := f.Conversation(t, own); c.Status != store.ConversationIdle || f.WriteCalls() != 0 {
		t.Errorf("after the owner's denial: %s, %d writes", c.Status, f.WriteCalls())
	}
}

// runEvents lists a run's events.
func runEvents(t *testing.T, f *chattest.Fixture, id string) []store.RunEvent {
	t.Helper()
	evs, err := f.Store.RunEvents(context.Background(), store.ListRunEventsParams{RunID: id})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// removeMCPServerElsewhere removes the fixture's MCP server through
// another process's Service on the same store.
func removeMCPServerElsewhere(t *testing.T, f *chattest.Fixture) {
	t.Helper()
	other, err := mcp.New(mcp.Params{Store: f.Store, Logger: f.Logger})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.Remove(context.Background(), chattest.MCPServer); err != nil {
		t.Fatal(err)
	}
}

// TestInputFlow: a turn asks a question; an answer the runtime refuses is
// handed back (answer and its message dropped); a valid one goes to the
// tool and the turn completes.
func TestInputFlow(t *testing.T) {
	f := setup(t, chattest.Options{Rounds: rounds(
		llmtest.Calls(llmtest.Call("c1", chattest.InputTool, `{}`)),
		llmtest.Text("Variant b it is.").WithCheck(func(t testing.TB, r llmtest.Request) {
			if !strings.Contains(string(r.Body), "variant b chosen") {
				t.Errorf("the tool did not get the answer: %s", r.Body)
			}
		}),
	)})
	ctx := context.Background()
	ed := f.Users["editor"]
	id := f.Start(t, "editor", "Make a variant")
	f.Drain(t)
	p := page(t, f, "editor", id)
	if p.Conversation.Status != store.ConversationAwaitingInput || p.Pending == nil {
		t.Fatalf("setup: %+v", p.Conversation)
	}
	question := "user:Make a variant\nassistant:Which variant should I use?\n"

	for _, bad := range []string{`[1]`, `"b"`, `nope`, `null`} {
		_, err := f.Service.Input(ctx, ed, chat.InputParams{ID: id, Digest: p.Pending.Digest, Data: json.RawMessage(bad)})
		wantCode(t, "answer "+bad, err, chat.CodeInputInvalid, http.StatusBadRequest)
	}
	// Valid JSON the schema refuses: recorded, refused by the runtime,
	// handed back.
	v, err := f.Service.Input(ctx, ed, chat.InputParams{ID: id, Digest: p.Pending.Digest, Data: json.RawMessage(`{"choice":"c"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if c := v.Conversation; c.Status != store.ConversationProcessing || c.Decision != store.DecisionInput || c.PendingInput != `{"choice":"c"}` {
		t.Fatalf("recorded: %+v", c)
	}
	if got := shape(f.Messages(t, id)); got != question+"user[inputAnswer]:c\n" {
		t.Errorf("messages with the answer:\n%s", got)
	}
	f.Drain(t)
	c := f.Conversation(t, id)
	if c.Status != store.ConversationAwaitingInput || c.ConversationState != (store.ConversationState{RunID: p.Conversation.RunID, ErrorCode: string(chat.HandBackInputInvalid)}) {
		t.Fatalf("handed back: %+v", c)
	}
	if got := shape(f.Messages(t, id)); got != question {
		t.Errorf("the refused answer was kept:\n%s", got)
	}

	if _, err := f.Service.Input(ctx, ed, chat.InputParams{ID: id, Digest: p.Pending.Digest, Data: json.RawMessage(`{"choice":"b"}`)}); err != nil {
		t.Fatal(err)
	}
	f.Drain(t)
	c = f.Conversation(t, id)
	if c.Status != store.ConversationIdle || c.ConversationState != (store.ConversationState{}) {
		t.Fatalf("after the answer: %+v", c)
	}
	if got := shape(f.Messages(t, id)); got != question+"user[inputAnswer]:b\nassistant:Variant b it is.\n" {
		t.Errorf("messages:\n%s", got)
	}
	_, err = f.Service.Input(ctx, ed, chat.InputParams{ID: id, Digest: p.Pending.Digest, Data: json.RawMessage(`{"choice":"a"}`)})
	wantCode(t, "answer on an idle conversation", err, chat.CodeNotAwaitingInput, http.StatusConflict)
}

// TestLeaveWaiting: a new message on a waiting conversation cancels the
// waiting run, so its write can never be approved afterwards.
func TestLeaveWaiting(t *testing.T) {
	f := setup(t, chattest.Options{Rounds: rounds(llmtest.Calls(publish("c1", "hello")), llmtest.Text("Something else then."))})
	ctx := context.Background()
	id, p := waitingForApproval(t, f, "editor")
	v, err := f.Service.Send(ctx, f.Users["editor"], chat.SendParams{ID: id, Content: "Forget it, do something else"})
	if err != nil {
		t.Fatal(err)
	}
	if c := v.Conversation; c.Status != store.ConversationProcessing || c.ConversationState != (store.ConversationState{}) {
		t.Fatalf("after send: %+v", c)
	}
	if r := run(t, f, p.Conversation.RunID); r.Status != store.RunCancelled {
		t.Errorf("the waiting run is %s, want cancelled", r.Status)
	}
	f.Drain(t)
	if c := f.Conversation(t, id); c.Status != store.ConversationIdle {
		t.Errorf("after the new turn: %+v", c)
	}
	if f.WriteCalls() != 0 {
		t.Error("the abandoned write ran")
	}
}

// TestRetry: 409 while locked, 409 while a decision is in flight (in
// TestApproveFlow), 400 when there is nothing to resume; a failed turn
// runs again as resumeChatTurn over the same transcript.
func TestRetry(t *testing.T) {
	f := setup(t, chattest.Options{Rounds: rounds(
		llmtest.Status(http.StatusInternalServerError),
		llmtest.Text("Second time lucky."),
	)})
	ctx := context.Background()
	ed := f.Users["editor"]

	idle, err := f.Service.Create(ctx, ed)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Service.Retry(ctx, ed, idle.Conversation.ID)
	wantCode(t, "retry idle", err, chat.CodeNotResumable, http.StatusBadRequest)

	id := f.Start(t, "editor", "Hello")
	if _, err := f.Store.ClaimNextConversation(ctx, store.ClaimConversationParams{ID: id, ClaimID: "someone-else"}); err != nil {
		t.Fatal(err)
	}
	_, err = f.Service.Retry(ctx, ed, id)
	wantCode(t, "retry locked", err, chat.CodeConversationProcessing, http.StatusConflict)
	_, err = f.Service.Send(ctx, ed, chat.SendParams{ID: id, Content: "again"})
	wantCode(t, "send locked", err, chat.CodeConversationProcessing, http.StatusConflict)
	// Let the turn run by its claimer: give it back by failing it, as
	// cleanup would.
	f.Clock.Advance(chat.DefaultStaleAfter + time.Second)
	if rep, err := f.Service.Cleanup(ctx, chat.CleanupParams{}); err != nil || rep.Failed != 1 {
		t.Fatalf("cleanup: %+v, %v", rep, err)
	}
	v, err := f.Service.Retry(ctx, ed, id)
	if err != nil {
		t.Fatal(err)
	}
	if c := v.Conversation; c.Status != store.ConversationProcessing || c.ErrorCode != "" || c.HasPendingDecision() {
		t.Fatalf("after retry: %+v", c)
	}
	f.Drain(t) // the provider fails: failed, runFailed
	c := f.Conversation(t, id)
	if c.Status != store.ConversationFailed || c.ErrorCode != string(chat.CodeRunFailed) {
		t.Fatalf("after a failing turn: %+v", c)
	}
	if _, err := f.Service.Retry(ctx, ed, id); err != nil {
		t.Fatal(err)
	}
	f.Drain(t)
	if c := f.Conversation(t, id); c.Status != store.ConversationIdle || c.ConversationState != (store.ConversationState{}) {
		t.Fatalf("after the second retry: %+v", c)
	}
	if got := shape(f.Messages(t, id)); got != "user:Hello\nassistant:Second time lucky.\n" {
		t.Errorf("messages:\n%s", got)
	}
	rs := allRuns(t, f)
	if len(rs) != 2 {
		t.Fatalf("%d runs, want 2", len(rs))
	}
	for _, r := range rs {
		if r.CallerOperation != chat.OperationResumeTurn {
			t.Errorf("run %s: operation %q, want resumeChatTurn", r.ID, r.CallerOperation)
		}
	}
	// Both requests carried the same transcript.
	if a, b := wireMessages(t, f.LLM.Request(0)), wireMessages(t, f.LLM.Request(1)); strings.Join(a, "|") != strings.Join(b, "|") {
		t.Errorf("the retry's transcript differs:\n%q\n%q", a, b)
	}
}
