package content

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

const (
	historyDefaultLimit = 10
	historyMaxLimit     = 20
	historyValueRunes   = 120
	historyMaxFields    = 20
	// historyScan bounds the rows read when a field filter has to pick
	// the matching entries in Go.
	historyScan = 500
)

// actionNames are sys_history actiontype values (RecordHistoryStore).
var actionNames = map[int64]string{1: "add", 2: "modify", 3: "move", 4: "delete", 5: "undelete"}

type getRecordHistory struct{ base }

func (t *getRecordHistory) Spec() tool.Spec {
	return spec("get_record_history",
		"Lists the change history TYPO3 recorded for one record the acting backend user may read, newest "+
			"first: one line per change, `- date UTC by user (add|modify|move|delete|undelete)[ via "+
			"impersonation by X]: field: 'old' → 'new'; …`, values cut at 120 characters. Fields holding "+
			"credentials show that they changed, never their values. field limits the list to changes of one "+
			"field; limit is 1 to 20 (default 10). Use it to find out who changed a page or content element, "+
			"when, and what it was before.",
		`{"type":"object","additionalProperties":false,"required":["table","uid"],"properties":{`+
			`"table":{"type":"string","minLength":1,"maxLength":64,"description":"TCA table of the record, e.g. tt_content."},`+
			`"uid":{"type":"integer","minimum":1,"description":"uid of the record."},`+
			`"field":{"type":"string","minLength":1,"maxLength":64,"description":"Only changes of this field."},`+
			`"limit":{"type":"integer","minimum":1,"maximum":20,"default":10}}}`)
}

