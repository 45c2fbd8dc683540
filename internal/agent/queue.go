package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

// Queue limits.
const (
	// MaxRequeues bounds how often a run goes back to the queue.
	MaxRequeues = 3
	// ReapBatch is how many expired runs one reaper pass handles.
	ReapBatch = 50
)

// Outcomes and terminations of queued runs.
const (
	// OutcomeRequeued: the run went back to the queue to be tried again.
	OutcomeRequeued Outcome = "requeued"
	// OutcomeLeaseLost: another process holds the run now; this segment
	// stopped without writing.
	OutcomeLeaseLost Outcome = "lease_lost"

	TerminationNotRetryable     Termination = "not_retryable"
	TerminationRetriesExhausted Termination = "retries_exhausted"
)

// RequeueDelay is the backoff before the n-th retry (n from 0):
// min(30 s·2^n, 600 s).
func RequeueDelay(n int) time.Duration {
	if n >= 5 {
		return 600 * time.Second
	}
	return min(30*time.Second<<max(n, 0), 600*time.Second)
}

// queuedRequest is what a queued run keeps, sealed, until a worker runs
// it: everything of the Request but the resolved configuration (resolved
// again, live) and the actor (looked up again by name).
//
// Version 1 is the caller's request. Version 2 is a continuation, stored
// with the step of every write the run makes: Messages is then the
// transcript as the loop held it after the write's result (assembled and
// screened), and Round the round of that turn, so a worker taking the run
// over after a crash goes on from there instead of planning the write
// again. A process that knows only version 1 refuses a continuation
// rather than start the run over.
type queuedRequest struct {
	Version       int           `json:"version"`
	Configuration string        `json:"configuration"`
	Messages      []llm.Message `json:"messages"`
	Tools         []string      `json:"tools"`
	Caller        Caller        `json:"caller"`
	MaxRounds     int           `json:"maxRounds,omitempty"`
	Round         int           `json:"round,omitempty"`
	Calibration   float64       `json:"calibration,omitempty"`
}

// Versions of queuedRequest.
const (
	queuedRequestVersion = 1
	continuationVersion  = 2
)

func queueAAD(runID string) string { return "agent_queue:" + runID }

// ErrNoQueue is Enqueue's answer without a master key.
var ErrNoQueue = errors.New("agent: queued runs need a master key to seal their request")

// Enqueue stores a queued run whose request is sealed at rest and
// returns its id; a worker runs it (RunQueued). It fails when the run
// cannot be stored; no master key means no queue.
func (rt *Runtime) Enqueue(ctx context.Context, req Request) (string, error) {
	if rt.keyring == nil {
		return "", ErrNoQueue
	}
	if req.Config == nil {
		return "", errors.New("agent: a queued run needs a configuration")
	}
	id := newRunID(rt.now())
	b, err := json.Marshal(queuedRequest{
		Version: queuedRequestVersion, Configuration: req.Config.Configuration.Identifier, Messages: req.Messages, Tools: req.Tools,
		Caller: req.Caller, MaxRounds: req.MaxRounds,
	})
	if err != nil {
		return "", fmt.Errorf("agent: cannot encode the request: %w", err)
	}
	sealed, err := rt.keyring.Seal(b, queueAAD(id))
	if err != nil {
		return "", fmt.Errorf("agent: cannot seal the request: %w", err)
	}
	privacy := agentconfig.PrivacyMetadata
	if req.Config.Configuration.Privacy == agentconfig.PrivacyFull {
		privacy = agentconfig.PrivacyFull
	}
	p := store.CreateRunParams{
		ID: id, Configuration: clip(req.Config.Configuration.Identifier), CallerSource: clip(req.Caller.Source),
		CallerOperation: clip(req.Caller.Operation), Privacy: string(privacy),
	}
	if a := req.Actor; a != nil {
		p.OwnerUsername, p.OwnerUID = clip(a.Username), max(a.UID, 0)
	}
	if _, err := rt.st.EnqueueRun(ctx, store.EnqueueRunParams{CreateRunParams: p, QueuedRequest: sealed}); err != nil {
		return "", fmt.Errorf("agent: the run could not be queued: %w", err)
	}
	return id, nil
}

