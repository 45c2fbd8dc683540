package cli

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/secret"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/telemetry"
)

// usageKeys maps --by to the ledger key; "config" is the short form the
// issue names.
var usageKeys = map[string]store.UsageKey{
	"day": store.UsageByDay, "user": store.UsageByUser, "config": store.UsageByConfiguration,
	"configuration": store.UsageByConfiguration, "provider": store.UsageByProvider,
	"model": store.UsageByModel, "source": store.UsageBySource,
}

var daysAgo = regexp.MustCompile(`^(\d{1,4})d$`)

// parseDay reads YYYY-MM-DD, "today", or Nd (the last N days, today
// included), relative to now.
func parseDay(flag, v string, now time.Time) (time.Time, error) {
	switch {
	case v == "":
		return time.Time{}, nil
	case v == "today":
		return now, nil
	}
	if m := daysAgo.FindStringSubmatch(v); m != nil {
		n, _ := strconv.Atoi(m[1])
		if n < 1 {
			return time.Time{}, fmt.Errorf("%s: %q counts no days; use 1d for today", flag, v)
		}
		return now.AddDate(0, 0, -(n - 1)), nil
	}
	t, err := time.Parse(time.DateOnly, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %q is not a day (YYYY-MM-DD), today, or a number of days such as 7d", flag, v)
	}
	return t, nil
}

// usageReport is the --json form.
type usageReport struct {
	By    string           `json:"by"`
	Since string           `json:"since,omitempty"`
	Until string           `json:"until,omitempty"`
	Rows  []store.UsageRow `json:"rows"`
	Total store.UsageTotal `json:"total"`
}

func (a *app) usageCommand() *cobra.Command {
	var by, since, until string
	cmd := &cobra.Command{
		Use:   "usage [--by user|config|source|model|provider|day] [--since DAY] [--until DAY]",
		Short: "Sum LLM usage (requests, errors, tokens, cost) from the daily ledger",
		Long: "Sum the daily usage ledger by one key. Days are YYYY-MM-DD (UTC), today, or Nd for the last " +
			"N days; --since defaults to the first day of this month. Costs come from the models' prices; " +
			"calls to models without prices are counted as unpriced.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			key, ok := usageKeys[by]
			if !ok {
				return fmt.Errorf("--by: %q is not user, config, source, model, provider or day", by)
			}
			now := time.Now().UTC()
			if since == "" {
				since = now.Format("2006-01") + "-01"
			}
			from, err := parseDay("--since", since, now)
			if err != nil {
				return err
			}
			to, err := parseDay("--until", until, now)
			if err != nil {
				return err
			}
			if !to.IsZero() && to.Before(from) {
				return errors.New("--until is before --since")
			}
			return a.withAgentStore(cmd.Context(), func(st store.Store, _ *secret.Keyring) error {
				rec := telemetry.New(telemetry.Params{Store: st})
				rows, err := rec.Usage(cmd.Context(), telemetry.UsageParams{By: key, Since: from, Until: to})
				if err != nil {
					return err
				}
				rep := usageReport{By: string(key), Since: rec.Day(from), Rows: rows}
				if !to.IsZero() {
					rep.Until = rec.Day(to)
				}
				for _, r := range rows {
					t := &rep.Total
					t.Requests += r.Requests
					t.Errors += r.Errors
					t.InputTokens += r.InputTokens
					t.OutputTokens += r.OutputTokens
					t.Cost += r.Cost
					t.Unpriced += r.Unpriced
				}
				if a.jsonOut {
					return writeJSON(a.env.Stdout, rep)
				}
				return printUsage(a.env.Stdout, rep)
			})
		},
	}
	cmd.Flags().StringVar(&by, "by", "day", "group by user, config, source, model, provider or day")
	cmd.Flags().StringVar(&since, "since", "", "first day (YYYY-MM-DD, today or Nd; default: the first of this month)")
	cmd.Flags().StringVar(&until, "until", "", "last day (YYYY-MM-DD or today; default: open)")
	return cmd
}

func costText(u store.UsageTotal) string {
	s := agentconfig.USD(u.Cost).String()
	if u.Unpriced > 0 {
		s += fmt.Sprintf(" (+%d unpriced)", u.Unpriced)
	}
	return s
}

func printUsage(w io.Writer, rep usageReport) error {
	period := "since " + rep.Since
	if rep.Until != "" {
		period = rep.Since + " to " + rep.Until
	}
	if len(rep.Rows) == 0 {
		_, err := fmt.Fprintf(w, "No LLM usage %s.\n", period)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\tREQUESTS\tERRORS\tINPUT TOKENS\tOUTPUT TOKENS\tCOST\t\n", strings.ToUpper(rep.By))
	line := func(key string, u store.UsageTotal) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t\n", key, u.Requests, u.Errors, u.InputTokens, u.OutputTokens, costText(u))
	}
	for _, r := range rep.Rows {
		key := r.Key
		if key == "" {
			key = "(none)"
		}
		line(key, r.UsageTotal)
	}
	line("total", rep.Total)
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "Usage %s (UTC days).\n", period)
	return err
}
