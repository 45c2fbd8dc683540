package structure_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/builtin/structure"
	"github.com/t3agent/t3agent/internal/dbtest"
	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/typo3"
)

// TestFlexFormIntroduction renders the real data structures of the
// introduction install: felogin, form and bootstrap_package files through
// the TCA of tca-introduction.json.
func TestFlexFormIntroduction(t *testing.T) {
	t.Parallel()
	site, _ := introSite(t, typo3.DialectSQLite)
	f := newFixture(t, site, "admin", "editor")

	keys := f.ok("admin", "get_flexform_schema", `{"table":"tt_content","field":"pi_flexform"}`)
	golden(t, "intro_flexform_keys", keys)
	ds := site.TCA.Table("tt_content").Column("pi_flexform").Config.DS
	if len(ds) != 15 {
		t.Fatalf("introduction TCA has %d data structures, want 15", len(ds))
	}
	for key := range ds {
		if !strings.Contains(keys, "\n- "+key) {
			t.Errorf("key %q not listed", key)
		}
		// Every structure of the real install renders, by its exact key.
		out := f.ok("admin", "get_flexform_schema", `{"table":"tt_content","field":"pi_flexform","ds_pointer":`+jsonString(key)+`}`)
		if !strings.Contains(out, "Sheet: sDEF") || !strings.Contains(out, `data structure "`+key+`"`) || strings.Contains(out, "cannot") {
			t.Errorf("key %s:\n%s", key, out)
		}
	}

	felogin := f.ok("admin", "get_flexform_schema", `{"table":"tt_content","field":"pi_flexform","ds_pointer":"felogin_login"}`)
	golden(t, "intro_flexform_felogin", felogin)
	for _, want := range []string{
		`FlexForm tt_content.pi_flexform, data structure "*,felogin_login" (FILE:EXT:felogin/Configuration/FlexForms/Login.xml)`,
		"Sheet: sDEF (tt_content.pi_flexform.sheet_general)",
		"- settings.pages: group, → pages (group) (tt_content.pi_flexform.user_storage)",
		"- settings.recursive: select, selectSingle (LGL.recursive)",
		"Sheet: s_redirect",
		"Sheet: s_messages",
	} {
		if !strings.Contains(felogin, want) {
			t.Errorf("felogin lacks %q", want)
		}
	}
	// The same structure by "list_type,CType" values and by its key.
	for _, p := range []string{"*,felogin_login", "list,felogin_login", "anything,felogin_login"} {
		if got := f.ok("admin", "get_flexform_schema", `{"table":"tt_content","field":"pi_flexform","ds_pointer":`+jsonString(p)+`}`); got != felogin {
			t.Errorf("pointer %q resolves differently:\n%s", p, got)
		}
	}
	golden(t, "intro_flexform_accordion", f.ok("admin", "get_flexform_schema", `{"table":"tt_content","field":"pi_flexform","ds_pointer":"accordion"}`))
	golden(t, "intro_flexform_form", f.ok("editor", "get_flexform_schema", `{"table":"tt_content","field":"pi_flexform","ds_pointer":"form_formframework"}`))

	def := f.ok("admin", "get_flexform_schema", `{"table":"tt_content","field":"pi_flexform","ds_pointer":"default"}`)
	if !strings.Contains(def, "(inline XML in the TCA)") || !strings.Contains(def, "- xmlTitle: input (The Title:)") {
		t.Errorf("default:\n%s", def)
	}
	fallback := f.ok("admin", "get_flexform_schema", `{"table":"tt_content","field":"pi_flexform","ds_pointer":"news_pi1"}`)
	if !strings.Contains(fallback, `No key matches ds_pointer "news_pi1"; TYPO3 falls back to "default".`) || !strings.Contains(fallback, "xmlTitle") {
		t.Errorf("fallback:\n%s", fallback)
	}

	if got := f.refused("admin", "get_flexform_schema", `{"table":"tt_content","field":"header"}`); !strings.Contains(got, "is of type input, not flex") {
		t.Errorf("non-flex field: %q", got)
	}
	if got := f.refused("admin", "get_flexform_schema", `{"table":"tt_content","field":"no_such_field"}`); !strings.Contains(got, "has no field") {
		t.Errorf("unknown field: %q", got)
	}
	if got := f.refused("", "get_flexform_schema", `{"table":"tt_content","field":"pi_flexform"}`); got != readpolicy.DeniedUser {
		t.Errorf("no user: %q", got)
	}
	if got := f.refused("admin", "get_flexform_schema", `{"table":"tt_content"}`); !strings.Contains(got, "field") {
		t.Errorf("missing field: %q", got)
	}
}

