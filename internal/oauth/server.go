package oauth

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/typo3"
)

// Defaults of Params.
const (
	DefaultAccessTTL  = 10 * time.Minute
	DefaultRefreshTTL = 30 * 24 * time.Hour
	DefaultRequestTTL = 10 * time.Minute
)

// accessPrefix marks t3agent's OAuth access tokens (and codes), so the
// MCP facade tells them from service tokens ("t3a_…") without a lookup.
const accessPrefix = "t3o_"

// IsAccessToken reports whether token is one of this server's access
// tokens (by its form; Verify checks it).
func IsAccessToken(token string) bool { return strings.HasPrefix(token, accessPrefix) }

// LoginError is a refused consent login: wrong credentials, or too many
// attempts (RetryAfter > 0).
type LoginError struct{ RetryAfter time.Duration }

func (e *LoginError) Error() string {
	if e.RetryAfter > 0 {
		return fmt.Sprintf("too many login attempts; try again in %s", e.RetryAfter.Round(time.Second))
	}
	return "the username or password is wrong"
}

// ConsentTool is a tool the host will get, shown on the consent page.
type ConsentTool struct {
	Name string
	// Approval: its calls wait for a person's approval.
	Approval bool
}

// Params configure New.
type Params struct {
	Store store.MCPServerState // required
	// Key (32 bytes, e.g. secret.Keyring.Derive) encrypts codes and access
	// tokens and derives the key that signs ID tokens; required.
	Key [32]byte
	// Login checks TYPO3 backend credentials on the consent page, under
	// the API's login limit (a *LoginError when refused); required.
	Login func(r *http.Request, username, password string) (*typo3.BackendUser, error)
	// Tools lists what the host will get at resource as user; required.
	Tools func(ctx context.Context, user *typo3.BackendUser, resource string) ([]ConsentTool, error)
	// HTTPClient fetches Client ID Metadata Documents; nil means a client
	// that reaches only public https addresses.
	HTTPClient *http.Client
	SiteName   string
	AccessTTL  time.Duration
	RefreshTTL time.Duration
	RequestTTL time.Duration
	// Now is the clock of tokens and metadata caching; the store has its
	// own (codes and requests expire by it).
	Now    func() time.Time
	Logger *slog.Logger
}

// Server is the authorization server. It is safe for concurrent use.
type Server struct {
	p        Params
	log      *slog.Logger
	now      func() time.Time
	provider *op.Provider
	crypto   op.Crypto
	sign     signingKey
	fetch    *http.Client
	handler  http.Handler
}

// New builds the authorization server.
func New(p Params) (*Server, error) {
	if p.Store == nil || p.Login == nil || p.Tools == nil || p.Key == [32]byte{} {
		return nil, errors.New("oauth: a store, a key, a login and a tool lister are required")
	}
	s := &Server{p: p, log: p.Logger, now: p.Now, fetch: p.HTTPClient}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.fetch == nil {
		s.fetch = publicClient()
	}
	s.p.AccessTTL = orDuration(p.AccessTTL, DefaultAccessTTL)
	s.p.RefreshTTL = orDuration(p.RefreshTTL, DefaultRefreshTTL)
	s.p.RequestTTL = orDuration(p.RequestTTL, DefaultRequestTTL)
	s.crypto = prefixCrypto{op.NewAES256GCMCrypto(p.Key, "t3agent")}
	seed := p.Key // the signing key is derived, never the encryption key itself
	seed[0] ^= 0x5c
	s.sign = signingKey{id: "t3agent-1", key: ed25519.NewKeyFromSeed(hashBytes(seed[:]))}
	cfg := &op.Config{CryptoKey: p.Key, CodeMethodS256: true, GrantTypeRefreshToken: true}
	issuer := func(bool) (op.IssuerFromRequest, error) { return BaseURL, nil }
	prov, err := op.NewProvider(cfg, storage{s: s}, issuer,
		op.WithAllowInsecure(), op.WithCrypto(s.crypto),
		op.WithCustomEndpoints(op.NewEndpoint("authorize"), op.NewEndpoint("oauth/token"), op.NewEndpoint("oauth/userinfo"),
			op.NewEndpoint("oauth/revoke"), op.NewEndpoint("oauth/end_session"), op.NewEndpoint("oauth/keys")),
		op.WithCustomIntrospectionEndpoint(op.NewEndpoint("oauth/introspect")),
	)
	if err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	s.provider = prov
	s.handler = s.routes()
	return s, nil
}

func orDuration(v, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return v
}

// prefixCrypto is op's AES-256-GCM crypto with the token prefix.
type prefixCrypto struct{ inner op.Crypto }

func (c prefixCrypto) Encrypt(s string) (string, error) {
	v, err := c.inner.Encrypt(s)
	return accessPrefix + v, err
}

func (c prefixCrypto) Decrypt(s string) (string, error) {
	v, ok := strings.CutPrefix(s, accessPrefix)
	if !ok {
		return "", errors.New("oauth: not a t3agent token")
	}
	return c.inner.Decrypt(v)
}

// Patterns are the paths the web server routes to Handler.
func (s *Server) Patterns() []string {
	return []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration", "/authorize", "/authorize/", "/oauth/"}
}

