package doctor_test

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/config"
	"github.com/t3agent/t3agent/internal/dbtest"
	"github.com/t3agent/t3agent/internal/demo"
	"github.com/t3agent/t3agent/internal/demo/demotest"
	"github.com/t3agent/t3agent/internal/doctor"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// install is an installation for doctor: a demo site, a store, a master
// key, and the configuration naming them.
type install struct {
	cfg  config.Config
	site *demotest.Site
}

func newInstall(t *testing.T, d typo3.Dialect) *install {
	t.Helper()
	site := demotest.NewWith(t, d, demo.InitParams{Pages: 25, Content: 6})
	dir := t.TempDir()
	cfg := config.Default(dir)
	cfg.Site.DSN, cfg.Site.Root, cfg.Site.Name = site.DSN, site.Root, "demo"
	cfg.Security.MasterKeyFile = filepath.Join(dir, "master.key")
	if _, err := config.EnsureMasterKeyFile(cfg.Security.MasterKeyFile); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.Context(), cfg.Store.DSN, store.OpenParams{})
	if err != nil {
		t.Fatal(err)
	}
	_ = st.Close()
	return &install{cfg: cfg, site: site}
}

// run runs doctor and returns the findings by check.
func (in *install) run(t *testing.T, env map[string]string) (map[string]doctor.Finding, doctor.Report) {
	t.Helper()
	rep := doctor.Run(t.Context(), doctor.Params{Config: in.cfg, Timeout: 5 * time.Second,
		LookupEnv: func(name string) (string, bool) { v, ok := env[name]; return v, ok }})
	byCheck := map[string]doctor.Finding{}
	for _, f := range rep.Findings {
		if _, dup := byCheck[f.Check]; dup {
			t.Errorf("check %s reported twice", f.Check)
		}
		byCheck[f.Check] = f
		if f.Severity != doctor.OK && f.Fix == "" {
			t.Errorf("finding %s (%s) has no fix: %s", f.Check, f.Severity, f.Message)
		}
		if strings.Contains(f.Message+f.Fix, "\n") {
			t.Errorf("finding %s spans lines", f.Check)
		}
	}
	return byCheck, rep
}

func expect(t *testing.T, got map[string]doctor.Finding, check string, sev doctor.Severity, msg, fix string) {
	t.Helper()
	f, ok := got[check]
	switch {
	case !ok:
		t.Errorf("no finding %s", check)
	case f.Severity != sev || !strings.Contains(f.Message, msg) || !strings.Contains(f.Fix, fix):
		t.Errorf("%s = %s %q (fix %q); want %s containing %q, fix containing %q", check, f.Severity, f.Message, f.Fix, sev, msg, fix)
	}
}

// withAgents applies a provider at endpoint with model "llmtest-large"
// and adds an MCP server at mcpURL with a bearer token.
func (in *install) withAgents(t *testing.T, endpoint, mcpURL string) {
	t.Helper()
	ctx := t.Context()
	st, err := store.Open(ctx, in.cfg.Store.DSN, store.OpenParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	keys, err := in.cfg.Keyring()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := agentconfig.ParseDocument(fmt.Appendf(nil, `
providers:
  - identifier: local
    adapter: openai_compatible
    endpoint: %s
    api_key: env:LLM_KEY
    trust_zone: local
models:
  - identifier: large
    provider: local
    model_id: llmtest-large
configurations:
  - identifier: assistant
    model: large
`, endpoint))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agentconfig.New(agentconfig.Params{Store: st, Keyring: keys}).Apply(ctx, agentconfig.ApplyParams{Document: doc, By: "admin"}); err != nil {
		t.Fatal(err)
	}
	svc, err := mcp.New(mcp.Params{Store: st, Keyring: keys, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	if _, err := svc.Add(ctx, mcp.AddParams{Identifier: "docs", URL: mcpURL, Auth: mcp.AuthBearer, Credential: "right-token",
		DataClass: tool.EditorContent, Enabled: true, By: "admin"}); err != nil {
		t.Fatal(err)
	}
}

// mcpServer is a go-sdk MCP server that takes only the bearer token
// "right-token".
func mcpServer(t *testing.T) *httptest.Server {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "docs", Version: "2.0.0"}, nil)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer right-token" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		srv.Close()
		for ss := range s.Sessions() {
			_ = ss.Close()
		}
	})
	return srv
}

