package system

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/t3agent/t3agent/internal/builtin/introspect"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/extpath"
	"github.com/t3agent/t3agent/internal/typo3/middleware"
	"github.com/t3agent/t3agent/internal/typo3/packages"
	"github.com/t3agent/t3agent/internal/typo3/phparray"
	"github.com/t3agent/t3agent/internal/typo3/siteconfig"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

type systemStatus struct{ env }

func (t *systemStatus) Spec() tool.Spec {
	return introspect.Spec("get_system_status", tool.GroupSystem, tool.SystemDiagnostics, true,
		"An overview of the TYPO3 installation: TYPO3 version (from the installed typo3/cms-core package), "+
			"database server and version (asked from the database), installation mode (composer or classic), "+
			"application context (TYPO3_CONTEXT from the site's .env or t3agent's environment, else Production), "+
			"the PHP time zone configured in settings.php, the number of extensions and sites, and the operating "+
			"system of t3agent's own machine (labelled; the web server may differ). The PHP version needs "+
			"get_php_info. Use it first when asked about versions or the state of the installation.",
		`{"type":"object","properties":{},"additionalProperties":false}`)
}

var typo3VersionRE = regexp.MustCompile(`const\s+VERSION\s*=\s*'([^']+)'`)

func (t *systemStatus) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	if res, ok := introspect.Authorize(call); !ok {
		return res, nil
	}
	out := introspect.NewOutput(40)
	dbv, err := dbVersion(ctx, t.site.DB)
	if err != nil {
		return tool.Result{}, err
	}
	root := t.site.Root
	version, mode := "unknown (no installed typo3/cms-core found)", "unknown"
	exts := 0
	if root != "" {
		if l, err := packages.Read(root); err == nil {
			exts = len(l.Packages)
			for _, p := range l.Packages {
				if p.Name == "typo3/cms-core" || p.Key == "core" {
					version = strings.TrimPrefix(p.Version, "v")
				}
			}
			mode = "composer (" + l.Source + ")"
			if strings.HasSuffix(l.Source, "PackageStates.php") {
				mode = "classic (" + l.Source + ")"
			}
		}
		for _, p := range []string{"vendor/typo3/cms-core/Classes/Information/Typo3Version.php", "typo3/sysext/core/Classes/Information/Typo3Version.php", "public/typo3/sysext/core/Classes/Information/Typo3Version.php"} {
			if b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p))); err == nil {
				if m := typo3VersionRE.FindSubmatch(b); m != nil {
					version = string(m[1])
					break
				}
			}
		}
	}
	out.Line("TYPO3: %s", version)
	out.Line("Database: %s", dbv)
	out.Line("Installation mode: %s", mode)
	if root != "" {
		lookup := siteconfig.EnvLookup(root)
		ctxName := siteconfig.ApplicationContext(lookup)
		src := "default, TYPO3_CONTEXT is not set in .env or t3agent's environment"
		if _, ok := lookup("TYPO3_CONTEXT"); ok {
			src = "TYPO3_CONTEXT from the site's .env or t3agent's environment"
		}
		out.Line("Application context: %s (%s)", ctxName, src)
		out.Line("PHP time zone: %s", phpTimeZone(root))
		out.Line("Extensions: %d", exts)
		if sites, err := siteconfig.Load(siteconfig.Params{Root: root, Env: lookup}); err == nil {
			var ids []string
			for _, s := range sites {
				ids = append(ids, s.Identifier)
			}
			out.Line("Sites: %d (%s)", len(sites), strings.Join(ids, ", "))
		}
	} else {
		out.Line("Installation folder: not configured, so versions from files are unknown")
	}
	out.Line("t3agent's machine: %s/%s, time zone %s (the web server's may differ)", runtime.GOOS, runtime.GOARCH, time.Local.String())
	out.Line("PHP: not read here; get_php_info runs the PHP CLI if t3agent's machine has one")
	return tool.Text(out.String()), nil
}

// dbVersion asks the database server for its product and version.
func dbVersion(ctx context.Context, db *typo3.DB) (string, error) {
	var q, name string
	switch db.Dialect {
	case typo3.DialectSQLite:
		q, name = "SELECT sqlite_version()", "SQLite"
	case typo3.DialectMySQL:
		q, name = "SELECT VERSION()", "MySQL"
	case typo3.DialectPostgres:
		q, name = "SHOW server_version", "PostgreSQL"
	default:
		return "", fmt.Errorf("unknown database dialect %q", db.Dialect)
	}
	var v string
	if err := db.SQL.QueryRowContext(ctx, q).Scan(&v); err != nil {
		return "", fmt.Errorf("ask the database version: %w", err)
	}
	if db.Dialect == typo3.DialectMySQL && strings.Contains(strings.ToLower(v), "mariadb") {
		name = "MariaDB"
	}
	return name + " " + v, nil
}

// phpTimeZone reads SYS.phpTimeZone from settings.php (the array
// literal TYPO3 writes), without showing anything else of the file.
func phpTimeZone(root string) string {
	b, err := os.ReadFile(filepath.Join(root, "config", "system", "settings.php"))
	if err != nil {
		return "not configured (settings.php not readable); PHP's date.timezone applies"
	}
	v, err := phparray.Parse(b)
	if err != nil {
		return "unknown (settings.php is not a plain array)"
	}
	arr, _ := v.(*tca.Array)
	if tz, ok := arr.Array("SYS").Get("phpTimeZone"); ok {
		if s, ok := tz.(string); ok && s != "" {
			return introspect.Cut(s, 60)
		}
	}
	return "not set in settings.php (PHP's date.timezone applies)"
}

type listExtensions struct{ env }

