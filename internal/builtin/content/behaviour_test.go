package content_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/builtin/content"
	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

// hitUIDs lists the uids of table in a search_records answer, in order.
func hitUIDs(res tool.Result, table string) []int64 {
	var out []int64
	for _, l := range strings.Split(res.Content, "\n") {
		if m := searchLine.FindStringSubmatch(l); m != nil && m[1] == table {
			n, _ := strconv.ParseInt(m[2], 10, 64)
			out = append(out, n)
		}
	}
	return out
}

func TestSpecs(t *testing.T) {
	t.Parallel()
	tc := tca.Bundled()
	tools := content.Tools(nil, readpolicy.New(tc))
	var names []string
	for _, tl := range tools {
		s := tl.Spec()
		names = append(names, s.Name)
		if err := s.Validate(); err != nil {
			t.Error(err)
		}
		if s.Group != tool.GroupContent || s.Effect != tool.ReadOnly || s.DataClass != tool.EditorContent ||
			s.AdminOnly || !s.EnabledByDefault || s.ApprovalBound() || len(s.Description) < 200 {
			t.Errorf("%s: %+v", s.Name, s)
		}
		if !strings.Contains(string(s.InputSchema), `"additionalProperties":false`) {
			t.Errorf("%s: the schema must refuse unknown arguments", s.Name)
		}
	}
	if !slices.Equal(names, []string{"search_records", "get_page_content", "read_records", "get_record_history"}) {
		t.Errorf("tools = %v", names)
	}
	// The gate compiles every schema at start.
	newGate(t, tools)
}

// TestSearchEscapesWildcards: % _ and the escape character are matched
// literally, case does not matter, on every database.
func TestSearchEscapesWildcards(t *testing.T) {
	t.Parallel()
	for _, d := range allDialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := plantedEnv(t, d)
			headers := map[int64]string{
				9001: "Rated 100% natural", 9002: "Rated 1000 natural",
				9003: "snake_case name", 9004: "snakeXcase name",
				9005: "bang!mark here", 9006: "bangXmark here",
				9007: `back\slash path`, 9008: "MiXeD CaSe Marker",
				9009: "quote ' and \" -- ; here",
			}
			for uid, h := range headers {
				e.insert(t, "tt_content", map[string]any{"uid": uid, "pid": 6, "header": h, "CType": "header", "sorting": uid})
			}
			for _, c := range []struct {
				query string
				want  []int64
			}{
				{"100%", []int64{9001}}, {"0% n", []int64{9001}}, {"snake_case", []int64{9003}},
				{"bang!mark", []int64{9005}}, {"!m", []int64{9005}}, {`back\slash`, []int64{9007}}, {`k\s`, []int64{9007}},
				{"mixed case marker", []int64{9008}}, {"%%", nil}, {"__", nil}, {"!!", nil},
				{"' and \" -- ;", []int64{9009}},
			} {
				res := e.call(t, "admin", "search_records", map[string]any{"query": c.query, "table": "tt_content", "limit": 50})
				if res.IsError {
					t.Fatalf("%q: %s", c.query, res.Content)
				}
				var got []int64
				for _, uid := range hitUIDs(res, "tt_content") {
					if uid > 9000 {
						got = append(got, uid)
					}
				}
				if !slices.Equal(got, c.want) {
					t.Errorf("search %q found %v, want %v:\n%s", c.query, got, c.want, res.Content)
				}
			}
		})
	}
}

