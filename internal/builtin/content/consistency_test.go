package content_test

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/t3agent/t3agent/internal/builtin/content"
	"github.com/t3agent/t3agent/internal/builtin/structure"
	"github.com/t3agent/t3agent/internal/demo/demotest"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/gate/gatetest"
	"github.com/t3agent/t3agent/internal/logtest"
	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

// consistency is the demo site behind one gate holding the content and
// the structure tools, for a provider trusted with everything.
type consistency struct {
	gate   *gate.Gate
	logs   *logtest.Buffer
	policy *readpolicy.Policy
	rw     *typo3.DB
	users  map[string]*typo3.BackendUser
	names  []string
}

func newConsistency(t *testing.T, d typo3.Dialect) *consistency {
	t.Helper()
	s := demotest.New(t, d)
	tc := tca.Bundled()
	site := siteOn(t, s.Open(t), tc, s.Root)
	policy := readpolicy.New(tc)
	tools := append(content.Tools(site, policy), structure.Tools(site, policy)...)
	g, logs := newGate(t, tools)
	rw, err := typo3.Open(context.Background(), s.DSN, typo3.OpenParams{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rw.Close() })
	var names []string
	for _, u := range s.Result.Users {
		names = append(names, u.Username)
	}
	return &consistency{gate: g, logs: logs, policy: policy, rw: rw, users: gatetest.Actors(t, site, names...), names: names}
}

func (c *consistency) call(t *testing.T, user, name string, args map[string]any) tool.Result {
	t.Helper()
	return invoke(t, c.gate, c.logs, tool.ZoneLocal, c.users[user], name, args)
}

// record is one row a record tool returned.
type record struct {
	uid, pid, lang int64
	text           string // the label, for searching it again
}

var moreAt = regexp.MustCompile(`more may follow at offset (\d+)`)

// readAll pages through read_records of table as user; ok is false when
// the table is refused.
func (c *consistency) readAll(t *testing.T, user, table string) (rows []record, ok bool) {
	t.Helper()
	fields := []string{"pid"}
	lang := c.policy.LanguageField(table)
	if lang != "" {
		fields = append(fields, lang)
	}
	if l := c.policy.LabelColumns(table); len(l) > 0 && !slices.Contains(fields, l[0]) {
		fields = append(fields, l[0])
	}
	for off := 0; ; {
		res := c.call(t, user, "read_records", map[string]any{"table": table, "fields": fields, "limit": 50, "offset": off})
		if res.IsError {
			if off > 0 {
				t.Fatalf("read_records %s as %s at offset %d: %s", table, user, off, res.Content)
			}
			return nil, false
		}
		for _, a := range res.Artifacts {
			for _, r := range a.Rows {
				rec := record{uid: atoi64(r[0]), pid: atoi64(r[1])}
				i := 2
				if lang != "" {
					rec.lang, i = atoi64(r[2]), 3
				}
				if i < len(r) {
					rec.text = r[i]
				}
				rows = append(rows, rec)
			}
		}
		m := moreAt.FindStringSubmatch(res.Content)
		if m == nil {
			return rows, true
		}
		off = int(atoi64(m[1]))
	}
}

func atoi64(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }

// pageOf is the page a row is stored on, in the sense of the page
// decision: the row itself for pages.
func pageOf(table string, r record) int64 {
	if table == "pages" {
		return r.uid
	}
	return r.pid
}

var treeUID = regexp.MustCompile(`^ *\[(\d+)\] `)

