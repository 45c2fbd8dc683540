package chat_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/chat"
	"github.com/t3agent/t3agent/internal/chat/chattest"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/store"
)

// TestWorkersNeverShareATurn: four workers drain N queued conversations
// against a provider with latency; every turn runs exactly once (one
// provider request, one answer each).
func TestWorkersNeverShareATurn(t *testing.T) {
	t.Parallel()
	const n = 24
	forStores(t, func(t *testing.T, postgres bool) {
		script := make([]llmtest.Round, n)
		for i := range script {
			script[i] = llmtest.Text("answer")
		}
		f := setup(t, chattest.Options{Postgres: postgres, Rounds: script, Latency: 5 * time.Millisecond,
			Settings: &chat.Settings{Task: chattest.Task, MaxActivePerUser: n}})
		ids := make([]int64, n)
		for i := range ids {
			ids[i] = f.Start(t, "editor", "Question")
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() { f.Drain(t) })
		}
		wg.Wait()
		if got := len(f.LLM.Requests()); got != n {
			t.Errorf("%d provider requests for %d turns", got, n)
		}
		for _, id := range ids {
			if c := f.Conversation(t, id); c.Status != store.ConversationIdle {
				t.Errorf("conversation %d: %+v", id, c)
			}
			if got := shape(f.Messages(t, id)); got != "user:Question\nassistant:answer\n" {
				t.Errorf("conversation %d:\n%s", id, got)
			}
		}
		if rs := allRuns(t, f); len(rs) != n {
			t.Errorf("%d runs for %d turns", len(rs), n)
		}
	})
}

// TestWorkerReconciles: the worker's scheduled maintenance hands back a
// decision no slot picked up.
func TestWorkerReconciles(t *testing.T) {
	f := setup(t, chattest.Options{Rounds: rounds(llmtest.Calls(publish("c1", "hello")))})
	ctx := context.Background()
	id, p := waitingForApproval(t, f, "editor")

	tm := chattest.NewTimers()
	const poll, every = 200 * time.Millisecond, 10 * time.Second
	w, err := chat.NewWorker(chat.WorkerParams{Service: f.Service, Poll: poll, MaintainEvery: every, After: tm.After})
	if err != nil {
		t.Fatal(err)
	}
	w.Start(ctx)
	defer w.Stop()
	// The slot found nothing and waits for its next poll, which never
	// comes. The decision is recorded by another process (another
	// Service on the same store), which wakes no slot of this one: it is
	// left to reconcile.
	tm.WaitFor(t, poll)
	elsewhere, err := chat.New(chat.Params{Store: f.Store, Runtime: f.Runtime, Tasks: f.Tasks, Users: f.Site, Now: f.Clock.Now, Logger: f.Logger})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := elsewhere.Decide(ctx, f.Users["editor"], chat.DecideParams{ID: id, Approve: true, Digest: p.Pending.Digest}); err != nil {
		t.Fatal(err)
	}
	changes, cancel := f.Service.Changes(id)
	defer cancel()
	f.Clock.Advance(chat.DefaultReconcileGrace + time.Second)
	tm.Ch(every) <- time.Time{}
	select {
	case <-changes:
	case <-time.After(time.Minute):
		t.Fatal("reconcile did not change the conversation")
	}
	c := f.Conversation(t, id)
	if c.Status != store.ConversationAwaitingApproval || c.ConversationState != (store.ConversationState{RunID: p.Conversation.RunID}) {
		t.Errorf("after reconcile: %+v", c)
	}
	if f.WriteCalls() != 0 {
		t.Error("reconcile wrote")
	}
}

// TestWorkerStopFinishesTurns: the end of the worker's context stops
// claiming, the turn in flight still completes (a shutdown is no user's
// cancel), and Stop waits for it.
func TestWorkerStopFinishesTurns(t *testing.T) {
	hold, started := make(chan struct{}), make(chan struct{})
	r := llmtest.Text("done").WithCheck(func(testing.TB, llmtest.Request) { close(started) })
	r.Hold = hold
	f := setup(t, chattest.Options{Rounds: rounds(r)})
	id := f.Start(t, "editor", "Hello")
	queued := f.Start(t, "admin", "Not yet")
	tm := chattest.NewTimers()
	w, err := chat.NewWorker(chat.WorkerParams{Service: f.Service, Concurrency: 1, After: tm.After})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.Start(ctx)
	<-started
	cancel()
	stopped := make(chan struct{})
	go func() { w.Stop(); close(stopped) }()
	close(hold)
	<-stopped
	if c := f.Conversation(t, id); c.Status != store.ConversationIdle {
		t.Errorf("the turn in flight did not finish: %+v", c)
	}
	if c := f.Conversation(t, queued); c.Status != store.ConversationProcessing {
		t.Errorf("a conversation was claimed after the context ended: %+v", c)
	}
}

