package chat_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/chat"
	"github.com/t3agent/t3agent/internal/chat/chattest"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/store"
)

// TestReconcile repairs a recorded decision no worker picked up, after
// the grace and by the run's status, with an injected clock.
func TestReconcile(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// input records an answer instead of an approval.
		input bool
		// meanwhile changes the run before reconcile looks.
		meanwhile func(t *testing.T, f *chattest.Fixture, runID string)
		// viaMessages repairs through Messages instead of Reconcile.
		viaMessages bool
		status      store.ConversationStatus
		state       func(runID string) store.ConversationState
		messages    string
	}{
		{
			name:   "waiting for approval: the card comes back",
			status: store.ConversationAwaitingApproval,
			state:  func(r string) store.ConversationState { return store.ConversationState{RunID: r} },
		},
		{
			name:  "waiting for input: the question comes back, the answer is dropped",
			input: true, viaMessages: true,
			status:   store.ConversationAwaitingInput,
			state:    func(r string) store.ConversationState { return store.ConversationState{RunID: r} },
			messages: "user:Hello\nassistant:Which variant should I use?\n",
		},
		{
			name: "running: a worker has it, nothing changes",
			meanwhile: func(t *testing.T, f *chattest.Fixture, runID string) {
				if _, err := f.Store.ClaimWaitingRun(context.Background(), store.ClaimWaitingRunParams{
					ID: runID, From: store.RunWaitingForApproval, LeaseOwner: "elsewhere", Lease: time.Hour,
				}); err != nil {
					t.Fatal(err)
				}
			},
			status: store.ConversationProcessing,
			state: func(r string) store.ConversationState {
				return store.ConversationState{RunID: r, Decision: store.DecisionApprove, DecisionBy: "editor", DecisionDigest: "d"}
			},
		},
		{
			name: "finished outside the chat: failed",
			meanwhile: func(t *testing.T, f *chattest.Fixture, runID string) {
				if ok, err := f.Runtime.Cancel(context.Background(), f.Users["admin"], agent.Access{}, runID); !ok || err != nil {
					t.Fatalf("cancel: %v, %v", ok, err)
				}
			},
			viaMessages: true,
			status:      store.ConversationFailed,
			state: func(r string) store.ConversationState {
				return store.ConversationState{RunID: r, ErrorCode: string(chat.CodeRunFinishedOutside), ErrorMessage: "The run finished outside the chat (cancelled)."}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			call := publish("c1", "hello")
			if tc.input {
				call = llmtest.Call("c1", chattest.InputTool, `{}`)
			}
			f := setup(t, chattest.Options{Rounds: rounds(llmtest.Calls(call))})
			ctx := context.Background()
			ed := f.Users["editor"]
			id := f.Start(t, "editor", "Hello")
			f.Drain(t)
			c := f.Conversation(t, id)
			runID := c.RunID
			if tc.input {
				_, err := f.Service.Input(ctx, ed, chat.InputParams{ID: id, Digest: "d", Data: json.RawMessage(`{"choice":"a"}`)})
				if err != nil {
					t.Fatal(err)
				}
			} else if _, err := f.Service.Decide(ctx, ed, chat.DecideParams{ID: id, Approve: true, Digest: "d"}); err != nil {
				t.Fatal(err)
			}
			if tc.meanwhile != nil {
				tc.meanwhile(t, f, runID)
			}
			// A queued turn without a decision is never reconcile's.
			other := f.Start(t, "admin", "Queued")

			repair := func() int {
				t.Helper()
				if tc.viaMessages {
					before := f.Conversation(t, id)
					p := page(t, f, "editor", id)
					if p.Conversation.Status != before.Status {
						return 1
					}
					return 0
				}
				n, err := f.Service.Reconcile(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			f.Clock.Advance(chat.DefaultReconcileGrace - time.Second)
			if n := repair(); n != 0 {
				t.Fatalf("reconcile acted within the grace: %d", n)
			}
			f.Clock.Advance(2 * time.Second)
			want := 1
			if tc.status == store.ConversationProcessing {
				want = 0
			}
			if n := repair(); n != want {
				t.Errorf("repaired %d, want %d", n, want)
			}
			c = f.Conversation(t, id)
			if c.Status != tc.status || c.ConversationState != tc.state(runID) {
				t.Errorf("after reconcile: %s %+v\nwant %s %+v", c.Status, c.ConversationState, tc.status, tc.state(runID))
			}
			if tc.messages != "" {
				if got := shape(f.Messages(t, id)); got != tc.messages {
					t.Errorf("messages:\n%s\nwant:\n%s", got, tc.messages)
				}
			}
			if o := f.Conversation(t, other); o.Status != store.ConversationProcessing {
				t.Errorf("the queued turn was touched: %+v", o)
			}
			if f.WriteCalls() != 0 {
				t.Error("reconcile wrote")
			}
		})
	}
}

// TestCleanup fails stuck turns (clearing their approval fields),
// archives idle conversations and deletes archived ones, with an
// injected clock.
func TestCleanup(t *testing.T) {
	f := setup(t, chattest.Options{Settings: &chat.Settings{Task: chattest.Task, ArchiveAfter: 30 * 24 * time.Hour, DeleteAfter: 90 * 24 * time.Hour}})
	ctx := context.Background()
	ed := f.Users["editor"]
	idle, err := f.Service.Create(ctx, ed)
	if err != nil {
		t.Fatal(err)
	}
	pinned, err := f.Service.Create(ctx, ed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Service.Pin(ctx, ed, pinned.Conversation.ID, true); err != nil {
		t.Fatal(err)
	}
	processing := f.Start(t, "editor", "Queued")
	locked := f.Start(t, "editor", "Running")
	if _, err := f.Store.ClaimNextConversation(ctx, store.ClaimConversationParams{ID: locked, ClaimID: "crashed-worker"}); err != nil {
		t.Fatal(err)
	}
	// A recorded decision on the queued one: cleanup must not leave it
	// for a Retry to replay.
	if _, err := f.Store.ChangeConversation(ctx, store.ChangeConversationParams{
		ID: processing, From: []store.ConversationStatus{store.ConversationProcessing}, To: store.ConversationProcessing,
		State: store.ConversationState{RunID: "r1", Decision: store.DecisionApprove, DecisionDigest: "d", DecisionBy: "editor"}, KeepMessages: -1,
	}); err != nil {
		t.Fatal(err)
	}

	step := func(d time.Duration, p chat.CleanupParams, want chat.CleanupReport) {
		t.Helper()
		f.Clock.Advance(d)
		rep, err := f.Service.Cleanup(ctx, p)
		if err != nil || rep != want {
			t.Fatalf("cleanup after %s: %+v, %v; want %+v", d, rep, err, want)
		}
	}
	step(4*time.Minute, chat.CleanupParams{}, chat.CleanupReport{})
	step(2*time.Minute, chat.CleanupParams{}, chat.CleanupReport{Failed: 2})
	for _, id := range []int64{processing, locked} {
		c := f.Conversation(t, id)
		if c.Status != store.ConversationFailed || c.ErrorCode != string(chat.CodeTimedOut) || c.ErrorMessage == "" ||
			c.RunID != "" || c.Decision != store.DecisionNone || c.DecisionDigest != "" || c.ClaimID != "" {
			t.Errorf("stale %d: %+v", id, c)
		}
		if v, err := f.Service.Retry(ctx, ed, id); err != nil || v.Conversation.HasPendingDecision() {
			t.Errorf("retry after cleanup: %+v, %v", v.Conversation, err)
		}
	}
	// Negative parameters skip a step; zero ones take the settings.
	step(30*24*time.Hour, chat.CleanupParams{ArchiveAfter: -1, DeleteAfter: -1, StaleAfter: -1}, chat.CleanupReport{})
	step(time.Second, chat.CleanupParams{StaleAfter: -1}, chat.CleanupReport{Archived: 1})
	if c := f.Conversation(t, idle.Conversation.ID); !c.Archived {
		t.Errorf("idle conversation not archived: %+v", c)
	}
	if c := f.Conversation(t, pinned.Conversation.ID); c.Archived {
		t.Error("a pinned conversation was archived")
	}
	step(89*24*time.Hour, chat.CleanupParams{StaleAfter: -1}, chat.CleanupReport{})
	step(24*time.Hour+time.Second, chat.CleanupParams{StaleAfter: -1}, chat.CleanupReport{Deleted: 1})
	if _, err := f.Store.Conversation(ctx, idle.Conversation.ID); err == nil {
		t.Error("the archived conversation was not deleted")
	}
}

// TestCleanupDisabled: archive and delete are off unless configured.
func TestCleanupDisabled(t *testing.T) {
	f := setup(t, chattest.Options{})
	ctx := context.Background()
	v, err := f.Service.Create(ctx, f.Users["editor"])
	if err != nil {
		t.Fatal(err)
	}
	f.Clock.Advance(10 * 365 * 24 * time.Hour)
	if rep, err := f.Service.Cleanup(ctx, chat.CleanupParams{}); err != nil || rep != (chat.CleanupReport{}) {
		t.Errorf("cleanup: %+v, %v", rep, err)
	}
	if c := f.Conversation(t, v.Conversation.ID); c.Archived {
		t.Error("archived without an archive setting")
	}
}

// TestLostTurn: cleanup fails a turn that runs too long; the turn's late
// result finds the row moved on, is logged and dropped, never retried.
func TestLostTurn(t *testing.T) {
	hold, started := make(chan struct{}), make(chan struct{})
	r := llmtest.Text("too late").WithCheck(func(testing.TB, llmtest.Request) { close(started) })
	r.Hold = hold
	f := setup(t, chattest.Options{Rounds: rounds(r)})
	ctx := context.Background()
	id := f.Start(t, "editor", "Hello")
	type result struct {
		ok  bool
		err error
	}
	done := make(chan result, 1)
	go func() {
		ok, err := f.Service.Process(ctx, id)
		done <- result{ok, err}
	}()
	<-started
	if ok, err := f.Service.Process(ctx, id); ok || err != nil {
		t.Errorf("a second claim of a locked conversation: %v, %v", ok, err)
	}
	f.Clock.Advance(chat.DefaultStaleAfter + time.Second)
	if rep, err := f.Service.Cleanup(ctx, chat.CleanupParams{}); err != nil || rep.Failed != 1 {
		t.Fatalf("cleanup: %+v, %v", rep, err)
	}
	close(hold)
	if res := <-done; !res.ok || res.err != nil {
		t.Errorf("Process: %+v", res)
	}
	c := f.Conversation(t, id)
	if c.Status != store.ConversationFailed || c.ErrorCode != string(chat.CodeTimedOut) {
		t.Errorf("the late result overwrote cleanup's: %+v", c)
	}
	if got := shape(f.Messages(t, id)); got != "user:Hello\n" {
		t.Errorf("messages:\n%s", got)
	}
	if !strings.Contains(f.Logs.String(), "lost its conversation") {
		t.Error("the lost write was not logged")
	}
}
