package content_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/builtin/content"
	"github.com/t3agent/t3agent/internal/dbtest"
	"github.com/t3agent/t3agent/internal/demo/demotest"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/logtest"
	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/siteindex"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

// indexStores are the store databases the index is tested on.
var indexStores = []struct {
	name   string
	newDSN func(tb testing.TB) string
}{
	{"sqlite", func(tb testing.TB) string { return "sqlite:" + filepath.Join(tb.TempDir(), "t3agent.db") }},
	{"postgres", func(tb testing.TB) string { return dbtest.Postgres(tb) }},
}

// indexed is env's site with a built index in a store of storeDSN and a
// second gate whose search_records uses it.
type indexed struct {
	*env
	ix   *siteindex.Index
	gate *gate.Gate
	logs *logtest.Buffer
	scan *gate.Gate
}

func newIndexed(t *testing.T, e *env, tc *tca.TCA, storeDSN string) *indexed {
	t.Helper()
	st, err := store.Open(t.Context(), storeDSN, store.OpenParams{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	policy := readpolicy.New(tc)
	ix, err := siteindex.New(siteindex.Params{Store: st, Site: e.site, Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Build(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	g, logs := newGate(t, content.ToolsWith(content.ToolsParams{Site: e.site, Policy: policy, Index: ix}))
	return &indexed{env: e, ix: ix, gate: g, logs: logs, scan: e.gate}
}

// both runs search_records with and without the index as user and
// fails when the answers differ.
func (x *indexed) both(t *testing.T, user string, args map[string]any) string {
	t.Helper()
	want := invoke(t, x.scan, x.env.logs, tool.ZoneExternalGlobal, x.users[user], "search_records", args)
	got := invoke(t, x.gate, x.logs, tool.ZoneExternalGlobal, x.users[user], "search_records", args)
	if got.Content != want.Content || got.IsError != want.IsError {
		t.Errorf("search_records %v as %s:\nwith the index:\n%s\nscanning:\n%s", args, user, got.Content, want.Content)
	}
	return got.Content
}

// differentialQueries are words found often, rarely and nowhere, in
// English and German, with umlauts folded and not, compounds and their
// parts, markup, e-mail and path fragments, and SQL metacharacters.
var differentialQueries = []string{
	"pump", "Pumpe", "PUMPEN", "pumps move", "Aqua", "aqua 200", "Fjord 350", "Kiel", "garantie", "Garantie auf fünf",
	"fünf", "funf", "Gehäuse", "gehause", "GEHÄUSE", "korrosionsbeständigem", "Edelstahl", "stahl", "Wasserpumpe",
	"Servicetechniker", "techniker", "Werktags", "Prozent", "40 Prozent", "energy", "ENERGY", "Energie", "Straße",
	"strasse", "ß", "ü", "Ä", "é", "Müller", "zyxwvq", "xyzzy", "qqqq", "nowhere-word", "%%", "__", "!!", "%pump%",
	"pu_p", "a%b", "'\"", "pump'; DROP TABLE pages; --", "\\", "<p>", "class", "href", "https", "&amp;", "2026",
	"nordlicht-pumps.example", "web@nordlicht", "/products", "product-a", "solar", "jpg", "Team", "Ida Vogel", "vogel",
	"Visible flex", "settings.title", "apikey", "SECRET", "TYPO3", "accordion", "Bootstrap", "Seite", "Willkommen",
	"in", "er", "e.g.", "  pump  ", "Übersicht", "uber", "über",
}

// TestIndexedSearchEqualsScan: for every query of the set and every user,
// search_records answers the same with the index as by scanning, on the
// demo and the introduction site, with either store driver; with a table
// and a higher limit too.
func TestIndexedSearchEqualsScan(t *testing.T) {
	t.Parallel()
	if len(differentialQueries) < 50 {
		t.Fatalf("the query set has %d queries", len(differentialQueries))
	}
	sites := []struct {
		name  string
		users []string
		open  func(t *testing.T) (*env, *tca.TCA)
	}{
		{"demo", []string{"admin", "editor", "intern", "former"}, func(t *testing.T) (*env, *tca.TCA) {
			e := plantedEnv(t, typo3.DialectSQLite)
			return e, plantedTCA()
		}},
		{"introduction", []string{"admin", "editor"}, func(t *testing.T) (*env, *tca.TCA) {
			in := demotest.Introduction(t, typo3.DialectSQLite)
			f, err := os.Open(filepath.Join(in.Material, "tca-introduction.json"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			tc, err := tca.LoadJSON(f)
			if err != nil {
				t.Fatal(err)
			}
			return newEnv(t, typo3.DialectSQLite, in.DSN, tc, []string{"admin", "editor"}), tc
		}},
	}
	for _, s := range sites {
		for _, k := range indexStores {
			t.Run(s.name+"/"+k.name, func(t *testing.T) {
				t.Parallel()
				e, tc := s.open(t)
				x := newIndexed(t, e, tc, k.newDSN(t))
				hits := 0
				for _, q := range differentialQueries {
					for _, u := range s.users {
						out := x.both(t, u, map[string]any{"query": q})
						if !strings.HasPrefix(out, "No readable") {
							hits++
						}
					}
				}
				for _, q := range []string{"pump", "TYPO3", "e", "Pumpe", "zyxwvq"} {
					for _, table := range []string{"tt_content", "pages"} {
						x.both(t, "admin", map[string]any{"query": q, "table": table, "limit": 50})
						x.both(t, s.users[1], map[string]any{"query": q, "table": table, "limit": 50})
					}
				}
				if hits < 20 {
					t.Errorf("only %d of the differential calls found anything; the set does not exercise the index", hits)
				}
			})
		}
	}
}

// TestIndexedSearchFreshness: after the last sync, a row edited to hold
// the query, hidden, deleted or moved to a page the editor may not see is
// answered correctly by the next call, without a sync in between.
func TestIndexedSearchFreshness(t *testing.T) {
	t.Parallel()
	for _, k := range indexStores {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, typo3.DialectSQLite, demotest.New(t, typo3.DialectSQLite).DSN, tca.Bundled(), []string{"admin", "editor"})
			x := newIndexed(t, e, tca.Bundled(), k.newDSN(t))
			// Edits stamp a later time each, as TYPO3's DataHandler does.
			stamp := int64(1900000000)
			next := func() string { stamp += 10; return strconv.FormatInt(stamp, 10) }
			// A row of the editor's mount (page 6) gets a new word.
			e.exec(t, "UPDATE tt_content SET bodytext = 'Quokkaventil im Einsatz', tstamp = "+next()+" WHERE uid = 1")
			for _, u := range []string{"admin", "editor"} {
				out := x.both(t, u, map[string]any{"query": "quokkaventil"})
				if !strings.Contains(out, "tt_content:1 ") {
					t.Errorf("an edit after the sync is missed for %s: %s", u, out)
				}
			}
			// Each of these makes a found row disappear.
			for _, c := range []struct{ what, stmt string }{
				{"hidden", "UPDATE tt_content SET hidden = 1, tstamp = " + next() + " WHERE uid = 1"},
				{"deleted", "UPDATE tt_content SET deleted = 1, tstamp = " + next() + " WHERE uid = 1"},
				{"removed", "DELETE FROM tt_content WHERE uid = 1"},
			} {
				e.exec(t, "UPDATE tt_content SET bodytext = 'Quokkaventil', hidden = 0, deleted = 0 WHERE uid = 1")
				if _, err := x.ix.Sync(t.Context()); err != nil {
					t.Fatal(err)
				}
				e.exec(t, c.stmt)
				for _, u := range []string{"admin", "editor"} {
					out := x.both(t, u, map[string]any{"query": "quokkaventil"})
					if strings.Contains(out, "tt_content:1 ") {
						t.Errorf("a row %s after the sync is still found for %s: %s", c.what, u, out)
					}
				}
			}
			// Moved, without any tstamp change, to a page outside the
			// editor's mounts: found for the admin, not for the editor.
			e.exec(t, "UPDATE tt_content SET bodytext = 'Wombatschieber', hidden = 0, deleted = 0, tstamp = "+next()+" WHERE uid = 2")
			if _, err := x.ix.Sync(t.Context()); err != nil {
				t.Fatal(err)
			}
			before := x.both(t, "editor", map[string]any{"query": "wombatschieber"})
			e.exec(t, "UPDATE tt_content SET pid = 16 WHERE uid = 2")
			admin := x.both(t, "admin", map[string]any{"query": "wombatschieber"})
			editor := x.both(t, "editor", map[string]any{"query": "wombatschieber"})
			if !strings.Contains(admin, "tt_content:2 ") || strings.Contains(editor, "tt_content:2 ") {
				t.Errorf("moved row: editor before %q, admin %q, editor %q", before, admin, editor)
			}
		})
	}
}

// TestSearchStatementsBounded: an editor's search loads the pages of each
// batch of rows in one statement instead of one per page (and rootline
// step), so a call costs a few statements whatever the hits' pages.
func TestSearchStatementsBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t, typo3.DialectSQLite, demotest.New(t, typo3.DialectSQLite).DSN, tca.Bundled(), []string{"admin", "editor"})
	x := newIndexed(t, e, tca.Bundled(), indexStores[0].newDSN(t))
	for _, c := range []struct {
		user, gate string
		args       map[string]any
		most       int
	}{
		{"editor", "scan", map[string]any{"query": "pump", "table": "tt_content", "limit": 50}, 6},
		{"editor", "index", map[string]any{"query": "pump", "table": "tt_content", "limit": 50}, 6},
		{"editor", "index", map[string]any{"query": "pump"}, 12},
		{"admin", "index", map[string]any{"query": "zyxwvq"}, 12},
	} {
		g, logs := x.scan, x.env.logs
		if c.gate == "index" {
			g, logs = x.gate, x.logs
		}
		invoke(t, g, logs, tool.ZoneExternalGlobal, e.users[c.user], "search_records", c.args) // warm the schema cache
		m := e.log.mark()
		res := invoke(t, g, logs, tool.ZoneExternalGlobal, e.users[c.user], "search_records", c.args)
		stmts := e.log.since(m)
		t.Logf("%s %s %v: %d statements, %d bytes of answer", c.gate, c.user, c.args, len(stmts), len(res.Content))
		if len(stmts) > c.most {
			var texts []string
			for _, s := range stmts {
				texts = append(texts, s.text)
			}
			t.Errorf("%s %s %v: %d statements, want at most %d:\n%s", c.gate, c.user, c.args, len(stmts), c.most, strings.Join(texts, "\n"))
		}
	}
}