// TestDemoIsGreen: the demo with a reachable provider and MCP server has
// no finding but ok, and exit code 0.
func TestDemoIsGreen(t *testing.T) {
	t.Parallel()
	in := newInstall(t, typo3.DialectSQLite)
	llm := llmtest.NewOpenAI(t)
	in.withAgents(t, llm.BaseURL(), mcpServer(t).URL)
	got, rep := in.run(t, map[string]string{"LLM_KEY": llmtest.Key})
	for _, f := range rep.Findings {
		if f.Severity != doctor.OK {
			t.Errorf("%s: %s %s (fix: %s)", f.Check, f.Severity, f.Message, f.Fix)
		}
	}
	if rep.ExitCode() != 0 {
		t.Errorf("exit code %d", rep.ExitCode())
	}
	for _, c := range []string{"site.database", "site.read_only", "site.tca", "site.root", "site.logs", "store.database", "store.schema",
		"security.master_key", "provider:local", "mcp:docs", "http.listen"} {
		if _, ok := got[c]; !ok {
			t.Errorf("no finding %s", c)
		}
	}
	expect(t, got, "mcp:docs", doctor.OK, "login: bearer token", "")
	expect(t, got, "provider:local", doctor.OK, "answers with", "")
}

// TestDeadProviderAndMCPServer: a provider and an MCP server that do not
// answer, and an MCP server that refuses the login, are errors naming
// each and saying what to do.
func TestDeadProviderAndMCPServer(t *testing.T) {
	t.Parallel()
	in := newInstall(t, typo3.DialectSQLite)
	llm := httptest.NewServer(http.NotFoundHandler())
	llm.Close()
	mcpSrv := mcpServer(t)
	mcpSrv.Close()
	in.withAgents(t, llm.URL+"/v1", mcpSrv.URL)
	got, rep := in.run(t, map[string]string{"LLM_KEY": "k"})
	expect(t, got, "provider:local", doctor.Error, "is not reachable", "check providers[].endpoint of local")
	expect(t, got, "mcp:docs", doctor.Error, "is not reachable", "t3agent mcp set docs --url URL")
	if rep.ExitCode() != 2 {
		t.Errorf("exit code %d, want 2", rep.ExitCode())
	}

	// A server that answers but refuses the stored token.
	in2 := newInstall(t, typo3.DialectSQLite)
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	t.Cleanup(refusing.Close)
	good := llmtest.NewOpenAI(t)
	in2.withAgents(t, good.BaseURL(), refusing.URL)
	got, _ = in2.run(t, map[string]string{}) // and the provider's key variable is unset
	expect(t, got, "mcp:docs", doctor.Error, "refuses t3agent's login (login: bearer token)", "t3agent mcp set docs --credential-env")
	expect(t, got, "provider:local", doctor.Error, "LLM_KEY is not set", "set the variable its api_key names")
}

// TestWritableSiteDatabase: a site database user that may write is a loud
// warning on MariaDB and PostgreSQL, a read-only user is ok, and a SQLite
// site is opened read-only.
func TestWritableSiteDatabase(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		dialect  typo3.Dialect
		readOnly func(t *testing.T, dsn string) string // a read-only user's DSN
	}{
		{"sqlite", typo3.DialectSQLite, nil},
		{"mariadb", typo3.DialectMySQL, mysqlReadOnlyUser},
		{"postgres", typo3.DialectPostgres, postgresReadOnlyRole},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			in := newInstall(t, c.dialect)
			got, _ := in.run(t, nil)
			if c.readOnly == nil {
				expect(t, got, "site.read_only", doctor.OK, "opened read-only (mode=ro)", "")
				return
			}
			expect(t, got, "site.read_only", doctor.Warning, "WRITE ACCESS", "SELECT")
			in.cfg.Site.DSN = c.readOnly(t, in.site.DSN)
			got, _ = in.run(t, nil)
			expect(t, got, "site.read_only", doctor.OK, "", "")
			expect(t, got, "site.clock", doctor.OK, "agrees with this machine's", "")
		})
	}
}

// mysqlReadOnlyUser creates a user with SELECT on the site database only.
func mysqlReadOnlyUser(t *testing.T, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	cfg := mysql.NewConfig()
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.Net, cfg.Addr = "tcp", u.Host
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	user := "ro_" + strings.TrimPrefix(name, "t3a_")
	for _, q := range []string{
		"CREATE USER '" + user + "'@'%' IDENTIFIED BY 'ro-pass'",
		"GRANT SELECT ON `" + name + "`.* TO '" + user + "'@'%'",
	} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() { _, _ = admin.Exec("DROP USER '" + user + "'@'%'") })
	u.User = url.UserPassword(user, "ro-pass")
	return u.String()
}

// postgresReadOnlyRole creates a login role with SELECT on the site's
// tables only.
func postgresReadOnlyRole(t *testing.T, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	role := "ro_" + strings.TrimPrefix(strings.TrimPrefix(u.Path, "/"), "t3a_")
	for _, q := range []string{
		"CREATE ROLE " + role + " LOGIN PASSWORD 'ro-pass'",
		"GRANT SELECT ON ALL TABLES IN SCHEMA public TO " + role,
	} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// The database is dropped after this cleanup runs; the role must
		// give up its grants first.
		_, _ = admin.ExecContext(ctx, "REVOKE ALL ON ALL TABLES IN SCHEMA public FROM "+role)
		_ = admin.Close()
		base, err := sql.Open("pgx", os.Getenv(dbtest.PostgresEnv))
		if err != nil {
			return
		}
		defer base.Close()
		_, _ = base.ExecContext(ctx, "DROP ROLE IF EXISTS "+role)
	})
	u.User = url.UserPassword(role, "ro-pass")
	return u.String()
}

