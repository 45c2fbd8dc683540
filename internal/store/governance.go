package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pressly/goose/v3"
)

const insertGovernanceEvent = `
	INSERT INTO governance_events
		(kind, tool, reason, zone, ceiling, data_class, actor_username, actor_uid, configuration, run_id, created_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
	RETURNING id, created_at`

const governanceEventColumns = `id, kind, tool, reason, zone, ceiling, data_class, actor_username, actor_uid, configuration, run_id, created_at`

func checkGovernanceEvent(p RecordGovernanceEventParams) error {
	if err := checkName("governance event kind", p.Kind); err != nil {
		return err
	}
	for _, f := range []struct{ what, v string }{
		{"governance event tool", p.Tool},
		{"governance event reason", p.Reason},
		{"governance event zone", p.Zone},
		{"governance event ceiling", p.Ceiling},
		{"governance event data class", p.DataClass},
		{"governance event actor", p.ActorUsername},
		{"governance event configuration", p.Configuration},
		{"governance event run id", p.RunID},
	} {
		if err := checkText(f.what, f.v, MaxNameLen); err != nil {
			return err
		}
	}
	if p.ActorUID < 0 {
		return invalid("governance event actor uid %d is negative", p.ActorUID)
	}
	return nil
}

// queryRower is what both *sql.DB and *sql.Tx offer for one-row queries.
type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func insertEvent(ctx context.Context, q queryRower, p RecordGovernanceEventParams, at time.Time) (GovernanceEvent, error) {
	ev := GovernanceEvent{
		Kind: p.Kind, Tool: p.Tool, Reason: p.Reason, Zone: p.Zone, Ceiling: p.Ceiling,
		DataClass: p.DataClass, ActorUsername: p.ActorUsername, ActorUID: p.ActorUID,
		Configuration: p.Configuration, RunID: p.RunID,
	}
	err := q.QueryRowContext(ctx, insertGovernanceEvent,
		p.Kind, p.Tool, p.Reason, p.Zone, p.Ceiling, p.DataClass, p.ActorUsername, p.ActorUID, p.Configuration, p.RunID, at,
	).Scan(&ev.ID, timeScanner{&ev.CreatedAt})
	if err != nil {
		return GovernanceEvent{}, fmt.Errorf("store: cannot record the governance event %q for tool %q: %w", p.Kind, p.Tool, err)
	}
	return ev, nil
}

func (s *sqlStore) RecordGovernanceEvent(ctx context.Context, p RecordGovernanceEventParams) (GovernanceEvent, error) {
	if err := checkGovernanceEvent(p); err != nil {
		return GovernanceEvent{}, err
	}
	return insertEvent(ctx, s.w, p, s.stamp())
}

// governanceBatch is the most events one INSERT carries: at 11
// parameters each it stays far below the parameter limits of SQLite and
// PostgreSQL.
const governanceBatch = 500

// querier is what both *sql.DB and *sql.Tx offer for queries.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// governanceCast is the PostgreSQL type of an event's j-th parameter, in
// column order, for the VALUES list that cannot infer it.
func governanceCast(j int) string {
	switch j {
	case 7: // actor_uid
		return "bigint"
	case 10: // created_at
		return "timestamptz"
	default:
		return "text"
	}
}

