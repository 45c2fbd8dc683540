package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/store"
)

// ---- agent runs and their events ----

// testRuns runs every run test; Run lists it as one entry.
func testRuns(t *testing.T, h harness) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, h harness)
	}{
		{"RoundTrip", testRunRoundTrip},
		{"StepIsGuarded", testRunStepGuarded},
		{"StepIsAtomic", testRunStepAtomic},
		{"Suspend", testRunSuspend},
		{"TerminalIsTerminal", testRunTerminal},
		{"Answer", testRunAnswer},
		{"List", testRunList},
		{"Events", testRunEventsPaging},
		{"Invalid", testRunInvalid},
		{"ClaimWaitingOnce", testRunClaimWaitingOnce},
		{"ReleaseAndCancel", testRunReleaseAndCancel},
		{"QueueClaimsOnce", testRunQueueClaimsOnce},
		{"RequeueExpired", testRunRequeueExpired},
		{"Reseal", testRunReseal},
		{"CancelDuringWrite", testRunCancelDuringWrite},
		{"Continuation", testRunContinuation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, h)
		})
	}
}

func newRun(id, owner string) store.CreateRunParams {
	return store.CreateRunParams{
		ID: id, OwnerUsername: owner, OwnerUID: 7, Configuration: "support", CallerSource: "cli",
		CallerOperation: "run", Privacy: "metadata", LeaseOwner: "interactive:host:1", Lease: 15 * time.Minute,
	}
}

func ev(seq int64, kind string, round int, payload string) store.RunEventParams {
	return store.RunEventParams{Seq: seq, Kind: kind, Round: round, Duration: 1500 * time.Microsecond, Payload: json.RawMessage(payload)}
}

func createRun(t *testing.T, st store.Store, p store.CreateRunParams) store.Run {
	t.Helper()
	r, err := st.CreateRun(t.Context(), p)
	if err != nil {
		t.Fatalf("CreateRun %s: %v", p.ID, err)
	}
	return r
}

func getRun(t *testing.T, st store.Store, id string) store.Run {
	t.Helper()
	r, err := st.Run(t.Context(), id)
	if err != nil {
		t.Fatalf("Run %s: %v", id, err)
	}
	return r
}

func runEvents(t *testing.T, st store.Store, p store.ListRunEventsParams) []store.RunEvent {
	t.Helper()
	evs, err := st.RunEvents(t.Context(), p)
	if err != nil {
		t.Fatalf("RunEvents %+v: %v", p, err)
	}
	return evs
}

func seqs(evs []store.RunEvent) []int64 {
	out := make([]int64, len(evs))
	for i, e := range evs {
		out[i] = e.Seq
	}
	return out
}

