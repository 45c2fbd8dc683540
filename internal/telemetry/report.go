package telemetry

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/store"
)

// usageKeys are the names a readout takes for a ledger key; "config" is
// the command line's short form.
var usageKeys = map[string]store.UsageKey{
	"day": store.UsageByDay, "user": store.UsageByUser, "config": store.UsageByConfiguration,
	"configuration": store.UsageByConfiguration, "provider": store.UsageByProvider,
	"model": store.UsageByModel, "source": store.UsageBySource,
}

// ParseKey reads the name of a ledger key: day, user, config(uration),
// provider, model or source.
func ParseKey(v string) (store.UsageKey, bool) {
	k, ok := usageKeys[v]
	return k, ok
}

var daysAgo = regexp.MustCompile(`^(\d{1,4})d$`)

// ParseDay reads YYYY-MM-DD, "today", or Nd (the last N days, today
// included), relative to now; "" is the zero time. what names the value
// in the error sentence.
func ParseDay(what, v string, now time.Time) (time.Time, error) {
	switch {
	case v == "":
		return time.Time{}, nil
	case v == "today":
		return now, nil
	}
	if m := daysAgo.FindStringSubmatch(v); m != nil {
		n, _ := strconv.Atoi(m[1])
		if n < 1 {
			return time.Time{}, fmt.Errorf("%s: %q counts no days; use 1d for today", what, v)
		}
		return now.AddDate(0, 0, -(n - 1)), nil
	}
	t, err := time.Parse(time.DateOnly, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %q is not a day (YYYY-MM-DD), today, or a number of days such as 7d", what, v)
	}
	return t, nil
}

// ReportParams select a Report.
type ReportParams struct {
	By store.UsageKey
	// Since and Until bound the days (inclusive); a zero Since is the
	// first day of the current month, a zero Until leaves the end open.
	Since, Until time.Time
}

// Report is the ledger summed by one key over a period: what `t3agent
// usage`, /api/v1/usage and the Usage page show.
type Report struct {
	By    string           `json:"by"`
	Since string           `json:"since"`
	Until string           `json:"until,omitempty"`
	Rows  []store.UsageRow `json:"rows"`
	Total store.UsageTotal `json:"total"`
}

// PeriodError is a period that ends before it starts.
type PeriodError struct{ From, To string }

func (e *PeriodError) Error() string {
	return fmt.Sprintf("the period ends (%s) before it starts (%s)", e.To, e.From)
}

// Report sums the ledger by p.By over the period, with the total.
func (r *Recorder) Report(ctx context.Context, p ReportParams) (Report, error) {
	if p.Since.IsZero() {
		now := r.now().In(r.loc)
		p.Since = time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, r.loc)
	}
	if !p.Until.IsZero() && r.Day(p.Until) < r.Day(p.Since) {
		return Report{}, &PeriodError{From: r.Day(p.Since), To: r.Day(p.Until)}
	}
	rows, err := r.Usage(ctx, UsageParams(p))
	if err != nil {
		return Report{}, err
	}
	rep := Report{By: string(p.By), Since: r.Day(p.Since), Rows: rows}
	if !p.Until.IsZero() {
		rep.Until = r.Day(p.Until)
	}
	for _, row := range rows {
		t := &rep.Total
		t.Requests += row.Requests
		t.Errors += row.Errors
		t.InputTokens += row.InputTokens
		t.OutputTokens += row.OutputTokens
		t.Cost += row.Cost
		t.Unpriced += row.Unpriced
	}
	return rep, nil
}

