package content_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/typo3"
)

// sensitivePatterns match every sensitive table name in SQL text or a
// bound value: the fixed names as whole words, and the two prefixes.
func sensitivePatterns() []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, s := range []string{"be_users", "be_groups", "fe_users", "fe_groups", "sys_log", "sys_history", "sys_refindex",
		"sys_http_report", "sys_lockedrecords", "sys_file_storage"} {
		out = append(out, regexp.MustCompile(`\b`+s+`\b`))
	}
	return append(out, regexp.MustCompile(`\btx_nrllm\w*`), regexp.MustCompile(`\btx_nrvault\w*`))
}

// historyReads are get_record_history's narrow reads of sensitive
// tables: sys_history rows of one record (the printed columns only) and
// be_users usernames, in either dialect's quoting.
var historyReads = func() []*regexp.Regexp {
	id := func(name string) string { return "[\"`]?" + name + "[\"`]?" }
	h := func(col string) string { return id("sys_history") + `\.` + id(col) }
	return []*regexp.Regexp{
		regexp.MustCompile(`^select ` + h("tstamp") + `, ` + h("actiontype") + `, ` + h("userid") + `, (` + h("originaluserid") +
			`|0), ` + h("history_data") + ` from ` + id("sys_history") + ` where ` + h("tablename") + ` = (\?|\$1) and ` +
			h("recuid") + ` = `),
		regexp.MustCompile(`^select ` + id("uid") + `, ` + id("username") + ` from ` + id("be_users") + ` where ` + id("uid") + ` in \(`),
	}
}()

// historyStatement reports whether s is one of historyReads, or the
// live-schema lookup of sys_history's columns (the name bound as a value).
func historyStatement(s statement) bool {
	t := strings.TrimPrefix(strings.ToLower(s.text), "prepare ")
	if len(s.args) == 1 && fmt.Sprint(s.args[0]) == "sys_history" && !strings.Contains(t, "sys_history") {
		return true
	}
	for _, re := range historyReads {
		if re.MatchString(t) {
			return true
		}
	}
	return false
}

// assertNoSensitiveSQL fails when a statement logged since mark reads a
// sensitive table; history marks get_record_history's narrow reads as
// allowed.
func assertNoSensitiveSQL(t *testing.T, e *env, mark int, history bool, what string) {
	t.Helper()
	pats := sensitivePatterns()
	for _, s := range e.log.since(mark) {
		hit := touches(s, pats)
		if len(hit) == 0 || (history && historyStatement(s)) {
			continue
		}
		t.Errorf("%s: a statement touched %v:\n  %s %v", what, hit, s.text, s.args)
	}
}

// TestSecurityMatrix runs every demo user (former cannot act and calls
// without an actor) against every sensitive table with each content
// tool, then sweeps the tools over the whole site looking for anything
// the read policy forbids: sensitive rows, planted secrets, password
// hashes, credential columns, rows on pages the user may not see. Every
// statement sent to the database is logged and checked.
func TestSecurityMatrix(t *testing.T) {
	t.Parallel()
	// SQLite and MariaDB are the issue's; PostgreSQL costs a second more.
	for _, d := range allDialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := plantedEnv(t, d)
			o := newOracle(t, e.rw)
			if e.users["former"] != nil {
				t.Fatal("former can act; the matrix needs a user who cannot")
			}
			t.Run("sensitive tables", func(t *testing.T) { sensitiveMatrix(t, e) })
			t.Run("sweep", func(t *testing.T) { sweep(t, e, o) })
			t.Run("bad input", func(t *testing.T) { badInputs(t, e) })
		})
	}
}

