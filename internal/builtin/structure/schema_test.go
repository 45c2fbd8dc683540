package structure_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/builtin/structure"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

// TestSpecs holds every tool to its declaration: read-only, not
// admin-only, on by default, its group and class, and a closed object
// schema.
func TestSpecs(t *testing.T) {
	t.Parallel()
	site, _ := demoSite(t, typo3.DialectSQLite)
	want := map[string]string{
		"get_full_tca":        tool.GroupStructure,
		"get_table_schema":    tool.GroupStructure,
		"get_flexform_schema": tool.GroupStructure,
		"fluid_resolve":       tool.GroupConfiguration,
		"get_page_tree":       tool.GroupStructure,
		"get_tca":             tool.GroupStructure,
		"validate_tca":        tool.GroupStructure,
		"resolve_url":         tool.GroupStructure,
		"read_fal_asset_meta": tool.GroupStructure,
	}
	tools := structure.Tools(site, readpolicy.New(site.TCA))
	if len(tools) != len(want) {
		t.Fatalf("%d tools, want %d", len(tools), len(want))
	}
	for _, tl := range tools {
		s := tl.Spec()
		group, ok := want[s.Name]
		if !ok {
			t.Errorf("unexpected tool %s", s.Name)
			continue
		}
		if err := s.Validate(); err != nil {
			t.Error(err)
		}
		if s.Group != group || s.Effect != tool.ReadOnly || s.AdminOnly != (s.Name == "read_fal_asset_meta") || !s.EnabledByDefault ||
			s.DataClass != tool.InternalConfiguration || s.ApprovalBound() || s.Remote {
			t.Errorf("%s: spec %+v", s.Name, s)
		}
		var schema struct {
			Type                 string         `json:"type"`
			AdditionalProperties *bool          `json:"additionalProperties"`
			Properties           map[string]any `json:"properties"`
		}
		if err := json.Unmarshal(s.InputSchema, &schema); err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		if schema.Type != "object" || schema.AdditionalProperties == nil || *schema.AdditionalProperties || len(schema.Properties) == 0 {
			t.Errorf("%s: schema must be a closed object: %s", s.Name, s.InputSchema)
		}
		if len(s.Description) < 200 {
			t.Errorf("%s: description too thin for the model: %q", s.Name, s.Description)
		}
	}
	// internalConfiguration: offered up to an EU provider, never beyond.
	f := newFixture(t, site, "admin")
	for name := range want {
		for zone, allowed := range map[tool.TrustZone]bool{tool.ZoneExternalEU: true, tool.ZoneExternalGlobal: false} {
			r := f.gate.Invoke(context.Background(), gate.InvokeParams{
				Name: name, Args: json.RawMessage(`{}`), Call: tool.Call{Actor: f.users["admin"]},
				Config: gate.Config{Name: "zone", TrustZone: zone},
			})
			if denied := strings.Contains(r.Content, "is not available"); denied == allowed {
				t.Errorf("%s in zone %s: %q", name, zone, r.Content)
			}
		}
	}
}

// extraTCA adds tables that only tests need: the two denylisted prefixes
// (present in the TCA, so the refusal must come from the denylist), a
// table full of credential-like columns, and a table whose FlexForm data
// structures are hostile.
func extraTCA(t *testing.T, base *tca.TCA, flexDS map[string]string) *tca.TCA {
	t.Helper()
	input := func(typ string) map[string]any { return map[string]any{"config": map[string]any{"type": typ}} }
	tables := map[string]any{
		"tx_nrllm_configuration": map[string]any{
			"ctrl":    map[string]any{"title": "LLM configuration", "label": "name"},
			"columns": map[string]any{"name": input("input"), "api_key": input("password")},
		},
		"tx_nrvault_secret": map[string]any{
			"ctrl":    map[string]any{"title": "LLL:EXT:site_demo/Resources/Private/Language/locallang_db.xlf:vault.title", "label": "identifier"},
			"columns": map[string]any{"identifier": input("input"), "value": input("text")},
		},
		"tx_test_creds": map[string]any{
			"ctrl": map[string]any{"title": "Credential\n\ttest\u202e\x00", "label": "api_key", "label_alt": "title,secret_token"},
			"columns": map[string]any{
				"title":    map[string]any{"config": map[string]any{"type": "input", "required": true}},
				"api_key":  map[string]any{"config": map[string]any{"type": "input", "renderType": "apiKeyWizard"}},
				"password": input("password"),
				"secret_token": map[string]any{"config": map[string]any{
					"type": "select", "renderType": "selectSingle", "foreign_table": "be_users", "MM": "tx_test_token_mm"}},
				"clientSecret": input("input"),
				"owner":        map[string]any{"config": map[string]any{"type": "group", "allowed": "pages,tt_content"}},
			},
		},
		"tx_test_flex": map[string]any{
			"ctrl": map[string]any{"title": "LLL:EXT:site_demo/Resources/Private/Language/locallang_db.xlf:teaser.title", "label": "title"},
			"columns": map[string]any{
				"title":    input("input"),
				"settings": map[string]any{"config": map[string]any{"type": "flex", "ds_pointerField": "mode", "ds": flexDS}},
				"single": map[string]any{"config": map[string]any{"type": "flex",
					"ds": "<T3DataStructure><ROOT><type>array</type><el><only><label>Only field</label><config><type>check</type></config></only></el></ROOT></T3DataStructure>"}},
			},
		},
	}
	b, err := json.Marshal(tables)
	if err != nil {
		t.Fatal(err)
	}
	extra, err := tca.LoadJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	for name, tab := range extra.Tables {
		base.Tables[name] = tab
	}
	return base
}

