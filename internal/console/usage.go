package console

import (
	"bytes"
	"errors"
	"net/http"
	"strconv"

	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/telemetry"
)

// usageKeys are the charts of the usage page, in order.
var usageKeys = []store.UsageKey{store.UsageByDay, store.UsageByUser, store.UsageByConfiguration, store.UsageByProvider, store.UsageByModel}

// chart is one server-rendered SVG bar chart with its table alternative.
type chart struct {
	Key    store.UsageKey
	Report telemetry.Report
	Bars   []chartBar
	// Height is the SVG's height in user units.
	Height int
}

// chartBar is one bar: its label, its length (0–chartWidth) and the
// value written beside it.
type chartBar struct {
	Label string
	Width int
	Value string
	Y     int
}

// Chart geometry, in SVG user units.
const (
	chartWidth = 360
	chartLabel = 170
	chartRow   = 26
)

type usageView struct {
	Since, Until string
	// Metric is what the bars measure: cost or tokens.
	Metric  string
	Charts  []chart
	Total   store.UsageTotal
	Budgets []telemetry.BudgetBar
}

// usageQuery reads ?since=, ?until= and ?by= as the API does.
func (c *Console) usageQuery(q *req, by store.UsageKey) (telemetry.ReportParams, error) {
	v := q.r.URL.Query()
	now := c.p.Now()
	p := telemetry.ReportParams{By: by}
	var err error
	if p.Since, err = telemetry.ParseDay("since", v.Get("since"), now); err != nil {
		return p, &pageError{http.StatusBadRequest, "usage.badDay"}
	}
	if p.Until, err = telemetry.ParseDay("until", v.Get("until"), now); err != nil {
		return p, &pageError{http.StatusBadRequest, "usage.badDay"}
	}
	return p, nil
}

func periodError(err error) error {
	var pe *telemetry.PeriodError
	if errors.As(err, &pe) {
		return &pageError{http.StatusBadRequest, "usage.badPeriod"}
	}
	return err
}

// usagePage shows cost and tokens by day, user, configuration, provider
// and model as charts and tables, and the budget bars.
func (c *Console) usagePage(q *req) error {
	ops := c.ops()
	if ops.Usage == nil {
		return notFound()
	}
	ctx := q.r.Context()
	v := usageView{Metric: "cost"}
	if q.r.URL.Query().Get("metric") == "tokens" {
		v.Metric = "tokens"
	}
	for _, key := range usageKeys {
		p, err := c.usageQuery(q, key)
		if err != nil {
			return err
		}
		rep, err := ops.Usage.Report(ctx, p)
		if err != nil {
			return periodError(err)
		}
		v.Since, v.Until, v.Total = rep.Since, rep.Until, rep.Total
		v.Charts = append(v.Charts, chartOf(q, key, rep, v.Metric))
	}
	if ops.Configs != nil {
		snap, err := ops.Configs.Snapshot(ctx)
		if err != nil {
			return err
		}
		if v.Budgets, err = ops.Usage.Budgets(ctx, telemetry.BudgetsParams{Configurations: snap.Configurations, Users: snap.Budgets}); err != nil {
			return err
		}
	}
	c.render(q, http.StatusOK, "usage.html", &pageData{Title: q.t("usage.title"), Data: v})
	return nil
}

// chartOf lays out the bars of one report, scaled to its largest value.
func chartOf(q *req, key store.UsageKey, rep telemetry.Report, metric string) chart {
	ch := chart{Key: key, Report: rep}
	value := func(u store.UsageTotal) int64 {
		if metric == "tokens" {
			return u.Tokens()
		}
		return u.Cost
	}
	var top int64
	for _, r := range rep.Rows {
		top = max(top, value(r.UsageTotal))
	}
	for i, r := range rep.Rows {
		b := chartBar{Label: r.Key, Y: i * chartRow}
		if b.Label == "" {
			b.Label = q.t("usage.none")
		}
		if top > 0 {
			b.Width = int(value(r.UsageTotal) * chartWidth / top)
		}
		b.Value = usageAmount(metric, r.UsageTotal)
		ch.Bars = append(ch.Bars, b)
	}
	ch.Height = max(len(ch.Bars)*chartRow, chartRow)
	return ch
}

// usageAmount is a total's cost or tokens as the page writes it.
func usageAmount(metric string, u store.UsageTotal) string {
	if metric == "tokens" {
		return strconv.FormatInt(u.Tokens(), 10)
	}
	s := agentconfig.USD(u.Cost).String()
	if u.Unpriced > 0 {
		s += " (+" + strconv.FormatInt(u.Unpriced, 10) + ")"
	}
	return s
}

// usageCSV is the report of one key as a CSV download.
func (c *Console) usageCSV(q *req) error {
	ops := c.ops()
	if ops.Usage == nil {
		return notFound()
	}
	by, ok := telemetry.ParseKey(q.r.URL.Query().Get("by"))
	if !ok {
		by = store.UsageByDay
	}
	p, err := c.usageQuery(q, by)
	if err != nil {
		return err
	}
	rep, err := ops.Usage.Report(q.r.Context(), p)
	if err != nil {
		return periodError(err)
	}
	var buf bytes.Buffer
	if err := telemetry.WriteCSV(&buf, rep); err != nil {
		return err
	}
	q.w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	q.w.Header().Set("Content-Disposition", `attachment; filename="t3agent-usage-`+rep.By+`-`+rep.Since+`.csv"`)
	_, _ = q.w.Write(buf.Bytes())
	return nil
}

// BudgetAmount is a bar's limit or use as the page writes it.
func budgetAmount(m telemetry.Metric, v int64) string {
	if m == telemetry.MetricCost {
		return agentconfig.USD(v).String()
	}
	return strconv.FormatInt(v, 10)
}
