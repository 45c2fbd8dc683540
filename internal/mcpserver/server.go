package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/oauth"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

// Principal is who calls through the facade.
type Principal struct {
	User *typo3.BackendUser
	// Access is the service token acting, if one does; zero for a person
	// reached through an OAuth grant.
	Access agent.Access
	// Credential names the token or grant ("token:ci", "grant:…"), for the
	// record and the per-credential limit.
	Credential string
	// Client is the host's name as its credential knows it (the OAuth
	// client's name); "" lets the host's own clientInfo name it.
	Client string
}

// Verifier checks a bearer token presented at resource (the endpoint's
// URL) and returns who it acts for. An unknown, expired, revoked or
// misbound token, or one whose user cannot act, is an error wrapping
// auth.ErrInvalidToken (401); one without the right scope wraps
// ErrInsufficientScope (403).
type Verifier func(r *http.Request, token, resource string) (*Principal, error)

// ErrInsufficientScope is a token that is valid but may not use /mcp.
var ErrInsufficientScope = errors.New("mcpserver: the token may not use the MCP facade")

// ConfigSource resolves an agent configuration by identifier, live;
// *agentconfig.Service is the implementation.
type ConfigSource interface {
	Resolve(ctx context.Context, identifier string) (*agentconfig.Resolved, error)
}

// CallRecorder keeps the record of facade calls; the store is one.
type CallRecorder interface {
	RecordMCPCall(ctx context.Context, p store.RecordMCPCallParams) (store.MCPCall, error)
}

// Default limits.
const (
	DefaultCallsPerCredential = 120 // a minute
	DefaultCallsPerUser       = 240 // a minute
	// maxRequestBody bounds one JSON-RPC message: a call's arguments may
	// be up to gate.MaxArgumentBytes.
	maxRequestBody = gate.MaxArgumentBytes + 64<<10
)

// Params configure New.
type Params struct {
	Gate *gate.Gate // required
	// Runtime keeps approval-bound calls as runs and reads them back; nil
	// refuses approval-bound calls and offers no run tools.
	Runtime *agent.Runtime
	// Configs serves /mcp/{configuration}; nil serves /mcp only.
	Configs ConfigSource
	Verify  Verifier     // required
	Calls   CallRecorder // required
	// OAuth, when set, names t3agent's own authorization server in the
	// protected-resource metadata (its issuer is the request's base URL).
	OAuth bool
	// CallsPerCredential and CallsPerUser bound tools/call a minute; 0
	// means the defaults, a negative value no limit.
	CallsPerCredential int
	CallsPerUser       int
	Version            string
	Logger             *slog.Logger
	Now                func() time.Time
}

// Server is the MCP facade. It is safe for concurrent use.
type Server struct {
	p   Params
	log *slog.Logger
	now func() time.Time
	sdk *mcp.Server
	// stateless serves every request but those of older hosts that can
	// elicit, which sessions serves.
	stateless http.Handler
	sessions  http.Handler
	perCred   *limiter
	perUser   *limiter
}

// New builds the facade.
func New(p Params) (*Server, error) {
	if p.Gate == nil || p.Verify == nil || p.Calls == nil {
		return nil, errors.New("mcpserver: a gate, a verifier and a call recorder are required")
	}
	s := &Server{p: p, log: p.Logger, now: p.Now}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.perCred = newLimiter(s.now, orDefault(p.CallsPerCredential, DefaultCallsPerCredential), time.Minute)
	s.perUser = newLimiter(s.now, orDefault(p.CallsPerUser, DefaultCallsPerUser), time.Minute)
	version := p.Version
	if version == "" {
		version = "dev"
	}
	s.sdk = mcp.NewServer(&mcp.Implementation{Name: "t3agent", Version: version}, &mcp.ServerOptions{
		Instructions: "t3agent's gated tools for this TYPO3 site. Writes wait for a person's approval: follow them with t3agent_run_status and t3agent_run_result.",
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		Logger:       s.log,
	})
	s.sdk.AddTool(&mcp.Tool{Name: dispatchTool, Description: "Every tools/call of the facade.", InputSchema: json.RawMessage(`{"type":"object"}`)}, s.dispatch)
	s.sdk.AddReceivingMiddleware(s.middleware)
	get := func(*http.Request) *mcp.Server { return s.sdk }
	s.stateless = mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
		Stateless: true, Logger: s.log, MaxRequestBodyBytes: maxRequestBody,
	})
	s.sessions = mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
		SessionTimeout: sessionTimeout, Logger: s.log, MaxRequestBodyBytes: maxRequestBody,
	})
	return s, nil
}

// Close ends the sessions of older hosts (see route); stateless requests
// hold none. The web server calls it when it shuts down.
func (s *Server) Close() {
	for ss := range s.sdk.Sessions() {
		_ = ss.Close()
	}
}