// TestToolsAgreeOnPages is the consistency matrix of the page decision:
// for every demo user and every demo page, get_page_content shows the
// page exactly when the records stored on it (every readable table,
// tt_content included) show through read_records and search_records,
// get_record_history opens them, and get_page_tree lists the page (when
// its parent is listed). The rows a record's own restrictions keep (not
// hidden, timed out, deleted or a draft) are what the admin's
// read_records returns; the oracle of SPEC §4 checks the page decision
// itself.
func TestToolsAgreeOnPages(t *testing.T) {
	t.Parallel()
	for _, d := range allDialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			c := newConsistency(t, d)
			o := newOracle(t, c.rw)
			admin := c.users["admin"]
			if admin == nil || !admin.Admin {
				t.Fatal("the demo has no acting admin")
			}
			// Every row the record tools' own restrictions keep, per table,
			// as the admin reads them.
			all := map[string][]record{}
			for _, table := range c.policy.ReadableTables(admin) {
				got, ok := c.readAll(t, "admin", table)
				if !ok {
					t.Fatalf("admin may not read %s", table)
				}
				all[table] = got
			}
			pages := make([]int64, 0, len(o.pages)+1)
			for uid := range o.pages {
				pages = append(pages, uid)
			}
			slices.Sort(pages)
			pages = append(pages, pages[len(pages)-1]+1000) // a page that does not exist

			for _, name := range c.names {
				t.Run(name, func(t *testing.T) {
					u := c.users[name]
					visible := map[int64]bool{}
					for _, p := range pages {
						res := c.call(t, name, "get_page_content", map[string]any{"uid": p})
						visible[p] = !res.IsError && strings.HasPrefix(res.Content, fmt.Sprintf("Page [%d] ", p))
						if !visible[p] && res.Content != readpolicy.DeniedPage && res.Content != readpolicy.DeniedUser {
							t.Errorf("get_page_content %d: %q, want the page or the neutral denial", p, res.Content)
						}
						if want := o.showable(u, p) && u.CanSelectTable("tt_content"); visible[p] != want {
							t.Errorf("get_page_content shows page %d: %v; the page decision says %v", p, visible[p], want)
						}
					}
					if u == nil && slices.ContainsFunc(pages, func(p int64) bool { return visible[p] }) {
						t.Fatal("a user who cannot act saw a page")
					}
					shown, searchedFound, searchedHidden := 0, 0, 0
					for _, table := range slices.Sorted(maps.Keys(all)) {
						got, ok := c.readAll(t, name, table)
						if !ok {
							continue
						}
						var want []record
						for _, r := range all[table] {
							p := pageOf(table, r)
							langOK := c.policy.LanguageField(table) == "" || u.CanAccessLanguage(int(r.lang))
							if (p == 0 && table != "pages" && u.Admin) || (p > 0 && visible[p] && langOK) {
								want = append(want, r)
							}
						}
						if !slices.Equal(got, want) {
							t.Errorf("read_records %s: %d rows, want %d (the rows on the pages get_page_content shows)\n got %v\nwant %v",
								table, len(got), len(want), got, want)
						}
						shown += len(got)
						f, h := c.searchAgrees(t, name, table, all[table], got)
						searchedFound, searchedHidden = searchedFound+f, searchedHidden+h
					}
					if u != nil && (shown == 0 || searchedFound < 10 || (!u.Admin && searchedHidden < 10)) {
						t.Errorf("%s saw %d records; search checked %d found and %d hidden: too few to prove anything",
							name, shown, searchedFound, searchedHidden)
					}
					c.historyAgrees(t, name, all["tt_content"], visible)
					c.treeAgrees(t, name, o, visible)
				})
			}
		})
	}
}

