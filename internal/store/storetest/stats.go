package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/store"
)

// testStats: the aggregates count every run and conversation by status,
// whichever store wrote them, and the queue's ready runs and oldest wait
// follow the clock (a delayed requeue is queued, not ready).
func testStats(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	other := open(t, f.dsn, store.OpenParams{Now: f.clock.Now})
	rs, err := f.st.RunStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Counts == nil || len(rs.Counts) != 0 || rs.Ready != 0 || !rs.OldestReady.IsZero() || rs.Queued() != 0 {
		t.Errorf("empty store: %+v", rs)
	}
	if finished, err := f.st.FinishedRuns(ctx); err != nil || finished == nil || len(finished) != 0 {
		t.Errorf("empty store: finished %+v, %v", finished, err)
	}
	cs, err := f.st.ConversationStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cs == nil || len(cs) != 0 {
		t.Errorf("empty store: conversations %+v", cs)
	}

	createRun(t, f.st, newRun("run-running", "editor"))
	for _, s := range []struct {
		id, outcome, termination string
		status                   store.RunStatus
	}{
		{"run-done-1", "completed", "completed", store.RunCompleted},
		{"run-done-2", "completed", "completed", store.RunCompleted},
		{"run-failed", "failed", "provider_failed", store.RunFailed},
		{"run-truncated", "failed", "max_iterations", store.RunFailed},
	} {
		p := newRun(s.id, "editor")
		createRun(t, other, p)
		if _, err := other.SettleRun(ctx, store.SettleRunParams{ID: s.id, LeaseOwner: p.LeaseOwner, Status: s.status,
			Outcome: s.outcome, TerminationReason: s.termination}); err != nil {
			t.Fatal(err)
		}
	}
	suspended(t, f.st, "run-waiting")
	oldest := f.clock.Stamp()
	for _, id := range []string{"run-q-1", "run-q-2", "run-q-3"} {
		if _, err := other.EnqueueRun(ctx, store.EnqueueRunParams{CreateRunParams: newRun(id, "editor"), QueuedRequest: "req"}); err != nil {
			t.Fatal(err)
		}
		f.clock.Advance(time.Minute)
	}
	// The oldest is claimed and requeued with an hour's backoff: queued,
	// but not ready, so the second becomes the oldest ready.
	c, err := f.st.ClaimQueuedRun(ctx, store.ClaimQueuedRunParams{ID: "run-q-1", LeaseOwner: "worker:h:1", Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.RequeueRun(ctx, store.RequeueRunParams{ID: c.ID, LeaseOwner: "worker:h:1", Delay: time.Hour}); err != nil {
		t.Fatal(err)
	}

	rs, err = f.st.RunStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.RunCount{
		{Status: store.RunCompleted, Runs: 2},
		{Status: store.RunFailed, Runs: 2},
		{Status: store.RunQueued, Runs: 3},
		{Status: store.RunRunning, Runs: 1},
		{Status: store.RunWaitingForApproval, Runs: 1},
	}
	if !slices.Equal(rs.Counts, want) {
		t.Errorf("counts:\n got %+v\nwant %+v", rs.Counts, want)
	}
	finished, err := other.FinishedRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantFinished := []store.RunCount{
		{Status: store.RunCompleted, Outcome: "completed", Termination: "completed", Runs: 2},
		{Status: store.RunFailed, Outcome: "failed", Termination: "max_iterations", Runs: 1},
		{Status: store.RunFailed, Outcome: "failed", Termination: "provider_failed", Runs: 1},
	}
	if !slices.Equal(finished, wantFinished) {
		t.Errorf("finished:\n got %+v\nwant %+v", finished, wantFinished)
	}
	if rs.Queued() != 3 || rs.Ready != 2 {
		t.Errorf("queued %d, ready %d; want 3 and 2", rs.Queued(), rs.Ready)
	}
	checkTime(t, "OldestReady", rs.OldestReady, oldest.Add(time.Minute))

	f.clock.Advance(2 * time.Hour)
	rs, err = other.RunStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Ready != 3 {
		t.Errorf("ready after the backoff = %d, want 3", rs.Ready)
	}
	checkTime(t, "OldestReady after the backoff", rs.OldestReady, oldest.Add(time.Minute))

	var ids []int64
	for i := range 3 {
		cv, err := f.st.CreateConversation(ctx, store.CreateConversationParams{OwnerUID: int64(i + 1), OwnerUsername: "editor"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, cv.ID)
	}
	if _, err := other.ChangeConversation(ctx, store.ChangeConversationParams{ID: ids[0],
		From: []store.ConversationStatus{store.ConversationIdle}, To: store.ConversationProcessing, KeepMessages: -1}); err != nil {
		t.Fatal(err)
	}
	cs, err = other.ConversationStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantConv := []store.ConversationCount{{Status: store.ConversationIdle, Conversations: 2}, {Status: store.ConversationProcessing, Conversations: 1}}
	if !slices.Equal(cs, wantConv) {
		t.Errorf("conversations = %+v, want %+v", cs, wantConv)
	}
}