// Handler serves the authorization server's endpoints.
func (s *Server) Handler() http.Handler { return s.handler }

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", s.metadata)
	mux.HandleFunc("GET /.well-known/openid-configuration", s.metadata)
	mux.HandleFunc("GET /authorize", s.authorize)
	mux.Handle("GET /authorize/callback", withIss(s.provider))
	mux.HandleFunc("POST /oauth/token", s.token)
	mux.Handle("POST /oauth/revoke", s.provider)
	mux.Handle("GET /oauth/keys", s.provider)
	mux.HandleFunc("POST /oauth/register", s.register)
	mux.HandleFunc("GET /oauth/consent", s.consentPage)
	mux.HandleFunc("POST /oauth/consent", s.consentPost)
	return mux
}

// metadata is the authorization server metadata (RFC 8414), also served
// as the OpenID configuration so every client finds it.
func (s *Server) metadata(w http.ResponseWriter, r *http.Request) {
	base := BaseURL(r)
	md := oauthex.AuthServerMeta{
		Issuer:                                     base,
		AuthorizationEndpoint:                      base + "/authorize",
		TokenEndpoint:                              base + "/oauth/token",
		JWKSURI:                                    base + "/oauth/keys",
		RegistrationEndpoint:                       base + "/oauth/register",
		RevocationEndpoint:                         base + "/oauth/revoke",
		ScopesSupported:                            []string{ScopeMCP, "offline_access"},
		ResponseTypesSupported:                     []string{"code"},
		ResponseModesSupported:                     []string{"query"},
		GrantTypesSupported:                        []string{"authorization_code", "refresh_token"},
		TokenEndpointAuthMethodsSupported:          []string{"none"},
		RevocationEndpointAuthMethodsSupported:     []string{"none"},
		CodeChallengeMethodsSupported:              []string{"S256"},
		ClientIDMetadataDocumentSupported:          true,
		AuthorizationResponseIssParameterSupported: true,
	}
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(md)
}

// resourcePath is an MCP endpoint of this server: /mcp or /mcp/{name}.
var resourcePath = regexp.MustCompile(`^/mcp(/[A-Za-z0-9][A-Za-z0-9_.-]{0,254})?$`)

// resourceOf checks a resource indicator (RFC 8707): an MCP endpoint of
// this server, as the client reaches it. Absent means /mcp.
func resourceOf(r *http.Request, raw string) (string, error) {
	base := BaseURL(r)
	if raw == "" {
		return base + "/mcp", nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Fragment != "" || u.RawQuery != "" || u.Scheme+"://"+u.Host != base || !resourcePath.MatchString(strings.TrimSuffix(u.Path, "/")) {
		return "", errors.New("the resource is not an MCP endpoint of this server")
	}
	return base + strings.TrimSuffix(u.Path, "/"), nil
}

// authorize checks the resource, then lets op validate the request
// against its client and keep it; the person continues on the consent
// page.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	res, err := resourceOf(r, r.URL.Query().Get("resource"))
	if err != nil {
		// RFC 8707 §2: invalid_target; the redirect URI is not checked
		// yet, so the answer goes to the browser, not the client.
		http.Error(w, "invalid_target: "+err.Error(), http.StatusBadRequest)
		return
	}
	withIss(s.provider).ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), resourceKey{}, res)))
}

// token hands the resource a token request names to the storage, which
// refuses one that is not the grant's.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, `{"error":"invalid_request"}`, http.StatusBadRequest)
		return
	}
	ctx := r.Context()
	if res := r.PostForm.Get("resource"); res != "" {
		ctx = context.WithValue(ctx, tokenResourceKey{}, strings.TrimSuffix(res, "/"))
	}
	s.provider.ServeHTTP(w, r.WithContext(ctx))
}

// withIss adds the issuer (RFC 9207) to every redirect to the client.
func withIss(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&issWriter{ResponseWriter: w, iss: BaseURL(r)}, r)
	})
}

type issWriter struct {
	http.ResponseWriter
	iss string
}

func (w *issWriter) WriteHeader(code int) {
	if loc := w.Header().Get("Location"); code >= 300 && code < 400 && loc != "" && !strings.HasPrefix(loc, "/") && !strings.HasPrefix(loc, w.iss+"/") {
		if u, err := url.Parse(loc); err == nil {
			q := u.Query()
			q.Set("iss", w.iss)
			u.RawQuery = q.Encode()
			w.Header().Set("Location", u.String())
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

// Verify checks an access token presented at resource: issued here, not
// expired, revoked or of a revoked grant, and bound to resource. It
// returns the grant; the caller loads its user afresh.
func (s *Server) Verify(ctx context.Context, token, resource string) (store.OAuthGrant, error) {
	plain, err := s.crypto.Decrypt(token)
	if err != nil {
		return store.OAuthGrant{}, errors.New("oauth: not a token of this server")
	}
	id, _, ok := strings.Cut(plain, ":")
	if !ok {
		return store.OAuthGrant{}, errors.New("oauth: not an access token")
	}
	t, g, err := storage{s: s}.liveToken(ctx, id, store.OAuthAccessToken)
	if err != nil {
		return store.OAuthGrant{}, err
	}
	if g.Resource != resource {
		return store.OAuthGrant{}, fmt.Errorf("oauth: the token is bound to %s, not %s", g.Resource, resource)
	}
	if g.LastUsedAt.IsZero() || s.now().Sub(g.LastUsedAt) >= time.Minute {
		if err := s.p.Store.TouchOAuthGrant(ctx, g.ID); err != nil {
			s.log.WarnContext(ctx, "cannot record a grant's use", "grant", g.ID, "error", err.Error())
		}
	}
	_ = t
	return g, nil
}

// consentURL is where op sends the person for request id.
func (s *Server) consentURL(id string) string {
	return "/oauth/consent?id=" + url.QueryEscape(id)
}
