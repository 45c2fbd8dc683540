package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/playground"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

// gateFlags are the flags that say for whom and for which configuration a
// tools command decides.
type gateFlags struct {
	configuration string
	zone          string
	groups        []string
}

func (f *gateFlags) register(cmd *cobra.Command, zoneDefault string) {
	cmd.Flags().StringVarP(&f.configuration, "configuration", "C", "", "decide as for this agent configuration (its tool groups and its providers' least trusted zone)")
	cmd.Flags().StringVar(&f.zone, "zone", zoneDefault, "without --configuration: trust zone of the receiver (local, privateHosted, externalEu, externalGlobal)")
	cmd.Flags().StringSliceVar(&f.groups, "groups", nil, "without --configuration: allowed tool groups (default: all)")
}

// config returns the configuration the gate decides for: a stored agent
// configuration when --configuration names one, else the --zone/--groups
// readout configuration.
func (f *gateFlags) config(ctx context.Context, cmd *cobra.Command, r *runtime, lookupEnv func(string) (string, bool)) (gate.Configuration, error) {
	if f.configuration != "" {
		if cmd.Flags().Changed("zone") || cmd.Flags().Changed("groups") {
			return nil, errors.New("--configuration already fixes the zone and the groups; leave out --zone and --groups")
		}
		svc := agentconfig.New(agentconfig.Params{Store: r.store, Keyring: r.keyring, LookupEnv: lookupEnv})
		res, err := svc.Resolve(ctx, f.configuration)
		if err != nil {
			return nil, fmt.Errorf("--configuration %s: %w", f.configuration, err)
		}
		return res, nil
	}
	z := tool.TrustZone(f.zone)
	if z.Normalize() != z {
		return nil, fmt.Errorf("--zone: %q is not local, privateHosted, externalEu or externalGlobal", f.zone)
	}
	return gate.Config{Name: "cli", AllowedGroups: f.groups, TrustZone: z}, nil
}

// actor loads the --as backend user; nil when --as is empty.
func (a *app) actor(ctx context.Context, site *typo3.Site) (*typo3.BackendUser, error) {
	if a.as == "" {
		return nil, nil
	}
	u, err := site.BackendUserByName(ctx, a.as)
	if err != nil {
		if errors.Is(err, typo3.ErrUserCannotAct) {
			return nil, fmt.Errorf("--as %s: this backend user cannot act (unknown, disabled, deleted or expired)", a.as)
		}
		return nil, err
	}
	return u, nil
}

// withRuntime loads the configuration, opens everything and runs fn.
func (a *app) withRuntime(ctx context.Context, fn func(r *runtime) error) error {
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	r, err := a.open(ctx, cfg)
	if err != nil {
		return err
	}
	defer r.Close()
	return fn(r)
}

func (a *app) toolsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List, explain, call and toggle the tools",
	}
	cmd.AddCommand(a.toolsListCommand("list", "List every tool with its group, class, effect and the gate's decision"),
		a.toolsListCommand("explain [NAME]", "Explain the gate's decision for every tool, or for one tool in full (checks, schema, an example call), for the --as user"),
		a.toolsCallCommand(), a.toolsToggleCommand(true), a.toolsToggleCommand(false), a.toolsEnforcementCommand())
	return cmd
}

// toolsEnforcementCommand shows or sets the enforcement mode of the
// trust-zone check. Setting takes the exact words only: the gate treats
// any other stored value as enforce, so a typo here would silently
// enforce; refusing it says so at once.
func (a *app) toolsEnforcementCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "enforcement [enforce|observe]",
		Short: "Show how the trust-zone check acts, or set it (admin only): enforce denies, observe offers and records",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if m := gate.Enforcement(args[0]); m != gate.Enforce && m != gate.Observe {
					return fmt.Errorf("enforcement %q is not understood: use enforce or observe", args[0])
				}
				if a.as == "" {
					return errors.New("setting the enforcement needs --as ADMIN: only TYPO3 admins may change it")
				}
			}
			return a.withRuntime(cmd.Context(), func(r *runtime) error {
				ctx := cmd.Context()
				if len(args) == 1 {
					actor, err := a.actor(ctx, r.site)
					if err != nil {
						return err
					}
					if !actor.Admin {
						return fmt.Errorf("--as %s: only TYPO3 admins may change the enforcement", a.as)
					}
					if _, err := r.store.SetSetting(ctx, store.SetSettingParams{Key: gate.EnforcementSetting, Value: args[0]}); err != nil {
						return err
					}
				}
				ov, err := r.gate.Availability().Load(ctx)
				if err != nil {
					return err
				}
				switch m := ov.Enforcement(); {
				case m.Observes():
					fmt.Fprintln(a.env.Stdout, "observe: tools above a provider's ceiling are offered and recorded; remote tools are always enforced.")
				case m == gate.Enforce:
					fmt.Fprintln(a.env.Stdout, "enforce: tools above a provider's ceiling are denied.")
				default:
					fmt.Fprintf(a.env.Stdout, "enforce: the stored value %q is not exactly observe, so tools above a provider's ceiling are denied.\n", string(m))
				}
				return nil
			})
		},
	}
}

