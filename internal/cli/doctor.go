package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/t3agent/t3agent/internal/doctor"
)

func (a *app) doctorCommand() *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the installation and print one line per finding, with its fix",
		Long: "Check the installation: the site database (reachable, and read-only for t3agent's user), the TCA " +
			"source, the project root and var/log, the own store (reachable, schema current), the master key and " +
			"the sealed credentials, every provider and MCP server (reachable, logged in), the databases' clocks, " +
			"and whether the HTTP listener is exposed without TLS. Nothing is changed.\n\n" +
			"Exit code: 0 when every finding is ok, 1 when the worst is a warning, 2 when there is an error. " +
			"--json prints {\"findings\": [{check, severity, message, fix}]} for monitoring.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var rep doctor.Report
			cfg, err := a.readConfig()
			if err != nil {
				fix := "correct the configuration key the message names (docs/configuration.md)"
				if errors.Is(err, errNoConfig) {
					fix = "run doctor where t3agent.yaml is, or pass --config FILE"
				}
				rep.Findings = append(rep.Findings, doctor.Finding{Check: "config", Severity: doctor.Error,
					Message: strings.TrimSuffix(err.Error(), ".") + ".", Fix: fix})
			} else {
				export := cfg.Site.TCA
				if export == "" {
					if _, err := os.Stat(importedTCAPath(cfg)); err == nil {
						export = importedTCAPath(cfg)
					}
				}
				rep = doctor.Run(cmd.Context(), doctor.Params{
					Config: cfg, TCAExport: export, LookupEnv: a.lookupEnv, Version: Version(), Timeout: timeout, Logger: a.logger,
				})
			}
			if err := a.printFindings(rep); err != nil {
				return err
			}
			if code := rep.ExitCode(); code != 0 {
				return ExitError{Code: code}
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", doctor.DefaultTimeout, "how long each networked check may take")
	return cmd
}

func (a *app) printFindings(rep doctor.Report) error {
	if a.jsonOut {
		return writeJSON(a.env.Stdout, rep)
	}
	for _, f := range rep.Findings {
		label := map[doctor.Severity]string{doctor.OK: "ok", doctor.Warning: "WARN", doctor.Error: "ERROR"}[f.Severity]
		line := fmt.Sprintf("%-5s %-22s %s", label, f.Check, f.Message)
		if f.Fix != "" {
			line += " Fix: " + f.Fix + "."
		}
		fmt.Fprintln(a.env.Stdout, line)
	}
	fmt.Fprintf(a.env.Stdout, "%d checks: %s.\n", len(rep.Findings), rep.Worst())
	return nil
}
