package content_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/demo/demotest"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the SQLite run")

// goldenCall is one representative call whose whole result is kept in
// testdata/golden/<name>.txt. The same file must come out of every
// database: the demo and the introduction import hold the same rows on
// each.
type goldenCall struct {
	name, user, tool string
	args             map[string]any
}

func allDialects() []typo3.Dialect {
	return []typo3.Dialect{typo3.DialectSQLite, typo3.DialectMySQL, typo3.DialectPostgres}
}

// renderResult writes a result the way the golden files hold it.
func renderResult(c goldenCall, res tool.Result) string {
	args, _ := json.Marshal(c.args)
	var b strings.Builder
	fmt.Fprintf(&b, "%s as %s %s\nerror: %v\n\n%s\n", c.tool, c.user, args, res.IsError, res.Content)
	for _, a := range res.Artifacts {
		b.WriteString("\nartifact:\n")
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // readable markup in the files
		enc.SetIndent("", "  ")
		_ = enc.Encode(a)
	}
	return b.String()
}

func checkGolden(t *testing.T, d typo3.Dialect, e *env, calls []goldenCall) {
	t.Helper()
	for _, c := range calls {
		got := renderResult(c, e.call(t, c.user, c.tool, c.args))
		path := filepath.Join("testdata", "golden", c.name+".txt")
		if *update && d == typo3.DialectSQLite {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./internal/builtin/content -run Golden -update)", err)
		}
		if got != string(want) {
			t.Errorf("%s differs from %s:\n--- got\n%s\n--- want\n%s", c.name, path, got, want)
		}
	}
}

func TestGoldenDemo(t *testing.T) {
	t.Parallel()
	calls := []goldenCall{
		{"demo_search_admin_aqua", "admin", "search_records", map[string]any{"query": "Aqua", "limit": 10}},
		{"demo_search_editor_pump", "editor", "search_records", map[string]any{"query": "pump", "limit": 10}},
		{"demo_search_intern_news", "intern", "search_records", map[string]any{"query": "News"}},
		{"demo_search_admin_category", "admin", "search_records", map[string]any{"query": "pumps", "table": "sys_category"}},
		{"demo_search_editor_category", "editor", "search_records", map[string]any{"query": "pumps", "table": "sys_category"}},
		{"demo_search_admin_nothing", "admin", "search_records", map[string]any{"query": "100%_"}},
		{"demo_page_admin_6", "admin", "get_page_content", map[string]any{"uid": 6}},
		{"demo_page_editor_6", "editor", "get_page_content", map[string]any{"uid": 6}},
		{"demo_page_admin_1_de", "admin", "get_page_content", map[string]any{"uid": 1, "language": 1}},
		{"demo_page_editor_1_de", "editor", "get_page_content", map[string]any{"uid": 1, "language": 1}},
		{"demo_page_intern_13", "intern", "get_page_content", map[string]any{"uid": 13}},
		{"demo_page_editor_9", "editor", "get_page_content", map[string]any{"uid": 9}},
		{"demo_page_admin_19", "admin", "get_page_content", map[string]any{"uid": 19}},
		{"demo_read_admin_content_p6", "admin", "read_records", map[string]any{"table": "tt_content", "pid": 6,
			"fields": []string{"header", "CType", "colPos", "bodytext"}}},
		{"demo_read_editor_pages_p5", "editor", "read_records", map[string]any{"table": "pages", "pid": 5,
			"fields": []string{"title", "slug", "doktype", "hidden"}}},
		{"demo_read_admin_category", "admin", "read_records", map[string]any{"table": "sys_category"}},
		{"demo_read_editor_text_offset", "editor", "read_records", map[string]any{"table": "tt_content",
			"where_equals": map[string]any{"CType": "text"}, "limit": 5, "offset": 5}},
		{"demo_read_admin_login_flexform", "admin", "read_records", map[string]any{"table": "tt_content", "uid": 6,
			"fields": []string{"header", "pi_flexform"}}},
		{"demo_history_admin_content_1", "admin", "get_record_history", map[string]any{"table": "tt_content", "uid": 1}},
		{"demo_history_editor_page_5", "editor", "get_record_history", map[string]any{"table": "pages", "uid": 5}},
		{"demo_history_intern_page_5", "intern", "get_record_history", map[string]any{"table": "pages", "uid": 5}},
		{"demo_history_admin_deleted_3", "admin", "get_record_history", map[string]any{"table": "tt_content", "uid": 3}},
	}
	for _, d := range allDialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			s := demotest.New(t, d)
			checkGolden(t, d, newEnv(t, d, s.DSN, tca.Bundled(), []string{"admin", "editor", "intern"}), calls)
		})
	}
}

func TestGoldenIntroduction(t *testing.T) {
	t.Parallel()
	calls := []goldenCall{
		{"intro_search_admin_typo3", "admin", "search_records", map[string]any{"query": "TYPO3", "limit": 15}},
		{"intro_search_editor_typo3", "editor", "search_records", map[string]any{"query": "TYPO3", "limit": 15}},
		{"intro_search_admin_accordion", "admin", "search_records", map[string]any{"query": "accordion"}},
		{"intro_page_admin_1", "admin", "get_page_content", map[string]any{"uid": 1}},
		{"intro_page_editor_45", "editor", "get_page_content", map[string]any{"uid": 45}},
		{"intro_read_admin_pages", "admin", "read_records", map[string]any{"table": "pages", "limit": 15,
			"fields": []string{"pid", "title", "doktype", "sys_language_uid"}}},
		{"intro_read_editor_text", "editor", "read_records", map[string]any{"table": "tt_content",
			"where_equals": map[string]any{"CType": "text"}, "limit": 5, "fields": []string{"pid", "header", "bodytext"}}},
		{"intro_read_admin_accordion_items", "admin", "read_records", map[string]any{"table": "tx_bootstrappackage_accordion_item", "limit": 5}},
		{"intro_history_admin_page_1", "admin", "get_record_history", map[string]any{"table": "pages", "uid": 1}},
	}
	for _, d := range allDialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			in := demotest.Introduction(t, d)
			f, err := os.Open(filepath.Join(in.Material, "tca-introduction.json"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			tc, err := tca.LoadJSON(f)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, d, newEnv(t, d, in.DSN, tc, []string{"admin", "editor"}), calls)
		})
	}
}