// RunQueuedParams are the parameters of RunQueued.
type RunQueuedParams struct {
	// ID claims that run only; "" claims the oldest available one.
	ID      string
	OnEvent func(Event)
}

// RunQueued is the worker's entry: it claims a queued run (a guarded
// update, so two workers never get the same run), runs it under a worker
// lease and settles it. ok is false when no run was claimable. A run
// that recorded a write goes on from its continuation (see proceed)
// instead of starting again. A run whose request no longer opens, or
// whose configuration or owner is gone, fails. A retryable provider
// failure goes back to the queue, with backoff, at most MaxRequeues
// times.
func (rt *Runtime) RunQueued(ctx context.Context, p RunQueuedParams) (res Result, ok bool) {
	owner := "worker:" + rt.node + ":" + randomHex(4)
	c, err := rt.st.ClaimQueuedRun(ctx, store.ClaimQueuedRunParams{ID: p.ID, LeaseOwner: owner, Lease: LeaseDuration})
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			rt.log.ErrorContext(ctx, "cannot claim a queued run", "error", err.Error())
		}
		return Result{}, false
	}
	ctx = mcp.WithCallBudget(ctx, mcp.NewCallBudget(mcp.CallsPerSegment))
	ctx, span := rt.spans.segment(ctx, "queued", c.ID, nil, Caller{})
	defer func() { rt.spans.end(span, res, nil) }() // after the guard below has set res
	r := &run{rt: rt, id: c.ID, owner: owner, created: true, cal: InitialCalibration, prog: c.RunProgress, requeues: c.RequeueCount, queued: true}
	r.rec = &recorder{runID: c.ID, seq: c.NextSeq, full: c.Privacy == string(agentconfig.PrivacyFull), now: rt.now, onEvent: p.OnEvent}
	r.usage = llm.Usage{InputTokens: int(c.InputTokens), OutputTokens: int(c.OutputTokens)}
	defer r.guard(ctx, &res)
	q, e := rt.rehydrate(ctx, r, c, p.OnEvent)
	if e == nil {
		e = r.prepare(ctx)
	}
	if e != nil {
		return r.finish(ctx, *e), true
	}
	var end ending
	if q.Version == continuationVersion {
		end = r.proceed(ctx, q)
	} else {
		end = r.loop(ctx)
	}
	if rq := r.requeue(ctx, end); rq != nil {
		return *rq, true
	}
	return r.finish(ctx, end), true
}

// rehydrate rebuilds the request of a claimed queued run: the caller's
// request, or the continuation stored with its last write.
func (rt *Runtime) rehydrate(ctx context.Context, r *run, c store.ClaimedRun, onEvent func(Event)) (queuedRequest, *ending) {
	fail := func(public string) (queuedRequest, *ending) {
		e := failed(TerminationNotRetryable, "rehydrate", public)
		return queuedRequest{}, &e
	}
	if rt.keyring == nil || rt.configs == nil || rt.users == nil {
		return fail("This process cannot run queued runs (no master key, configurations or users).")
	}
	plain, err := rt.keyring.Open(c.Sealed, queueAAD(c.ID))
	if err != nil {
		return fail("The queued request does not open.")
	}
	var q queuedRequest
	if err := json.Unmarshal(plain, &q); err != nil || q.Version != queuedRequestVersion && (q.Version != continuationVersion || len(q.Messages) == 0) {
		return fail("The queued request is not readable.")
	}
	cfg, err := rt.configs.Resolve(ctx, q.Configuration)
	if err != nil {
		return fail(fmt.Sprintf("The configuration %q cannot be resolved.", q.Configuration))
	}
	var actor *typo3.BackendUser
	if c.OwnerUsername != "" {
		if actor, err = rt.users.BackendUserByName(ctx, c.OwnerUsername); err != nil {
			return fail(fmt.Sprintf("The run's owner %s cannot act.", c.OwnerUsername))
		}
	}
	r.cfg, r.conf = cfg, cfg.Configuration
	r.req = Request{Config: cfg, Messages: q.Messages, Actor: actor, Caller: q.Caller, Tools: q.Tools, MaxRounds: q.MaxRounds, OnEvent: onEvent}
	return q, nil
}

