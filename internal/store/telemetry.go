package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pressly/goose/v3"
)

// Telemetry persists one row per LLM provider call and the daily usage
// ledger that budgets and the usage readout read. Neither holds content:
// there is no column for a prompt, an answer or an error message.
type Telemetry interface {
	// RecordLLMCall appends one call and adds it to its day's ledger row,
	// in one transaction. It returns the call as stored.
	RecordLLMCall(ctx context.Context, params RecordLLMCallParams) (LLMCall, error)
	// LLMCalls lists calls newest first (by ID), filtered and paged; never nil.
	LLMCalls(ctx context.Context, params ListLLMCallsParams) ([]LLMCall, error)
	// UsageTotals sums the ledger rows of one user or one configuration
	// over a range of days.
	UsageTotals(ctx context.Context, params UsageTotalsParams) (UsageTotal, error)
	// Usage sums the ledger over a range of days, grouped by one key,
	// ordered by that key (bytewise); never nil.
	Usage(ctx context.Context, params UsageParams) ([]UsageRow, error)
}

// Limits of the telemetry listings.
const (
	DefaultLLMCallLimit = 100
	MaxLLMCallLimit     = 1000
)

// LLMCall is one provider call. Tokens and cost are nil when not measured
// (no usage reported, or a model without prices).
type LLMCall struct {
	ID        int64
	RunID     string // the correlation id: the run that made the call
	Source    string // the caller, e.g. "chat", "cli"
	Operation string // the caller's operation, e.g. "chatTurn"
	Username  string // the acting backend user, "" for none
	// RequestedConfiguration is the configuration the caller asked for;
	// Configuration is the one this call used, another when FallbackIndex > 0.
	RequestedConfiguration string
	Configuration          string
	FallbackIndex          int
	Provider               string
	Model                  string // the model record's identifier
	ModelID                string // the model the provider says answered
	Success                bool
	ErrorClass             string // "" on success
	InputTokens            *int64
	OutputTokens           *int64
	Cost                   *int64 // picodollars
	Latency                time.Duration
	Attempts               int
	Day                    string // the ledger day, YYYY-MM-DD
	CreatedAt              time.Time
}

// RecordLLMCallParams are the parameters of RecordLLMCall: the call
// without ID and CreatedAt. Day is required and names the ledger day the
// call counts towards, in the caller's time zone.
type RecordLLMCallParams struct {
	RunID                  string
	Source                 string
	Operation              string
	Username               string
	RequestedConfiguration string
	Configuration          string
	FallbackIndex          int
	Provider               string
	Model                  string
	ModelID                string
	Success                bool
	ErrorClass             string
	InputTokens            *int64
	OutputTokens           *int64
	Cost                   *int64
	Latency                time.Duration
	Attempts               int
	Day                    string
}

// ListLLMCallsParams filter and page LLMCalls.
type ListLLMCallsParams struct {
	RunID    string // "" for every run
	BeforeID int64  // > 0: only calls with a smaller ID
	Limit    int    // 0 means DefaultLLMCallLimit
}

// UsageTotal is a sum of ledger rows. Cost is picodollars; Unpriced
// counts requests whose cost was unknown and is missing from Cost.
type UsageTotal struct {
	Requests     int64 `json:"requests"`
	Errors       int64 `json:"errors"`
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
	Cost         int64 `json:"cost"`
	Unpriced     int64 `json:"unpriced"`
}

// Tokens is input plus output tokens.
func (u UsageTotal) Tokens() int64 { return u.InputTokens + u.OutputTokens }

// UsageTotalsParams select ledger rows by exactly one of Username and
// Configuration, over the days From through To (YYYY-MM-DD, inclusive).
type UsageTotalsParams struct {
	Username      string
	Configuration string
	From, To      string
}

// UsageKey is what Usage groups by.
type UsageKey string

const (
	UsageByDay           UsageKey = "day"
	UsageByUser          UsageKey = "user"
	UsageByConfiguration UsageKey = "configuration"
	UsageByProvider      UsageKey = "provider"
	UsageByModel         UsageKey = "model"
	UsageBySource        UsageKey = "source"
)

// usageColumns maps each key to its ledger column; only these constants
// reach SQL.
var usageColumns = map[UsageKey]string{
	UsageByDay: "day", UsageByUser: "username", UsageByConfiguration: "configuration",
	UsageByProvider: "provider", UsageByModel: "model", UsageBySource: "source",
}

