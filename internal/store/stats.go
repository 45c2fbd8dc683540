package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Stats reads the aggregates monitoring scrapes: what is true of the
// whole database, whichever process wrote it. Each method is read-only,
// a few indexed queries on the reader, and honours ctx.
type Stats interface {
	// RunStats counts the runs by status and reads the queue at the
	// store's now, from indexes only.
	RunStats(ctx context.Context) (RunStats, error)
	// FinishedRuns counts the finished runs (completed, failed,
	// cancelled) by status, outcome and termination reason, ordered by
	// them (bytewise); never nil. It reads every finished run, so its
	// cost grows with the store: callers read it less often than
	// RunStats. Finished runs never change and are never deleted, so the
	// counts only grow.
	FinishedRuns(ctx context.Context) ([]RunCount, error)
	// ConversationStats counts the conversations by status, ordered by
	// status (bytewise); never nil.
	ConversationStats(ctx context.Context) ([]ConversationCount, error)
}

// RunCount is the number of runs with one status and, in FinishedRuns,
// one outcome and termination reason.
type RunCount struct {
	Status      RunStatus
	Outcome     string // "" while the run has not stopped
	Termination string // "" until the run ends
	Runs        int64
}

// RunStats is one read of the runs.
type RunStats struct {
	// Counts holds one row per status that any run has, ordered by
	// status (bytewise), without outcome or termination; never nil.
	Counts []RunCount
	// Ready counts the queued runs a worker may claim now (their backoff,
	// if any, has passed); the queued runs of Counts include the delayed.
	Ready int64
	// OldestReady is when the queued run that has been claimable longest
	// became claimable; zero when none is.
	OldestReady time.Time
}

// Queued counts the queued runs, delayed ones included.
func (r RunStats) Queued() int64 {
	var n int64
	for _, c := range r.Counts {
		if c.Status == RunQueued {
			n += c.Runs
		}
	}
	return n
}

// ConversationCount is the number of conversations with one status.
type ConversationCount struct {
	Status        ConversationStatus
	Conversations int64
}

func (s *sqlStore) RunStats(ctx context.Context) (RunStats, error) {
	// Grouped by status alone, the count is read from an index on status
	// (runs_queue, runs_lease) without touching the rows.
	counts, err := queryAll(ctx, s.r, "count the runs", "a run count", func(row rowScanner) (RunCount, error) {
		var c RunCount
		err := row.Scan(&c.Status, &c.Runs)
		return c, err
	}, `SELECT status, COUNT(*) FROM runs GROUP BY status`)
	if err != nil {
		return RunStats{}, err
	}
	slices.SortFunc(counts, func(a, b RunCount) int { return strings.Compare(string(a.Status), string(b.Status)) })
	out := RunStats{Counts: counts}
	now := s.stamp()
	if err := s.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM runs WHERE status = $1 AND available_at <= $2`,
		RunQueued, now).Scan(&out.Ready); err != nil {
		return RunStats{}, fmt.Errorf("store: cannot count the ready queued runs: %w", err)
	}
	err = s.r.QueryRowContext(ctx, `SELECT available_at FROM runs WHERE status = $1 AND available_at <= $2
		ORDER BY available_at LIMIT 1`, RunQueued, now).Scan(nullTimeScanner{&out.OldestReady})
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return RunStats{}, fmt.Errorf("store: cannot read the oldest queued run: %w", err)
	}
	return out, nil
}

func (s *sqlStore) FinishedRuns(ctx context.Context) ([]RunCount, error) {
	counts, err := queryAll(ctx, s.r, "count the finished runs", "a run count", func(row rowScanner) (RunCount, error) {
		var c RunCount
		err := row.Scan(&c.Status, &c.Outcome, &c.Termination, &c.Runs)
		return c, err
	}, `SELECT status, outcome, termination_reason, COUNT(*) FROM runs WHERE status IN ($1, $2, $3)
		GROUP BY status, outcome, termination_reason`, RunCompleted, RunFailed, RunCancelled)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(counts, func(a, b RunCount) int {
		return cmpJoin(string(a.Status), a.Outcome, a.Termination, string(b.Status), b.Outcome, b.Termination)
	})
	return counts, nil
}

// cmpJoin orders two triples bytewise, field by field.
func cmpJoin(a1, a2, a3, b1, b2, b3 string) int {
	if c := strings.Compare(a1, b1); c != 0 {
		return c
	}
	if c := strings.Compare(a2, b2); c != 0 {
		return c
	}
	return strings.Compare(a3, b3)
}

func (s *sqlStore) ConversationStats(ctx context.Context) ([]ConversationCount, error) {
	out, err := queryAll(ctx, s.r, "count the conversations", "a conversation count", func(row rowScanner) (ConversationCount, error) {
		var c ConversationCount
		err := row.Scan(&c.Status, &c.Conversations)
		return c, err
	}, `SELECT status, COUNT(*) FROM conversations GROUP BY status`)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b ConversationCount) int { return strings.Compare(string(a.Status), string(b.Status)) })
	return out, nil
}
