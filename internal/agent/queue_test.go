package agent_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/secret"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
)

// testClock is a clock that moves only when told.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// second is another process on the fixture's database: its own store
// connection, clock and lease owner.
func (f *fixture) second(t testing.TB, name string, now func() time.Time) (*agent.Runtime, store.Store) {
	t.Helper()
	st, err := store.Open(context.Background(), f.dsn, store.OpenParams{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	rt, err := agent.New(agent.Params{Gate: f.gate, Store: st, Providers: f.providers, Telemetry: f.tel, Keyring: f.keyring,
		Now: now, Logger: slog.New(slog.NewTextHandler(f.logs, nil)), LeaseOwner: "interactive:" + name, Configs: f.cfgs, Users: f.tsite})
	if err != nil {
		t.Fatal(err)
	}
	return rt, st
}

func (f *fixture) enqueue(t testing.TB, n int, config string) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		id, err := f.rt.Enqueue(context.Background(), f.request(config, "editor", "Queued question."))
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
	}
	return ids
}

// TestWorkersShareTheQueue: two workers (separate store connections, as
// two machines) drain one queue; every run runs exactly once.
func TestWorkersShareTheQueue(t *testing.T) {
	forStores(t, func(t *testing.T, dsn func(testing.TB) string) {
		f := newFixture(t, fixtureParams{storeDSN: dsn(t)})
		srv := llmtest.New(t, llmtest.Options{Wire: llmtest.OpenAI, Cycle: true}, llmtest.Text("Done."))
		f.apply(providerDoc("queued", "openai", "externalGlobal", srv, 0, ""))
		const runs = 24
		ids := f.enqueue(t, runs, "queued")
		row := f.run(ids[0])
		if row.Status != store.RunQueued || !row.HasQueuedRequest || row.LeaseOwner != "" || row.OwnerUsername != "editor" {
			t.Fatalf("queued row = %+v", row)
		}
		var sealed string
		if err := f.rawDB().QueryRow(`SELECT queued_request FROM runs WHERE id = '` + ids[0] + `'`).Scan(&sealed); err != nil {
			t.Fatal(err)
		}
		if sealed == "" || strings.Contains(sealed, "Queued question") {
			t.Errorf("the queued request is not sealed: %q", sealed)
		}
		rt2, _ := f.second(t, "other:2", fixedNow)
		var mu sync.Mutex
		seen := map[string]int{}
		onResult := func(res agent.Result) {
			mu.Lock()
			defer mu.Unlock()
			seen[res.RunID]++
			if res.Outcome != agent.OutcomeCompleted || res.Content != "Done." {
				t.Errorf("result = %+v", res)
			}
		}
		var workers []*agent.Worker
		for _, rt := range []*agent.Runtime{f.rt, rt2} {
			w, err := agent.NewWorker(agent.WorkerParams{Runtime: rt, Concurrency: 3, Drain: true, OnResult: onResult})
			if err != nil {
				t.Fatal(err)
			}
			w.Start(context.Background())
			workers = append(workers, w)
		}
		for _, w := range workers {
			w.Wait()
		}
		if len(seen) != runs {
			t.Errorf("%d runs ran, want %d", len(seen), runs)
		}
		for id, n := range seen {
			if n != 1 {
				t.Errorf("run %s ran %d times", id, n)
			}
		}
		for _, id := range ids {
			if r := f.run(id); r.Status != store.RunCompleted || r.HasQueuedRequest || r.Rounds != 1 || len(f.calls(id)) != 1 {
				t.Errorf("run %s = %+v", id, r)
			}
		}
		if _, ok := f.rt.RunQueued(context.Background(), agent.RunQueuedParams{}); ok {
			t.Error("RunQueued claimed a run from an empty queue")
		}
	})
}

// TestWorkerStop: a worker stops gracefully with nothing to do.
func TestWorkerStop(t *testing.T) {
	f := newFixture(t, fixtureParams{})
	ticks := make(chan time.Time)
	w, err := agent.NewWorker(agent.WorkerParams{Runtime: f.rt, Concurrency: 2, After: func(time.Duration) <-chan time.Time { return ticks }})
	if err != nil {
		t.Fatal(err)
	}
	w.Start(context.Background())
	w.Stop()
	w.Stop() // idempotent
}

