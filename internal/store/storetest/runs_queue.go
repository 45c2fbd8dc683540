package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/store"
)

// suspended creates a run and suspends it waiting for approval.
func suspended(t *testing.T, st store.Store, id string) store.CreateRunParams {
	t.Helper()
	p := newRun(id, "editor")
	p.Events = []store.RunEventParams{ev(0, "request", 1, `{}`)}
	createRun(t, st, p)
	_, err := st.SuspendRun(t.Context(), store.SuspendRunParams{
		ID: id, LeaseOwner: p.LeaseOwner, Status: store.RunWaitingForApproval, Outcome: "awaiting_approval",
		TurnDigest: "d1", SuspendedState: "sealed-" + id, Events: []store.RunEventParams{ev(1, "approval", 1, `{}`)},
	})
	if err != nil {
		t.Fatalf("SuspendRun: %v", err)
	}
	return p
}

// testRunClaimWaitingOnce: of eight concurrent claims of one waiting run
// exactly one wins, and it gets the state and the next seq.
func testRunClaimWaitingOnce(t *testing.T, h harness) {
	f := h.setup(t)
	suspended(t, f.st, "run-claim")
	var mu sync.Mutex
	var won []store.ClaimedRun
	err := runAll(8, func(i int) error {
		c, err := f.st.ClaimWaitingRun(t.Context(), store.ClaimWaitingRunParams{
			ID: "run-claim", From: store.RunWaitingForApproval, LeaseOwner: fmt.Sprintf("resume:h:%d", i), Lease: time.Minute,
		})
		if errors.Is(err, store.ErrConflict) {
			return nil
		}
		if err != nil {
			return err
		}
		mu.Lock()
		won = append(won, c)
		mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(won) != 1 {
		t.Fatalf("%d claims won, want exactly 1", len(won))
	}
	c := won[0]
	if c.Status != store.RunRunning || c.Sealed != "sealed-run-claim" || c.NextSeq != 2 || c.LeaseOwner == "" {
		t.Errorf("claimed = %+v", c)
	}
	checkTime(t, "LeaseExpires", c.LeaseExpires, f.clock.Stamp().Add(time.Minute))
	// The wrong waiting status does not claim either.
	if _, err := f.st.ClaimWaitingRun(t.Context(), store.ClaimWaitingRunParams{ID: "run-claim", From: store.RunWaitingForInput, LeaseOwner: "x", Lease: time.Minute}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("claim of a running run: %v, want ErrConflict", err)
	}
}

func testRunReleaseAndCancel(t *testing.T, h harness) {
	f := h.setup(t)
	suspended(t, f.st, "run-release")
	c, err := f.st.ClaimWaitingRun(t.Context(), store.ClaimWaitingRunParams{ID: "run-release", From: store.RunWaitingForApproval, LeaseOwner: "resume:a", Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.ReleaseRun(t.Context(), store.ReleaseRunParams{ID: c.ID, LeaseOwner: "resume:b", Status: store.RunWaitingForApproval}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("release under another lease: %v, want ErrConflict", err)
	}
	r, err := f.st.ReleaseRun(t.Context(), store.ReleaseRunParams{ID: c.ID, LeaseOwner: "resume:a", Status: store.RunWaitingForApproval,
		Events: []store.RunEventParams{ev(c.NextSeq, "refused", 1, `{"reason":"stale_turn"}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != store.RunWaitingForApproval || r.LeaseOwner != "" || !r.HasSuspendedState || r.TurnDigest != "d1" {
		t.Errorf("released = %+v", r)
	}
	if got := seqs(runEvents(t, f.st, store.ListRunEventsParams{RunID: c.ID})); !slices.Equal(got, []int64{0, 1, 2}) {
		t.Errorf("events = %v", got)
	}
	// Cancel wins once; the counters stay.
	err = runAll(4, func(int) error {
		_, err := f.st.CancelRun(t.Context(), c.ID)
		return err
	})
	var n int
	for _, e := range unwrapJoined(err) {
		if !errors.Is(e, store.ErrConflict) {
			t.Errorf("a losing cancel: %v, want ErrConflict", e)
		}
		n++
	}
	if n != 3 {
		t.Errorf("%d cancels lost, want 3", n)
	}
	got := getRun(t, f.st, c.ID)
	if got.Status != store.RunCancelled || got.TerminationReason != "cancelled" || got.HasSuspendedState || got.FinishedAt.IsZero() {
		t.Errorf("cancelled = %+v", got)
	}
}

func unwrapJoined(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// testRunQueueClaimsOnce: eight claimers drain twenty queued runs; every
// run is claimed exactly once.
func testRunQueueClaimsOnce(t *testing.T, h harness) {
	f := h.setup(t)
	const runs = 20
	for i := range runs {
		p := newRun(fmt.Sprintf("run-q-%02d", i), "editor")
		r, err := f.st.EnqueueRun(t.Context(), store.EnqueueRunParams{CreateRunParams: p, QueuedRequest: "req"})
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != store.RunQueued || r.LeaseOwner != "" || !r.HasQueuedRequest {
			t.Fatalf("queued = %+v", r)
		}
	}
	var mu sync.Mutex
	claimed := map[string]int{}
	err := runAll(8, func(i int) error {
		for {
			c, err := f.st.ClaimQueuedRun(t.Context(), store.ClaimQueuedRunParams{LeaseOwner: fmt.Sprintf("worker:h:%d", i), Lease: time.Minute})
			if errors.Is(err, store.ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			if c.Sealed != "req" || c.Status != store.RunRunning || c.NextSeq != 0 {
				return fmt.Errorf("claimed %+v", c)
			}
			mu.Lock()
			claimed[c.ID]++
			mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(claimed) != runs {
		t.Errorf("%d runs claimed, want %d", len(claimed), runs)
	}
	for id, n := range claimed {
		if n != 1 {
			t.Errorf("run %s claimed %d times", id, n)
		}
	}
}

// testRunRequeueExpired: a run whose lease expired is listed, requeued
// with a delay and claimable only after it; a live lease is not requeued.
func testRunRequeueExpired(t *testing.T, h harness) {
	f := h.setup(t)
	p := newRun("run-expire", "editor")
	if _, err := f.st.EnqueueRun(t.Context(), store.EnqueueRunParams{CreateRunParams: p, QueuedRequest: "req"}); err != nil {
		t.Fatal(err)
	}
	c, err := f.st.ClaimQueuedRun(t.Context(), store.ClaimQueuedRunParams{ID: p.ID, LeaseOwner: "worker:h:1", Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.st.RecordRunStep(t.Context(), store.RecordRunStepParams{ID: c.ID, LeaseOwner: "worker:h:1", Lease: time.Minute, PendingEffect: "idempotent_write"}); err != nil {
		t.Fatal(err)
	}
	if exp, err := f.st.ExpiredRuns(t.Context(), 10); err != nil || len(exp) != 0 {
		t.Fatalf("ExpiredRuns with a live lease = %v, %v", exp, err)
	}
	if _, err := f.st.RequeueRun(t.Context(), store.RequeueRunParams{ID: c.ID, LeaseOwner: "worker:h:1", Expired: true}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("requeue of a live lease: %v, want ErrConflict", err)
	}
	f.clock.Advance(2 * time.Minute)
	exp, err := f.st.ExpiredRuns(t.Context(), 10)
	if err != nil || len(exp) != 1 || exp[0].PendingEffect != "idempotent_write" {
		t.Fatalf("ExpiredRuns = %+v, %v", exp, err)
	}
	r, err := f.st.RequeueRun(t.Context(), store.RequeueRunParams{ID: c.ID, LeaseOwner: "worker:h:1", Expired: true, Delay: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != store.RunQueued || r.RequeueCount != 1 || r.PendingEffect != "" || r.LeaseOwner != "" {
		t.Errorf("requeued = %+v", r)
	}
	checkTime(t, "AvailableAt", r.AvailableAt, f.clock.Stamp().Add(30*time.Second))
	if _, err := f.st.ClaimQueuedRun(t.Context(), store.ClaimQueuedRunParams{LeaseOwner: "worker:h:2", Lease: time.Minute}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("claim during the backoff: %v, want ErrNotFound", err)
	}
	f.clock.Advance(31 * time.Second)
	c2, err := f.st.ClaimQueuedRun(t.Context(), store.ClaimQueuedRunParams{LeaseOwner: "worker:h:2", Lease: time.Minute})
	if err != nil || c2.ID != c.ID {
		t.Fatalf("claim after the backoff = %+v, %v", c2, err)
	}
	// The reaper's settle re-checks staleness.
	if _, err := f.st.SettleRun(t.Context(), store.SettleRunParams{ID: c.ID, LeaseOwner: "worker:h:2", Expired: true, Status: store.RunFailed}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("an expired-only settle of a live lease: %v, want ErrConflict", err)
	}
}

// testRunReseal: a parked value is swapped only while it is the old one.
func testRunReseal(t *testing.T, h harness) {
	f := h.setup(t)
	suspended(t, f.st, "run-reseal")
	p := newRun("run-reseal-q", "editor")
	if _, err := f.st.EnqueueRun(t.Context(), store.EnqueueRunParams{CreateRunParams: p, QueuedRequest: "req-old"}); err != nil {
		t.Fatal(err)
	}
	parked, err := f.st.ParkedRuns(t.Context(), store.ParkedRunsParams{Limit: 10})
	if err != nil || len(parked) != 2 || parked[0].ID != "run-reseal" || parked[0].SuspendedState != "sealed-run-reseal" || parked[1].QueuedRequest != "req-old" {
		t.Fatalf("ParkedRuns = %+v, %v", parked, err)
	}
	if page, err := f.st.ParkedRuns(t.Context(), store.ParkedRunsParams{After: "run-reseal", Limit: 10}); err != nil || len(page) != 1 {
		t.Errorf("ParkedRuns after the first = %+v, %v", page, err)
	}
	if err := f.st.ResealRun(t.Context(), store.ResealRunParams{ID: "run-reseal", Old: "sealed-run-reseal", New: "sealed-new"}); err != nil {
		t.Fatal(err)
	}
	if err := f.st.ResealRun(t.Context(), store.ResealRunParams{ID: "run-reseal", Old: "sealed-run-reseal", New: "sealed-newer"}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("reseal of a value that changed: %v, want ErrConflict", err)
	}
	if err := f.st.ResealRun(t.Context(), store.ResealRunParams{ID: "run-reseal-q", Queued: true, Old: "req-old", New: "req-new"}); err != nil {
		t.Fatal(err)
	}
	if s, _ := f.st.RunSuspendedState(t.Context(), "run-reseal"); s != "sealed-new" {
		t.Errorf("state = %q", s)
	}
	c, err := f.st.ClaimQueuedRun(t.Context(), store.ClaimQueuedRunParams{ID: "run-reseal-q", LeaseOwner: "w", Lease: time.Minute})
	if err != nil || c.Sealed != "req-new" {
		t.Errorf("claimed %+v, %v", c, err)
	}
}

// testRunCancelDuringWrite: a run cancelled while a fenced write is in
// flight keeps the writer's lease owner and pending effect, so that the
// writer (and only it, once) records the write on the cancelled row; a
// run cancelled without a fence keeps nothing to record.
func testRunCancelDuringWrite(t *testing.T, h harness) {
	f := h.setup(t)
	p := newRun("run-cancel-write", "editor")
	p.Events = []store.RunEventParams{ev(0, "request", 1, `{}`)}
	createRun(t, f.st, p)
	if err := f.st.RecordRunStep(t.Context(), store.RecordRunStepParams{ID: p.ID, LeaseOwner: p.LeaseOwner, Lease: time.Minute,
		Progress: store.RunProgress{Rounds: 1}, PendingEffect: "non_idempotent_write"}); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Second)
	c, err := f.st.CancelRun(t.Context(), p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != store.RunCancelled || c.LeaseOwner != p.LeaseOwner || c.PendingEffect != "non_idempotent_write" || !c.LeaseExpires.IsZero() {
		t.Errorf("cancelled during a write = %+v; the fence must stay for the writer", c)
	}
	// The running guard refuses, as for any step after a cancel.
	step := store.RecordRunStepParams{ID: p.ID, LeaseOwner: p.LeaseOwner, Lease: time.Minute,
		Progress: store.RunProgress{Rounds: 1, ToolCalls: 1}, Events: []store.RunEventParams{ev(1, "tool", 1, `{"tool":"w"}`)}}
	if err := f.st.RecordRunStep(t.Context(), step); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a step of a cancelled run: %v, want ErrConflict", err)
	}
	other := step
	other.LeaseOwner = "worker:other:1"
	if err := f.st.RecordCancelledWrite(t.Context(), other); !errors.Is(err, store.ErrConflict) {
		t.Errorf("the write recorded under another lease: %v, want ErrConflict", err)
	}
	f.clock.Advance(time.Second)
	if err := f.st.RecordCancelledWrite(t.Context(), step); err != nil {
		t.Fatalf("RecordCancelledWrite: %v", err)
	}
	got := getRun(t, f.st, p.ID)
	if got.Status != store.RunCancelled || got.ToolCalls != 1 || got.Rounds != 1 || got.LeaseOwner != "" || got.PendingEffect != "" ||
		got.TerminationReason != "cancelled" {
		t.Errorf("after the write was recorded = %+v", got)
	}
	checkTime(t, "FinishedAt", got.FinishedAt, c.FinishedAt)
	evs := runEvents(t, f.st, store.ListRunEventsParams{RunID: p.ID})
	if !slices.Equal(seqs(evs), []int64{0, 1}) || evs[1].Kind != "tool" {
		t.Errorf("events = %+v", evs)
	}
	// Once only; terminal stays terminal.
	step.Events = []store.RunEventParams{ev(2, "tool", 1, `{}`)}
	if err := f.st.RecordCancelledWrite(t.Context(), step); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a second record: %v, want ErrConflict", err)
	}
	if _, err := f.st.SettleRun(t.Context(), store.SettleRunParams{ID: p.ID, Status: store.RunFailed}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("settle of the cancelled run: %v, want ErrConflict", err)
	}

	// Without a fence the cancel clears the lease; there is nothing to record.
	q := newRun("run-cancel-nofence", "editor")
	createRun(t, f.st, q)
	if c, err := f.st.CancelRun(t.Context(), q.ID); err != nil || c.LeaseOwner != "" || c.PendingEffect != "" {
		t.Errorf("cancel without a fence = %+v, %v", c, err)
	}
	if err := f.st.RecordCancelledWrite(t.Context(), store.RecordRunStepParams{ID: q.ID, LeaseOwner: q.LeaseOwner}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a write recorded without a fence: %v, want ErrConflict", err)
	}
	if err := f.st.RecordCancelledWrite(t.Context(), store.RecordRunStepParams{ID: "no-such-run", LeaseOwner: "x"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an unknown run: %v, want ErrNotFound", err)
	}
}

// testRunContinuation: a step with a continuation replaces the stored
// request of a queued run, durably, so the next claim after a requeue gets
// it; a run without a stored request keeps none.
func testRunContinuation(t *testing.T, h harness) {
	f := h.setup(t)
	p := newRun("run-continue", "editor")
	if _, err := f.st.EnqueueRun(t.Context(), store.EnqueueRunParams{CreateRunParams: p, QueuedRequest: "req"}); err != nil {
		t.Fatal(err)
	}
	c, err := f.st.ClaimQueuedRun(t.Context(), store.ClaimQueuedRunParams{ID: p.ID, LeaseOwner: "worker:h:1", Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.st.RecordRunStep(t.Context(), store.RecordRunStepParams{ID: c.ID, LeaseOwner: "worker:h:1", Lease: time.Minute,
		Progress: store.RunProgress{Rounds: 1, ToolCalls: 1}, Continuation: "after-the-write", Events: []store.RunEventParams{ev(0, "tool", 1, `{}`)}}); err != nil {
		t.Fatal(err)
	}
	// A plain step leaves it.
	if err := f.st.RecordRunStep(t.Context(), store.RecordRunStepParams{ID: c.ID, LeaseOwner: "worker:h:1", Lease: time.Minute,
		Progress: store.RunProgress{Rounds: 2, ToolCalls: 1}}); err != nil {
		t.Fatal(err)
	}
	// From another connection, as the process taking over would read it.
	other := open(t, f.dsn, store.OpenParams{Now: f.clock.Now})
	if _, err := other.RequeueRun(t.Context(), store.RequeueRunParams{ID: c.ID, LeaseOwner: "worker:h:1"}); err != nil {
		t.Fatal(err)
	}
	c2, err := other.ClaimQueuedRun(t.Context(), store.ClaimQueuedRunParams{ID: c.ID, LeaseOwner: "worker:h:2", Lease: time.Minute})
	if err != nil || c2.Sealed != "after-the-write" || c2.Rounds != 2 || c2.ToolCalls != 1 || c2.NextSeq != 1 {
		t.Fatalf("claim after the requeue = %+v, %v", c2, err)
	}
	if err := f.st.RecordRunStep(t.Context(), store.RecordRunStepParams{ID: c.ID, LeaseOwner: "worker:h:2", Lease: time.Minute,
		Continuation: string(make([]byte, store.MaxSuspendedState+1))}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("an oversized continuation: %v, want ErrInvalid", err)
	}

	q := newRun("run-continue-interactive", "editor")
	createRun(t, f.st, q)
	if err := f.st.RecordRunStep(t.Context(), store.RecordRunStepParams{ID: q.ID, LeaseOwner: q.LeaseOwner, Lease: time.Minute, Continuation: "x"}); err != nil {
		t.Fatal(err)
	}
	if r := getRun(t, f.st, q.ID); r.HasQueuedRequest {
		t.Errorf("an interactive run got a stored request: %+v", r)
	}
}