// TestFlexFormDemo: the demo's own site package structures, with labels
// resolved from its XLF file, and a listed core file that is not shipped.
func TestFlexFormDemo(t *testing.T) {
	t.Parallel()
	site, _ := demoSite(t, typo3.DialectSQLite)
	f := newFixture(t, site, demoUsers()...)
	keys := f.ok("editor", "get_flexform_schema", `{"table":"tt_content","field":"pi_flexform"}`)
	for _, k := range []string{"default", "*,felogin_login", "*,sitedemo_dealermap", "*,sitedemo_teaser"} {
		if !strings.Contains(keys, "\n- "+k) {
			t.Errorf("key %s missing:\n%s", k, keys)
		}
	}
	teaser := f.ok("editor", "get_flexform_schema", `{"table":"tt_content","field":"pi_flexform","ds_pointer":"sitedemo_teaser"}`)
	golden(t, "demo_flexform_teaser", teaser)
	for _, want := range []string{
		"Sheet: sDEF (General)",
		"- settings.items: section (Extra links)",
		"  - container item (Link):",
		"    - label: input (Label)",
	} {
		if !strings.Contains(teaser, want) {
			t.Errorf("teaser lacks %q:\n%s", want, teaser)
		}
	}
	dealer := f.ok("intern", "get_flexform_schema", `{"table":"tt_content","field":"pi_flexform","ds_pointer":"*,sitedemo_dealermap"}`)
	if !strings.Contains(dealer, "Sheet: sDEF\n- settings.zoom: number (Initial zoom level)\n- settings.country: select, selectSingle (Country filter)") {
		t.Errorf("top-level ROOT is not sheet sDEF:\n%s", dealer)
	}
	got := f.refused("admin", "get_flexform_schema", `{"table":"tt_content","field":"pi_flexform","ds_pointer":"felogin_login"}`)
	if !strings.Contains(got, "FILE:EXT:felogin/Configuration/FlexForms/Login.xml, which does not exist in this installation") {
		t.Errorf("unshipped file: %q", got)
	}
	if got := f.refused("former", "get_flexform_schema", `{"table":"tt_content","field":"pi_flexform"}`); got != readpolicy.DeniedUser {
		t.Errorf("former: %q", got)
	}
	// Intern has no sys_category; not a FlexForm question then either.
	if got := f.refused("intern", "get_flexform_schema", `{"table":"sys_category","field":"items"}`); got != readpolicy.DeniedTable {
		t.Errorf("intern sys_category: %q", got)
	}
}