func testRunRoundTrip(t *testing.T, h harness) {
	f := h.setup(t)
	p := newRun("0195f1c2-0000-7000-8000-000000000001", "jürgen")
	p.Events = []store.RunEventParams{ev(0, "assembled", 0, `{"tools":3}`)}
	created := createRun(t, f.st, p)
	if created.Status != store.RunRunning || created.LeaseOwner != p.LeaseOwner || created.OwnerUsername != "jürgen" ||
		created.Configuration != "support" || created.CallerSource != "cli" || created.CallerOperation != "run" || created.Privacy != "metadata" {
		t.Errorf("created run = %+v", created)
	}
	checkTime(t, "CreatedAt", created.CreatedAt, f.clock.Stamp())
	checkTime(t, "LeaseExpires", created.LeaseExpires, f.clock.Stamp().Add(15*time.Minute))
	if !created.FinishedAt.IsZero() || created.HasSuspendedState || created.CostUnknown {
		t.Errorf("a new run is unfinished, holds no state and costs a known 0: %+v", created)
	}

	f.clock.Advance(time.Second)
	prog := store.RunProgress{Rounds: 2, ToolCalls: 3, InputTokens: 1200, OutputTokens: 80, Cost: 12_300_000_000, Truncated: true}
	err := f.st.RecordRunStep(t.Context(), store.RecordRunStepParams{
		ID: p.ID, LeaseOwner: p.LeaseOwner, Lease: time.Minute, Progress: prog, PendingEffect: "idempotent_write",
		Events: []store.RunEventParams{ev(1, "request", 1, `{"a":"ü"}`), ev(2, "llm", 1, ``)},
	})
	if err != nil {
		t.Fatalf("RecordRunStep: %v", err)
	}
	got := getRun(t, f.st, p.ID)
	if got.RunProgress != prog || got.PendingEffect != "idempotent_write" {
		t.Errorf("after a step: %+v, want progress %+v and the pending effect", got, prog)
	}
	checkTime(t, "renewed LeaseExpires", got.LeaseExpires, f.clock.Stamp().Add(time.Minute))
	checkTime(t, "UpdatedAt", got.UpdatedAt, f.clock.Stamp())

	evs := runEvents(t, f.st, store.ListRunEventsParams{RunID: p.ID})
	if !slices.Equal(seqs(evs), []int64{0, 1, 2}) {
		t.Fatalf("events = %v, want seq 0, 1, 2", seqs(evs))
	}
	if evs[1].Kind != "request" || evs[1].Round != 1 || string(evs[1].Payload) != `{"a":"ü"}` || evs[1].Duration != time.Millisecond {
		t.Errorf("event 1 = %+v (payload %s)", evs[1], evs[1].Payload)
	}
	if string(evs[2].Payload) != "{}" {
		t.Errorf("an empty payload is stored as {}, got %s", evs[2].Payload)
	}
	checkTime(t, "event CreatedAt", evs[2].CreatedAt, f.clock.Stamp())
	// A step written later keeps the time it happened.
	at := f.clock.Now().Add(-time.Minute)
	late := ev(3, "tool", 1, `{}`)
	late.At = at
	if err := f.st.RecordRunStep(t.Context(), store.RecordRunStepParams{ID: p.ID, LeaseOwner: p.LeaseOwner, Lease: time.Minute, Progress: prog, Events: []store.RunEventParams{late}}); err != nil {
		t.Fatal(err)
	}
	if evs := runEvents(t, f.st, store.ListRunEventsParams{RunID: p.ID, FromSeq: 3}); len(evs) != 1 {
		t.Fatalf("event 3: %+v", evs)
	} else {
		checkTime(t, "event At", evs[0].CreatedAt, at.UTC().Truncate(time.Microsecond))
	}

	// An unpriced model makes the cost unknown: NULL, not 0.
	prog.CostUnknown, prog.Cost = true, 0
	if err := f.st.RecordRunStep(t.Context(), store.RecordRunStepParams{ID: p.ID, LeaseOwner: p.LeaseOwner, Lease: time.Minute, Progress: prog}); err != nil {
		t.Fatal(err)
	}
	if got := getRun(t, f.st, p.ID); !got.CostUnknown || got.PendingEffect != "" {
		t.Errorf("after an unpriced step: %+v, want CostUnknown and the pending effect cleared", got)
	}
}

func testRunStepGuarded(t *testing.T, h harness) {
	f := h.setup(t)
	p := newRun("run-guarded", "editor")
	createRun(t, f.st, p)
	err := f.st.RecordRunStep(t.Context(), store.RecordRunStepParams{
		ID: p.ID, LeaseOwner: "worker:other:2", Lease: time.Minute, Progress: store.RunProgress{Rounds: 9},
		Events: []store.RunEventParams{ev(0, "request", 1, `{}`)},
	})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a step under another lease: err = %v, want ErrConflict", err)
	}
	if got := getRun(t, f.st, p.ID); got.Rounds != 0 {
		t.Errorf("a refused step changed the run: %+v", got)
	}
	if evs := runEvents(t, f.st, store.ListRunEventsParams{RunID: p.ID}); len(evs) != 0 {
		t.Errorf("a refused step stored events: %v", seqs(evs))
	}
	err = f.st.RecordRunStep(t.Context(), store.RecordRunStepParams{ID: "no-such-run", LeaseOwner: "x", Lease: time.Minute})
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a step of an unknown run: err = %v, want ErrNotFound", err)
	}
	if _, err := f.st.Run(t.Context(), "no-such-run"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Run of an unknown id: err = %v, want ErrNotFound", err)
	}
}

