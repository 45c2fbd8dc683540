package mcpauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"

	"github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/secret"
	"github.com/t3agent/t3agent/internal/store"
)

// Flows.
const (
	FlowAuthorizationCode = store.MCPOAuthAuthorizationCode
	FlowClientCredentials = store.MCPOAuthClientCredentials
)

// Statuses.
const (
	StatusNeedsLogin = store.MCPOAuthNeedsLogin
	StatusConnected  = store.MCPOAuthConnected
)

// Store is what a Manager needs from the store.
type Store interface {
	store.MCPOAuth
	MCPServer(ctx context.Context, identifier string) (store.MCPServer, error)
}

// Params configure New.
type Params struct {
	Store   Store           // required
	Keyring *secret.Keyring // required: grants and client secrets are sealed
	// HTTPClient sends the OAuth requests (metadata, registration,
	// tokens); it should pass the egress guard (mcp.Service.HTTPClient).
	// Required.
	HTTPClient *http.Client
	// Logger receives what happened (never a token or a secret); nil
	// means slog.Default().
	Logger *slog.Logger
	// ClientMetadataURL is the https URL of t3agent's Client ID Metadata
	// Document, used as the client id where the authorization server
	// supports it; "" means none.
	ClientMetadataURL string
	// ClientName is sent in dynamic registrations; "" means "t3agent".
	ClientName string
	// Authorize, when set, lets a call that is refused (a revoked grant, a
	// step-up) run the authorization code flow again with it instead of
	// marking the server as needing login. Follow is such a function.
	Authorize auth.AuthorizationCodeFetcher
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Manager keeps the OAuth records and grants of MCP servers and gives
// the MCP client their handlers. It is safe for concurrent use.
type Manager struct {
	p   Params
	log *slog.Logger

	mu       sync.Mutex
	handlers map[string]*handler
}

var _ mcp.OAuthSource = (*Manager)(nil)

// New returns a Manager.
func New(p Params) (*Manager, error) {
	if p.Store == nil || p.Keyring == nil || p.HTTPClient == nil {
		return nil, errors.New("mcpauth: a store, a keyring and an HTTP client are required")
	}
	if p.ClientMetadataURL != "" && !isHTTPSPath(p.ClientMetadataURL) {
		return nil, fmt.Errorf("mcpauth: the client metadata document URL must be an https URL with a path, not %q", p.ClientMetadataURL)
	}
	if p.ClientName == "" {
		p.ClientName = "t3agent"
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	m := &Manager{p: p, log: p.Logger, handlers: map[string]*handler{}}
	if m.log == nil {
		m.log = slog.Default()
	}
	return m, nil
}

func isHTTPSPath(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && u.Scheme == "https" && u.Host != "" && strings.Trim(u.Path, "/") != ""
}

// ConfigureParams are the parameters of Configure.
type ConfigureParams struct {
	Server string // a configured MCP server
	Flow   string // FlowAuthorizationCode ("" too) or FlowClientCredentials
	// ClientID is a pre-registered client id, or the https URL of a Client
	// ID Metadata Document; "" registers dynamically (authorization code
	// only). Client credentials need it.
	ClientID string
	// ClientSecret is the pre-registered client's secret; sealed, never
	// shown again.
	ClientSecret string
	// PrivateKeyPEM, instead of a secret, signs a private_key_jwt client
	// assertion (client credentials only); sealed like the secret.
	PrivateKeyPEM string
	// Scopes are asked for beside the ones the server names.
	Scopes []string
	// RedirectURL receives the authorization response (authorization
	// code only); "" means a loopback URL whose port the login picks
	// (RFC 8252 §7.3: authorization servers accept any loopback port).
	RedirectURL string
}

// clientSecret is what the client_secret column seals: a secret or a key.
type clientSecret struct {
	Secret     string `json:"secret,omitempty"`
	PrivateKey string `json:"privateKey,omitempty"`
}

// Configure stores how t3agent authorizes itself to a server. It replaces
// an earlier configuration and forgets its grant: the server needs a
// login (or, for client credentials, gets its token on the first call).
func (m *Manager) Configure(ctx context.Context, p ConfigureParams) error {
	if p.Flow == "" {
		p.Flow = FlowAuthorizationCode
	}
	switch p.Flow {
	case FlowAuthorizationCode:
		u, err := url.Parse(p.RedirectURL)
		if p.RedirectURL != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
			return fmt.Errorf("the OAuth redirect URL must be an absolute http(s) URL, not %q", p.RedirectURL)
		}
		if p.PrivateKeyPEM != "" {
			return errors.New("a private key signs client assertions of the client credentials flow only")
		}
	case FlowClientCredentials:
		if p.ClientID == "" || (p.ClientSecret == "") == (p.PrivateKeyPEM == "") {
			return errors.New("the client credentials flow needs a client id and either a client secret or a private key")
		}
		if p.PrivateKeyPEM != "" {
			if _, err := parsePrivateKey(p.PrivateKeyPEM); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("the OAuth flow %q is not authorization_code or client_credentials", p.Flow)
	}
	for _, s := range p.Scopes {
		if s == "" || strings.ContainsAny(s, " \t\r\n\"\\") {
			return fmt.Errorf("the OAuth scope %q is not a scope token", s)
		}
	}
	if _, err := m.p.Store.MCPServer(ctx, p.Server); err != nil {
		return err
	}
	sealed := ""
	if p.ClientSecret != "" || p.PrivateKeyPEM != "" {
		b, _ := json.Marshal(clientSecret{Secret: p.ClientSecret, PrivateKey: p.PrivateKeyPEM})
		var err error
		if sealed, err = m.p.Keyring.Seal(b, secretAD(p.Server)); err != nil {
			return err
		}
	}
	status := StatusNeedsLogin
	if p.Flow == FlowClientCredentials {
		status = StatusConnected // no person is needed
	}
	_, err := m.p.Store.PutMCPOAuth(ctx, store.MCPOAuthRecord{
		Server: p.Server, Flow: p.Flow, ClientID: p.ClientID, SealedClientSecret: sealed,
		Scopes: strings.Join(p.Scopes, " "), RedirectURL: p.RedirectURL, Status: status,
		StatusReason: reasonNoLogin,
	})
	if err != nil {
		return err
	}
	m.forget(p.Server)
	m.log.InfoContext(ctx, "MCP OAuth configured", "server", p.Server, "flow", p.Flow)
	return nil
}

const reasonNoLogin = "no login yet"

// LoopbackRedirect is the redirect URL of a login without a configured
// one, before its port is known; logins that follow the authorization
// URL themselves never call it.
const LoopbackRedirect = "http://127.0.0.1/oauth/mcp/callback"

// Remove forgets a server's OAuth record and grant; the server then
// uses its static auth (if any) again.
func (m *Manager) Remove(ctx context.Context, server string) error {
	err := m.p.Store.DeleteMCPOAuth(ctx, server)
	m.forget(server)
	return err
}

// Status is a server's OAuth state as operators see it; it holds no
// token.
type Status struct {
	Server      string    `json:"server"`
	Flow        string    `json:"flow"`
	Status      string    `json:"status"` // needs_login or connected
	Reason      string    `json:"reason,omitempty"`
	Issuer      string    `json:"issuer,omitempty"`
	Scopes      []string  `json:"scopes"`
	Expiry      time.Time `json:"expiry,omitzero"` // of the access token
	Refreshable bool      `json:"refreshable"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// Status returns a server's OAuth state; store.ErrNotFound when the
// server does not use OAuth.
func (m *Manager) Status(ctx context.Context, server string) (Status, error) {
	r, err := m.p.Store.MCPOAuthRecord(ctx, server)
	if err != nil {
		return Status{}, err
	}
	st := Status{Server: r.Server, Flow: r.Flow, Status: r.Status, Issuer: r.Issuer, Scopes: strings.Fields(r.Scopes), UpdatedAt: r.UpdatedAt}
	if r.Status == StatusNeedsLogin {
		st.Reason = r.StatusReason
	}
	if st.Scopes == nil {
		st.Scopes = []string{}
	}
	if r.SealedToken != "" {
		if g, err := m.open(r); err == nil && g.Token != nil {
			st.Expiry, st.Refreshable = g.Token.Expiry, g.Token.RefreshToken != ""
		}
	}
	return st, nil
}

// Statuses lists the OAuth state of every server that uses OAuth.
func (m *Manager) Statuses(ctx context.Context) ([]Status, error) {
	rows, err := m.p.Store.MCPOAuthRecords(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Status, 0, len(rows))
	for _, r := range rows {
		st, err := m.Status(ctx, r.Server)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// Logout forgets a server's grant; the server needs a login again.
func (m *Manager) Logout(ctx context.Context, server string) error {
	if _, err := m.p.Store.SetMCPOAuthGrant(ctx, store.SetMCPOAuthGrantParams{Server: server, Status: StatusNeedsLogin, StatusReason: "logged out"}); err != nil {
		return err
	}
	m.forget(server)
	return nil
}

// grant is what the token column seals: the tokens and what refreshing
// them needs.
type grant struct {
	Token        *oauth2.Token    `json:"token"`
	ClientID     string           `json:"clientId"`
	ClientSecret string           `json:"clientSecret,omitempty"`
	TokenURL     string           `json:"tokenUrl"`
	AuthStyle    oauth2.AuthStyle `json:"authStyle"`
	Scopes       []string         `json:"scopes,omitempty"`
	Resource     string           `json:"resource,omitempty"`
}

// grantAD binds a sealed grant to its server and issuer: a grant copied
// to another server's row, or presented as another issuer's, does not
// open.
func grantAD(server, issuer string) string { return "mcp_oauth_grant:" + server + "\n" + issuer }

func secretAD(server string) string { return "mcp_oauth_client:" + server }

func (m *Manager) open(r store.MCPOAuthRecord) (grant, error) {
	plain, err := m.p.Keyring.Open(r.SealedToken, grantAD(r.Server, r.Issuer))
	if err != nil {
		return grant{}, fmt.Errorf("the OAuth grant of MCP server %q cannot be opened (wrong master key or corrupt value)", r.Server)
	}
	var g grant
	if err := json.Unmarshal(plain, &g); err != nil || g.Token == nil {
		return grant{}, fmt.Errorf("the OAuth grant of MCP server %q is corrupt", r.Server)
	}
	return g, nil
}

func (m *Manager) openSecret(r store.MCPOAuthRecord) (clientSecret, error) {
	if r.SealedClientSecret == "" {
		return clientSecret{}, nil
	}
	plain, err := m.p.Keyring.Open(r.SealedClientSecret, secretAD(r.Server))
	if err != nil {
		return clientSecret{}, fmt.Errorf("the OAuth client secret of MCP server %q cannot be opened (wrong master key or corrupt value)", r.Server)
	}
	var cs clientSecret
	if err := json.Unmarshal(plain, &cs); err != nil {
		return clientSecret{}, fmt.Errorf("the OAuth client secret of MCP server %q is corrupt", r.Server)
	}
	return cs, nil
}

// store seals g and stores it as the server's grant from issuer.
func (m *Manager) storeGrant(ctx context.Context, r store.MCPOAuthRecord, issuer string, g grant) (store.MCPOAuthRecord, error) {
	b, err := json.Marshal(g)
	if err != nil {
		return r, err
	}
	sealed, err := m.p.Keyring.Seal(b, grantAD(r.Server, issuer))
	if err != nil {
		return r, err
	}
	r.Issuer, r.SealedToken, r.Status, r.StatusReason = issuer, sealed, StatusConnected, ""
	return m.p.Store.PutMCPOAuth(context.WithoutCancel(ctx), r)
}

// needsLogin marks the server as needing a person's login, for reason.
func (m *Manager) needsLogin(ctx context.Context, server, reason string) {
	if _, err := m.p.Store.SetMCPOAuthGrant(context.WithoutCancel(ctx), store.SetMCPOAuthGrantParams{
		Server: server, Status: StatusNeedsLogin, StatusReason: reason,
	}); err != nil {
		m.log.WarnContext(ctx, "MCP OAuth status not recorded", "server", server, "error", err.Error())
	}
	m.forget(server)
	m.log.WarnContext(ctx, "MCP server needs an OAuth login", "server", server, "reason", reason)
}

func (m *Manager) forget(server string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.handlers, server)
}

func unionScopes(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