// TestSearchBudget: tables are searched alphabetically, each in uid
// order, and share one limit.
func TestSearchBudget(t *testing.T) {
	t.Parallel()
	e := plantedEnv(t, typo3.DialectSQLite)
	all := e.call(t, "admin", "search_records", map[string]any{"query": "Product", "limit": 50})
	three := e.call(t, "admin", "search_records", map[string]any{"query": "Product", "limit": 3})
	var allRefs, threeRefs []string
	for _, l := range strings.Split(all.Content, "\n") {
		if m := searchLine.FindStringSubmatch(l); m != nil {
			allRefs = append(allRefs, m[1]+":"+m[2])
		}
	}
	for _, l := range strings.Split(three.Content, "\n") {
		if m := searchLine.FindStringSubmatch(l); m != nil {
			threeRefs = append(threeRefs, m[1]+":"+m[2])
		}
	}
	if len(allRefs) < 10 || !slices.Equal(threeRefs, allRefs[:3]) {
		t.Errorf("limit 3 gave %v, the first three of %v", threeRefs, allRefs)
	}
	if !strings.HasPrefix(three.Content, "The first 3 records matching") {
		t.Errorf("a full budget should say so: %q", three.Content)
	}
	// Sorted by table, then uid.
	sorted := slices.SortedFunc(slices.Values(allRefs), func(a, b string) int {
		ta, ua, _ := strings.Cut(a, ":")
		tb, ub, _ := strings.Cut(b, ":")
		if ta != tb {
			return strings.Compare(ta, tb)
		}
		na, _ := strconv.Atoi(ua)
		nb, _ := strconv.Atoi(ub)
		return na - nb
	})
	if !slices.Equal(sorted, allRefs) {
		t.Errorf("hits are not in table, uid order: %v", allRefs)
	}
}

// TestSearchFiltersAfterQuery: a non-admin gets the first matches they
// may see, in uid order, not fewer because matches they may not see come
// first, and never one more.
func TestSearchFiltersAfterQuery(t *testing.T) {
	t.Parallel()
	e := plantedEnv(t, typo3.DialectSQLite)
	o := newOracle(t, e.rw)
	for _, user := range []string{"editor", "intern"} {
		all := e.call(t, "admin", "search_records", map[string]any{"query": "the", "table": "tt_content", "limit": 50})
		var want []int64
		for _, uid := range hitUIDs(all, "tt_content") {
			key := fmt.Sprintf("tt_content:%d", uid)
			if o.visible(e.users[user], "tt_content", uid, o.pid[key]) && len(want) < 8 {
				want = append(want, uid)
			}
		}
		if len(want) < 8 {
			t.Fatalf("%s: only %d visible matches among the admin's 50", user, len(want))
		}
		got := hitUIDs(e.call(t, user, "search_records", map[string]any{"query": "the", "table": "tt_content", "limit": 8}), "tt_content")
		if !slices.Equal(got, want) {
			t.Errorf("%s got %v, want %v", user, got, want)
		}
	}
}

