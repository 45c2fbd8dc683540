package structure_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

func has(t *testing.T, what, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}

func hasNot(t *testing.T, what, got string, unwanted ...string) {
	t.Helper()
	for _, w := range unwanted {
		if strings.Contains(got, w) {
			t.Errorf("%s shows %q:\n%s", what, w, got)
		}
	}
}

// coreTCA is TYPO3's own core TCA from the test material.
func coreTCA(t *testing.T) *tca.TCA {
	t.Helper()
	return loadTCAFile(t, filepath.Join(materialDir(t), "tca-core.json"))
}

func materialDir(t *testing.T) string {
	t.Helper()
	for dir, _ := os.Getwd(); dir != "/"; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "testdata", "typo3", "tca-core.json")); err == nil {
			return filepath.Join(dir, "testdata", "typo3")
		}
	}
	t.Fatal("testdata/typo3 not found")
	return ""
}

func loadTCAFile(t *testing.T, path string) *tca.TCA {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := tca.LoadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// plantedTCA is a small TCA with credential columns and every mistake
// validate_tca reports.
func plantedTCA(t *testing.T) *tca.TCA {
	t.Helper()
	m, err := tca.LoadJSON(strings.NewReader(`{
 "pages": {"ctrl": {"title": "Page", "label": "title"}, "columns": {"title": {"config": {"type": "input"}}}, "types": {"1": {"showitem": "title"}}},
 "tx_demo_thing": {
  "ctrl": {"title": "Thing", "label": "headline", "type": "kind", "delete": "deleted", "languageField": "sys_language_uid",
           "enablecolumns": {"disabled": "hidden"}},
  "columns": {
   "title": {"label": "Title", "config": {"type": "input", "max": 80}},
   "kind": {"config": {"type": "select", "foreign_table": "tx_missing_table", "items": [{"label": "A", "value": "a"}]}},
   "api_key": {"config": {"type": "input"}},
   "pin": {"config": {"type": "password"}},
   "owner": {"config": {"type": "group", "allowed": "pages", "foreign_table": "pages"}},
   "feed": {"config": {"type": "input", "default": "https://bot:hunter2@feeds.example/x"}}
  },
  "types": {"a": {"showitem": "title, kind, --div--;Tab, hidden, sys_language_uid, uid, nothing, --palette--;;main, --palette--;;ghost"}},
  "palettes": {"main": {"showitem": "owner, --linebreak--, api_key, --palette--;;inner"}, "inner": {"showitem": "feed"}}
 }
}`))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestGetTCA(t *testing.T) {
	t.Parallel()
	site, _ := demoSite(t, typo3.DialectSQLite)
	f := newFixture(t, site, demoUsers()...)

	got := f.ok("admin", "get_tca", `{}`)
	has(t, "admin index", got, "9 readable TCA table(s):\nbackend_layout\npages\n", "\ntt_content\n", "\nsys_file_metadata\n")
	hasNot(t, "admin index", got, "be_users", "be_groups", "sys_file_storage", "fe_users")
	if got := f.ok("editor", "get_tca", `{}`); got != "3 readable TCA table(s):\npages\nsys_category\ntt_content\nNext: get_tca {\"table\": \"<name>\"}." {
		t.Errorf("editor index:\n%s", got)
	}
	got = f.ok("admin", "get_tca", `{"table":"tt_content"}`)
	has(t, "tt_content", got, "TCA of tt_content:\nctrl (", "  header: input\n", "  CType: select\n", "types (", "palettes (")
	hasNot(t, "tt_content", got, "l18n_diffsource") // the transOrigDiffSourceField
	if got := f.ok("admin", "get_tca", `{"table":"tt_content","path":"columns.header.config.type"}`); got != "TCA tt_content.columns.header.config.type = input" {
		t.Errorf("leaf: %q", got)
	}
	got = f.ok("editor", "get_tca", `{"table":"tt_content","path":"ctrl"}`)
	has(t, "ctrl", got, "TCA tt_content.ctrl:\n", "label = header\n", "enablecolumns.disabled = hidden\n", "type = CType")
	got = f.ok("admin", "get_tca", `{"table":"tt_content","path":"columns"}`)
	has(t, "columns", got, "; its children:\n", "header (+", "Add a child to the path")
	if n := len(lines(got)); n > 302 {
		t.Errorf("columns: %d lines", n)
	}
	for _, c := range []struct{ user, args, want string }{
		{"admin", `{"table":"be_users"}`, "Unknown TCA table."},
		{"admin", `{"table":"sys_file_storage","path":"ctrl"}`, "Unknown TCA table."},
		{"admin", `{"table":"no_such_table"}`, "Unknown TCA table."},
		{"admin", `{"table":"pages; --"}`, "Unknown TCA table."},
		{"editor", `{"table":"sys_template"}`, "Unknown TCA table."},
		{"intern", `{"table":"sys_template"}`, "Unknown TCA table."},
		{"admin", `{"table":"tt_content","path":"columns.l18n_diffsource"}`, "has no TCA entry"},
		{"admin", `{"table":"tt_content","path":"columns.header.config.type.x"}`, "has no TCA entry"},
		{"admin", `{"path":"ctrl"}`, "Name a table"},
		{"admin", `{"table":"tt_content","path":"columns header"}`, "invalid arguments"},
		{"former", `{}`, readpolicy.DeniedUser},
	} {
		if got := f.refused(c.user, "get_tca", c.args); !strings.Contains(got, c.want) {
			t.Errorf("%s %s: %q, want %q", c.user, c.args, got, c.want)
		}
	}

	// Credential columns are left out everywhere; URL passwords masked.
	planted := newFixture(t, siteWithTCA(t, site, plantedTCA(t)), "admin")
	got = planted.ok("admin", "get_tca", `{"table":"tx_demo_thing"}`)
	has(t, "planted", got, "columns (4):\n  title: input\n  kind: select\n  owner: group\n  feed: input\n")
	hasNot(t, "planted", got, "api_key", "pin")
	got = planted.ok("admin", "get_tca", `{"table":"tx_demo_thing","path":"columns"}`)
	hasNot(t, "planted columns", got, "api_key", "pin", "hunter2")
	has(t, "planted columns", got, "feed.config.default = https://bot:***@feeds.example/x")
	for _, p := range []string{"columns.api_key", "columns.pin.config"} {
		if got := planted.refused("admin", "get_tca", `{"table":"tx_demo_thing","path":"`+p+`"}`); !strings.Contains(got, "has no TCA entry") {
			t.Errorf("%s: %q", p, got)
		}
	}

	// TYPO3's own core TCA.
	core := newFixture(t, siteWithTCA(t, site, coreTCA(t)), "admin")
	got = core.ok("admin", "get_tca", `{"table":"tt_content","path":"columns.CType.config.type"}`)
	if got != "TCA tt_content.columns.CType.config.type = select" {
		t.Errorf("core CType: %q", got)
	}
	has(t, "core index", core.ok("admin", "get_tca", `{}`), "sys_news", "sys_file_collection")
}

// siteWithTCA is site with another TCA.
func siteWithTCA(t *testing.T, site *typo3.Site, model *tca.TCA) *typo3.Site {
	t.Helper()
	s, err := typo3.NewSite(typo3.SiteParams{DB: site.DB, TCA: model, Root: site.Root, Now: site.Now})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestValidateTCA(t *testing.T) {
	t.Parallel()
	site, _ := demoSite(t, typo3.DialectSQLite)
	planted := newFixture(t, siteWithTCA(t, site, plantedTCA(t)), "admin")
	got := planted.ok("admin", "validate_tca", `{"table":"tx_demo_thing"}`)
	want := `7 finding(s) in the TCA of tx_demo_thing:
- tx_demo_thing: ctrl.label "headline" is not a column
- tx_demo_thing.kind: foreign_table "tx_missing_table" is not in the TCA
- tx_demo_thing types[a]: showitem "nothing" is not a column
- tx_demo_thing types[a]: --palette-- "ghost" does not exist
- tx_demo_thing palettes[main]: showitem [a credential-like field] is not a column
- tx_demo_thing palettes[main]: a palette inside a palette
- tx_demo_thing palettes[main]: --palette-- "inner" does not exist`
	_ = want
	has(t, "planted", got, `ctrl.label "headline" is not a column`, `foreign_table "tx_missing_table" is not in the TCA`,
		`types[a]: showitem "nothing" is not a column`, `types[a]: --palette-- "ghost" does not exist`,
		"palettes[main]: a palette inside a palette")
	// hidden, sys_language_uid and uid are ctrl fields; api_key is a
	// column (dropped from output only), and the ctrl.type column exists.
	hasNot(t, "planted", got, `"hidden"`, `"sys_language_uid"`, `"uid"`, "api_key", "ctrl.type", `"inner" does not exist`)
	if got := planted.ok("admin", "validate_tca", `{"table":"pages"}`); got != "No findings in the TCA of pages." {
		t.Errorf("pages: %q", got)
	}

	// The bundled and the core TCA are TYPO3's own: they must pass, or
	// the check is wrong.
	for name, model := range map[string]*tca.TCA{"bundled": tca.Bundled(), "core": coreTCA(t)} {
		f := newFixture(t, siteWithTCA(t, site, model), "admin", "editor")
		got := f.ok("admin", "validate_tca", `{}`)
		if !strings.HasPrefix(got, "No findings in the TCA of ") {
			t.Errorf("%s TCA:\n%s", name, got)
		}
		got = f.ok("editor", "validate_tca", `{}`)
		if got != "No findings in the TCA of 3 table(s)." {
			t.Errorf("%s TCA as editor: %q", name, got)
		}
	}
	// The introduction's TCA export has real mistakes: bootstrap_package's
	// menu card and thumbnail types name a palette the export lacks, and
	// the card group item names a column it does not define.
	intro := newFixture(t, siteWithTCA(t, site, loadTCAFile(t, filepath.Join(materialDir(t), "tca-introduction.json"))), "admin")
	want = `5 finding(s) in the TCA of 19 table(s):
- tt_content types[menu_card_dir]: --palette-- "menu_accessibility" does not exist
- tt_content types[menu_card_list]: --palette-- "menu_accessibility" does not exist
- tt_content types[menu_thumbnail_dir]: --palette-- "menu_accessibility" does not exist
- tt_content types[menu_thumbnail_list]: --palette-- "menu_accessibility" does not exist
- tx_bootstrappackage_card_group_item types[1]: showitem "icon_file" is not a column`
	if got := intro.ok("admin", "validate_tca", `{}`); got != want {
		t.Errorf("introduction TCA:\n%s", got)
	}
	f := newFixture(t, site, "editor")
	if got := f.refused("editor", "validate_tca", `{"table":"be_users"}`); got != "Unknown TCA table." {
		t.Errorf("be_users: %q", got)
	}
	// At most 50 findings.
	var many strings.Builder
	many.WriteString(`{"tx_bad":{"ctrl":{"label":"title"},"columns":{"title":{"config":{"type":"input"}}},"types":{"0":{"showitem":"`)
	for i := 0; i < 70; i++ {
		fmt.Fprintf(&many, "f%d,", i)
	}
	many.WriteString(`title"}}}}`)
	m, err := tca.LoadJSON(strings.NewReader(many.String()))
	if err != nil {
		t.Fatal(err)
	}
	got = newFixture(t, siteWithTCA(t, site, m), "admin").ok("admin", "validate_tca", `{}`)
	if !strings.HasPrefix(got, "70 finding(s) in the TCA of 1 table(s) (the first 50):\n") || len(lines(got)) != 51 {
		t.Errorf("many: %d lines\n%s", len(lines(got)), got)
	}
}

func TestResolveURL(t *testing.T) {
	t.Parallel()
	for _, d := range []typo3.Dialect{typo3.DialectSQLite, typo3.DialectMySQL, typo3.DialectPostgres} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			site, _ := demoSite(t, d)
			f := newFixture(t, site, demoUsers()...)
			for _, c := range []struct{ user, url, want string }{
				{"admin", "http://127.0.0.1:8080/products", "Site: main (root page 1, base http://127.0.0.1:8080/)\nLanguage: 0 English (base /)\nPage: [5] Products (slug /products)\nArguments: {}"},
				{"admin", "http://127.0.0.1:8080/", "Page: [1] Home (slug /)\n"},
				{"admin", "/de/produkte", "Language: 1 Deutsch (base /de/)\nPage: [5] Products, translation [23] Produkte (slug /produkte)\n"},
				{"admin", "https://www.nordlicht-pumps.example/de/produkte/produkt-a/", "Page: [6] Product A, translation [24] Produkt A (slug /produkte/produkt-a)"},
				{"admin", "https://WWW.nordlicht-pumps.example/products/product-a?tx_x[a]=1", `Arguments: {"tx_x[a]":["1"]} (query only;`},
				{"admin", "/products/product-a/sitemap.xml", `Page: [6] Product A (slug /products/product-a)` + "\n" + `Arguments: unavailable (the site has route enhancers; TYPO3 resolves the rest of the path "/sitemap.xml" at runtime)`},
				{"admin", "/products/product-b", "Page: [7] Product B (slug /products/product-b) [hidden]"},
				// A deleted page is never found; with route enhancers its
				// path may be an argument of its parent.
				{"admin", "/products/discontinued", "Page: [5] Products (slug /products)\nArguments: unavailable"},
				{"admin", "/sitemap.xml", "Page: [1] Home (slug /)\nArguments: unavailable"},
				{"editor", "/products/product-a", "Page: [6] Product A"},
				{"intern", "/news/press", "Page: [15] Press"},
			} {
				got := f.ok(c.user, "resolve_url", fmt.Sprintf(`{"url":%q}`, c.url))
				has(t, c.user+" "+c.url, got, c.want)
			}
			for _, c := range []struct{ user, url, want string }{
				{"editor", "/products/internal-pricing", readpolicy.DeniedPage},
				{"editor", "/news", readpolicy.DeniedPage},
				{"editor", "/de/produkte", readpolicy.DeniedPage}, // language 1 not allowed
				{"editor", "/products/product-b", readpolicy.DeniedPage},
				{"intern", "/products", readpolicy.DeniedPage},
				{"admin", "/no/such/page", readpolicy.DeniedPage},
				{"admin", "/products-x", readpolicy.DeniedPage},
				{"admin", "https://elsewhere.example/products", "No site of this installation answers"},
				{"admin", "ftp://127.0.0.1:8080/products", "http or https"},
				{"admin", "http://user:pw@127.0.0.1:8080/products", "user information"},
				{"admin", "products", "starting with /"},
				{"former", "/products", readpolicy.DeniedUser},
			} {
				got := f.refused(c.user, "resolve_url", fmt.Sprintf(`{"url":%q}`, c.url))
				if !strings.Contains(got, c.want) || strings.Contains(got, "pw") {
					t.Errorf("%s %s: %q, want %q", c.user, c.url, got, c.want)
				}
			}
		})
	}
}

