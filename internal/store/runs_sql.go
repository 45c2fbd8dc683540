package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pressly/goose/v3"
)

const runColumns = `id, status, outcome, termination_reason, owner_username, owner_uid, configuration,
	caller_source, caller_operation, privacy, rounds, tool_calls, input_tokens, output_tokens, cost,
	truncated, error, error_class, lease_owner, lease_expires, pending_effect, turn_digest,
	suspended_state IS NOT NULL, queued_request IS NOT NULL, requeue_count, available_at, created_at,
	updated_at, finished_at`

// rowScanner is what *sql.Row and *sql.Rows share.
func scanRun(sc rowScanner, extra ...any) (Run, error) {
	var r Run
	var cost sql.NullInt64
	dest := []any{&r.ID, &r.Status, &r.Outcome, &r.TerminationReason, &r.OwnerUsername, &r.OwnerUID,
		&r.Configuration, &r.CallerSource, &r.CallerOperation, &r.Privacy, &r.Rounds, &r.ToolCalls,
		&r.InputTokens, &r.OutputTokens, &cost, &r.Truncated, &r.Error, &r.ErrorClass, &r.LeaseOwner,
		nullTimeScanner{&r.LeaseExpires}, &r.PendingEffect, &r.TurnDigest, &r.HasSuspendedState,
		&r.HasQueuedRequest, &r.RequeueCount, nullTimeScanner{&r.AvailableAt}, timeScanner{&r.CreatedAt}, timeScanner{&r.UpdatedAt}, nullTimeScanner{&r.FinishedAt}}
	err := sc.Scan(append(dest, extra...)...)
	r.Cost, r.CostUnknown = cost.Int64, !cost.Valid
	return r, err
}

// nullTimeScanner is timeScanner for a nullable column; NULL is the zero time.
type nullTimeScanner struct{ t *time.Time }

func (ts nullTimeScanner) Scan(src any) error {
	if src == nil {
		*ts.t = time.Time{}
		return nil
	}
	return timeScanner(ts).Scan(src)
}

func checkRunID(id string) error { return checkName("run id", id) }

func checkProgress(p RunProgress) error {
	if p.Rounds < 0 || p.ToolCalls < 0 || p.InputTokens < 0 || p.OutputTokens < 0 || p.Cost < 0 {
		return invalid("run counters must not be negative: %+v", p)
	}
	return nil
}

func checkRunEvents(evs []RunEventParams) error {
	if len(evs) > MaxRunEventsPerStep {
		return invalid("%d run events in one write, more than the %d allowed", len(evs), MaxRunEventsPerStep)
	}
	for _, ev := range evs {
		if ev.Seq < 0 || ev.Round < 0 || ev.Duration < 0 {
			return invalid("run event %d has a negative seq, round or duration", ev.Seq)
		}
		if err := checkName("run event kind", ev.Kind); err != nil {
			return err
		}
		if len(ev.Payload) > MaxRunEventPayload {
			return invalid("run event %d is %d bytes, more than the %d allowed", ev.Seq, len(ev.Payload), MaxRunEventPayload)
		}
		if len(ev.Payload) > 0 && !json.Valid(ev.Payload) {
			return invalid("run event %d does not hold valid JSON", ev.Seq)
		}
	}
	return nil
}

func costArg(p RunProgress) any {
	if p.CostUnknown {
		return nil
	}
	return p.Cost
}

// eventsCTE writes the PostgreSQL CTE ", events AS (INSERT …)" that
// appends evs to the run the CTE named source returns (nothing when that
// CTE updated no row), and returns args with the events' values added.
func eventsCTE(q *strings.Builder, args []any, source string, evs []RunEventParams, now time.Time) []any {
	if len(evs) == 0 {
		return args
	}
	q.WriteString(`, events AS (INSERT INTO run_events (run_id, seq, kind, round, duration_ms, payload, created_at)
		SELECT ` + source + `.id, v.seq, v.kind, v.round, v.duration_ms, v.payload, v.created_at FROM ` + source + ` CROSS JOIN (VALUES `)
	for i, ev := range evs {
		if i > 0 {
			q.WriteString(", ")
		}
		n := len(args)
		fmt.Fprintf(q, "($%d::bigint, $%d::text, $%d::integer, $%d::bigint, $%d::text, $%d::timestamptz)", n+1, n+2, n+3, n+4, n+5, n+6)
		args = append(args, ev.Seq, ev.Kind, ev.Round, ev.Duration.Milliseconds(), eventPayload(ev), eventTime(ev, now))
	}
	q.WriteString(`) AS v (seq, kind, round, duration_ms, payload, created_at))`)
	return args
}

