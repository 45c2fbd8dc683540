package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.opentelemetry.io/otel/trace"

	"github.com/t3agent/t3agent/internal/config"
	"github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/mcpauth"
	"github.com/t3agent/t3agent/internal/secret"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
)

// openMCP builds the MCP client over the runtime's store, with the
// allow-list and deadline of the mcp.* configuration keys. A missing
// master key is not an error: servers without a credential still work,
// and storing or using a credential then fails with a clear sentence.
//
// With a master key it also builds the OAuth manager (nil without one:
// grants are sealed), whose requests pass the same allow-list.
func (a *app) openMCP(_ context.Context, cfg config.Config, st store.Store, tp trace.TracerProvider) (*secret.Keyring, *mcp.Service, *mcpauth.Manager, error) {
	keys, err := cfg.Keyring()
	if errors.Is(err, config.ErrNoMasterKey) {
		keys, err = nil, nil
	}
	if err != nil {
		return nil, nil, nil, err
	}
	var mgr *mcpauth.Manager
	p := mcp.Params{
		Store: st, Keyring: keys, Logger: a.logger, Timeout: cfg.MCP.OperationTimeout,
		AllowedHosts: cfg.MCP.Hosts(), ClientVersion: Version(), TracerProvider: tp,
	}
	if keys != nil {
		client, err := mcp.NewHTTPClient(cfg.MCP.Hosts())
		if err != nil {
			return nil, nil, nil, err
		}
		mgr, err = mcpauth.New(mcpauth.Params{Store: st, Keyring: keys, HTTPClient: client, Logger: a.logger,
			ClientMetadataURL: cfg.MCP.OAuthClientMetadataURL})
		if err != nil {
			return nil, nil, nil, err
		}
		p.OAuth = mgr
	}
	svc, err := mcp.New(p)
	if err != nil {
		return nil, nil, nil, err
	}
	return keys, svc, mgr, nil
}

// withAdmin opens the runtime and checks that --as names a TYPO3 admin.
func (a *app) withAdmin(ctx context.Context, what string, fn func(r *runtime, by string) error) error {
	if a.as == "" {
		return fmt.Errorf("%s needs --as ADMIN: only TYPO3 admins manage MCP servers", what)
	}
	return a.withRuntime(ctx, func(r *runtime) error {
		defer r.mcp.Close()
		actor, err := a.actor(ctx, r.site)
		if err != nil {
			return err
		}
		if !actor.Admin {
			return fmt.Errorf("--as %s: only TYPO3 admins manage MCP servers", a.as)
		}
		return fn(r, actor.Username)
	})
}

func (a *app) mcpCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Manage the external MCP servers and their tool catalogue",
		Long: "Manage the external MCP servers t3agent reaches over HTTP. Their tools reach a model only through " +
			"the registry and the gate; a server without a data class is inert.",
	}
	cmd.AddCommand(a.mcpAddCommand(), a.mcpListCommand(), a.mcpShowCommand(), a.mcpImportCommand(),
		a.mcpPingCommand(), a.mcpCallCommand(), a.mcpToggleCommand(true), a.mcpToggleCommand(false),
		a.mcpSetCommand(), a.mcpRemoveCommand(), a.mcpOAuthCommand(), a.mcpLoginCommand(), a.mcpLogoutCommand())
	return cmd
}

// credentialFrom reads a credential from an environment variable or
// stdin, never from a flag value (which ps and shell history would keep).
func (a *app) credentialFrom(cmd *cobra.Command, envName string, stdin bool) (string, bool, error) {
	switch {
	case envName != "" && stdin:
		return "", false, errors.New("give the credential through --credential-env or --credential-stdin, not both")
	case envName != "":
		for _, kv := range a.env.Environ {
			if k, v, ok := strings.Cut(kv, "="); ok && k == envName {
				return strings.TrimSpace(v), true, nil
			}
		}
		return "", false, fmt.Errorf("--credential-env: the environment has no %s", envName)
	case stdin:
		b, err := io.ReadAll(io.LimitReader(cmd.InOrStdin(), mcp.MaxCredentialLen+1))
		if err != nil {
			return "", false, fmt.Errorf("the credential cannot be read from stdin: %w", err)
		}
		return strings.TrimSpace(string(b)), true, nil
	}
	return "", false, nil
}

func parseClass(s string) (tool.DataClass, error) {
	if s == "" {
		return 0, nil
	}
	return tool.ParseDataClass(s)
}

