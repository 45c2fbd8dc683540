package cli

import (
	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/servicetoken"
	"github.com/t3agent/t3agent/internal/settings"
	"github.com/t3agent/t3agent/internal/telemetry"
	"github.com/t3agent/t3agent/internal/web"
)

// webOps are the services of the API's and the console's usage, tokens,
// grants, settings and run starts: the same the commands use.
func webOps(r *runtime, rt *agent.Runtime, cfgs *agentconfig.Service) *web.Ops {
	return &web.Ops{
		Tokens:   servicetoken.New(servicetoken.Params{Store: r.store, Users: r.site}),
		Settings: settings.New(r.store),
		Usage:    telemetry.New(telemetry.Params{Store: r.store}),
		Grants:   r.store,
		Configs:  cfgs,
		Starter:  rt,
	}
}
