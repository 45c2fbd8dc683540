package configuration_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/builtin/configuration"
	"github.com/t3agent/t3agent/internal/dbtest"
	"github.com/t3agent/t3agent/internal/demo"
	"github.com/t3agent/t3agent/internal/demo/demotest"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/gate/gatetest"
	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// fixture runs the configuration tools of one site through a real gate
// with a real store, acting as the site's backend users. rw writes into
// the same site database, for tests that plant TypoScript.
type fixture struct {
	t     *testing.T
	site  *typo3.Site
	rw    *typo3.DB
	gate  *gate.Gate
	users map[string]*typo3.BackendUser
	// material is the TYPO3 test material of an introduction fixture.
	material string
}

// newFixture registers tools behind a gate and loads the named users; a
// user who cannot act (disabled) acts as nil, as the product hands such a
// request to a tool.
func newFixture(t *testing.T, site *typo3.Site, dsn string, tools []tool.Tool, usernames ...string) *fixture {
	t.Helper()
	g := gatetest.New(t, nil, tools...)
	rw, err := typo3.Open(context.Background(), dsn, typo3.OpenParams{Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rw.Close() })
	return &fixture{t: t, site: site, rw: rw, gate: g, users: gatetest.Actors(t, site, usernames...)}
}

// euConfig is a configuration whose provider is in the externalEu zone,
// the least trusted zone that may receive internalConfiguration.
var euConfig = gate.Config{Name: "test", TrustZone: tool.ZoneExternalEU}

// call invokes a tool as user ("" for no user) through the gate.
func (f *fixture) call(user, name string, args map[string]any) tool.Result {
	f.t.Helper()
	actor, ok := f.users[user]
	if !ok && user != "" {
		f.t.Fatalf("user %q was not loaded", user)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		f.t.Fatal(err)
	}
	return f.gate.Invoke(context.Background(), gate.InvokeParams{
		Name:   name,
		Args:   raw,
		Call:   tool.Call{Actor: actor, RunID: "test"},
		Config: euConfig,
	})
}

// ok calls as admin and fails the test on an error result.
func (f *fixture) ok(name string, args map[string]any) string {
	f.t.Helper()
	r := f.call("admin", name, args)
	if r.IsError {
		f.t.Fatalf("%s %v: unexpected error result: %s", name, args, r.Content)
	}
	return r.Content
}

// refused calls as user and fails the test unless the result is an error.
func (f *fixture) refused(user, name string, args map[string]any) string {
	f.t.Helper()
	r := f.call(user, name, args)
	if !r.IsError {
		f.t.Fatalf("%s %v as %q: want an error result, got: %s", name, args, user, r.Content)
	}
	return r.Content
}

// exec changes the site database.
func (f *fixture) exec(query string, args ...any) {
	f.t.Helper()
	if _, err := f.rw.SQL.ExecContext(context.Background(), query, args...); err != nil {
		f.t.Fatalf("%s: %v", query, err)
	}
}

// appendField appends text to a text column of one row.
func (f *fixture) appendField(table, column string, uid int64, text string) {
	f.t.Helper()
	var cur string
	q := `SELECT COALESCE(` + f.rw.MustQuote(column) + `, '') FROM ` + f.rw.MustQuote(table) + ` WHERE uid = ?`
	if err := f.rw.SQL.QueryRowContext(context.Background(), q, uid).Scan(&cur); err != nil {
		f.t.Fatalf("read %s.%s of %d: %v", table, column, uid, err)
	}
	f.exec(`UPDATE `+f.rw.MustQuote(table)+` SET `+f.rw.MustQuote(column)+` = ? WHERE uid = ?`, cur+"\n"+text, uid)
}

// lineCount is the number of lines of a text column, to locate what a
// test appends.
func (f *fixture) lineCount(table, column string, uid int64) int {
	f.t.Helper()
	var cur string
	q := `SELECT COALESCE(` + f.rw.MustQuote(column) + `, '') FROM ` + f.rw.MustQuote(table) + ` WHERE uid = ?`
	if err := f.rw.SQL.QueryRowContext(context.Background(), q, uid).Scan(&cur); err != nil {
		f.t.Fatal(err)
	}
	return strings.Count(cur, "\n") + 1
}