// insertRunEvents appends evs in one multi-row INSERT.
func insertRunEvents(ctx context.Context, tx *sql.Tx, runID string, evs []RunEventParams, at time.Time) error {
	if len(evs) == 0 {
		return nil
	}
	var q strings.Builder
	q.WriteString(`INSERT INTO run_events (run_id, seq, kind, round, duration_ms, payload, created_at) VALUES `)
	args := make([]any, 0, 7*len(evs))
	for i, ev := range evs {
		if i > 0 {
			q.WriteString(", ")
		}
		n := len(args)
		fmt.Fprintf(&q, "($%d, $%d, $%d, $%d, $%d, $%d, $%d)", n+1, n+2, n+3, n+4, n+5, n+6, n+7)
		args = append(args, runID, ev.Seq, ev.Kind, ev.Round, ev.Duration.Milliseconds(), eventPayload(ev), eventTime(ev, at))
	}
	if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
		return fmt.Errorf("store: cannot append %d event(s) to run %s (from seq %d): %w", len(evs), runID, evs[0].Seq, err)
	}
	return nil
}

func checkCreateRun(p CreateRunParams) error {
	if err := checkRunID(p.ID); err != nil {
		return err
	}
	if err := checkName("lease owner", p.LeaseOwner); err != nil {
		return err
	}
	for _, f := range []struct{ what, v string }{
		{"run owner", p.OwnerUsername}, {"run configuration", p.Configuration},
		{"caller source", p.CallerSource}, {"caller operation", p.CallerOperation}, {"privacy level", p.Privacy},
	} {
		if err := checkText(f.what, f.v, MaxNameLen); err != nil {
			return err
		}
	}
	if p.OwnerUID < 0 || p.Lease <= 0 {
		return invalid("a run needs an owner uid ≥ 0 and a positive lease")
	}
	return checkRunEvents(p.Events)
}

