package demo

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/password"
)

// TestInit builds the default demo on every dialect and checks the fixed
// layout of docs/demo-site.md row by row, the counts and the shapes of the
// generated rows.
func TestInit(t *testing.T) {
	t.Parallel()
	for _, d := range allDialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			p := InitParams{}
			if d != typo3.DialectSQLite {
				p.SiteDSN = freshDSN(t, d, t.TempDir())
			}
			res := initDemo(t, p)
			if res.Existed {
				t.Fatal("fresh Init reports Existed")
			}
			if res.Dialect != d {
				t.Fatalf("dialect %s, want %s", res.Dialect, d)
			}
			db := openRO(t, res.SiteDSN)
			if n := count(t, db, "pages", ""); n != DefaultPages || res.Counts["pages"] != DefaultPages {
				t.Errorf("pages: %d rows, counted %d, want %d", n, res.Counts["pages"], DefaultPages)
			}
			if n := count(t, db, "tt_content", ""); n != DefaultContent || res.Counts["tt_content"] != DefaultContent {
				t.Errorf("tt_content: %d rows, counted %d, want %d", n, res.Counts["tt_content"], DefaultContent)
			}
			for table, n := range res.Counts {
				if got := count(t, db, table, ""); got != n {
					t.Errorf("%s: %d rows, Result says %d", table, got, n)
				}
			}
			checkFixedPages(t, db)
			checkFillerPages(t, db)
			checkFixedContent(t, db)
			checkGroupsAndUsers(t, db, res)
			checkTemplatesAndTSconfig(t, db)
			checkTranslations(t, db)
			checkCategoriesAndFiles(t, db)
			checkHistoryAndLog(t, db)
		})
	}
}

func checkFixedPages(t *testing.T, db *typo3.DB) {
	t.Helper()
	// uid: pid title doktype hidden deleted starttime endtime perms(userid groupid user group everybody)
	//      is_siteroot nav_hide shortcut sys_language_uid l10n_parent
	want := map[int]string{
		1:  "0|Home|1|0|0|0|0|1|1|31|27|0|1|0|0|0|0",
		2:  "1|About us|1|0|0|0|0|1|1|31|27|0|0|0|0|0|0",
		3:  "2|Team|1|0|0|0|0|1|1|31|27|0|0|0|0|0|0",
		4:  "2|History|1|0|0|0|0|1|1|31|27|0|0|0|0|0|0",
		5:  "1|Products|1|0|0|0|0|1|1|31|27|0|0|0|0|0|0",
		6:  "5|Product A|1|0|0|0|0|1|1|31|27|0|0|0|0|0|0",
		7:  "5|Product B|1|1|0|0|0|1|1|31|27|0|0|0|0|0|0",
		8:  "5|Product C|1|0|0|1893456000|0|1|1|31|27|0|0|0|0|0|0",
		9:  "5|Internal pricing|1|0|0|0|0|1|4|31|27|0|0|0|0|0|0",
		10: "9|Pricing details|1|0|0|0|0|1|1|31|27|0|0|0|0|0|0",
		11: "5|Discontinued|1|0|1|0|0|1|1|31|27|0|0|0|0|0|0",
		12: "5|Seasonal offer|1|0|0|0|1577836800|1|1|31|27|0|0|0|0|0|0",
		13: "1|News|1|0|0|0|0|1|3|31|1|0|0|0|0|0|0",
		14: "13|News 2026|1|0|0|0|0|1|3|31|1|0|0|0|0|0|0",
		15: "13|Press|1|0|0|0|0|1|4|31|0|1|0|0|0|0|0",
		16: "1|Storage|254|0|0|0|0|1|1|31|27|0|0|0|0|0|0",
		17: "1|Contact|1|0|0|0|0|1|1|31|27|0|0|0|0|0|0",
		18: "1|Legal|1|0|0|0|0|1|1|31|27|0|0|1|0|0|0",
		19: "1|Login|1|0|0|0|0|1|1|31|27|0|0|0|0|0|0",
		20: "1|Old shortcut|4|0|0|0|0|1|1|31|27|0|0|0|2|0|0",
		21: "0|Startseite|1|0|0|0|0|1|1|31|27|0|1|0|0|1|1",
		22: "1|Über uns|1|0|0|0|0|1|1|31|27|0|0|0|0|1|2",
		23: "1|Produkte|1|0|0|0|0|1|1|31|27|0|0|0|0|1|5",
		24: "5|Produkt A|1|0|0|0|0|1|1|31|27|0|0|0|0|1|6",
		25: "1|Neuigkeiten|1|0|0|0|0|1|3|31|1|0|0|0|0|1|13",
	}
	fields := []string{"uid", "pid", "title", "doktype", "hidden", "deleted", "starttime", "endtime", "perms_userid", "perms_groupid",
		"perms_user", "perms_group", "perms_everybody", "is_siteroot", "nav_hide", "shortcut", "sys_language_uid", "l10n_parent"}
	rows := dump(t, db, "SELECT "+cols(db, fields...)+" FROM pages WHERE uid <= 25 ORDER BY uid")
	if len(rows) != len(want) {
		t.Fatalf("fixed pages: %d rows, want %d", len(rows), len(want))
	}
	for _, r := range rows {
		uid, _ := strconv.Atoi(r["uid"])
		vals := make([]string, 0, len(fields)-1)
		for _, f := range fields[1:] {
			vals = append(vals, r[f])
		}
		if got := strings.Join(vals, "|"); got != want[uid] {
			t.Errorf("page %d:\n got %s\nwant %s", uid, got, want[uid])
		}
	}
}