func (a *app) mcpAddCommand() *cobra.Command {
	var p mcp.AddParams
	var auth, class, effect, credEnv string
	var credStdin, noApproval, notAdminOnly bool
	cmd := &cobra.Command{
		Use:   "add ID --url URL --data-class CLASS --as ADMIN",
		Short: "Add an MCP server (disabled, approval required, admin-only until said otherwise)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			p.Identifier, p.Auth, p.Effect = args[0], mcp.AuthKind(auth), tool.Effect(effect)
			if p.DataClass, err = parseClass(class); err != nil {
				return fmt.Errorf("--data-class: %w", err)
			}
			if p.Credential, _, err = a.credentialFrom(cmd, credEnv, credStdin); err != nil {
				return err
			}
			if noApproval {
				p.RequiresApproval = new(bool)
			}
			if notAdminOnly {
				p.AdminOnly = new(bool)
			}
			return a.withAdmin(cmd.Context(), "mcp add", func(r *runtime, by string) error {
				p.By = by
				s, err := r.mcp.Add(cmd.Context(), p)
				if err != nil {
					return err
				}
				return a.printServer(s)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&p.URL, "url", "", "the server's Streamable HTTP endpoint (http or https)")
	f.StringVar(&p.Name, "name", "", "display name (default: the identifier)")
	f.StringVar(&p.Description, "description", "", "what the server is for")
	f.StringVar(&class, "data-class", "", "how sensitive the server's output is (publicContent … secretAdjacent); without one the server is inert")
	f.StringVar(&effect, "effect", "", "read_only, idempotent_write or non_idempotent_write (default)")
	f.StringVar(&auth, "auth", "none", "none, bearer or header")
	f.StringVar(&p.AuthHeader, "header-name", "", "the header that carries the credential with --auth header")
	f.StringVar(&credEnv, "credential-env", "", "read the credential from this environment variable")
	f.BoolVar(&credStdin, "credential-stdin", false, "read the credential from standard input")
	f.BoolVar(&noApproval, "no-approval", false, "calls need no approval (a declared write still does)")
	f.BoolVar(&notAdminOnly, "not-admin-only", false, "offer the tools to non-admins too (the gate still applies)")
	f.BoolVar(&p.Enabled, "enable", false, "enable the server at once")
	_ = cmd.MarkFlagRequired("url")
	return cmd
}

func (a *app) mcpSetCommand() *cobra.Command {
	var class, effect, auth, headerName, credEnv, name, description, rawURL, approval, toolEffect string
	var credStdin, clearClass bool
	cmd := &cobra.Command{
		Use:   "set ID [flags] --as ADMIN",
		Short: "Change an MCP server's declaration, URL or credential, or one tool's effect",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p := mcp.UpdateParams{Identifier: args[0], ClearDataClass: clearClass}
			set := func(flag string, dst **string, v string) {
				if cmd.Flags().Changed(flag) {
					*dst = &v
				}
			}
			set("name", &p.Name, name)
			set("description", &p.Description, description)
			set("url", &p.URL, rawURL)
			set("header-name", &p.AuthHeader, headerName)
			if cmd.Flags().Changed("data-class") {
				c, err := tool.ParseDataClass(class)
				if err != nil {
					return fmt.Errorf("--data-class: %w", err)
				}
				p.DataClass = &c
			}
			if cmd.Flags().Changed("effect") {
				e := tool.Effect(effect)
				p.Effect = &e
			}
			if cmd.Flags().Changed("auth") {
				k := mcp.AuthKind(auth)
				p.Auth = &k
			}
			if cmd.Flags().Changed("approval") {
				on := approval == "on"
				if !on && approval != "off" {
					return errors.New("--approval: say on or off")
				}
				p.RequiresApproval = &on
			}
			cred, given, err := a.credentialFrom(cmd, credEnv, credStdin)
			if err != nil {
				return err
			}
			if given {
				p.Credential = &cred
			}
			return a.withAdmin(cmd.Context(), "mcp set", func(r *runtime, by string) error {
				p.By = by
				if toolEffect != "" {
					name, eff, _ := strings.Cut(toolEffect, "=")
					if err := r.mcp.SetToolEffect(cmd.Context(), mcp.SetToolEffectParams{Name: name, Effect: tool.Effect(eff)}); err != nil {
						return err
					}
				}
				s, err := r.mcp.Update(cmd.Context(), p)
				if err != nil {
					return err
				}
				return a.printServer(s)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&name, "name", "", "display name")
	f.StringVar(&description, "description", "", "what the server is for")
	f.StringVar(&rawURL, "url", "", "the server's endpoint")
	f.StringVar(&class, "data-class", "", "the server's data class")
	f.BoolVar(&clearClass, "clear-data-class", false, "remove the data class (the server becomes inert)")
	f.StringVar(&effect, "effect", "", "the server's effect")
	f.StringVar(&approval, "approval", "", "on or off")
	f.StringVar(&auth, "auth", "", "none, bearer or header")
	f.StringVar(&headerName, "header-name", "", "the credential header with --auth header")
	f.StringVar(&credEnv, "credential-env", "", "read a new credential from this environment variable")
	f.BoolVar(&credStdin, "credential-stdin", false, "read a new credential from standard input")
	f.StringVar(&toolEffect, "tool-effect", "", "override one tool's effect: LOCAL_NAME=EFFECT (empty EFFECT clears it)")
	return cmd
}

func (a *app) mcpListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the MCP servers with their declarations and health",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withRuntime(cmd.Context(), func(r *runtime) error {
				defer r.mcp.Close()
				servers, err := r.mcp.Servers(cmd.Context())
				if err != nil {
					return err
				}
				listed, err := a.withOAuth(cmd.Context(), r, servers)
				if err != nil {
					return err
				}
				if a.jsonOut {
					return writeJSON(a.env.Stdout, listed)
				}
				tw := tabwriter.NewWriter(a.env.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tENABLED\tCLASS\tEFFECT\tAPPROVAL\tAUTH\tIMPORT\tTOOLS\tLAST CONTACT\tLATENCY\tURL")
				for _, l := range listed {
					s := l.Server
					fmt.Fprintf(tw, "%s\t%v\t%s\t%s\t%v\t%s\t%s\t%d\t%s\t%s\t%s\n", s.Identifier, s.Enabled, classText(s),
						s.Effect, s.RequiresApproval, authText(l), s.ImportStatus, s.ToolCount, when(s.LastContact), latency(s), s.URL)
				}
				return tw.Flush()
			})
		},
	}
}