// insertEvents stores events with one multi-row INSERT: the gate records
// a whole offer's denials at the start of every run, so this is one
// statement where a row each cost a statement each. Rows are inserted in
// the order given, so their IDs ascend in that order; RETURNING's order
// is not promised (SQLite), hence the sort.
//
// On PostgreSQL the statement commits without waiting for the WAL flush
// (synchronous_commit off for its transaction only): an offer's events come before the run's own
// durable writes, whose flush carries them, since the WAL is written in
// order; a run that never writes durably again was lost whole.
func insertEvents(ctx context.Context, q querier, pg bool, params []RecordGovernanceEventParams, at time.Time) ([]GovernanceEvent, error) {
	const columns = `(kind, tool, reason, zone, ceiling, data_class, actor_username, actor_uid, configuration, run_id, created_at)`
	var b strings.Builder
	if pg {
		b.WriteString(`WITH async AS (SELECT set_config('synchronous_commit', 'off', true) AS v)
			INSERT INTO governance_events ` + columns + ` SELECT * FROM (VALUES `)
	} else {
		b.WriteString(`INSERT INTO governance_events ` + columns + ` VALUES `)
	}
	args := make([]any, 0, len(params)*11)
	for i, p := range params {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for j := range 11 {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(i*11 + j + 1))
			if pg {
				b.WriteString("::" + governanceCast(j))
			}
		}
		b.WriteByte(')')
		args = append(args, p.Kind, p.Tool, p.Reason, p.Zone, p.Ceiling, p.DataClass, p.ActorUsername, p.ActorUID, p.Configuration, p.RunID, at)
	}
	if pg {
		b.WriteString(`) AS e ` + columns + ` WHERE (SELECT v FROM async) IS NOT NULL`)
	}
	b.WriteString(` RETURNING id`)
	rows, err := q.QueryContext(ctx, b.String(), args...)
	if err != nil {
		return nil, fmt.Errorf("store: cannot record %d governance events: %w", len(params), err)
	}
	defer rows.Close()
	ids := make([]int64, 0, len(params))
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: cannot read the id of a governance event: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: cannot record %d governance events: %w", len(params), err)
	}
	if len(ids) != len(params) {
		return nil, fmt.Errorf("store: %d governance events recorded, %d returned", len(params), len(ids))
	}
	slices.Sort(ids)
	out := make([]GovernanceEvent, len(params))
	for i, p := range params {
		out[i] = GovernanceEvent{
			ID: ids[i], Kind: p.Kind, Tool: p.Tool, Reason: p.Reason, Zone: p.Zone, Ceiling: p.Ceiling,
			DataClass: p.DataClass, ActorUsername: p.ActorUsername, ActorUID: p.ActorUID,
			Configuration: p.Configuration, RunID: p.RunID, CreatedAt: at,
		}
	}
	return out, nil
}

func (s *sqlStore) RecordGovernanceEvents(ctx context.Context, params []RecordGovernanceEventParams) ([]GovernanceEvent, error) {
	for _, p := range params {
		if err := checkGovernanceEvent(p); err != nil {
			return nil, err
		}
	}
	if len(params) == 0 {
		return []GovernanceEvent{}, nil
	}
	now, pg := s.stamp(), s.drv.Dialect() == goose.DialectPostgres
	if len(params) <= governanceBatch {
		// One statement is atomic on its own.
		return insertEvents(ctx, s.w, pg, params, now)
	}
	out := make([]GovernanceEvent, 0, len(params))
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		for chunk := range slices.Chunk(params, governanceBatch) {
			evs, err := insertEvents(ctx, tx, pg, chunk, now)
			if err != nil {
				return err
			}
			out = append(out, evs...)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (s *sqlStore) GovernanceEvents(ctx context.Context, p ListGovernanceEventsParams) ([]GovernanceEvent, error) {
	limit := p.Limit
	switch {
	case limit == 0:
		limit = DefaultGovernanceEventLimit
	case limit < 0 || limit > MaxGovernanceEventLimit:
		return nil, invalid("a page of governance events holds 1 to %d events, not %d", MaxGovernanceEventLimit, p.Limit)
	}
	if p.BeforeID < 0 {
		return nil, invalid("BeforeID %d is negative", p.BeforeID)
	}
	var where []string
	var args []any
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, cond+" $"+strconv.Itoa(len(args)))
	}
	for _, f := range []struct{ col, what, v string }{
		{"run_id", "run id", p.RunID},
		{"tool", "tool", p.Tool},
		{"kind", "kind", p.Kind},
	} {
		if f.v == "" {
			continue
		}
		if err := checkText("governance event "+f.what+" filter", f.v, MaxNameLen); err != nil {
			return nil, err
		}
		add(f.col+" =", f.v)
	}
	if p.BeforeID > 0 {
		add("id <", p.BeforeID)
	}
	q := `SELECT ` + governanceEventColumns + ` FROM governance_events`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	args = append(args, limit)
	q += ` ORDER BY id DESC LIMIT $` + strconv.Itoa(len(args))

	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: cannot list governance events: %w", err)
	}
	defer rows.Close()
	out := []GovernanceEvent{}
	for rows.Next() {
		var ev GovernanceEvent
		if err := rows.Scan(&ev.ID, &ev.Kind, &ev.Tool, &ev.Reason, &ev.Zone, &ev.Ceiling, &ev.DataClass,
			&ev.ActorUsername, &ev.ActorUID, &ev.Configuration, &ev.RunID, timeScanner{&ev.CreatedAt}); err != nil {
			return nil, fmt.Errorf("store: cannot read a governance event: %w", err)
		}
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: cannot list governance events: %w", err)
	}
	return out, nil
}
