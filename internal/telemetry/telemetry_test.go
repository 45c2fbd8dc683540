package telemetry_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/dbtest"
	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/telemetry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// clock is the injected time: it moves only when told.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

type env struct {
	st    store.Store
	rec   *telemetry.Recorder
	clock *clock
}

// databases runs fn on SQLite and, when configured, PostgreSQL.
func databases(t *testing.T, fn func(t *testing.T, dsn string)) {
	t.Run("SQLite", func(t *testing.T) {
		t.Parallel()
		fn(t, "sqlite:"+filepath.Join(t.TempDir(), "t3agent.db"))
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		t.Parallel()
		fn(t, dbtest.Postgres(t))
	})
}

func newEnv(t *testing.T, dsn string, loc *time.Location) *env {
	t.Helper()
	st, err := store.Open(t.Context(), dsn, store.OpenParams{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	c := &clock{now: time.Date(2025, 3, 14, 10, 0, 0, 0, time.UTC)}
	return &env{st: st, clock: c, rec: telemetry.New(telemetry.Params{Store: st, Now: c.Now, Location: loc})}
}

func sqliteEnv(t *testing.T) *env {
	return newEnv(t, "sqlite:"+filepath.Join(t.TempDir(), "t3agent.db"), nil)
}

// entry is a configuration on a priced model ($1 in, $2 out per 1M tokens).
func entry(cfg string, priced bool) agentconfig.Entry {
	m := agentconfig.Model{Identifier: "m1", Provider: "openai", ModelID: "gpt-x"}
	if priced {
		m.Prices = &agentconfig.Prices{Input: agentconfig.Dollar, Output: 2 * agentconfig.Dollar}
	}
	return agentconfig.Entry{
		Configuration: agentconfig.Configuration{Identifier: cfg},
		Model:         m,
		Provider:      agentconfig.Provider{Identifier: "openai"},
	}
}

func (e *env) record(t *testing.T, user, cfg string, in, out int) store.LLMCall {
	t.Helper()
	c, err := e.rec.RecordCall(t.Context(), telemetry.CallParams{
		RunID: "run", Source: "chat", Operation: "chatTurn", Username: user, Entry: entry(cfg, true),
		Usage: &llm.Usage{InputTokens: in, OutputTokens: out}, Latency: 40 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (e *env) setUserBudget(t *testing.T, user string, b store.BudgetLimits, active bool) {
	t.Helper()
	err := e.st.ApplyAgentConfig(t.Context(), store.ApplyAgentConfigParams{
		SaveUserBudgets: []store.UserBudget{{Username: user, Budget: b, Active: active}}, UpdatedBy: "test",
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestRecordCall(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t)
	ctx := t.Context()
	// 1,500 in at $1/1M + 250 out at $2/1M = $0.002 exactly.
	c, err := e.rec.RecordCall(ctx, telemetry.CallParams{
		RunID: "r1", Source: "chat", Operation: "chatTurn", Username: "editor",
		RequestedConfiguration: "support", Entry: entry("local", true), FallbackIndex: 1, ServedModel: "gpt-x-0314",
		Usage: &llm.Usage{InputTokens: 1500, OutputTokens: 250}, Latency: 1234 * time.Millisecond, Attempts: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := store.LLMCall{
		ID: c.ID, RunID: "r1", Source: "chat", Operation: "chatTurn", Username: "editor",
		RequestedConfiguration: "support", Configuration: "local", FallbackIndex: 1, Provider: "openai", Model: "m1",
		ModelID: "gpt-x-0314", Success: true, InputTokens: ptr(int64(1500)), OutputTokens: ptr(int64(250)),
		Cost: ptr(int64(2 * agentconfig.Dollar / 1000)), Latency: 1234 * time.Millisecond, Attempts: 2, Day: "2025-03-14",
		CreatedAt: c.CreatedAt,
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("call:\n got %+v\nwant %+v", c, want)
	}

	for _, tc := range []struct {
		name     string
		p        telemetry.CallParams
		class    string
		attempts int
		tokens   bool
		cost     *int64
	}{
		{"provider failure", telemetry.CallParams{Entry: entry("a", true),
			Err: fmt.Errorf("round 2: %w", &llm.Error{Provider: "openai", Class: llm.FailServerError, Status: 503, Attempts: 4})},
			"serverError", 4, false, ptr(int64(0))},
		{"cancelled", telemetry.CallParams{Entry: entry("a", true), Err: context.Canceled}, "cancelled", 1, false, ptr(int64(0))},
		{"deadline", telemetry.CallParams{Entry: entry("a", false), Err: context.DeadlineExceeded}, "timeout", 1, false, nil},
		{"other error", telemetry.CallParams{Entry: entry("a", true), Err: errors.New("boom")}, "unknown", 1, false, ptr(int64(0))},
		{"unpriced model", telemetry.CallParams{Entry: entry("a", false), Usage: &llm.Usage{InputTokens: 5}}, "", 1, true, nil},
		{"no usage reported", telemetry.CallParams{Entry: entry("a", true)}, "", 1, false, nil},
	} {
		got, err := e.rec.RecordCall(ctx, tc.p)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got.ErrorClass != tc.class || got.Success != (tc.class == "") || got.Attempts != tc.attempts ||
			(got.InputTokens != nil) != tc.tokens || !reflect.DeepEqual(got.Cost, tc.cost) ||
			got.RequestedConfiguration != "a" || got.ModelID != "gpt-x" {
			t.Errorf("%s: %+v", tc.name, got)
		}
	}
	if telemetry.ErrorClass(nil) != "" {
		t.Error("ErrorClass(nil) is not empty")
	}
}

func ptr[T any](v T) *T { return &v }

func TestLedgerDaysFollowTheClockAndZone(t *testing.T) {
	t.Parallel()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no time zone data:", err)
	}
	e := newEnv(t, "sqlite:"+filepath.Join(t.TempDir(), "t3agent.db"), berlin)
	// 23:30 UTC on 14 March is 00:30 on 15 March in Berlin.
	e.clock.Set(time.Date(2025, 3, 14, 23, 30, 0, 0, time.UTC))
	if c := e.record(t, "anna", "support", 1, 1); c.Day != "2025-03-15" {
		t.Errorf("day = %s, want 2025-03-15 (Berlin)", c.Day)
	}
	e.clock.Set(time.Date(2025, 3, 14, 22, 59, 59, 0, time.UTC))
	if c := e.record(t, "anna", "support", 1, 1); c.Day != "2025-03-14" {
		t.Errorf("day = %s, want 2025-03-14", c.Day)
	}
	if e.rec.Today() != "2025-03-14" {
		t.Errorf("Today = %s", e.rec.Today())
	}
}

func TestUsageByEveryKey(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t)
	e.clock.Set(time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC))
	e.record(t, "anna", "support", 1000, 100) // $0.0012
	e.clock.Set(time.Date(2025, 3, 2, 9, 0, 0, 0, time.UTC))
	e.record(t, "anna", "local", 10, 10)
	e.record(t, "bob", "support", 500, 0)
	_, err := e.rec.RecordCall(t.Context(), telemetry.CallParams{
		Source: "cli", Username: "bob", Entry: entry("support", true), Err: &llm.Error{Class: llm.FailRateLimit},
	})
	if err != nil {
		t.Fatal(err)
	}
	usage := func(by store.UsageKey, since time.Time) map[string]store.UsageTotal {
		rows, err := e.rec.Usage(t.Context(), telemetry.UsageParams{By: by, Since: since})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]store.UsageTotal{}
		for _, r := range rows {
			m[r.Key] = r.UsageTotal
		}
		return m
	}
	cost := func(in, out int64) int64 {
		return in*int64(agentconfig.Dollar)/1e6 + out*2*int64(agentconfig.Dollar)/1e6
	}
	checks := []struct {
		by    store.UsageKey
		since time.Time
		want  map[string]store.UsageTotal
	}{
		{store.UsageByUser, time.Time{}, map[string]store.UsageTotal{
			"anna": {Requests: 2, InputTokens: 1010, OutputTokens: 110, Cost: cost(1010, 110)},
			"bob":  {Requests: 2, Errors: 1, InputTokens: 500, Cost: cost(500, 0)},
		}},
		{store.UsageByConfiguration, time.Time{}, map[string]store.UsageTotal{
			"support": {Requests: 3, Errors: 1, InputTokens: 1500, OutputTokens: 100, Cost: cost(1500, 100)},
			"local":   {Requests: 1, InputTokens: 10, OutputTokens: 10, Cost: cost(10, 10)},
		}},
		{store.UsageBySource, time.Time{}, map[string]store.UsageTotal{
			"chat": {Requests: 3, InputTokens: 1510, OutputTokens: 110, Cost: cost(1510, 110)},
			"cli":  {Requests: 1, Errors: 1},
		}},
		{store.UsageByModel, time.Time{}, map[string]store.UsageTotal{
			"m1": {Requests: 4, Errors: 1, InputTokens: 1510, OutputTokens: 110, Cost: cost(1510, 110)},
		}},
		{store.UsageByProvider, time.Time{}, map[string]store.UsageTotal{
			"openai": {Requests: 4, Errors: 1, InputTokens: 1510, OutputTokens: 110, Cost: cost(1510, 110)},
		}},
		{store.UsageByDay, time.Time{}, map[string]store.UsageTotal{
			"2025-03-01": {Requests: 1, InputTokens: 1000, OutputTokens: 100, Cost: cost(1000, 100)},
			"2025-03-02": {Requests: 3, Errors: 1, InputTokens: 510, OutputTokens: 10, Cost: cost(510, 10)},
		}},
		{store.UsageByDay, time.Date(2025, 3, 2, 0, 0, 0, 0, time.UTC), map[string]store.UsageTotal{
			"2025-03-02": {Requests: 3, Errors: 1, InputTokens: 510, OutputTokens: 10, Cost: cost(510, 10)},
		}},
	}
	for _, c := range checks {
		if got := usage(c.by, c.since); !reflect.DeepEqual(got, c.want) {
			t.Errorf("usage by %s since %v:\n got %+v\nwant %+v", c.by, c.since, got, c.want)
		}
	}
}

// TestBudgetMatrix: scope × period × metric, at and around each limit.
func TestBudgetMatrix(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, dsn string) {
		ctx := t.Context()
		e := newEnv(t, dsn, nil)
		check := func(p telemetry.CheckBudgetParams) *telemetry.BudgetError {
			t.Helper()
			err := e.rec.CheckBudget(ctx, p)
			if err == nil {
				return nil
			}
			var be *telemetry.BudgetError
			if !errors.As(err, &be) || !errors.Is(err, telemetry.ErrBudgetExhausted) {
				t.Fatalf("CheckBudget: %v is not a budget error", err)
			}
			return be
		}
		expect := func(name string, p telemetry.CheckBudgetParams, scope telemetry.Scope, period telemetry.Period, metric telemetry.Metric) {
			t.Helper()
			be := check(p)
			switch {
			case metric == "" && be != nil:
				t.Errorf("%s: refused: %v", name, be)
			case metric != "" && be == nil:
				t.Errorf("%s: allowed, want %s %s %s refused", name, scope, period, metric)
			case metric != "" && (be.Scope != scope || be.Period != period || be.Metric != metric):
				t.Errorf("%s: refused %s %s %s, want %s %s %s", name, be.Scope, be.Period, be.Metric, scope, period, metric)
			}
		}
		// The user's limits come from the stored budgets, as a run
		// resolves them.
		configs := agentconfig.New(agentconfig.Params{Store: e.st})
		user := func(u string) telemetry.CheckBudgetParams {
			t.Helper()
			snap, err := configs.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return telemetry.CheckBudgetParams{Username: u, UserBudget: snap.UserLimits(u)}
		}

		// Requests per day: the check counts the call itself.
		e.setUserBudget(t, "req", store.BudgetLimits{RequestsPerDay: 2}, true)
		expect("req 0 of 2", user("req"), "", "", "")
		e.record(t, "req", "c", 1, 1)
		expect("req 1 of 2", user("req"), "", "", "")
		e.record(t, "req", "c", 1, 1)
		expect("req 2 of 2", user("req"), telemetry.ScopeUser, telemetry.PeriodDay, telemetry.MetricRequests)

		// Tokens per day: planned tokens count; a spent limit refuses even a call that plans none.
		e.setUserBudget(t, "tok", store.BudgetLimits{TokensPerDay: 1000}, true)
		e.record(t, "tok", "c", 900, 90) // 990
		p := user("tok")
		p.PlannedTokens = 10
		expect("990+10 of 1000", p, "", "", "")
		p.PlannedTokens = 11
		expect("990+11 of 1000", p, telemetry.ScopeUser, telemetry.PeriodDay, telemetry.MetricTokens)
		e.record(t, "tok", "c", 10, 0) // 1000
		expect("1000 of 1000, none planned", user("tok"), telemetry.ScopeUser, telemetry.PeriodDay, telemetry.MetricTokens)

		// Cost per day, in exact picodollars.
		e.setUserBudget(t, "cost", store.BudgetLimits{CostPerDay: int64(agentconfig.Dollar) / 100}, true) // $0.01
		e.record(t, "cost", "c", 8000, 0)                                                                 // $0.008
		p = user("cost")
		p.PlannedCost = agentconfig.Dollar / 500 // $0.002: exactly the limit
		expect("$0.008+$0.002 of $0.01", p, "", "", "")
		p.PlannedCost++
		be := check(p)
		if be == nil || be.Metric != telemetry.MetricCost || !strings.Contains(be.Error(), `the daily cost budget of user "cost" is exhausted: $0.008 used of $0.01`) {
			t.Errorf("cost refusal = %v", be)
		}

		// Months: earlier days of the month count, last month does not.
		e.setUserBudget(t, "month", store.BudgetLimits{RequestsPerDay: 10, RequestsPerMonth: 3}, true)
		e.clock.Set(time.Date(2025, 2, 28, 23, 59, 59, 0, time.UTC))
		e.record(t, "month", "c", 1, 1)
		e.record(t, "month", "c", 1, 1)
		e.clock.Set(time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC))
		e.record(t, "month", "c", 1, 1)
		e.clock.Set(time.Date(2025, 3, 13, 12, 0, 0, 0, time.UTC))
		e.record(t, "month", "c", 1, 1)
		expect("2 of 3 this month", user("month"), "", "", "")
		e.record(t, "month", "c", 1, 1)
		expect("3 of 3 this month", user("month"), telemetry.ScopeUser, telemetry.PeriodMonth, telemetry.MetricRequests)
		e.clock.Set(time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC))
		expect("a new month", user("month"), "", "", "")

		// Day before month: both spent, the day is reported.
		e.clock.Set(time.Date(2025, 3, 14, 10, 0, 0, 0, time.UTC))
		e.setUserBudget(t, "both", store.BudgetLimits{RequestsPerDay: 1, RequestsPerMonth: 1}, true)
		e.record(t, "both", "c", 1, 1)
		expect("day and month spent", user("both"), telemetry.ScopeUser, telemetry.PeriodDay, telemetry.MetricRequests)
		// …and the day resets at midnight, leaving the month.
		e.clock.Set(time.Date(2025, 3, 15, 0, 0, 0, 0, time.UTC))
		expect("next day, month still spent", user("both"), telemetry.ScopeUser, telemetry.PeriodMonth, telemetry.MetricRequests)
		e.clock.Set(time.Date(2025, 3, 14, 10, 0, 0, 0, time.UTC))

		// No budget, an inactive one, and all zeros limit nothing.
		e.setUserBudget(t, "off", store.BudgetLimits{RequestsPerDay: 1}, false)
		e.setUserBudget(t, "zero", store.BudgetLimits{}, true)
		for _, u := range []string{"off", "zero", "nobody", ""} {
			e.record(t, u, "c", 1, 1)
			expect("unlimited "+u, user(u), "", "", "")
		}

		// Configuration budgets count the configuration's calls, any user.
		cfgBudget := telemetry.CheckBudgetParams{Configuration: "limited", Budget: agentconfig.Budget{RequestsPerDay: 2, TokensPerMonth: 100}}
		e.record(t, "x", "limited", 10, 10)
		e.record(t, "y", "other", 1000, 1000) // another configuration does not count
		expect("config 1 of 2", cfgBudget, "", "", "")
		e.record(t, "y", "limited", 10, 10)
		expect("config 2 of 2", cfgBudget, telemetry.ScopeConfiguration, telemetry.PeriodDay, telemetry.MetricRequests)
		cfgBudget.Budget.RequestsPerDay = 0
		cfgBudget.PlannedTokens = 61
		expect("config tokens month 40+61 of 100", cfgBudget, telemetry.ScopeConfiguration, telemetry.PeriodMonth, telemetry.MetricTokens)

		// The user is checked before the configuration.
		both := cfgBudget
		both.Username, both.UserBudget = "req", user("req").UserBudget
		expect("user and configuration spent", both, telemetry.ScopeUser, telemetry.PeriodDay, telemetry.MetricRequests)
	})
}

func TestBudgetErrorMessages(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err  telemetry.BudgetError
		want string
	}{
		{telemetry.BudgetError{Scope: telemetry.ScopeUser, Subject: "anna", Period: telemetry.PeriodDay, Metric: telemetry.MetricRequests, Limit: 5, Used: 5, Planned: 1},
			`the daily requests budget of user "anna" is exhausted: 5 used of 5, this call needs 1`},
		{telemetry.BudgetError{Scope: telemetry.ScopeConfiguration, Subject: "support", Period: telemetry.PeriodMonth, Metric: telemetry.MetricCost,
			Limit: int64(25 * agentconfig.Dollar), Used: int64(24 * agentconfig.Dollar), Planned: int64(2 * agentconfig.Dollar)},
			`the monthly cost budget of configuration "support" is exhausted: $24.00 used of $25.00, this call needs $2.00`},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
}

// TestOnCallSeesEveryCall: the hook sees each call as the row the store
// gets, even when the store cannot take it.
func TestOnCallSeesEveryCall(t *testing.T) {
	t.Parallel()
	st, err := store.Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "t3agent.db"), store.OpenParams{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []store.RecordLLMCallParams
	rec := telemetry.New(telemetry.Params{Store: st, OnCall: func(_ context.Context, c store.RecordLLMCallParams) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, c)
	}})
	ok := telemetry.CallParams{Entry: entry("a", true), Usage: &llm.Usage{InputTokens: 1500, OutputTokens: 250}, Latency: time.Second}
	if _, err := rec.RecordCall(t.Context(), ok); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	failed := telemetry.CallParams{Entry: entry("a", true), Err: &llm.Error{Provider: "openai", Class: llm.FailRateLimit, Attempts: 3}}
	if _, err := rec.RecordCall(t.Context(), failed); err == nil {
		t.Fatal("a closed store took a call")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 {
		t.Fatalf("the hook saw %d calls, want 2", len(seen))
	}
	if c := seen[0]; !c.Success || c.Provider != "openai" || c.Model != "m1" || *c.InputTokens != 1500 || *c.OutputTokens != 250 ||
		*c.Cost != int64(2*agentconfig.Dollar/1000) || c.Latency != time.Second {
		t.Errorf("successful call = %+v", c)
	}
	if c := seen[1]; c.Success || c.ErrorClass != "rateLimit" || c.Attempts != 3 || c.InputTokens != nil {
		t.Errorf("failed call = %+v", c)
	}
}