// continuation seals where the run stands after a write: the transcript
// through the write's result and the round of its turn.
func (r *run) continuation(round int, msgs []llm.Message) (string, error) {
	if r.rt.keyring == nil {
		return "", errors.New("no master key to seal it")
	}
	b, err := json.Marshal(queuedRequest{
		Version: continuationVersion, Configuration: r.conf.Identifier, Messages: msgs, Tools: r.req.Tools,
		Caller: r.req.Caller, MaxRounds: r.req.MaxRounds, Round: round, Calibration: r.cal,
	})
	if err != nil {
		return "", err
	}
	sealed, err := r.rt.keyring.Seal(b, queueAAD(r.id))
	if err != nil {
		return "", err
	}
	if len(sealed) > store.MaxSuspendedState {
		return "", fmt.Errorf("it is %d bytes, more than the %d a run may keep", len(sealed), store.MaxSuspendedState)
	}
	return sealed, nil
}

// interrupted answers a call of the continued turn whose result was never
// recorded: it may or may not have run.
const interrupted = "Error: the run was interrupted before this call's result was recorded; it may not have run. Call it again if it is still needed."

// proceed goes on from a continuation, with the tools offered afresh and
// a fresh round cap. The calls of its turn after the recorded write were
// not recorded: each is answered as interrupted, never run again here, so
// the model decides whether to ask again (and a write asked again needs
// a new approval).
func (r *run) proceed(ctx context.Context, q queuedRequest) ending {
	if q.Calibration > 0 {
		r.cal = q.Calibration
	}
	if e := r.offer(ctx); e != nil {
		return *e
	}
	msgs := slices.Clip(q.Messages)
	for _, c := range unanswered(msgs) {
		r.rec.emit(EventTool, q.Round, 0, ToolPayload{Tool: bounded(c.Name), CallID: bounded(c.ID), IsError: true, Bytes: len(interrupted)})
		msgs = append(msgs, llm.Message{Role: llm.RoleTool, Content: interrupted, ToolCallID: c.ID})
	}
	return r.rounds(ctx, msgs, q.Round)
}

// unanswered are the calls of the transcript's last tool-call turn that
// have no result after it.
func unanswered(msgs []llm.Message) []llm.ToolCall {
	last := -1
	for i, m := range msgs {
		if m.Role == llm.RoleAssistant && len(m.ToolCalls) > 0 {
			last = i
		}
	}
	if last < 0 {
		return nil
	}
	answered := map[string]bool{}
	for _, m := range msgs[last+1:] {
		if m.Role == llm.RoleTool {
			answered[m.ToolCallID] = true
		}
	}
	var out []llm.ToolCall
	for _, c := range msgs[last].ToolCalls {
		if !answered[c.ID] {
			out = append(out, c)
		}
	}
	return out
}