// TestWorkerWakesOnSend: a turn queued through the worker's own Service
// is claimed at once, without waiting for the next poll (which never
// comes here).
func TestWorkerWakesOnSend(t *testing.T) {
	f := setup(t, chattest.Options{Rounds: rounds(llmtest.Text("Hello back"))})
	tm := chattest.NewTimers()
	w, err := chat.NewWorker(chat.WorkerParams{Service: f.Service, Poll: time.Hour, After: tm.After})
	if err != nil {
		t.Fatal(err)
	}
	w.Start(context.Background())
	defer w.Stop()
	tm.WaitFor(t, time.Hour)
	v, err := f.Service.Create(context.Background(), f.Users["editor"])
	if err != nil {
		t.Fatal(err)
	}
	changes, cancel := f.Service.Changes(v.Conversation.ID)
	defer cancel()
	if _, err := f.Service.Send(context.Background(), f.Users["editor"], chat.SendParams{ID: v.Conversation.ID, Content: "Hello"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(time.Minute)
	for f.Conversation(t, v.Conversation.ID).Status != store.ConversationIdle {
		select {
		case <-changes:
		case <-deadline:
			t.Fatalf("the turn was not claimed without a poll: %+v", f.Conversation(t, v.Conversation.ID))
		}
	}
	if msgs := f.Messages(t, v.Conversation.ID); len(msgs) != 2 || msgs[1].Content != "Hello back" {
		t.Errorf("messages: %+v", msgs)
	}
}

// TestMaintenanceFreesDeadWorkersTurns: turns a worker that died left
// locked, one of them carrying a recorded approval, hold their user at
// the active limit; the worker's scheduled maintenance leaves them while
// they are fresh and fails them once stale (timedOut, the claim, run and
// approval fields cleared), and the user can send again. On both stores.
func TestMaintenanceFreesDeadWorkersTurns(t *testing.T) {
	t.Parallel()
	forStores(t, func(t *testing.T, postgres bool) {
		f := setup(t, chattest.Options{Postgres: postgres, Rounds: rounds(llmtest.Calls(publish("c1", "hello")), llmtest.Text("Back again.")),
			Settings: &chat.Settings{Task: chattest.Task, MaxActivePerUser: 3}})
		ctx := context.Background()
		ed := f.Users["editor"]
		approved, p := waitingForApproval(t, f, "editor")
		if _, err := f.Service.Decide(ctx, ed, chat.DecideParams{ID: approved, Approve: true, Digest: p.Pending.Digest}); err != nil {
			t.Fatal(err)
		}
		ids := []int64{approved, f.Start(t, "editor", "Second"), f.Start(t, "editor", "Third")}
		// A worker in another process claims all three and dies.
		for range ids {
			if _, err := f.Store.ClaimNextConversation(ctx, store.ClaimConversationParams{ClaimID: "chat:dead-host:4711"}); err != nil {
				t.Fatal(err)
			}
		}
		if c := f.Conversation(t, approved); c.Status != store.ConversationLocked || !c.HasPendingDecision() {
			t.Fatalf("setup: %+v", c)
		}
		fourth, err := f.Service.Create(ctx, ed)
		if err != nil {
			t.Fatal(err)
		}
		send := func() error {
			_, err := f.Service.Send(ctx, ed, chat.SendParams{ID: fourth.Conversation.ID, Content: "Anyone there?"})
			return err
		}
		wantCode(t, "a send while the dead worker's turns hold the editor", send(), chat.CodeTooManyActive, http.StatusTooManyRequests)

		tm := chattest.NewTimers()
		const every = time.Minute
		w, err := chat.NewWorker(chat.WorkerParams{Service: f.Service, Poll: time.Hour, MaintainEvery: every, After: tm.After})
		if err != nil {
			t.Fatal(err)
		}
		w.Start(ctx)
		defer w.Stop()
		pass := func() { tm.Pass(every) }
		pass()
		for _, id := range ids {
			if c := f.Conversation(t, id); c.Status != store.ConversationLocked {
				t.Fatalf("a pass failed conversation %d before it was stale: %+v", id, c)
			}
		}
		f.Clock.Advance(chat.DefaultStaleAfter + time.Second)
		pass()
		for _, id := range ids {
			c := f.Conversation(t, id)
			if c.Status != store.ConversationFailed || c.ErrorCode != string(chat.CodeTimedOut) || c.ClaimID != "" || c.RunID != "" ||
				c.Decision != "" || c.DecisionDigest != "" || c.DecisionBy != "" || c.HasPendingDecision() {
				t.Errorf("conversation %d after the scheduled cleanup: %+v", id, c)
			}
		}
		changes, cancel := f.Service.Changes(fourth.Conversation.ID)
		defer cancel()
		if err := send(); err != nil {
			t.Fatalf("a send after the scheduled cleanup: %v", err)
		}
		deadline := time.After(time.Minute)
		for f.Conversation(t, fourth.Conversation.ID).Status != store.ConversationIdle {
			select {
			case <-changes:
			case <-deadline:
				t.Fatalf("the turn after the cleanup did not run: %+v", f.Conversation(t, fourth.Conversation.ID))
			}
		}
		if f.WriteCalls() != 0 {
			t.Error("the approved write of a failed turn ran")
		}
	})
}