// UsageParams group the ledger by By over the days From through To
// (inclusive; "" leaves that end open).
type UsageParams struct {
	By       UsageKey
	From, To string
}

// UsageRow is the sum of one group.
type UsageRow struct {
	Key string `json:"key"`
	UsageTotal
}

var dayPattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

func checkDay(what, d string, optional bool) error {
	if d == "" && optional {
		return nil
	}
	if !dayPattern.MatchString(d) {
		return invalid("%s %q is not a day (YYYY-MM-DD)", what, d)
	}
	if _, err := time.Parse(time.DateOnly, d); err != nil {
		return invalid("%s %q is not a day of the calendar", what, d)
	}
	return nil
}

func checkLLMCall(p RecordLLMCallParams) error {
	for _, f := range []struct{ what, v string }{
		{"run id", p.RunID}, {"source", p.Source}, {"operation", p.Operation}, {"username", p.Username},
		{"requested configuration", p.RequestedConfiguration}, {"configuration", p.Configuration},
		{"provider", p.Provider}, {"model", p.Model}, {"model id", p.ModelID}, {"error class", p.ErrorClass},
	} {
		if err := checkText("LLM call "+f.what, f.v, MaxNameLen); err != nil {
			return err
		}
	}
	if p.Success != (p.ErrorClass == "") {
		return invalid("an LLM call has an error class exactly when it failed")
	}
	for _, v := range []*int64{p.InputTokens, p.OutputTokens, p.Cost} {
		if v != nil && *v < 0 {
			return invalid("an LLM call's tokens and cost cannot be negative")
		}
	}
	if p.FallbackIndex < 0 || p.Latency < 0 || p.Attempts < 0 {
		return invalid("an LLM call's fallback index, latency and attempts cannot be negative")
	}
	return checkDay("LLM call day", p.Day, false)
}

const llmCallColumns = `id, run_id, source, operation, username, requested_configuration, configuration,
	fallback_index, provider, model, model_id, success, error_class, input_tokens, output_tokens, cost,
	latency_ms, attempts, day, created_at`

func deref(v *int64) int64 {
	if v == nil {
		return 0
	}
	return *v
}

func (s *sqlStore) RecordLLMCall(ctx context.Context, p RecordLLMCallParams) (LLMCall, error) {
	if err := checkLLMCall(p); err != nil {
		return LLMCall{}, err
	}
	c := LLMCall{
		RunID: p.RunID, Source: p.Source, Operation: p.Operation, Username: p.Username,
		RequestedConfiguration: p.RequestedConfiguration, Configuration: p.Configuration,
		FallbackIndex: p.FallbackIndex, Provider: p.Provider, Model: p.Model, ModelID: p.ModelID,
		Success: p.Success, ErrorClass: p.ErrorClass, InputTokens: p.InputTokens, OutputTokens: p.OutputTokens,
		Cost: p.Cost, Latency: p.Latency.Truncate(time.Millisecond), Attempts: p.Attempts, Day: p.Day,
	}
	var errs, unpriced int64
	if !p.Success {
		errs = 1
	}
	if p.Cost == nil {
		unpriced = 1
	}
	at := s.stamp()
	args := []any{p.RunID, p.Source, p.Operation, p.Username, p.RequestedConfiguration, p.Configuration,
		p.FallbackIndex, p.Provider, p.Model, p.ModelID, p.Success, p.ErrorClass, p.InputTokens, p.OutputTokens,
		p.Cost, p.Latency.Milliseconds(), p.Attempts, p.Day, at}
	var err error
	if s.drv.Dialect() == goose.DialectPostgres {
		err = s.recordLLMCallPostgres(ctx, args, &c)
	} else {
		ledger := []any{p.Day, p.Username, p.Configuration, p.Provider, p.Model, p.Source,
			errs, deref(p.InputTokens), deref(p.OutputTokens), deref(p.Cost), unpriced}
		err = s.writeTx(ctx, func(tx *sql.Tx) error {
			err := tx.QueryRowContext(ctx, `
				INSERT INTO llm_calls (`+llmCallInsertColumns+`)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
				RETURNING id, created_at`, args...).Scan(&c.ID, timeScanner{&c.CreatedAt})
			if err != nil {
				return fmt.Errorf("store: cannot record the LLM call: %w", err)
			}
			if _, err = tx.ExecContext(ctx, `
				INSERT INTO llm_usage_daily (day, username, configuration, provider, model, source,
					requests, errors, input_tokens, output_tokens, cost, unpriced)
				VALUES ($1, $2, $3, $4, $5, $6, 1, $7, $8, $9, $10, $11)`+ledgerUpsert, ledger...); err != nil {
				return fmt.Errorf("store: cannot add the LLM call to the usage ledger: %w", err)
			}
			return nil
		})
	}
	if err != nil {
		return LLMCall{}, err
	}
	return c, nil
}

