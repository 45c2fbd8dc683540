package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/config"
	"github.com/t3agent/t3agent/internal/guardrail"
	"github.com/t3agent/t3agent/internal/secret"
	"github.com/t3agent/t3agent/internal/store"
)

// withStore loads the configuration and opens only t3agent's own store
// (and the keyring, nil without a master key): the configuration model
// and the usage ledger need neither the site nor its TCA.
func (a *app) withAgentStore(ctx context.Context, fn func(st store.Store, keys *secret.Keyring) error) error {
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	keys, err := cfg.Keyring()
	if errors.Is(err, config.ErrNoMasterKey) {
		keys, err = nil, nil
	}
	if err != nil {
		return err
	}
	st, err := store.Open(ctx, cfg.Store.DSN, store.OpenParams{Logger: a.logger})
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(st, keys)
}

func (a *app) agentConfigs(st store.Store, keys *secret.Keyring) *agentconfig.Service {
	return agentconfig.New(agentconfig.Params{Store: st, Keyring: keys, LookupEnv: a.lookupEnv})
}

func (a *app) applyCommand() *cobra.Command {
	var file string
	var prune, dryRun bool
	cmd := &cobra.Command{
		Use:   "apply -f FILE.yaml [--prune] [--dry-run]",
		Short: "Create or update providers, models, configurations, tasks and budgets from a YAML file",
		Long: "Make the agent configuration match FILE: records are created or updated by identifier, and " +
			"applying the same file again changes nothing. Records the file does not declare are kept, " +
			"unless --prune is given. A file with any problem is refused whole. API keys are env:NAME " +
			"(read when used) or the key itself (sealed with the master key). -f - reads stdin. " +
			"See docs/configuration.md.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return errors.New("apply needs -f FILE.yaml (or -f - for stdin)")
			}
			data, err := a.readInput(cmd, file)
			if err != nil {
				return err
			}
			doc, err := agentconfig.ParseDocument(data)
			if err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			by := "cli"
			if a.as != "" {
				by = a.as
			}
			return a.withAgentStore(cmd.Context(), func(st store.Store, keys *secret.Keyring) error {
				rep, err := a.agentConfigs(st, keys).Apply(cmd.Context(), agentconfig.ApplyParams{
					Document: doc, Prune: prune, DryRun: dryRun, By: by,
				})
				if err != nil {
					return fmt.Errorf("%s: %w", file, err)
				}
				if a.jsonOut {
					return writeJSON(a.env.Stdout, rep)
				}
				return printApplyReport(a.env.Stdout, rep)
			})
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the YAML file to apply (- for stdin)")
	cmd.Flags().BoolVar(&prune, "prune", false, "delete every record the file does not declare")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "check and report, write nothing")
	return cmd
}

func (a *app) readInput(cmd *cobra.Command, file string) ([]byte, error) {
	if file == "-" {
		b, err := io.ReadAll(cmd.InOrStdin())
		if err != nil {
			return nil, fmt.Errorf("cannot read stdin: %w", err)
		}
		return b, nil
	}
	b, err := os.ReadFile(a.path(file))
	if err != nil {
		return nil, fmt.Errorf("%s cannot be read: %w", file, errors.Unwrap(err))
	}
	return b, nil
}

func printApplyReport(w io.Writer, rep *agentconfig.ApplyReport) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, c := range rep.Changes {
		action := string(c.Action)
		if len(c.Fields) > 0 {
			action += " (" + strings.Join(c.Fields, ", ") + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Kind, c.Identifier, action)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	summary := fmt.Sprintf("%d created, %d updated, %d unchanged, %d deleted.",
		rep.Count(agentconfig.ActionCreated), rep.Count(agentconfig.ActionUpdated),
		rep.Count(agentconfig.ActionUnchanged), rep.Count(agentconfig.ActionDeleted))
	if rep.DryRun {
		summary += " Dry run: nothing was written."
	}
	_, err := fmt.Fprintln(w, summary)
	return err
}

func (a *app) configCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "List and show the agent configuration (providers, models, configurations, tasks, budgets)",
		Long: "List and show the agent configuration that `t3agent apply` manages. Not to be confused " +
			"with the global --config flag, which names t3agent's own configuration file.",
	}
	cmd.AddCommand(a.configListCommand(), a.configShowCommand())
	return cmd
}

func (a *app) configListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List every provider, model, configuration, task and budget",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withAgentStore(cmd.Context(), func(st store.Store, keys *secret.Keyring) error {
				snap, err := a.agentConfigs(st, keys).Snapshot(cmd.Context())
				if err != nil {
					return err
				}
				if a.jsonOut {
					return writeJSON(a.env.Stdout, snap)
				}
				return printSnapshot(a.env.Stdout, snap)
			})
		},
	}
}

func yesOrNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func joinOrDash(s []string) string { return dashIfEmpty(strings.Join(s, ", ")) }

func printSnapshot(w io.Writer, s *agentconfig.Snapshot) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tADAPTER\tZONE\tENDPOINT\tKEY\tACTIVE")
	for _, p := range s.Providers {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.Identifier, p.Adapter, p.TrustZone, dashIfEmpty(p.Endpoint), p.APIKey, yesOrNo(p.Active))
	}
	fmt.Fprintln(tw, "\nMODEL\tPROVIDER\tMODEL ID\tCONTEXT\tPRICE IN/OUT PER 1M\tACTIVE")
	for _, m := range s.Models {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", m.Identifier, m.Provider, m.ModelID, countOrDash(m.ContextLength), priceText(m.Prices), yesOrNo(m.Active))
	}
	fmt.Fprintln(tw, "\nCONFIGURATION\tMODEL\tTOOL GROUPS\tFALLBACKS\tBUDGETS\tACTIVE")
	for _, c := range s.Configurations {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", c.Identifier, c.Model, dashIfEmpty(strings.Join(c.AllowedToolGroups, ",")),
			dashIfEmpty(strings.Join(c.FallbackChain, ",")), budgetText(c.Budget), yesOrNo(c.Active))
	}
	fmt.Fprintln(tw, "\nTASK\tCONFIGURATION\tDESCRIPTION")
	for _, t := range s.Tasks {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Identifier, t.Configuration, dashIfEmpty(t.Description))
	}
	fmt.Fprintln(tw, "\nBUDGET USER\tLIMITS\tACTIVE")
	for _, b := range s.Budgets {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", b.Username, budgetText(b.Budget), yesOrNo(b.Active))
	}
	return tw.Flush()
}

func countOrDash(n int) string {
	if n == 0 {
		return "-"
	}
	return strconv.Itoa(n)
}

func priceText(p *agentconfig.Prices) string {
	if p == nil {
		return "unpriced"
	}
	return p.Input.String() + " / " + p.Output.String()
}

// budget writes the limits that are set, e.g. "200 requests/day, $25.50/month".
func budgetText(b agentconfig.Budget) string {
	var parts []string
	add := func(v int64, unit, period string) {
		if v > 0 {
			parts = append(parts, fmt.Sprintf("%d %s/%s", v, unit, period))
		}
	}
	addCost := func(v agentconfig.USD, period string) {
		if v > 0 {
			parts = append(parts, v.String()+"/"+period)
		}
	}
	add(b.RequestsPerDay, "requests", "day")
	add(b.TokensPerDay, "tokens", "day")
	addCost(b.CostPerDay, "day")
	add(b.RequestsPerMonth, "requests", "month")
	add(b.TokensPerMonth, "tokens", "month")
	addCost(b.CostPerMonth, "month")
	if len(parts) == 0 {
		return "unlimited"
	}
	return strings.Join(parts, ", ")
}

func (a *app) configShowCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "show NAME",
		Short: "Show a configuration as a run would use it (model, provider, zone, fallbacks), or a task, model or provider",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			return a.withAgentStore(cmd.Context(), func(st store.Store, keys *secret.Keyring) error {
				snap, err := a.agentConfigs(st, keys).Snapshot(cmd.Context())
				if err != nil {
					return err
				}
				if c, ok := snap.Configuration(name); ok {
					return a.showConfiguration(snap, c)
				}
				if t, ok := snap.Task(name); ok {
					c, _ := snap.Configuration(t.Configuration)
					if a.jsonOut {
						return writeJSON(a.env.Stdout, t)
					}
					fmt.Fprintf(a.env.Stdout, "task           %s\nconfiguration  %s\ndescription    %s\nprompt template:\n%s\n\n",
						t.Identifier, t.Configuration, dashIfEmpty(t.Description), indentBlock(t.PromptTemplate))
					return a.showConfiguration(snap, c)
				}
				if m, ok := snap.Model(name); ok {
					if a.jsonOut {
						return writeJSON(a.env.Stdout, m)
					}
					_, err := fmt.Fprintln(a.env.Stdout, "model          "+modelLine(m))
					return err
				}
				if p, ok := snap.Provider(name); ok {
					if a.jsonOut {
						return writeJSON(a.env.Stdout, p)
					}
					_, err := fmt.Fprintln(a.env.Stdout, "provider       "+providerLine(p))
					return err
				}
				return fmt.Errorf("there is no configuration, task, model or provider %q; `t3agent config list` lists them", name)
			})
		},
	}
}

