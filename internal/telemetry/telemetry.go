package telemetry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/store"
)

// Store is what the Recorder needs from the store.
type Store interface {
	store.Telemetry
}

// Params configure New.
type Params struct {
	// Store keeps the calls and the ledger; required.
	Store Store
	// Now is the clock that decides a call's day and the budget periods;
	// nil means time.Now. Tests inject one to cross midnight and month ends.
	Now func() time.Time
	// Location is the time zone of days and months; nil means UTC.
	Location *time.Location
	// OnCall, when set, sees every call RecordCall is given, as the row it
	// stores (provider, model, outcome, tokens, cost, latency), before it
	// is stored and whether or not the store then takes it: metrics count
	// the calls that happened. It is called synchronously, must be quick
	// and must not panic.
	OnCall func(ctx context.Context, call store.RecordLLMCallParams)
}

// Recorder records provider calls and checks budgets. It holds no state
// beyond its parameters and is safe for concurrent use.
type Recorder struct {
	st     Store
	now    func() time.Time
	loc    *time.Location
	onCall func(context.Context, store.RecordLLMCallParams)
}

// New returns a Recorder over p.Store.
func New(p Params) *Recorder {
	r := &Recorder{st: p.Store, now: p.Now, loc: p.Location, onCall: p.OnCall}
	if r.now == nil {
		r.now = time.Now
	}
	if r.loc == nil {
		r.loc = time.UTC
	}
	return r
}

// Day is the ledger day of t (YYYY-MM-DD) in the Recorder's time zone.
func (r *Recorder) Day(t time.Time) string { return t.In(r.loc).Format(time.DateOnly) }

// Today is the ledger day of the Recorder's clock.
func (r *Recorder) Today() string { return r.Day(r.now()) }

// CallParams describe one provider call. They carry no content.
type CallParams struct {
	RunID     string // the correlation id; "" outside runs
	Source    string // the caller, e.g. "chat", "cli"
	Operation string // e.g. "chatTurn"
	Username  string // the acting backend user
	// RequestedConfiguration is what the caller asked for; "" means the
	// entry's own configuration.
	RequestedConfiguration string
	// Entry is the configuration, model and provider the call went to.
	Entry agentconfig.Entry
	// FallbackIndex is the entry's place in the chain, 0 for the primary.
	FallbackIndex int
	// ServedModel is the model the provider says answered; "" means the
	// entry's model id.
	ServedModel string
	// Usage is what the provider reported; nil when it reported nothing.
	Usage *llm.Usage
	// Latency is the call's wall time, retries included.
	Latency time.Duration
	// Attempts is the number of HTTP attempts; 0 takes it from Err (an
	// *llm.Error) or counts 1.
	Attempts int
	// Err is the call's failure, nil on success. Only its class is kept.
	Err error
}

// ErrorClass is the class telemetry keeps for err: an *llm.Error's class,
// "cancelled" or "timeout" for a context error, else "unknown"; "" for nil.
func ErrorClass(err error) string {
	var le *llm.Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &le):
		return string(le.Class)
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	return string(llm.FailUnknown)
}

// Cost is what usage costs on model, and whether it is known: a model
// without prices has an unknown cost.
func Cost(model agentconfig.Model, usage llm.Usage) (agentconfig.USD, bool) {
	if model.Prices == nil {
		return 0, false
	}
	return model.Prices.Cost(usage), true
}

// RecordCall stores one call and adds it to today's ledger row (keyed by
// day, user, configuration, provider, model and source) in one
// transaction. Tokens come from Usage, the cost from the model's prices;
// either is left unmeasured (nil) when unknown.
func (r *Recorder) RecordCall(ctx context.Context, p CallParams) (store.LLMCall, error) {
	e := p.Entry
	rp := store.RecordLLMCallParams{
		RunID: p.RunID, Source: p.Source, Operation: p.Operation, Username: p.Username,
		RequestedConfiguration: p.RequestedConfiguration, Configuration: e.Configuration.Identifier,
		FallbackIndex: p.FallbackIndex, Provider: e.Provider.Identifier, Model: e.Model.Identifier,
		ModelID: p.ServedModel, Success: p.Err == nil, ErrorClass: ErrorClass(p.Err),
		Latency: max(p.Latency, 0), Attempts: p.Attempts, Day: r.Today(),
	}
	if rp.RequestedConfiguration == "" {
		rp.RequestedConfiguration = rp.Configuration
	}
	if rp.ModelID == "" {
		rp.ModelID = e.Model.ModelID
	}
	if rp.Attempts == 0 {
		rp.Attempts = 1
		var le *llm.Error
		if errors.As(p.Err, &le) && le.Attempts > 0 {
			rp.Attempts = le.Attempts
		}
	}
	if p.Usage != nil {
		in, out := int64(max(p.Usage.InputTokens, 0)), int64(max(p.Usage.OutputTokens, 0))
		rp.InputTokens, rp.OutputTokens = &in, &out
		if cost, ok := Cost(e.Model, *p.Usage); ok {
			c := int64(cost)
			rp.Cost = &c
		}
	} else if e.Model.Prices != nil && p.Err != nil {
		// A failed call without usage cost nothing that was billed.
		zero := int64(0)
		rp.Cost = &zero
	}
	if r.onCall != nil {
		r.onCall(ctx, rp)
	}
	return r.st.RecordLLMCall(ctx, rp)
}

// UsageParams select the ledger for Usage.
type UsageParams struct {
	By store.UsageKey
	// Since and Until bound the days (inclusive) by the Recorder's time
	// zone; zero leaves that end open.
	Since, Until time.Time
}

