package structure_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/dbtest"
	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/typo3"
)

// TestFluidResolveDemo resolves against the demo's site package.
func TestFluidResolveDemo(t *testing.T) {
	t.Parallel()
	site, _ := demoSite(t, typo3.DialectSQLite)
	f := newFixture(t, site, demoUsers()...)

	text := f.ok("editor", "fluid_resolve", `{"kind":"template","name":"Text","extension":"site_demo","paths":["EXT:site_demo/Resources/Private/Templates/ContentElements/"]}`)
	golden(t, "demo_fluid_text", text)
	cases := []struct{ args, winner string }{
		{`{"kind":"partial","name":"Page/Header","extension":"site_demo"}`, "EXT:site_demo/Resources/Private/Partials/Page/Header.html"},
		{`{"kind":"partial","name":"page/Navigation/Main","extension":"site_demo"}`, "EXT:site_demo/Resources/Private/Partials/Page/Navigation/Main.html"},
		{`{"kind":"layout","name":"default","extension":"site_demo","paths":["EXT:site_demo/Resources/Private/Layouts/Page"]}`, "EXT:site_demo/Resources/Private/Layouts/Page/Default.html"},
		{`{"kind":"template","name":"default","controller":"Page","extension":"site_demo"}`, "EXT:site_demo/Resources/Private/Templates/Page/Default.html"},
		{`{"kind":"template","name":"html","controller":"Preview","extension":"site_demo","format":"html"}`, "EXT:site_demo/Resources/Private/Templates/Preview/Html.html"},
		// The suffix-less candidate: "Default.html" as the name.
		{`{"kind":"layout","name":"Page/Default.html","extension":"site_demo","format":"txt"}`, "EXT:site_demo/Resources/Private/Layouts/Page/Default.html"},
	}
	for _, c := range cases {
		out := f.ok("intern", "fluid_resolve", c.args)
		if !strings.HasSuffix(out, "Winner: "+c.winner) {
			t.Errorf("%s:\n%s\nwant winner %s", c.args, out, c.winner)
		}
	}
	none := f.ok("admin", "fluid_resolve", `{"kind":"template","name":"Missing","extension":"site_demo"}`)
	if !strings.Contains(none, "[ ] EXT:site_demo/Resources/Private/Templates/Missing.html\n[ ] EXT:site_demo/Resources/Private/Templates/Missing\nWinner: none") {
		t.Errorf("missing template:\n%s", none)
	}
	// felogin is listed in installed.json, but its files are not shipped.
	if out := f.ok("admin", "fluid_resolve", `{"kind":"template","name":"login","controller":"Login","extension":"felogin"}`); !strings.Contains(out, "Winner: none") {
		t.Errorf("unshipped felogin:\n%s", out)
	}
	if out := f.ok("admin", "fluid_resolve", `{"kind":"partial","name":"X","extension":"news"}`); !strings.Contains(out, "(extension default) (extension news is not installed)") {
		t.Errorf("uninstalled extension:\n%s", out)
	}
	if got := f.refused("former", "fluid_resolve", `{"kind":"partial","name":"X","extension":"site_demo"}`); got != readpolicy.DeniedUser {
		t.Errorf("former: %q", got)
	}
}