const llmCallInsertColumns = `run_id, source, operation, username, requested_configuration, configuration,
	fallback_index, provider, model, model_id, success, error_class, input_tokens, output_tokens, cost,
	latency_ms, attempts, day, created_at`

// ledgerUpsert adds a call to an existing ledger row of its day and keys.
const ledgerUpsert = `
	ON CONFLICT (day, username, configuration, provider, model, source) DO UPDATE SET
		requests = llm_usage_daily.requests + 1,
		errors = llm_usage_daily.errors + excluded.errors,
		input_tokens = llm_usage_daily.input_tokens + excluded.input_tokens,
		output_tokens = llm_usage_daily.output_tokens + excluded.output_tokens,
		cost = llm_usage_daily.cost + excluded.cost,
		unpriced = llm_usage_daily.unpriced + excluded.unpriced`

// recordLLMCallPostgres is RecordLLMCall in one statement, one round trip:
// the call's insert and the ledger's upsert as data-modifying CTEs, which
// PostgreSQL runs atomically. The ledger row is computed from the call row
// as inserted. It does not wait for the WAL flush: a call row is visible
// to the next budget check at once, and the run's next durable commit (the
// settle at the latest) flushes it, since the WAL is written in order.
func (s *sqlStore) recordLLMCallPostgres(ctx context.Context, args []any, c *LLMCall) error {
	err := s.w.QueryRowContext(ctx, `
		WITH async AS (SELECT set_config('synchronous_commit', 'off', true) AS v),
		call AS (
			INSERT INTO llm_calls (`+llmCallInsertColumns+`)
			SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::bigint, $8::text, $9::text,
				$10::text, $11::boolean, $12::text, $13::bigint, $14::bigint, $15::bigint, $16::bigint, $17::bigint,
				$18::text, $19::timestamptz
			FROM async WHERE async.v IS NOT NULL
			RETURNING id, created_at, day, username, configuration, provider, model, source, success,
				input_tokens, output_tokens, cost),
		ledger AS (
			INSERT INTO llm_usage_daily (day, username, configuration, provider, model, source,
				requests, errors, input_tokens, output_tokens, cost, unpriced)
			SELECT day, username, configuration, provider, model, source, 1,
				CASE WHEN success THEN 0 ELSE 1 END, COALESCE(input_tokens, 0), COALESCE(output_tokens, 0),
				COALESCE(cost, 0), CASE WHEN cost IS NULL THEN 1 ELSE 0 END
			FROM call`+ledgerUpsert+`)
		SELECT id, created_at FROM call`, args...).Scan(&c.ID, timeScanner{&c.CreatedAt})
	if err != nil {
		return fmt.Errorf("store: cannot record the LLM call: %w", err)
	}
	return nil
}