func sensitiveMatrix(t *testing.T, e *env) {
	for _, user := range userNames {
		for _, table := range sensitiveTables {
			for _, c := range []struct {
				tool string
				args map[string]any
			}{
				{"search_records", map[string]any{"query": "Product", "table": table}},
				{"search_records", map[string]any{"query": "SECRET", "table": strings.ToUpper(table)}},
				{"read_records", map[string]any{"table": table}},
				{"read_records", map[string]any{"table": table, "uid": 1, "fields": []string{"title", "secret_value"}}},
				{"read_records", map[string]any{"table": " " + table + " ", "where_equals": map[string]any{"uid": 1}}},
				{"get_record_history", map[string]any{"table": table, "uid": 1}},
				{"get_record_history", map[string]any{"table": table, "uid": 1, "field": "title"}},
			} {
				what := fmt.Sprintf("%s as %s %v", c.tool, user, c.args)
				m := e.log.mark()
				res := e.call(t, user, c.tool, c.args)
				want := readpolicy.DeniedTable
				if user == "former" {
					want = readpolicy.DeniedUser
				}
				if !res.IsError || res.Content != want {
					t.Errorf("%s: got %q (error %v), want the error %q", what, res.Content, res.IsError, want)
				}
				if n := len(e.log.since(m)); n != 0 {
					t.Errorf("%s: %d statements sent; a denied table must be refused before any query", what, n)
				}
				if l := leaks(res); len(l) > 0 {
					t.Errorf("%s leaks: %v", what, l)
				}
			}
		}
	}
}