func (s *sqlStore) CreateRun(ctx context.Context, p CreateRunParams) (Run, error) {
	if err := checkCreateRun(p); err != nil {
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
				suspended_state, created_at, updated_at, finished_at)
			VALUES ($1, $2, '', '', $3, $4, $5, $6, $7, $8, 0, 0, 0, 0, 0, $9, '', '', $10, $11, '', '', NULL, $12, $12, NULL)
			RETURNING `+runColumns,
			p.ID, RunRunning, p.OwnerUsername, p.OwnerUID, p.Configuration, p.CallerSource, p.CallerOperation,
			p.Privacy, false, p.LeaseOwner, now.Add(p.Lease), now))
		if err != nil {
			return fmt.Errorf("store: cannot create run %s: %w", p.ID, err)
		}
		return insertRunEvents(ctx, tx, p.ID, p.Events, now)
	})
	if err != nil {
		return Run{}, err
	}
	return out, nil
}

// explainMiss says why a guarded update of run id touched no row.
func explainMiss(ctx context.Context, q queryRower, id, want string) error {
	var status RunStatus
	var owner string
	err := q.QueryRowContext(ctx, `SELECT status, lease_owner FROM runs WHERE id = $1`, id).Scan(&status, &owner)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return notFound("run %s", id)
	case err != nil:
		return fmt.Errorf("store: cannot read run %s: %w", id, err)
	}
	return conflictError{msg: fmt.Sprintf("run %s is %s (lease %q), not %s", id, status, owner, want)}
}

func (s *sqlStore) RecordRunStep(ctx context.Context, p RecordRunStepParams) error {
	if err := checkRunID(p.ID); err != nil {
		return err
	}
	if err := checkName("lease owner", p.LeaseOwner); err != nil {
		return err
	}
	if err := checkText("pending effect", p.PendingEffect, MaxNameLen); err != nil {
		return err
	}
	if p.Lease <= 0 {
		return invalid("a run step needs a positive lease")
	}
	if err := checkProgress(p.Progress); err != nil {
		return err
	}
	if err := checkRunEvents(p.Events); err != nil {
		return err
	}
	if err := checkText("continuation", p.Continuation, MaxSuspendedState); err != nil {
		return err
	}
	now := s.stamp()
	if s.drv.Dialect() == goose.DialectPostgres {
		return s.recordStepPostgres(ctx, p, now)
	}
	args := []any{p.Progress.Rounds, p.Progress.ToolCalls, p.Progress.InputTokens, p.Progress.OutputTokens, costArg(p.Progress),
		p.Progress.Truncated, p.PendingEffect, now.Add(p.Lease), now, p.ID, RunRunning, p.LeaseOwner}
	return s.writeTx(ctx, func(tx *sql.Tx) error {
		if err := execGuarded(ctx, tx, p.ID, "record a step of", "running under lease "+strconv.Quote(p.LeaseOwner), `
			UPDATE runs SET rounds = $1, tool_calls = $2, input_tokens = $3, output_tokens = $4, cost = $5,
				truncated = $6, pending_effect = $7, lease_expires = $8, updated_at = $9`+continuationSet(p, &args)+`
			WHERE id = $10 AND status = $11 AND lease_owner = $12`, args...); err != nil {
			return err
		}
		return insertRunEvents(ctx, tx, p.ID, p.Events, now)
	})
}

// execGuarded runs the guarded update q of run id; one that updates no
// row is explained by explainMiss with want. what names the update in
// errors ("cannot <what> run <id>").
func execGuarded(ctx context.Context, tx *sql.Tx, id, what, want, q string, args ...any) error {
	res, err := tx.ExecContext(ctx, q, args...)
	var n int64
	if err == nil {
		n, err = res.RowsAffected()
	}
	if err != nil {
		return fmt.Errorf("store: cannot %s run %s: %w", what, id, err)
	}
	if n == 0 {
		return explainMiss(ctx, tx, id, want)
	}
	return nil
}

// recordStepPostgres is RecordRunStep in one statement, one round trip:
// the guarded update and the events' insert as data-modifying CTEs, which
// PostgreSQL runs atomically. A heartbeat (no pending effect, no
// continuation) turns off
// synchronous_commit for its own transaction: it need not wait for the
// WAL flush, and the next durable commit (the settle at the latest)
// flushes it anyway, since the WAL is written in order.
func (s *sqlStore) recordStepPostgres(ctx context.Context, p RecordRunStepParams, now time.Time) error {
	args := []any{p.Progress.Rounds, p.Progress.ToolCalls, p.Progress.InputTokens, p.Progress.OutputTokens,
		costArg(p.Progress), p.Progress.Truncated, p.PendingEffect, now.Add(p.Lease), now, p.ID, RunRunning, p.LeaseOwner}
	var q strings.Builder
	guard := ""
	if p.PendingEffect == "" && p.Continuation == "" {
		q.WriteString(`WITH heartbeat AS (SELECT set_config('synchronous_commit', 'off', true) AS v), `)
		guard = ` AND (SELECT v FROM heartbeat) IS NOT NULL`
	} else {
		q.WriteString(`WITH `)
	}
	q.WriteString(`step AS (UPDATE runs SET rounds = $1, tool_calls = $2, input_tokens = $3, output_tokens = $4,
		cost = $5, truncated = $6, pending_effect = $7, lease_expires = $8, updated_at = $9` + continuationSet(p, &args) + `
		WHERE id = $10 AND status = $11 AND lease_owner = $12` + guard + ` RETURNING id)`)
	args = eventsCTE(&q, args, "step", p.Events, now)
	q.WriteString(` SELECT count(*) FROM step`)
	var n int
	if err := s.w.QueryRowContext(ctx, q.String(), args...).Scan(&n); err != nil {
		return fmt.Errorf("store: cannot record a step of run %s: %w", p.ID, err)
	}
	if n == 0 {
		return explainMiss(ctx, s.w, p.ID, "running under lease "+strconv.Quote(p.LeaseOwner))
	}
	return nil
}

// continuationSet is the SET clause that stores p.Continuation (nothing
// when there is none), its value added to args. Only a run that has a
// stored request keeps a continuation.
func continuationSet(p RecordRunStepParams, args *[]any) string {
	if p.Continuation == "" {
		return ""
	}
	*args = append(*args, p.Continuation)
	return fmt.Sprintf(`, queued_request = CASE WHEN queued_request IS NULL THEN NULL ELSE $%d END`, len(*args))
}

func eventPayload(ev RunEventParams) string {
	if len(ev.Payload) == 0 {
		return "{}"
	}
	return string(ev.Payload)
}

func eventTime(ev RunEventParams, now time.Time) time.Time {
	if ev.At.IsZero() {
		return now
	}
	return ev.At.UTC().Truncate(time.Microsecond)
}

func (s *sqlStore) SuspendRun(ctx context.Context, p SuspendRunParams) (Run, error) {
	if err := checkRunID(p.ID); err != nil {
		return Run{}, err
	}
	if err := checkName("lease owner", p.LeaseOwner); err != nil {
		return Run{}, err
	}
	if !p.Status.Waiting() {
		return Run{}, invalid("a run is suspended to waiting_for_approval or waiting_for_input, not %q", p.Status)
	}
	if p.SuspendedState == "" {
		return Run{}, invalid("a suspended run needs its state")
	}
	if err := checkText("suspended state", p.SuspendedState, MaxSuspendedState); err != nil {
		return Run{}, err
	}
	for _, f := range []struct{ what, v string }{{"run outcome", p.Outcome}, {"turn digest", p.TurnDigest}} {
		if err := checkText(f.what, f.v, MaxNameLen); err != nil {
			return Run{}, err
		}
	}
	if err := checkProgress(p.Progress); err != nil {
		return Run{}, err
	}
	if err := checkRunEvents(p.Events); err != nil {
		return Run{}, err
	}
	now := s.stamp()
	var out Run
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = scanRun(tx.QueryRowContext(ctx, `
			UPDATE runs SET status = $1, outcome = $2, rounds = $3, tool_calls = $4, input_tokens = $5,
				output_tokens = $6, cost = $7, truncated = $8, turn_digest = $9, suspended_state = $10,
				lease_owner = '', lease_expires = NULL, pending_effect = '', updated_at = $11
			WHERE id = $12 AND status = $13 AND lease_owner = $14
			RETURNING `+runColumns,
			p.Status, p.Outcome, p.Progress.Rounds, p.Progress.ToolCalls, p.Progress.InputTokens,
			p.Progress.OutputTokens, costArg(p.Progress), p.Progress.Truncated, p.TurnDigest, p.SuspendedState,
			now, p.ID, RunRunning, p.LeaseOwner))
		if errors.Is(err, sql.ErrNoRows) {
			return explainMiss(ctx, tx, p.ID, "running under lease "+strconv.Quote(p.LeaseOwner))
		}
		if err != nil {
			return fmt.Errorf("store: cannot suspend run %s: %w", p.ID, err)
		}
		return insertRunEvents(ctx, tx, p.ID, p.Events, now)
	})
	if err != nil {
		return Run{}, err
	}
	return out, nil
}

func (s *sqlStore) SettleRun(ctx context.Context, p SettleRunParams) (Run, error) {
	if err := checkRunID(p.ID); err != nil {
		return Run{}, err
	}
	if !p.Status.Terminal() {
		return Run{}, invalid("a run is settled to completed, failed or cancelled, not %q", p.Status)
	}
	for _, f := range []struct{ what, v string }{
		{"lease owner", p.LeaseOwner}, {"run outcome", p.Outcome}, {"termination reason", p.TerminationReason},
		{"error class", p.ErrorClass},
	} {
		if err := checkText(f.what, f.v, MaxNameLen); err != nil {
			return Run{}, err
		}
	}
	if err := checkText("run error", p.Error, MaxRunErrorLen); err != nil {
		return Run{}, err
	}
	if err := checkText("run answer", p.Answer, MaxRunAnswer); err != nil {
		return Run{}, err
	}
	if err := checkProgress(p.Progress); err != nil {
		return Run{}, err
	}
	if err := checkRunEvents(p.Events); err != nil {
		return Run{}, err
	}
	now := s.stamp()
	expired := ""
	if p.Expired {
		expired = ` AND lease_expires < $12`
	}
	args := []any{p.Status, p.Outcome, p.TerminationReason, p.Progress.Rounds, p.Progress.ToolCalls,
		p.Progress.InputTokens, p.Progress.OutputTokens, costArg(p.Progress), p.Progress.Truncated, p.Error,
		p.ErrorClass, now, p.ID, RunCompleted, RunFailed, RunCancelled, p.LeaseOwner,
		sql.NullString{String: p.Answer, Valid: p.Answer != ""}}
	settle := `UPDATE runs SET status = $1, outcome = $2, termination_reason = $3, rounds = $4, tool_calls = $5,
			input_tokens = $6, output_tokens = $7, cost = $8, truncated = $9, error = $10, error_class = $11,
			lease_owner = '', lease_expires = NULL, pending_effect = '', suspended_state = NULL,
			queued_request = NULL, available_at = NULL, updated_at = $12, finished_at = $12, answer = $18
		WHERE id = $13 AND status NOT IN ($14, $15, $16) AND ($17 = '' OR lease_owner = $17)` + expired + `
		RETURNING ` + runColumns
	miss := func(q queryRower) error {
		want := "unfinished"
		if p.LeaseOwner != "" {
			want = "unfinished under lease " + strconv.Quote(p.LeaseOwner)
		}
		return explainMiss(ctx, q, p.ID, want)
	}
	if s.drv.Dialect() == goose.DialectPostgres {
		return s.settlePostgres(ctx, p, settle, args, now, miss)
	}
	var out Run
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = scanRun(tx.QueryRowContext(ctx, settle, args...))
		if errors.Is(err, sql.ErrNoRows) {
			return miss(tx)
		}
		if err != nil {
			return fmt.Errorf("store: cannot settle run %s: %w", p.ID, err)
		}
		return insertRunEvents(ctx, tx, p.ID, p.Events, now)
	})
	if err != nil {
		return Run{}, err
	}
	return out, nil
}

// settlePostgres is SettleRun in one statement, one round trip: the
// guarded update and the events' insert as data-modifying CTEs, which
// PostgreSQL runs atomically. Unlike a heartbeat it is a durable commit.
func (s *sqlStore) settlePostgres(ctx context.Context, p SettleRunParams, settle string, args []any, now time.Time,
	miss func(queryRower) error) (Run, error) {
	var q strings.Builder
	q.WriteString(`WITH settled AS (` + settle + `)`)
	args = eventsCTE(&q, args, "settled", p.Events, now)
	q.WriteString(` SELECT * FROM settled`)
	out, err := scanRun(s.w.QueryRowContext(ctx, q.String(), args...))
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, miss(s.w)
	}
	if err != nil {
		return Run{}, fmt.Errorf("store: cannot settle run %s: %w", p.ID, err)
	}
	return out, nil
}

func (s *sqlStore) Run(ctx context.Context, id string) (Run, error) {
	if err := checkRunID(id); err != nil {
		return Run{}, err
	}
	r, err := scanRun(s.r.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, notFound("run %s", id)
	}
	if err != nil {
		return Run{}, fmt.Errorf("store: cannot read run %s: %w", id, err)
	}
	return r, nil
}

func (s *sqlStore) RunAnswer(ctx context.Context, id string) (string, error) {
	if err := checkRunID(id); err != nil {
		return "", err
	}
	var answer sql.NullString
	err := s.r.QueryRowContext(ctx, `SELECT answer FROM runs WHERE id = $1`, id).Scan(&answer)
	if errors.Is(err, sql.ErrNoRows) {
		return "", notFound("run %s", id)
	}
	if err != nil {
		return "", fmt.Errorf("store: cannot read the answer of run %s: %w", id, err)
	}
	return answer.String, nil
}

func (s *sqlStore) RunSuspendedState(ctx context.Context, id string) (string, error) {
	if err := checkRunID(id); err != nil {
		return "", err
	}
	var state sql.NullString
	err := s.r.QueryRowContext(ctx, `SELECT suspended_state FROM runs WHERE id = $1`, id).Scan(&state)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", notFound("run %s", id)
	case err != nil:
		return "", fmt.Errorf("store: cannot read the suspended state of run %s: %w", id, err)
	case !state.Valid:
		return "", notFound("suspended state of run %s", id)
	}
	return state.String, nil
}

func (s *sqlStore) Runs(ctx context.Context, p ListRunsParams) ([]Run, error) {
	limit := p.Limit
	switch {
	case limit == 0:
		limit = DefaultRunLimit
	case limit < 0 || limit > MaxRunLimit:
		return nil, invalid("a page of runs holds 1 to %d runs, not %d", MaxRunLimit, p.Limit)
	}
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if p.OwnerUsername != "" {
		if err := checkText("run owner filter", p.OwnerUsername, MaxNameLen); err != nil {
			return nil, err
		}
		where = append(where, "owner_username = "+arg(p.OwnerUsername))
	}
	if p.Status != "" {
		if !p.Status.Valid() {
			return nil, invalid("%q is not a run status", p.Status)
		}
		where = append(where, "status = "+arg(p.Status))
	}
	if p.Before != "" {
		if err := checkRunID(p.Before); err != nil {
			return nil, err
		}
		// Row values order by time, then id for runs created in one instant.
		where = append(where, "(created_at, id) < (SELECT created_at, id FROM runs WHERE id = "+arg(p.Before)+")")
	}
	q := `SELECT ` + runColumns + ` FROM runs`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY created_at DESC, id DESC LIMIT ` + arg(limit)
	return s.queryRuns(ctx, "list runs", q, args...)
}

