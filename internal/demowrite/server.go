package demowrite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/t3agent/t3agent/internal/demo"
	"github.com/t3agent/t3agent/internal/oauth"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/typo3"
)

// Defaults of Params.
const (
	DefaultAddr = "127.0.0.1:0"
	// DefaultAccessTTL is long because, until t3agent's MCP client
	// refreshes OAuth tokens itself, the demo hands its access token to
	// the client as a static bearer credential; a new demo start logs in
	// again.
	DefaultAccessTTL = 12 * time.Hour
	// maxRequestBody bounds one MCP request.
	maxRequestBody = 256 << 10
)

// Params configure New.
type Params struct {
	// Demo is the demo whose site database is written; required. Only
	// demo.Init hands one out, so a real site is never written.
	Demo *demo.Result
	// Site reads the site (users, pages, permissions); required. Its
	// database may be read-only: writes go through a connection of
	// their own.
	Site *typo3.Site
	// Store keeps the authorization server's clients, grants and
	// tokens; required.
	Store store.MCPServerState
	// Key encrypts the authorization server's codes and tokens; it must
	// differ from the MCP facade's, so their tokens are not exchangeable.
	Key [32]byte
	// Addr is where Start listens; DefaultAddr unless set. Only loopback
	// addresses are accepted.
	Addr      string
	SiteName  string
	AccessTTL time.Duration
	// Now is the clock of the site's tstamp values; time.Now by default.
	Now    func() time.Time
	Logger *slog.Logger
}

// Server is the write server. It is safe for concurrent use.
type Server struct {
	p    Params
	log  *slog.Logger
	now  func() time.Time
	db   *typo3.DB // writable, the demo's
	as   *oauth.Server
	sdk  *mcp.Server
	mcpH http.Handler
	mux  *http.ServeMux

	mu   sync.Mutex
	srv  *http.Server
	url  string
	done chan struct{}
}

// New builds the server and opens the demo's site database for writing.
func New(ctx context.Context, p Params) (*Server, error) {
	if p.Demo == nil || p.Site == nil || p.Store == nil || p.Key == [32]byte{} {
		return nil, errors.New("demowrite: a demo, its site, a store and a key are required")
	}
	s := &Server{p: p, log: p.Logger, now: p.Now}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.p.Addr == "" {
		s.p.Addr = DefaultAddr
	}
	if s.p.AccessTTL <= 0 {
		s.p.AccessTTL = DefaultAccessTTL
	}
	as, err := oauth.New(oauth.Params{
		Store: p.Store, Key: p.Key, Login: s.consentLogin, Tools: s.consentTools,
		SiteName: p.SiteName + " — demo write server", AccessTTL: s.p.AccessTTL, Logger: s.log,
		// No Now: the store expires requests by its own clock, and the
		// two must agree; Params.Now is the site's clock (tstamp).
	})
	if err != nil {
		return nil, err
	}
	s.as = as
	db, err := typo3.Open(ctx, p.Demo.SiteDSN, typo3.OpenParams{Writable: true})
	if err != nil {
		return nil, fmt.Errorf("demowrite: the demo site cannot be opened for writing: %w", err)
	}
	s.db = db
	s.sdk = mcp.NewServer(&mcp.Implementation{Name: "t3agent-demo-writes", Title: "Demo site writes", Version: "1.0.0"}, &mcp.ServerOptions{
		Instructions: "Writes to the t3agent demo TYPO3 site, as the backend user who granted the token: " +
			"page metadata, hidden content element drafts and file alternative texts. Each write is recorded in sys_history.",
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		Logger:       s.log,
	})
	for _, t := range s.tools() {
		s.sdk.AddTool(t.spec, t.handler)
	}
	s.mcpH = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.sdk }, &mcp.StreamableHTTPOptions{
		Stateless: true, Logger: s.log, MaxRequestBodyBytes: maxRequestBody,
	})
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("/mcp", s.serveMCP)
	s.mux.HandleFunc("GET /.well-known/oauth-protected-resource", s.serveMetadata)
	s.mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", s.serveMetadata)
	for _, pattern := range as.Patterns() {
		s.mux.Handle(pattern, as.Handler())
	}
	return s, nil
}