// golden compares got with testdata/golden/name.txt, or rewrites the file
// with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".txt")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file %s: %v (run with -update to create it)", path, err)
	}
	if got+"\n" != string(want) {
		t.Errorf("output differs from %s (run with -update after checking):\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}

// demoUsers are the demo's backend users; former is disabled.
var demoUsers = []string{"admin", "editor", "intern", "former"}

// demoFixture builds the demo (docs/demo-site.md) on SQLite. Its
// installed.json lists the core packages without shipping them; the test
// installation points them at the TYPO3 test material copies, as a
// composer install would have placed them.
func demoFixture(t *testing.T) *fixture {
	t.Helper()
	return demoFixtureWith(t, nil)
}

// demoFixtureWith is demoFixture with the tools passed through wrap
// before they are registered.
func demoFixtureWith(t *testing.T, wrap func([]tool.Tool) []tool.Tool) *fixture {
	t.Helper()
	d := demotest.New(t, typo3.DialectSQLite)
	linkCoreExtensions(t, d.Root)
	now := d.Result.Params.Now
	site, err := typo3.NewSite(typo3.SiteParams{DB: d.Open(t), TCA: tca.Bundled(), Root: d.Root, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	tools := configuration.Tools(site, readpolicy.New(site.TCA))
	if wrap != nil {
		tools = wrap(tools)
	}
	return newFixture(t, site, d.DSN, tools, demoUsers...)
}

// linkCoreExtensions rewrites root's installed.json so that every TYPO3
// core package whose folder is missing points at the shared copy.
func linkCoreExtensions(t *testing.T, root string) {
	t.Helper()
	core := filepath.Join(dbtest.TYPO3Material(t), "core-extensions")
	path := filepath.Join(root, "vendor", "composer", "installed.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var manifest map[string]any
	if err := json.Unmarshal(b, &manifest); err != nil {
		t.Fatal(err)
	}
	pkgs, _ := manifest["packages"].([]any)
	for _, p := range pkgs {
		pkg, _ := p.(map[string]any)
		name, _ := pkg["name"].(string)
		key, ok := strings.CutPrefix(name, "typo3/cms-")
		if !ok {
			continue
		}
		dir := filepath.Join(core, strings.ReplaceAll(key, "-", "_"))
		if _, err := os.Stat(dir); err == nil {
			pkg["install-path"] = filepath.ToSlash(dir)
		}
	}
	out, err := json.Marshal(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// introExtensions are the core extensions of the introduction profile
// (testdata/typo3/FACTS.md), besides bootstrap_package.
var introExtensions = []string{"core", "backend", "frontend", "extbase", "seo", "felogin", "filemetadata", "form",
	"impexp", "indexed_search"}

// introFixture imports the introduction package with its real TCA into
// SQLite and gives it an installation folder: installed.json mapping
// bootstrap_package and the profile's core extensions to the shared
// reference files, and the introduction's site configuration.
func introFixture(t *testing.T) *fixture {
	t.Helper()
	in := demotest.Introduction(t, typo3.DialectSQLite)
	f, err := os.Open(filepath.Join(in.Material, "tca-introduction.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	model, err := tca.LoadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	pkgs := []map[string]any{extPackage("bk2k/bootstrap-package", "bootstrap_package", filepath.Join(in.Material, "bootstrap_package"))}
	for _, key := range introExtensions {
		pkgs = append(pkgs, extPackage("typo3/cms-"+strings.ReplaceAll(key, "_", "-"), key, filepath.Join(in.Material, "core-extensions", key)))
	}
	b, err := json.Marshal(map[string]any{"packages": pkgs})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "vendor", "composer", "installed.json"), b)
	cfg, err := os.ReadFile(filepath.Join(in.Material, "introduction", "Initialisation", "Site", "introduction", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "config", "sites", "introduction", "config.yaml"), cfg)
	site, err := typo3.NewSite(typo3.SiteParams{DB: in.Open(t), TCA: model, Root: root, Now: demo.DefaultNow})
	if err != nil {
		t.Fatal(err)
	}
	fx := newFixture(t, site, in.DSN, configuration.Tools(site, readpolicy.New(model)), "admin", "editor")
	fx.material = in.Material
	return fx
}

func extPackage(name, key, path string) map[string]any {
	return map[string]any{
		"name": name, "type": "typo3-cms-extension", "install-path": filepath.ToSlash(path),
		"extra": map[string]any{"typo3/cms": map[string]any{"extension-key": key}},
	}
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// args builds a call's arguments.
func args(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}
