package template_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/typoscript"
	"github.com/t3agent/t3agent/internal/typoscript/template"
)

// TestSiteSets gives introduction page 6 a site of its own that uses
// bootstrap_package's "full" set, with its own setup, constants, settings
// and page.tsconfig: the site acts as a root template before any
// sys_template row, its settings become constants, and Page TSconfig
// takes the sets' and the site's page.tsconfig.
func TestSiteSets(t *testing.T) {
	t.Parallel()
	_, site := introSite(t, nil)
	paths, _ := newSharedPaths(t)
	root := t.TempDir()
	dir := filepath.Join(root, "config", "sites", "sets")
	writeSite := func(name, content string) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeSite("config.yaml", "rootPageId: 6\nbase: /sets/\ndependencies:\n  - bootstrap-package/full\n  - vendor/missing\n"+
		"languages:\n  - languageId: 0\n    title: English\n    locale: en_US.UTF-8\n    base: /\n")
	writeSite("settings.yaml", "page:\n  theme:\n    cookieconsent:\n      enable: false\nsite:\n  own: fromSettings\n")
	writeSite("setup.typoscript", "site.own = {$site.own}\nsite.level = 0\n[tree.level == 1]\nsite.level = 1\n[END]\n"+
		"[site('identifier') == 'sets' && siteLanguage('locale') == 'en_US.UTF-8']\nsite.matched = 1\n[END]")
	writeSite("page.tsconfig", "site.pagets = 1")
	sites, err := template.LoadSites(root)
	if err != nil || len(sites) != 1 || !sites[0].IsTypoScriptRoot() {
		t.Fatalf("sites %+v, %v", sites, err)
	}
	r, err := template.New(template.Params{Source: template.NewSiteSource(site), Paths: paths, Extensions: introExtensions,
		ProjectRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	fe, err := r.Frontend(ctx, 46) // below page 6
	if err != nil {
		t.Fatal(err)
	}
	if len(fe.Rootline) != 2 || fe.Rootline[0].UID != 6 || len(fe.Templates) != 0 {
		t.Errorf("rootline %d pages from %d, %d templates; want it cut at the site root 6 and no rows",
			len(fe.Rootline), fe.Rootline[0].UID, len(fe.Templates))
	}
	first := fe.Setup.Includes.Children[0]
	if first.Kind != typoscript.IncludeSiteTemplate || !first.Clear {
		t.Fatalf("first include %s", first.Kind)
	}
	var sets []string
	for _, c := range first.Children {
		if c.Kind == typoscript.IncludeSet {
			sets = append(sets, strings.TrimPrefix(c.Name, "EXT:bootstrap_package/Configuration/Sets/"))
		}
	}
	// Dependencies first, the set itself last; sets without setup skipped.
	want := "Bootstrap5/setup.typoscript ContentElements/setup.typoscript CookieConsent/setup.typoscript " +
		"GoogleFont/setup.typoscript GoogleTagManager/setup.typoscript Skiplink/setup.typoscript Full/setup.typoscript"
	if strings.Join(sets, " ") != want {
		t.Errorf("sets\n got %s\nwant %s", strings.Join(sets, " "), want)
	}
	for path, want := range map[string]string{
		"site.own":     "fromSettings",
		"site.level":   "1",
		"site.matched": "1",
		"page.10":      "FLUIDTEMPLATE",
		// the content rendering definitions are added for set sites
		"tt_content.felogin_login.20": "EXTBASEPLUGIN",
		// settings.yaml turned the cookie consent off: its condition fails
		"page.jsFooterInline.1100": "<none>",
	} {
		if got := value(fe.Setup.Root, path); got != want {
			t.Errorf("setup %s = %q, want %q", path, got, want)
		}
	}
	if got := value(fe.Constants.Root, "page.theme.cookieconsent.enable"); got != "" {
		t.Errorf("site setting as constant: %q", got)
	}
	if got := value(fe.Constants.Root, "plugin.bootstrap_package_contentelements.view.layoutRootPath"); !strings.HasPrefix(got, "EXT:bootstrap_package/") {
		t.Errorf("set default as constant: %q", got)
	}
	if len(fe.Notes) != 1 || !strings.Contains(fe.Notes[0], "vendor/missing") {
		t.Errorf("notes %v", fe.Notes)
	}
	ts, err := r.PageTSconfig(ctx, 46)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range ts.Includes.Children {
		names = append(names, c.Name)
	}
	joined := strings.Join(names, " ")
	if !strings.Contains(joined, "pagesTsConfig-package-bootstrap_package pageTsConfig-set-bootstrap-package-backend-layouts") ||
		!strings.HasSuffix(joined, "pageTsConfig-set-bootstrap-package-full pageTsConfig-site-sets") {
		t.Errorf("Page TSconfig includes: %s", joined)
	}
	if value(ts.Root, "site.pagets") != "1" || value(ts.Root, "RTE.default.preset") != "bootstrap" {
		t.Errorf("Page TSconfig values: %q %q", value(ts.Root, "site.pagets"), value(ts.Root, "RTE.default.preset"))
	}
}
