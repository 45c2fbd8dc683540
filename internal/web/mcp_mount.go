package web

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/t3agent/t3agent/internal/mcpserver"
	"github.com/t3agent/t3agent/internal/oauth"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/typo3"
)

// MCPParams mount t3agent's MCP facade (package mcpserver) and, with
// OAuth, its OAuth 2.1 authorization server (package oauth) with the
// consent page. The facade's tokens are checked here: service tokens as
// the API checks them (scope agent:run), OAuth access tokens by the
// authorization server, bound to the endpoint; either way the backend
// user is loaded afresh, so a user who cannot act any more is refused at
// once.
type MCPParams struct {
	// Facade holds everything of mcpserver.Params but Verify, which the
	// web server supplies.
	Facade mcpserver.Params
	// OAuth, when set, runs the authorization server; its Login (the
	// consent page's, under the API's login limit) and Tools (the
	// facade's offer) are the web server's to fill.
	OAuth *oauth.Params
}

// mountMCP builds the facade and routes /mcp, its metadata and the
// OAuth endpoints to it. It needs the API (its credentials and site).
func (s *Server) mountMCP() error {
	fp := s.p.MCP.Facade
	fp.Verify = s.verifyMCP
	fp.OAuth = s.p.MCP.OAuth != nil
	if fp.Calls == nil {
		return errors.New("web: the MCP facade needs a call recorder")
	}
	if fp.Logger == nil {
		fp.Logger = s.p.Logger
	}
	if fp.Now == nil {
		fp.Now = s.api.Now
	}
	facade, err := mcpserver.New(fp)
	if err != nil {
		return err
	}
	s.facade = facade
	h := facade.Handler()
	for _, pattern := range []string{"/mcp", "/mcp/", "/.well-known/oauth-protected-resource/"} {
		s.mux.Handle(pattern, h)
	}
	if op := s.p.MCP.OAuth; op != nil {
		p := *op
		p.Login, p.Tools = s.consentLogin, facade.Offered
		if p.Logger == nil {
			p.Logger = s.p.Logger
		}
		if p.Now == nil {
			p.Now = s.api.Now
		}
		as, err := oauth.New(p)
		if err != nil {
			return err
		}
		s.oauth = as
		oh := as.Handler()
		for _, pattern := range as.Patterns() {
			s.mux.Handle(pattern, oh)
		}
	}
	return nil
}

// verifyMCP is the facade's token check (mcpserver.Verifier).
func (s *Server) verifyMCP(r *http.Request, token, resource string) (*mcpserver.Principal, error) {
	ctx := r.Context()
	if as := s.oauth; as != nil && oauth.IsAccessToken(token) {
		g, err := as.Verify(ctx, token, resource)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
		}
		u, err := s.api.Site.BackendUserByName(ctx, g.Username)
		if errors.Is(err, typo3.ErrUserCannotAct) {
			return nil, fmt.Errorf("%w: the grant's user %s cannot act", auth.ErrInvalidToken, g.Username)
		}
		if err != nil {
			return nil, fmt.Errorf("load the backend user of grant %s: %w", g.ID, err)
		}
		return &mcpserver.Principal{User: u, Credential: "grant:" + g.ID, Client: g.ClientName}, nil
	}
	c, err := s.bearer(r, "Bearer "+token)
	if err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.status == http.StatusUnauthorized {
			s.p.Logger.Info("MCP bearer token refused", "err", err)
			return nil, fmt.Errorf("%w: %s", auth.ErrInvalidToken, ae.code)
		}
		return nil, err
	}
	if !c.access.Has(store.ScopeAgentRun) {
		return nil, fmt.Errorf("%w: token %s lacks scope %s", mcpserver.ErrInsufficientScope, c.access.Token, store.ScopeAgentRun)
	}
	return &mcpserver.Principal{User: c.user, Access: c.access, Credential: "token:" + c.access.Token}, nil
}

// consentLogin is the consent page's login: the API's, under its limit.
func (s *Server) consentLogin(r *http.Request, username, password string) (*typo3.BackendUser, error) {
	u, wait, err := s.checkLogin(r, strings.TrimSpace(username), password)
	switch {
	case wait > 0:
		return nil, &oauth.LoginError{RetryAfter: wait}
	case errors.Is(err, typo3.ErrAuthFailed), errors.Is(err, typo3.ErrPasswordHashUnusable):
		return nil, &oauth.LoginError{}
	}
	return u, err
}