// sweep calls the tools over the whole site as every user.
func sweep(t *testing.T, e *env, o *oracle) {
	ctx := context.Background()
	tc := e.site.TCA
	type call struct {
		tool string
		args map[string]any
	}
	var calls []call
	for _, q := range []string{"Product", "editor", "admin", "Customers", "fileadmin", "inserted", "argon2", "SECRET",
		"gadget", "flex", "token", "Aqua", "Nordlicht", "Kunden", "Login"} {
		calls = append(calls, call{"search_records", map[string]any{"query": q, "limit": 50}})
	}
	for _, name := range tc.Names() {
		live, err := e.site.Columns(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		fields := []string{"pid"}
		for _, c := range tc.Table(name).ColumnOrder {
			if slices.Contains(live, c) {
				fields = append(fields, c)
			}
		}
		calls = append(calls,
			call{"read_records", map[string]any{"table": name, "fields": fields[:min(len(fields), 40)], "limit": 50}},
			call{"read_records", map[string]any{"table": name, "fields": fields[:min(len(fields), 40)], "limit": 50, "offset": 50}},
			call{"search_records", map[string]any{"query": "Product", "table": name, "limit": 50}})
	}
	for uid := 1; uid <= 62; uid++ {
		calls = append(calls, call{"get_page_content", map[string]any{"uid": uid}},
			call{"get_page_content", map[string]any{"uid": uid, "language": 1}})
	}
	for uid := 1; uid <= 30; uid++ {
		calls = append(calls, call{"get_record_history", map[string]any{"table": "tt_content", "uid": uid}},
			call{"get_record_history", map[string]any{"table": "pages", "uid": uid}})
	}
	calls = append(calls, call{"get_record_history", map[string]any{"table": "tx_demo_gadget", "uid": 1}},
		call{"get_record_history", map[string]any{"table": "tt_content", "uid": 1, "field": "api_token"}})

	// seen counts what each user was shown, so the sweep cannot pass by
	// showing nobody anything.
	seen := map[string]map[string]bool{}
	for _, user := range userNames {
		seen[user] = map[string]bool{}
		u := e.users[user]
		for _, c := range calls {
			what := fmt.Sprintf("%s as %s %v", c.tool, user, c.args)
			m := e.log.mark()
			res := e.call(t, user, c.tool, c.args)
			assertNoSensitiveSQL(t, e, m, c.tool == "get_record_history", what)
			if l := leaks(res); len(l) > 0 {
				t.Errorf("%s leaks: %v\n%s", what, l, res.Content)
			}
			if user == "former" && res.Content != readpolicy.DeniedUser {
				t.Errorf("%s: got %q, want %q", what, res.Content, readpolicy.DeniedUser)
			}
			for _, r := range refs(c.tool, c.args, res) {
				pid := r.pid
				if !r.pidKnown {
					pid = o.pidOf(t, e.rw, r.table, r.uid)
				}
				if !o.visible(u, r.table, r.uid, pid) {
					t.Errorf("%s shows %s:%d on page %d, which %s may not see", what, r.table, r.uid, pid, user)
				}
				seen[user][fmt.Sprintf("%s:%d", r.table, r.uid)] = true
			}
			for _, a := range res.Artifacts {
				for _, row := range a.Rows {
					seen[user][a.Title+":"+row[0]+" (artifact)"] = true
				}
			}
		}
	}
	// What the fixed demo layout promises each user (docs/demo-site.md).
	for _, c := range []struct {
		user, key string
		want      bool
	}{
		{"admin", "pages:9", true}, {"admin", "tt_content:6", true}, {"admin", "tx_demo_gadget:2", true},
		{"editor", "pages:6", true}, {"editor", "tt_content:1", true}, {"editor", "tx_demo_gadget:1", true},
		{"editor", "pages:9", false}, {"editor", "pages:10", false}, {"editor", "pages:13", false},
		{"editor", "pages:23", false}, {"editor", "tx_demo_gadget:2", false}, {"editor", "tx_demo_gadget:3", false},
		{"intern", "pages:13", true}, {"intern", "pages:15", true}, {"intern", "pages:6", false},
		{"intern", "tt_content:1", false}, {"intern", "tx_demo_gadget:3", false},
	} {
		if seen[c.user][c.key] != c.want {
			t.Errorf("%s saw %s: %v, want %v", c.user, c.key, seen[c.user][c.key], c.want)
		}
	}
	if len(seen["former"]) != 0 {
		t.Errorf("former saw %d records", len(seen["former"]))
	}

	// The planted credential column is read by nobody, but its changes
	// are reported.
	for _, user := range []string{"admin", "editor"} {
		res := e.call(t, user, "get_record_history", map[string]any{"table": "tt_content", "uid": 1, "field": "api_token"})
		if !strings.Contains(res.Content, "api_token: (changed; value withheld)") {
			t.Errorf("history of api_token as %s:\n%s", user, res.Content)
		}
		res = e.call(t, user, "read_records", map[string]any{"table": "tt_content", "uid": 1, "fields": []string{"api_token", "header"}})
		if strings.Contains(res.Content, "api_token") || len(res.Artifacts) != 1 ||
			!slices.Equal(res.Artifacts[0].Columns, []string{"uid", "header"}) {
			t.Errorf("read_records of api_token as %s: %q %+v", user, res.Content, res.Artifacts)
		}
	}
	res := e.call(t, "admin", "search_records", map[string]any{"query": "gadget", "table": "tx_demo_gadget"})
	if !strings.Contains(res.Content, "tx_demo_gadget:1 · Product A gadget · pid 6") {
		t.Errorf("the credential label of tx_demo_gadget should give way to its label_alt:\n%s", res.Content)
	}
}

// badInput is one call that must be refused with a clear sentence.
type badInput struct {
	tool string
	args map[string]any
	want string // a part of the sentence
	// ok marks input that is data, not an attack: SQL metacharacters in
	// a bound value are searched for, not executed.
	ok bool
}

func badInputCases() []badInput {
	six := map[string]any{"uid": 1, "pid": 6, "header": "x", "CType": "text", "colPos": 0, "hidden": 0}
	return []badInput{
		{tool: "read_records", args: map[string]any{"table": "tt_content; DROP TABLE pages"}, want: readpolicy.DeniedTable},
		{tool: "read_records", args: map[string]any{"table": "tt_content WHERE 1=1 --"}, want: readpolicy.DeniedTable},
		{tool: "read_records", args: map[string]any{"table": "no_such_table"}, want: readpolicy.DeniedTable},
		{tool: "read_records", args: map[string]any{"table": "tt_content", "where_equals": map[string]any{"uid = 1 OR 1=1 --": 1}}, want: "not a field name"},
		{tool: "read_records", args: map[string]any{"table": "tt_content", "where_equals": map[string]any{"nosuchcol": 1}}, want: "has no field nosuchcol"},
		{tool: "read_records", args: map[string]any{"table": "tt_content", "where_equals": map[string]any{"api_token": "x"}}, want: "holds credentials"},
		{tool: "read_records", args: map[string]any{"table": "tt_content", "where_equals": map[string]any{"l18n_diffsource": "x"}}, want: "holds credentials"},
		{tool: "read_records", args: map[string]any{"table": "tx_demo_gadget", "where_equals": map[string]any{"access_token": "x"}}, want: "holds credentials"},
		{tool: "read_records", args: map[string]any{"table": "tt_content", "where_equals": six}, want: "where_equals"},
		{tool: "read_records", args: map[string]any{"table": "tt_content", "where_equals": map[string]any{"header": map[string]any{"a": 1}}}, want: "where_equals.header"},
		{tool: "read_records", args: map[string]any{"table": "tt_content", "where_equals": map[string]any{"header": []any{1}}}, want: "where_equals.header"},
		{tool: "read_records", args: map[string]any{"table": "tt_content", "where_equals": map[string]any{"header": nil}}, want: "where_equals.header"},
		{tool: "read_records", args: map[string]any{"table": "tt_content", "where_equals": "uid=1"}, want: "where_equals"},
		{tool: "read_records", args: map[string]any{"table": "tt_content", "where_equals": map[string]any{"uid": "1 OR 1=1"}}, want: "whole number"},
		{tool: "read_records", args: map[string]any{"table": "tt_content", "where_equals": map[string]any{"header": "x' OR '1'='1"}}, ok: true},
		{tool: "read_records", args: map[string]any{"table": "tt_content", "limit": 51}, want: "limit"},
		{tool: "read_records", args: map[string]any{"table": "tt_content", "limit": 100000}, want: "limit"},
		{tool: "read_records", args: map[string]any{"table": "tt_content", "limit": "5"}, want: "limit"},
		{tool: "read_records", args: map[string]any{"table": "tt_content", "offset": 10001}, want: "offset"},
		{tool: "read_records", args: map[string]any{"table": "tt_content", "offset": -1}, want: "offset"},
		{tool: "read_records", args: map[string]any{"table": "tt_content", "uid": 0}, want: "uid"},
		{tool: "read_records", args: map[string]any{"table": "tt_content", "pid": -1}, want: "pid"},
		{tool: "read_records", args: map[string]any{"table": "tt_content", "uid": 1.5}, want: "uid"},
		{tool: "read_records", args: map[string]any{"table": "tt_content", "fields": []string{"header; DROP TABLE pages"}}, want: "not a field name"},
		{tool: "read_records", args: map[string]any{"table": "tt_content", "fields": []string{"nosuch"}}, want: "no readable field nosuch"},
		{tool: "read_records", args: map[string]any{"table": "tt_content", "fields": "header"}, want: "fields"},
		{tool: "read_records", args: map[string]any{"table": "tt_content", "sql": "SELECT * FROM be_users"}, want: "sql"},
		{tool: "read_records", args: map[string]any{}, want: "table"},
		{tool: "search_records", args: map[string]any{"query": "a"}, want: "query"},
		{tool: "search_records", args: map[string]any{"query": "   a    "}, want: "2 to 100"},
		{tool: "search_records", args: map[string]any{"query": strings.Repeat("x", 101)}, want: "2 to 100"},
		{tool: "search_records", args: map[string]any{"query": 42}, want: "query"},
		{tool: "search_records", args: map[string]any{"query": "pump", "limit": 51}, want: "limit"},
		{tool: "search_records", args: map[string]any{"query": "pump", "limit": 0}, want: "limit"},
		{tool: "search_records", args: map[string]any{"query": "pump", "table": "pages; --"}, want: readpolicy.DeniedTable},
		{tool: "search_records", args: map[string]any{"query": "' OR 1=1 --"}, ok: true},
		{tool: "search_records", args: map[string]any{"query": "%%"}, ok: true},
		{tool: "get_page_content", args: map[string]any{"uid": "1 OR 1=1"}, want: "uid"},
		{tool: "get_page_content", args: map[string]any{"uid": -5}, want: "uid"},
		{tool: "get_page_content", args: map[string]any{"uid": 0}, want: "uid"},
		{tool: "get_page_content", args: map[string]any{"uid": 6, "language": "de"}, want: "language"},
		{tool: "get_page_content", args: map[string]any{}, want: "uid"},
		{tool: "get_record_history", args: map[string]any{"table": "sys_history", "uid": 1}, want: readpolicy.DeniedTable},
		{tool: "get_record_history", args: map[string]any{"table": "pages--", "uid": 1}, want: readpolicy.DeniedTable},
		{tool: "get_record_history", args: map[string]any{"table": "pages", "uid": 1, "field": "title; --"}, want: "has no field"},
		{tool: "get_record_history", args: map[string]any{"table": "pages", "uid": 1, "field": "nosuch"}, want: "has no field"},
		{tool: "get_record_history", args: map[string]any{"table": "pages", "uid": 1, "limit": 21}, want: "limit"},
		{tool: "get_record_history", args: map[string]any{"table": "pages", "uid": 1, "limit": 0}, want: "limit"},
		{tool: "get_record_history", args: map[string]any{"table": "pages", "uid": 0}, want: "uid"},
	}
}

func badInputs(t *testing.T, e *env) {
	for _, user := range []string{"admin", "editor"} {
		for _, c := range badInputCases() {
			what := fmt.Sprintf("%s as %s %v", c.tool, user, c.args)
			m := e.log.mark()
			res := e.call(t, user, c.tool, c.args)
			assertNoSensitiveSQL(t, e, m, false, what)
			if l := leaks(res); len(l) > 0 {
				t.Errorf("%s leaks: %v", what, l)
			}
			if c.ok {
				if res.IsError {
					t.Errorf("%s: refused %q; metacharacters in a value are data", what, res.Content)
				}
				continue
			}
			if !res.IsError || !clearSentence(res.Content) || !strings.Contains(res.Content, c.want) {
				t.Errorf("%s: got %q (error %v), want one sentence mentioning %q", what, res.Content, res.IsError, c.want)
			}
		}
	}
	// The statements above were bound, never executed: the tables are
	// all still there.
	for _, table := range []string{"pages", "tt_content", "be_users"} {
		var n int
		if err := e.rw.SQL.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM "+e.rw.MustQuote(table)).Scan(&n); err != nil || n == 0 {
			t.Errorf("%s: %d rows, %v", table, n, err)
		}
	}
}

// clearSentence: one line, a sentence's end, short enough to read.
func clearSentence(s string) bool {
	return s != "" && !strings.Contains(s, "\n") && strings.HasSuffix(s, ".") && len(s) < 300
}

// TestNoActorNoData: without a backend user every tool refuses before
// touching the database.
func TestNoActorNoData(t *testing.T) {
	t.Parallel()
	e := plantedEnv(t, typo3.DialectSQLite)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"search_records", map[string]any{"query": "Product"}},
		{"get_page_content", map[string]any{"uid": 1}},
		{"read_records", map[string]any{"table": "pages"}},
		{"get_record_history", map[string]any{"table": "pages", "uid": 1}},
	} {
		m := e.log.mark()
		res := e.call(t, "former", c.tool, c.args)
		if !res.IsError || res.Content != readpolicy.DeniedUser || len(e.log.since(m)) != 0 {
			t.Errorf("%s without an actor: %q, %d statements", c.tool, res.Content, len(e.log.since(m)))
		}
	}
}
