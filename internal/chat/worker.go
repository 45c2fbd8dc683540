package chat

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

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
	// MaintainEvery is how often the worker's Maintainer reconciles and
	// cleans up; 0 means DefaultMaintainEvery.
	MaintainEvery time.Duration
	// After is the clock's timer, of the polls and of the maintenance
	// passes; nil means time.After.
	After  func(time.Duration) <-chan time.Time
	Logger *slog.Logger
	// Drain stops each slot once nothing is claimable (and runs no
	// maintenance): for `chat process`-like batch runs and tests.
	Drain bool
}

// Worker runs queued chat turns in Concurrency slots, with a Maintainer
// beside them. Stop ends it gracefully: no new claims, turns in flight
// finish.
type Worker struct {
	p     WorkerParams
	log   *slog.Logger
	maint *Maintainer // nil when draining
	stop  chan struct{}
	once  sync.Once
	wg    sync.WaitGroup
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
	if p.After == nil {
		p.After = time.After
	}
	w := &Worker{p: p, log: p.Logger, stop: make(chan struct{})}
	if w.log == nil {
		w.log = p.Service.log
	}
	if !p.Drain {
		var err error
		if w.maint, err = NewMaintainer(MaintainerParams{Service: p.Service, Every: p.MaintainEvery, After: p.After, Logger: w.log}); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// Start starts the slots and the maintainer. When ctx ends the worker
// stops as with Stop; the turns in flight still finish, since a shutdown
// is not a user's cancel (a killed process leaves them to the
// maintenance of the processes still running).
func (w *Worker) Start(ctx context.Context) {
	run := context.WithoutCancel(ctx)
	for range w.p.Concurrency {
		w.wg.Go(func() { w.slot(ctx, run) })
	}
	if w.maint != nil {
		w.maint.Start(ctx)
	}
}

// Stop stops claiming and maintaining and waits for the turns in flight.
func (w *Worker) Stop() {
	w.once.Do(func() { close(w.stop) })
	if w.maint != nil {
		w.maint.Stop()
	}
	w.wg.Wait()
}

// Wait waits for the slots to end (a draining worker ends by itself).
func (w *Worker) Wait() {
	w.wg.Wait()
	if w.maint != nil {
		w.maint.Wait()
	}
}

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

// DefaultMaintainEvery is how often a Maintainer runs its pass unless
// MaintainerParams.Every says.
const DefaultMaintainEvery = time.Minute

// MaintainerParams configure NewMaintainer.
type MaintainerParams struct {
	Service *Service // required
	// Every is the time between two passes; 0 means DefaultMaintainEvery.
	Every time.Duration
	// After is the clock's timer; nil means time.After. Tests inject one
	// to run a pass without waiting.
	After  func(time.Duration) <-chan time.Time
	Logger *slog.Logger
}

// Maintainer repairs what crashed processes leave behind, on a schedule:
// every Every it runs Maintain. serve and every chat worker run one, so a
// turn locked by a worker that died is failed (and its user unblocked)
// within StaleAfter plus Every, and a recorded decision no worker carried
// out is repaired within ReconcileGrace plus Every, without an operator.
// Every step is a guarded update in the store, so any number of
// maintainers may share one store.
//
// Start(ctx) starts the schedule; Stop (or the end of ctx) ends it after
// the pass under way; Wait waits for that. Safe for concurrent use.
type Maintainer struct {
	p    MaintainerParams
	log  *slog.Logger
	stop chan struct{}
	once sync.Once
	wg   sync.WaitGroup
}

// NewMaintainer returns a maintainer; Start starts it.
func NewMaintainer(p MaintainerParams) (*Maintainer, error) {
	if p.Service == nil {
		return nil, errors.New("chat: a maintainer needs a service")
	}
	if p.Every <= 0 {
		p.Every = DefaultMaintainEvery
	}
	if p.After == nil {
		p.After = time.After
	}
	m := &Maintainer{p: p, log: p.Logger, stop: make(chan struct{})}
	if m.log == nil {
		m.log = p.Service.log
	}
	return m, nil
}

// Start starts the schedule: the first pass runs one Every after Start.
func (m *Maintainer) Start(ctx context.Context) { m.wg.Go(func() { m.loop(ctx) }) }

// Stop ends the schedule and waits for the pass under way.
func (m *Maintainer) Stop() {
	m.once.Do(func() { close(m.stop) })
	m.wg.Wait()
}

// Wait waits until the schedule ended (by Stop or its context).
func (m *Maintainer) Wait() { m.wg.Wait() }

func (m *Maintainer) loop(ctx context.Context) {
	for {
		select {
		case <-m.stop:
			return
		case <-ctx.Done():
			return
		case <-m.p.After(m.p.Every):
		}
		rep, err := m.p.Service.Maintain(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			m.log.ErrorContext(ctx, "chat maintenance pass failed", "reconciled", rep.Reconciled,
				"failed", rep.Cleanup.Failed, "archived", rep.Cleanup.Archived, "deleted", rep.Cleanup.Deleted, "error", err.Error())
		case err == nil && rep != (MaintenanceReport{}):
			m.log.InfoContext(ctx, "chat maintenance repaired conversations", "reconciled", rep.Reconciled,
				"failed", rep.Cleanup.Failed, "archived", rep.Cleanup.Archived, "deleted", rep.Cleanup.Deleted)
		}
	}
}

// MaintenanceReport counts what one Maintain pass did.
type MaintenanceReport struct {
	// Reconciled is how many recorded decisions were repaired.
	Reconciled int           `json:"reconciled"`
	Cleanup    CleanupReport `json:"cleanup"`
}

// Maintain runs one maintenance pass now: Reconcile, then Cleanup with
// the settings (stale turns failed and their approval fields cleared,
// idle conversations archived, archived ones deleted). A failing step
// does not keep the next from running; the errors are joined.
func (s *Service) Maintain(ctx context.Context) (MaintenanceReport, error) {
	var rep MaintenanceReport
	var rerr, cerr error
	rep.Reconciled, rerr = s.Reconcile(ctx)
	if rerr != nil {
		rerr = fmt.Errorf("reconcile: %w", rerr)
	}
	rep.Cleanup, cerr = s.Cleanup(ctx, CleanupParams{})
	return rep, errors.Join(rerr, cerr)
}