// Handler serves /mcp, its protected-resource metadata and the
// authorization server.
func (s *Server) Handler() http.Handler { return s.mux }

// Start listens on Params.Addr (a loopback address) and serves until
// Stop. It returns once the server accepts connections.
func (s *Server) Start(_ context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return errors.New("demowrite: the server is already started")
	}
	host, _, err := net.SplitHostPort(s.p.Addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("demowrite: %q is not a loopback address; the demo write server listens on loopback only", s.p.Addr)
	}
	ln, err := net.Listen("tcp", s.p.Addr)
	if err != nil {
		return fmt.Errorf("demowrite: cannot listen on %s: %w", s.p.Addr, err)
	}
	s.url = "http://" + ln.Addr().String()
	s.srv = &http.Server{Handler: s.mux, ReadHeaderTimeout: 10 * time.Second}
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("demo write server stopped", "error", err.Error())
		}
	}()
	return nil
}

// URL is the server's base URL once started ("" before); the MCP
// endpoint is URL()+"/mcp".
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.url
}

// Stop shuts the server down (waiting briefly for calls in flight) and
// closes its database connection.
func (s *Server) Stop() {
	s.mu.Lock()
	srv, done := s.srv, s.done
	s.mu.Unlock()
	if srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	}
	_ = s.db.Close()
}

// resourceURL is the /mcp endpoint as the client reaches it.
func resourceURL(r *http.Request) string { return oauth.BaseURL(r) + "/mcp" }

// principalKey keys the acting user in TokenInfo.Extra.
const principalKey = "demowrite.user"

func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request) {
	verify := func(ctx context.Context, token string, req *http.Request) (*auth.TokenInfo, error) {
		g, err := s.as.Verify(ctx, token, resourceURL(req))
		if err != nil {
			s.log.InfoContext(ctx, "demo write server refused a token", "reason", err.Error())
			return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
		}
		u, err := s.p.Site.BackendUserByName(ctx, g.Username)
		if errors.Is(err, typo3.ErrUserCannotAct) {
			return nil, fmt.Errorf("%w: the grant's user %s cannot act", auth.ErrInvalidToken, g.Username)
		}
		if err != nil {
			return nil, fmt.Errorf("load the backend user of grant %s: %w", g.ID, err)
		}
		return &auth.TokenInfo{UserID: u.Username, Scopes: []string{oauth.ScopeMCP}, Extra: map[string]any{principalKey: u}}, nil
	}
	// The token's expiry is the authorization server's to check (Verify).
	opts := &auth.RequireBearerTokenOptions{ResourceMetadataURL: oauth.BaseURL(r) + "/.well-known/oauth-protected-resource/mcp", AllowMissingExpiration: true}
	auth.RequireBearerToken(verify, opts)(s.mcpH).ServeHTTP(w, r)
}

// serveMetadata is the protected-resource metadata (RFC 9728): this
// server's /mcp, authorized by the authorization server beside it.
func (s *Server) serveMetadata(w http.ResponseWriter, r *http.Request) {
	base := oauth.BaseURL(r)
	auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               base + "/mcp",
		AuthorizationServers:   []string{base},
		BearerMethodsSupported: []string{"header"},
		ScopesSupported:        []string{oauth.ScopeMCP},
		ResourceName:           "t3agent demo site writes",
	}).ServeHTTP(w, r)
}

// consentLogin checks a backend login on the consent page.
func (s *Server) consentLogin(r *http.Request, username, password string) (*typo3.BackendUser, error) {
	u, err := s.p.Site.Authenticate(r.Context(), username, password)
	if errors.Is(err, typo3.ErrAuthFailed) || errors.Is(err, typo3.ErrPasswordHashUnusable) {
		return nil, &oauth.LoginError{}
	}
	return u, err
}

// consentTools lists the write tools on the consent page; every one of
// them is a write that t3agent holds for approval.
func (s *Server) consentTools(context.Context, *typo3.BackendUser, string) ([]oauth.ConsentTool, error) {
	var out []oauth.ConsentTool
	for _, t := range s.tools() {
		out = append(out, oauth.ConsentTool{Name: t.spec.Name, Approval: true})
	}
	return out, nil
}

// jsonText is v as compact JSON, for history and log rows.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps of strings and numbers are passed
	}
	return string(b)
}
