package web

import (
	"bytes"
	"errors"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/t3agent/t3agent/internal/telemetry"
)

// usageJSON is the usage report with the budget bars.
type usageJSON struct {
	telemetry.Report
	Budgets []telemetry.BudgetBar `json:"budgets"`
}

// usageParams reads ?by= (default day), ?since= and ?until= (YYYY-MM-DD,
// today or Nd; since defaults to the first of the month).
func usageParams(r *http.Request, now func() time.Time) (telemetry.ReportParams, error) {
	q := r.URL.Query()
	by := q.Get("by")
	if by == "" {
		by = "day"
	}
	key, ok := telemetry.ParseKey(by)
	if !ok {
		return telemetry.ReportParams{}, badRequest("The query parameter by must be day, user, configuration, provider, model or source.")
	}
	p := telemetry.ReportParams{By: key}
	var err error
	if p.Since, err = telemetry.ParseDay("since", q.Get("since"), now()); err != nil {
		return p, badRequest("The query parameter " + err.Error() + ".")
	}
	if p.Until, err = telemetry.ParseDay("until", q.Get("until"), now()); err != nil {
		return p, badRequest("The query parameter " + err.Error() + ".")
	}
	return p, nil
}

// wantsCSV: ?format=csv, or an Accept header that prefers text/csv.
func wantsCSV(r *http.Request) (bool, error) {
	switch f := r.URL.Query().Get("format"); f {
	case "csv":
		return true, nil
	case "json":
		return false, nil
	case "":
	default:
		return false, badRequest("The query parameter format must be json or csv.")
	}
	for part := range strings.SplitSeq(r.Header.Get("Accept"), ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "text/csv":
			return true, nil
		case "application/json", "*/*":
			return false, nil
		}
	}
	return false, nil
}

// usageRoute answers GET /api/v1/usage: the ledger summed by one key
// with the budget bars, as JSON or CSV (admins only).
func (s *Server) usageRoute(w http.ResponseWriter, r *http.Request, c *caller) {
	if err := requireAdmin(c); err != nil {
		s.fail(w, r, err)
		return
	}
	ops := s.ops()
	if ops.Usage == nil {
		s.fail(w, r, unavailable("The usage ledger"))
		return
	}
	p, err := usageParams(r, s.api.Now)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	csv, err := wantsCSV(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rep, err := ops.Usage.Report(r.Context(), p)
	if err != nil {
		s.fail(w, r, badRequestIfPeriod(err))
		return
	}
	if csv {
		var buf bytes.Buffer
		if err := telemetry.WriteCSV(&buf, rep); err != nil {
			s.fail(w, r, err)
			return
		}
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		w.Header().Set("Content-Disposition", `attachment; filename="t3agent-usage-`+rep.By+`-`+rep.Since+`.csv"`)
		_, _ = w.Write(buf.Bytes())
		return
	}
	out := usageJSON{Report: rep, Budgets: []telemetry.BudgetBar{}}
	if ops.Configs != nil {
		snap, err := ops.Configs.Snapshot(r.Context())
		if err != nil {
			s.fail(w, r, err)
			return
		}
		bars, err := ops.Usage.Budgets(r.Context(), telemetry.BudgetsParams{Configurations: snap.Configurations, Users: snap.Budgets})
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if bars != nil {
			out.Budgets = bars
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// badRequestIfPeriod turns a period that ends before it starts into a
// 400; other errors stay.
func badRequestIfPeriod(err error) error {
	var pe *telemetry.PeriodError
	if errors.As(err, &pe) {
		return badRequest("The query parameter until is before since.")
	}
	return err
}
