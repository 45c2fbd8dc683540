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
