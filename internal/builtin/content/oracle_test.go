package content_test

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

// oracle answers "may this user see this row?" from plain SQL over the
// pages table and the page decision of package readpolicy, independently
// of the code under test. The row's page must exist, not be deleted and be
// live; admins need nothing more (and see root-level rows, pid 0). For
// everyone else the page must pass PAGE_SHOW (perms bits) and lie below
// one of the user's DB mounts through pages that pass it too (a translated
// page counts as its default-language page for the mount); it must be
// enabled at the site clock (not hidden, started, not ended), and so must
// its default-language page and every ancestor with extendToSubpages; its
// language and the row's must be allowed; pid 0 fails for non-pages
// tables.
type oracle struct {
	pages map[int64]oraclePage
	// lang and pid hold sys_language_uid and pid of pages and tt_content
	// rows, keyed by "table:uid".
	lang map[string]int64
	pid  map[string]int64
}

type oraclePage struct {
	pid, deleted                                    int64
	hidden, start, end, extend, wsid, oid           int64
	permsUserID, permsGroupID                       int64
	permsUser, permsGroup, permsEverybody, language int64
	l10nParent                                      int64
}

func newOracle(t testing.TB, db *typo3.DB) *oracle {
	t.Helper()
	o := &oracle{pages: map[int64]oraclePage{}, lang: map[string]int64{}, pid: map[string]int64{}}
	rows, err := db.SQL.QueryContext(context.Background(), `SELECT uid, pid, deleted, perms_userid, perms_groupid,
		perms_user, perms_group, perms_everybody, sys_language_uid, l10n_parent, hidden, starttime, endtime, `+
		db.MustQuote("extendToSubpages")+`, t3ver_wsid, t3ver_oid FROM pages`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var uid int64
		var p oraclePage
		if err := rows.Scan(&uid, &p.pid, &p.deleted, &p.permsUserID, &p.permsGroupID, &p.permsUser, &p.permsGroup,
			&p.permsEverybody, &p.language, &p.l10nParent, &p.hidden, &p.start, &p.end, &p.extend, &p.wsid, &p.oid); err != nil {
			t.Fatal(err)
		}
		o.pages[uid] = p
		o.lang["pages:"+strconv.FormatInt(uid, 10)] = p.language
		o.pid["pages:"+strconv.FormatInt(uid, 10)] = p.pid
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows2, err := db.SQL.QueryContext(context.Background(), `SELECT uid, pid, sys_language_uid FROM tt_content`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows2.Close()
	for rows2.Next() {
		var uid, pid, lang int64
		if err := rows2.Scan(&uid, &pid, &lang); err != nil {
			t.Fatal(err)
		}
		key := "tt_content:" + strconv.FormatInt(uid, 10)
		o.lang[key], o.pid[key] = lang, pid
	}
	if err := rows2.Err(); err != nil {
		t.Fatal(err)
	}
	return o
}

// pidOf reads the pid of any record with plain SQL.
func (o *oracle) pidOf(t testing.TB, db *typo3.DB, table string, uid int64) int64 {
	t.Helper()
	if pid, ok := o.pid[table+":"+strconv.FormatInt(uid, 10)]; ok {
		return pid
	}
	var pid int64
	q := "SELECT pid FROM " + db.MustQuote(table) + " WHERE uid = " + db.Placeholder(1)
	if err := db.SQL.QueryRowContext(context.Background(), q, uid).Scan(&pid); err != nil {
		t.Fatalf("pid of %s:%d: %v", table, uid, err)
	}
	return pid
}

func (o *oracle) showsPerms(u *typo3.BackendUser, p oraclePage) bool {
	return p.permsEverybody&1 == 1 ||
		(p.permsUserID == u.UID && p.permsUser&1 == 1) ||
		(slices.Contains(u.GroupUIDs, p.permsGroupID) && p.permsGroup&1 == 1)
}

// enabled: does the live site show page p at the fixed clock, as far as
// its own enable fields go?
func (p oraclePage) enabled() bool {
	now := fixedNow().Unix()
	return p.hidden == 0 && p.start <= now && (p.end == 0 || p.end > now)
}

// showable: may u see page uid?
func (o *oracle) showable(u *typo3.BackendUser, uid int64) bool {
	if u == nil || !u.CanSelectTable("pages") {
		return false
	}
	p, ok := o.pages[uid]
	if !ok || p.deleted != 0 || p.wsid != 0 || p.oid != 0 {
		return false
	}
	if u.Admin {
		return true
	}
	if !o.showsPerms(u, p) || !p.enabled() || !u.CanAccessLanguage(int(p.language)) {
		return false
	}
	base := uid
	if p.language != 0 && p.l10nParent != 0 {
		base = p.l10nParent
		if b, ok := o.pages[base]; !ok || b.deleted != 0 || !b.enabled() {
			return false
		}
	}
	for id, depth := o.pages[base].pid, 0; id != 0 && depth < 100; depth++ {
		a, ok := o.pages[id]
		if !ok || a.deleted != 0 {
			break
		}
		if a.extend != 0 && !a.enabled() {
			return false
		}
		id = a.pid
	}
	id := uid
	if p.language != 0 && p.l10nParent != 0 {
		id = p.l10nParent
	}
	for depth := 0; id != 0 && depth < 100; depth++ {
		r, ok := o.pages[id]
		if !ok || r.deleted != 0 || !o.showsPerms(u, r) {
			return false
		}
		if slices.Contains(u.DBMounts, id) {
			return true
		}
		id = r.pid
	}
	return false
}

// visible: may u see row uid of table stored on pid? The language rule
// is checked where the oracle knows the row's language.
func (o *oracle) visible(u *typo3.BackendUser, table string, uid, pid int64) bool {
	if u == nil {
		return false
	}
	if u.Admin && table != "pages" && pid == 0 {
		return true
	}
	if !u.Admin {
		if lang, ok := o.lang[table+":"+strconv.FormatInt(uid, 10)]; ok && !u.CanAccessLanguage(int(lang)) {
			return false
		}
	}
	page := pid
	if table == "pages" {
		page = uid
	}
	return page >= 1 && o.showable(u, page)
}

// A record reference in tool output.
type ref struct {
	table    string
	uid, pid int64
	pidKnown bool
}

var (
	searchLine = regexp.MustCompile(`^([A-Za-z0-9_]+):(\d+) · .* · pid (-?\d+)$`)
	readHead   = regexp.MustCompile(`^- ([A-Za-z0-9_]+):(\d+)$`)
	readPid    = regexp.MustCompile(`^  pid: (-?\d+)$`)
	pageHead   = regexp.MustCompile(`^Page \[(\d+)\]`)
	contentRow = regexp.MustCompile(`^\[(\d+)\] colPos=`)
)

// refs extracts every record a tool's output shows.
func refs(name string, args map[string]any, res tool.Result) []ref {
	if res.IsError {
		return nil
	}
	var out []ref
	lines := strings.Split(res.Content, "\n")
	atoi := func(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }
	switch name {
	case "search_records":
		for _, l := range lines {
			if m := searchLine.FindStringSubmatch(l); m != nil {
				out = append(out, ref{table: m[1], uid: atoi(m[2]), pid: atoi(m[3]), pidKnown: true})
			}
		}
	case "read_records":
		for _, l := range lines {
			if m := readHead.FindStringSubmatch(l); m != nil {
				out = append(out, ref{table: m[1], uid: atoi(m[2])})
			} else if m := readPid.FindStringSubmatch(l); m != nil && len(out) > 0 {
				out[len(out)-1].pid, out[len(out)-1].pidKnown = atoi(m[1]), true
			}
		}
	case "get_page_content":
		var page int64
		for _, l := range lines {
			if m := pageHead.FindStringSubmatch(l); m != nil {
				page = atoi(m[1])
				out = append(out, ref{table: "pages", uid: page, pidKnown: true})
			} else if m := contentRow.FindStringSubmatch(l); m != nil {
				out = append(out, ref{table: "tt_content", uid: atoi(m[1]), pid: page, pidKnown: true})
			}
		}
	case "get_record_history":
		table, _ := args["table"].(string)
		uid, _ := args["uid"].(int)
		out = append(out, ref{table: table, uid: int64(uid)})
	}
	return out
}

// leaks lists every way res breaks the read policy's promises: a secret
// or a password hash in the content or the artifacts, a sensitive table
// named as a record source, a credential-like artifact column.
func leaks(res tool.Result) []string {
	raw, _ := json.Marshal(res)
	all := string(raw) + "\n" + res.Content
	var out []string
	for _, s := range allSecrets() {
		if strings.Contains(all, s) {
			out = append(out, "secret "+s)
		}
	}
	for _, marker := range []string{"$argon2", "$2y$", "$pbkdf2"} {
		if strings.Contains(all, marker) {
			out = append(out, "password hash "+marker)
		}
	}
	for _, l := range strings.Split(res.Content, "\n") {
		for _, s := range sensitiveTables {
			if strings.HasPrefix(l, s+":") || strings.HasPrefix(l, "- "+s+":") {
				out = append(out, "sensitive table row: "+l)
			}
		}
	}
	for _, a := range res.Artifacts {
		if readpolicy.IsSensitiveTable(a.Title) {
			out = append(out, "artifact of sensitive table "+a.Title)
		}
		for _, c := range a.Columns {
			if readpolicy.IsCredentialColumn(c) {
				out = append(out, "credential artifact column "+c)
			}
		}
	}
	return out
}