func (t *listExtensions) Spec() tool.Spec {
	return introspect.Spec("list_extensions", tool.GroupSystem, tool.SystemDiagnostics, true,
		"The TYPO3 extensions installed, in load order, one line each: `- key version (composer/name) — description`, "+
			"read from vendor/composer/installed.json (composer mode) or typo3conf/PackageStates.php with each "+
			"extension's ext_emconf.php (classic mode); the first line names the file. filter keeps extensions "+
			"whose key or composer name contains the text. At most 300 lines. Use it to answer which extensions "+
			"and versions a site runs.",
		`{"type":"object","properties":{`+
			`"filter":{"type":"string","maxLength":100,"description":"Only extensions whose key or composer name contains this text."}`+
			`},"additionalProperties":false}`)
}

func (t *listExtensions) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	if res, ok := introspect.Authorize(call); !ok {
		return res, nil
	}
	filter, err := introspect.String(args, "filter")
	if err != nil {
		return tool.Errorf("%s.", err.Error()), nil
	}
	root, ok := t.root()
	if !ok {
		return tool.Errorf("%s", noRoot), nil
	}
	l, err := packages.Read(root)
	if errors.Is(err, packages.ErrNone) {
		return tool.Errorf("No extension list found: %s.", err.Error()), nil
	}
	if err != nil {
		return tool.Errorf("The extension list cannot be read: %s.", introspect.Cut(err.Error(), 300)), nil
	}
	out := introspect.NewOutput(300)
	f := strings.ToLower(filter)
	var shown []packages.Package
	for _, p := range l.Packages {
		if f == "" || strings.Contains(strings.ToLower(p.Key), f) || strings.Contains(strings.ToLower(p.Name), f) {
			shown = append(shown, p)
		}
	}
	head := fmt.Sprintf("%d TYPO3 extensions in %s", len(shown), l.Source)
	if f != "" {
		head += fmt.Sprintf(" matching %q (of %d)", filter, len(l.Packages))
	}
	if l.Others > 0 {
		head += fmt.Sprintf("; %d other Composer packages not listed", l.Others)
	}
	out.Line("%s:", head)
	for _, p := range shown {
		line := "- " + p.Key + " " + orDash(p.Version)
		if p.Name != "" {
			line += " (" + p.Name + ")"
		}
		if p.Description != "" {
			line += " — " + introspect.Cut(p.Description, 160)
		}
		out.Line("%s", introspect.Text(line))
	}
	return tool.Text(out.String()), nil
}

type listMiddlewares struct{ env }

func (t *listMiddlewares) Spec() tool.Spec {
	return introspect.Spec("list_middlewares", tool.GroupSystem, tool.SystemDiagnostics, true,
		"The PSR-15 middleware stack of TYPO3's frontend or backend, in request order (outermost first), one line "+
			"each: `N. identifier → class`. Read from the stack TYPO3 cached "+
			"(var/cache/code/core/middlewares_<stack>_*.php); without a cache, built from every extension's "+
			"Configuration/RequestMiddlewares.php ordered by their before/after rules (then labelled as such). "+
			"stack is frontend (default) or backend. Use it to see where a custom middleware runs relative to "+
			"TYPO3's own (site resolution, authentication, page resolution).",
		`{"type":"object","properties":{`+
			`"stack":{"type":"string","enum":["frontend","backend"],"default":"frontend","description":"Which application's stack."}`+
			`},"additionalProperties":false}`)
}

func (t *listMiddlewares) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	if res, ok := introspect.Authorize(call); !ok {
		return res, nil
	}
	stack, err := introspect.String(args, "stack")
	if err != nil || (stack != "" && stack != "frontend" && stack != "backend") {
		return tool.Errorf("stack must be frontend or backend."), nil
	}
	if stack == "" {
		stack = "frontend"
	}
	root, ok := t.root()
	if !ok {
		return tool.Errorf("%s", noRoot), nil
	}
	out := introspect.NewOutput(200)
	entries, src, err := middleware.Cached(root, stack)
	var notes []string
	switch {
	case err == nil:
		out.Line("The %s middleware stack as TYPO3 cached it in %s (%d entries, outermost first):", stack, src, len(entries))
	case errors.Is(err, middleware.ErrNoCache):
		m, err := extpath.Resolve(root)
		if err != nil {
			return tool.Errorf("No cached middleware stack exists and the extensions cannot be listed: %s.", introspect.Cut(err.Error(), 200)), nil
		}
		var exts []string
		if l, err := packages.Read(root); err == nil {
			for _, p := range l.Packages {
				exts = append(exts, p.Key)
			}
		} else {
			exts = m.Keys()
		}
		entries, notes = middleware.FromExtensions(m, exts, stack)
		if len(entries) == 0 {
			return tool.Text(fmt.Sprintf("No cached %s middleware stack exists (TYPO3 writes it to var/cache/code/core on the first request) and no extension's Configuration/RequestMiddlewares.php could be read.", stack)), nil
		}
		out.Line("No cached stack exists; the %s stack as ordered from the extensions' Configuration/RequestMiddlewares.php (%d entries, outermost first):", stack, len(entries))
	default:
		return tool.Errorf("The cached middleware stack cannot be read: %s.", introspect.Cut(err.Error(), 300)), nil
	}
	for i, e := range entries {
		line := fmt.Sprintf("%d. %s → %s", i+1, e.Name, orDash(e.Target))
		if e.Extension != "" {
			line += " (EXT:" + e.Extension + ")"
		}
		out.Line("%s", line)
	}
	for _, n := range notes {
		out.Line("Note: %s", introspect.Cut(n, 300))
	}
	return tool.Text(out.String()), nil
}