func (t *getRecordHistory) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	user := call.Actor
	if user == nil {
		return tool.Errorf("%s", readpolicy.DeniedUser), nil
	}
	if err := allowedArgs(args, "table", "uid", "field", "limit"); err != nil {
		return refuse(err), nil
	}
	table, res, ok := t.tableArg(args, user, "table", true)
	if !ok {
		return res, nil
	}
	uid, present, err := intArg(args, "uid", 0, 1, math.MaxInt32)
	if err != nil {
		return refuse(err), nil
	}
	if !present {
		return tool.Errorf("Argument uid is required."), nil
	}
	limit, _, err := intArg(args, "limit", historyDefaultLimit, 1, historyMaxLimit)
	if err != nil {
		return refuse(err), nil
	}
	field, _, err := stringArg(args, "field")
	if err != nil {
		return refuse(err), nil
	}
	field = strings.TrimSpace(field)
	if field != "" && (!typo3.ValidIdent(field) || !t.knownField(table, field)) {
		return tool.Errorf("Table %s has no field %s.", table, cut(field, 64)), nil
	}

	// The record must exist and not be deleted; hidden, timed and draft
	// records have history too.
	rec, err := t.record(ctx, table, uid)
	if err != nil {
		return tool.Result{}, fmt.Errorf("get_record_history %s:%d: %w", table, uid, err)
	}
	if rec == nil {
		return tool.Errorf("%s", readpolicy.DeniedRecord), nil
	}
	rf := readpolicy.NewRowFilter(t.site, t.policy, user)
	if ok, err := rf.Allow(ctx, table, *rec); err != nil {
		return tool.Result{}, err
	} else if !ok {
		return tool.Errorf("%s", readpolicy.DeniedRecord), nil
	}

	entries, err := t.entries(ctx, table, uid, field, int(limit))
	if err != nil {
		return tool.Result{}, fmt.Errorf("get_record_history %s:%d: %w", table, uid, err)
	}
	if len(entries) == 0 {
		if field != "" {
			return tool.Text(fmt.Sprintf("No recorded changes of %s for %s:%d.", field, table, uid)), nil
		}
		return tool.Text(fmt.Sprintf("No history is recorded for %s:%d.", table, uid)), nil
	}
	names, err := t.usernames(ctx, entries)
	if err != nil {
		return tool.Result{}, fmt.Errorf("get_record_history users: %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "History of %s:%d, newest first:\n", table, uid)
	for _, e := range entries {
		b.WriteString(t.line(table, e, field, names))
		b.WriteByte('\n')
	}
	return tool.Text(strings.TrimRight(b.String(), "\n")), nil
}

// showsValue: history shows the values of readable TCA columns and of
// uid, pid and the ctrl bookkeeping columns only. Anything else the
// record held (a credential, a diff-source snapshot embedding every
// field, a column TCA does not describe) is reported as changed only.
func (t *getRecordHistory) showsValue(table, field string) bool {
	if t.policy.IsCredentialField(table, field) {
		return false
	}
	if t.policy.IsReadableColumn(table, field) {
		return true
	}
	raw := t.policy.TCA().Table(table).Ctrl.Raw
	for _, key := range []string{"tstamp", "crdate", "sortby"} {
		if v, _ := raw[key].(string); v == field {
			return true
		}
	}
	return false
}

// knownField: a TCA column, uid/pid, or a ctrl bookkeeping column.
func (t *getRecordHistory) knownField(table, field string) bool {
	tc := t.policy.TCA().Table(table)
	if field == "uid" || field == "pid" || tc.Column(field) != nil {
		return true
	}
	for _, key := range []string{"tstamp", "crdate", "sortby"} {
		if v, _ := tc.Ctrl.Raw[key].(string); v == field {
			return true
		}
	}
	return false
}

// record looks the record up with the deleted restriction only.
func (t *getRecordHistory) record(ctx context.Context, table string, uid int64) (*readpolicy.Row, error) {
	db := t.site.DB
	a := db.NewArgs()
	cols := []string{"uid", "pid"}
	if lf := t.policy.LanguageField(table); lf != "" {
		ok, err := t.hasColumn(ctx, table, lf)
		if err != nil {
			return nil, err
		}
		if ok {
			cols = append(cols, lf)
		}
	}
	sel, err := selectList(a, table, cols)
	if err != nil {
		return nil, err
	}
	restrict, err := t.site.Restrict(a, table, "", typo3.RestrictDeleted)
	if err != nil {
		return nil, err
	}
	uidCol, _ := qcol(a, table, "uid")
	from, _ := a.Quote(table)
	rows, err := query(ctx, db, "SELECT "+sel+" FROM "+from+" WHERE "+restrict+" AND "+uidCol+" = "+a.Add(uid), a.Values())
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	r := &readpolicy.Row{UID: rows[0][0].int(), PID: rows[0][1].int()}
	if len(cols) == 3 {
		r.Language = rows[0][2].int()
	}
	return r, nil
}

type historyEntry struct {
	tstamp, action, user, original int64
	data                           string
}

// entries reads the record's live-workspace history, newest first. Only
// the columns the tool prints are selected, and only rows of this record.
func (t *getRecordHistory) entries(ctx context.Context, table string, uid int64, field string, limit int) ([]historyEntry, error) {
	const hist = "sys_history"
	live, err := t.site.Columns(ctx, hist)
	if err != nil {
		return nil, err
	}
	for _, need := range []string{"uid", "tstamp", "actiontype", "userid", "recuid", "tablename", "history_data"} {
		if !slices.Contains(live, need) {
			return nil, nil // no (usable) history table: nothing recorded
		}
	}
	db := t.site.DB
	a := db.NewArgs()
	q := func(c string) string { s, _ := qcol(a, hist, c); return s }
	original := "0"
	if slices.Contains(live, "originaluserid") {
		original = q("originaluserid")
	}
	where := q("tablename") + " = " + a.Add(table) + " AND " + q("recuid") + " = " + a.Add(uid)
	if slices.Contains(live, "workspace") {
		where += " AND " + q("workspace") + " = " + a.Add(int64(0))
	}
	n := limit
	if field != "" {
		n = historyScan
	}
	stmt := "SELECT " + q("tstamp") + ", " + q("actiontype") + ", " + q("userid") + ", " + original + ", " +
		q("history_data") + " FROM " + db.MustQuote(hist) + " WHERE " + where +
		" ORDER BY " + q("tstamp") + " DESC, " + q("uid") + " DESC LIMIT " + strconv.Itoa(n)
	rows, err := query(ctx, db, stmt, a.Values())
	if err != nil {
		return nil, err
	}
	var out []historyEntry
	for _, r := range rows {
		e := historyEntry{tstamp: r[0].int(), action: r[1].int(), user: r[2].int(), original: r[3].int(), data: r[4].s}
		if field != "" && !slices.Contains(changedFields(e), field) {
			continue
		}
		out = append(out, e)
		if len(out) == limit {
			break
		}
	}
	return out, nil
}

// usernames looks up be_users.username, and nothing else, for the users
// named by the entries, deleted users included.
func (t *getRecordHistory) usernames(ctx context.Context, entries []historyEntry) (map[int64]string, error) {
	var ids []int64
	for _, e := range entries {
		for _, id := range []int64{e.user, e.original} {
			if id > 0 && !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	names := map[int64]string{}
	if len(ids) == 0 {
		return names, nil
	}
	db := t.site.DB
	a := db.NewArgs()
	stmt := "SELECT " + db.MustQuote("uid") + ", " + db.MustQuote("username") + " FROM " + db.MustQuote("be_users") +
		" WHERE " + db.MustQuote("uid") + " IN (" + a.AddInts(ids) + ")"
	rows, err := query(ctx, db, stmt, a.Values())
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		names[r[0].int()] = readpolicy.Collapse(r[1].s)
	}
	return names, nil
}

func userName(names map[int64]string, id int64) string {
	if n := names[id]; n != "" {
		return n
	}
	if id == 0 {
		return "an unknown user"
	}
	return "user #" + strconv.FormatInt(id, 10)
}

// change is one field's values before and after; has* are false when the
// entry does not record that side.
type change struct {
	field          string
	old, new       string
	hasOld, hasNew bool
}

// decodeChanges reads history_data in the shapes TYPO3 v13 writes: a
// modify holds {"oldRecord":…,"newRecord":…}, an add the new record, a
// move {"oldPageId":…,"newPageId":…}; delete and undelete hold nothing.
// ok is false for data that is not such JSON (rows from very old TYPO3
// versions stored serialized PHP).
func decodeChanges(e historyEntry) (changes []change, ok bool) {
	if strings.TrimSpace(e.data) == "" {
		return nil, true
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader([]byte(e.data)))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, false
	}
	oldRec, isMod := m["oldRecord"].(map[string]any)
	newRec, _ := m["newRecord"].(map[string]any)
	switch {
	case isMod || newRec != nil:
		for _, f := range slices.Sorted(maps.Keys(mergeKeys(oldRec, newRec))) {
			o, hasO := oldRec[f]
			n, hasN := newRec[f]
			c := change{field: f, old: jsonText(o), new: jsonText(n), hasOld: hasO, hasNew: hasN}
			if hasO && hasN && c.old == c.new {
				continue
			}
			changes = append(changes, c)
		}
	case m["oldPageId"] != nil || m["newPageId"] != nil:
		changes = append(changes, change{field: "pid", old: jsonText(m["oldPageId"]), new: jsonText(m["newPageId"]),
			hasOld: m["oldPageId"] != nil, hasNew: m["newPageId"] != nil})
	default:
		for _, f := range slices.Sorted(maps.Keys(m)) {
			if v := jsonText(m[f]); v != "" {
				changes = append(changes, change{field: f, new: v, hasNew: true})
			}
		}
	}
	return changes, true
}

func mergeKeys(a, b map[string]any) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func changedFields(e historyEntry) []string {
	cs, _ := decodeChanges(e)
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.field
	}
	return out
}