func checkFillerPages(t *testing.T, db *typo3.DB) {
	t.Helper()
	parents := map[string][3]string{}
	for _, r := range dump(t, db, "SELECT uid, perms_userid, perms_groupid, perms_user, perms_group, perms_everybody FROM pages WHERE uid IN (3, 6, 14)") {
		parents[r["uid"]] = [3]string{r["perms_groupid"], r["perms_group"], r["perms_everybody"]}
	}
	rows := dump(t, db, "SELECT uid, pid, hidden, sys_language_uid, perms_groupid, perms_group, perms_everybody, title, slug FROM pages WHERE uid > 25 ORDER BY uid")
	if len(rows) != DefaultPages-fixedPages {
		t.Fatalf("filler pages: %d, want %d", len(rows), DefaultPages-fixedPages)
	}
	slugs := map[string]bool{}
	for n, r := range rows {
		wantPID := strconv.Itoa([]int{3, 6, 14}[n%3])
		if r["pid"] != wantPID {
			t.Errorf("filler page %s: pid %s, want %s", r["uid"], r["pid"], wantPID)
		}
		wantHidden := "0"
		if n%10 == 9 {
			wantHidden = "1"
		}
		if r["hidden"] != wantHidden {
			t.Errorf("filler page %s: hidden %s, want %s", r["uid"], r["hidden"], wantHidden)
		}
		if got := [3]string{r["perms_groupid"], r["perms_group"], r["perms_everybody"]}; got != parents[wantPID] {
			t.Errorf("filler page %s: perms %v, parent has %v", r["uid"], got, parents[wantPID])
		}
		if r["title"] == "" || !strings.HasPrefix(r["slug"], "/") || slugs[r["slug"]] {
			t.Errorf("filler page %s: title %q, slug %q (empty, relative or duplicate)", r["uid"], r["title"], r["slug"])
		}
		slugs[r["slug"]] = true
	}
}

func checkFixedContent(t *testing.T, db *typo3.DB) {
	t.Helper()
	want := map[int]string{
		1: "6|0|text|0|0|0|0|0|0",
		2: "6|0|text|1|0|0|0|0|0",
		3: "6|0|text|0|1|0|0|0|0",
		4: "6|0|text|0|0|0|1|1|0",
		5: "6|0|textmedia|0|0|1893456000|0|0|0",
		6: "19|0|felogin_login|0|0|0|0|0|0",
	}
	fields := []string{"uid", "pid", "colPos", "CType", "hidden", "deleted", "starttime", "t3ver_wsid", "t3ver_oid", "sys_language_uid"}
	rows := dump(t, db, "SELECT "+cols(db, fields...)+" FROM tt_content WHERE uid <= 6 ORDER BY uid")
	if len(rows) != 6 {
		t.Fatalf("fixed content: %d rows", len(rows))
	}
	for _, r := range rows {
		uid, _ := strconv.Atoi(r["uid"])
		vals := make([]string, 0, len(fields)-1)
		for _, f := range fields[1:] {
			vals = append(vals, r[f])
		}
		if got := strings.Join(vals, "|"); got != want[uid] {
			t.Errorf("tt_content %d:\n got %s\nwant %s", uid, got, want[uid])
		}
	}
	// Pages 6 and 19 hold nothing but their fixed content.
	if n := count(t, db, "tt_content", "pid IN (6, 19) AND uid > 6"); n != 0 {
		t.Errorf("%d filler content elements on pages 6/19", n)
	}
	ff := dump(t, db, "SELECT pi_flexform FROM tt_content WHERE uid = 6")[0]["pi_flexform"]
	doc, err := parseXMLTree(ff)
	if err != nil {
		t.Fatalf("pi_flexform of tt_content 6: %v", err)
	}
	if doc.name != "T3FlexForms" || doc.find("data", "sheet") == nil {
		t.Errorf("pi_flexform root %s has no data/sheet", doc.name)
	}
	if !strings.Contains(ff, `<field index="settings.pages">`) || !strings.Contains(ff, `<sheet index="s_redirect">`) {
		t.Errorf("pi_flexform lacks the felogin fields: %s", ff)
	}
	// Every CType the spec names appears in the filler of a default demo.
	for _, ct := range []string{"text", "textmedia", "header", "bullets", "html", "image"} {
		if n := count(t, db, "tt_content", db.MustQuote("CType")+" = '"+ct+"' AND uid > 6"); n == 0 {
			t.Errorf("no %s content elements", ct)
		}
	}
	if n := count(t, db, "tt_content", "hidden = 1 AND uid > 6"); n == 0 {
		t.Error("no hidden filler content")
	}
	if n := count(t, db, "tt_content", "deleted = 1 AND uid > 6"); n == 0 {
		t.Error("no deleted filler content")
	}
	if n := count(t, db, "tt_content", db.MustQuote("colPos")+" = 1"); n == 0 {
		t.Error("no sidebar (colPos 1) content")
	}
	// Sorting is unique per page and column.
	for _, r := range dump(t, db, "SELECT pid, sorting, count(*) AS n FROM tt_content WHERE sys_language_uid = 0 AND t3ver_wsid = 0 GROUP BY pid, sorting HAVING count(*) > 1") {
		t.Errorf("page %s has %s elements with sorting %s", r["pid"], r["n"], r["sorting"])
	}
}