func (s *sqlStore) LLMCalls(ctx context.Context, p ListLLMCallsParams) ([]LLMCall, error) {
	limit := p.Limit
	switch {
	case limit == 0:
		limit = DefaultLLMCallLimit
	case limit < 0 || limit > MaxLLMCallLimit:
		return nil, invalid("a page of LLM calls holds 1 to %d calls, not %d", MaxLLMCallLimit, p.Limit)
	}
	if p.BeforeID < 0 {
		return nil, invalid("BeforeID %d is negative", p.BeforeID)
	}
	var where []string
	var args []any
	if p.RunID != "" {
		if err := checkText("run id filter", p.RunID, MaxNameLen); err != nil {
			return nil, err
		}
		args = append(args, p.RunID)
		where = append(where, "run_id = $"+strconv.Itoa(len(args)))
	}
	if p.BeforeID > 0 {
		args = append(args, p.BeforeID)
		where = append(where, "id < $"+strconv.Itoa(len(args)))
	}
	q := `SELECT ` + llmCallColumns + ` FROM llm_calls`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	args = append(args, limit)
	q += ` ORDER BY id DESC LIMIT $` + strconv.Itoa(len(args))
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: cannot list LLM calls: %w", err)
	}
	defer rows.Close()
	out := []LLMCall{}
	for rows.Next() {
		var c LLMCall
		var latencyMS int64
		if err := rows.Scan(&c.ID, &c.RunID, &c.Source, &c.Operation, &c.Username, &c.RequestedConfiguration,
			&c.Configuration, &c.FallbackIndex, &c.Provider, &c.Model, &c.ModelID, &c.Success, &c.ErrorClass,
			nullInt64{&c.InputTokens}, nullInt64{&c.OutputTokens}, nullInt64{&c.Cost}, &latencyMS, &c.Attempts,
			&c.Day, timeScanner{&c.CreatedAt}); err != nil {
			return nil, fmt.Errorf("store: cannot read an LLM call: %w", err)
		}
		c.Latency = time.Duration(latencyMS) * time.Millisecond
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: cannot list LLM calls: %w", err)
	}
	return out, nil
}

// sums is the SELECT list of every ledger sum, CAST because PostgreSQL
// widens SUM(bigint) to numeric.
const sums = `
	CAST(COALESCE(SUM(requests), 0) AS BIGINT), CAST(COALESCE(SUM(errors), 0) AS BIGINT),
	CAST(COALESCE(SUM(input_tokens), 0) AS BIGINT), CAST(COALESCE(SUM(output_tokens), 0) AS BIGINT),
	CAST(COALESCE(SUM(cost), 0) AS BIGINT), CAST(COALESCE(SUM(unpriced), 0) AS BIGINT)`

func (u *UsageTotal) dest() []any {
	return []any{&u.Requests, &u.Errors, &u.InputTokens, &u.OutputTokens, &u.Cost, &u.Unpriced}
}

func (s *sqlStore) UsageTotals(ctx context.Context, p UsageTotalsParams) (UsageTotal, error) {
	if (p.Username == "") == (p.Configuration == "") {
		return UsageTotal{}, invalid("usage totals are for exactly one user or one configuration")
	}
	if err := errors.Join(checkDay("first day", p.From, false), checkDay("last day", p.To, false)); err != nil {
		return UsageTotal{}, err
	}
	col, key := "username", p.Username
	if p.Configuration != "" {
		col, key = "configuration", p.Configuration
	}
	if err := checkText(col, key, MaxNameLen); err != nil {
		return UsageTotal{}, err
	}
	var u UsageTotal
	err := s.r.QueryRowContext(ctx, `SELECT `+sums+` FROM llm_usage_daily WHERE `+col+` = $1 AND day >= $2 AND day <= $3`,
		key, p.From, p.To).Scan(u.dest()...)
	if err != nil {
		return UsageTotal{}, fmt.Errorf("store: cannot sum the usage of %s %q: %w", col, key, err)
	}
	return u, nil
}

func (s *sqlStore) Usage(ctx context.Context, p UsageParams) ([]UsageRow, error) {
	col, ok := usageColumns[p.By]
	if !ok {
		return nil, invalid("usage cannot be grouped by %q (day, user, configuration, provider, model or source)", p.By)
	}
	if err := errors.Join(checkDay("first day", p.From, true), checkDay("last day", p.To, true)); err != nil {
		return nil, err
	}
	var where []string
	var args []any
	if p.From != "" {
		args = append(args, p.From)
		where = append(where, "day >= $"+strconv.Itoa(len(args)))
	}
	if p.To != "" {
		args = append(args, p.To)
		where = append(where, "day <= $"+strconv.Itoa(len(args)))
	}
	q := `SELECT ` + col + `, ` + sums + ` FROM llm_usage_daily`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` GROUP BY ` + col + ` ORDER BY ` + col
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: cannot sum usage by %s: %w", p.By, err)
	}
	defer rows.Close()
	out := []UsageRow{}
	for rows.Next() {
		var r UsageRow
		if err := rows.Scan(append([]any{&r.Key}, r.dest()...)...); err != nil {
			return nil, fmt.Errorf("store: cannot read a usage row: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: cannot sum usage by %s: %w", p.By, err)
	}
	return out, nil
}