// jsonText renders a decoded JSON value as the record held it.
func jsonText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		if x {
			return "1"
		}
		return "0"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// line renders one entry. Credential fields (and the diff-source
// snapshot, which embeds every field) say that they changed but never
// show a value; FlexForm values show their readable fields only.
func (t *getRecordHistory) line(table string, e historyEntry, field string, names map[int64]string) string {
	action := actionNames[e.action]
	if action == "" {
		action = "action #" + strconv.FormatInt(e.action, 10)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "- %s UTC by %s (%s)", utcMinute(e.tstamp), userName(names, e.user), action)
	if e.original > 0 && e.original != e.user {
		fmt.Fprintf(&b, " via impersonation by %s", userName(names, e.original))
	}
	changes, ok := decodeChanges(e)
	if !ok {
		b.WriteString(": (details stored in a format this tool cannot read)")
		return b.String()
	}
	tc := t.policy.TCA().Table(table)
	var parts []string
	shown := 0
	for _, c := range changes {
		if field != "" && c.field != field {
			continue
		}
		if shown == historyMaxFields {
			parts = append(parts, fmt.Sprintf("… %d more field(s)", countFields(changes, field)-shown))
			break
		}
		shown++
		if !t.showsValue(table, c.field) {
			parts = append(parts, c.field+": (changed; value withheld)")
			continue
		}
		val := func(s string) string {
			if col := tc.Column(c.field); col != nil && col.Config.Type == "flex" {
				s = readpolicy.FlexText(s)
			}
			return "'" + clip(s, historyValueRunes) + "'"
		}
		switch {
		case c.hasOld && c.hasNew:
			parts = append(parts, c.field+": "+val(c.old)+" → "+val(c.new))
		case c.hasNew:
			parts = append(parts, c.field+": "+val(c.new))
		default:
			parts = append(parts, c.field+": "+val(c.old)+" → (removed)")
		}
	}
	if len(parts) > 0 {
		b.WriteString(": " + strings.Join(parts, "; "))
	}
	return b.String()
}

func countFields(changes []change, field string) int {
	if field == "" {
		return len(changes)
	}
	n := 0
	for _, c := range changes {
		if c.field == field {
			n++
		}
	}
	return n
}