func TestPageContent(t *testing.T) {
	t.Parallel()
	e := plantedEnv(t, typo3.DialectSQLite)
	ctx := context.Background()

	admin := e.call(t, "admin", "get_page_content", map[string]any{"uid": 6})
	editor := e.call(t, "editor", "get_page_content", map[string]any{"uid": 6})
	for _, want := range []string{"[1] colPos=0 text · Product A at a glance\n", "[2] colPos=0 text · Launch offer [hidden]",
		"[5] colPos=0 textmedia · Coming soon: Product A2 [visible from 2030-01-01]"} {
		if !strings.Contains(admin.Content, want) {
			t.Errorf("admin page 6 lacks %q:\n%s", want, admin.Content)
		}
	}
	for _, never := range []string{"[3]", "[4]", "draft"} { // deleted, workspace version
		if strings.Contains(admin.Content, never) {
			t.Errorf("admin page 6 shows %q:\n%s", never, admin.Content)
		}
	}
	if !strings.Contains(editor.Content, "[1] colPos=0") || strings.Contains(editor.Content, "[2]") ||
		strings.Contains(editor.Content, "[5]") || strings.Contains(editor.Content, "[hidden]") {
		t.Errorf("editor page 6 must show only the visible element:\n%s", editor.Content)
	}
	hidden := e.call(t, "admin", "get_page_content", map[string]any{"uid": 7})
	if !strings.HasPrefix(hidden.Content, "Page [7] Product B (doktype 1, /products/product-b) [hidden]") {
		t.Errorf("hidden page for admin: %q", hidden.Content)
	}
	for _, c := range []struct {
		user string
		uid  int
		lang int
	}{
		{"editor", 7, 0}, {"editor", 9, 0}, {"editor", 11, 0}, {"editor", 13, 0}, {"editor", 6, 1},
		{"intern", 6, 0}, {"admin", 11, 0}, {"admin", 99999, 0},
	} {
		res := e.call(t, c.user, "get_page_content", map[string]any{"uid": c.uid, "language": c.lang})
		if !res.IsError || res.Content != readpolicy.DeniedPage {
			t.Errorf("%s page %d language %d: %q, want the neutral denial", c.user, c.uid, c.lang, res.Content)
		}
	}

	// Rule 6: a user who may read pages but not tt_content gets no page
	// content, though read_records still shows them the page.
	e.insert(t, "be_groups", map[string]any{"uid": 50, "pid": 0, "title": "Pages only", "tables_select": "pages",
		"db_mountpoints": "5", "subgroup": ""})
	e.insert(t, "be_users", map[string]any{"uid": 50, "pid": 0, "username": "pagesonly", "password": "", "usergroup": "50", "options": 3})
	e.exec(t, "UPDATE pages SET perms_everybody = 1 WHERE uid IN (5, 6)")
	u, err := e.site.BackendUserByName(ctx, "pagesonly")
	if err != nil {
		t.Fatal(err)
	}
	e.users["pagesonly"] = u
	if res := e.call(t, "pagesonly", "get_page_content", map[string]any{"uid": 6}); res.Content != readpolicy.DeniedPage {
		t.Errorf("pages without tt_content: %q", res.Content)
	}
	if res := e.call(t, "pagesonly", "read_records", map[string]any{"table": "pages", "uid": 6}); res.IsError ||
		!strings.Contains(res.Content, "- pages:6") {
		t.Errorf("pagesonly should read page 6: %q", res.Content)
	}

	// At most 100 elements, said so when there are more.
	for i := range int64(120) {
		e.insert(t, "tt_content", map[string]any{"uid": 8000 + i, "pid": 17, "header": "Bulk " + strconv.FormatInt(i, 10),
			"CType": "text", "colPos": i % 3, "sorting": 1000 - i})
	}
	many := e.call(t, "admin", "get_page_content", map[string]any{"uid": 17})
	rows := regexp.MustCompile(`(?m)^\[(\d+)\] colPos=(\d+)`).FindAllStringSubmatch(many.Content, -1)
	if len(rows) != 100 || !strings.Contains(many.Content, "The first 100 content elements") {
		t.Fatalf("page 17: %d elements:\n%s", len(rows), many.Content)
	}
	prevCol := -1
	for _, r := range rows {
		col, _ := strconv.Atoi(r[2])
		if col < prevCol {
			t.Fatalf("elements not ordered by colPos: %v", rows)
		}
		prevCol = col
	}
}

