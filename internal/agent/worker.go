package agent

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// Worker defaults.
const (
	DefaultPollInterval = time.Second
	DefaultReapInterval = time.Minute
)

// WorkerParams configure NewWorker.
type WorkerParams struct {
	Runtime *Runtime // required
	// Concurrency is how many runs execute at once; 0 means 1.
	Concurrency int
	// Poll is how long an idle slot waits before looking again;
	// ReapInterval how often the reaper runs (0: the defaults).
	Poll         time.Duration
	ReapInterval time.Duration
	// After is the clock's timer; nil means time.After.
	After  func(time.Duration) <-chan time.Time
	Logger *slog.Logger
	// OnResult, when set, sees every run a slot finished.
	OnResult func(Result)
	// Drain stops each slot once the queue is empty, for batch use.
	Drain bool
}

// Worker runs queued runs in Concurrency slots and reaps expired leases.
// Stop ends it gracefully: no new claims, running runs finish.
type Worker struct {
	p    WorkerParams
	log  *slog.Logger
	stop chan struct{}
	once sync.Once
	wg   sync.WaitGroup
}

// NewWorker returns a worker; Start starts it.
func NewWorker(p WorkerParams) (*Worker, error) {
	if p.Runtime == nil {
		return nil, errors.New("agent: a worker needs a runtime")
	}
	p.Concurrency = max(p.Concurrency, 1)
	if p.Poll <= 0 {
		p.Poll = DefaultPollInterval
	}
	if p.ReapInterval <= 0 {
		p.ReapInterval = DefaultReapInterval
	}
	if p.After == nil {
		p.After = time.After
	}
	w := &Worker{p: p, log: p.Logger, stop: make(chan struct{})}
	if w.log == nil {
		w.log = p.Runtime.log
	}
	return w, nil
}

// Start starts the slots and the reaper. When ctx ends the worker stops
// as with Stop; the runs in flight still finish, since a shutdown is not
// a user's cancel (a killed process leaves them to the reaper).
func (w *Worker) Start(ctx context.Context) {
	run := context.WithoutCancel(ctx)
	for range w.p.Concurrency {
		w.wg.Go(func() { w.slot(ctx, run) })
	}
	if !w.p.Drain {
		w.wg.Go(func() { w.reaper(ctx) })
	}
}

// Stop stops claiming and waits for the runs in flight.
func (w *Worker) Stop() {
	w.once.Do(func() { close(w.stop) })
	w.wg.Wait()
}

// Wait waits for the slots to end (a draining worker ends by itself).
func (w *Worker) Wait() { w.wg.Wait() }

func (w *Worker) stopped(ctx context.Context) bool {
	select {
	case <-w.stop:
		return true
	case <-ctx.Done():
		return true
	default:
		return false
	}
}

func (w *Worker) slot(ctx, run context.Context) {
	for !w.stopped(ctx) {
		res, ok := w.p.Runtime.RunQueued(run, RunQueuedParams{})
		if ok {
			if w.p.OnResult != nil {
				w.p.OnResult(res)
			}
			continue
		}
		if w.p.Drain {
			return
		}
		select {
		case <-w.stop:
			return
		case <-ctx.Done():
			return
		case <-w.p.After(w.p.Poll):
		}
	}
}

func (w *Worker) reaper(ctx context.Context) {
	for {
		if rep, err := w.p.Runtime.Reap(ctx); err != nil {
			if ctx.Err() == nil {
				w.log.ErrorContext(ctx, "reaper pass failed", "error", err.Error())
			}
		} else if rep != (ReapReport{}) {
			w.log.InfoContext(ctx, "reaped runs with expired leases", "requeued", rep.Requeued,
				"dead_lettered", rep.DeadLettered, "exhausted", rep.Exhausted)
		}
		select {
		case <-w.stop:
			return
		case <-ctx.Done():
			return
		case <-w.p.After(w.p.ReapInterval):
		}
	}
}