// searchAgrees searches table for the label of one row per page and
// checks that the row is found exactly when read_records showed it, and
// that every hit is a row read_records showed. A label matching 50 rows
// or more cannot prove absence and is skipped. It returns how many rows
// it checked, found and not found.
func (c *consistency) searchAgrees(t *testing.T, user, table string, all, readable []record) (found, hidden int) {
	t.Helper()
	labels := c.policy.LabelColumns(table)
	if len(labels) == 0 || !slices.Contains(c.policy.SearchColumns(table), labels[0]) {
		return 0, 0
	}
	shown := map[int64]bool{}
	for _, r := range readable {
		shown[r.uid] = true
	}
	donePage := map[int64]bool{}
	for _, r := range all {
		p := pageOf(table, r)
		q := strings.TrimSpace(r.text)
		if donePage[p] || utf8.RuneCountInString(q) < 2 || utf8.RuneCountInString(q) > 100 || strings.Contains(q, "…") {
			continue
		}
		res := c.call(t, user, "search_records", map[string]any{"query": q, "table": table, "limit": 50})
		if res.IsError {
			if len(readable) > 0 {
				t.Errorf("search_records %s as %s refused: %q", table, user, res.Content)
			}
			return found, hidden
		}
		hits := hitUIDs(res, table)
		for _, h := range hits {
			if !shown[h] {
				t.Errorf("search_records %q finds %s:%d, which read_records does not show", q, table, h)
			}
		}
		if len(hits) >= 50 {
			continue
		}
		donePage[p] = true
		hit := slices.Contains(hits, r.uid)
		if hit != shown[r.uid] {
			t.Errorf("search_records %q finds %s:%d on page %d: %v; read_records shows it: %v", q, table, r.uid, p, hit, shown[r.uid])
		}
		if shown[r.uid] {
			found++
		} else {
			hidden++
		}
	}
	return found, hidden
}

// historyAgrees opens the history of the first live content element of
// every page: allowed exactly when the page shows and the language is the
// user's.
func (c *consistency) historyAgrees(t *testing.T, user string, rows []record, visible map[int64]bool) {
	t.Helper()
	u := c.users[user]
	done := map[int64]bool{}
	for _, r := range rows {
		if done[r.pid] {
			continue
		}
		done[r.pid] = true
		res := c.call(t, user, "get_record_history", map[string]any{"table": "tt_content", "uid": r.uid})
		opened := !res.IsError
		want := r.pid > 0 && visible[r.pid] && u.CanAccessLanguage(int(r.lang))
		if opened != want {
			t.Errorf("get_record_history tt_content:%d on page %d opens: %v (%q), want %v", r.uid, r.pid, opened, res.Content, want)
		}
	}
}

// treeAgrees: get_page_tree lists exactly the default-language pages
// get_page_content shows whose parent it lists, starting at the tree root
// for admins and at the web mounts for everyone else.
func (c *consistency) treeAgrees(t *testing.T, user string, o *oracle, visible map[int64]bool) {
	t.Helper()
	u := c.users[user]
	res := c.call(t, user, "get_page_tree", map[string]any{"depth": 5})
	if u == nil {
		if res.Content != readpolicy.DeniedUser {
			t.Errorf("get_page_tree without an actor: %q", res.Content)
		}
		return
	}
	var listed []int64
	for _, l := range strings.Split(res.Content, "\n")[1:] {
		if m := treeUID.FindStringSubmatch(l); m != nil {
			listed = append(listed, atoi64(m[1]))
		}
	}
	var tops []int64
	for uid, p := range o.pages {
		if (u.Admin && p.pid == 0) || (!u.Admin && slices.Contains(u.DBMounts, uid)) {
			tops = append(tops, uid)
		}
	}
	want := map[int64]bool{}
	var walk func(uid int64, level int)
	walk = func(uid int64, level int) {
		if level >= 5 || !visible[uid] || o.pages[uid].language != 0 {
			return
		}
		want[uid] = true
		for child, p := range o.pages {
			if p.pid == uid {
				walk(child, level+1)
			}
		}
	}
	for _, top := range tops {
		walk(top, 0)
	}
	got := map[int64]bool{}
	for _, uid := range listed {
		got[uid] = true
	}
	for uid := range o.pages {
		if got[uid] != want[uid] {
			t.Errorf("get_page_tree lists page %d: %v, want %v (get_page_content shows it: %v)", uid, got[uid], want[uid], visible[uid])
		}
	}
	if len(listed) == 0 {
		t.Errorf("get_page_tree as %s lists nothing:\n%s", user, res.Content)
	}
}