func TestReadRecords(t *testing.T) {
	t.Parallel()
	e := plantedEnv(t, typo3.DialectSQLite)

	// Offsets page through the table without gaps or repeats: each
	// window holds the live rows of that window of the table whose page
	// the admin may see.
	o := newOracle(t, e.rw)
	var seen, want []string
	for off := 0; off < 60; off += 20 {
		res := e.call(t, "admin", "read_records", map[string]any{"table": "tt_content", "limit": 20, "offset": off, "fields": []string{"pid"}})
		if len(res.Artifacts) != 1 {
			t.Fatalf("offset %d: %+v", off, res)
		}
		for _, row := range res.Artifacts[0].Rows {
			seen = append(seen, row[0])
		}
		for _, r := range liveWindow(t, e, "tt_content", 20, off) {
			if o.visible(e.users["admin"], "tt_content", r[0], r[1]) {
				want = append(want, strconv.FormatInt(r[0], 10))
			}
		}
	}
	if len(want) < 50 || !slices.Equal(seen, want) {
		t.Errorf("three windows of 20: %v, want %v", seen, want)
	}

	// The artifact holds exactly the cells of the content.
	res := e.call(t, "admin", "read_records", map[string]any{"table": "tt_content", "pid": 6, "fields": []string{"header", "bodytext", "api_token"}})
	art := res.Artifacts[0]
	if !slices.Equal(art.Columns, []string{"uid", "header", "bodytext"}) {
		t.Fatalf("columns %v", art.Columns)
	}
	for _, row := range art.Rows {
		block := fmt.Sprintf("- tt_content:%s\n  header: %s\n  bodytext: %s", row[0], row[1], row[2])
		if !strings.Contains(res.Content, block) {
			t.Errorf("content lacks %q:\n%s", block, res.Content)
		}
	}

	// Long values are collapsed and cut at 300 characters.
	long := strings.Repeat("word \n\t ", 200)
	e.insert(t, "tt_content", map[string]any{"uid": 9100, "pid": 6, "header": "Long", "bodytext": long, "CType": "text"})
	res = e.call(t, "admin", "read_records", map[string]any{"table": "tt_content", "uid": 9100, "fields": []string{"bodytext"}})
	v := res.Artifacts[0].Rows[0][1]
	if n := len([]rune(v)); n != 300 || strings.ContainsAny(v, "\n\t") || !strings.HasSuffix(v, "…") || strings.Contains(v, "  ") {
		t.Errorf("a long value became %d runes: %q", n, v)
	}

	// A call whose output would pass the gate's caps stops at a whole
	// record and says where to continue; content and artifact agree.
	for i := range int64(50) {
		e.insert(t, "tt_content", map[string]any{"uid": 9200 + i, "pid": 18, "CType": "text",
			"header": strings.Repeat("<b>&</b>", 40), "subheader": strings.Repeat("<i>x</i>", 40), "bodytext": strings.Repeat("<p>y</p>", 40)})
	}
	res = e.call(t, "admin", "read_records", map[string]any{"table": "tt_content", "pid": 18, "limit": 50,
		"fields": []string{"header", "subheader", "bodytext"}})
	m := regexp.MustCompile(`^(\d+) record\(s\) from tt_content \(offset 0; output full, continue at offset (\d+) `).FindStringSubmatch(res.Content)
	if m == nil || len(res.Artifacts) != 1 || res.Artifacts[0].Kind != tool.ArtifactTable || len(res.Content) > 50000 {
		t.Fatalf("a full output: %.300q, %d artifacts", res.Content, len(res.Artifacts))
	}
	shown, _ := strconv.Atoi(m[1])
	if next, _ := strconv.Atoi(m[2]); shown != next || shown >= 50 || len(res.Artifacts[0].Rows) != shown {
		t.Errorf("shown %d, continue at %s, %d artifact rows", shown, m[2], len(res.Artifacts[0].Rows))
	}
	res = e.call(t, "admin", "read_records", map[string]any{"table": "tt_content", "pid": 18, "offset": shown, "fields": []string{"header"}})
	if !strings.Contains(res.Content, fmt.Sprintf("- tt_content:%d\n", 9200+shown)) {
		t.Errorf("continuing at %d:\n%.200s", shown, res.Content)
	}

	// Row filter and rule 3: the editor sees the gadget on page 6 only,
	// not the one on pid 0 nor the one on page 13.
	for user, want := range map[string][]string{"admin": {"1", "2", "3"}, "editor": {"1"}, "intern": {}} {
		res := e.call(t, user, "read_records", map[string]any{"table": "tx_demo_gadget"})
		var got []string
		for _, a := range res.Artifacts {
			for _, row := range a.Rows {
				got = append(got, row[0])
			}
		}
		if user == "intern" {
			if res.Content != readpolicy.DeniedTable {
				t.Errorf("intern may not read tx_demo_gadget: %q", res.Content)
			}
			continue
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s read gadgets %v, want %v", user, got, want)
		}
	}

	// Language filters need access to the language.
	if res := e.call(t, "editor", "read_records", map[string]any{"table": "tt_content", "where_equals": map[string]any{"sys_language_uid": 1}}); res.Content != "You may not read records in language 1." {
		t.Errorf("editor language 1: %q", res.Content)
	}
	res = e.call(t, "intern", "read_records", map[string]any{"table": "pages", "where_equals": map[string]any{"sys_language_uid": 1}, "fields": []string{"title", "l10n_parent"}})
	if res.IsError || !strings.Contains(res.Content, "- pages:25") || strings.Contains(res.Content, "- pages:21\n") {
		t.Errorf("intern's German pages (25 is below the mount, 21 is not):\n%s", res.Content)
	}

	// Filters of each type, ANDed.
	for _, c := range []struct {
		where map[string]any
		want  []string
	}{
		{map[string]any{"CType": "text", "colPos": 0, "pid": 6}, []string{"1", "9100"}},
		{map[string]any{"CType": "text", "colPos": 1, "pid": 6}, nil},
		{map[string]any{"uid": "1"}, []string{"1"}},
		{map[string]any{"hidden": false, "pid": 6}, []string{"1", "9100"}},
		{map[string]any{"header": "Product A at a glance"}, []string{"1"}},
		{map[string]any{"header": 5}, nil},
	} {
		res := e.call(t, "admin", "read_records", map[string]any{"table": "tt_content", "where_equals": c.where})
		var got []string
		for _, a := range res.Artifacts {
			for _, row := range a.Rows {
				got = append(got, row[0])
			}
		}
		if res.IsError || !slices.Equal(got, c.want) {
			t.Errorf("where %v: %v (%q), want %v", c.where, got, res.Content, c.want)
		}
	}
}