func testRunStepAtomic(t *testing.T, h harness) {
	f := h.setup(t)
	p := newRun("run-atomic", "editor")
	p.Events = []store.RunEventParams{ev(0, "assembled", 0, `{}`)}
	createRun(t, f.st, p)
	// seq 0 is taken: the whole step, progress included, must roll back.
	err := f.st.RecordRunStep(t.Context(), store.RecordRunStepParams{
		ID: p.ID, LeaseOwner: p.LeaseOwner, Lease: time.Minute, Progress: store.RunProgress{Rounds: 4},
		Events: []store.RunEventParams{ev(1, "request", 1, `{}`), ev(0, "llm", 1, `{}`)},
	})
	if err == nil {
		t.Fatal("a step reusing seq 0 was stored")
	}
	if got := getRun(t, f.st, p.ID); got.Rounds != 0 {
		t.Errorf("a failed step left its progress: rounds = %d", got.Rounds)
	}
	if evs := runEvents(t, f.st, store.ListRunEventsParams{RunID: p.ID}); !slices.Equal(seqs(evs), []int64{0}) {
		t.Errorf("events after a failed step = %v, want only 0", seqs(evs))
	}
}

func testRunSuspend(t *testing.T, h harness) {
	f := h.setup(t)
	p := newRun("run-suspend", "editor")
	createRun(t, f.st, p)
	if _, err := f.st.RunSuspendedState(t.Context(), p.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("state of a running run: err = %v, want ErrNotFound", err)
	}
	f.clock.Advance(time.Second)
	got, err := f.st.SuspendRun(t.Context(), store.SuspendRunParams{
		ID: p.ID, LeaseOwner: p.LeaseOwner, Status: store.RunWaitingForApproval, Outcome: "awaiting_approval",
		Progress: store.RunProgress{Rounds: 1, ToolCalls: 0}, TurnDigest: "abc123", SuspendedState: "t3s1:k:sealed",
		Events: []store.RunEventParams{ev(0, "approval", 1, `{"pending":2}`)},
	})
	if err != nil {
		t.Fatalf("SuspendRun: %v", err)
	}
	if got.Status != store.RunWaitingForApproval || got.Outcome != "awaiting_approval" || got.TurnDigest != "abc123" ||
		!got.HasSuspendedState || got.LeaseOwner != "" || !got.LeaseExpires.IsZero() || got.Rounds != 1 {
		t.Errorf("suspended run = %+v", got)
	}
	state, err := f.st.RunSuspendedState(t.Context(), p.ID)
	if err != nil || state != "t3s1:k:sealed" {
		t.Errorf("RunSuspendedState = %q, %v", state, err)
	}
	// The lease is gone, so the loop that suspended may not write on.
	err = f.st.RecordRunStep(t.Context(), store.RecordRunStepParams{ID: p.ID, LeaseOwner: p.LeaseOwner, Lease: time.Minute})
	if !errors.Is(err, store.ErrConflict) {
		t.Errorf("a step after the suspension: err = %v, want ErrConflict", err)
	}
	// A waiting run can still be settled (denied, cancelled), which drops its state.
	settled, err := f.st.SettleRun(t.Context(), store.SettleRunParams{ID: p.ID, Status: store.RunCancelled, Outcome: "cancelled", TerminationReason: "cancelled"})
	if err != nil {
		t.Fatalf("SettleRun of a waiting run: %v", err)
	}
	if settled.HasSuspendedState || settled.Status != store.RunCancelled {
		t.Errorf("settled run = %+v, want cancelled without state", settled)
	}
	checkTime(t, "FinishedAt", settled.FinishedAt, f.clock.Stamp())
}