// WriteCSV writes a report as CSV: a header, one line per row, the total
// last; cost in dollars with up to 12 decimals.
func WriteCSV(w io.Writer, rep Report) error {
	cw := csv.NewWriter(w)
	line := func(key string, u store.UsageTotal) []string {
		return []string{key, strconv.FormatInt(u.Requests, 10), strconv.FormatInt(u.Errors, 10),
			strconv.FormatInt(u.InputTokens, 10), strconv.FormatInt(u.OutputTokens, 10),
			strings.TrimPrefix(agentconfig.USD(u.Cost).String(), "$"), strconv.FormatInt(u.Unpriced, 10)}
	}
	recs := [][]string{{rep.By, "requests", "errors", "input_tokens", "output_tokens", "cost_usd", "unpriced_requests"}}
	for _, row := range rep.Rows {
		recs = append(recs, line(csvSafe(row.Key), row.UsageTotal))
	}
	recs = append(recs, line("total", rep.Total))
	return cw.WriteAll(recs)
}

// csvSafe keeps a key a spreadsheet would read as a formula (a user or
// configuration name starting with = + - @) a plain text.
func csvSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// BudgetBar is one limit of a budget and what is used of it in its
// current period.
type BudgetBar struct {
	Scope   Scope  `json:"scope"`
	Subject string `json:"subject"`
	Period  Period `json:"period"`
	Metric  Metric `json:"metric"`
	// Limit and Used are counts, or picodollars for MetricCost.
	Limit int64 `json:"limit"`
	Used  int64 `json:"used"`
}

// Percent is how much of the limit is used, 0–100 (capped; a spent
// budget shows as full).
func (b BudgetBar) Percent() int {
	if b.Limit <= 0 {
		return 0
	}
	return int(min(b.Used*100/b.Limit, 100))
}

// Exhausted reports whether nothing is left.
func (b BudgetBar) Exhausted() bool { return b.Used >= b.Limit }

// BudgetsParams are the budgets to read: the configurations' and the
// users' as configured (inactive ones are left out).
type BudgetsParams struct {
	Configurations []agentconfig.Configuration
	Users          []agentconfig.UserBudget
}

// Budgets is every limit of the active budgets with what is used of it
// today and this month, users first, then configurations, each by name.
func (r *Recorder) Budgets(ctx context.Context, p BudgetsParams) ([]BudgetBar, error) {
	today := r.now().In(r.loc)
	day := today.Format(time.DateOnly)
	month := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, r.loc).Format(time.DateOnly)
	var out []BudgetBar
	add := func(scope Scope, subject string, b agentconfig.Budget) error {
		for _, per := range []struct {
			period          Period
			from            string
			requests, token int64
			cost            agentconfig.USD
		}{
			{PeriodDay, day, b.RequestsPerDay, b.TokensPerDay, b.CostPerDay},
			{PeriodMonth, month, b.RequestsPerMonth, b.TokensPerMonth, b.CostPerMonth},
		} {
			if per.requests == 0 && per.token == 0 && per.cost == 0 {
				continue
			}
			q := store.UsageTotalsParams{From: per.from, To: day}
			if scope == ScopeUser {
				q.Username = subject
			} else {
				q.Configuration = subject
			}
			used, err := r.st.UsageTotals(ctx, q)
			if err != nil {
				return err
			}
			bar := BudgetBar{Scope: scope, Subject: subject, Period: per.period}
			if per.requests > 0 {
				bar.Metric, bar.Limit, bar.Used = MetricRequests, per.requests, used.Requests
				out = append(out, bar)
			}
			if per.token > 0 {
				bar.Metric, bar.Limit, bar.Used = MetricTokens, per.token, used.Tokens()
				out = append(out, bar)
			}
			if per.cost > 0 {
				bar.Metric, bar.Limit, bar.Used = MetricCost, int64(per.cost), used.Cost
				out = append(out, bar)
			}
		}
		return nil
	}
	for _, u := range p.Users {
		if u.Active {
			if err := add(ScopeUser, u.Username, u.Budget); err != nil {
				return nil, err
			}
		}
	}
	for _, c := range p.Configurations {
		if c.Active {
			if err := add(ScopeConfiguration, c.Identifier, c.Budget); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