func TestRecordHistory(t *testing.T) {
	t.Parallel()
	e := plantedEnv(t, typo3.DialectSQLite)
	hist := func(uid, ts, action int64, data string) {
		e.insert(t, "sys_history", map[string]any{"uid": uid, "tstamp": ts, "actiontype": action, "usertype": "BE",
			"userid": 1, "originaluserid": 0, "recuid": 17, "tablename": "pages", "history_data": data, "workspace": 0, "correlation_id": ""})
	}
	base := fixedNow().Unix() - 86400
	hist(910001, base, 3, `{"oldPageId":1,"newPageId":5}`)
	hist(910002, base+60, 9, ``)
	hist(910003, base+120, 2, `a:2:{s:9:"oldRecord";a:0:{}}`)
	hist(910004, base+180, 4, ``)
	hist(910005, base+240, 5, ``)
	hist(910006, base+300, 2, `{"oldRecord":{"title":"Kontakt","nav_title":"x"},"newRecord":{"title":"Contact","nav_title":"x"}}`)
	e.insert(t, "sys_history", map[string]any{"uid": 910007, "tstamp": base + 360, "actiontype": 2, "usertype": "BE",
		"userid": 1, "originaluserid": 0, "recuid": 17, "tablename": "pages", "history_data": `{"oldRecord":{"title":"draft"},"newRecord":{"title":"ws"}}`,
		"workspace": 1, "correlation_id": ""})

	res := e.call(t, "admin", "get_record_history", map[string]any{"table": "pages", "uid": 17})
	want := []string{
		"History of pages:17, newest first:",
		"- 2026-05-31 12:05 UTC by admin (modify): title: 'Kontakt' → 'Contact'",
		"- 2026-05-31 12:04 UTC by admin (undelete)",
		"- 2026-05-31 12:03 UTC by admin (delete)",
		"- 2026-05-31 12:02 UTC by admin (modify): (details stored in a format this tool cannot read)",
		"- 2026-05-31 12:01 UTC by admin (action #9)",
		"- 2026-05-31 12:00 UTC by admin (move): pid: '1' → '5'",
	}
	got := strings.Split(res.Content, "\n")
	if len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
		t.Errorf("history of page 17:\n%s\nwant it to start with:\n%s", res.Content, strings.Join(want, "\n"))
	}
	if strings.Contains(res.Content, "'ws'") {
		t.Error("a workspace entry was shown")
	}
	res = e.call(t, "admin", "get_record_history", map[string]any{"table": "pages", "uid": 17, "limit": 2})
	if n := strings.Count(res.Content, "\n- "); n != 2 {
		t.Errorf("limit 2 gave %d entries:\n%s", n, res.Content)
	}
	// The move, and the insert that set the pid first.
	res = e.call(t, "admin", "get_record_history", map[string]any{"table": "pages", "uid": 17, "field": "pid"})
	if lines := strings.Split(res.Content, "\n"); len(lines) != 3 || !strings.HasSuffix(lines[1], "(move): pid: '1' → '5'") ||
		!strings.HasSuffix(lines[2], "(add): pid: '1'") {
		t.Errorf("field pid:\n%s", res.Content)
	}
	res = e.call(t, "admin", "get_record_history", map[string]any{"table": "pages", "uid": 17, "field": "doktype"})
	if res.Content != "No recorded changes of doktype for pages:17." {
		t.Errorf("field doktype: %q", res.Content)
	}

	// The planted history: impersonation, withheld values, flex fields.
	res = e.call(t, "editor", "get_record_history", map[string]any{"table": "tt_content", "uid": 1})
	for _, want := range []string{"by editor (modify) via impersonation by admin: ", "api_token: (changed; value withheld)",
		"l10n_diffsource: (changed; value withheld)", "header: 'Old header' → 'Product A at a glance'",
		"pi_flexform: '' → 'settings.title: Visible flex title'"} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("tt_content 1 history lacks %q:\n%s", want, res.Content)
		}
	}

	// Deleted, missing and not permitted records get the same answer.
	for _, c := range []struct {
		user, table string
		uid         int
	}{
		{"admin", "tt_content", 3}, {"admin", "tt_content", 999999}, {"editor", "pages", 9}, {"editor", "tt_content", 6},
		{"intern", "pages", 17}, {"editor", "tx_demo_gadget", 2},
	} {
		res := e.call(t, c.user, "get_record_history", map[string]any{"table": c.table, "uid": c.uid})
		if res.Content != readpolicy.DeniedRecord {
			t.Errorf("%s history of %s:%d: %q", c.user, c.table, c.uid, res.Content)
		}
	}
}

