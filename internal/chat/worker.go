package chat

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// ReconcileEveryPolls is how many poll intervals pass between two
// reconcile passes of a worker, unless WorkerParams.ReconcileEvery says.
const ReconcileEveryPolls = 50

// WorkerParams configure NewWorker.
type WorkerParams struct {
	Service *Service // required
	// Concurrency is how many turns run at once; 0 means 1.
	Concurrency int
	// Poll is how long an idle slot waits before looking again; 0 means
	// DefaultPollInterval. A turn queued through the same Service wakes
	// an idle slot at once; polling finds the turns other processes
	// queue.
	Poll time.Duration
	// ReconcileEvery is how often reconcile runs; 0 means
	// ReconcileEveryPolls × Poll.
	ReconcileEvery time.Duration
	// After is the clock's timer; nil means time.After.
	After  func(time.Duration) <-chan time.Time
	Logger *slog.Logger
	// Drain stops each slot once nothing is claimable (and runs no
	// reconciler): for `chat process`-like batch runs and tests.
	Drain bool
}

// Worker runs queued chat turns in Concurrency slots and reconciles
// recorded decisions periodically. Stop ends it gracefully: no new
// claims, turns in flight finish.
type Worker struct {
	p    WorkerParams
	log  *slog.Logger
	stop chan struct{}
	once sync.Once
	wg   sync.WaitGroup
}

// NewWorker returns a worker; Start starts it.
func NewWorker(p WorkerParams) (*Worker, error) {
	if p.Service == nil {
		return nil, errors.New("chat: a worker needs a service")
	}
	p.Concurrency = max(p.Concurrency, 1)
	if p.Poll <= 0 {
		p.Poll = DefaultPollInterval
	}
	if p.ReconcileEvery <= 0 {
		p.ReconcileEvery = ReconcileEveryPolls * p.Poll
	}
	if p.After == nil {
		p.After = time.After
	}
	w := &Worker{p: p, log: p.Logger, stop: make(chan struct{})}
	if w.log == nil {
		w.log = p.Service.log
	}
	return w, nil
}

// Start starts the slots and the reconciler. When ctx ends the worker
// stops as with Stop; the turns in flight still finish, since a shutdown
// is not a user's cancel (a killed process leaves them to cleanup).
func (w *Worker) Start(ctx context.Context) {
	run := context.WithoutCancel(ctx)
	for range w.p.Concurrency {
		w.wg.Go(func() { w.slot(ctx, run) })
	}
	if !w.p.Drain {
		w.wg.Go(func() { w.reconciler(ctx) })
	}
}

// Stop stops claiming and waits for the turns in flight.
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
		ok, err := w.p.Service.ProcessNext(run)
		if err != nil {
			w.log.ErrorContext(ctx, "chat turn failed", "error", err.Error())
		}
		if ok {
			continue
		}
		if w.p.Drain && err == nil {
			return
		}
		select {
		case <-w.stop:
			return
		case <-ctx.Done():
			return
		case <-w.p.Service.queued:
		case <-w.p.After(w.p.Poll):
		}
	}
}

func (w *Worker) reconciler(ctx context.Context) {
	for {
		select {
		case <-w.stop:
			return
		case <-ctx.Done():
			return
		case <-w.p.After(w.p.ReconcileEvery):
		}
		if n, err := w.p.Service.Reconcile(ctx); err != nil {
			if ctx.Err() == nil {
				w.log.ErrorContext(ctx, "chat reconcile pass failed", "repaired", n, "error", err.Error())
			}
		} else if n > 0 {
			w.log.InfoContext(ctx, "chat reconcile repaired conversations", "repaired", n)
		}
	}
}