// sessionTimeout ends an idle session of an older host.
const sessionTimeout = 30 * time.Minute

// route serves every request statelessly, except for an older host
// (before 2026-07-28) that declares elicitation: it gets a session, the
// only way such a host can be asked for a tool's typed input. Its later
// requests carry the session's id. Sessions live in this process.
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Mcp-Session-Id") != "" || wantsSession(r) {
		s.sessions.ServeHTTP(w, r)
		return
	}
	s.stateless.ServeHTTP(w, r)
}

// wantsSession reports whether r is an older host's initialize that
// declares elicitation. A 2026-07-28 request names its method in a
// header and is never read here.
func wantsSession(r *http.Request) bool {
	if r.Method != http.MethodPost || r.Header.Get("Mcp-Method") != "" || r.Body == nil {
		return false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody+1))
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
	if err != nil {
		return false
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
			Capabilities    struct {
				Elicitation json.RawMessage `json:"elicitation"`
			} `json:"capabilities"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil {
		return false
	}
	el := m.Params.Capabilities.Elicitation
	return m.Method == "initialize" && m.Params.ProtocolVersion < modernVersion && len(el) > 0 && string(el) != "null"
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// Handler serves /mcp, /mcp/{configuration} and their protected-resource
// metadata under /.well-known/oauth-protected-resource/.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", s.serveMCP)
	mux.HandleFunc("/mcp/{configuration}", s.serveMCP)
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", s.serveMetadata)
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp/{configuration}", s.serveMetadata)
	return mux
}

// endpoint is the configuration a request reaches.
type endpoint struct {
	name     string                // "" for /mcp
	resolved *agentconfig.Resolved // nil for /mcp
}

func (e endpoint) gateConfig() gate.Configuration {
	if e.resolved == nil {
		return gate.Config{Name: "mcp", TrustZone: tool.ZoneExternalGlobal}
	}
	return e.resolved
}

// ResourceURL is the URL of the endpoint r reached, as a token's
// resource must name it.
func ResourceURL(r *http.Request) string {
	return oauth.BaseURL(r) + strings.TrimSuffix(r.URL.Path, "/")
}

func metadataURL(r *http.Request) string {
	return oauth.BaseURL(r) + "/.well-known/oauth-protected-resource" + strings.TrimSuffix(r.URL.Path, "/")
}

// extraKey keys what the HTTP layer hands the MCP layer in TokenInfo.Extra.
const extraKey = "t3agent"

type requestInfo struct {
	principal *Principal
	endpoint  endpoint
}

func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request) {
	cfgName := r.PathValue("configuration")
	verify := func(ctx context.Context, token string, req *http.Request) (*auth.TokenInfo, error) {
		p, err := s.p.Verify(req, token, ResourceURL(req))
		if errors.Is(err, ErrInsufficientScope) {
			return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
		}
		if err != nil {
			return nil, err
		}
		ep := endpoint{name: cfgName}
		if cfgName != "" {
			if s.p.Configs == nil {
				return nil, errNoEndpoint
			}
			res, err := s.p.Configs.Resolve(ctx, cfgName)
			if err != nil {
				if errors.Is(err, store.ErrNotFound) {
					return nil, errNoEndpoint
				}
				return nil, fmt.Errorf("resolve configuration %s: %w", cfgName, err)
			}
			ep.resolved = res
		}
		return &auth.TokenInfo{UserID: p.User.Username, Extra: map[string]any{extraKey: &requestInfo{principal: p, endpoint: ep}}}, nil
	}
	opts := &auth.RequireBearerTokenOptions{ResourceMetadataURL: metadataURL(r), AllowMissingExpiration: true}
	auth.RequireBearerToken(verify, opts)(http.HandlerFunc(s.route)).ServeHTTP(w, r)
}

// errNoEndpoint answers 400 to an authenticated caller at an unknown
// configuration; a caller without a valid token learns nothing of it.
var errNoEndpoint = fmt.Errorf("%w: no such MCP endpoint", auth.ErrOAuth)

// serveMetadata is the protected-resource metadata (RFC 9728) of one
// endpoint: its resource URL and, with OAuth, t3agent as the
// authorization server.
func (s *Server) serveMetadata(w http.ResponseWriter, r *http.Request) {
	base := oauth.BaseURL(r)
	resource := base + strings.TrimPrefix(strings.TrimSuffix(r.URL.Path, "/"), "/.well-known/oauth-protected-resource")
	md := &oauthex.ProtectedResourceMetadata{
		Resource:               resource,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "t3agent MCP",
		ScopesSupported:        []string{oauth.ScopeMCP},
	}
	if s.p.OAuth {
		md.AuthorizationServers = []string{base}
	}
	auth.ProtectedResourceMetadataHandler(md).ServeHTTP(w, r)
}
