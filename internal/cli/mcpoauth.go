package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/spf13/cobra"

	"github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/mcpauth"
	"github.com/t3agent/t3agent/internal/store"
)

// callbackPath is where an authorization server sends t3agent's login
// back to, on t3agent's own address.
const callbackPath = "/oauth/mcp/callback"

// listedServer is a server as `mcp list` shows it: with its OAuth state
// when it uses OAuth.
type listedServer struct {
	mcp.Server
	OAuth *mcpauth.Status `json:"oauth,omitempty"`
}

func (a *app) withOAuth(ctx context.Context, r *runtime, servers []mcp.Server) ([]listedServer, error) {
	states := map[string]mcpauth.Status{}
	if r.mcpAuth != nil {
		list, err := r.mcpAuth.Statuses(ctx)
		if err != nil {
			return nil, err
		}
		for _, s := range list {
			states[s.Server] = s
		}
	}
	out := make([]listedServer, len(servers))
	for i, s := range servers {
		s.URL = displayURL(s.URL)
		out[i] = listedServer{Server: s}
		if st, ok := states[s.Identifier]; ok {
			out[i].OAuth = &st
		}
	}
	return out, nil
}

func authText(l listedServer) string {
	if l.OAuth == nil {
		return string(l.Server.Auth)
	}
	if l.OAuth.Status == mcpauth.StatusNeedsLogin {
		return "oauth: needs login"
	}
	return "oauth"
}

func (a *app) needAuth(r *runtime) (*mcpauth.Manager, error) {
	if r.mcpAuth == nil {
		return nil, errors.New("OAuth grants are sealed with the master key, and none is configured (security.master_key)")
	}
	return r.mcpAuth, nil
}

func (a *app) mcpOAuthCommand() *cobra.Command {
	var p mcpauth.ConfigureParams
	var secretEnv, keyFile string
	var secretStdin, remove bool
	cmd := &cobra.Command{
		Use:   "oauth ID [flags] --as ADMIN",
		Short: "Authorize t3agent to an MCP server with OAuth 2.1 (then: t3agent mcp login ID)",
		Long: "Configure OAuth 2.1 for an MCP server. By default t3agent logs in with the authorization code flow " +
			"(PKCE), registering itself dynamically unless --client-id names a pre-registered client or a Client ID " +
			"Metadata Document URL; --flow client_credentials is for machine-to-machine servers. The grant is sealed " +
			"with the master key; a replaced configuration needs a new login.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p.Server = args[0]
			if remove {
				return a.withAdmin(cmd.Context(), "mcp oauth", func(r *runtime, _ string) error {
					m, err := a.needAuth(r)
					if err != nil {
						return err
					}
					if err := m.Remove(cmd.Context(), p.Server); err != nil {
						return err
					}
					_, err = fmt.Fprintf(a.env.Stdout, "%s no longer uses OAuth\n", p.Server)
					return err
				})
			}
			var err error
			if p.ClientSecret, _, err = a.credentialFrom(cmd, secretEnv, secretStdin); err != nil {
				return err
			}
			if keyFile != "" {
				b, err := os.ReadFile(keyFile)
				if err != nil {
					return fmt.Errorf("--private-key-file: %w", err)
				}
				p.PrivateKeyPEM = string(b)
			}
			return a.withAdmin(cmd.Context(), "mcp oauth", func(r *runtime, _ string) error {
				m, err := a.needAuth(r)
				if err != nil {
					return err
				}
				if err := m.Configure(cmd.Context(), p); err != nil {
					return err
				}
				st, err := m.Status(cmd.Context(), p.Server)
				if err != nil {
					return err
				}
				return a.printOAuth(st)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&p.Flow, "flow", mcpauth.FlowAuthorizationCode, "authorization_code (a person logs in once) or client_credentials")
	f.StringVar(&p.ClientID, "client-id", "", "a pre-registered client id, or the https URL of a Client ID Metadata Document (default: dynamic registration)")
	f.StringVar(&secretEnv, "client-secret-env", "", "read the pre-registered client's secret from this environment variable")
	f.BoolVar(&secretStdin, "client-secret-stdin", false, "read the pre-registered client's secret from standard input")
	f.StringVar(&keyFile, "private-key-file", "", "a PEM private key for private_key_jwt client assertions (client_credentials)")
	f.StringSliceVar(&p.Scopes, "scope", nil, "a scope to ask for beside those the server names (repeatable)")
	f.StringVar(&p.RedirectURL, "redirect-url", "", "where the authorization server sends the person back (default: http://127.0.0.1:PORT"+callbackPath+", the port chosen by each login)")
	f.BoolVar(&remove, "remove", false, "stop using OAuth for the server and forget its grant")
	return cmd
}

func (a *app) mcpLoginCommand() *cobra.Command {
	var follow bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "login ID --as ADMIN",
		Short: "Log t3agent in to an OAuth-protected MCP server: prints the URL to open, awaits the callback",
		Long: "Log in to an MCP server configured with `t3agent mcp oauth`. The command prints the authorization URL; " +
			"open it, log in and approve; the authorization server sends the browser back to the redirect URL, " +
			"where this command listens (stop `t3agent serve` first when it uses the same address, or configure " +
			"another --redirect-url). With --follow t3agent opens the URL itself, for authorization servers " +
			"that approve without a person.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			server := args[0]
			return a.withAdmin(cmd.Context(), "mcp login", func(r *runtime, _ string) error {
				m, err := a.needAuth(r)
				if err != nil {
					return err
				}
				ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
				defer cancel()
				var fetch auth.AuthorizationCodeFetcher
				redirect := ""
				if follow {
					client, err := mcp.NewHTTPClient(nil)
					if err != nil {
						return err
					}
					fetch = mcpauth.Follow(client)
				} else {
					rec, err := r.store.MCPOAuthRecord(ctx, server)
					if errors.Is(err, store.ErrNotFound) {
						return fmt.Errorf("the MCP server %q is not configured for OAuth (t3agent mcp oauth %s --as ADMIN)", server, server)
					}
					if err != nil {
						return err
					}
					stop, f, used, err := a.listenCallback(rec.RedirectURL)
					if err != nil {
						return err
					}
					defer stop()
					fetch, redirect = f, used
				}
				st, err := m.Login(ctx, mcpauth.LoginParams{Server: server, Fetch: fetch, RedirectURL: redirect,
					Connect: func(ctx context.Context, h auth.OAuthHandler) error {
						_, err := r.mcp.Authorize(ctx, mcp.AuthorizeParams{Server: server, Handler: h, Timeout: timeout})
						return err
					}})
				if err != nil {
					return err
				}
				return a.printOAuth(st)
			})
		},
	}
	cmd.Flags().BoolVar(&follow, "follow", false, "follow the authorization URL without a person (authorization servers that approve at once)")
	cmd.Flags().DurationVar(&timeout, "timeout", mcp.DefaultLoginTimeout, "how long the login may take, the person's part included")
	return cmd
}

