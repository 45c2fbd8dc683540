package demo

import (
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
)

// The introspection material of the demo (docs/demo-site.md, "System
// files"): the project's .env with credentials, the middleware stacks
// TYPO3 would have cached, and the scheduler's tasks. The log files are
// written by writeLogs.

// demoSecret derives a per-demo credential from the demo parameters, so
// every demo has its own and tests can look for it in tool output.
func (p InitParams) demoSecret(name string, n int) string {
	h := fnv.New128a()
	fmt.Fprintf(h, "t3agent-demo-secret/%s/%d/%d", name, p.Now.Unix(), p.Seed)
	return hex.EncodeToString(h.Sum(nil))[:n]
}

// mailPassword is the SMTP password in .env's MAILER_DSN (and, as a
// mail transport error would print it, in one log record).
func (p InitParams) mailPassword() string { return "Mx7" + p.demoSecret("mail", 13) }

// writeSystemFiles writes .env and the middleware caches below root.
func writeSystemFiles(root string, p InitParams) error {
	env := `# Local settings of the Nordlicht Pumps installation, loaded by
# helhum/dotenv-connector. Not committed.
TYPO3_CONTEXT=Development/Local
CAMPAIGN_BASE=https://season.nordlicht-pumps.example/
DEALER_MAP_API_KEY=AIza` + p.demoSecret("maps", 32) + `SyD3m
TYPO3_DB_PASSWORD='` + "Db9" + p.demoSecret("db", 17) + `'
MAILER_DSN="smtp://mailer:` + p.mailPassword() + `@mail.nordlicht-pumps.example:587"
SENTRY_RELEASE=site-demo@1.4.0
OAUTH_CLIENT_ID=nordlicht-backend
`
	if err := os.WriteFile(filepath.Join(root, ".env"), []byte(env), 0o600); err != nil {
		return err
	}
	dir := filepath.Join(root, "var", "cache", "code", "core")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	hash := LogFileHash(p)
	for stack, entries := range map[string][][2]string{"frontend": frontendStack, "backend": backendStack} {
		var b strings.Builder
		b.WriteString("<?php\nreturn array (\n")
		// TYPO3 caches the stack innermost first: the dispatcher wraps
		// each entry around the ones before it.
		for i := len(entries) - 1; i >= 0; i-- {
			fmt.Fprintf(&b, "  %s => %s,\n", phpString(entries[i][0]), phpString(entries[i][1]))
		}
		b.WriteString(");\n#")
		name := "middlewares_" + stack + "_" + hash + ".php"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// frontendStack is TYPO3 v13.4's frontend middleware stack with the site
// package's dealer map cache, in request order.
var frontendStack = [][2]string{
	{"typo3/cms-core/verify-host-header", `TYPO3\CMS\Core\Middleware\VerifyHostHeader`},
	{"typo3/cms-core/normalized-params-attribute", `TYPO3\CMS\Core\Middleware\NormalizedParamsAttribute`},
	{"typo3/cms-frontend/timetracker", `TYPO3\CMS\Frontend\Middleware\TimeTrackerInitialization`},
	{"typo3/cms-core/response-propagation", `TYPO3\CMS\Core\Middleware\ResponsePropagation`},
	{"typo3/cms-frontend/preprocessing", `TYPO3\CMS\Frontend\Middleware\PreprocessRequestHook`},
	{"typo3/cms-frontend/eid", `TYPO3\CMS\Frontend\Middleware\EidHandler`},
	{"typo3/cms-frontend/maintenance-mode", `TYPO3\CMS\Frontend\Middleware\MaintenanceMode`},
	{"typo3/cms-frontend/site", `TYPO3\CMS\Frontend\Middleware\SiteResolver`},
	{"typo3/cms-frontend/base-redirect-resolver", `TYPO3\CMS\Frontend\Middleware\SiteBaseRedirectResolver`},
	{"typo3/cms-frontend/static-route-resolver", `TYPO3\CMS\Frontend\Middleware\StaticRouteResolver`},
	{"typo3/cms-frontend/backend-user-authentication", `TYPO3\CMS\Frontend\Middleware\BackendUserAuthenticator`},
	{"typo3/cms-frontend/authentication", `TYPO3\CMS\Frontend\Middleware\FrontendUserAuthenticator`},
	{"typo3/cms-frontend/page-resolver", `TYPO3\CMS\Frontend\Middleware\PageResolver`},
	{"nordlicht/site-demo/dealer-map-cache", `Nordlicht\SiteDemo\Middleware\DealerMapCache`},
	{"typo3/cms-frontend/prepare-tsfe-rendering", `TYPO3\CMS\Frontend\Middleware\PrepareTypoScriptFrontendRendering`},
	{"typo3/cms-frontend/shortcut-and-mountpoint-redirect", `TYPO3\CMS\Frontend\Middleware\ShortcutAndMountPointRedirect`},
	{"typo3/cms-frontend/content-length-headers", `TYPO3\CMS\Frontend\Middleware\ContentLengthResponseHeader`},
	{"typo3/cms-frontend/output-compression", `TYPO3\CMS\Frontend\Middleware\OutputCompression`},
}

// backendStack is TYPO3 v13.4's backend middleware stack, in request
// order.
var backendStack = [][2]string{
	{"typo3/cms-core/verify-host-header", `TYPO3\CMS\Core\Middleware\VerifyHostHeader`},
	{"typo3/cms-core/normalized-params-attribute", `TYPO3\CMS\Core\Middleware\NormalizedParamsAttribute`},
	{"typo3/cms-backend/locked-backend", `TYPO3\CMS\Backend\Middleware\LockedBackendGuard`},
	{"typo3/cms-backend/https-redirector", `TYPO3\CMS\Backend\Middleware\ForcedHttpsBackendRedirector`},
	{"typo3/cms-backend/backend-routing", `TYPO3\CMS\Backend\Middleware\BackendRouteInitialization`},
	{"typo3/cms-backend/authentication", `TYPO3\CMS\Backend\Middleware\BackendUserAuthenticator`},
	{"typo3/cms-backend/site-resolver", `TYPO3\CMS\Backend\Middleware\SiteResolver`},
	{"typo3/cms-backend/response-headers", `TYPO3\CMS\Backend\Middleware\AdditionalResponseHeaders`},
	{"typo3/cms-core/response-propagation", `TYPO3\CMS\Core\Middleware\ResponsePropagation`},
	{"typo3/cms-backend/output-compression", `TYPO3\CMS\Backend\Middleware\OutputCompression`},
}

// schedulerTable is tx_scheduler_task as EXT:scheduler v13.4 defines it.
// It is created beside the core tables (it is an extension's table, not
// part of the core schema SiteSchema mirrors).
func schedulerTable() *Table {
	return &Table{Name: "tx_scheduler_task", Columns: []Column{
		uidCol(),
		unsigned("crdate"),
		flag("disable"),
		flag("deleted"),
		vc("description", 255),
		unsigned("nextexecution"),
		unsigned("lastexecution_time"),
		text("lastexecution_failure"),
		vc("lastexecution_context", 3),
		blob("serialized_task_object"),
		blob("serialized_executions"),
		unsigned("task_group"),
	}}
}

// demoSchema is every table the demo creates.
func demoSchema() Schema { return append(SiteSchema(), schedulerTable()) }

// scheduler writes three tasks: a daily garbage collection, a failing
// link check and a disabled import whose serialized object holds a
// credential, which no tool may ever show.
func (g *generator) scheduler() error {
	day := int64(86400)
	next := (g.now/day+1)*day + 2*3600
	obj := func(class string, props map[string]string) []byte {
		var b strings.Builder
		fmt.Fprintf(&b, "O:%d:\"%s\":%d:{", len(class), class, len(props))
		for _, k := range []string{"taskUid", "table", "numberOfDays", "url", "username", "password"} {
			if v, ok := props[k]; ok {
				fmt.Fprintf(&b, "s:%d:\"%s\";s:%d:\"%s\";", len(k), k, len(v), v)
			}
		}
		b.WriteString("}")
		return []byte(b.String())
	}
	importPassword := "Imp" + g.p.demoSecret("import", 15)
	return g.rows("tx_scheduler_task", []map[string]any{
		{"uid": 1, "crdate": g.now - 300*day, "disable": 0, "deleted": 0, "description": "Remove old sys_log and sys_history rows",
			"nextexecution": next, "lastexecution_time": next - day, "lastexecution_failure": "", "lastexecution_context": "CLI",
			"serialized_task_object": obj(`TYPO3\CMS\Scheduler\Task\TableGarbageCollectionTask`, map[string]string{"taskUid": "1", "table": "sys_log", "numberOfDays": "180"}),
			"serialized_executions":  []byte("a:0:{}"), "task_group": 0},
		{"uid": 2, "crdate": g.now - 120*day, "disable": 0, "deleted": 0, "description": "Check links on product pages",
			"nextexecution": next + 3600, "lastexecution_time": next - day + 3600,
			"lastexecution_failure":  `O:34:"TYPO3\CMS\Core\Exception\RuntimeException":1:{s:7:"message";s:73:"Link check aborted: https://dealer:` + importPassword + `@portal.example/ answered 503";}`,
			"lastexecution_context":  "CLI",
			"serialized_task_object": obj(`TYPO3\CMS\Linkvalidator\Task\ValidatorTask`, map[string]string{"taskUid": "2"}),
			"serialized_executions":  []byte("a:0:{}"), "task_group": 0},
		{"uid": 3, "crdate": g.now - 60*day, "disable": 1, "deleted": 0, "description": "Import dealers from the partner portal",
			"nextexecution": 0, "lastexecution_time": g.now - 40*day, "lastexecution_failure": "", "lastexecution_context": "BE",
			"serialized_task_object": obj(`Nordlicht\SiteDemo\Task\DealerImportTask`, map[string]string{"taskUid": "3", "url": "https://portal.example/api/dealers", "username": "nordlicht", "password": importPassword}),
			"serialized_executions":  []byte("a:0:{}"), "task_group": 0},
	})
}