func testRunTerminal(t *testing.T, h harness) {
	f := h.setup(t)
	p := newRun("run-terminal", "editor")
	createRun(t, f.st, p)
	settle := store.SettleRunParams{
		ID: p.ID, LeaseOwner: p.LeaseOwner, Status: store.RunFailed, Outcome: "failed", TerminationReason: "provider_failed",
		Progress: store.RunProgress{Rounds: 1, InputTokens: 10}, Error: "The provider failed.", ErrorClass: "serverError",
		Events: []store.RunEventParams{ev(0, "llm", 1, `{"error":"serverError"}`)},
	}
	if _, err := f.st.SettleRun(t.Context(), store.SettleRunParams{ID: p.ID, LeaseOwner: "someone-else", Status: store.RunCompleted}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("settling under another lease: err = %v, want ErrConflict", err)
	}
	// The settle and its events are one: an event that cannot be stored
	// (a seq twice) leaves the run unsettled.
	dup := settle
	dup.Events = []store.RunEventParams{ev(0, "llm", 1, `{}`), ev(0, "llm", 1, `{}`)}
	if _, err := f.st.SettleRun(t.Context(), dup); err == nil {
		t.Errorf("settling with a seq twice: err = nil")
	}
	if got := getRun(t, f.st, p.ID); got.Status != store.RunRunning || got.LeaseOwner != p.LeaseOwner {
		t.Errorf("a failed settle left the run %s under lease %q", got.Status, got.LeaseOwner)
	}
	got, err := f.st.SettleRun(t.Context(), settle)
	if err != nil {
		t.Fatalf("SettleRun: %v", err)
	}
	if evs := runEvents(t, f.st, store.ListRunEventsParams{RunID: p.ID}); len(evs) != 1 || evs[0].Kind != "llm" || string(evs[0].Payload) != `{"error":"serverError"}` {
		t.Errorf("events after the settle = %+v, want the settle's llm event", evs)
	}
	if got.Status != store.RunFailed || got.TerminationReason != "provider_failed" || got.Error != "The provider failed." ||
		got.ErrorClass != "serverError" || got.InputTokens != 10 || got.LeaseOwner != "" || got.FinishedAt.IsZero() {
		t.Errorf("settled run = %+v", got)
	}
	settle.Status, settle.Events = store.RunCompleted, nil
	if _, err := f.st.SettleRun(t.Context(), settle); !errors.Is(err, store.ErrConflict) {
		t.Errorf("settling a finished run again: err = %v, want ErrConflict", err)
	}
	if _, err := f.st.SuspendRun(t.Context(), store.SuspendRunParams{ID: p.ID, LeaseOwner: p.LeaseOwner, Status: store.RunWaitingForInput, SuspendedState: "x"}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("suspending a finished run: err = %v, want ErrConflict", err)
	}
	if got := getRun(t, f.st, p.ID); got.Status != store.RunFailed {
		t.Errorf("a finished run moved to %s", got.Status)
	}
}