// listenCallback serves the redirect URL's path on its address until
// stop, and returns the fetcher that prints the authorization URL and
// waits for the browser to come back there.
//
// Without a configured redirect URL it listens on a free loopback port
// and returns the redirect URL with it.
func (a *app) listenCallback(redirect string) (stop func(), fetch auth.AuthorizationCodeFetcher, used string, err error) {
	if redirect == "" {
		redirect = "http://127.0.0.1:0" + callbackPath
	}
	u, err := url.Parse(redirect)
	if err != nil || u.Scheme != "http" {
		return nil, nil, "", fmt.Errorf("the redirect URL %q is not an http URL this command can listen on; log in with --follow or use an http loopback redirect URL", redirect)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "80")
	}
	ln, err := net.Listen("tcp", host)
	if err != nil {
		return nil, nil, "", fmt.Errorf("cannot listen on %s for the login's callback (is another program using it? configure another --redirect-url): %w", host, err)
	}
	if u.Port() == "0" {
		u.Host = ln.Addr().String()
	}
	cb := &mcpauth.Callbacks{}
	mux := http.NewServeMux()
	mux.Handle(u.Path, cb)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}
	used = u.String()
	return stop, cb.Fetcher(func(authURL string) {
		fmt.Fprintf(a.env.Stdout, "Open this URL in a browser, log in and approve:\n\n  %s\n\nWaiting for the authorization server to send the browser back to %s …\n", authURL, used)
	}), used, nil
}

func (a *app) mcpLogoutCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "logout ID --as ADMIN",
		Short: "Forget an MCP server's OAuth grant (it needs a login again)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withAdmin(cmd.Context(), "mcp logout", func(r *runtime, _ string) error {
				m, err := a.needAuth(r)
				if err != nil {
					return err
				}
				if err := m.Logout(cmd.Context(), args[0]); err != nil {
					return err
				}
				st, err := m.Status(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				return a.printOAuth(st)
			})
		},
	}
}

func (a *app) printOAuth(st mcpauth.Status) error {
	if a.jsonOut {
		return writeJSON(a.env.Stdout, st)
	}
	status := st.Status
	if st.Reason != "" {
		status += " (" + st.Reason + ")"
	}
	expiry := "-"
	if !st.Expiry.IsZero() {
		expiry = st.Expiry.UTC().Format(time.RFC3339)
	}
	_, err := fmt.Fprintf(a.env.Stdout, "server:\t%s\nflow:\t%s\nstatus:\t%s\nissuer:\t%s\nscopes:\t%s\ntoken expiry:\t%s\nrefreshable:\t%v\n",
		st.Server, st.Flow, status, orDash(st.Issuer), orDash(strings.Join(st.Scopes, " ")), expiry, st.Refreshable)
	return err
}
