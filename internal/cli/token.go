package cli

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/web"
)

// tokenPrefix starts every service token secret, so that a leaked one is
// recognisable (secret scanners, logs).
const tokenPrefix = "t3a_"

// newTokenSecret returns a fresh secret ("t3a_" and 32 random bytes,
// base64url without padding) and the hash that is stored for it: the hex
// SHA-256 of the whole secret. 256 random bits need no salt or
// stretching, and a plain hash lets the API find the token by it.
func newTokenSecret() (secret, hash string, err error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", fmt.Errorf("cannot read random bytes for the token: %w", err)
	}
	secret = tokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	// The API looks a bearer token up by this hash: one definition.
	return secret, web.HashSecret(secret), nil
}

// tokenNamePattern keeps names printable in a table and a shell.
var tokenNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// parseScopes checks the --scopes values against store.Scopes.
func parseScopes(values []string) ([]store.Scope, error) {
	valid := store.Scopes()
	names := make([]string, len(valid))
	for i, s := range valid {
		names[i] = string(s)
	}
	var out []store.Scope
	for _, v := range values {
		s := store.Scope(strings.TrimSpace(v))
		if s == "" {
			continue
		}
		if !slices.Contains(valid, s) {
			return nil, fmt.Errorf("--scopes: %q is not a scope; the scopes are %s", v, strings.Join(names, ", "))
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("token create needs --scopes: one or more of %s", strings.Join(names, ", "))
	}
	return out, nil
}

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

// tokenView is a token as the commands show it: never its secret or hash.
type tokenView struct {
	Name       string        `json:"name"`
	Username   string        `json:"username"`
	Scopes     []store.Scope `json:"scopes"`
	CreatedBy  string        `json:"createdBy"`
	CreatedAt  time.Time     `json:"createdAt"`
	ExpiresAt  *time.Time    `json:"expiresAt"`
	LastUsedAt *time.Time    `json:"lastUsedAt"`
	Revoked    bool          `json:"revoked"`
}

func viewToken(t store.ServiceToken) tokenView {
	v := tokenView{Name: t.Name, Username: t.Username, Scopes: t.Scopes, CreatedBy: t.CreatedBy, CreatedAt: t.CreatedAt, Revoked: t.Revoked}
	if v.Scopes == nil {
		v.Scopes = []store.Scope{}
	}
	if !t.ExpiresAt.IsZero() {
		v.ExpiresAt = &t.ExpiresAt
	}
	if !t.LastUsedAt.IsZero() {
		v.LastUsedAt = &t.LastUsedAt
	}
	return v
}

// state is a token's standing at now.
func (v tokenView) state(now time.Time) string {
	switch {
	case v.Revoked:
		return "revoked"
	case v.ExpiresAt != nil && !v.ExpiresAt.After(now):
		return "expired"
	}
	return "active"
}

func scopeList(s []store.Scope) string {
	names := make([]string, len(s))
	for i, x := range s {
		names[i] = string(x)
	}
	return strings.Join(names, ",")
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
			if !tokenNamePattern.MatchString(name) {
				if name == "" {
					return errors.New("token create needs --name: a unique name for the token")
				}
				return fmt.Errorf("--name: %q is not a token name (letters, digits, _ . -, at most 64)", name)
			}
			if username == "" {
				return errors.New("token create needs --user USERNAME: the backend user the token acts as")
			}
			sc, err := parseScopes(scopes)
			if err != nil {
				return err
			}
			if expires < 0 {
				return errors.New("--expires must not be negative (0 never expires)")
			}
			ctx := cmd.Context()
			return a.withRuntime(ctx, func(r *runtime) error {
				createdBy := "cli"
				if a.as != "" {
					by, err := a.actor(ctx, r.site)
					if err != nil {
						return err
					}
					if !by.Admin {
						return fmt.Errorf("--as %s: only TYPO3 admins create service tokens", a.as)
					}
					createdBy = by.Username
				}
				u, err := r.site.BackendUserByName(ctx, username)
				if errors.Is(err, typo3.ErrUserCannotAct) {
					return fmt.Errorf("--user %s: this backend user cannot act (unknown, disabled, deleted or expired)", username)
				}
				if err != nil {
					return err
				}
				if slices.Contains(sc, store.ScopeAdmin) && !u.Admin {
					return fmt.Errorf("--scopes: admin needs a TYPO3 admin as --user, and %s is not one", u.Username)
				}
				secret, hash, err := newTokenSecret()
				if err != nil {
					return err
				}
				p := store.CreateServiceTokenParams{Name: name, Username: u.Username, Scopes: sc, SecretHash: hash, CreatedBy: createdBy}
				if expires > 0 {
					p.ExpiresAt = time.Now().Add(expires).UTC()
				}
				tok, err := r.store.CreateServiceToken(ctx, p)
				if errors.Is(err, store.ErrConflict) {
					return fmt.Errorf("--name: a token named %s already exists; choose another name", name)
				}
				if err != nil {
					return err
				}
				if a.jsonOut {
					return writeJSON(a.env.Stdout, struct {
						tokenView
						Secret string `json:"secret"`
					}{viewToken(tok), secret})
				}
				exp := "never expires"
				if !tok.ExpiresAt.IsZero() {
					exp = "expires " + tok.ExpiresAt.Format(time.RFC3339)
				}
				fmt.Fprintf(a.env.Stderr, "Token %s acts as %s with %s and %s. Store the secret below now: it is not shown again.\n",
					tok.Name, tok.Username, scopeList(tok.Scopes), exp)
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
				views := make([]tokenView, len(toks))
				for i, t := range toks {
					views[i] = viewToken(t)
				}
				if a.jsonOut {
					return writeJSON(a.env.Stdout, views)
				}
				now := time.Now()
				tw := tabwriter.NewWriter(a.env.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tUSER\tSCOPES\tSTATE\tCREATED\tBY\tEXPIRES\tLAST USED")
				for _, v := range views {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", v.Name, v.Username, scopeList(v.Scopes), v.state(now),
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
				err := st.RevokeServiceToken(cmd.Context(), args[0])
				if errors.Is(err, store.ErrNotFound) {
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
