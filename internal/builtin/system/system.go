// Package system holds the builtin tools of the system group, all
// admin-only and classed systemDiagnostics (the _raw variants
// secretAdjacent and disabled by default): fetch_logs, list_deprecations,
// get_system_status, list_extensions, list_middlewares,
// list_scheduler_tasks, probe_url, get_env, get_env_raw, get_php_info and
// get_php_info_raw.
//
// They answer from the site database (sys_log, tx_scheduler_task) and the
// installation's files (var/log, installed.json or PackageStates.php, the
// middleware cache, config/sites, .env), never from a live TYPO3. Where
// only a PHP runtime would know (the web server's PHP, its environment),
// the answer says whose view it gives: t3agent's own machine, labelled as
// such, or "unavailable" — never an invented value.
//
// Every answer is bounded and redacted (package introspect): sys_log is
// read without IP, userid and log_data; the serialized scheduler task is
// never selected; environment values under credential names are hidden.
// probe_url fetches only URLs whose host and port are a configured site
// base, through the same egress guard as the MCP client.
package system

import (
	"time"

	"github.com/t3agent/t3agent/internal/egress"
	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

// Params configure Tools beyond the site; the zero value is the product's
// default.
type Params struct {
	// Guard checks probe_url's URLs; nil builds one without allow-list.
	Guard *egress.Guard
	// PHP is the PHP command get_php_info runs; "" means "php" on PATH.
	PHP string
	// ProbeTimeout bounds probe_url; 0 means 15 s.
	ProbeTimeout time.Duration
}

// Tools returns the system tools over site. policy is accepted for the
// builtin groups' common signature.
func Tools(site *typo3.Site, policy *readpolicy.Policy) []tool.Tool {
	return ToolsWith(site, Params{})
}

// ToolsWith is Tools with explicit parameters.
func ToolsWith(site *typo3.Site, p Params) []tool.Tool {
	if p.Guard == nil {
		g, err := egress.NewGuard(egress.GuardParams{})
		if err != nil {
			panic(err) // no allow-list: cannot fail
		}
		p.Guard = g
	}
	if p.PHP == "" {
		p.PHP = "php"
	}
	if p.ProbeTimeout <= 0 {
		p.ProbeTimeout = 15 * time.Second
	}
	e := env{site: site, p: p}
	return []tool.Tool{
		&fetchLogs{e}, &listDeprecations{e}, &systemStatus{e}, &listExtensions{e}, &listMiddlewares{e},
		&schedulerTasks{e}, &probeURL{e}, &getEnv{env: e}, &getEnv{env: e, raw: true},
		&phpInfo{env: e}, &phpInfo{env: e, raw: true},
	}
}

type env struct {
	site *typo3.Site
	p    Params
}

// noRoot answers when the installation folder is unknown.
const noRoot = "The TYPO3 installation folder is not configured for this site, so its files cannot be read."

// root returns the project root, or false when none is configured.
func (e env) root() (string, bool) {
	if e.site == nil || e.site.Root == "" {
		return "", false
	}
	return e.site.Root, true
}