func checkGroupsAndUsers(t *testing.T, db *typo3.DB, res *Result) {
	t.Helper()
	// uid: title|subgroup|tables_select|tables_modify|db_mountpoints|allowed_languages|hidden|deleted
	want := map[int]string{
		1: "Editors||pages,sys_category|tt_content|5|0|0|0",
		2: "Interns|3|pages|NULL|NULL||0|0",
		3: "News readers||tt_content|NULL|13||0|0",
		4: "Management||pages,tt_content,sys_category,sys_file|NULL|1||0|0",
		5: "Cycle A|6|NULL|NULL|NULL||0|0",
		6: "Cycle B|5|NULL|NULL|NULL||0|0",
		7: "Hidden group||sys_template|NULL|16||1|0",
		8: "Deleted group||sys_file|NULL|1||0|1",
	}
	fields := []string{"uid", "title", "subgroup", "tables_select", "tables_modify", "db_mountpoints", "allowed_languages", "hidden", "deleted"}
	rows := dump(t, db, "SELECT "+cols(db, fields...)+" FROM be_groups ORDER BY uid")
	if len(rows) != len(want) {
		t.Fatalf("be_groups: %d rows", len(rows))
	}
	for _, r := range rows {
		uid, _ := strconv.Atoi(r["uid"])
		vals := make([]string, 0, len(fields)-1)
		for _, f := range fields[1:] {
			vals = append(vals, r[f])
		}
		if got := strings.Join(vals, "|"); got != want[uid] {
			t.Errorf("be_groups %d:\n got %s\nwant %s", uid, got, want[uid])
		}
	}
	wantUsers := map[int]string{
		1: "admin|1||3|0|0",
		2: "editor|0|1|3|0|0",
		3: "intern|0|2,5,7|3|0|0",
		4: "former|0|1|3|1|0",
	}
	users := dump(t, db, "SELECT "+cols(db, "uid", "username", "admin", "usergroup", "options", "disable", "deleted", "password")+" FROM be_users ORDER BY uid")
	if len(users) != len(wantUsers) || len(res.Users) != len(wantUsers) {
		t.Fatalf("be_users: %d rows, Result has %d users", len(users), len(res.Users))
	}
	for _, r := range users {
		uid, _ := strconv.Atoi(r["uid"])
		got := strings.Join([]string{r["username"], r["admin"], r["usergroup"], r["options"], r["disable"], r["deleted"]}, "|")
		if got != wantUsers[uid] {
			t.Errorf("be_users %d:\n got %s\nwant %s", uid, got, wantUsers[uid])
		}
		u, ok := res.User(r["username"])
		if !ok || u.UID != uid {
			t.Errorf("Result lacks user %s (uid %d)", r["username"], uid)
			continue
		}
		if !strings.HasPrefix(r["password"], "$argon2id$") {
			t.Errorf("%s: hash %q is not argon2id", u.Username, r["password"])
		}
		if ok, err := password.Verify(r["password"], u.Password); err != nil || !ok {
			t.Errorf("%s: password does not verify against the stored hash (%v)", u.Username, err)
		}
		if ok, _ := password.Verify(r["password"], u.Password+"x"); ok {
			t.Errorf("%s: a wrong password verifies", u.Username)
		}
	}
	seen := map[string]bool{}
	for _, u := range res.Users {
		if len(u.Password) != 23 || seen[u.Password] {
			t.Errorf("%s: password %q is not a fresh 4×5 password", u.Username, u.Password)
		}
		seen[u.Password] = true
	}
}

