package system_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/builtin/introspect/introspecttest"
	"github.com/t3agent/t3agent/internal/builtin/system"
	"github.com/t3agent/t3agent/internal/dbtest"
	"github.com/t3agent/t3agent/internal/egress/egresstest"
	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

func tools(site *typo3.Site) []tool.Tool { return system.Tools(site, readpolicy.New(site.TCA)) }

func demoFixture(t *testing.T) *introspecttest.Fixture {
	t.Helper()
	return introspecttest.Demo(t, typo3.DialectSQLite, tools)
}

func TestSpecs(t *testing.T) {
	t.Parallel()
	want := map[string]bool{"fetch_logs": true, "list_deprecations": true, "get_system_status": true, "list_extensions": true,
		"list_middlewares": true, "list_scheduler_tasks": true, "probe_url": true, "get_env": true, "get_php_info": true,
		"get_env_raw": false, "get_php_info_raw": false}
	for _, tl := range system.Tools(nil, nil) {
		s := tl.Spec()
		if err := s.Validate(); err != nil {
			t.Error(err)
		}
		enabled, ok := want[s.Name]
		class := tool.SystemDiagnostics
		if !enabled {
			class = tool.SecretAdjacent
		}
		if !ok || s.Group != tool.GroupSystem || !s.AdminOnly || s.EnabledByDefault != enabled || s.Effect != tool.ReadOnly || s.DataClass != class {
			t.Errorf("%s: %+v", s.Name, s)
		}
		delete(want, s.Name)
	}
	if len(want) != 0 {
		t.Errorf("missing tools %v", want)
	}
}