func TestFullTCADemo(t *testing.T) {
	t.Parallel()
	site, _ := demoSite(t, typo3.DialectSQLite)
	f := newFixture(t, site, demoUsers()...)

	admin := f.ok("admin", "get_full_tca", `{}`)
	golden(t, "demo_full_tca_admin", admin)
	editor := f.ok("editor", "get_full_tca", `{}`)
	golden(t, "demo_full_tca_editor", editor)
	intern := f.ok("intern", "get_full_tca", `{}`)
	// intern: pages (Interns) and tt_content (News readers); the hidden
	// group's sys_template does not count.
	if got := tableNames(intern); !slices.Equal(got, []string{"pages", "tt_content"}) {
		t.Errorf("intern's tables = %v, want [pages tt_content]", got)
	}
	for _, out := range []string{admin, editor, intern} {
		for _, name := range tableNames(out) {
			if readpolicy.IsSensitiveTable(name) {
				t.Errorf("sensitive table %s listed", name)
			}
		}
	}
	if got := f.refused("former", "get_full_tca", `{}`); got != readpolicy.DeniedUser {
		t.Errorf("former: %q", got)
	}
	if got := f.refused("", "get_full_tca", `{}`); got != readpolicy.DeniedUser {
		t.Errorf("no user: %q", got)
	}
	// sys_template is adminOnly: no filter finds it for the editor.
	if got := f.ok("editor", "get_full_tca", `{"filter":"template"}`); strings.Contains(got, "sys_template") {
		t.Errorf("editor sees sys_template: %s", got)
	}
	files := f.ok("admin", "get_full_tca", `{"filter":"FILE"}`)
	if got := tableNames(files); !slices.Equal(got, []string{"sys_file", "sys_file_metadata", "sys_file_reference", "sys_filemounts"}) {
		t.Errorf("filter FILE: %v", got)
	}
	// A title matches too: bundled titles are plain English.
	if got := tableNames(f.ok("admin", "get_full_tca", `{"filter":"page content"}`)); !slices.Equal(got, []string{"tt_content"}) {
		t.Errorf("filter by title: %v", got)
	}
	if got := f.ok("admin", "get_full_tca", `{"extension":"site_demo"}`); !strings.HasPrefix(got, "No readable table matches") {
		t.Errorf("extension without tables: %s", got)
	}
	for _, bad := range []string{`{"extension":"../core"}`, `{"extension":"Site_Demo"}`, `{"extension":"a/b"}`, `{"table":"pages"}`, `{"filter":3}`} {
		if got := f.refused("admin", "get_full_tca", bad); !strings.Contains(got, "invalid arguments") {
			t.Errorf("%s: %s", bad, got)
		}
	}
}

// tableNames reads the table names of a get_full_tca answer.
func tableNames(out string) []string {
	var names []string
	for _, l := range lines(out) {
		name, _, _ := strings.Cut(l, " — ")
		if typo3.ValidIdent(name) {
			names = append(names, name)
		}
	}
	return names
}