func checkTemplatesAndTSconfig(t *testing.T, db *typo3.DB) {
	t.Helper()
	rows := dump(t, db, "SELECT "+cols(db, "uid", "pid", "root", "clear", "include_static_file", "constants", "config")+" FROM sys_template ORDER BY uid")
	if len(rows) != 2 {
		t.Fatalf("sys_template: %d rows", len(rows))
	}
	st1, st2 := rows[0], rows[1]
	if st1["pid"] != "1" || st1["root"] != "1" || st1["clear"] != "3" ||
		st1["include_static_file"] != "EXT:fluid_styled_content/Configuration/TypoScript/,EXT:site_demo/Configuration/TypoScript" {
		t.Errorf("sys_template 1: %v", st1)
	}
	for _, want := range []string{"@import 'EXT:site_demo/Configuration/TypoScript/Setup/*.typoscript'", "[tree.level == 1]", "[END]", "{$site.company}"} {
		if !strings.Contains(st1["config"], want) {
			t.Errorf("sys_template 1 config lacks %q", want)
		}
	}
	if !strings.Contains(st1["constants"], "site {") {
		t.Errorf("sys_template 1 constants: %q", st1["constants"])
	}
	if st2["pid"] != "5" || st2["root"] != "0" || st2["clear"] != "0" || !strings.Contains(st2["config"], "{$site.section}") {
		t.Errorf("sys_template 2: %v", st2)
	}
	for _, r := range []map[string]string{st1, st2} {
		for _, f := range []string{"constants", "config"} {
			if err := checkBraces(r[f]); err != nil {
				t.Errorf("sys_template %s %s: %v", r["uid"], f, err)
			}
		}
	}
	ts := dump(t, db, "SELECT uid, "+db.MustQuote("TSconfig")+", tsconfig_includes FROM pages WHERE uid IN (1, 5) ORDER BY uid")
	for _, r := range ts {
		for _, want := range []string{"TCEFORM", "mod.web_layout", "TCEMAIN"} {
			if !strings.Contains(r["TSconfig"], want) {
				t.Errorf("page %s TSconfig lacks %s", r["uid"], want)
			}
		}
		if err := checkBraces(r["TSconfig"]); err != nil {
			t.Errorf("page %s TSconfig: %v", r["uid"], err)
		}
	}
	if !strings.Contains(ts[0]["TSconfig"], "TCEMAIN {\n    permissions {") || ts[1]["tsconfig_includes"] != "EXT:site_demo/Configuration/TsConfig/Page/Products.tsconfig" {
		t.Errorf("pages 1/5 TSconfig shape: %v", ts)
	}
}

func checkTranslations(t *testing.T, db *typo3.DB) {
	t.Helper()
	// Every German content element translates a live default-language
	// element on the same page, one of the pages with a translation.
	rows := dump(t, db, `SELECT tr.uid, tr.pid, o.pid AS opid, o.sys_language_uid AS olang
		FROM tt_content tr LEFT JOIN tt_content o ON o.uid = tr.l18n_parent WHERE tr.sys_language_uid = 1`)
	if len(rows) == 0 {
		t.Fatal("no German content")
	}
	for _, r := range rows {
		if r["pid"] != r["opid"] || r["olang"] != "0" {
			t.Errorf("German tt_content %s on page %s translates a row on page %s (language %s)", r["uid"], r["pid"], r["opid"], r["olang"])
		}
		switch r["pid"] {
		case "1", "2", "5", "13":
		default:
			t.Errorf("German tt_content %s on untranslated page %s", r["uid"], r["pid"])
		}
	}
}