// liveWindow reads uid and pid of one uid-ordered window of table's live
// rows (not deleted, hidden, timed out or a workspace version) with plain
// SQL, as the oracle's view of what a record tool's query returns.
func liveWindow(t testing.TB, e *env, table string, limit, offset int) [][2]int64 {
	t.Helper()
	now := fixedNow().Unix()
	a := e.rw.NewArgs()
	q := "SELECT uid, pid FROM " + e.rw.MustQuote(table) + " WHERE deleted = 0 AND hidden = 0 AND starttime <= " + a.Add(now) +
		" AND (endtime = 0 OR endtime > " + a.Add(now) + ") AND t3ver_wsid = 0 ORDER BY uid LIMIT " +
		strconv.Itoa(limit) + " OFFSET " + strconv.Itoa(offset)
	rows, err := e.rw.SQL.QueryContext(context.Background(), q, a.Values()...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][2]int64
	for rows.Next() {
		var r [2]int64
		if err := rows.Scan(&r[0], &r[1]); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReadRecordsMoreAfterFilter: when the query fills its limit and the
// row filter leaves nothing, read_records says more may follow and where,
// instead of "no records match", which would end the model's paging.
func TestReadRecordsMoreAfterFilter(t *testing.T) {
	t.Parallel()
	e := plantedEnv(t, typo3.DialectSQLite)
	o := newOracle(t, e.rw)
	intern := e.users["intern"]
	// The first window of live content in which the intern may see
	// nothing, though the table goes on.
	const limit = 3
	off := -1
	for w := 0; w < 300 && off < 0; w += limit {
		rows := liveWindow(t, e, "tt_content", limit, w)
		if len(rows) < limit || len(liveWindow(t, e, "tt_content", 1, w+limit)) == 0 {
			break
		}
		if !slices.ContainsFunc(rows, func(r [2]int64) bool { return o.visible(intern, "tt_content", r[0], r[1]) }) {
			off = w
		}
	}
	if off < 0 {
		t.Fatal("no window of live content is invisible to the intern; the demo changed")
	}
	res := e.call(t, "intern", "read_records", map[string]any{"table": "tt_content", "limit": limit, "offset": off})
	want := fmt.Sprintf("more may follow at offset %d.", off+limit)
	if res.IsError || len(res.Artifacts) != 0 || !strings.HasSuffix(res.Content, want) {
		t.Errorf("intern at offset %d: %q, want it to end %q", off, res.Content, want)
	}
	// The last window, filtered or not, has nothing after it.
	last := e.call(t, "intern", "read_records", map[string]any{"table": "tt_content", "limit": 50, "offset": 10000})
	if strings.Contains(last.Content, "more may follow") {
		t.Errorf("past the end: %q", last.Content)
	}
}
