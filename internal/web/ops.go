package web

import (
	"context"
	"net/http"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/servicetoken"
	"github.com/t3agent/t3agent/internal/settings"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/telemetry"
)

// Ops are the services behind usage, service tokens, OAuth grants,
// settings and starting runs: the API routes of routes_usage.go,
// routes_tokens.go, routes_settings.go and routes_start.go, and the
// console's pages of the same. A nil field answers its routes 503
// unavailable and hides its page.
type Ops struct {
	Tokens   *servicetoken.Service
	Settings *settings.Service
	// Usage reads the telemetry ledger and the budgets.
	Usage *telemetry.Recorder
	// Grants lists and revokes the OAuth grants of MCP hosts.
	Grants Grants
	// Configs reads the configuration model: the budgets of the usage
	// and the configurations and tasks a run starts from.
	Configs OpsConfigs
	// Starter starts, enqueues and dry-runs runs; *agent.Runtime.
	Starter Starter
}

// Grants are the OAuth grants of the store. Safe for concurrent use.
type Grants interface {
	OAuthGrant(ctx context.Context, id string) (store.OAuthGrant, error)
	OAuthGrants(ctx context.Context, p store.ListOAuthGrantsParams) ([]store.OAuthGrant, error)
	RevokeOAuthGrant(ctx context.Context, id string) error
}

// OpsConfigs is what Ops reads of the configuration model;
// *agentconfig.Service implements it. Safe for concurrent use.
type OpsConfigs interface {
	Snapshot(ctx context.Context) (*agentconfig.Snapshot, error)
	Resolve(ctx context.Context, identifier string) (*agentconfig.Resolved, error)
	ResolveTask(ctx context.Context, identifier string) (agentconfig.Task, *agentconfig.Resolved, error)
}

// Starter runs requests; *agent.Runtime implements it. Safe for
// concurrent use.
type Starter interface {
	Run(ctx context.Context, req agent.Request) agent.Result
	Enqueue(ctx context.Context, req agent.Request) (string, error)
	DryRun(ctx context.Context, req agent.Request) (agent.DryRun, error)
}

// opsRoutes are the routes of Ops, appended to the API's table.
func (s *Server) opsRoutes() []route {
	admin := []store.Scope{store.ScopeAdmin}
	return []route{
		{"GET /api/v1/usage", anyone, admin, s.usageRoute},
		{"GET /api/v1/tokens", anyone, admin, s.tokensList},
		{"POST /api/v1/tokens", anyone, admin, s.tokenCreate},
		{"DELETE /api/v1/tokens/{name}", anyone, admin, s.tokenRevoke},
		{"GET /api/v1/grants", person, nil, s.grantsList},
		{"POST /api/v1/grants/{id}/revoke", person, nil, s.grantRevoke},
		{"GET /api/v1/settings", anyone, admin, s.settingsShow},
		{"PUT /api/v1/settings", anyone, admin, s.settingsUpdate},
		{"POST /api/v1/runs", anyone, []store.Scope{store.ScopeAgentRun}, s.runStart},
	}
}

// ops is the API's Ops, never nil.
func (s *Server) ops() *Ops {
	if s.api.Ops == nil {
		return &Ops{}
	}
	return s.api.Ops
}

// requireAdmin refuses a caller who is not a TYPO3 admin (a token's user
// included: its admin scope alone does not make its user one).
func requireAdmin(c *caller) error {
	if c.user == nil || !c.user.Admin {
		return apiErr(http.StatusForbidden, "adminRequired", nil)
	}
	return nil
}

// unavailable is the answer of a route whose service this server lacks.
func unavailable(what string) error {
	return apiErr(http.StatusServiceUnavailable, "unavailable", nil).with(what + " is not available on this server.")
}

// with sets the public message.
func (e *apiError) with(msg string) *apiError {
	e.msg = msg
	return e
}