func (a *app) toolsListCommand(use, short string) *cobra.Command {
	var gf gateFlags
	explain := strings.HasPrefix(use, "explain")
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, names []string) error {
			if explain && a.as == "" {
				return errors.New("explain needs --as USER: the gate decides for a backend user")
			}
			return a.withRuntime(cmd.Context(), func(r *runtime) error {
				if len(names) == 1 {
					return a.explainTool(cmd.Context(), cmd, r, &gf, names[0])
				}
				cfg, err := gf.config(cmd.Context(), cmd, r, a.lookupEnv)
				if err != nil {
					return err
				}
				actor, err := a.actor(cmd.Context(), r.site)
				if err != nil {
					return err
				}
				ds, err := r.gate.Explain(cmd.Context(), gate.ExplainParams{Actor: actor, Config: cfg})
				if err != nil {
					return err
				}
				return a.printDecisions(cmd.Context(), r, ds)
			})
		},
	}
	if explain {
		cmd.Args = cobra.MaximumNArgs(1)
	}
	gf.register(cmd, string(tool.ZoneLocal))
	return cmd
}

func (a *app) printDecisions(ctx context.Context, r *runtime, ds []gate.Decision) error {
	type row struct {
		gate.Decision
		Group  string      `json:"group"`
		Effect tool.Effect `json:"effect"`
		Admin  bool        `json:"adminOnly"`
	}
	rows := make([]row, len(ds))
	for i, d := range ds {
		rows[i] = row{Decision: d}
		if e, ok := r.registry.Get(ctx, d.Tool); ok {
			rows[i].Group, rows[i].Effect, rows[i].Admin = e.Spec.Group, e.Spec.Effect, e.Spec.AdminOnly
		}
	}
	if a.jsonOut {
		return writeJSON(a.env.Stdout, rows)
	}
	tw := tabwriter.NewWriter(a.env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tGROUP\tCLASS\tEFFECT\tDECISION")
	for _, r := range rows {
		decision := "offered"
		switch {
		case !r.Allowed:
			decision = "denied: " + string(r.Reason)
		case r.ObservedOnly:
			decision = "offered (observe only: trust zone would deny)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Tool, r.Group, r.DataClass, r.Effect, decision)
	}
	return tw.Flush()
}

func (a *app) toolsCallCommand() *cobra.Command {
	var gf gateFlags
	var args string
	cmd := &cobra.Command{
		Use:   "call NAME --as USER --args JSON",
		Short: "Call one tool through the gate as a backend user and print its answer",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, names []string) error {
			if a.as == "" {
				return errors.New("call needs --as USER: tools act as a backend user")
			}
			return a.withRuntime(cmd.Context(), func(r *runtime) error {
				cfg, err := gf.config(cmd.Context(), cmd, r, a.lookupEnv)
				if err != nil {
					return err
				}
				actor, err := a.actor(cmd.Context(), r.site)
				if err != nil {
					return err
				}
				// The operator's command line is its own confirmation of a
				// write; one call may ask one remote server once.
				out, err := playground.Call(cmd.Context(), r.gate, playground.Params{
					Name: names[0], Args: []byte(args), Actor: actor, Config: cfg, Source: "cli", ConfirmWrite: true,
				})
				if err != nil {
					return err
				}
				res := out.Result
				if a.jsonOut {
					return writeJSON(a.env.Stdout, res)
				}
				fmt.Fprintln(a.env.Stdout, strings.TrimRight(res.Content, "\n"))
				if res.IsError {
					return errors.New("the tool answered with an error")
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&args, "args", "{}", "the call's arguments as a JSON object")
	gf.register(cmd, string(tool.ZoneLocal))
	return cmd
}

func (a *app) toolsToggleCommand(enable bool) *cobra.Command {
	use, verb := "disable", "Disable"
	if enable {
		use, verb = "enable", "Enable"
	}
	var group string
	var clear bool
	cmd := &cobra.Command{
		Use:   use + " [NAME] [--group GROUP]",
		Short: verb + " a tool, or a whole group with --group (admin only)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, names []string) error {
			if (len(names) == 1) == (group != "") {
				return errors.New("name exactly one tool, or one group with --group")
			}
			if a.as == "" {
				return errors.New("toggling tools needs --as ADMIN: only TYPO3 admins may change availability")
			}
			return a.withRuntime(cmd.Context(), func(r *runtime) error {
				actor, err := a.actor(cmd.Context(), r.site)
				if err != nil {
					return err
				}
				if !actor.Admin {
					return fmt.Errorf("--as %s: only TYPO3 admins may change tool availability", a.as)
				}
				av := r.gate.Availability()
				ctx := cmd.Context()
				switch {
				case group != "" && clear:
					err = av.ClearGroup(ctx, group)
				case group != "":
					_, err = av.SetGroup(ctx, gate.SetGroupParams{Group: group, Enabled: enable, By: actor.Username})
				case clear:
					err = av.ClearTool(ctx, names[0])
				default:
					_, err = av.SetTool(ctx, gate.SetToolParams{Name: names[0], Enabled: enable, By: actor.Username})
				}
				if err != nil {
					return err
				}
				target := "tool " + strings.Join(names, "")
				if group != "" {
					target = "group " + group
				}
				state := use + "d"
				if clear {
					state = "back to its default"
				}
				fmt.Fprintf(a.env.Stdout, "The %s is %s.\n", target, state)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&group, "group", "", "toggle a whole group instead of one tool")
	cmd.Flags().BoolVar(&clear, "clear", false, "remove the override instead, so the default applies again")
	return cmd
}