// queryRuns runs a SELECT of runColumns and scans every row; what names
// the listing in errors.
func (s *sqlStore) queryRuns(ctx context.Context, what, q string, args ...any) ([]Run, error) {
	return queryAll(ctx, s.r, what, "a run", func(sc rowScanner) (Run, error) { return scanRun(sc) }, q, args...)
}

func (s *sqlStore) RunEvents(ctx context.Context, p ListRunEventsParams) ([]RunEvent, error) {
	if err := checkRunID(p.RunID); err != nil {
		return nil, err
	}
	limit := p.Limit
	switch {
	case limit == 0:
		limit = DefaultRunEventLimit
	case limit < 0 || limit > MaxRunEventLimit:
		return nil, invalid("a page of run events holds 1 to %d events, not %d", MaxRunEventLimit, p.Limit)
	}
	rows, err := s.r.QueryContext(ctx, `
		SELECT run_id, seq, kind, round, duration_ms, payload, created_at FROM run_events
		WHERE run_id = $1 AND seq >= $2 ORDER BY seq LIMIT $3`, p.RunID, p.FromSeq, limit)
	if err != nil {
		return nil, fmt.Errorf("store: cannot list the events of run %s: %w", p.RunID, err)
	}
	defer rows.Close()
	out := []RunEvent{}
	for rows.Next() {
		var ev RunEvent
		var ms int64
		var payload string
		if err := rows.Scan(&ev.RunID, &ev.Seq, &ev.Kind, &ev.Round, &ms, &payload, timeScanner{&ev.CreatedAt}); err != nil {
			return nil, fmt.Errorf("store: cannot read an event of run %s: %w", p.RunID, err)
		}
		ev.Duration = time.Duration(ms) * time.Millisecond
		ev.Payload = json.RawMessage(payload)
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: cannot list the events of run %s: %w", p.RunID, err)
	}
	return out, nil
}