// listingInstallation builds an installation whose bootstrap_package and
// felogin hold empty files named by the shared listings, plus the demo's
// real site_demo; bootstrap_package's Text.html carries a marker that must
// never be returned, and Evil.html links outside the installation.
func listingInstallation(t *testing.T, shared, demoRoot string) string {
	t.Helper()
	root := t.TempDir()
	fill := func(listing, dir string) {
		fh, err := os.Open(listing)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		sc := bufio.NewScanner(fh)
		n := 0
		for sc.Scan() {
			rel := strings.TrimSpace(sc.Text())
			if rel == "" {
				continue
			}
			p := filepath.Join(dir, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			n++
		}
		if err := sc.Err(); err != nil || n == 0 {
			t.Fatalf("listing %s: %d files, %v", listing, n, err)
		}
	}
	bp := filepath.Join(root, "ext", "bootstrap_package")
	fill(filepath.Join(shared, "bootstrap_package", "Resources-Private-files.txt"), bp)
	fill(filepath.Join(shared, "core-extensions", "felogin", "Resources-Private-files.txt"), filepath.Join(root, "ext", "felogin"))
	ce := filepath.Join(bp, "Resources", "Private", "Templates", "ContentElements")
	if err := os.WriteFile(filepath.Join(ce, "Text.html"), []byte("SECRET-TEMPLATE-CONTENT"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "Evil.html")
	if err := os.WriteFile(outside, []byte("OUTSIDE"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ce, "Evil.html")); err != nil {
		t.Fatal(err)
	}
	writeInstalled(t, root, []map[string]any{
		extPackage("bk2k/bootstrap-package", "bootstrap_package", "../../ext/bootstrap_package"),
		extPackage("typo3/cms-felogin", "felogin", "../../ext/felogin"),
		extPackage("nordlicht/site-demo", "site_demo", filepath.Join(demoRoot, "packages", "site_demo")),
	})
	return root
}

// TestFluidResolveOverrides: later root paths override earlier ones, over
// bootstrap_package's real file list.
func TestFluidResolveOverrides(t *testing.T) {
	t.Parallel()
	site, demo := demoSite(t, typo3.DialectSQLite)
	site.Root = listingInstallation(t, dbtest.TYPO3Material(t), demo.Root)
	f := newFixture(t, site, "editor")
	paths := `"paths":["EXT:bootstrap_package/Resources/Private/Templates/ContentElements/","EXT:site_demo/Resources/Private/Templates/ContentElements/"]`

	text := f.ok("editor", "fluid_resolve", `{"kind":"template","name":"text","extension":"bootstrap_package",`+paths+`}`)
	golden(t, "listing_fluid_text_override", text)
	if !strings.Contains(text, "[x] EXT:site_demo/Resources/Private/Templates/ContentElements/Text.html") ||
		!strings.Contains(text, "[x] EXT:bootstrap_package/Resources/Private/Templates/ContentElements/Text.html") ||
		!strings.HasSuffix(text, "Winner: EXT:site_demo/Resources/Private/Templates/ContentElements/Text.html") {
		t.Errorf("site_demo must override bootstrap_package:\n%s", text)
	}
	if strings.Contains(text, "SECRET-TEMPLATE-CONTENT") {
		t.Error("file contents returned")
	}
	tab := f.ok("editor", "fluid_resolve", `{"kind":"template","name":"Tab","extension":"bootstrap_package",`+paths+`}`)
	if !strings.HasSuffix(tab, "Winner: EXT:bootstrap_package/Resources/Private/Templates/ContentElements/Tab.html") {
		t.Errorf("Tab falls through to bootstrap_package:\n%s", tab)
	}
	for args, winner := range map[string]string{
		`{"kind":"layout","name":"Default","extension":"bootstrap_package","paths":["EXT:bootstrap_package/Resources/Private/Layouts/Page/"]}`:          "EXT:bootstrap_package/Resources/Private/Layouts/Page/Default.html",
		`{"kind":"partial","name":"Page/Navigation/Breadcrumb","extension":"bootstrap_package"}`:                                                        "EXT:bootstrap_package/Resources/Private/Partials/Page/Navigation/Breadcrumb.html",
		`{"kind":"partial","name":"Page/Navigation/Main","extension":"bootstrap_package","paths":["EXT:site_demo/Resources/Private/Partials/"]}`:        "EXT:site_demo/Resources/Private/Partials/Page/Navigation/Main.html",
		`{"kind":"template","name":"login","controller":"Login","extension":"felogin"}`:                                                                 "EXT:felogin/Resources/Private/Templates/Login/Login.html",
		`{"kind":"template","name":"logout","controller":"Login","extension":"felogin","paths":["EXT:site_demo/Resources/Private/Templates/Felogin/"]}`: "EXT:felogin/Resources/Private/Templates/Login/Logout.html",
	} {
		if out := f.ok("editor", "fluid_resolve", args); !strings.HasSuffix(out, "Winner: "+winner) {
			t.Errorf("%s:\n%s\nwant %s", args, out, winner)
		}
	}
	// Controller/Action is tried in every root before Action alone.
	login := f.ok("editor", "fluid_resolve", `{"kind":"template","name":"login","controller":"Login","extension":"felogin","paths":["EXT:site_demo/Resources/Private/Templates/"]}`)
	want := "[ ] EXT:site_demo/Resources/Private/Templates/Login/Login.html\n[ ] EXT:site_demo/Resources/Private/Templates/Login/Login\n" +
		"[x] EXT:felogin/Resources/Private/Templates/Login/Login.html\n[ ] EXT:felogin/Resources/Private/Templates/Login/Login\n" +
		"[ ] EXT:site_demo/Resources/Private/Templates/Login.html\n"
	if !strings.Contains(login, want) {
		t.Errorf("candidate order:\n%s", login)
	}
	// A symlink leading out of the extension does not count as a file.
	evil := f.ok("editor", "fluid_resolve", `{"kind":"template","name":"Evil","extension":"bootstrap_package","paths":["EXT:bootstrap_package/Resources/Private/Templates/ContentElements/"]}`)
	if !strings.Contains(evil, "[ ] EXT:bootstrap_package/Resources/Private/Templates/ContentElements/Evil.html") || !strings.Contains(evil, "Winner: none") || strings.Contains(evil, "OUTSIDE") {
		t.Errorf("symlink escape:\n%s", evil)
	}
}

// TestFluidResolveRefusals is the traversal matrix: every name, controller,
// extension key or root path that could leave an extension is refused,
// by the schema or by the tool, before any file is looked at.
func TestFluidResolveRefusals(t *testing.T) {
	t.Parallel()
	site, _ := demoSite(t, typo3.DialectSQLite)
	f := newFixture(t, site, "admin")
	base := `"kind":"template","extension":"site_demo"`
	for _, args := range []string{
		`{` + base + `,"name":"../../../etc/passwd"}`,
		`{` + base + `,"name":"Page/../../Private"}`,
		`{` + base + `,"name":".."}`,
		`{` + base + `,"name":"./Default"}`,
		`{` + base + `,"name":"/etc/passwd"}`,
		`{` + base + `,"name":"Page//Default"}`,
		`{` + base + `,"name":"Page\\..\\x"}`,
		`{` + base + `,"name":"Page/.."}`,
		`{` + base + `,"name":"a\u0000b"}`,
		`{` + base + `,"name":"Default","controller":".."}`,
		`{` + base + `,"name":"Default","controller":"../../x"}`,
		`{"kind":"partial","extension":"site_demo","name":"Header","controller":"Page"}`,
		`{"kind":"template","extension":"../site_demo","name":"Default"}`,
		`{"kind":"template","extension":"Site_Demo","name":"Default"}`,
		`{"kind":"template","extension":"site-demo","name":"Default"}`,
		`{"kind":"template","extension":"","name":"Default"}`,
		`{"kind":"template","name":"Default"}`,
		`{"kind":"view","extension":"site_demo","name":"Default"}`,
		`{` + base + `,"name":"Default","format":"../html"}`,
		`{` + base + `,"name":"Default","format":"ht/ml"}`,
		`{` + base + `,"name":"Default","paths":["EXT:site_demo/../../../etc/"]}`,
		`{` + base + `,"name":"Default","paths":["EXT:site_demo/Resources/../../x/"]}`,
		`{` + base + `,"name":"Default","paths":["/etc/"]}`,
		`{` + base + `,"name":"Default","paths":["../../etc/"]}`,
		`{` + base + `,"name":"Default","paths":["EXT:bad-key/Resources/"]}`,
		`{` + base + `,"name":"Default","paths":["EXT:site_demo//etc/"]}`,
		`{` + base + `,"name":"Default","paths":["ext:site_demo/Resources/"]}`,
		`{` + base + `,"name":"Default","paths":["fileadmin/templates/"]}`,
		`{` + base + `,"name":"Default","paths":[3]}`,
		`{` + base + `,"name":"Default","unknown":1}`,
	} {
		got := f.refused("admin", "fluid_resolve", args)
		if strings.Contains(got, "Winner") || strings.Contains(got, "root:") {
			t.Errorf("%s resolved: %s", args, got)
		}
	}
}