func (a *app) mcpShowCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "show ID",
		Short: "Show one MCP server and its tools with effect, class and the server's hints",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withRuntime(cmd.Context(), func(r *runtime) error {
				defer r.mcp.Close()
				s, err := r.mcp.Server(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				tools, err := r.mcp.Tools(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				s.URL = displayURL(s.URL)
				if a.jsonOut {
					return writeJSON(a.env.Stdout, map[string]any{"server": s, "tools": tools})
				}
				if err := a.printServer(s); err != nil {
					return err
				}
				fmt.Fprintln(a.env.Stdout)
				tw := tabwriter.NewWriter(a.env.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "TOOL\tREMOTE\tEFFECT\tCLASS\tHINTS\tSTATE")
				for _, t := range tools {
					state := "live"
					if t.Orphaned {
						state = "orphaned"
					}
					eff := string(t.Effect)
					if t.EffectOverride != "" {
						eff += " (tool override)"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.Name, t.RemoteName, eff, classText(s), hints(t.Hints), state)
				}
				return tw.Flush()
			})
		},
	}
}

func (a *app) mcpImportCommand() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "import ID|--all --as ADMIN",
		Short: "Import the tools of one MCP server (or all) into the catalogue",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (len(args) == 1) == all {
				return errors.New("name one MCP server, or --all")
			}
			return a.withAdmin(cmd.Context(), "mcp import", func(r *runtime, _ string) error {
				ids := args
				if all {
					servers, err := r.mcp.Servers(cmd.Context())
					if err != nil {
						return err
					}
					ids = nil
					for _, s := range servers {
						ids = append(ids, s.Identifier)
					}
				}
				var failed []string
				var results []mcp.ImportResult
				for _, id := range ids {
					res, err := r.mcp.Import(cmd.Context(), mcp.ImportParams{Server: id, Registry: r.registry})
					if err != nil {
						failed = append(failed, err.Error())
						if !a.jsonOut {
							fmt.Fprintf(a.env.Stdout, "%s: refused: %s\n", id, err)
						}
						continue
					}
					results = append(results, res)
					if !a.jsonOut {
						fmt.Fprintf(a.env.Stdout, "%s: %s, %d of %d tools imported (%d added, %d restored, %d orphaned)\n", id,
							res.Server.ImportStatus, res.Imported, res.Advertised, len(res.Added), len(res.Restored), len(res.Orphaned))
						for _, s := range res.Skipped {
							fmt.Fprintf(a.env.Stdout, "  %s\n", s)
						}
					}
				}
				if a.jsonOut {
					if err := writeJSON(a.env.Stdout, results); err != nil {
						return err
					}
				}
				if len(failed) > 0 {
					return fmt.Errorf("%d of %d imports were refused", len(failed), len(ids))
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "import every configured server")
	return cmd
}

// splitTarget reads "ID" or a URL given as --url or as the last argument.
func splitTarget(args []string, urlFlag string) (server, rawURL string, rest []string) {
	if urlFlag != "" {
		return "", urlFlag, args
	}
	if n := len(args); n > 0 && strings.Contains(args[n-1], "://") {
		return "", args[n-1], args[:n-1]
	}
	if len(args) > 0 {
		return args[0], "", args[1:]
	}
	return "", "", nil
}

func (a *app) mcpPingCommand() *cobra.Command {
	var rawURL string
	cmd := &cobra.Command{
		Use:   "ping ID|URL --as ADMIN",
		Short: "Do the handshake with an MCP server and report its protocol version, name and latency",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			server, u, rest := splitTarget(args, rawURL)
			if (server == "") == (u == "") || len(rest) > 0 {
				return errors.New("name one MCP server, or give its URL")
			}
			return a.withAdmin(cmd.Context(), "mcp ping", func(r *runtime, _ string) error {
				var res mcp.PingResult
				var err error
				if u != "" {
					res, err = r.mcp.PingURL(cmd.Context(), u)
				} else {
					res, err = r.mcp.Ping(cmd.Context(), server)
				}
				if err != nil {
					return err
				}
				if a.jsonOut {
					return writeJSON(a.env.Stdout, res)
				}
				_, err = fmt.Fprintf(a.env.Stdout, "%s answered: %s %s, protocol %s, %s\n", res.Server, res.ServerName, res.ServerVersion,
					res.ProtocolVersion, res.Latency.Round(time.Millisecond))
				return err
			})
		},
	}
	cmd.Flags().StringVar(&rawURL, "url", "", "ping a server that is not configured (no credential)")
	return cmd
}

