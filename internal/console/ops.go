package console

import (
	"context"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/servicetoken"
	"github.com/t3agent/t3agent/internal/settings"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/telemetry"
)

// Ops are the services of the Usage, Tokens and Settings pages and of the
// run playground: the same the API's routes use. A nil field hides its
// page (404).
type Ops struct {
	Tokens   *servicetoken.Service
	Settings *settings.Service
	Usage    *telemetry.Recorder
	Grants   Grants
	Configs  Configs
	Starter  Starter
}

// Grants are the OAuth grants of MCP hosts. Safe for concurrent use.
type Grants interface {
	OAuthGrants(ctx context.Context, p store.ListOAuthGrantsParams) ([]store.OAuthGrant, error)
	RevokeOAuthGrant(ctx context.Context, id string) error
}

// Configs reads the configuration model; *agentconfig.Service.
type Configs interface {
	Snapshot(ctx context.Context) (*agentconfig.Snapshot, error)
	Resolve(ctx context.Context, identifier string) (*agentconfig.Resolved, error)
	ResolveTask(ctx context.Context, identifier string) (agentconfig.Task, *agentconfig.Resolved, error)
}

// Starter starts and dry-runs runs; *agent.Runtime.
type Starter interface {
	Enqueue(ctx context.Context, req agent.Request) (string, error)
	DryRun(ctx context.Context, req agent.Request) (agent.DryRun, error)
}

// registerOps registers the pages of Ops.
func (c *Console) registerOps(handle Handle) {
	handle("GET /usage", c.page(c.admin(c.usagePage), true))
	handle("GET /usage.csv", c.page(c.admin(c.usageCSV), true))
	handle("GET /tokens", c.page(c.admin(c.tokensPage), true))
	handle("POST /tokens", c.page(c.admin(c.tokenCreate), true))
	handle("POST /tokens/{name}/revoke", c.page(c.admin(c.tokenRevoke), true))
	handle("POST /grants/{id}/revoke", c.page(c.admin(c.grantRevoke), true))
	handle("GET /settings", c.page(c.admin(c.settingsPage), true))
	handle("POST /settings", c.page(c.admin(c.settingsPost), true))
	handle("GET /runs/new", c.page(c.playground, true))
	handle("POST /runs/new", c.page(c.playgroundPost, true))
}

func (c *Console) ops() *Ops {
	if c.p.Ops == nil {
		return &Ops{}
	}
	return c.p.Ops
}