// TestDemo runs every system tool on one demo site.
func TestDemo(t *testing.T) {
	t.Parallel()
	f := demoFixture(t)
	f.Enable("get_env_raw", "get_php_info_raw")
	{ // fetch_logs
		got := f.OK("fetch_logs", nil)
		if n := strings.Count(got, "\n") + 1; n != 20 {
			t.Errorf("%d lines, want 20:\n%s", n, got)
		}
		errs := f.OK("fetch_logs", map[string]any{"level": "error", "limit": 50})
		for _, l := range strings.Split(errs, "\n") {
			if !strings.Contains(l, " [error] ") {
				t.Errorf("level error gave %q", l)
			}
		}
		introspecttest.Has(t, "error entries", errs, `TYPO3.CMS.Core.DataHandling.DataHandler: Attempt to modify table "be_users" without permission`)
		// IP addresses, user ids and log_data are never read.
		rows, err := f.Site.DB.SQL.Query("SELECT DISTINCT IP FROM sys_log WHERE IP <> ''")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		all := f.OK("fetch_logs", map[string]any{"limit": 50}) + f.OK("fetch_logs", map[string]any{"level": "warning", "limit": 50})
		for rows.Next() {
			var ip string
			if err := rows.Scan(&ip); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(all, ip) {
				t.Errorf("fetch_logs shows the IP %s", ip)
			}
		}
		if got := f.Refused("fetch_logs", map[string]any{"level": "fatal"}); got == "" {
			t.Error("level fatal accepted")
		}
	}
	{ // list_deprecations
		got := f.OK("list_deprecations", nil)
		introspecttest.Has(t, "deprecations", got, "4 distinct deprecation notices", "(×3, last ", "(×2, last ",
			"packages/site_demo/Classes/ViewHelpers/PageTitleViewHelper.php line 37")
		if strings.Contains(got, "/var/www/html") {
			t.Errorf("absolute server paths:\n%s", got)
		}
		if got := f.OK("list_deprecations", map[string]any{"limit": 1}); !strings.Contains(got, "… 3 more distinct notices.") {
			t.Errorf("limit 1:\n%s", got)
		}
	}
	{ // get_system_status
		got := f.OK("get_system_status", nil)
		introspecttest.Has(t, "status", got, "TYPO3: 13.4.34", "Database: SQLite 3.", "Installation mode: composer (vendor/composer/installed.json)",
			"Application context: Development/Local (TYPO3_CONTEXT from the site's .env", "Sites: 2 (campaign, main)",
			"PHP time zone: not set in settings.php (PHP's date.timezone applies)", "t3agent's machine: ")
		f.NoSecrets(t, "status", got)
		if strings.Contains(got, "encryptionKey") {
			t.Errorf("settings.php leaks:\n%s", got)
		}
	}
	{ // list_extensions
		got := f.OK("list_extensions", nil)
		introspecttest.Has(t, "extensions", got, "TYPO3 extensions in vendor/composer/installed.json", "- site_demo 1.4.0 (nordlicht/site-demo) — Site package",
			"- core v13.4.34 (typo3/cms-core)", "other Composer packages not listed")
		got = f.OK("list_extensions", map[string]any{"filter": "fluid"})
		introspecttest.Has(t, "filtered", got, "matching \"fluid\"", "- fluid_styled_content ")
		if strings.Contains(got, "site_demo") {
			t.Errorf("filter fluid shows site_demo:\n%s", got)
		}
	}
	{ // list_middlewares
		got := f.OK("list_middlewares", nil)
		introspecttest.Has(t, "frontend", got, "as TYPO3 cached it in var/cache/code/core/middlewares_frontend_",
			"1. typo3/cms-core/verify-host-header → TYPO3\\CMS\\Core\\Middleware\\VerifyHostHeader",
			"13. typo3/cms-frontend/page-resolver", "14. nordlicht/site-demo/dealer-map-cache → Nordlicht\\SiteDemo\\Middleware\\DealerMapCache")
		introspecttest.Has(t, "backend", f.OK("list_middlewares", map[string]any{"stack": "backend"}), "1. typo3/cms-core/verify-host-header", "typo3/cms-backend/authentication")
	}
	{ // list_scheduler_tasks
		got := f.OK("list_scheduler_tasks", nil)
		introspecttest.Has(t, "tasks", got, "- [1] — Remove old sys_log and sys_history rows · next run ", "- [3] — Import dealers from the partner portal",
			"· disabled", "last failure: ", "never read")
		introspecttest.Has(t, "tasks", got, "last failure: Link check aborted: https://dealer:[REDACTED")
		for _, no := range []string{"DealerImportTask", "portal.example/api", "O:", "s:7:"} {
			if strings.Contains(got, no) {
				t.Errorf("tasks show %q:\n%s", no, got)
			}
		}
		f.NoSecrets(t, "tasks", got)
	}
	{ // get_env
		got := f.OK("get_env", nil)
		introspecttest.Has(t, "env", got, "The TYPO3 project's .env file, credential-like names redacted:", "TYPO3_CONTEXT=Development/Local",
			"DEALER_MAP_API_KEY=[redacted]", "TYPO3_DB_PASSWORD=[redacted]", "MAILER_DSN=[redacted]", "SENTRY_RELEASE=site-demo@1.4.0", "OAUTH_CLIENT_ID=[redacted]")
		f.NoSecrets(t, "get_env", got)
		raw := f.OK("get_env_raw", nil)
		introspecttest.Has(t, "raw", raw, "CAMPAIGN_BASE=https://season.nordlicht-pumps.example/", "MAILER_DSN=[redacted]", "DEALER_MAP_API_KEY=[redacted]", "OAUTH_CLIENT_ID=nordlicht-backend")
		f.NoSecrets(t, "get_env_raw", raw)
		proc := f.OK("get_env", map[string]any{"source": "t3agent", "prefix": "PATH"})
		introspecttest.Has(t, "process env", proc, "The environment of the t3agent process (not the web server's)", "PATH=")
		if got := f.OK("get_env", map[string]any{"prefix": "NOPE_"}); !strings.Contains(got, "(no variables with that prefix)") {
			t.Errorf("prefix without match:\n%s", got)
		}
	}
	{ // get_php_info
		got := f.OK("get_php_info", nil)
		if _, err := exec.LookPath("php"); err != nil {
			introspecttest.Has(t, "php", got, "PHP information is unavailable: t3agent's machine has no PHP command line")
		} else {
			introspecttest.Has(t, "php", got, "the command line on t3agent's machine", "memory_limit = ")
		}
	}
}

// TestPHPUnavailable: a configured PHP that does not exist is reported,
// never guessed.
func TestPHPUnavailable(t *testing.T) {
	t.Parallel()
	f := introspecttest.Demo(t, typo3.DialectSQLite, func(s *typo3.Site) []tool.Tool {
		return system.ToolsWith(s, system.Params{PHP: filepath.Join(t.TempDir(), "php8.9")})
	})
	f.Enable("get_php_info_raw")
	for _, name := range []string{"get_php_info", "get_php_info_raw"} {
		if got := f.OK(name, nil); !strings.HasPrefix(got, "PHP information is unavailable") {
			t.Errorf("%s: %s", name, got)
		}
	}
}