func (a *app) mcpCallCommand() *cobra.Command {
	var rawURL, args string
	cmd := &cobra.Command{
		Use:   "call ID TOOL | call --url URL TOOL | call TOOL URL  --as ADMIN",
		Short: "Call one remote tool directly, for diagnostics (admin only; not a model's call)",
		Long: "Call one remote tool and print the answer as a model would read it. This is an operator's " +
			"diagnostic: it does not pass the gate (nothing reaches a model) and needs a TYPO3 admin. A configured " +
			"server is called only for tools its catalogue holds.",
		Args: cobra.RangeArgs(1, 3),
		RunE: func(cmd *cobra.Command, positional []string) error {
			server, u, rest := splitTarget(positional, rawURL)
			if len(rest) != 1 || (server == "") == (u == "") {
				return errors.New("give a configured MCP server and a tool, or a URL (--url or last) and a tool")
			}
			return a.withAdmin(cmd.Context(), "mcp call", func(r *runtime, _ string) error {
				res, err := r.mcp.Call(cmd.Context(), mcp.CallParams{Server: server, URL: u, Tool: rest[0], Args: []byte(args)})
				if err != nil {
					return err
				}
				if a.jsonOut {
					return writeJSON(a.env.Stdout, res)
				}
				fmt.Fprintln(a.env.Stdout, strings.TrimRight(res.Content, "\n"))
				if res.IsError {
					return errors.New("the remote tool answered with an error")
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&rawURL, "url", "", "call a server that is not configured (no credential)")
	cmd.Flags().StringVar(&args, "args", "{}", "the call's arguments as a JSON object")
	return cmd
}

func (a *app) mcpToggleCommand(enable bool) *cobra.Command {
	use, verb := "disable", "Disable"
	if enable {
		use, verb = "enable", "Enable"
	}
	return &cobra.Command{
		Use:   use + " ID --as ADMIN",
		Short: verb + " an MCP server (its tools are registered only while it is enabled)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withAdmin(cmd.Context(), "mcp "+use, func(r *runtime, by string) error {
				s, err := r.mcp.SetEnabled(cmd.Context(), args[0], enable, by)
				if err != nil {
					return err
				}
				msg := fmt.Sprintf("The MCP server %s is %sd.", s.Identifier, use)
				if enable {
					usable, err := usability(cmd.Context(), r, s)
					if err != nil {
						return err
					}
					msg += " " + usable
				}
				_, err = fmt.Fprintln(a.env.Stdout, msg)
				return err
			})
		},
	}
}

// usability says whether an enabled server's tools are usable as
// declared, or exactly which toggle still keeps them (or some of them)
// off, with the command that turns it on.
func usability(ctx context.Context, r *runtime, s mcp.Server) (string, error) {
	id, group := s.Identifier, mcp.Group(s.Identifier)
	tools, err := r.mcp.Tools(ctx, id)
	if err != nil {
		return "", err
	}
	ov, err := r.gate.Availability().Load(ctx)
	if err != nil {
		return "", err
	}
	var live, off []string
	for _, t := range tools {
		if t.Orphaned {
			continue
		}
		live = append(live, t.Name)
		if on, set := ov.ToolOverride(t.Name); set && !on {
			off = append(off, t.Name)
		}
	}
	var blocked []string
	if s.Inert() {
		blocked = append(blocked, fmt.Sprintf("it has no data class (t3agent mcp set %s --data-class CLASS)", id))
	}
	if len(live) == 0 {
		blocked = append(blocked, fmt.Sprintf("its catalogue has no tools (t3agent mcp import %s)", id))
	}
	if !ov.GroupEnabled(group) {
		blocked = append(blocked, fmt.Sprintf("its tool group %s is disabled (t3agent tools enable --group %s)", group, group))
	}
	if len(blocked) > 0 {
		return "Its tools are still off: " + strings.Join(blocked, "; ") + ".", nil
	}
	approval, audience := "approval required", "admins only"
	if !s.RequiresApproval {
		approval = "approval for writes only"
	}
	if !s.AdminOnly {
		audience = "every user the gate admits"
	}
	declared := fmt.Sprintf("as declared (%s, %s, %s, %s)", s.DataClass, s.Effect, approval, audience)
	if len(off) == 0 {
		return fmt.Sprintf("Its %d tool(s) are usable %s.", len(live), declared), nil
	}
	return fmt.Sprintf("%d of its %d tool(s) are usable %s; disabled by their own override: %s (t3agent tools enable NAME).",
		len(live)-len(off), len(live), declared, strings.Join(off, ", ")), nil
}

func (a *app) mcpRemoveCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "remove ID --as ADMIN",
		Short: "Remove an MCP server and its catalogue",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withAdmin(cmd.Context(), "mcp remove", func(r *runtime, _ string) error {
				if err := r.mcp.Remove(cmd.Context(), args[0]); err != nil {
					return err
				}
				_, err := fmt.Fprintf(a.env.Stdout, "The MCP server %s is removed.\n", args[0])
				return err
			})
		},
	}
}