// TestReap: the reaper's cases, seen from a process whose clock is past
// the leases of a dead one.
func TestReap(t *testing.T) {
	forStores(t, func(t *testing.T, dsn func(testing.TB) string) {
		f := newFixture(t, fixtureParams{storeDSN: dsn(t)})
		srv := llmtest.New(t, llmtest.Options{Wire: llmtest.OpenAI, Cycle: true}, llmtest.Text("Done."))
		f.apply(providerDoc("queued", "openai", "externalGlobal", srv, 0, ""))
		ctx := context.Background()
		ids := f.enqueue(t, 3, "queued")
		// A dead worker claimed all three; one was mid-write.
		for _, id := range ids {
			if _, err := f.st.ClaimQueuedRun(ctx, store.ClaimQueuedRunParams{ID: id, LeaseOwner: "worker:dead:1", Lease: time.Minute}); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.st.RecordRunStep(ctx, store.RecordRunStepParams{ID: ids[1], LeaseOwner: "worker:dead:1", Lease: time.Minute, PendingEffect: "non_idempotent_write"}); err != nil {
			t.Fatal(err)
		}
		if err := f.st.RecordRunStep(ctx, store.RecordRunStepParams{ID: ids[2], LeaseOwner: "worker:dead:1", Lease: time.Minute, PendingEffect: "idempotent_write"}); err != nil {
			t.Fatal(err)
		}
		// An interactive run of a dead process.
		if _, err := f.st.CreateRun(ctx, store.CreateRunParams{ID: "0195f1c2-0000-7000-8000-00000000dead", OwnerUsername: "editor", LeaseOwner: "interactive:dead:1", Lease: time.Minute}); err != nil {
			t.Fatal(err)
		}

		clock := &testClock{now: fixedNow()}
		rt2, _ := f.second(t, "late:2", clock.Now)
		if rep, err := rt2.Reap(ctx); err != nil || rep != (agent.ReapReport{}) {
			t.Fatalf("reap with live leases = %+v, %v", rep, err)
		}
		clock.Advance(2 * time.Minute)
		rep, err := rt2.Reap(ctx)
		if err != nil || rep != (agent.ReapReport{Requeued: 2, DeadLettered: 2}) {
			t.Fatalf("reap = %+v, %v", rep, err)
		}
		if r := f.run(ids[1]); r.Status != store.RunFailed || r.TerminationReason != "not_retryable" || r.PendingEffect != "" {
			t.Errorf("fenced non-idempotent write = %+v", r)
		}
		if r := f.run("0195f1c2-0000-7000-8000-00000000dead"); r.Status != store.RunFailed || r.TerminationReason != "not_retryable" {
			t.Errorf("interactive run = %+v", r)
		}
		for _, id := range []string{ids[0], ids[2]} {
			if r := f.run(id); r.Status != store.RunQueued || r.RequeueCount != 1 || r.PendingEffect != "" {
				t.Errorf("requeued run = %+v", r)
			}
		}
		// Backoff: 30 s before the first retry.
		if _, ok := rt2.RunQueued(ctx, agent.RunQueuedParams{}); ok {
			t.Error("a requeued run was claimable during its backoff")
		}
		clock.Advance(31 * time.Second)
		for range 2 {
			res, ok := rt2.RunQueued(ctx, agent.RunQueuedParams{})
			if !ok || res.Outcome != agent.OutcomeCompleted {
				t.Errorf("retry = %+v, %v", res, ok)
			}
		}
		// A run that died MaxRequeues times is not retried again.
		id := f.enqueue(t, 1, "queued")[0]
		for i := range agent.MaxRequeues + 1 {
			if _, err := f.st.ClaimQueuedRun(ctx, store.ClaimQueuedRunParams{ID: id, LeaseOwner: "worker:dead:1", Lease: time.Minute}); err != nil {
				t.Fatalf("claim %d: %v", i, err)
			}
			if i == agent.MaxRequeues {
				break
			}
			if _, err := f.st.RequeueRun(ctx, store.RequeueRunParams{ID: id, LeaseOwner: "worker:dead:1"}); err != nil {
				t.Fatal(err)
			}
		}
		clock.Advance(time.Hour)
		if rep, err := rt2.Reap(ctx); err != nil || rep.Exhausted != 1 {
			t.Fatalf("reap of an exhausted run = %+v, %v", rep, err)
		}
		if r := f.run(id); r.TerminationReason != "retries_exhausted" {
			t.Errorf("exhausted run = %+v", r)
		}
	})
}

func TestRequeueDelay(t *testing.T) {
	for n, want := range []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 10 * time.Minute, 10 * time.Minute} {
		if got := agent.RequeueDelay(n); got != want {
			t.Errorf("RequeueDelay(%d) = %v, want %v", n, got, want)
		}
	}
}