// testRunAnswer: a settled run keeps the answer its caller asked for and
// nothing otherwise; an unknown run is ErrNotFound, an oversized answer
// refused with the run left running.
func testRunAnswer(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	answer := `{"content":"Der Titel lautet jetzt „Über uns“.","beside":["Ich ändere den Titel."]}`
	kept, plain := newRun("run-answer", "editor"), newRun("run-no-answer", "editor")
	createRun(t, f.st, kept)
	createRun(t, f.st, plain)
	if got, err := f.st.RunAnswer(ctx, kept.ID); err != nil || got != "" {
		t.Errorf("answer of a running run = %q, %v", got, err)
	}
	big := store.SettleRunParams{ID: kept.ID, LeaseOwner: kept.LeaseOwner, Status: store.RunCompleted, Outcome: "completed",
		Answer: strings.Repeat("x", store.MaxRunAnswer+1)}
	if _, err := f.st.SettleRun(ctx, big); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("an oversized answer: err = %v, want ErrInvalid", err)
	}
	if got := getRun(t, f.st, kept.ID); got.Status != store.RunRunning {
		t.Errorf("a refused settle left the run %s", got.Status)
	}
	for _, p := range []store.SettleRunParams{
		{ID: kept.ID, LeaseOwner: kept.LeaseOwner, Status: store.RunCompleted, Outcome: "completed", Answer: answer},
		{ID: plain.ID, LeaseOwner: plain.LeaseOwner, Status: store.RunCompleted, Outcome: "completed"},
	} {
		if _, err := f.st.SettleRun(ctx, p); err != nil {
			t.Fatalf("SettleRun %s: %v", p.ID, err)
		}
	}
	if got, err := f.st.RunAnswer(ctx, kept.ID); err != nil || got != answer {
		t.Errorf("RunAnswer = %q, %v, want %q", got, err, answer)
	}
	if got, err := f.st.RunAnswer(ctx, plain.ID); err != nil || got != "" {
		t.Errorf("answer of a run that kept none = %q, %v", got, err)
	}
	if _, err := f.st.RunAnswer(ctx, "no-such-run"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("answer of an unknown run: err = %v, want ErrNotFound", err)
	}
}

func testRunList(t *testing.T, h harness) {
	f := h.setup(t)
	var want []string
	for i := range 7 {
		owner := "admin"
		if i%2 == 1 {
			owner = "editor"
		}
		p := newRun(fmt.Sprintf("run-%02d", i), owner)
		createRun(t, f.st, p)
		if i == 3 {
			if _, err := f.st.SettleRun(t.Context(), store.SettleRunParams{ID: p.ID, Status: store.RunCompleted}); err != nil {
				t.Fatal(err)
			}
		}
		want = append([]string{p.ID}, want...)
		if i%3 != 0 { // several runs share an instant; the id breaks the tie
			f.clock.Advance(time.Millisecond)
		}
	}
	list := func(p store.ListRunsParams) []string {
		t.Helper()
		rs, err := f.st.Runs(t.Context(), p)
		if err != nil {
			t.Fatalf("Runs %+v: %v", p, err)
		}
		out := make([]string, len(rs))
		for i, r := range rs {
			out[i] = r.ID
		}
		return out
	}
	if got := list(store.ListRunsParams{}); !slices.Equal(got, want) {
		t.Errorf("Runs = %v, want newest first %v", got, want)
	}
	var paged []string
	for before := ""; ; {
		page := list(store.ListRunsParams{Limit: 3, Before: before})
		if len(page) == 0 {
			break
		}
		paged = append(paged, page...)
		before = page[len(page)-1]
	}
	if !slices.Equal(paged, want) {
		t.Errorf("paged = %v, want %v", paged, want)
	}
	if got := list(store.ListRunsParams{OwnerUsername: "editor"}); !slices.Equal(got, []string{"run-05", "run-03", "run-01"}) {
		t.Errorf("editor's runs = %v", got)
	}
	if got := list(store.ListRunsParams{Status: store.RunCompleted}); !slices.Equal(got, []string{"run-03"}) {
		t.Errorf("completed runs = %v", got)
	}
	if got := list(store.ListRunsParams{OwnerUsername: "nobody"}); got == nil || len(got) != 0 {
		t.Errorf("runs of nobody = %#v, want an empty non-nil list", got)
	}
}