// TestResolveURLIntroduction resolves the introduction package's pages
// through its own site configuration (base /, languages /da/ and /de/).
func TestResolveURLIntroduction(t *testing.T) {
	t.Parallel()
	site, in := introSite(t, typo3.DialectSQLite)
	cfg, err := os.ReadFile(filepath.Join(in.Material, "introduction", "Initialisation", "Site", "introduction", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(site.Root, "config", "sites", "introduction")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, site, "admin")
	ctx := context.Background()
	type row struct {
		uid, parent int64
		title, slug string
	}
	query := func(q string) []row {
		rows, err := site.DB.SQL.QueryContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.uid, &r.parent, &r.title, &r.slug); err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		return out
	}
	def := query(`SELECT uid, l10n_parent, title, slug FROM pages WHERE sys_language_uid = 0 AND deleted = 0 AND doktype = 1 AND slug <> '/' ORDER BY uid LIMIT 5`)
	de := query(`SELECT uid, l10n_parent, title, slug FROM pages WHERE sys_language_uid = 1 AND deleted = 0 AND doktype = 1 AND slug <> '/' ORDER BY uid LIMIT 5`)
	if len(def) == 0 || len(de) == 0 {
		t.Fatalf("introduction pages: %d default, %d German", len(def), len(de))
	}
	has(t, "root", f.ok("admin", "resolve_url", `{"url":"/"}`), "Site: introduction (root page 1, base /)", "Page: [1] ")
	for _, p := range def {
		got := f.ok("admin", "resolve_url", fmt.Sprintf(`{"url":"https://intro.example%s"}`, p.slug))
		has(t, p.slug, got, fmt.Sprintf("Page: [%d] ", p.uid), "Language: 0 English")
	}
	for _, p := range de {
		got := f.ok("admin", "resolve_url", fmt.Sprintf(`{"url":"/de%s"}`, p.slug))
		has(t, "/de"+p.slug, got, "Language: 1 German (base /de/)", fmt.Sprintf("Page: [%d] ", p.parent), fmt.Sprintf("translation [%d] ", p.uid))
	}
}

