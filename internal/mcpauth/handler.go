package mcpauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/store"
)

// Handler returns the OAuth handler of a server's requests: nil when the
// server does not use OAuth, an error wrapping mcp.ErrNeedsLogin when a
// person must log in first. The same handler is returned while the
// grant is unchanged.
func (m *Manager) Handler(ctx context.Context, server string) (auth.OAuthHandler, error) {
	r, err := m.p.Store.MCPOAuthRecord(ctx, server)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if r.Flow == FlowAuthorizationCode && m.p.Authorize == nil && (r.Status == StatusNeedsLogin || r.SealedToken == "") {
		return nil, fmt.Errorf("MCP server %q: %w", server, mcp.ErrNeedsLogin)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if h := m.handlers[server]; h != nil && h.current(r) {
		return h, nil
	}
	h := &handler{m: m, rec: r}
	if r.SealedToken != "" {
		g, err := m.open(r)
		if err != nil {
			return nil, err
		}
		h.use(r, g)
	}
	m.handlers[server] = h
	return h, nil
}

// handler is one server's auth.OAuthHandler for calls.
type handler struct {
	m *Manager

	mu  sync.Mutex
	rec store.MCPOAuthRecord // the record its grant came from (or went to)
	ts  oauth2.TokenSource   // nil: no token yet
}

// current reports whether h still holds the grant r stores.
func (h *handler) current(r store.MCPOAuthRecord) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.rec.SealedToken == r.SealedToken && h.rec.Flow == r.Flow && h.rec.ClientID == r.ClientID &&
		h.rec.SealedClientSecret == r.SealedClientSecret
}

// use makes g the handler's grant; its refreshes are stored.
func (h *handler) use(r store.MCPOAuthRecord, g grant) {
	cfg := &oauth2.Config{
		ClientID: g.ClientID, ClientSecret: g.ClientSecret, Scopes: g.Scopes,
		Endpoint: oauth2.Endpoint{TokenURL: g.TokenURL, AuthStyle: g.AuthStyle},
	}
	// The token source outlives any one request; the oauth2 package keeps
	// this context for every refresh, so it carries only the HTTP client.
	bg := context.WithValue(context.Background(), oauth2.HTTPClient, h.m.p.HTTPClient)
	h.rec = r
	h.ts = &savingSource{h: h, base: cfg.TokenSource(bg, g.Token), last: g.Token.AccessToken, g: g}
}

func (h *handler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ts == nil {
		return nil, nil
	}
	return h.ts, nil
}

// Authorize answers a 401 or 403 of a call.
func (h *handler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	h.mu.Lock()
	rec := h.rec
	h.mu.Unlock()
	m := h.m
	if resp.StatusCode == http.StatusForbidden && challengeError(resp) != "insufficient_scope" {
		// Not an authorization problem: the retry fails the same way and
		// the call reports the 403.
		discard(resp)
		return nil
	}
	if rec.Flow == FlowClientCredentials {
		ts, err := m.clientCredentials(ctx, rec, req, resp)
		if err != nil {
			m.log.WarnContext(ctx, "MCP OAuth client credentials refused", "server", rec.Server, "error", err.Error())
			return fmt.Errorf("the client credentials grant of MCP server %q failed: %w", rec.Server, err)
		}
		h.mu.Lock()
		h.ts = ts
		h.mu.Unlock()
		return nil
	}
	// A login elsewhere (another process) may have stored a newer grant.
	if fresh, err := m.p.Store.MCPOAuthRecord(ctx, rec.Server); err == nil && fresh.SealedToken != "" &&
		fresh.SealedToken != rec.SealedToken && fresh.Status == StatusConnected {
		if g, err := m.open(fresh); err == nil {
			discard(resp)
			h.mu.Lock()
			h.use(fresh, g)
			h.mu.Unlock()
			return nil
		}
	}
	wanted := challengeScopes(resp)
	if m.p.Authorize != nil {
		r, g, issuer, err := m.codeFlow(ctx, rec, m.p.Authorize, "", req, resp)
		if err != nil {
			return err
		}
		stored, err := m.storeGrant(ctx, r, issuer, g)
		if err != nil {
			return err
		}
		h.mu.Lock()
		h.use(stored, g)
		h.mu.Unlock()
		return nil
	}
	discard(resp)
	reason := "the server refused the grant (revoked or expired)"
	if resp.StatusCode == http.StatusForbidden {
		reason = "the server asks for more scope: " + strings.Join(wanted, " ")
		rec.Scopes = strings.Join(unionScopes(strings.Fields(rec.Scopes), wanted), " ")
		rec.Status, rec.StatusReason = StatusNeedsLogin, reason
		if _, err := m.p.Store.PutMCPOAuth(context.WithoutCancel(ctx), rec); err != nil {
			m.log.WarnContext(ctx, "MCP OAuth scopes not recorded", "server", rec.Server, "error", err.Error())
		}
	}
	m.needsLogin(ctx, rec.Server, reason)
	return fmt.Errorf("MCP server %q: %w", rec.Server, mcp.ErrNeedsLogin)
}

