package sitesearch_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/builtin/sitesearch"
	"github.com/t3agent/t3agent/internal/typo3"
)

// Instants around the demo clock (2026-06-01).
const (
	future  = 1893456000 // 2030-01-01
	expired = 1577836800 // 2020-01-01
)

// leakCase is a page (and the pages it needs) added to the demo site
// with a marker word of its own in its description; public says whether
// a visitor without login may read it in lang.
type leakCase struct {
	name   string
	marker string
	lang   int
	public bool
	pages  []map[string]any
	// staleText: the page is public and may be cited, but the marker is
	// the text of a hidden content element that the index still holds
	// (index appends it): the marker must never be shown.
	staleText bool
	// content are tt_content rows added with the pages.
	content []map[string]any
	// index overrides what the index row of the marker page records
	// (fe_group, starttime, endtime, gr_list), to check the index's own
	// filters.
	index func(*doc)
}

func page(uid, pid int64, marker string, extra map[string]any) map[string]any {
	row := map[string]any{"uid": uid, "pid": pid, "doktype": 1, "title": fmt.Sprintf("Case %d", uid),
		"slug": fmt.Sprintf("/case-%d", uid), "description": marker, "perms_everybody": 1}
	for k, v := range extra {
		row[k] = v
	}
	return row
}

