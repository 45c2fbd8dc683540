package structure_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/builtin/structure"
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

// fixture runs the structure tools of one site through a real gate with a
// real store, acting as the site's backend users.
type fixture struct {
	t     *testing.T
	site  *typo3.Site
	gate  *gate.Gate
	users map[string]*typo3.BackendUser
}

// newFixture registers structure.Tools(site) and loads the named users; a
// user that cannot act (disabled, deleted) acts as nil, the way the
// product hands such a request to a tool.
func newFixture(t *testing.T, site *typo3.Site, usernames ...string) *fixture {
	t.Helper()
	g := gatetest.New(t, nil, structure.Tools(site, readpolicy.New(site.TCA))...)
	return &fixture{t: t, site: site, gate: g, users: gatetest.Actors(t, site, usernames...)}
}

// call invokes a tool as user (a name given to newFixture, or "" for no
// user) through the gate, for a local provider.
func (f *fixture) call(user, name, args string) tool.Result {
	f.t.Helper()
	actor, ok := f.users[user]
	if !ok && user != "" {
		f.t.Fatalf("user %q was not loaded", user)
	}
	return f.gate.Invoke(context.Background(), gate.InvokeParams{
		Name:   name,
		Args:   json.RawMessage(args),
		Call:   tool.Call{Actor: actor, RunID: "test"},
		Config: gate.Config{Name: "test", TrustZone: tool.ZoneLocal},
	})
}

// ok calls and fails the test on an error result.
func (f *fixture) ok(user, name, args string) string {
	f.t.Helper()
	r := f.call(user, name, args)
	if r.IsError {
		f.t.Fatalf("%s %s as %s: unexpected error result: %s", name, args, user, r.Content)
	}
	return r.Content
}

// refused calls and fails the test unless the result is an error.
func (f *fixture) refused(user, name, args string) string {
	f.t.Helper()
	r := f.call(user, name, args)
	if !r.IsError {
		f.t.Fatalf("%s %s as %s: want an error result, got: %s", name, args, user, r.Content)
	}
	return r.Content
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

// demoTCA is the TCA of the demo installation: t3agent's bundled core TCA
// plus the two FlexForm keys site_demo's TCA/Overrides/tt_content.php
// registers, as the installed site's TCA cache would hold them.
func demoTCA() *tca.TCA {
	t := tca.Bundled()
	ds := t.Table("tt_content").Column("pi_flexform").Config.DS
	ds["*,sitedemo_teaser"] = "FILE:EXT:site_demo/Configuration/FlexForms/Teaser.xml"
	ds["*,sitedemo_dealermap"] = "FILE:EXT:site_demo/Configuration/FlexForms/DealerMap.xml"
	return t
}

// demoSite builds the demo on dialect d and opens it as t3agent does,
// with the demo's clock.
func demoSite(t *testing.T, d typo3.Dialect) (*typo3.Site, *demotest.Site) {
	t.Helper()
	return demoSiteWith(t, d, demo.InitParams{}, demoTCA())
}

func demoSiteWith(t *testing.T, d typo3.Dialect, p demo.InitParams, model *tca.TCA) (*typo3.Site, *demotest.Site) {
	t.Helper()
	s := demotest.NewWith(t, d, p)
	now := s.Result.Params.Now
	site, err := typo3.NewSite(typo3.SiteParams{DB: s.Open(t), TCA: model, Root: s.Root, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return site, s
}

// demoUsers are the demo's backend users; former is disabled.
func demoUsers() []string { return []string{"admin", "editor", "intern", "former"} }

// introSite imports the introduction package with its real TCA and an
// installation folder whose installed.json maps bootstrap_package and the
// core extensions to the shared reference files (absolute install paths).
func introSite(t *testing.T, d typo3.Dialect) (*typo3.Site, *demotest.Intro) {
	t.Helper()
	in := demotest.Introduction(t, d)
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
	pkgs := []map[string]any{extPackage("benjaminkott/bootstrap_package", "bootstrap_package", filepath.Join(in.Material, "bootstrap_package"))}
	entries, err := os.ReadDir(filepath.Join(in.Material, "core-extensions"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		key := e.Name()
		pkgs = append(pkgs, extPackage("typo3/cms-"+strings.ReplaceAll(key, "_", "-"), key, filepath.Join(in.Material, "core-extensions", key)))
	}
	writeInstalled(t, root, pkgs)
	site, err := typo3.NewSite(typo3.SiteParams{DB: in.Open(t), TCA: model, Root: root, Now: demo.DefaultNow})
	if err != nil {
		t.Fatal(err)
	}
	return site, in
}

func extPackage(name, key, path string) map[string]any {
	return map[string]any{
		"name": name, "type": "typo3-cms-extension", "install-path": filepath.ToSlash(path),
		"extra": map[string]any{"typo3/cms": map[string]any{"extension-key": key}},
	}
}

func writeInstalled(t *testing.T, root string, pkgs []map[string]any) {
	t.Helper()
	b, err := json.Marshal(map[string]any{"packages": pkgs})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "vendor", "composer")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "installed.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// sensitiveTables are the tables no user may read (SPEC §4 rule 1), plus
// two that match the tx_nrllm / tx_nrvault prefixes.
func sensitiveTables() []string {
	return []string{
		"be_users", "be_groups", "fe_users", "fe_groups", "sys_log", "sys_history", "sys_refindex",
		"sys_http_report", "sys_lockedrecords", "sys_file_storage", "tx_nrllm_configuration", "tx_nrvault_secret",
	}
}

// lines splits tool output into lines.
func lines(s string) []string { return strings.Split(s, "\n") }