// TestLeaseLost: when another process takes the run's lease mid-run, the
// segment stops at its next step, before anything else runs, and writes
// nothing over the new owner.
func TestLeaseLost(t *testing.T) {
	var f *fixture
	thief := newTestTool("take_over", tool.GroupContent, tool.EditorContent)
	thief.run = func(ctx context.Context, call tool.Call, _ map[string]any) (tool.Result, error) {
		_, err := f.rawDB().ExecContext(ctx, `UPDATE runs SET lease_owner = 'worker:thief:1' WHERE id = '`+call.RunID+`'`)
		return tool.Text("taken"), err
	}
	after := newTestTool("after_takeover", tool.GroupContent, tool.EditorContent)
	f = newFixture(t, fixtureParams{extra: []tool.Tool{thief, after}})
	srv := llmtest.NewOpenAI(t, llmtest.Calls(llmtest.Call("c1", "take_over", `{}`), llmtest.Call("c2", "after_takeover", `{}`)))
	f.apply(providerDoc("queued", "openai", "externalGlobal", srv, 0, ""))
	id := f.enqueue(t, 1, "queued")[0]
	// A write-free turn runs both calls, then flushes before the next
	// provider call: that is where the lost lease shows.
	res, ok := f.rt.RunQueued(context.Background(), agent.RunQueuedParams{ID: id})
	if !ok || res.Outcome != agent.OutcomeLeaseLost {
		t.Fatalf("result = %+v, %v", res, ok)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d provider requests after the lease was lost", n)
	}
	r := f.run(id)
	if r.Status != store.RunRunning || r.LeaseOwner != "worker:thief:1" || r.Rounds != 0 {
		t.Errorf("row after a lost lease = %+v; the segment must not write over the new owner", r)
	}
}

// TestQueuedProviderFailureRequeued: a retryable provider failure of a
// queued run sends it back to the queue with backoff; the retry completes.
func TestQueuedProviderFailureRequeued(t *testing.T) {
	f := newFixture(t, fixtureParams{})
	srv := llmtest.NewOpenAI(t, llmtest.Status(503), llmtest.Text("Done."))
	f.apply(providerDoc("flaky", "openai", "externalGlobal", srv, 0, ""))
	id := f.enqueue(t, 1, "flaky")[0]
	clock := &testClock{now: fixedNow()}
	rt2, _ := f.second(t, "w:2", clock.Now)
	res, ok := rt2.RunQueued(context.Background(), agent.RunQueuedParams{ID: id})
	if !ok || res.Outcome != agent.OutcomeRequeued {
		t.Fatalf("result = %+v, %v", res, ok)
	}
	r := f.run(id)
	if r.Status != store.RunQueued || r.RequeueCount != 1 || r.Rounds != 1 || !r.AvailableAt.Equal(fixedNow().Add(30*time.Second)) {
		t.Errorf("requeued row = %+v", r)
	}
	if _, ok := rt2.RunQueued(context.Background(), agent.RunQueuedParams{}); ok {
		t.Error("claimed during the backoff")
	}
	clock.Advance(30 * time.Second)
	res, ok = rt2.RunQueued(context.Background(), agent.RunQueuedParams{})
	if !ok || res.Outcome != agent.OutcomeCompleted || res.Rounds != 2 {
		t.Fatalf("retry = %+v, %v", res, ok)
	}
	checkSeq(t, f.events(id))
}

// TestCancelStopsRunningLoop: Cancel of a running run wins, and the loop
// stops at its next step boundary without another provider call.
func TestCancelStopsRunningLoop(t *testing.T) {
	var f *fixture
	canceller := newTestTool("cancel_me", tool.GroupContent, tool.EditorContent)
	canceller.run = func(ctx context.Context, call tool.Call, _ map[string]any) (tool.Result, error) {
		won, err := f.rt.Cancel(ctx, f.user("editor"), agent.Access{}, call.RunID)
		if !won || err != nil {
			t.Errorf("Cancel = %v, %v", won, err)
		}
		return tool.Text("ok"), nil
	}
	f = newFixture(t, fixtureParams{extra: []tool.Tool{canceller}})
	srv := llmtest.NewOpenAI(t, llmtest.Calls(llmtest.Call("c1", "cancel_me", `{}`)))
	f.apply(providerDoc("cancelling", "openai", "externalGlobal", srv, 0, ""))
	res := f.rt.Run(context.Background(), f.request("cancelling", "editor", "Go."))
	if res.Outcome != agent.OutcomeCancelled {
		t.Fatalf("result = %+v", res)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d provider requests after the cancel", n)
	}
	if r := f.run(res.RunID); r.Status != store.RunCancelled || r.TerminationReason != "cancelled" {
		t.Errorf("row = %+v", r)
	}
	if won, err := f.rt.Cancel(context.Background(), f.user("admin"), agent.Access{}, res.RunID); won || err != nil {
		t.Errorf("a second cancel = %v, %v; want false", won, err)
	}
}