// requeue puts a run whose provider failed retryably back in the queue,
// unless a non-idempotent write is fenced or the retries are spent.
func (r *run) requeue(ctx context.Context, e ending) *Result {
	if e.outcome != OutcomeFailed || e.term != TerminationProviderFailed || !llm.FailureClass(e.class).Retryable() ||
		r.requeues >= MaxRequeues || ctx.Err() != nil {
		return nil
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	// The attempt's counters and events first, then back to the queue.
	if e := r.flush(wctx); e != nil {
		return nil
	}
	if _, err := r.rt.st.RequeueRun(wctx, store.RequeueRunParams{
		ID: r.id, LeaseOwner: r.owner, Delay: RequeueDelay(r.requeues),
	}); err != nil {
		r.rt.log.WarnContext(ctx, "cannot requeue a run; failing it", "run_id", r.id, "error", err.Error())
		return nil
	}
	r.finished = true
	return &Result{Outcome: OutcomeRequeued, RunID: r.id, Rounds: r.prog.Rounds, ToolCalls: r.prog.ToolCalls, Usage: r.usage,
		Termination: e.term, Error: e.public}
}

// ReapReport counts what one reaper pass did.
type ReapReport struct {
	Requeued, DeadLettered, Exhausted int
}

// Reap handles runs whose lease expired (their process died): a run with
// a fenced non-idempotent write, or without a stored request
// (an interactive run, resumed or not), is dead-lettered not_retryable; one
// requeued MaxRequeues times already fails retries_exhausted; the others
// go back to the queue with backoff, to go on from their last recorded
// write if they made one. Every write re-checks that the lease is still
// the expired one, so a run that came back is left alone.
func (rt *Runtime) Reap(ctx context.Context) (ReapReport, error) {
	var rep ReapReport
	rows, err := rt.st.ExpiredRuns(ctx, ReapBatch)
	if err != nil {
		return rep, err
	}
	for _, row := range rows {
		settle := func(term Termination, public string) error {
			_, err := rt.st.SettleRun(ctx, store.SettleRunParams{
				ID: row.ID, LeaseOwner: row.LeaseOwner, Expired: true, Status: store.RunFailed, Outcome: string(OutcomeFailed),
				TerminationReason: string(term), Progress: row.RunProgress, Error: public, ErrorClass: "lease_expired",
			})
			return err
		}
		switch {
		case row.PendingEffect != "" && !tool.Effect(row.PendingEffect).SafeToRetry():
			err = settle(TerminationNotRetryable, "The run stopped during a write that must not be repeated; it is not retried.")
			if err == nil {
				rep.DeadLettered++
			}
		case !row.HasQueuedRequest:
			err = settle(TerminationNotRetryable, "The run's process stopped and the run has no stored request to retry.")
			if err == nil {
				rep.DeadLettered++
			}
		case row.RequeueCount >= MaxRequeues:
			err = settle(TerminationRetriesExhausted, "The run's process stopped too often; it is not retried again.")
			if err == nil {
				rep.Exhausted++
			}
		default:
			_, err = rt.st.RequeueRun(ctx, store.RequeueRunParams{ID: row.ID, LeaseOwner: row.LeaseOwner, Expired: true, Delay: RequeueDelay(row.RequeueCount)})
			if err == nil {
				rep.Requeued++
			}
		}
		if err != nil && !errors.Is(err, store.ErrConflict) {
			return rep, err
		}
	}
	return rep, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// ResealReport counts what Reseal did.
type ResealReport struct {
	Resealed, Unreadable int
}

// Reseal is the rotation path of parked runs: every suspended state and
// queued request sealed with a key other than the current one is opened
// (with a previous key of the keyring) and sealed again with the current
// key, so the old key can then be retired. A value no key opens is
// counted, left as it is, and refused when the run is decided.
func (rt *Runtime) Reseal(ctx context.Context) (ResealReport, error) {
	var rep ResealReport
	if rt.keyring == nil {
		return rep, errors.New("agent: resealing needs the master key")
	}
	for after := ""; ; {
		page, err := rt.st.ParkedRuns(ctx, store.ParkedRunsParams{After: after, Limit: store.DefaultRunLimit})
		if err != nil {
			return rep, err
		}
		for _, pr := range page {
			for _, v := range []struct {
				sealed, aad string
				queued      bool
			}{{pr.SuspendedState, suspendAAD(pr.ID), false}, {pr.QueuedRequest, queueAAD(pr.ID), true}} {
				if v.sealed == "" || !rt.keyring.NeedsReseal(v.sealed) {
					continue
				}
				plain, err := rt.keyring.Open(v.sealed, v.aad)
				if err != nil {
					rep.Unreadable++
					continue
				}
				fresh, err := rt.keyring.Seal(plain, v.aad)
				if err != nil {
					return rep, err
				}
				err = rt.st.ResealRun(ctx, store.ResealRunParams{ID: pr.ID, Queued: v.queued, Old: v.sealed, New: fresh})
				switch {
				case err == nil:
					rep.Resealed++
				case !errors.Is(err, store.ErrConflict):
					return rep, err
				}
			}
		}
		if len(page) < store.DefaultRunLimit {
			return rep, nil
		}
		after = page[len(page)-1].ID
	}
}
