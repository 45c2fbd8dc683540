package cli

import (
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/t3agent/t3agent/internal/servicetoken"
	"github.com/t3agent/t3agent/internal/store"
)

func (a *app) tokenCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Create, list and revoke service tokens for the API",
		Long: "A service token lets a machine call the API (`Authorization: Bearer t3a_…`) as a TYPO3 backend user, " +
			"limited to its scopes: agent:read (runs, events, inbox, tools), agent:run, agent:approve (decide approvals), " +
			"agent:cancel, admin (all of them). Only a hash of the secret is stored; the secret is shown once, at creation.",
	}
	cmd.AddCommand(a.tokenCreateCommand(), a.tokenListCommand(), a.tokenRevokeCommand())
	return cmd
}

// flagError phrases a refusal of the token service as the flag it
// came from.
func flagError(err error) error {
	var fe *servicetoken.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	switch fe.Field {
	case "user":
		return fmt.Errorf("--user %s: %s", fe.Value, fe.Msg)
	case "creator":
		return fmt.Errorf("--as %s: %s", fe.Value, fe.Msg)
	}
	return fmt.Errorf("--%s: %s", fe.Field, fe.Msg)
}

func (a *app) tokenCreateCommand() *cobra.Command {
	var name, username string
	var scopes []string
	var expires time.Duration
	cmd := &cobra.Command{
		Use:   "create --name N --user USERNAME --scopes agent:read,agent:approve [--expires 720h]",
		Short: "Create a service token and print its secret, once",
		Long: "Create a service token acting as the backend user --user, with --scopes. The secret goes to stdout " +
			"alone (so `TOKEN=$(t3agent token create …)` works) and is never shown again; only its SHA-256 is stored. " +
			"--expires takes a duration (720h, 30d); 0 never expires. With --as, the creator must be a TYPO3 admin " +
			"and is recorded; else the creator is recorded as cli.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" {
				return errors.New("token create needs --name: a unique name for the token")
			}
			if username == "" {
				return errors.New("token create needs --user USERNAME: the backend user the token acts as")
			}
			if len(scopes) == 0 {
				return errors.New("token create needs --scopes: one or more of " + servicetoken.ScopeNames())
			}
			sc, err := servicetoken.ParseScopes(scopes)
			if err != nil {
				return flagError(err)
			}
			if expires < 0 {
				return errors.New("--expires must not be negative (0 never expires)")
			}
			ctx := cmd.Context()
			return a.withRuntime(ctx, func(r *runtime) error {
				p := servicetoken.CreateParams{Name: name, Username: username, Scopes: sc, Expires: expires, CreatedBy: "cli"}
				if a.as != "" {
					by, err := a.actor(ctx, r.site)
					if err != nil {
						return err
					}
					p.Creator = by
				}
				created, err := servicetoken.New(servicetoken.Params{Store: r.store, Users: r.site}).Create(ctx, p)
				if err != nil {
					return flagError(err)
				}
				tok, secret := created.Token, created.Secret
				if a.jsonOut {
					return writeJSON(a.env.Stdout, struct {
						servicetoken.View
						Secret string `json:"secret"`
					}{servicetoken.ViewOf(tok), secret})
				}
				exp := "never expires"
				if !tok.ExpiresAt.IsZero() {
					exp = "expires " + tok.ExpiresAt.Format(time.RFC3339)
				}
				fmt.Fprintf(a.env.Stderr, "Token %s acts as %s with %s and %s. Store the secret below now: it is not shown again.\n",
					tok.Name, tok.Username, servicetoken.ViewOf(tok).ScopeList(), exp)
				fmt.Fprintln(a.env.Stdout, secret)
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&name, "name", "", "a unique name for the token (required)")
	f.StringVar(&username, "user", "", "the TYPO3 backend user the token acts as (required)")
	f.StringSliceVar(&scopes, "scopes", nil, "comma-separated scopes: agent:read, agent:run, agent:approve, agent:cancel, admin (required)")
	f.Var(daysDuration{&expires}, "expires", "lifetime, e.g. 720h or 30d (default: never expires)")
	return cmd
}

func (a *app) tokenListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the service tokens (never their secrets)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withStore(cmd.Context(), func(st store.Store) error {
				toks, err := st.ServiceTokens(cmd.Context())
				if err != nil {
					return err
				}
				views := make([]servicetoken.View, len(toks))
				for i, t := range toks {
					views[i] = servicetoken.ViewOf(t)
				}
				if a.jsonOut {
					return writeJSON(a.env.Stdout, views)
				}
				now := time.Now()
				tw := tabwriter.NewWriter(a.env.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tUSER\tSCOPES\tSTATE\tCREATED\tBY\tEXPIRES\tLAST USED")
				for _, v := range views {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", v.Name, v.Username, v.ScopeList(), v.State(now),
						v.CreatedAt.Format(time.DateTime), v.CreatedBy, timeOrDash(v.ExpiresAt), timeOrDash(v.LastUsedAt))
				}
				return tw.Flush()
			})
		},
	}
}

func timeOrDash(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Format(time.DateTime)
}

func (a *app) tokenRevokeCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "revoke NAME",
		Short: "Revoke a service token; requests with it are refused from then on",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withStore(cmd.Context(), func(st store.Store) error {
				err := servicetoken.New(servicetoken.Params{Store: st}).Revoke(cmd.Context(), args[0])
				if errors.Is(err, servicetoken.ErrNotFound) {
					return fmt.Errorf("there is no token named %s", args[0])
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(a.env.Stdout, "Token %s revoked.\n", args[0])
				return nil
			})
		},
	}
}
