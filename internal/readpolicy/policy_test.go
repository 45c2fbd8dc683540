package readpolicy_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/t3agent/t3agent/internal/demo/demotest"
	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sensitive lists rule 1's tables, with examples of both prefixes.
var sensitive = []string{
	"be_users", "be_groups", "fe_users", "fe_groups", "sys_log", "sys_history", "sys_refindex",
	"sys_http_report", "sys_lockedrecords", "sys_file_storage",
	"tx_nrllm_configuration", "tx_nrllm_mcp_server", "tx_nrllm", "tx_nrvault_secret", "tx_nrvaultx",
}

func TestIsSensitiveTable(t *testing.T) {
	t.Parallel()
	for _, name := range sensitive {
		for _, v := range []string{name, strings.ToUpper(name)} {
			if !readpolicy.IsSensitiveTable(v) {
				t.Errorf("IsSensitiveTable(%q) = false", v)
			}
		}
	}
	for _, name := range []string{"pages", "tt_content", "sys_file", "sys_category", "sys_filemounts", "be_users_log",
		"tx_news_domain_model_news", "tx_nrl", "nrllm", "sys_logs", ""} {
		if readpolicy.IsSensitiveTable(name) {
			t.Errorf("IsSensitiveTable(%q) = true", name)
		}
	}
}

func TestIsCredentialColumn(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		want bool
	}{
		// First pattern: a credential word as an underscore-separated
		// segment, optionally numbered.
		{"password", true}, {"passwd", true}, {"pwd", true}, {"secret", true}, {"token", true}, {"salt", true},
		{"hash", true}, {"credential", true}, {"key", true}, {"mfa", true}, {"dsn", true}, {"authorization", true},
		{"accesskey", true}, {"licensekey", true}, {"encryptionkey", true}, {"api_key", true}, {"api_token", true},
		{"token_2", true}, {"secret1", true}, {"key_id", true}, {"identifier_hash", true}, {"db_dsn", true},
		{"API_KEY", true}, {"Password", true}, {"mfa_providers", true},
		// Second pattern: the word anywhere.
		{"apikey", true}, {"ApiToken", true}, {"myAccessToken", true}, {"authtoken", true}, {"refreshtoken", true},
		{"passphrase", true}, {"userpasswordhash", true}, {"privatekey", true}, {"clientSecret", true},
		{"credentials", true}, {"showForgotPassword", true},
		// Not credentials.
		{"title", false}, {"header", false}, {"keywords", false}, {"monkey", false}, {"tokenizer", false},
		{"hashtag", false}, {"sha1", false}, {"author_email", false}, {"keyboard", false}, {"pi_flexform", false},
		{"secretary", false}, {"tstamp", false}, {"description", false}, {"passage", false}, {"", false},
	} {
		if got := readpolicy.IsCredentialColumn(c.name); got != c.want {
			t.Errorf("IsCredentialColumn(%q) = %v, want %v", c.name, got, c.want)
		}
	}
}

func fixedNow() time.Time { return time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC) }

// demoTCA is the bundled TCA with TCA entries for the sensitive tables it
// lacks, so rule 1 is tested rather than a missing TCA entry, and none of
// them adminOnly.
func demoTCA() *tca.TCA {
	tc := tca.Bundled()
	for _, name := range sensitive {
		if tc.Tables[name] == nil {
			tc.Tables[name] = &tca.Table{Name: name, Ctrl: tca.Ctrl{Label: "title"},
				Columns: map[string]*tca.Column{"title": {Name: "title", Config: tca.ColumnConfig{Type: "input"}}}}
		}
		tc.Tables[name].Ctrl.AdminOnly = false
	}
	return tc
}

type demoEnv struct {
	site  *typo3.Site
	users map[string]*typo3.BackendUser // former: nil
}