// TestMissingTCACache: a site with record tables the bundled TCA lacks,
// and no TCA cache file, is a warning naming them and how to get the
// cache written; TYPO3's cache file, once there, is the source.
func TestMissingTCACache(t *testing.T) {
	t.Parallel()
	in := newInstall(t, typo3.DialectSQLite)
	db, err := sql.Open("sqlite", strings.TrimPrefix(in.site.DSN, "sqlite:"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE tx_news_domain_model_news (uid INTEGER PRIMARY KEY, pid INTEGER NOT NULL DEFAULT 0, title TEXT)`); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	got, rep := in.run(t, nil)
	expect(t, got, "site.tca", doctor.Warning, "lacks 1 record tables of the site (tx_news_domain_model_news)", "vendor/bin/typo3 cache:warmup")
	if rep.ExitCode() != 1 {
		t.Errorf("exit code %d, want 1", rep.ExitCode())
	}

	fixture := filepath.Join(dbtest.TYPO3Material(t), "tca-cache-fixture", "var", "cache", "code", "core", "tca_base_0123456789abcdef.php")
	b, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(in.site.Root, "var", "cache", "code", "core")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cache, "tca_base_0123456789abcdef.php"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	got, _ = in.run(t, nil)
	expect(t, got, "site.tca", doctor.OK, "tca_base_0123456789abcdef.php", "")
}

// TestInstallationProblems: the master key, the store, the listener, the
// root and a clock that is off, each named with its fix.
func TestInstallationProblems(t *testing.T) {
	t.Parallel()
	in := newInstall(t, typo3.DialectSQLite)
	in.cfg.Listen = "0.0.0.0:8080"
	in.cfg.Site.Root = ""
	got, _ := in.run(t, nil)
	expect(t, got, "http.listen", doctor.Warning, "plain HTTP, reachable from other machines", "TLS-terminating reverse proxy")
	expect(t, got, "site.root", doctor.Warning, "site.root is not set", "set site.root")
	expect(t, got, "providers", doctor.Warning, "no provider is configured", "t3agent apply")

	in.cfg.Store.DSN = "sqlite:" + filepath.Join(t.TempDir(), "absent.db")
	in.cfg.Security.MasterKeyFile = filepath.Join(t.TempDir(), "absent.key")
	got, _ = in.run(t, nil)
	expect(t, got, "store.database", doctor.Warning, "does not exist yet", "start t3agent once")
	expect(t, got, "security.master_key", doctor.Warning, "does not exist yet", "back the key up")
	if _, err := os.Stat(in.cfg.Security.MasterKeyFile); err == nil {
		t.Error("doctor created the master key")
	}

	// A site database whose clock runs an hour ahead of ours; the skew
	// measured is an hour give or take the round trip, shown to the second.
	my := newInstall(t, typo3.DialectMySQL)
	rep := doctor.Run(t.Context(), doctor.Params{Config: my.cfg, Now: func() time.Time { return time.Now().Add(-time.Hour) }})
	got = map[string]doctor.Finding{}
	for _, f := range rep.Findings {
		got[f.Check] = f
	}
	expect(t, got, "site.clock", doctor.Warning, "clock is 1h0m0s off", "NTP")
}

// TestSealedWithAnotherKey: a store restored with another master key is
// an error on the credentials it cannot open.
func TestSealedWithAnotherKey(t *testing.T) {
	t.Parallel()
	in := newInstall(t, typo3.DialectSQLite)
	st, err := store.Open(t.Context(), in.cfg.Store.DSN, store.OpenParams{})
	if err != nil {
		t.Fatal(err)
	}
	keys, _ := in.cfg.Keyring()
	doc, _ := agentconfig.ParseDocument([]byte("providers:\n  - identifier: sealed\n    adapter: openai\n    api_key: sk-live-1\n    trust_zone: externalGlobal\n"))
	if _, err := agentconfig.New(agentconfig.Params{Store: st, Keyring: keys}).Apply(t.Context(), agentconfig.ApplyParams{Document: doc, By: "admin"}); err != nil {
		t.Fatal(err)
	}
	_ = st.Close()
	in.cfg.Security.MasterKeyFile = filepath.Join(t.TempDir(), "other.key")
	if _, err := config.EnsureMasterKeyFile(in.cfg.Security.MasterKeyFile); err != nil {
		t.Fatal(err)
	}
	got, _ := in.run(t, nil)
	expect(t, got, "provider:sealed", doctor.Error, "the master key does not open provider sealed's sealed key", "security.previous_keys")
}