func leakCases() []leakCase {
	return []leakCase{
		{name: "public page", marker: "quokkapublic", public: true, pages: []map[string]any{page(9001, 1, "quokkapublic", nil)}},
		{name: "hidden", marker: "quokkahidden", pages: []map[string]any{page(9002, 1, "quokkahidden", map[string]any{"hidden": 1})}},
		{name: "fe_group 1", marker: "quokkafegroup", pages: []map[string]any{page(9003, 1, "quokkafegroup", map[string]any{"fe_group": "1"})}},
		{name: "fe_group any login", marker: "quokkaanylogin", pages: []map[string]any{page(9004, 1, "quokkaanylogin", map[string]any{"fe_group": "-2"})}},
		{name: "fe_group hide at login", marker: "quokkahideatlogin", public: true, pages: []map[string]any{page(9005, 1, "quokkahideatlogin", map[string]any{"fe_group": "-1"})}},
		{name: "future", marker: "quokkafuture", pages: []map[string]any{page(9006, 1, "quokkafuture", map[string]any{"starttime": future})}},
		{name: "expired", marker: "quokkaexpired", pages: []map[string]any{page(9007, 1, "quokkaexpired", map[string]any{"endtime": expired})}},
		{name: "deleted", marker: "quokkadeleted", pages: []map[string]any{page(9008, 1, "quokkadeleted", map[string]any{"deleted": 1})}},
		{name: "workspace new page", marker: "quokkaworkspace", pages: []map[string]any{page(9009, 1, "quokkaworkspace", map[string]any{"t3ver_wsid": 1, "t3ver_state": 1})}},
		{name: "workspace version of a live page", marker: "quokkaversion", pages: []map[string]any{page(9001+30, 1, "quokkaversion", map[string]any{"t3ver_wsid": 1, "t3ver_oid": 9001})}},
		{name: "below a hidden page extending to subpages", marker: "quokkaextendhidden", pages: []map[string]any{
			page(9010, 1, "", map[string]any{"hidden": 1, "extendToSubpages": 1}), page(9011, 9010, "quokkaextendhidden", nil)}},
		{name: "below a hidden page not extending", marker: "quokkaplainhidden", public: true, pages: []map[string]any{
			page(9012, 1, "", map[string]any{"hidden": 1}), page(9013, 9012, "quokkaplainhidden", nil)}},
		{name: "below a restricted page extending to subpages", marker: "quokkaextendgroup", pages: []map[string]any{
			page(9014, 1, "", map[string]any{"fe_group": "2", "extendToSubpages": 1}), page(9015, 9014, "quokkaextendgroup", nil)}},
		{name: "below a future page extending to subpages", marker: "quokkaextendfuture", pages: []map[string]any{
			page(9016, 1, "", map[string]any{"starttime": future, "extendToSubpages": 1}), page(9017, 9016, "quokkaextendfuture", nil)}},
		{name: "below a deleted page", marker: "quokkaorphan", pages: []map[string]any{
			page(9018, 1, "", map[string]any{"deleted": 1}), page(9019, 9018, "quokkaorphan", nil)}},
		{name: "below a recycler", marker: "quokkarecycler", pages: []map[string]any{
			page(9020, 1, "", map[string]any{"doktype": 255}), page(9021, 9020, "quokkarecycler", nil)}},
		{name: "excluded from search", marker: "quokkanosearch", pages: []map[string]any{page(9022, 1, "quokkanosearch", map[string]any{"no_search": 1})}},
		{name: "sysfolder", marker: "quokkafolder", pages: []map[string]any{page(9023, 1, "quokkafolder", map[string]any{"doktype": 254})}},
		{name: "backend user section", marker: "quokkabesection", pages: []map[string]any{page(9024, 1, "quokkabesection", map[string]any{"doktype": 6})}},
		{name: "outside every site", marker: "quokkanosite", pages: []map[string]any{page(9025, 0, "quokkanosite", nil)}},
		{name: "public translation", marker: "quokkaübersetzt", lang: 1, public: true, pages: []map[string]any{
			page(9026, 1, "", nil), page(9027, 1, "quokkaübersetzt", map[string]any{"sys_language_uid": 1, "l10n_parent": 9026})}},
		{name: "hidden translation", marker: "quokkaversteckt", lang: 1, pages: []map[string]any{
			page(9028, 1, "", nil), page(9029, 1, "quokkaversteckt", map[string]any{"sys_language_uid": 1, "l10n_parent": 9028, "hidden": 1})}},
		{name: "translation of a hidden page", marker: "quokkaverwaist", lang: 1, pages: []map[string]any{
			page(9032, 1, "", map[string]any{"hidden": 1}), page(9033, 1, "quokkaverwaist", map[string]any{"sys_language_uid": 1, "l10n_parent": 9032})}},
		{name: "restricted translation", marker: "quokkagesperrt", lang: 1, pages: []map[string]any{
			page(9034, 1, "", nil), page(9035, 1, "quokkagesperrt", map[string]any{"sys_language_uid": 1, "l10n_parent": 9034, "fe_group": "1"})}},
		{name: "translation in a workspace", marker: "quokkaentwurf", lang: 1, pages: []map[string]any{
			page(9036, 1, "", nil), page(9037, 1, "quokkaentwurf", map[string]any{"sys_language_uid": 1, "l10n_parent": 9036, "t3ver_wsid": 1, "t3ver_state": 1})}},
		{name: "translation into a language the site lacks", marker: "quokkafremd", lang: 7, pages: []map[string]any{
			page(9038, 1, "", nil), page(9039, 1, "quokkafremd", map[string]any{"sys_language_uid": 7, "l10n_parent": 9038})}},
		{name: "stale index text of a hidden element", marker: "quokkastaletext", staleText: true,
			pages:   []map[string]any{page(9043, 1, "quokkastaletext-page", nil)},
			content: []map[string]any{{"uid": 9043, "pid": 9043, "CType": "text", "header": "Hidden", "bodytext": "quokkastaletext", "hidden": 1}},
			index:   func(d *doc) { d.text += " quokkastaletext" }},
		{name: "index row restricted to a group", marker: "quokkaindexgroup", pages: []map[string]any{page(9040, 1, "quokkaindexgroup", nil)},
			index: func(d *doc) { d.feGroup, d.grList = "1", "0,-2,1" }},
		{name: "index row not yet started", marker: "quokkaindexstart", pages: []map[string]any{page(9041, 1, "quokkaindexstart", nil)},
			index: func(d *doc) { d.start, d.grList = future, "0,-2,1" }},
		{name: "index row ended", marker: "quokkaindexend", pages: []map[string]any{page(9042, 1, "quokkaindexend", nil)},
			index: func(d *doc) { d.end, d.grList = expired, "0,-2,1" }},
	}
}

// addLeakCases writes the cases' pages and returns the index docs of the
// whole site, with each case's index overrides applied.
func addLeakCases(f *fixture, cases []leakCase) []doc {
	f.t.Helper()
	markerOf := map[string]*leakCase{}
	for i := range cases {
		c := &cases[i]
		for _, p := range c.pages {
			f.insert("pages", p)
		}
		for _, r := range c.content {
			f.insert("tt_content", r)
		}
		if c.marker != "" {
			markerOf[c.marker] = c
		}
	}
	docs := f.siteDocs()
	for i := range docs {
		for m, c := range markerOf {
			if c.index != nil && strings.Contains(docs[i].text, m) {
				c.index(&docs[i])
			}
		}
	}
	return docs
}