func (a *app) printServer(s mcp.Server) error {
	s.URL = displayURL(s.URL)
	if a.jsonOut {
		return writeJSON(a.env.Stdout, s)
	}
	cred := "none"
	if s.HasCredential {
		cred = "stored (never shown)"
	}
	tw := tabwriter.NewWriter(a.env.Stdout, 0, 4, 2, ' ', 0)
	for _, kv := range [][2]string{
		{"server", s.Identifier}, {"name", s.Name}, {"url", s.URL}, {"auth", string(s.Auth) + headerNote(s)},
		{"credential", cred}, {"data class", classText(s)}, {"effect", string(s.Effect)},
		{"requires approval", fmt.Sprint(s.RequiresApproval)}, {"admin only", fmt.Sprint(s.AdminOnly)},
		{"enabled", fmt.Sprint(s.Enabled)}, {"import", s.ImportStatus}, {"tools", fmt.Sprint(s.ToolCount)},
		{"last import", when(s.LastImport)}, {"last contact", when(s.LastContact)}, {"latency", latency(s)},
	} {
		fmt.Fprintf(tw, "%s:\t%s\n", kv[0], kv[1])
	}
	if s.ImportError != "" {
		fmt.Fprintf(tw, "import notes:\t%s\n", strings.ReplaceAll(s.ImportError, "\n", "\n\t"))
	}
	return tw.Flush()
}

func headerNote(s mcp.Server) string {
	if s.Auth == mcp.AuthHeader {
		return " (" + s.AuthHeader + ")"
	}
	return ""
}

func classText(s mcp.Server) string {
	if s.Inert() {
		return "none (inert)"
	}
	return s.DataClass.String()
}

func when(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.Local().Format(time.DateTime)
}

func latency(s mcp.Server) string {
	if s.LastContact.IsZero() {
		return "-"
	}
	return s.LastLatency.String()
}

func hints(h mcp.Hints) string {
	var out []string
	for _, x := range []struct {
		name string
		v    *bool
	}{{"readOnly", h.ReadOnly}, {"destructive", h.Destructive}, {"idempotent", h.Idempotent}, {"openWorld", h.OpenWorld}} {
		if x.v != nil {
			out = append(out, fmt.Sprintf("%s=%v", x.name, *x.v))
		}
	}
	if len(out) == 0 {
		return "-"
	}
	return strings.Join(out, ",")
}

// displayURL hides query values, which sometimes carry tokens.
func displayURL(raw string) string { return mcp.DisplayURL(raw) }