// newDemo builds the demo on d and grants the Editors group every
// sensitive table, which must change nothing.
func newDemo(t *testing.T, d typo3.Dialect, tc *tca.TCA) *demoEnv {
	t.Helper()
	ctx := context.Background()
	s := demotest.New(t, d)
	rw, err := typo3.Open(ctx, s.DSN, typo3.OpenParams{Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	a := rw.NewArgs()
	q := "UPDATE be_groups SET tables_select = " + a.Add("pages,sys_category,"+strings.Join(sensitive, ",")) +
		" WHERE uid = " + a.Add(1)
	if _, err := rw.SQL.ExecContext(ctx, q, a.Values()...); err != nil {
		t.Fatal(err)
	}
	site, err := typo3.NewSite(typo3.SiteParams{DB: s.Open(t), TCA: tc, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	e := &demoEnv{site: site, users: map[string]*typo3.BackendUser{}}
	for _, n := range []string{"admin", "editor", "intern", "former"} {
		u, err := site.BackendUserByName(ctx, n)
		switch {
		case errors.Is(err, typo3.ErrUserCannotAct):
		case err != nil:
			t.Fatal(err)
		default:
			e.users[n] = u
		}
	}
	if e.users["former"] != nil || e.users["editor"] == nil {
		t.Fatal("the demo users are not as docs/demo-site.md describes")
	}
	return e
}

// TestCanReadTableMatrix: every sensitive table is unreadable for every
// demo user, admins and users granted it in tables_select included; the
// other tables follow admin, adminOnly and tables_select.
func TestCanReadTableMatrix(t *testing.T) {
	t.Parallel()
	tc := demoTCA()
	e := newDemo(t, typo3.DialectSQLite, tc)
	p := readpolicy.New(tc)
	for name, u := range e.users {
		for _, table := range sensitive {
			if p.CanReadTable(u, table) {
				t.Errorf("%s may read sensitive table %s", name, table)
			}
		}
		if slices.ContainsFunc(p.ReadableTables(u), readpolicy.IsSensitiveTable) {
			t.Errorf("ReadableTables(%s) = %v holds a sensitive table", name, p.ReadableTables(u))
		}
	}
	if !slices.Contains(e.users["editor"].TablesSelect, "be_users") {
		t.Fatal("the editor should have been granted be_users in tables_select")
	}
	for _, c := range []struct {
		user, table string
		want        bool
	}{
		{"admin", "pages", true}, {"admin", "sys_template", true}, {"admin", "sys_filemounts", true},
		{"admin", "no_such_table", false}, {"admin", "", false},
		{"editor", "pages", true}, {"editor", "tt_content", true}, {"editor", "sys_category", true},
		{"editor", "sys_template", false}, {"editor", "sys_file", false}, {"editor", "backend_layout", false},
		{"intern", "pages", true}, {"intern", "tt_content", true}, {"intern", "sys_category", false},
		{"intern", "sys_template", false},
		{"former", "pages", false}, {"former", "tt_content", false},
	} {
		if got := p.CanReadTable(e.users[c.user], c.table); got != c.want {
			t.Errorf("CanReadTable(%s, %q) = %v, want %v", c.user, c.table, got, c.want)
		}
	}
	if got := p.ReadableTables(e.users["editor"]); !slices.Equal(got, []string{"pages", "sys_category", "tt_content"}) {
		t.Errorf("ReadableTables(editor) = %v", got)
	}
}

// TestAdminOnlyTruthy: ctrl.adminOnly keeps non-admins out for any value
// PHP reads as true, not only the boolean the reference compared with.
func TestAdminOnlyTruthy(t *testing.T) {
	t.Parallel()
	tc, err := tca.LoadJSON(strings.NewReader(`{
		"t_true":  {"ctrl": {"label": "title", "adminOnly": true}, "columns": {}},
		"t_one":   {"ctrl": {"label": "title", "adminOnly": 1}, "columns": {}},
		"t_str1":  {"ctrl": {"label": "title", "adminOnly": "1"}, "columns": {}},
		"t_word":  {"ctrl": {"label": "title", "adminOnly": "yes"}, "columns": {}},
		"t_false": {"ctrl": {"label": "title", "adminOnly": false}, "columns": {}},
		"t_zero":  {"ctrl": {"label": "title", "adminOnly": 0}, "columns": {}},
		"t_str0":  {"ctrl": {"label": "title", "adminOnly": "0"}, "columns": {}},
		"t_empty": {"ctrl": {"label": "title", "adminOnly": ""}, "columns": {}},
		"t_unset": {"ctrl": {"label": "title"}, "columns": {}}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	p := readpolicy.New(tc)
	all := tc.Names()
	// Users as loaded from be_users/be_groups; the policy reads only
	// these fields.
	editor := &typo3.BackendUser{UID: 2, Username: "editor", TablesSelect: all}
	admin := &typo3.BackendUser{UID: 1, Username: "admin", Admin: true}
	for _, table := range all {
		wantEditor := map[string]bool{"t_false": true, "t_zero": true, "t_str0": true, "t_empty": true, "t_unset": true}[table]
		if got := p.CanReadTable(editor, table); got != wantEditor {
			t.Errorf("non-admin CanReadTable(%s) = %v, want %v", table, got, wantEditor)
		}
		if !p.CanReadTable(admin, table) {
			t.Errorf("admin CanReadTable(%s) = false", table)
		}
	}
}

func TestColumns(t *testing.T) {
	t.Parallel()
	tc := tca.Bundled()
	tt := tc.Tables["tt_content"]
	tt.Columns["api_token"] = &tca.Column{Name: "api_token", Config: tca.ColumnConfig{Type: "input"}}
	tt.Columns["pin"] = &tca.Column{Name: "pin", Config: tca.ColumnConfig{Type: "password"}}
	tt.ColumnOrder = append(tt.ColumnOrder, "api_token", "pin")
	tt.Ctrl.SearchFields = append(tt.Ctrl.SearchFields, "api_token", "pin", "colPos", "no_such_column")
	tt.Ctrl.LabelAlt = append([]string{"api_token"}, tt.Ctrl.LabelAlt...)
	tc.Tables["t_nosearch"] = &tca.Table{Name: "t_nosearch", Ctrl: tca.Ctrl{Label: "secret"},
		ColumnOrder: []string{"secret", "title", "body", "count", "secret_note"},
		Columns: map[string]*tca.Column{
			"secret": {Config: tca.ColumnConfig{Type: "input"}}, "title": {Config: tca.ColumnConfig{Type: "input"}},
			"body": {Config: tca.ColumnConfig{Type: "text"}}, "count": {Config: tca.ColumnConfig{Type: "number"}},
			"secret_note": {Config: tca.ColumnConfig{Type: "text"}},
		}}
	p := readpolicy.New(tc)

	if got, want := p.SearchColumns("tt_content"), []string{"header", "header_link", "subheader", "bodytext", "pi_flexform"}; !slices.Equal(got, want) {
		t.Errorf("SearchColumns(tt_content) = %v, want %v", got, want)
	}
	if got, want := p.SearchColumns("t_nosearch"), []string{"title", "body"}; !slices.Equal(got, want) {
		t.Errorf("SearchColumns without searchFields = %v, want %v", got, want)
	}
	if got, want := p.LabelColumns("tt_content"), []string{"header", "subheader", "bodytext"}; !slices.Equal(got, want) {
		t.Errorf("LabelColumns(tt_content) = %v, want %v", got, want)
	}
	if got := p.LabelColumns("t_nosearch"); len(got) != 0 {
		t.Errorf("a credential label must be suppressed: %v", got)
	}
	for _, c := range []struct {
		col        string
		credential bool
		readable   bool
	}{
		{"api_token", true, false}, {"pin", true, false}, {"l18n_diffsource", true, false},
		{"header", false, true}, {"uid", false, true}, {"pid", false, true}, {"no_such_column", false, false},
	} {
		if got := p.IsCredentialField("tt_content", c.col); got != c.credential {
			t.Errorf("IsCredentialField(tt_content, %s) = %v", c.col, got)
		}
		if got := p.IsReadableColumn("tt_content", c.col); got != c.readable {
			t.Errorf("IsReadableColumn(tt_content, %s) = %v", c.col, got)
		}
	}
	if cols := p.ReadableColumns("tt_content"); slices.Contains(cols, "api_token") || slices.Contains(cols, "pin") ||
		slices.Contains(cols, "l18n_diffsource") || !slices.Contains(cols, "bodytext") {
		t.Errorf("ReadableColumns(tt_content) = %v", cols)
	}
	if p.LanguageField("tt_content") != "sys_language_uid" || p.LanguageField("sys_template") != "" {
		t.Errorf("LanguageField: %q, %q", p.LanguageField("tt_content"), p.LanguageField("sys_template"))
	}
}

func TestRestrictions(t *testing.T) {
	t.Parallel()
	if readpolicy.RecordRestrictions != typo3.RestrictLive {
		t.Error("record tools must apply the default restrictions and the live workspace")
	}
	admin := &typo3.BackendUser{Admin: true}
	if got := readpolicy.PageContentRestrictions(admin); got != typo3.RestrictDeleted|typo3.RestrictLiveWorkspace {
		t.Errorf("admin page content restrictions = %b", got)
	}
	for _, u := range []*typo3.BackendUser{nil, {UID: 2}} {
		if got := readpolicy.PageContentRestrictions(u); got != typo3.RestrictLive {
			t.Errorf("non-admin page content restrictions = %b", got)
		}
	}
}

// TestRowFilter checks rule 3 row by row on the demo's fixed layout, on
// every database.
func TestRowFilter(t *testing.T) {
	t.Parallel()
	for _, d := range []typo3.Dialect{typo3.DialectSQLite, typo3.DialectMySQL, typo3.DialectPostgres} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			tc := demoTCA()
			e := newDemo(t, d, tc)
			p := readpolicy.New(tc)
			ctx := context.Background()
			for _, c := range []struct {
				user  string
				table string
				row   readpolicy.Row
				want  bool
			}{
				{"admin", "tt_content", readpolicy.Row{UID: 1, PID: 6}, true},
				{"admin", "tt_content", readpolicy.Row{UID: 99, PID: 0}, true},
				// Admins see hidden and timed pages, not deleted ones.
				{"admin", "tt_content", readpolicy.Row{UID: 1, PID: 7}, true},
				{"admin", "tt_content", readpolicy.Row{UID: 1, PID: 8}, true},
				{"admin", "tt_content", readpolicy.Row{UID: 1, PID: 11}, false},
				{"admin", "pages", readpolicy.Row{UID: 11, PID: 5}, false},
				{"admin", "tt_content", readpolicy.Row{UID: 1, PID: 999999}, false},
				{"admin", "pages", readpolicy.Row{UID: 9, PID: 5}, true},
				{"admin", "sys_history", readpolicy.Row{UID: 1, PID: 6}, false},
				{"admin", "be_users", readpolicy.Row{UID: 1, PID: 0}, false},
				// Editors: mount 5, language 0 only.
				{"editor", "tt_content", readpolicy.Row{UID: 1, PID: 6}, true},
				{"editor", "tt_content", readpolicy.Row{UID: 1, PID: 6, Language: 1}, false},
				{"editor", "tt_content", readpolicy.Row{UID: 1, PID: 9}, false},
				{"editor", "tt_content", readpolicy.Row{UID: 1, PID: 10}, false},
				{"editor", "tt_content", readpolicy.Row{UID: 1, PID: 0}, false},
				{"editor", "tt_content", readpolicy.Row{UID: 1, PID: 11}, false},
				{"editor", "tt_content", readpolicy.Row{UID: 1, PID: 13}, false},
				{"editor", "pages", readpolicy.Row{UID: 6, PID: 5}, true},
				// Hidden 7, future 8 and expired 12 are not on the live site.
				{"editor", "pages", readpolicy.Row{UID: 7, PID: 5}, false},
				{"editor", "tt_content", readpolicy.Row{UID: 1, PID: 7}, false},
				{"editor", "tt_content", readpolicy.Row{UID: 1, PID: 8}, false},
				{"editor", "tt_content", readpolicy.Row{UID: 1, PID: 12}, false},
				{"editor", "pages", readpolicy.Row{UID: 9, PID: 5}, false},
				{"editor", "pages", readpolicy.Row{UID: 23, PID: 1, Language: 1}, false},
				{"editor", "sys_category", readpolicy.Row{UID: 1, PID: 16}, false},
				{"editor", "sys_template", readpolicy.Row{UID: 2, PID: 5}, false},
				{"editor", "be_groups", readpolicy.Row{UID: 1, PID: 6}, false},
				// Intern: News readers' mount 13, every language.
				{"intern", "tt_content", readpolicy.Row{UID: 1, PID: 13}, true},
				{"intern", "tt_content", readpolicy.Row{UID: 1, PID: 13, Language: 1}, true},
				{"intern", "pages", readpolicy.Row{UID: 15, PID: 13}, true},
				{"intern", "pages", readpolicy.Row{UID: 25, PID: 1, Language: 1}, true},
				{"intern", "tt_content", readpolicy.Row{UID: 1, PID: 6}, false},
				{"intern", "pages", readpolicy.Row{UID: 1, PID: 0}, false},
				{"former", "pages", readpolicy.Row{UID: 6, PID: 5}, false},
			} {
				f := readpolicy.NewRowFilter(e.site, p, e.users[c.user])
				got, err := f.Allow(ctx, c.table, c.row)
				if err != nil {
					t.Fatal(err)
				}
				if got != c.want {
					t.Errorf("%s Allow(%s, %+v) = %v, want %v", c.user, c.table, c.row, got, c.want)
				}
			}
			f := readpolicy.NewRowFilter(e.site, p, e.users["editor"])
			if f.User() != e.users["editor"] || !f.CanAccessLanguage(0) || f.CanAccessLanguage(1) {
				t.Error("editor: language 0 only")
			}
			if ok, err := f.PageVisible(ctx, 5); err != nil || !ok {
				t.Errorf("editor PageVisible(5) = %v, %v", ok, err)
			}
			none := readpolicy.NewRowFilter(e.site, p, nil)
			if none.CanAccessLanguage(0) {
				t.Error("no user may access any language")
			}
		})
	}
}

// TestPageVisible checks the page decision's live-site rules on changed
// demo data, on every database: a hidden page hides its subpages only
// with extendToSubpages, a translation needs its default-language page,
// workspace versions and a user without the pages table see nothing.
func TestPageVisible(t *testing.T) {
	t.Parallel()
	for _, d := range []typo3.Dialect{typo3.DialectSQLite, typo3.DialectMySQL, typo3.DialectPostgres} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			tc := demoTCA()
			s := demotest.New(t, d)
			ctx := context.Background()
			rw, err := typo3.Open(ctx, s.DSN, typo3.OpenParams{Writable: true})
			if err != nil {
				t.Fatal(err)
			}
			defer rw.Close()
			exec := func(q string, args ...any) {
				t.Helper()
				if _, err := rw.SQL.ExecContext(ctx, q, args...); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			site, err := typo3.NewSite(typo3.SiteParams{DB: s.Open(t), TCA: tc, Now: fixedNow})
			if err != nil {
				t.Fatal(err)
			}
			p := readpolicy.New(tc)
			load := func(name string) *typo3.BackendUser {
				u, err := site.BackendUserByName(ctx, name)
				if err != nil {
					t.Fatal(err)
				}
				return u
			}
			admin, intern := load("admin"), load("intern")
			noPages := *intern
			noPages.TablesSelect = slices.DeleteFunc(slices.Clone(intern.TablesSelect), func(s string) bool { return s == "pages" })
			check := func(step string, u *typo3.BackendUser, want map[int64]bool) {
				t.Helper()
				f := readpolicy.NewRowFilter(site, p, u)
				for uid, w := range want {
					got, err := f.PageVisible(ctx, uid)
					if err != nil {
						t.Fatal(err)
					}
					if got != w {
						t.Errorf("%s: user %d PageVisible(%d) = %v, want %v", step, u.UID, uid, got, w)
					}
				}
			}
			// News 13 with News 2026 14, its filler 28 and the German 25.
			check("as built", intern, map[int64]bool{13: true, 14: true, 28: true, 25: true, 0: false, -1: false})
			check("no pages table", &noPages, map[int64]bool{13: false, 14: false})

			exec("UPDATE pages SET hidden = 1 WHERE uid = 14")
			check("14 hidden", intern, map[int64]bool{13: true, 14: false, 28: true})
			check("14 hidden", admin, map[int64]bool{14: true, 28: true})
			exec("UPDATE pages SET " + rw.MustQuote("extendToSubpages") + " = 1 WHERE uid = 14")
			check("14 hidden for its subpages", intern, map[int64]bool{13: true, 14: false, 28: false})
			check("14 hidden for its subpages", admin, map[int64]bool{14: true, 28: true})
			a := rw.NewArgs()
			exec("UPDATE pages SET hidden = 0, starttime = "+a.Add(fixedNow().Unix()+3600)+" WHERE uid = 14", a.Values()...)
			check("14 starts later for its subpages", intern, map[int64]bool{14: false, 28: false})
			a = rw.NewArgs()
			exec("UPDATE pages SET starttime = 0, endtime = "+a.Add(fixedNow().Unix()+3600)+" WHERE uid = 14", a.Values()...)
			check("14 ends later", intern, map[int64]bool{14: true, 28: true})

			exec("UPDATE pages SET hidden = 1 WHERE uid = 13")
			check("13 hidden", intern, map[int64]bool{13: false, 25: false, 14: true})

			exec("UPDATE pages SET t3ver_wsid = 1, t3ver_oid = 14 WHERE uid = 28")
			check("28 a workspace version", intern, map[int64]bool{28: false})
			check("28 a workspace version", admin, map[int64]bool{28: false})
		})
	}
}