// TestMiddlewaresFallback: without a cache the stack comes from the
// extensions' RequestMiddlewares.php files.
func TestMiddlewaresFallback(t *testing.T) {
	t.Parallel()
	f := demoFixture(t)
	m, _ := filepath.Glob(filepath.Join(f.Site.Root, "var", "cache", "code", "core", "middlewares_*.php"))
	for _, p := range m {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	got := f.OK("list_middlewares", nil)
	introspecttest.Has(t, "fallback", got, "No cached stack exists", "1. nordlicht/site-demo/dealer-map-cache → Nordlicht\\SiteDemo\\Middleware\\DealerMapCache (EXT:site_demo)")
}

// TestClassicMode reads PackageStates.php and ext_emconf.php.
func TestClassicMode(t *testing.T) {
	t.Parallel()
	d := introspecttest.Demo(t, typo3.DialectSQLite, func(*typo3.Site) []tool.Tool { return nil })
	root := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("typo3conf/PackageStates.php", "<?php\n# PackageStates.php\nreturn [\n    'packages' => [\n        'core' => [\n            'packagePath' => 'typo3/sysext/core/',\n        ],\n        'news' => [\n            'packagePath' => 'typo3conf/ext/news/',\n        ],\n    ],\n    'version' => 5,\n];\n")
	write("typo3/sysext/core/ext_emconf.php", "<?php\n$EM_CONF[$_EXTKEY] = [\n    'title' => 'TYPO3 Core',\n    'version' => '12.4.20',\n];\n")
	write("typo3conf/ext/news/ext_emconf.php", "<?php\n$EM_CONF[$_EXTKEY] = ['title' => 'News system', \"version\" => \"11.4.1\"];\n")
	site, err := typo3.NewSite(typo3.SiteParams{DB: d.Site.DB, TCA: d.Site.TCA, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	f := introspecttest.Over(t, site, d.Demo, tools)
	introspecttest.Has(t, "classic", f.OK("list_extensions", nil), "2 TYPO3 extensions in typo3conf/PackageStates.php:", "- core 12.4.20 — TYPO3 Core", "- news 11.4.1 — News system")
	introspecttest.Has(t, "classic status", f.OK("get_system_status", nil), "Installation mode: classic (typo3conf/PackageStates.php)")
}

// TestIntroductionExtensions lists the extensions of the test material's
// introduction installation (bootstrap_package and the core extensions).
func TestIntroductionExtensions(t *testing.T) {
	t.Parallel()
	d := introspecttest.Demo(t, typo3.DialectSQLite, func(*typo3.Site) []tool.Tool { return nil })
	material := dbtest.TYPO3Material(t)
	root := t.TempDir()
	var pkgs []string
	pkgs = append(pkgs, fmt.Sprintf(`{"name":"benjaminkott/bootstrap_package","version":"15.0.4","type":"typo3-cms-extension","install-path":%q,"extra":{"typo3/cms":{"extension-key":"bootstrap_package"}}}`, filepath.Join(material, "bootstrap_package")))
	ents, err := os.ReadDir(filepath.Join(material, "core-extensions"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		pkgs = append(pkgs, fmt.Sprintf(`{"name":"typo3/cms-%s","version":"v13.4.34","type":"typo3-cms-framework"}`, strings.ReplaceAll(e.Name(), "_", "-")))
	}
	if err := os.MkdirAll(filepath.Join(root, "vendor", "composer"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "vendor", "composer", "installed.json"), []byte(`{"packages":[`+strings.Join(pkgs, ",")+`]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	site, err := typo3.NewSite(typo3.SiteParams{DB: d.Site.DB, TCA: d.Site.TCA, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	f := introspecttest.Over(t, site, d.Demo, tools)
	got := f.OK("list_extensions", nil)
	introspecttest.Has(t, "introduction", got, fmt.Sprintf("%d TYPO3 extensions", len(ents)+1), "- bootstrap_package 15.0.4 (benjaminkott/bootstrap_package)",
		"- fluid_styled_content v13.4.34 (typo3/cms-fluid-styled-content)", "- felogin v13.4.34 (typo3/cms-felogin)")
}

func TestProbeURL(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("X-TYPO3-Cache", "HIT")
			w.Header().Set("Set-Cookie", "fe_typo_user=abc")
			fmt.Fprint(w, "<html><head><title>Home</title></head><body>"+strings.Repeat("x", 5000)+"</body></html>")
		case "/old":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data", http.StatusFound)
		case "/boom":
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, "Oops, an error occurred! password=Hunter2secret")
		}
	}))
	t.Cleanup(srv.Close)
	f := demoFixture(t)
	// A third site on the test server, and one whose base variants are
	// every address the egress guard refuses.
	var variants strings.Builder
	for raw, want := range egresstest.URLCases() {
		if want != "" {
			fmt.Fprintf(&variants, "  - { base: %q, condition: 'false' }\n", raw)
		}
	}
	for id, cfg := range map[string]string{
		"probe":   "rootPageId: 1\nbase: '" + srv.URL + "/'\n",
		"refused": "rootPageId: 1\nbase: 'http://10.0.0.5/'\nbaseVariants:\n" + variants.String(),
	} {
		dir := filepath.Join(f.Site.Root, "config", "sites", id)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := f.OK("probe_url", map[string]any{"url": srv.URL + "/"})
	introspecttest.Has(t, "probe", got, "→ HTTP 200 OK", "content-type: text/html; charset=utf-8", "x-typo3-cache: HIT", "Body (first 2048 bytes):", "<title>Home</title>")
	if strings.Contains(got, "fe_typo_user") || len(got) > 4000 {
		t.Errorf("probe shows other headers or too much body (%d bytes):\n%.300s", len(got), got)
	}
	got = f.OK("probe_url", map[string]any{"url": srv.URL + "/old"})
	introspecttest.Has(t, "redirect", got, "→ HTTP 302 Found", "location: http://169.254.169.254/latest/meta-data")
	// A recent error in the TYPO3 log is added to a 5xx answer.
	logs, _ := filepath.Glob(filepath.Join(f.Site.Root, "var", "log", "typo3_[0-9a-f]*.log"))
	line := time.Now().UTC().Format("Mon, 02 Jan 2006 15:04:05 -0700") + ` [CRITICAL] request="abc" component="TYPO3.CMS.Frontend": Probe failure right now` + "\n"
	fh, err := os.OpenFile(logs[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fh.WriteString(line); err != nil {
		t.Fatal(err)
	}
	_ = fh.Close()
	got = f.OK("probe_url", map[string]any{"url": srv.URL + "/boom"})
	introspecttest.Has(t, "5xx", got, "→ HTTP 500", "Probe failure right now", "password=[REDACTED")
	if strings.Contains(got, "Hunter2secret") {
		t.Errorf("body credential shown:\n%s", got)
	}
	// Not a site base: refused before any request.
	for _, u := range []string{"http://127.0.0.1:1/", "https://example.com/", srv.URL + "0/", "http://10.0.0.5:8080/"} {
		if got := f.Refused("probe_url", map[string]any{"url": u}); !strings.Contains(got, "is not the host and port of a configured site base") {
			t.Errorf("probe %s: %s", u, got)
		}
	}
	// The egress guard's cases: every address it refuses stays refused,
	// although a site names it as a base.
	for raw, want := range egresstest.URLCases() {
		if want == "" {
			continue
		}
		got := f.Refused("probe_url", map[string]any{"url": raw})
		if !strings.HasPrefix(got, "The URL is refused: ") || !strings.Contains(got, want) && !strings.Contains(got, "no host") {
			t.Errorf("probe %.60q: %q, want the guard's refusal (%s)", raw, got, want)
		}
	}
}

// TestDialects runs the database-reading system tools on MariaDB and
// PostgreSQL (skipped when their DSNs are not set).
func TestDialects(t *testing.T) {
	t.Parallel()
	for _, d := range []typo3.Dialect{typo3.DialectMySQL, typo3.DialectPostgres} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			f := introspecttest.Demo(t, d, tools)
			want := map[typo3.Dialect]string{typo3.DialectMySQL: "Database: MariaDB ", typo3.DialectPostgres: "Database: PostgreSQL "}[d]
			introspecttest.Has(t, "status", f.OK("get_system_status", nil), want, "TYPO3: 13.4.34")
			logs := f.OK("fetch_logs", map[string]any{"level": "error", "limit": 5})
			introspecttest.Has(t, "logs", logs, " [error] ")
			tasks := f.OK("list_scheduler_tasks", nil)
			introspecttest.Has(t, "tasks", tasks, "- [3] — Import dealers from the partner portal", "· disabled")
			f.NoSecrets(t, "tasks", tasks)
		})
	}
}