// Usage sums the ledger by one key.
func (r *Recorder) Usage(ctx context.Context, p UsageParams) ([]store.UsageRow, error) {
	q := store.UsageParams{By: p.By}
	if !p.Since.IsZero() {
		q.From = r.Day(p.Since)
	}
	if !p.Until.IsZero() {
		q.To = r.Day(p.Until)
	}
	return r.st.Usage(ctx, q)
}

// ErrBudgetExhausted is matched (errors.Is) by every *BudgetError.
var ErrBudgetExhausted = errors.New("budget exhausted")

// Scope is whose budget ran out.
type Scope string

const (
	ScopeUser          Scope = "user"
	ScopeConfiguration Scope = "configuration"
)

// Period is the budget period.
type Period string

const (
	PeriodDay   Period = "day"
	PeriodMonth Period = "month"
)

// Metric is what a budget limits.
type Metric string

const (
	MetricRequests Metric = "requests"
	MetricTokens   Metric = "tokens"
	MetricCost     Metric = "cost"
)

// BudgetError says which budget a call would exceed. The loop maps it to
// the termination reason budget_exhausted.
type BudgetError struct {
	Scope   Scope
	Subject string // the username or configuration identifier
	Period  Period
	Metric  Metric
	// Limit, Used and Planned are counts, or picodollars for MetricCost.
	Limit, Used, Planned int64
}

func (e *BudgetError) Error() string {
	period := "daily"
	if e.Period == PeriodMonth {
		period = "monthly"
	}
	amount := func(v int64) string {
		if e.Metric == MetricCost {
			return agentconfig.USD(v).String()
		}
		return fmt.Sprint(v)
	}
	return fmt.Sprintf("the %s %s budget of %s %q is exhausted: %s used of %s, this call needs %s",
		period, e.Metric, e.Scope, e.Subject, amount(e.Used), amount(e.Limit), amount(e.Planned))
}

// Is makes a BudgetError match ErrBudgetExhausted.
func (e *BudgetError) Is(target error) bool { return target == ErrBudgetExhausted }

// CheckBudgetParams describe the call about to be made.
type CheckBudgetParams struct {
	// Username is the acting backend user, whose usage UserBudget limits;
	// "" skips the user budget.
	Username string
	// UserBudget is the user's active budget as resolved with the
	// configuration (agentconfig.Resolved.UserLimits); the zero Budget
	// limits nothing.
	UserBudget agentconfig.Budget
	// Configuration is the identifier of the configuration the caller
	// asked for (the primary), and Budget its limits. Its limits apply to
	// the usage recorded under that configuration.
	Configuration string
	Budget        agentconfig.Budget
	// PlannedTokens and PlannedCost are this call's expected share; the
	// call counts as one request and at least one token either way.
	PlannedTokens int64
	PlannedCost   agentconfig.USD
}

// CheckBudget refuses a call that would exceed a budget, with a
// *BudgetError (errors.Is ErrBudgetExhausted). It checks the user's
// budget, then the configuration's; in each the day before the month, and
// in each period requests, tokens, then cost; the first to trip is
// reported. A limit of 0 is unlimited; a user without an active budget
// record has none (its UserBudget is zero). The check counts this call:
// it trips when the limit is already used up, or when what is used plus
// this call's share exceeds it. The limits are the caller's; only the
// usage is read here. Store errors are returned as they are. Two concurrent runs may both
// pass a check that only one of them fits.
func (r *Recorder) CheckBudget(ctx context.Context, p CheckBudgetParams) error {
	today := r.now().In(r.loc)
	if p.Username != "" {
		if err := r.check(ctx, today, ScopeUser, p.Username, p.UserBudget, p); err != nil {
			return err
		}
	}
	if p.Configuration != "" {
		return r.check(ctx, today, ScopeConfiguration, p.Configuration, p.Budget, p)
	}
	return nil
}

func (r *Recorder) check(ctx context.Context, today time.Time, scope Scope, subject string, b agentconfig.Budget, p CheckBudgetParams) error {
	if b.Unlimited() {
		return nil
	}
	monthStart := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, r.loc)
	periods := []struct {
		period   Period
		from     time.Time
		requests int64
		tokens   int64
		cost     agentconfig.USD
	}{
		{PeriodDay, today, b.RequestsPerDay, b.TokensPerDay, b.CostPerDay},
		{PeriodMonth, monthStart, b.RequestsPerMonth, b.TokensPerMonth, b.CostPerMonth},
	}
	planned := max(p.PlannedTokens, 1)
	for _, per := range periods {
		if per.requests == 0 && per.tokens == 0 && per.cost == 0 {
			continue
		}
		q := store.UsageTotalsParams{From: per.from.Format(time.DateOnly), To: today.Format(time.DateOnly)}
		if scope == ScopeUser {
			q.Username = subject
		} else {
			q.Configuration = subject
		}
		used, err := r.st.UsageTotals(ctx, q)
		if err != nil {
			return err
		}
		fail := func(m Metric, limit, used, planned int64) error {
			return &BudgetError{Scope: scope, Subject: subject, Period: per.period, Metric: m, Limit: limit, Used: used, Planned: planned}
		}
		if per.requests > 0 && used.Requests+1 > per.requests {
			return fail(MetricRequests, per.requests, used.Requests, 1)
		}
		if per.tokens > 0 && (used.Tokens() >= per.tokens || used.Tokens()+planned > per.tokens) {
			return fail(MetricTokens, per.tokens, used.Tokens(), planned)
		}
		if c := int64(per.cost); c > 0 && (used.Cost >= c || used.Cost+int64(p.PlannedCost) > c) {
			return fail(MetricCost, c, used.Cost, int64(p.PlannedCost))
		}
	}
	return nil
}