// TestResealRotation: after a key rotation, Reseal moves the parked runs
// to the new key, so a keyring without the old key decides and runs them.
func TestResealRotation(t *testing.T) {
	c := newApprovalCase(t, "", "", true)
	f := c.f
	queued := f.enqueue(t, 1, "writer")[0]
	newKey, err := secret.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := secret.NewKeyring(newKey, f.key)
	if err != nil {
		t.Fatal(err)
	}
	only, err := secret.NewKeyring(newKey)
	if err != nil {
		t.Fatal(err)
	}
	runtimeWith := func(k *secret.Keyring) *agent.Runtime {
		rt, err := agent.New(agent.Params{Gate: f.gate, Store: f.st, Providers: f.providers, Telemetry: f.tel, Keyring: k,
			Now: fixedNow, Configs: f.cfgs, Users: f.tsite})
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}
	// Before the reseal the new key alone opens nothing.
	if _, err := runtimeWith(only).Approve(context.Background(), agent.ApproveParams{RunID: c.res.RunID, Approver: f.user("admin"), Approved: true, Digest: c.res.Pending.Digest}); refusal(err) != agent.RefusedCorruptState {
		t.Fatalf("approve with the new key before the reseal: %v", err)
	}
	rep, err := runtimeWith(rotated).Reseal(context.Background())
	if err != nil || rep != (agent.ResealReport{Resealed: 2}) {
		t.Fatalf("Reseal = %+v, %v", rep, err)
	}
	if rep, err := runtimeWith(rotated).Reseal(context.Background()); err != nil || rep != (agent.ResealReport{}) {
		t.Errorf("a second Reseal = %+v, %v; want nothing to do", rep, err)
	}
	rt := runtimeWith(only)
	res, err := rt.Approve(context.Background(), agent.ApproveParams{RunID: c.res.RunID, Approver: f.user("admin"), Approved: true, Digest: c.res.Pending.Digest})
	if err != nil || res.Outcome != agent.OutcomeCompleted {
		t.Fatalf("approve after the reseal = %+v, %v", res, err)
	}
	// The queued request is sealed with the new key too.
	var sealed string
	if err := f.rawDB().QueryRow(`SELECT queued_request FROM runs WHERE id = '` + queued + `'`).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	if id, ok := secret.KeyIDOf(sealed); !ok || id != only.CurrentKeyID() || rotated.NeedsReseal(sealed) {
		t.Errorf("queued request sealed with key %q, want %q", id, only.CurrentKeyID())
	}
}

// TestWorkerStopFinishesInFlight: Stop, and the end of Start's context,
// stop claiming but let the run in flight finish: a shutdown is not a
// user's cancel.
func TestWorkerStopFinishesInFlight(t *testing.T) {
	f := newFixture(t, fixtureParams{})
	asked, hold := make(chan struct{}), make(chan struct{})
	srv := llmtest.NewOpenAI(t, llmtest.Round{Text: "Finished.", Check: func(testing.TB, llmtest.Request) { close(asked) }, Hold: hold})
	f.apply(providerDoc("slow", "openai", "externalGlobal", srv, 0, ""))
	ids := f.enqueue(t, 2, "slow")
	results := make(chan agent.Result, 2)
	w, err := agent.NewWorker(agent.WorkerParams{Runtime: f.rt, Concurrency: 1, OnResult: func(r agent.Result) { results <- r },
		After: func(time.Duration) <-chan time.Time { return make(chan time.Time) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.Start(ctx)
	<-asked
	cancel()
	stopped := make(chan struct{})
	go func() {
		w.Stop()
		close(stopped)
	}()
	close(hold)
	<-stopped
	close(results)
	var got []agent.Result
	for r := range results {
		got = append(got, r)
	}
	if len(got) != 1 || got[0].Outcome != agent.OutcomeCompleted || got[0].Content != "Finished." {
		t.Fatalf("results = %+v; want the run in flight completed and nothing else claimed", got)
	}
	other := ids[0]
	if got[0].RunID == ids[0] {
		other = ids[1]
	}
	if r := f.run(other); r.Status != store.RunQueued {
		t.Errorf("the second run = %+v; a stopping worker must not claim it", r)
	}
}