// TestFlexFormHostile feeds data structures that try to leave the
// installation, expand entities or exhaust the parser.
func TestFlexFormHostile(t *testing.T) {
	t.Parallel()
	secretDir := t.TempDir()
	secret := filepath.Join(secretDir, "secret.xml")
	if err := os.WriteFile(secret, []byte("<T3DataStructure><ROOT><type>array</type><el><leakedField><label>SECRET-LABEL</label><config><type>input</type></config></leakedField></el></ROOT></T3DataStructure>"), 0o644); err != nil {
		t.Fatal(err)
	}
	var deep strings.Builder
	deep.WriteString("<T3DataStructure><ROOT><type>array</type><el>")
	for range 100 {
		deep.WriteString("<a>")
	}
	for range 100 {
		deep.WriteString("</a>")
	}
	deep.WriteString("</el></ROOT></T3DataStructure>")
	var nested strings.Builder
	nested.WriteString("<T3DataStructure><ROOT><type>array</type><el>")
	for range 8 {
		nested.WriteString("<grp><type>array</type><el>")
	}
	nested.WriteString("<leaf><config><type>input</type></config></leaf>")
	for range 8 {
		nested.WriteString("</el></grp>")
	}
	nested.WriteString("</el></ROOT></T3DataStructure>")
	var many strings.Builder
	many.WriteString("<T3DataStructure><ROOT><type>array</type><el>")
	for i := range 700 {
		many.WriteString("<f" + strings.Repeat("x", i%5) + "><config><type>input</type></config></f" + strings.Repeat("x", i%5) + ">")
	}
	many.WriteString("</el></ROOT></T3DataStructure>")

	ds := map[string]string{
		"traversal":  "FILE:EXT:site_demo/../../../../" + strings.TrimPrefix(secret, "/"),
		"absolute":   "FILE:" + secret,
		"badkey":     "FILE:EXT:Site-Demo/Configuration/FlexForms/Teaser.xml",
		"unknownext": "FILE:EXT:no_such_ext/Configuration/FlexForms/X.xml",
		"missing":    "FILE:EXT:site_demo/Configuration/FlexForms/Missing.xml",
		"symlink":    "FILE:EXT:site_demo/Configuration/FlexForms/Evil.xml",
		"xxe": `<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file://` + secret + `">]>` +
			`<T3DataStructure><ROOT><type>array</type><el><f><label>&x;</label><config><type>input</type></config></f></el></ROOT></T3DataStructure>`,
		"laughs": `<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>` +
			`<T3DataStructure><ROOT><type>array</type><el><f><label>&b;</label></f></el></ROOT></T3DataStructure>`,
		"sheetfile": `<T3DataStructure><sheets><sMap>FILE:EXT:site_demo/Configuration/FlexForms/DealerMap.xml</sMap>` +
			`<sBad>FILE:EXT:site_demo/../../x.xml</sBad><sNone></sNone></sheets></T3DataStructure>`,
		"tceforms": `<T3DataStructure><sheets><sDEF><ROOT><TCEforms><sheetTitle>Legacy sheet</sheetTitle></TCEforms><type>array</type><el>` +
			`<settings.mode><TCEforms><label>Mode</label><config><type>select</type><renderType>selectSingle</renderType><required>1</required></config></TCEforms></settings.mode>` +
			`</el></ROOT></sDEF></sheets></T3DataStructure>`,
		"deep":      deep.String(),
		"nested":    nested.String(),
		"many":      many.String(),
		"malformed": `<T3DataStructure><ROOT><type>array</type>`,
		"tworoots":  `<T3DataStructure><ROOT/></T3DataStructure><T3DataStructure/>`,
		"empty":     `<T3DataStructure></T3DataStructure>`,
		"huge":      "<T3DataStructure><!--" + strings.Repeat("x", 1<<20) + "--></T3DataStructure>",
		"latin1":    "FILE:EXT:site_demo/Configuration/FlexForms/Latin1.xml",
		"ebcdic":    `<?xml version="1.0" encoding="EBCDIC-US"?><T3DataStructure/>`,
	}
	site, demoSite := demoSite(t, typo3.DialectSQLite)
	if err := os.Symlink(secret, filepath.Join(demoSite.Root, "packages", "site_demo", "Configuration", "FlexForms", "Evil.xml")); err != nil {
		t.Fatal(err)
	}
	// Raw ISO-8859-1 bytes can only come from a file: TCA strings are UTF-8.
	latin1 := "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><T3DataStructure><ROOT><type>array</type><el><f><label>Gr\xf6\xdfe</label><config><type>input</type></config></f></el></ROOT></T3DataStructure>"
	if err := os.WriteFile(filepath.Join(demoSite.Root, "packages", "site_demo", "Configuration", "FlexForms", "Latin1.xml"), []byte(latin1), 0o644); err != nil {
		t.Fatal(err)
	}
	site.TCA = extraTCA(t, site.TCA, ds)
	f := newFixture(t, site, "admin")
	call := func(pointer string) (string, bool) {
		r := f.call("admin", "get_flexform_schema", `{"table":"tx_test_flex","field":"settings","ds_pointer":`+jsonString(pointer)+`}`)
		if strings.Contains(r.Content, "SECRET-LABEL") || strings.Contains(r.Content, "leakedField") {
			t.Errorf("%s leaks the file outside the installation:\n%s", pointer, r.Content)
		}
		return r.Content, r.IsError
	}
	for pointer, want := range map[string]string{
		"traversal":  "is not a valid EXT: reference",
		"absolute":   "is not an EXT: reference t3agent can resolve",
		"badkey":     "is not a valid EXT: reference",
		"unknownext": "belongs to an extension that is not installed",
		"missing":    "does not exist in this installation",
		"symlink":    "cannot be read",
		"xxe":        "not well-formed",
		"laughs":     "not well-formed",
		"deep":       "too large or too deeply nested",
		"malformed":  "not well-formed",
		"tworoots":   "more than one root element",
		"empty":      "neither <sheets> nor <ROOT>",
		"huge":       "too large",
		"ebcdic":     "not well-formed",
	} {
		got, isErr := call(pointer)
		if !isErr || !strings.Contains(got, want) {
			t.Errorf("%s: got %q (error %v), want an error containing %q", pointer, got, isErr, want)
		}
	}

	sheets, _ := call("sheetfile")
	for _, want := range []string{
		"Sheet: sMap\n- settings.zoom: number (Initial zoom level)",
		"Sheet: sBad — FILE:EXT:site_demo/../../x.xml cannot be read: is not a valid EXT: reference",
		"Sheet: sNone — no ROOT element",
	} {
		if !strings.Contains(sheets, want) {
			t.Errorf("sheet files lack %q:\n%s", want, sheets)
		}
	}
	if got, _ := call("tceforms"); !strings.Contains(got, "Sheet: sDEF (Legacy sheet)\n- settings.mode: select, selectSingle, required (Mode)") {
		t.Errorf("TCEforms wrapper:\n%s", got)
	}
	if got, _ := call("nested"); !strings.Contains(got, "nested too deeply, not shown") || strings.Contains(got, "leaf") {
		t.Errorf("nesting bound:\n%s", got)
	}
	if got, _ := call("many"); len(lines(got)) > 503 || !strings.HasSuffix(got, "… output cut at 500 lines.") {
		t.Errorf("line bound: %d lines, ends %q", len(lines(got)), got[max(0, len(got)-60):])
	}
	if got, _ := call("latin1"); !strings.Contains(got, "- f: input (Größe)") {
		t.Errorf("ISO-8859-1:\n%s", got)
	}
	// Several structures and no pointer: the keys.
	r := f.call("admin", "get_flexform_schema", `{"table":"tx_test_flex","field":"settings"}`)
	if r.IsError || !strings.Contains(r.Content, "has 19 data structures, selected by the record's mode.") || !strings.Contains(r.Content, "\n- xxe") {
		t.Errorf("key list: %+v", r)
	}
	// A pointer nothing matches, without a default.
	r = f.call("admin", "get_flexform_schema", `{"table":"tx_test_flex","field":"settings","ds_pointer":"nothing"}`)
	if !r.IsError || !strings.Contains(r.Content, "and there is no default") {
		t.Errorf("no match: %+v", r)
	}
	// A single string ds needs no pointer.
	if got := f.ok("admin", "get_flexform_schema", `{"table":"tx_test_flex","field":"single"}`); !strings.Contains(got, `data structure "default"`) || !strings.Contains(got, "- only: check (Only field)") {
		t.Errorf("single ds:\n%s", got)
	}
}