// savingSource stores every new token (a refresh, which may rotate the
// refresh token) and marks the server as needing login when the
// authorization server refuses the refresh token.
type savingSource struct {
	h    *handler
	base oauth2.TokenSource
	mu   sync.Mutex
	last string // access token last stored
	g    grant
}

func (s *savingSource) Token() (*oauth2.Token, error) {
	t, err := s.base.Token()
	m := s.h.m
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode == "invalid_grant" {
			s.h.mu.Lock()
			server := s.h.rec.Server
			s.h.mu.Unlock()
			m.needsLogin(context.Background(), server, "the authorization server refused the refresh token (revoked or expired)")
		}
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.AccessToken == s.last {
		return t, nil
	}
	s.last = t.AccessToken
	g := s.g
	g.Token = t
	s.h.mu.Lock()
	rec := s.h.rec
	s.h.mu.Unlock()
	stored, err := m.storeGrant(context.Background(), rec, rec.Issuer, g)
	if err != nil {
		m.log.Warn("MCP OAuth refresh not stored", "server", rec.Server, "error", err.Error())
		return t, nil
	}
	s.g = g
	s.h.mu.Lock()
	s.h.rec = stored
	s.h.mu.Unlock()
	// The refreshed grant is this handler's own: keep the session.
	m.log.Info("MCP OAuth token refreshed", "server", rec.Server)
	return t, nil
}

