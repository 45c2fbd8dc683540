package sitesearch_test

import (
	"context"
	"crypto/md5"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"go.uber.org/goleak"

	"github.com/t3agent/t3agent/internal/builtin/sitesearch"
	"github.com/t3agent/t3agent/internal/dbtest"
	"github.com/t3agent/t3agent/internal/demo"
	"github.com/t3agent/t3agent/internal/demo/demotest"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/gate/gatetest"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixture is a demo or introduction site with the site search tools behind
// a real gate, and a writable connection to the site database that the
// tests use to add pages and to fill the search extensions' tables, the
// way those extensions' indexers would.
type fixture struct {
	t       testing.TB
	dialect typo3.Dialect
	rw      *typo3.DB
	site    *typo3.Site
	gate    *gate.Gate
	actor   *typo3.BackendUser
	root    string
}

func newFixture(t testing.TB, dialect typo3.Dialect, dsn, root string, p sitesearch.Params, tc *tca.TCA) *fixture {
	t.Helper()
	ctx := context.Background()
	rw, err := typo3.Open(ctx, dsn, typo3.OpenParams{Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rw.Close() })
	ro, err := typo3.Open(ctx, dsn, typo3.OpenParams{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ro.Close() })
	site, err := typo3.NewSite(typo3.SiteParams{DB: ro, TCA: tc, Root: root, Now: demo.DefaultNow})
	if err != nil {
		t.Fatal(err)
	}
	g := gatetest.New(t, slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelError})), sitesearch.ToolsWith(site, p)...)
	users := gatetest.Actors(t, site, "editor")
	return &fixture{t: t, dialect: dialect, rw: rw, site: site, gate: g, actor: users["editor"], root: root}
}

// demoFixture is the generated demo site of docs/demo-site.md.
func demoFixture(t testing.TB, d typo3.Dialect, p sitesearch.Params) *fixture {
	t.Helper()
	s := demotest.New(t, d)
	return newFixture(t, d, s.DSN, s.Root, p, tca.Bundled())
}

