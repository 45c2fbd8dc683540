package mcp

import (
	"context"
	"net/http"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/t3agent/t3agent/internal/egress"
)

// DefaultLoginTimeout bounds an OAuth login: a person has that long to
// open the URL and approve.
const DefaultLoginTimeout = 10 * time.Minute

// AuthorizeParams are the parameters of Authorize.
type AuthorizeParams struct {
	Server string // a configured server
	// Handler runs the authorization flow when the server challenges a
	// request (401, or 403 insufficient_scope).
	Handler sdkauth.OAuthHandler
	// Timeout bounds the whole login, the person's part included; ≤ 0
	// means DefaultLoginTimeout.
	Timeout time.Duration
}

// Authorize connects to a server with the given OAuth handler and lists
// its tools, so that whichever request the server protects challenges
// and the handler logs in. The session is not pooled: the next call
// opens one with the handler the OAuthSource gives for the new grant.
func (s *Service) Authorize(ctx context.Context, p AuthorizeParams) (PingResult, error) {
	r, err := s.st.MCPServer(ctx, p.Server)
	if err != nil {
		return PingResult{}, err
	}
	if _, err := s.guard.CheckURL(r.URL); err != nil {
		return PingResult{}, opError(r.Identifier, KindRefused, "the MCP server %q cannot be reached: %s", r.Identifier, err.Error())
	}
	t := target{id: r.Identifier, url: r.URL, auth: auth{kind: AuthNone}, oauth: p.Handler}
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = DefaultLoginTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ctx, op, budget, end := s.beginFor(ctx, timeout)
	defer end()
	if err := s.resolveCheck(ctx, t); err != nil {
		return PingResult{}, s.fail(ctx, "login", t, op, budget, err)
	}
	start := time.Now()
	cs, err := s.connect(ctx, t)
	if err != nil {
		return PingResult{}, s.fail(ctx, "login", t, op, budget, err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, &sdk.ListToolsParams{}); err != nil {
		return PingResult{}, s.fail(ctx, "login", t, op, budget, err)
	}
	s.pool.retire(p.Server)
	return pingResult(t, cs.ClientSession, time.Since(start)), nil
}

// NewHTTPClient returns a client for OAuth requests on behalf of MCP
// servers (metadata, registration, tokens; package mcpauth): every URL
// and address passes an egress guard with the same allow-list as the
// Service's, answers are capped at MaxAnswerBytes, redirects are not
// followed and no credential is attached.
func NewHTTPClient(allowedHosts []string) (*http.Client, error) {
	g, err := egress.NewGuard(egress.GuardParams{AllowedHosts: allowedHosts, ListName: "MCP host allow-list"})
	if err != nil {
		return nil, err
	}
	return &http.Client{
		Transport:     &operationTransport{guard: g, next: newBaseTransport(g)},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}, nil
}