// TestPublicMatrix adds pages in every state a page can be in to the demo
// site, indexes all of them as a stale index would (claiming each is
// public, unless the case says what the index row records), and asks
// each backend for each case's marker word: only the public cases are
// answered, and site_fetch_source refuses every source of a case that is
// not public, on SQLite and MariaDB.
func TestPublicMatrix(t *testing.T) {
	t.Parallel()
	for _, d := range []typo3.Dialect{typo3.DialectSQLite, typo3.DialectMySQL} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			f := demoFixture(t, d, sitesearch.Params{})
			cases := leakCases()
			docs := addLeakCases(f, cases)
			for _, backend := range []string{"ke_search", "indexed_search"} {
				f.fill(backend, docs)
				checkMatrix(t, f, backend, cases)
			}
		})
	}
}

// checkMatrix asks for every case's marker and fetches every source the
// backend holds for the marker pages.
func checkMatrix(t *testing.T, f *fixture, backend string, cases []leakCase) {
	t.Helper()
	for _, c := range cases {
		if len(c.pages) == 0 {
			continue
		}
		res := f.call("site_rag_query", map[string]any{"question": "Where is " + c.marker + "?", "max_sources": 20})
		if !strings.Contains(res.Content, "Search backend: "+backend+".") {
			t.Fatalf("%s: %s answered, not %s: %s", c.name, firstLine(res.Content), backend, res.Content)
		}
		got := hits(t, res)
		if c.staleText {
			if _, after, _ := strings.Cut(res.Content, "\n"); strings.Contains(after, c.marker+" ") || strings.HasSuffix(after, c.marker) ||
				strings.Contains(after, c.marker+".") || len(got) != 1 {
				t.Errorf("%s / %s: %s", backend, c.name, res.Content)
			}
			for _, h := range got {
				if fetched := f.call("site_fetch_source", map[string]any{"source_id": h.source}); strings.Contains(fetched.Content, c.marker+" ") ||
					strings.HasSuffix(fetched.Content, c.marker) {
					t.Errorf("%s / %s: fetch shows the hidden text: %s", backend, c.name, fetched.Content)
				}
			}
			continue
		}
		marker := c.pages[len(c.pages)-1]
		want := asInt64(marker["uid"])
		if l, _ := marker["sys_language_uid"].(int); l > 0 {
			want = asInt64(marker["l10n_parent"])
		}
		if c.public {
			if len(got) != 1 || got[0].page != want || got[0].lang != c.lang {
				t.Errorf("%s / %s: want page %d in language %d, got %+v\n%s", backend, c.name, want, c.lang, got, res.Content)
			}
			if len(got) == 1 {
				fetched := f.call("site_fetch_source", map[string]any{"source_id": got[0].source})
				if fetched.IsError || !strings.Contains(fetched.Content, c.marker) {
					t.Errorf("%s / %s: fetch of %s: %s", backend, c.name, got[0].source, fetched.Content)
				}
			}
			continue
		}
		if len(got) != 0 || strings.Contains(res.Content, c.marker+" ") {
			t.Errorf("%s / %s is not public but was returned: %s", backend, c.name, res.Content)
		}
	}
	// Every source of the index, fetched directly: what is not public is
	// refused whatever the id.
	for _, id := range f.sourceIDs(backend) {
		res := f.call("site_fetch_source", map[string]any{"source_id": id})
		for _, c := range cases {
			// (A stale-text case's page is public; its description holds
			// the marker as part of a longer word and is shown.)
			if !c.public && !c.staleText && len(c.pages) > 0 && strings.Contains(res.Content, c.marker) {
				t.Errorf("%s: fetch %s returned the non-public %s: %s", backend, id, c.name, res.Content)
			}
		}
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// sourceIDs lists the source ids the backend's tables hold for the
// cases' pages (uids from 9000).
func (f *fixture) sourceIDs(backend string) []string {
	f.t.Helper()
	q := map[string]string{
		"ke_search":      `SELECT uid, targetpid FROM tx_kesearch_index`,
		"indexed_search": `SELECT phash, data_page_id FROM index_phash`,
	}[backend]
	if q == "" {
		return nil // t3agent's own index lives in the store
	}
	rows, err := f.rw.SQL.Query(q)
	if err != nil {
		f.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var key, page string
		if err := rows.Scan(&key, &page); err != nil {
			f.t.Fatal(err)
		}
		if asInt64(page) >= 9000 {
			out = append(out, backend+":"+key)
		}
	}
	return out
}

func asInt64(v any) int64 {
	var n int64
	fmt.Sscan(fmt.Sprint(v), &n)
	return n
}