func checkCategoriesAndFiles(t *testing.T, db *typo3.DB) {
	t.Helper()
	for _, r := range dump(t, db, `SELECT c.uid, c.items, (SELECT count(*) FROM sys_category_record_mm mm WHERE mm.uid_local = c.uid) AS n
		FROM sys_category c WHERE c.sys_language_uid = 0`) {
		if r["items"] != r["n"] {
			t.Errorf("sys_category %s: items %s, relations %s", r["uid"], r["items"], r["n"])
		}
	}
	if n := count(t, db, "sys_category_record_mm", "uid_local NOT IN (SELECT uid FROM sys_category)"); n != 0 {
		t.Errorf("%d category relations to missing categories", n)
	}
	if n := count(t, db, "tt_content", "categories > 0 AND uid NOT IN (SELECT uid_foreign FROM sys_category_record_mm WHERE tablenames = 'tt_content')"); n != 0 {
		t.Errorf("%d content elements count categories they do not have", n)
	}
	if n := count(t, db, "sys_category_record_mm", ""); n == 0 {
		t.Error("no category relations")
	}
	st := dump(t, db, "SELECT uid, driver, is_default, name FROM sys_file_storage")
	if len(st) != 2 || st[0]["uid"] != "1" || st[0]["driver"] != "Local" || st[0]["is_default"] != "1" || st[1]["is_default"] != "0" {
		t.Errorf("sys_file_storage: %v", st)
	}
	if n := count(t, db, "sys_file_reference", "uid_local NOT IN (SELECT uid FROM sys_file) OR tablenames = 'tt_content' AND uid_foreign NOT IN (SELECT uid FROM tt_content) OR tablenames = 'pages' AND uid_foreign NOT IN (SELECT uid FROM pages)"); n != 0 {
		t.Errorf("%d dangling file references", n)
	}
	if n := count(t, db, "tt_content", "(image + assets) <> (SELECT count(*) FROM sys_file_reference r WHERE r.uid_foreign = tt_content.uid AND r.tablenames = 'tt_content')"); n != 0 {
		t.Errorf("%d content elements whose image/assets count disagrees with their references", n)
	}
}

func checkHistoryAndLog(t *testing.T, db *typo3.DB) {
	t.Helper()
	hist := dump(t, db, "SELECT uid, actiontype, tablename, recuid, history_data FROM sys_history ORDER BY uid")
	if len(hist) == 0 {
		t.Fatal("no sys_history rows")
	}
	actions := map[string]int{}
	for _, h := range hist {
		actions[h["actiontype"]]++
		if h["actiontype"] == "4" {
			continue // deletions carry no data
		}
		var data map[string]any
		if err := json.Unmarshal([]byte(h["history_data"]), &data); err != nil {
			t.Errorf("sys_history %s: history_data is not JSON: %v", h["uid"], err)
			continue
		}
		if h["actiontype"] == "2" {
			if _, ok := data["oldRecord"]; !ok {
				t.Errorf("sys_history %s: modify without oldRecord", h["uid"])
			}
		}
	}
	if actions["1"] == 0 || actions["2"] == 0 {
		t.Errorf("sys_history actions %v lack inserts or updates", actions)
	}
	logs := dump(t, db, "SELECT uid, type, action, error, details, log_data, level, component FROM sys_log ORDER BY uid")
	var dh, logins, failed, psr int
	for _, l := range logs {
		switch {
		case l["type"] == "1":
			dh++
			var data map[string]any
			if err := json.Unmarshal([]byte(l["log_data"]), &data); err != nil || data["table"] == nil {
				t.Errorf("sys_log %s: log_data %q (%v)", l["uid"], l["log_data"], err)
			}
			if !strings.Contains(l["details"], "{table}:{uid}") {
				t.Errorf("sys_log %s: details %q", l["uid"], l["details"])
			}
		case l["type"] == "255" && l["error"] == "0":
			logins++
		case l["type"] == "255":
			failed++
		case l["component"] != "":
			psr++
		}
	}
	if dh == 0 || logins == 0 || failed == 0 || psr == 0 {
		t.Errorf("sys_log: %d DataHandler, %d logins, %d failed logins, %d PSR-3 rows", dh, logins, failed, psr)
	}
}

// checkBraces reports unbalanced { } in TypoScript, ignoring comments and
// the right-hand side of assignments.
func checkBraces(ts string) error {
	depth := 0
	for i, line := range strings.Split(ts, "\n") {
		l := strings.TrimSpace(line)
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "//") || strings.HasPrefix(l, "[") || strings.HasPrefix(l, "@import") {
			continue
		}
		if eq := strings.IndexAny(l, "=<>"); eq >= 0 && (strings.IndexByte(l, '{') < 0 || eq < strings.IndexByte(l, '{')) {
			continue
		}
		switch {
		case strings.HasSuffix(l, "{"):
			depth++
		case l == "}":
			depth--
		}
		if depth < 0 {
			return fmt.Errorf("line %d: unexpected }", i+1)
		}
	}
	if depth != 0 {
		return fmt.Errorf("%d unclosed blocks", depth)
	}
	return nil
}