func TestFullTCAIntroduction(t *testing.T) {
	t.Parallel()
	site, _ := introSite(t, typo3.DialectSQLite)
	f := newFixture(t, site, "admin", "editor")
	admin := f.ok("admin", "get_full_tca", `{}`)
	golden(t, "intro_full_tca_admin", admin)
	bp := f.ok("admin", "get_full_tca", `{"extension":"bootstrap_package"}`)
	if got := tableNames(bp); len(got) != 6 || !strings.HasPrefix(bp, "6 readable table(s) of extension bootstrap_package (tx_bootstrappackage_*)") {
		t.Errorf("bootstrap_package tables: %v\n%s", got, bp)
	}
	// Simple editors: their tables_select minus sys_file_storage (denied
	// for everyone) and minus nothing else.
	want := []string{"pages", "sys_category", "sys_file", "sys_file_collection", "sys_file_metadata", "sys_file_reference",
		"tt_content", "tx_bootstrappackage_accordion_item", "tx_bootstrappackage_carousel_item", "tx_bootstrappackage_tab_item"}
	if got := tableNames(f.ok("editor", "get_full_tca", `{}`)); !slices.Equal(got, want) {
		t.Errorf("editor tables = %v\nwant %v", got, want)
	}
}

func TestTableSchema(t *testing.T) {
	t.Parallel()
	t.Run("introduction", func(t *testing.T) {
		t.Parallel()
		site, _ := introSite(t, typo3.DialectSQLite)
		f := newFixture(t, site, "admin", "editor")
		tt := f.ok("admin", "get_table_schema", `{"table":"tt_content"}`)
		golden(t, "intro_table_schema_tt_content", tt)
		for _, want := range []string{
			"- image: file, → sys_file_reference (file)",
			"- categories: category, → sys_category (category), via MM sys_category_record_mm",
			"- fe_group: select, selectMultipleSideBySide, → fe_groups (select)",
			"- records: group, → tt_content (group)",
			"- tx_bootstrappackage_accordion_item: inline, → tx_bootstrappackage_accordion_item (inline, foreign_field tt_content)",
			"- pi_flexform: flex",
			"  workspaces: yes",
			"  language field: sys_language_uid, translation parent l18n_parent, translation source l10n_source",
		} {
			if !strings.Contains(tt, want) {
				t.Errorf("tt_content schema lacks %q", want)
			}
		}
		if got := f.ok("editor", "get_table_schema", `{"table":"tt_content"}`); got != tt {
			t.Error("the schema differs between admin and editor")
		}
		golden(t, "intro_table_schema_pages", f.ok("editor", "get_table_schema", `{"table":"pages"}`))
		// Not in Simple editors' tables_select.
		if got := f.refused("editor", "get_table_schema", `{"table":"index_config"}`); got != readpolicy.DeniedTable {
			t.Errorf("editor index_config: %q", got)
		}
		// adminOnly.
		if got := f.refused("editor", "get_table_schema", `{"table":"sys_template"}`); got != readpolicy.DeniedTable {
			t.Errorf("editor sys_template: %q", got)
		}
		if !strings.Contains(f.ok("admin", "get_table_schema", `{"table":"sys_template"}`), "adminOnly: yes") {
			t.Error("admin's sys_template schema does not say adminOnly")
		}
	})
	t.Run("demo", func(t *testing.T) {
		t.Parallel()
		site, _ := demoSite(t, typo3.DialectSQLite)
		f := newFixture(t, site, demoUsers()...)
		golden(t, "demo_table_schema_pages", f.ok("editor", "get_table_schema", `{"table":"pages"}`))
		if got := f.refused("intern", "get_table_schema", `{"table":"sys_category"}`); got != readpolicy.DeniedTable {
			t.Errorf("intern sys_category: %q", got)
		}
		if got := f.refused("former", "get_table_schema", `{"table":"pages"}`); got != readpolicy.DeniedUser {
			t.Errorf("former: %q", got)
		}
		if got := f.refused("admin", "get_table_schema", `{}`); !strings.Contains(got, "table") {
			t.Errorf("missing table: %q", got)
		}
	})
}

// TestSensitiveMatrix: users × sensitive tables × schema tools. Every
// answer is the one neutral sentence, for admins too, and equals the
// answer for a table that does not exist.
func TestSensitiveMatrix(t *testing.T) {
	t.Parallel()
	for _, d := range []typo3.Dialect{typo3.DialectSQLite, typo3.DialectMySQL} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			testSensitiveMatrix(t, d)
		})
	}
}