// FuzzFlexForm: the data structure renderer never panics and stays within
// its line bound, whatever the XML. Seeds are the real files.
func FuzzFlexForm(f *testing.F) {
	shared := dbtest.TYPO3Material(f)
	var seeds []string
	for _, pattern := range []string{
		filepath.Join(shared, "bootstrap_package", "Configuration", "FlexForms", "*.xml"),
		filepath.Join(shared, "core-extensions", "*", "Configuration", "FlexForms", "*.xml"),
		filepath.Join("..", "..", "demo", "skeleton", "packages", "site_demo", "Configuration", "FlexForms", "*.xml"),
	} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, m...)
	}
	if len(seeds) < 13 {
		f.Fatalf("only %d seed files found", len(seeds))
	}
	slices.Sort(seeds)
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`<T3DataStructure><sheets><s><ROOT><el><x><type>array</type><section>1</section><el><c><el><y><config><type>input</type></config></y></el></c></el></x></el></ROOT></s></sheets></T3DataStructure>`))
	f.Add([]byte(`<a index="">&amp;<b/><b index="ROOT"><el/></b></a>`))
	f.Fuzz(func(t *testing.T, src []byte) {
		out, err := structure.RenderFlexForm(src)
		if err == nil && len(lines(out)) > 501 {
			t.Errorf("%d lines", len(lines(out)))
		}
	})
}
