package siteindex

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// SyncerParams configure NewSyncer.
type SyncerParams struct {
	Index *Index // required
	// Interval between syncs; 0 means DefaultInterval.
	Interval time.Duration
	// After is the clock's timer; nil means time.After. Tests inject
	// their own to step the syncer.
	After  func(time.Duration) <-chan time.Time
	Logger *slog.Logger
	// Synced, when set, is called after each round (tests wait on it).
	Synced func(SyncResult, error)
}

// Syncer keeps the index fresh in the background: it builds it when
// absent and syncs it every Interval. Several processes sharing a store
// may each run one; their syncs are idempotent (see store.SiteIndex).
type Syncer struct {
	p      SyncerParams
	log    *slog.Logger
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// NewSyncer returns a stopped syncer.
func NewSyncer(p SyncerParams) *Syncer {
	if p.Interval <= 0 {
		p.Interval = DefaultInterval
	}
	if p.After == nil {
		p.After = time.After
	}
	log := p.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Syncer{p: p, log: log}
}

// Start runs the syncer until Stop or until ctx ends; the first round
// runs at once. Starting a running syncer does nothing.
func (s *Syncer) Start(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		return
	}
	ctx, s.cancel = context.WithCancel(ctx)
	s.done = make(chan struct{})
	go s.loop(ctx, s.done)
}

// Stop ends the syncer and waits for a round in progress.
func (s *Syncer) Stop() {
	s.mu.Lock()
	cancel, done := s.cancel, s.done
	s.cancel, s.done = nil, nil
	s.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

func (s *Syncer) loop(ctx context.Context, done chan struct{}) {
	defer close(done)
	for {
		res, err := s.round(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			s.log.WarnContext(ctx, "site index sync failed", "error", err)
		} else if res.Changed+res.Deleted > 0 {
			s.log.InfoContext(ctx, "site index synced", "changed", res.Changed, "deleted", res.Deleted, "duration", res.Duration)
		}
		if s.p.Synced != nil {
			s.p.Synced(res, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-s.p.After(s.p.Interval):
		}
	}
}

// buildGrace is how long a build another process began is left to
// finish before a syncer takes it for broken off and builds again.
const buildGrace = 30 * time.Minute

// round syncs, building first when there is no index and no build runs.
func (s *Syncer) round(ctx context.Context) (SyncResult, error) {
	res, err := s.p.Index.Sync(ctx)
	if !errors.Is(err, ErrAbsent) {
		return res, err
	}
	st, err := s.p.Index.Status(ctx, false)
	if err != nil {
		return SyncResult{}, err
	}
	if st.Building && s.p.Index.now().Sub(st.BuildBegan) < buildGrace {
		return SyncResult{}, nil
	}
	b, err := s.p.Index.Build(ctx, nil)
	return SyncResult{Changed: b.Docs, Duration: b.Duration}, err
}