// codeFlow runs the authorization code flow for a challenged request
// with the SDK's handler and returns the record (scopes updated), the
// grant and its issuer. fetch shows or follows the authorization URL.
func (m *Manager) codeFlow(ctx context.Context, rec store.MCPOAuthRecord, fetch auth.AuthorizationCodeFetcher, override string, req *http.Request, resp *http.Response) (store.MCPOAuthRecord, grant, string, error) {
	var (
		mu       sync.Mutex
		issuer   string
		resource string
		asked    []string
		got      *oauth2.Token
		cfgUsed  *oauth2.Config
	)
	client := &http.Client{
		Transport:     &issuerWatch{next: m.p.HTTPClient.Transport, seen: func(iss string) { mu.Lock(); issuer = iss; mu.Unlock() }},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	if client.Transport.(*issuerWatch).next == nil {
		client.Transport.(*issuerWatch).next = http.DefaultTransport
	}
	redirect := rec.RedirectURL
	if redirect == "" {
		redirect = LoopbackRedirect
	}
	if override != "" {
		redirect = override
	}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL: redirect,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			if u, err := url.Parse(args.URL); err == nil {
				mu.Lock()
				resource, asked = u.Query().Get("resource"), strings.Fields(u.Query().Get("scope"))
				mu.Unlock()
			}
			return fetch(ctx, args)
		},
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{redirect}, ClientName: m.p.ClientName,
			GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
		}},
		RequestRefreshToken: true,
		Client:              client,
		ScopeFilter:         func(d []string) []string { return unionScopes(d, strings.Fields(rec.Scopes)) },
		NewTokenSource: func(ctx context.Context, c *oauth2.Config, t *oauth2.Token) (oauth2.TokenSource, error) {
			mu.Lock()
			got, cfgUsed = t, c
			mu.Unlock()
			// The SDK's handler may already refresh (a short-lived token):
			// the grant stored is the last token, whose refresh token is
			// the live one after a rotation.
			return &watchSource{base: c.TokenSource(ctx, t), seen: func(t *oauth2.Token) { mu.Lock(); got = t; mu.Unlock() }}, nil
		},
	}
	switch {
	case rec.ClientID != "" && isHTTPSPath(rec.ClientID):
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: rec.ClientID}
	case rec.ClientID != "":
		sec, err := m.openSecret(rec)
		if err != nil {
			discard(resp)
			return rec, grant{}, "", err
		}
		cfg.PreregisteredClient = &oauthex.ClientCredentials{ClientID: rec.ClientID}
		if sec.Secret != "" {
			cfg.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: sec.Secret}
		}
	case m.p.ClientMetadataURL != "":
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: m.p.ClientMetadataURL}
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		discard(resp)
		return rec, grant{}, "", err
	}
	if err := h.Authorize(ctx, req, resp); err != nil {
		m.log.WarnContext(ctx, "MCP OAuth login failed", "server", rec.Server, "error", err.Error())
		return rec, grant{}, "", fmt.Errorf("the OAuth login to MCP server %q failed: %w", rec.Server, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if got == nil || cfgUsed == nil {
		return rec, grant{}, "", fmt.Errorf("the OAuth login to MCP server %q ended without a token", rec.Server)
	}
	if issuer == "" {
		// No metadata (the 2025-03-26 fallback): the server's origin is
		// the authorization server.
		if u, err := url.Parse(cfgUsed.Endpoint.TokenURL); err == nil {
			issuer = u.Scheme + "://" + u.Host
		}
	}
	rec.Scopes = strings.Join(unionScopes(strings.Fields(rec.Scopes), asked), " ")
	g := grant{Token: got, ClientID: cfgUsed.ClientID, ClientSecret: cfgUsed.ClientSecret, TokenURL: cfgUsed.Endpoint.TokenURL,
		AuthStyle: cfgUsed.Endpoint.AuthStyle, Scopes: cfgUsed.Scopes, Resource: resource}
	m.log.InfoContext(ctx, "MCP OAuth login done", "server", rec.Server, "issuer", issuer, "scopes", rec.Scopes)
	return rec, g, issuer, nil
}

// LoginParams are the parameters of Login.
type LoginParams struct {
	Server string
	// Fetch shows the authorization URL to a person and waits for the
	// callback (Callbacks.Fetcher), or follows it (Follow).
	Fetch auth.AuthorizationCodeFetcher
	// Connect talks to the server with the handler until it challenges
	// (mcp.Service.Authorize).
	Connect func(ctx context.Context, h auth.OAuthHandler) error
	// RedirectURL, when set, is this login's redirect URL instead of the
	// configured one (a loopback URL with the port the login listens on).
	RedirectURL string
}

// Login runs the authorization code flow for a server and stores the
// grant. For a client credentials server it fetches a token.
func (m *Manager) Login(ctx context.Context, p LoginParams) (Status, error) {
	rec, err := m.p.Store.MCPOAuthRecord(ctx, p.Server)
	if errors.Is(err, store.ErrNotFound) {
		return Status{}, fmt.Errorf("the MCP server %q is not configured for OAuth (t3agent mcp oauth %s …)", p.Server, p.Server)
	}
	if err != nil {
		return Status{}, err
	}
	if p.Fetch == nil || p.Connect == nil {
		return Status{}, errors.New("mcpauth: Login needs Fetch and Connect")
	}
	lh := &loginHandler{m: m, rec: rec, fetch: p.Fetch, redirect: p.RedirectURL}
	if rec.Flow == FlowClientCredentials {
		lh.cc = &handler{m: m, rec: rec}
	}
	if err := p.Connect(ctx, lh); err != nil {
		return Status{}, err
	}
	if !lh.done() {
		return Status{}, fmt.Errorf("the MCP server %q did not ask for authorization; it needs no login", p.Server)
	}
	m.forget(p.Server)
	return m.Status(ctx, p.Server)
}

// loginHandler is the handler of a login: each challenge runs the flow.
type loginHandler struct {
	m        *Manager
	fetch    auth.AuthorizationCodeFetcher
	redirect string
	cc       *handler // client credentials

	mu  sync.Mutex
	rec store.MCPOAuthRecord
	ts  oauth2.TokenSource
}

func (l *loginHandler) done() bool {
	if l.cc != nil {
		ts, _ := l.cc.TokenSource(context.Background())
		return ts != nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ts != nil
}

func (l *loginHandler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	if l.cc != nil {
		return l.cc.TokenSource(ctx)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ts == nil {
		return nil, nil
	}
	return l.ts, nil
}

func (l *loginHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	if l.cc != nil {
		return l.cc.Authorize(ctx, req, resp)
	}
	if resp.StatusCode == http.StatusForbidden && challengeError(resp) != "insufficient_scope" {
		discard(resp)
		return nil
	}
	l.mu.Lock()
	rec := l.rec
	l.mu.Unlock()
	r, g, issuer, err := l.m.codeFlow(ctx, rec, l.fetch, l.redirect, req, resp)
	if err != nil {
		return err
	}
	stored, err := l.m.storeGrant(ctx, r, issuer, g)
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.rec = stored
	l.ts = oauth2.StaticTokenSource(g.Token)
	l.mu.Unlock()
	return nil
}

// watchSource reports every token it hands out.
type watchSource struct {
	base oauth2.TokenSource
	seen func(*oauth2.Token)
}

func (w *watchSource) Token() (*oauth2.Token, error) {
	t, err := w.base.Token()
	if err == nil {
		w.seen(t)
	}
	return t, err
}

// issuerWatch notes the issuer of the authorization server metadata the
// SDK's handler fetched (and validated), so the grant can be bound to it.
type issuerWatch struct {
	next http.RoundTripper
	seen func(issuer string)
}

func (w *issuerWatch) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := w.next.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK || !isASMetadataPath(req.URL.Path) {
		return resp, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var meta struct {
		Issuer string `json:"issuer"`
	}
	if json.Unmarshal(body, &meta) == nil && meta.Issuer != "" {
		w.seen(meta.Issuer)
	}
	return resp, nil
}

func isASMetadataPath(p string) bool {
	return strings.Contains(p, "/.well-known/oauth-authorization-server") || strings.Contains(p, "/.well-known/openid-configuration")
}

func challenges(resp *http.Response) []oauthex.Challenge {
	cs, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	return cs
}

func challengeError(resp *http.Response) string {
	for _, c := range challenges(resp) {
		if c.Scheme == "bearer" && c.Params["error"] != "" {
			return c.Params["error"]
		}
	}
	return ""
}

func challengeScopes(resp *http.Response) []string {
	for _, c := range challenges(resp) {
		if c.Scheme == "bearer" && c.Params["scope"] != "" {
			return strings.Fields(c.Params["scope"])
		}
	}
	return nil
}

func discard(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
}
