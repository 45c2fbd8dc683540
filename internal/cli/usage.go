package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/secret"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/telemetry"
)

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
			key, ok := telemetry.ParseKey(by)
			if !ok {
				return fmt.Errorf("--by: %q is not user, config, source, model, provider or day", by)
			}
			now := time.Now().UTC()
			from, err := telemetry.ParseDay("--since", since, now)
			if err != nil {
				return err
			}
			to, err := telemetry.ParseDay("--until", until, now)
			if err != nil {
				return err
			}
			if !to.IsZero() && to.Before(from) {
				return errors.New("--until is before --since")
			}
			return a.withAgentStore(cmd.Context(), func(st store.Store, _ *secret.Keyring) error {
				rec := telemetry.New(telemetry.Params{Store: st})
				rep, err := rec.Report(cmd.Context(), telemetry.ReportParams{By: key, Since: from, Until: to})
				if err != nil {
					return err
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

func printUsage(w io.Writer, rep telemetry.Report) error {
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
