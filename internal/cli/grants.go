package cli

import (
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/mcpserver"
	"github.com/t3agent/t3agent/internal/oauth"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/web"
)

// mcpServerParams mount t3agent's MCP facade at /mcp; with a master key
// also its OAuth authorization server (whose keys derive from it) and
// approval-bound calls kept as runs.
func (a *app) mcpServerParams(r *runtime, rt *agent.Runtime, cfgs *agentconfig.Service) *web.MCPParams {
	p := &web.MCPParams{Facade: mcpserver.Params{Gate: r.gate, Configs: cfgs, Calls: r.store, Version: Version()}}
	if r.keyring != nil {
		p.Facade.Runtime = rt
		p.OAuth = &oauth.Params{Store: r.store, Key: r.keyring.Derive("oauth"), SiteName: r.cfg.Site.Name}
	}
	return p
}

func (a *app) mcpServerCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp-server",
		Short: "t3agent as an MCP server at /mcp: the OAuth grants of MCP hosts and the record of their calls",
		Long: "`t3agent serve` offers the gated tools to MCP hosts (Claude Code, Cursor, VS Code) at /mcp and " +
			"/mcp/{configuration}, with service tokens or OAuth (see docs/mcp-server.md). These commands list and " +
			"revoke the OAuth grants people gave hosts, and show the facade's record of calls. (`t3agent mcp` manages " +
			"the external MCP servers t3agent itself calls.)",
	}
	grants := &cobra.Command{Use: "grants", Short: "List and revoke the OAuth grants of MCP hosts"}
	grants.AddCommand(a.grantsListCommand(), a.grantsRevokeCommand())
	cmd.AddCommand(grants, a.mcpCallsCommand())
	return cmd
}

// grantView is a grant as the commands show it.
type grantView struct {
	ID         string     `json:"id"`
	Username   string     `json:"username"`
	Client     string     `json:"client"`
	ClientID   string     `json:"clientId"`
	Resource   string     `json:"resource"`
	CreatedAt  time.Time  `json:"createdAt"`
	LastUsedAt *time.Time `json:"lastUsedAt"`
	RevokedAt  *time.Time `json:"revokedAt"`
}

func viewGrant(g store.OAuthGrant) grantView {
	v := grantView{ID: g.ID, Username: g.Username, Client: g.ClientName, ClientID: g.ClientID, Resource: g.Resource, CreatedAt: g.CreatedAt}
	if !g.LastUsedAt.IsZero() {
		v.LastUsedAt = &g.LastUsedAt
	}
	if !g.RevokedAt.IsZero() {
		v.RevokedAt = &g.RevokedAt
	}
	return v
}

func (a *app) grantsListCommand() *cobra.Command {
	var user string
	var all bool
	cmd := &cobra.Command{
		Use:   "list [--user USERNAME] [--all]",
		Short: "List the live OAuth grants (of one user with --user; revoked ones too with --all)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withStore(cmd.Context(), func(st store.Store) error {
				gs, err := st.OAuthGrants(cmd.Context(), store.ListOAuthGrantsParams{Username: user, Revoked: all})
				if err != nil {
					return err
				}
				views := make([]grantView, len(gs))
				for i, g := range gs {
					views[i] = viewGrant(g)
				}
				if a.jsonOut {
					return writeJSON(a.env.Stdout, views)
				}
				tw := tabwriter.NewWriter(a.env.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tUSER\tCLIENT\tRESOURCE\tCREATED\tLAST USED\tREVOKED")
				for _, v := range views {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", v.ID, v.Username, v.Client, v.Resource,
						v.CreatedAt.Format(time.DateTime), timeOrDash(v.LastUsedAt), timeOrDash(v.RevokedAt))
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().StringVar(&user, "user", "", "only this backend user's grants")
	cmd.Flags().BoolVar(&all, "all", false, "include revoked grants")
	return cmd
}

func (a *app) grantsRevokeCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke an OAuth grant: its access and refresh tokens are refused from then on",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withStore(cmd.Context(), func(st store.Store) error {
				err := st.RevokeOAuthGrant(cmd.Context(), args[0])
				if errors.Is(err, store.ErrNotFound) {
					return fmt.Errorf("there is no live grant %s (see `t3agent mcp-server grants list`)", args[0])
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(a.env.Stdout, "Grant %s revoked.\n", args[0])
				return nil
			})
		},
	}
}

func (a *app) mcpCallsCommand() *cobra.Command {
	var user string
	var limit int
	cmd := &cobra.Command{
		Use:   "calls [--user USERNAME] [--limit N]",
		Short: "The record of tool calls through /mcp, newest first (never their arguments)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 0 || limit > store.MaxRunLimit {
				return fmt.Errorf("--limit must be between 0 and %d", store.MaxRunLimit)
			}
			return a.withStore(cmd.Context(), func(st store.Store) error {
				calls, err := st.MCPCalls(cmd.Context(), store.ListMCPCallsParams{ActorUsername: user, Limit: limit})
				if err != nil {
					return err
				}
				if a.jsonOut {
					return writeJSON(a.env.Stdout, calls)
				}
				tw := tabwriter.NewWriter(a.env.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "TIME\tUSER\tCLIENT\tCONFIGURATION\tTOOL\tDECISION\tOUTCOME\tRUN\tDURATION")
				for _, c := range calls {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.CreatedAt.Format(time.DateTime), c.ActorUsername, c.Client,
						orDash(c.Configuration), c.Tool, c.Decision, c.Outcome, orDash(c.RunID), c.Duration.Round(time.Microsecond))
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().StringVar(&user, "user", "", "only this backend user's calls")
	cmd.Flags().IntVar(&limit, "limit", 0, "how many (default 50)")
	return cmd
}
