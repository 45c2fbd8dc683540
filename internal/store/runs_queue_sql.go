package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/pressly/goose/v3"
)

// nextSeq is the seq the next event of run id takes.
func nextSeq(ctx context.Context, q queryRower, id string) (int64, error) {
	var n int64
	if err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq) + 1, 0) FROM run_events WHERE run_id = $1`, id).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: cannot read the event position of run %s: %w", id, err)
	}
	return n, nil
}

func (s *sqlStore) ClaimWaitingRun(ctx context.Context, p ClaimWaitingRunParams) (ClaimedRun, error) {
	if err := checkRunID(p.ID); err != nil {
		return ClaimedRun{}, err
	}
	if err := checkName("lease owner", p.LeaseOwner); err != nil {
		return ClaimedRun{}, err
	}
	if !p.From.Waiting() || p.Lease <= 0 {
		return ClaimedRun{}, invalid("a claim takes a waiting run (not %q) and a positive lease", p.From)
	}
	now := s.stamp()
	var out ClaimedRun
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		var state sql.NullString
		r, err := scanRun(tx.QueryRowContext(ctx, `
			UPDATE runs SET status = $1, lease_owner = $2, lease_expires = $3, pending_effect = '', updated_at = $4
			WHERE id = $5 AND status = $6 AND suspended_state IS NOT NULL
			RETURNING `+runColumns+`, suspended_state`,
			RunRunning, p.LeaseOwner, now.Add(p.Lease), now, p.ID, p.From), &state)
		if errors.Is(err, sql.ErrNoRows) {
			return explainMiss(ctx, tx, p.ID, string(p.From)+" with a suspended state")
		}
		if err != nil {
			return fmt.Errorf("store: cannot claim run %s: %w", p.ID, err)
		}
		seq, err := nextSeq(ctx, tx, p.ID)
		if err != nil {
			return err
		}
		out = ClaimedRun{Run: r, Sealed: state.String, NextSeq: seq}
		return nil
	})
	if err != nil {
		return ClaimedRun{}, err
	}
	return out, nil
}

func (s *sqlStore) ReleaseRun(ctx context.Context, p ReleaseRunParams) (Run, error) {
	if err := checkRunID(p.ID); err != nil {
		return Run{}, err
	}
	if err := checkName("lease owner", p.LeaseOwner); err != nil {
		return Run{}, err
	}
	if !p.Status.Waiting() {
		return Run{}, invalid("a run is released to waiting_for_approval or waiting_for_input, not %q", p.Status)
	}
	if err := checkRunEvents(p.Events); err != nil {
		return Run{}, err
	}
	now := s.stamp()
	var out Run
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = scanRun(tx.QueryRowContext(ctx, `
			UPDATE runs SET status = $1, lease_owner = '', lease_expires = NULL, pending_effect = '', updated_at = $2
			WHERE id = $3 AND status = $4 AND lease_owner = $5 AND suspended_state IS NOT NULL
			RETURNING `+runColumns, p.Status, now, p.ID, RunRunning, p.LeaseOwner))
		if errors.Is(err, sql.ErrNoRows) {
			return explainMiss(ctx, tx, p.ID, "running under lease "+strconv.Quote(p.LeaseOwner)+" with a suspended state")
		}
		if err != nil {
			return fmt.Errorf("store: cannot release run %s: %w", p.ID, err)
		}
		return insertRunEvents(ctx, tx, p.ID, p.Events, now)
	})
	if err != nil {
		return Run{}, err
	}
	return out, nil
}

func (s *sqlStore) CancelRun(ctx context.Context, id string) (Run, error) {
	if err := checkRunID(id); err != nil {
		return Run{}, err
	}
	now := s.stamp()
	var out Run
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		var err error
		// A fenced write keeps its lease owner and pending effect: the
		// segment running it records it on the cancelled row.
		out, err = scanRun(tx.QueryRowContext(ctx, `
			UPDATE runs SET status = $1, outcome = $2, termination_reason = $2, error = $3, error_class = 'canceled',
				lease_owner = CASE WHEN pending_effect = '' THEN '' ELSE lease_owner END, lease_expires = NULL,
				suspended_state = NULL, queued_request = NULL, available_at = NULL, updated_at = $4, finished_at = $4
			WHERE id = $5 AND status NOT IN ($6, $7, $8)
			RETURNING `+runColumns,
			RunCancelled, "cancelled", "The run was cancelled.", now, id, RunCompleted, RunFailed, RunCancelled))
		if errors.Is(err, sql.ErrNoRows) {
			return explainMiss(ctx, tx, id, "unfinished")
		}
		if err != nil {
			return fmt.Errorf("store: cannot cancel run %s: %w", id, err)
		}
		return nil
	})
	if err != nil {
		return Run{}, err
	}
	return out, nil
}

func (s *sqlStore) RecordCancelledWrite(ctx context.Context, p RecordRunStepParams) error {
	if err := checkRunID(p.ID); err != nil {
		return err
	}
	if err := checkName("lease owner", p.LeaseOwner); err != nil {
		return err
	}
	if err := checkProgress(p.Progress); err != nil {
		return err
	}
	if err := checkRunEvents(p.Events); err != nil {
		return err
	}
	now := s.stamp()
	return s.writeTx(ctx, func(tx *sql.Tx) error {
		if err := execGuarded(ctx, tx, p.ID, "record the write of cancelled", "cancelled with a write fenced under lease "+strconv.Quote(p.LeaseOwner), `
			UPDATE runs SET rounds = $1, tool_calls = $2, input_tokens = $3, output_tokens = $4, cost = $5,
				truncated = $6, lease_owner = '', pending_effect = '', updated_at = $7
			WHERE id = $8 AND status = $9 AND lease_owner = $10 AND pending_effect <> ''`,
			p.Progress.Rounds, p.Progress.ToolCalls, p.Progress.InputTokens, p.Progress.OutputTokens, costArg(p.Progress),
			p.Progress.Truncated, now, p.ID, RunCancelled, p.LeaseOwner); err != nil {
			return err
		}
		return insertRunEvents(ctx, tx, p.ID, p.Events, now)
	})
}

func (s *sqlStore) EnqueueRun(ctx context.Context, p EnqueueRunParams) (Run, error) {
	if p.QueuedRequest == "" {
		return Run{}, invalid("a queued run needs its request")
	}
	if err := checkText("queued request", p.QueuedRequest, MaxSuspendedState); err != nil {
		return Run{}, err
	}
	c := p.CreateRunParams
	// CreateRun's checks need a lease; a queued row gets none.
	c.LeaseOwner, c.Lease = "queue", 1
	if err := checkCreateRun(c); err != nil {
		return Run{}, err
	}
	now := s.stamp()
	var out Run
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = scanRun(tx.QueryRowContext(ctx, `
			INSERT INTO runs (id, status, outcome, termination_reason, owner_username, owner_uid, configuration,
				caller_source, caller_operation, privacy, rounds, tool_calls, input_tokens, output_tokens, cost,
				truncated, error, error_class, lease_owner, lease_expires, pending_effect, turn_digest,
				suspended_state, queued_request, requeue_count, available_at, created_at, updated_at, finished_at)
			VALUES ($1, $2, '', '', $3, $4, $5, $6, $7, $8, 0, 0, 0, 0, 0, $9, '', '', '', NULL, '', '', NULL, $10, 0, $11, $11, $11, NULL)
			RETURNING `+runColumns,
			c.ID, RunQueued, c.OwnerUsername, c.OwnerUID, c.Configuration, c.CallerSource, c.CallerOperation,
			c.Privacy, false, p.QueuedRequest, now))
		if err != nil {
			return fmt.Errorf("store: cannot enqueue run %s: %w", c.ID, err)
		}
		return insertRunEvents(ctx, tx, c.ID, c.Events, now)
	})
	if err != nil {
		return Run{}, err
	}
	return out, nil
}

func (s *sqlStore) ClaimQueuedRun(ctx context.Context, p ClaimQueuedRunParams) (ClaimedRun, error) {
	if p.ID != "" {
		if err := checkRunID(p.ID); err != nil {
			return ClaimedRun{}, err
		}
	}
	if err := checkName("lease owner", p.LeaseOwner); err != nil {
		return ClaimedRun{}, err
	}
	if p.Lease <= 0 {
		return ClaimedRun{}, invalid("a claim needs a positive lease")
	}
	now := s.stamp()
	// PostgreSQL: concurrent claimers skip the row another one locked
	// instead of queueing behind it. SQLite has one writer, so the guarded
	// UPDATE alone is enough.
	lock := ""
	if s.drv.Dialect() == goose.DialectPostgres {
		lock = ` FOR UPDATE SKIP LOCKED`
	}
	args := []any{RunRunning, p.LeaseOwner, now.Add(p.Lease), now, RunQueued}
	pick := `SELECT id FROM runs WHERE status = $5 AND available_at <= $4`
	if p.ID != "" {
		args = append(args, p.ID)
		pick += ` AND id = $6`
	}
	pick += ` ORDER BY available_at, created_at, id LIMIT 1` + lock
	if s.drv.Dialect() == goose.DialectPostgres {
		return s.claimQueuedPostgres(ctx, pick, args)
	}
	var out ClaimedRun
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		var req sql.NullString
		r, err := scanRun(tx.QueryRowContext(ctx, `
			UPDATE runs SET status = $1, lease_owner = $2, lease_expires = $3, available_at = NULL, updated_at = $4
			WHERE id = (`+pick+`) AND status = $5
			RETURNING `+runColumns+`, queued_request`, args...), &req)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("claimable queued run")
		}
		if err != nil {
			return fmt.Errorf("store: cannot claim a queued run: %w", err)
		}
		seq, err := nextSeq(ctx, tx, r.ID)
		if err != nil {
			return err
		}
		out = ClaimedRun{Run: r, Sealed: req.String, NextSeq: seq}
		return nil
	})
	if err != nil {
		return ClaimedRun{}, err
	}
	return out, nil
}

func (s *sqlStore) ExpiredRuns(ctx context.Context, limit int) ([]Run, error) {
	if limit <= 0 || limit > MaxRunLimit {
		return nil, invalid("a page of runs holds 1 to %d runs, not %d", MaxRunLimit, limit)
	}
	return s.queryRuns(ctx, "list expired runs", `SELECT `+runColumns+` FROM runs
		WHERE status = $1 AND lease_expires < $2 ORDER BY lease_expires, id LIMIT $3`, RunRunning, s.stamp(), limit)
}

func (s *sqlStore) RequeueRun(ctx context.Context, p RequeueRunParams) (Run, error) {
	if err := checkRunID(p.ID); err != nil {
		return Run{}, err
	}
	if err := checkName("lease owner", p.LeaseOwner); err != nil {
		return Run{}, err
	}
	if p.Delay < 0 {
		return Run{}, invalid("a requeue delay must not be negative")
	}
	if err := checkRunEvents(p.Events); err != nil {
		return Run{}, err
	}
	now := s.stamp()
	expired := ""
	if p.Expired {
		expired = ` AND lease_expires < $3`
	}
	var out Run
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = scanRun(tx.QueryRowContext(ctx, `
			UPDATE runs SET status = $1, lease_owner = '', lease_expires = NULL, pending_effect = '',
				requeue_count = requeue_count + 1, available_at = $2, updated_at = $3
			WHERE id = $4 AND status = $5 AND lease_owner = $6 AND queued_request IS NOT NULL`+expired+`
			RETURNING `+runColumns, RunQueued, now.Add(p.Delay), now, p.ID, RunRunning, p.LeaseOwner))
		if errors.Is(err, sql.ErrNoRows) {
			return explainMiss(ctx, tx, p.ID, "running under lease "+strconv.Quote(p.LeaseOwner)+" with a stored request")
		}
		if err != nil {
			return fmt.Errorf("store: cannot requeue run %s: %w", p.ID, err)
		}
		return insertRunEvents(ctx, tx, p.ID, p.Events, now)
	})
	if err != nil {
		return Run{}, err
	}
	return out, nil
}

// claimQueuedPostgres is the claim in one statement, one round trip, with
// the next seq read in it. Like a heartbeat it does not wait for the WAL
// flush: a claim lost in a database crash leaves the run queued, and
// whatever the run does that matters (a fenced write, the settle) is a
// durable commit, which flushes the claim before it.
func (s *sqlStore) claimQueuedPostgres(ctx context.Context, pick string, args []any) (ClaimedRun, error) {
	var req sql.NullString
	var seq int64
	r, err := scanRun(s.w.QueryRowContext(ctx, `
		WITH async AS (SELECT set_config('synchronous_commit', 'off', true) AS v)
		UPDATE runs SET status = $1, lease_owner = $2, lease_expires = $3, available_at = NULL, updated_at = $4
		WHERE id = (`+pick+`) AND status = $5 AND (SELECT v FROM async) IS NOT NULL
		RETURNING `+runColumns+`, queued_request,
			(SELECT COALESCE(MAX(seq) + 1, 0) FROM run_events WHERE run_id = runs.id)`, args...), &req, &seq)
	if errors.Is(err, sql.ErrNoRows) {
		return ClaimedRun{}, notFound("claimable queued run")
	}
	if err != nil {
		return ClaimedRun{}, fmt.Errorf("store: cannot claim a queued run: %w", err)
	}
	return ClaimedRun{Run: r, Sealed: req.String, NextSeq: seq}, nil
}

func (s *sqlStore) ResealRun(ctx context.Context, p ResealRunParams) error {
	if err := checkRunID(p.ID); err != nil {
		return err
	}
	if p.Old == "" || p.New == "" {
		return invalid("a reseal needs the old and the new sealed value")
	}
	if err := checkText("sealed value", p.New, MaxSuspendedState); err != nil {
		return err
	}
	col := "suspended_state"
	if p.Queued {
		col = "queued_request"
	}
	res, err := s.w.ExecContext(ctx, `UPDATE runs SET `+col+` = $1 WHERE id = $2 AND `+col+` = $3`, p.New, p.ID, p.Old)
	if err != nil {
		return fmt.Errorf("store: cannot reseal run %s: %w", p.ID, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		if err != nil {
			return fmt.Errorf("store: cannot reseal run %s: %w", p.ID, err)
		}
		return conflictError{msg: fmt.Sprintf("run %s no longer holds that sealed value", p.ID)}
	}
	return nil
}

func (s *sqlStore) ParkedRuns(ctx context.Context, p ParkedRunsParams) ([]ParkedRun, error) {
	if p.Limit <= 0 || p.Limit > MaxRunLimit {
		return nil, invalid("a page of runs holds 1 to %d runs, not %d", MaxRunLimit, p.Limit)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT id, COALESCE(suspended_state, ''), COALESCE(queued_request, '') FROM runs
		WHERE (suspended_state IS NOT NULL OR queued_request IS NOT NULL) AND id > $1 ORDER BY id LIMIT $2`, p.After, p.Limit)
	if err != nil {
		return nil, fmt.Errorf("store: cannot list parked runs: %w", err)
	}
	defer rows.Close()
	out := []ParkedRun{}
	for rows.Next() {
		var r ParkedRun
		if err := rows.Scan(&r.ID, &r.SuspendedState, &r.QueuedRequest); err != nil {
			return nil, fmt.Errorf("store: cannot read a parked run: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: cannot list parked runs: %w", err)
	}
	return out, nil
}