func TestReadFalAssetMeta(t *testing.T) {
	t.Parallel()
	for _, d := range []typo3.Dialect{typo3.DialectSQLite, typo3.DialectMySQL} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			site, s := demoSite(t, d)
			f := newFixture(t, site, demoUsers()...)
			size, err := os.Stat(filepath.Join(s.Root, "public", "fileadmin", "user_upload", "documents", "aqua-200-datasheet.pdf"))
			if err != nil {
				t.Fatal(err)
			}
			got := f.ok("admin", "read_fal_asset_meta", `{"uid":18}`)
			want := fmt.Sprintf("File [18] 1:/user_upload/documents/aqua-200-datasheet.pdf\nmime: application/pdf\nsize: %d bytes\ntitle: Aqua 200 data sheet\nalternative: Aqua 200 data sheet", size.Size())
			if got != want {
				t.Errorf("18:\n%s\nwant:\n%s", got, want)
			}
			has(t, "image", f.ok("admin", "read_fal_asset_meta", `{"uid":1}`), "mime: image/jpeg", "width: 192", "height: 128", "title: pump aqua 200")
			has(t, "missing", f.ok("admin", "read_fal_asset_meta", `{"uid":20}`), "missing: yes")
			for _, uid := range []int{21, 99999} {
				if got := f.refused("admin", "read_fal_asset_meta", fmt.Sprintf(`{"uid":%d}`, uid)); got != "File not found or not permitted." {
					t.Errorf("%d: %q", uid, got)
				}
			}
			for _, user := range []string{"editor", "intern", "former"} {
				if got := f.refused(user, "read_fal_asset_meta", `{"uid":18}`); got != `Error: tool "read_fal_asset_meta" is not available.` {
					t.Errorf("%s: %q", user, got)
				}
			}
		})
	}
}