func indentBlock(s string) string {
	if s == "" {
		return "  -"
	}
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}

func modelLine(m agentconfig.Model) string {
	caps := make([]string, len(m.Capabilities))
	for i, c := range m.Capabilities {
		caps[i] = string(c)
	}
	return fmt.Sprintf("%s (%s on %s, context %s, max output %s, %s per 1M tokens in/out, capabilities %s%s)",
		m.Identifier, m.ModelID, m.Provider, countOrDash(m.ContextLength), countOrDash(m.MaxOutputTokens), priceText(m.Prices),
		joinOrDash(caps), inactiveNote(m.Active))
}

func providerLine(p agentconfig.Provider) string {
	endpoint := p.Endpoint
	if endpoint == "" {
		endpoint = "the adapter's default endpoint"
	}
	headers := make([]string, 0, len(p.Headers))
	for _, name := range slices.Sorted(maps.Keys(p.Headers)) {
		headers = append(headers, name+"="+p.Headers[name].String())
	}
	h := ""
	if len(headers) > 0 {
		h = ", headers " + strings.Join(headers, ", ")
	}
	return fmt.Sprintf("%s (%s at %s, key %s, zone %s, timeout %v, %d retries%s%s)",
		p.Identifier, p.Adapter, endpoint, p.APIKey, p.TrustZone, p.Timeout, p.MaxRetries, h, inactiveNote(p.Active))
}

func inactiveNote(active bool) string {
	if active {
		return ""
	}
	return ", INACTIVE"
}

// showConfiguration prints a configuration as Resolve sees it; one that
// cannot be resolved is printed as stored, with the reason.
func (a *app) showConfiguration(snap *agentconfig.Snapshot, c agentconfig.Configuration) error {
	r, rerr := snap.Resolve(c.Identifier)
	if a.jsonOut {
		if rerr != nil {
			return writeJSON(a.env.Stdout, map[string]any{"configuration": c, "error": rerr.Error()})
		}
		return writeJSON(a.env.Stdout, r)
	}
	w := a.env.Stdout
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	title := c.Identifier
	if c.Description != "" {
		title += " — " + c.Description
	}
	row("configuration", title+inactiveNote(c.Active))
	if rerr != nil {
		row("usable", "no: "+rerr.Error())
	}
	if m, ok := snap.Model(c.Model); ok {
		row("model", modelLine(m))
		if p, ok := snap.Provider(m.Provider); ok {
			row("provider", providerLine(p))
		}
	}
	if r != nil {
		row("trust zone", fmt.Sprintf("%s (least trusted along the fallback chain; ceiling %s)", r.TrustZone(), r.TrustZone().Ceiling()))
	}
	groups := "all"
	if len(c.AllowedToolGroups) > 0 {
		groups = strings.Join(c.AllowedToolGroups, ", ")
	}
	row("tool groups", groups)
	enabled := []string{guardrail.SecretRedaction + " (mandatory)"}
	for _, g := range c.Guardrails {
		if g != guardrail.SecretRedaction {
			enabled = append(enabled, g)
		}
	}
	row("guardrails", strings.Join(enabled, ", "))
	temp := "provider default"
	if c.Temperature != nil {
		temp = strconv.FormatFloat(*c.Temperature, 'g', -1, 64)
	}
	row("temperature", temp)
	maxTokens := "the model's output cap"
	if c.MaxTokens > 0 {
		maxTokens = strconv.Itoa(c.MaxTokens)
	}
	row("max tokens", maxTokens)
	row("max rounds", strconv.Itoa(c.MaxRounds))
	row("privacy", string(c.Privacy))
	row("four eyes", yesOrNo(c.RequireSecondApprover))
	row("budgets", budgetText(c.Budget))
	if r != nil {
		var fb []string
		for _, e := range r.Fallbacks {
			fb = append(fb, fmt.Sprintf("%s (%s on %s, %s)", e.Configuration.Identifier, e.Model.ModelID, e.Provider.Identifier, e.Provider.TrustZone))
		}
		row("fallbacks", joinOrDash(fb))
		if len(r.Skipped) > 0 {
			var sk []string
			for _, s := range r.Skipped {
				sk = append(sk, s.Identifier+" ("+s.Reason+")")
			}
			row("skipped", strings.Join(sk, ", "))
		}
	} else {
		row("fallbacks", joinOrDash(c.FallbackChain))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "system prompt:\n%s\n", indentBlock(c.SystemPrompt))
	return err
}