// introFixture is the introduction package, with its site configuration
// (languages en, de /de/, da /da/) in a project root of its own.
func introFixture(t testing.TB, d typo3.Dialect) *fixture {
	t.Helper()
	in := demotest.Introduction(t, d)
	root := t.TempDir()
	cfg, err := os.ReadFile(filepath.Join(in.Material, "introduction", "Initialisation", "Site", "introduction", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "config", "sites", "introduction")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	tf, err := os.Open(filepath.Join(in.Material, "tca-introduction.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer tf.Close()
	tc, err := tca.LoadJSON(tf)
	if err != nil {
		t.Fatal(err)
	}
	return newFixture(t, d, in.DSN, root, sitesearch.Params{}, tc)
}

// call runs a tool through the gate as the demo editor.
func (f *fixture) call(name string, args map[string]any) tool.Result {
	f.t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		f.t.Fatal(err)
	}
	return f.gate.Invoke(context.Background(), gate.InvokeParams{
		Name: name, Args: raw, Call: tool.Call{Actor: f.actor, RunID: "test"},
		Config: gate.Config{Name: "test", TrustZone: tool.ZoneExternalGlobal},
	})
}

func (f *fixture) exec(q string, args ...any) {
	f.t.Helper()
	if _, err := f.rw.SQL.Exec(q, args...); err != nil {
		f.t.Fatalf("%s: %v", q, err)
	}
}

// insert adds one row; cols and vals pair up.
func (f *fixture) insert(table string, row map[string]any) {
	f.t.Helper()
	var cols, marks []string
	var vals []any
	for c, v := range row {
		cols = append(cols, f.rw.MustQuote(c))
		marks = append(marks, "?")
		vals = append(vals, v)
	}
	f.exec(`INSERT INTO `+f.rw.MustQuote(table)+` (`+strings.Join(cols, ", ")+`) VALUES (`+strings.Join(marks, ", ")+`)`, vals...)
}

// createExtTables creates the named tables from an extension's
// ext_tables.sql (MySQL syntax, as TYPO3 extensions write it) unless they
// exist: as written on MariaDB, and on SQLite without what SQLite lacks
// (KEY and FULLTEXT lines, unsigned, auto_increment).
func (f *fixture) createExtTables(file string, tables ...string) {
	f.t.Helper()
	raw, err := os.ReadFile(filepath.Join(dbtest.TYPO3Material(f.t), file))
	if err != nil {
		f.t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			lines = append(lines, l)
		}
	}
	want := map[string]bool{}
	for _, t := range tables {
		want[t] = true
	}
	made := 0
	for _, stmt := range demo.SplitSQL(strings.Join(lines, "\n")) {
		m := regexp.MustCompile(`(?is)^\s*CREATE TABLE\s+(\w+)\s*\(`).FindStringSubmatch(stmt)
		if m == nil || !want[m[1]] {
			continue
		}
		made++
		if f.dialect == typo3.DialectSQLite {
			var keep []string
			for _, l := range strings.Split(stmt, "\n") {
				tl := strings.ToUpper(strings.TrimSpace(l))
				if strings.HasPrefix(tl, "KEY ") || strings.HasPrefix(tl, "FULLTEXT ") || strings.HasPrefix(tl, "UNIQUE KEY ") || strings.HasPrefix(tl, "INDEX ") {
					continue
				}
				keep = append(keep, l)
			}
			stmt = strings.Join(keep, "\n")
			stmt = regexp.MustCompile(`(?i)\s+(unsigned|auto_increment)\b`).ReplaceAllString(stmt, "")
			stmt = regexp.MustCompile(`,\s*\)\s*$`).ReplaceAllString(strings.TrimSpace(stmt), "\n)")
		}
		stmt = regexp.MustCompile(`(?i)^\s*CREATE TABLE\s+`).ReplaceAllString(stmt, "CREATE TABLE IF NOT EXISTS ")
		f.exec(stmt)
	}
	if made != len(tables) {
		f.t.Fatalf("%s holds %d of the tables %v", file, made, tables)
	}
}

// doc is what a search extension's indexer stores for one page row: the
// page (default-language uid), language, title and text made of the
// page's fields and its visible content elements. Every page row gets a
// doc, whatever its state, as a stale index would hold it.
type doc struct {
	page    int64
	lang    int
	title   string
	text    string
	feGroup string // as the index records it
	start   int64
	end     int64
	grList  string
}

// siteDocs reads every page row and the visible content of each.
func (f *fixture) siteDocs() []doc {
	f.t.Helper()
	now := demo.DefaultNow().Unix()
	q := f.rw.MustQuote
	content := map[[2]int64][]string{}
	rows, err := f.rw.SQL.Query(`SELECT `+q("pid")+`, `+q("sys_language_uid")+`, `+q("header")+`, `+q("bodytext")+` FROM `+q("tt_content")+
		` WHERE `+q("deleted")+` = 0 AND `+q("hidden")+` = 0 AND `+q("starttime")+` <= ? AND (`+q("endtime")+` = 0 OR `+q("endtime")+` > ?)`+
		` AND `+q("t3ver_wsid")+` = 0 AND (`+q("fe_group")+` = '' OR `+q("fe_group")+` = '0' OR `+q("fe_group")+` IS NULL) ORDER BY `+q("sorting"), now, now)
	if err != nil {
		f.t.Fatal(err)
	}
	for rows.Next() {
		var pid, lang int64
		var header, body sql.NullString
		if err := rows.Scan(&pid, &lang, &header, &body); err != nil {
			f.t.Fatal(err)
		}
		content[[2]int64{pid, lang}] = append(content[[2]int64{pid, lang}], header.String, body.String)
	}
	_ = rows.Close()
	rows, err = f.rw.SQL.Query(`SELECT ` + q("uid") + `, ` + q("sys_language_uid") + `, ` + q("l10n_parent") + `, ` + q("title") + `, ` +
		q("subtitle") + `, ` + q("description") + `, ` + q("abstract") + `, ` + q("keywords") + ` FROM ` + q("pages"))
	if err != nil {
		f.t.Fatal(err)
	}
	defer rows.Close()
	var out []doc
	for rows.Next() {
		var uid, lang, parent int64
		var title, sub, desc, abstract, keywords sql.NullString
		if err := rows.Scan(&uid, &lang, &parent, &title, &sub, &desc, &abstract, &keywords); err != nil {
			f.t.Fatal(err)
		}
		page := uid
		if lang > 0 {
			page = parent
		}
		parts := append([]string{title.String, sub.String, desc.String, abstract.String, keywords.String}, content[[2]int64{page, lang}]...)
		out = append(out, doc{page: page, lang: int(lang), title: title.String, text: strings.Join(parts, " "), grList: "0,-1"})
	}
	return out
}

// fillKeSearch writes docs into tx_kesearch_index as ke_search's page
// indexer does (type page, targetpid = the page).
func (f *fixture) fillKeSearch(docs []doc) {
	f.t.Helper()
	f.createExtTables("ke_search/ext_tables.sql", "tx_kesearch_index")
	f.exec(`DELETE FROM tx_kesearch_index`)
	tx, err := f.rw.SQL.Begin()
	if err != nil {
		f.t.Fatal(err)
	}
	for i, d := range docs {
		if _, err := tx.Exec(`INSERT INTO tx_kesearch_index (uid, pid, tstamp, crdate, starttime, endtime, fe_group, targetpid, content, params,
			type, tags, abstract, sortdate, orig_uid, orig_pid, title, language, directory, hash) VALUES (?, 0, 0, 0, ?, ?, ?, ?, ?, '', 'page', '', '', 0, ?, 0, ?, ?, '', ?)`,
			i+1, d.start, d.end, d.feGroup, fmt.Sprint(d.page), d.text, fmt.Sprint(d.page), d.title, d.lang, fmt.Sprintf("%x", md5.Sum([]byte(d.text)))); err != nil {
			_ = tx.Rollback()
			f.t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		f.t.Fatal(err)
	}
}

func md5hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// fillIndexedSearch writes docs into the indexed_search tables as its
// indexer does: a phash per page and language, the words with their
// md5 word ids and frequencies, the full text.
func (f *fixture) fillIndexedSearch(docs []doc) {
	f.t.Helper()
	f.createExtTables("core-extensions/indexed_search/ext_tables.sql", "index_phash", "index_fulltext", "index_rel", "index_words")
	for _, t := range []string{"index_phash", "index_fulltext", "index_rel", "index_words"} {
		f.exec(`DELETE FROM ` + t)
	}
	tx, err := f.rw.SQL.Begin()
	if err != nil {
		f.t.Fatal(err)
	}
	fail := func(err error) {
		_ = tx.Rollback()
		f.t.Fatal(err)
	}
	words := map[string]bool{}
	for i, d := range docs {
		phash := md5hex(fmt.Sprintf("%d:%d:%d", d.page, d.lang, i))
		if _, err := tx.Exec(`INSERT INTO index_phash (phash, phash_grouping, static_page_arguments, data_filename, data_page_id, data_page_type,
			data_page_mp, gr_list, item_type, item_title, item_description, item_mtime, tstamp, item_size, contentHash, crdate, parsetime,
			sys_language_uid, item_crdate, externalUrl, recordUid, freeIndexUid, freeIndexSetId)
			VALUES (?, ?, NULL, '', ?, 0, '', ?, '0', ?, '', 0, 0, ?, ?, 0, 0, ?, 0, 0, 0, 0, 0)`,
			phash, phash, d.page, d.grList, d.title, len(d.text), md5hex(d.text), d.lang); err != nil {
			fail(err)
		}
		if _, err := tx.Exec(`INSERT INTO index_fulltext (phash, fulltextdata) VALUES (?, ?)`, phash, d.text); err != nil {
			fail(err)
		}
		freq := map[string]int{}
		first := map[string]int{}
		for n, w := range strings.FieldsFunc(strings.ToLower(d.text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if len([]rune(w)) > 60 {
				continue
			}
			if _, ok := first[w]; !ok {
				first[w] = n
			}
			freq[w]++
		}
		for w, n := range freq {
			if !words[w] {
				words[w] = true
				if _, err := tx.Exec(`INSERT INTO index_words (wid, baseword, is_stopword) VALUES (?, ?, 0)`, md5hex(w), w); err != nil {
					fail(err)
				}
			}
			if _, err := tx.Exec(`INSERT INTO index_rel (phash, wid, count, first, freq, flags) VALUES (?, ?, ?, ?, ?, 0)`,
				phash, md5hex(w), min(n, 255), first[w], min(n*100, 65535)); err != nil {
				fail(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		f.t.Fatal(err)
	}
}

// passages lists the source ids and URLs of an answer, in order.
var passageLine = regexp.MustCompile(`(?m)^\[(\d+)\] (.*) — (\S*)\nsource: (\S+) · page (\d+) · language (\d+)$`)

type hit struct {
	title, url, source string
	page               int64
	lang               int
}

func hits(t testing.TB, res tool.Result) []hit {
	t.Helper()
	if res.IsError {
		t.Fatalf("error result: %s", res.Content)
	}
	var out []hit
	for _, m := range passageLine.FindAllStringSubmatch(res.Content, -1) {
		var page int64
		var lang int
		fmt.Sscan(m[5], &page)
		fmt.Sscan(m[6], &lang)
		out = append(out, hit{title: m[2], url: m[3], source: m[4], page: page, lang: lang})
	}
	return out
}

// testLog sends the gate's error log (a tool's Go error) to the test log.
type testLog struct{ t testing.TB }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// testSite is a demo site not yet opened.
type testSite struct {
	dsn, root string
	tca       *tca.TCA
}

func demoTestSite(t testing.TB, d typo3.Dialect) testSite {
	t.Helper()
	s := demotest.New(t, d)
	return testSite{dsn: s.DSN, root: s.Root, tca: tca.Bundled()}
}

// fill makes backend the one that answers: ke_search's table filled with
// docs, or (ke_search's rows removed, as it comes first while it has
// rows) indexed_search's tables.
func (f *fixture) fill(backend string, docs []doc) {
	f.t.Helper()
	if backend == "ke_search" {
		f.fillKeSearch(docs)
		return
	}
	f.exec(`DELETE FROM tx_kesearch_index`)
	f.fillIndexedSearch(docs)
}