func testRunEventsPaging(t *testing.T, h harness) {
	f := h.setup(t)
	p := newRun("run-events", "admin")
	createRun(t, f.st, p)
	var evs []store.RunEventParams
	for i := range 10 {
		evs = append(evs, ev(int64(i), "tool", i/2+1, fmt.Sprintf(`{"i":%d}`, i)))
	}
	if err := f.st.RecordRunStep(t.Context(), store.RecordRunStepParams{ID: p.ID, LeaseOwner: p.LeaseOwner, Lease: time.Minute, Events: evs}); err != nil {
		t.Fatal(err)
	}
	if got := seqs(runEvents(t, f.st, store.ListRunEventsParams{RunID: p.ID, FromSeq: 4, Limit: 3})); !slices.Equal(got, []int64{4, 5, 6}) {
		t.Errorf("events from 4, 3 at most = %v", got)
	}
	if got := runEvents(t, f.st, store.ListRunEventsParams{RunID: "other"}); got == nil || len(got) != 0 {
		t.Errorf("events of an unknown run = %#v, want an empty non-nil list", got)
	}
}

func testRunInvalid(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	good := newRun("run-invalid", "admin")
	createRun(t, f.st, good)
	bad := func(mut func(*store.CreateRunParams)) store.CreateRunParams {
		p := newRun("run-x", "admin")
		mut(&p)
		return p
	}
	for name, p := range map[string]store.CreateRunParams{
		"no id":        bad(func(p *store.CreateRunParams) { p.ID = "" }),
		"no lease":     bad(func(p *store.CreateRunParams) { p.Lease = 0 }),
		"no owner":     bad(func(p *store.CreateRunParams) { p.LeaseOwner = "" }),
		"NUL":          bad(func(p *store.CreateRunParams) { p.Configuration = "a\x00b" }),
		"bad JSON":     bad(func(p *store.CreateRunParams) { p.Events = []store.RunEventParams{ev(0, "x", 0, `{`)} }),
		"no kind":      bad(func(p *store.CreateRunParams) { p.Events = []store.RunEventParams{ev(0, "", 0, `{}`)} }),
		"negative seq": bad(func(p *store.CreateRunParams) { p.Events = []store.RunEventParams{ev(-1, "x", 0, `{}`)} }),
	} {
		if _, err := f.st.CreateRun(ctx, p); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("CreateRun with %s: err = %v, want ErrInvalid", name, err)
		}
	}
	if _, err := f.st.CreateRun(ctx, good); err == nil {
		t.Error("CreateRun accepted a duplicate id")
	}
	if _, err := f.st.SuspendRun(ctx, store.SuspendRunParams{ID: good.ID, LeaseOwner: good.LeaseOwner, Status: store.RunCompleted, SuspendedState: "x"}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("suspending to completed: err = %v, want ErrInvalid", err)
	}
	if _, err := f.st.SuspendRun(ctx, store.SuspendRunParams{ID: good.ID, LeaseOwner: good.LeaseOwner, Status: store.RunWaitingForInput}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("suspending without state: err = %v, want ErrInvalid", err)
	}
	if _, err := f.st.SettleRun(ctx, store.SettleRunParams{ID: good.ID, Status: store.RunWaitingForApproval}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("settling to a waiting status: err = %v, want ErrInvalid", err)
	}
	if err := f.st.RecordRunStep(ctx, store.RecordRunStepParams{ID: good.ID, LeaseOwner: good.LeaseOwner, Lease: time.Minute, Progress: store.RunProgress{Rounds: -1}}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("negative rounds: err = %v, want ErrInvalid", err)
	}
	for _, p := range []store.ListRunsParams{{Limit: -1}, {Limit: store.MaxRunLimit + 1}, {Status: "sleeping"}} {
		if _, err := f.st.Runs(ctx, p); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Runs %+v: err = %v, want ErrInvalid", p, err)
		}
	}
	if got := getRun(t, f.st, good.ID); got.Status != store.RunRunning || got.Rounds != 0 {
		t.Errorf("refused calls changed the run: %+v", got)
	}
}