func testSensitiveMatrix(t *testing.T, d typo3.Dialect) {
	site, _ := demoSite(t, d)
	site.TCA = extraTCA(t, site.TCA, map[string]string{"default": "<T3DataStructure><ROOT><type>array</type><el/></ROOT></T3DataStructure>"})
	f := newFixture(t, site, demoUsers()...)
	for _, user := range append(demoUsers(), "") {
		want := readpolicy.DeniedTable
		if f.users[user] == nil {
			want = readpolicy.DeniedUser
		}
		tables := append(sensitiveTables(), "no_such_table", "pages; DROP TABLE pages", "../be_users", "BE_USERS", "tx_nrllmfoo")
		for _, table := range tables {
			for _, call := range []struct{ tool, args string }{
				{"get_table_schema", `{"table":` + jsonString(table) + `}`},
				{"get_flexform_schema", `{"table":` + jsonString(table) + `,"field":"pi_flexform"}`},
				{"get_flexform_schema", `{"table":` + jsonString(table) + `,"field":"password","ds_pointer":"default"}`},
			} {
				if got := f.refused(user, call.tool, call.args); got != want {
					t.Errorf("%s %s as %q = %q, want %q", call.tool, call.args, user, got, want)
				}
			}
		}
		if f.users[user] == nil {
			continue
		}
		index := f.ok(user, "get_full_tca", `{}`)
		for _, table := range sensitiveTables() {
			if slices.Contains(tableNames(index), table) {
				t.Errorf("get_full_tca as %s lists %s", user, table)
			}
		}
		for _, filter := range []string{"users", "nrllm", "nrvault", "log", "storage"} {
			out := f.ok(user, "get_full_tca", `{"filter":"`+filter+`"}`)
			for _, name := range tableNames(out) {
				if readpolicy.IsSensitiveTable(name) {
					t.Errorf("get_full_tca filter %s as %s lists %s", filter, user, name)
				}
			}
		}
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestCredentialColumns: credential-like columns are named with the
// marker and nothing else, in the field list and in ctrl.
func TestCredentialColumns(t *testing.T) {
	t.Parallel()
	site, _ := demoSite(t, typo3.DialectSQLite)
	site.TCA = extraTCA(t, site.TCA, map[string]string{"default": "<T3DataStructure><ROOT><type>array</type><el/></ROOT></T3DataStructure>"})
	f := newFixture(t, site, "admin")
	out := f.ok("admin", "get_table_schema", `{"table":"tx_test_creds"}`)
	golden(t, "creds_table_schema", out)
	for _, col := range []string{"api_key", "password", "secret_token", "clientSecret"} {
		if !strings.Contains(out, "- "+col+": [sensitive — detail withheld]\n") {
			t.Errorf("%s is not withheld:\n%s", col, out)
		}
	}
	for _, leak := range []string{"apiKeyWizard", "be_users", "tx_test_token_mm", ": password", "label: api_key", "secret_token,", ", secret_token"} {
		if strings.Contains(out, leak) {
			t.Errorf("schema leaks %q:\n%s", leak, out)
		}
	}
	if !strings.Contains(out, "- title: input, required") || !strings.Contains(out, "- owner: group, → pages|tt_content (group)") {
		t.Errorf("ordinary fields are not described:\n%s", out)
	}
	// A credential column is not a FlexForm field either.
	if got := f.refused("admin", "get_flexform_schema", `{"table":"tx_test_creds","field":"password"}`); !strings.Contains(got, "has no field") {
		t.Errorf("flexform on a credential column: %q", got)
	}
}

// TestTitles: LLL titles resolve through the extension's XLF file, fall
// back to the label id, and every title is one clean line.
func TestTitles(t *testing.T) {
	t.Parallel()
	site, _ := demoSite(t, typo3.DialectSQLite)
	site.TCA = extraTCA(t, site.TCA, map[string]string{"default": "<T3DataStructure><ROOT><type>array</type><el/></ROOT></T3DataStructure>"})
	site.TCA.Tables["tx_test_missing"] = &tca.Table{Name: "tx_test_missing", Ctrl: tca.Ctrl{
		Title: "LLL:EXT:site_demo/Resources/Private/Language/locallang_db.xlf:no.such.id"}}
	site.TCA.Tables["tx_test_nofile"] = &tca.Table{Name: "tx_test_nofile", Ctrl: tca.Ctrl{
		Title: "LLL:EXT:site_demo/Resources/Private/Language/missing.xlf:nofile.title"}}
	f := newFixture(t, site, "admin")
	out := f.ok("admin", "get_full_tca", `{"filter":"tx_test"}`)
	for _, want := range []string{
		"tx_test_creds — Credential test\n",
		"tx_test_flex — Page teaser\n",
		"tx_test_missing — no.such.id\n",
		"tx_test_nofile — nofile.title\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("index lacks %q:\n%s", want, out)
		}
	}
	if got := f.ok("admin", "get_table_schema", `{"table":"tx_test_flex"}`); !strings.HasPrefix(got, "Table: tx_test_flex — Page teaser\n") {
		t.Errorf("schema title:\n%s", got)
	}
}
