package content

import (
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
	readDefaultLimit = 20
	readMaxLimit     = 50
	readMaxOffset    = 10000
	readMaxFilters   = 5
	readMaxFields    = 40
	readValueRunes   = 300
	// readMaxOutput keeps content and artifact below the gate's caps.
	readMaxOutput = 45000
	// readMaxFilterValue bounds a filter value; equality with anything
	// longer is a mistake, not a query.
	readMaxFilterValue = 1000
)

type readRecords struct{ base }

func (t *readRecords) Spec() tool.Spec {
	return spec("read_records",
		"Reads records of one TYPO3 TCA table that the acting backend user may read, selected by equality "+
			"filters: uid, pid and up to 5 where_equals pairs of field and scalar value (all combined with AND). "+
			"Returns `- table:uid` per record followed by `  field: value` lines for the requested fields "+
			"(default: pid and the table's label fields); values are whitespace-collapsed and cut at 300 "+
			"characters. Records come in uid order, at most 50 per call (default 20); page with offset (at most "+
			"10000). Hidden, timed-out, deleted and draft (workspace) records are never returned, and records on "+
			"pages the user may not see are left out after the query, so a page of results may hold fewer "+
			"records than the limit. Fields holding credentials are never shown. Use get_table_schema to learn "+
			"a table's fields; use search_records to find records by text.",
		`{"type":"object","additionalProperties":false,"required":["table"],"properties":{`+
			`"table":{"type":"string","minLength":1,"maxLength":64,"description":"TCA table name, e.g. tt_content."},`+
			`"uid":{"type":"integer","minimum":1,"description":"Only the record with this uid."},`+
			`"pid":{"type":"integer","minimum":0,"description":"Only records stored on this page."},`+
			`"where_equals":{"type":"object","maxProperties":5,"description":"Up to 5 field → value equality filters on the table's TCA fields (or uid, pid).",`+
			`"additionalProperties":{"type":["string","number","boolean"]}},`+
			`"fields":{"type":"array","maxItems":40,"items":{"type":"string","minLength":1,"maxLength":64},"description":"Fields to return; default pid and the label fields."},`+
			`"limit":{"type":"integer","minimum":1,"maximum":50,"default":20},`+
			`"offset":{"type":"integer","minimum":0,"maximum":10000,"default":0}}}`)
}

// filter is one equality condition, checked and ready to bind.
type filter struct {
	column string
	value  any
	// asText compares the column cast to text, for a string value on a
	// column that does not hold text (so MySQL cannot turn 'abc' into 0
	// and PostgreSQL cannot fail on the type).
	asText bool
}

func (t *readRecords) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	user := call.Actor
	if user == nil {
		return tool.Errorf("%s", readpolicy.DeniedUser), nil
	}
	if err := allowedArgs(args, "table", "uid", "pid", "where_equals", "fields", "limit", "offset"); err != nil {
		return refuse(err), nil
	}
	table, res, ok := t.tableArg(args, user, "table", true)
	if !ok {
		return res, nil
	}
	limit, _, err := intArg(args, "limit", readDefaultLimit, 1, readMaxLimit)
	if err != nil {
		return refuse(err), nil
	}
	offset, _, err := intArg(args, "offset", 0, 0, readMaxOffset)
	if err != nil {
		return refuse(err), nil
	}
	live, err := t.site.Columns(ctx, table)
	if err != nil {
		return tool.Result{}, err
	}
	if len(live) == 0 {
		return tool.Errorf("%s", readpolicy.DeniedTable), nil
	}
	filters, err := t.filters(args, table, live, user)
	if err != nil {
		return refuse(err), nil
	}
	fields, err := t.fields(args, table, live)
	if err != nil {
		return refuse(err), nil
	}

	langCol := t.policy.LanguageField(table)
	if !slices.Contains(live, langCol) {
		langCol = ""
	}
	rows, err := t.query(ctx, table, fields, langCol, filters, limit, offset)
	if err != nil {
		return tool.Result{}, fmt.Errorf("read_records %s: %w", table, err)
	}

	rf := readpolicy.NewRowFilter(t.site, t.policy, user)
	tc := t.policy.TCA().Table(table)
	var lines []string
	art := tool.Artifact{Kind: tool.ArtifactTable, Title: table, Columns: append([]string{"uid"}, fields...)}
	// Both outputs stop at whole records before the gate's 50 000-byte
	// caps would cut them (the artifact counted as the JSON it travels
	// as), so the model and the person see the same records, and the
	// model is told where to continue.
	textBytes, artBytes := 0, 0
	if b, err := json.Marshal(art); err == nil {
		artBytes = len(b)
	}
	stoppedAt := -1
	for n, r := range rows {
		row := readpolicy.Row{UID: r[0].int(), PID: r[1].int()}
		vals := r[2:]
		if langCol != "" {
			row.Language = r[2].int()
			vals = r[3:]
		}
		ok, err := rf.Allow(ctx, table, row)
		if err != nil {
			return tool.Result{}, err
		}
		if !ok {
			continue
		}
		rec := []string{fmt.Sprintf("- %s:%d", table, row.UID)}
		cells := []string{strconv.FormatInt(row.UID, 10)}
		for i, f := range fields {
			v := displayValue(tc.Column(f), vals[i])
			cells = append(cells, v)
			rec = append(rec, "  "+f+": "+v)
		}
		recBytes := len(strings.Join(rec, "\n")) + 1
		cellBytes := 1
		if b, err := json.Marshal(cells); err == nil {
			cellBytes += len(b)
		}
		if len(art.Rows) > 0 && (textBytes+recBytes > readMaxOutput || artBytes+cellBytes > readMaxOutput) {
			stoppedAt = n
			break
		}
		textBytes += recBytes
		artBytes += cellBytes
		lines = append(lines, rec...)
		art.Rows = append(art.Rows, cells)
	}
	full := len(rows) == int(limit)
	if len(art.Rows) == 0 {
		if full {
			// The query was full and the filter left nothing: what lies
			// beyond the limit is unknown, not absent.
			return tool.Text(fmt.Sprintf("No readable records in %s at offset %d to %d; more may follow at offset %d.",
				table, offset, offset+limit-1, offset+limit)), nil
		}
		return tool.Text(fmt.Sprintf("No readable records in %s match (offset %d).", table, offset)), nil
	}
	head := fmt.Sprintf("%d record(s) from %s (offset %d, limit %d):", len(art.Rows), table, offset, limit)
	switch {
	case stoppedAt >= 0:
		head = fmt.Sprintf("%d record(s) from %s (offset %d; output full, continue at offset %d or ask for fewer fields):",
			len(art.Rows), table, offset, offset+int64(stoppedAt))
	case full:
		head = fmt.Sprintf("%d record(s) from %s (offset %d, limit %d; more may follow at offset %d):",
			len(art.Rows), table, offset, limit, offset+limit)
	}
	return tool.Text(head+"\n"+strings.Join(lines, "\n"), art), nil
}

// filters checks uid, pid and where_equals. Any bad filter refuses the
// whole call: a query that silently dropped a condition would return
// records the model did not ask for.
func (t *readRecords) filters(args map[string]any, table string, live []string, user *typo3.BackendUser) ([]filter, error) {
	var out []filter
	for _, name := range []string{"uid", "pid"} {
		lo := int64(0)
		if name == "uid" {
			lo = 1
		}
		n, present, err := intArg(args, name, 0, lo, math.MaxInt32)
		if err != nil {
			return nil, err
		}
		if present {
			out = append(out, filter{column: name, value: n})
		}
	}
	raw, present := args["where_equals"]
	if !present || raw == nil {
		return out, nil
	}
	where, ok := raw.(map[string]any)
	if !ok {
		return nil, badArg("Argument where_equals must be an object of field names to values.")
	}
	if len(where) > readMaxFilters {
		return nil, badArg(fmt.Sprintf("where_equals has %d filters; at most %d are allowed.", len(where), readMaxFilters))
	}
	tc := t.policy.TCA().Table(table)
	langCol := t.policy.LanguageField(table)
	for _, col := range slices.Sorted(maps.Keys(where)) {
		v := where[col]
		switch {
		case !typo3.ValidIdent(col):
			return nil, badArg(fmt.Sprintf("where_equals names %q, which is not a field name.", cut(col, 64)))
		case t.policy.IsCredentialField(table, col):
			return nil, badArg(fmt.Sprintf("Field %s holds credentials and cannot be used in a filter.", col))
		case !t.policy.IsReadableColumn(table, col) || !slices.Contains(live, col):
			return nil, badArg(fmt.Sprintf("Table %s has no field %s to filter on.", table, col))
		}
		f := filter{column: col}
		textual := readpolicy.IsTextLike(tc.Column(col))
		switch x := v.(type) {
		case string:
			if len(x) > readMaxFilterValue {
				return nil, badArg(fmt.Sprintf("The value for %s is longer than %d bytes.", col, readMaxFilterValue))
			}
			if n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64); err == nil && !textual {
				f.value = n
			} else {
				f.value, f.asText = x, !textual
			}
		case bool:
			f.value = int64(0)
			if x {
				f.value = int64(1)
			}
		default:
			fl, isNum := numberOf(x)
			switch {
			case !isNum:
				return nil, badArg(fmt.Sprintf("The value for %s must be a string, number or boolean.", col))
			case textual:
				f.value = numberText(x, fl)
			default:
				if n, whole := asInt(x); whole {
					f.value = n
				} else {
					f.value = fl
				}
			}
		}
		if col == "uid" || col == "pid" {
			if _, isInt := f.value.(int64); !isInt {
				return nil, badArg(fmt.Sprintf("The value for %s must be a whole number.", col))
			}
		}
		if col == langCol {
			n, isInt := f.value.(int64)
			if !isInt {
				return nil, badArg(fmt.Sprintf("The value for %s must be a language id (a whole number).", col))
			}
			if !user.CanAccessLanguage(int(n)) {
				return nil, badArg(fmt.Sprintf("You may not read records in language %d.", n))
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// numberText writes a number as the text a text column would hold.
func numberText(v any, f float64) string {
	if n, ok := v.(json.Number); ok {
		return n.String()
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// numberOf reads a decoded JSON number.
func numberOf(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, !math.IsNaN(n) && !math.IsInf(n, 0)
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// fields resolves the requested fields: credential fields are dropped
// silently (asking for them is not an error, seeing them is impossible),
// unknown ones refuse the call. uid is always the record's heading, so it
// is not repeated as a field.
func (t *readRecords) fields(args map[string]any, table string, live []string) ([]string, error) {
	raw, present := args["fields"]
	if !present || raw == nil {
		var def []string
		if slices.Contains(live, "pid") {
			def = append(def, "pid")
		}
		labels, err := t.liveColumnsOf(live, t.policy.LabelColumns(table))
		if err != nil {
			return nil, err
		}
		return append(def, labels...), nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, badArg("Argument fields must be a list of field names.")
	}
	if len(list) > readMaxFields {
		return nil, badArg(fmt.Sprintf("Argument fields names %d fields; at most %d are allowed.", len(list), readMaxFields))
	}
	var out []string
	for _, v := range list {
		name, ok := v.(string)
		if !ok {
			return nil, badArg("Argument fields must hold field names (strings).")
		}
		name = strings.TrimSpace(name)
		switch {
		case !typo3.ValidIdent(name):
			return nil, badArg(fmt.Sprintf("fields names %q, which is not a field name.", cut(name, 64)))
		case t.policy.IsCredentialField(table, name):
			continue
		case name == "uid" || slices.Contains(out, name):
			continue
		case !t.selectable(table, name) || !slices.Contains(live, name):
			return nil, badArg(fmt.Sprintf("Table %s has no readable field %s.", table, name))
		}
		out = append(out, name)
	}
	return out, nil
}

// selectable: the policy's readable columns plus the ctrl bookkeeping
// columns (tstamp, crdate, sortby), which TCA names but does not list as
// columns.
func (t *readRecords) selectable(table, name string) bool {
	if t.policy.IsReadableColumn(table, name) {
		return true
	}
	c := t.policy.TCA().Table(table).Ctrl
	for _, key := range []string{"tstamp", "crdate"} {
		if v, _ := c.Raw[key].(string); v == name {
			return true
		}
	}
	return c.SortBy != "" && c.SortBy == name
}

func (t *readRecords) liveColumnsOf(live, names []string) ([]string, error) {
	var out []string
	for _, n := range names {
		if slices.Contains(live, n) && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// query selects uid, pid, the language column (when given) and fields.
func (t *readRecords) query(ctx context.Context, table string, fields []string, langCol string,
	filters []filter, limit, offset int64) ([][]cell, error) {
	db := t.site.DB
	a := db.NewArgs()
	cols := []string{"uid", "pid"}
	if langCol != "" {
		cols = append(cols, langCol)
	}
	sel, err := selectList(a, table, append(cols, fields...))
	if err != nil {
		return nil, err
	}
	from, err := a.Quote(table)
	if err != nil {
		return nil, err
	}
	restrict, err := t.site.Restrict(a, table, "", readpolicy.RecordRestrictions)
	if err != nil {
		return nil, err
	}
	where := []string{restrict}
	for _, f := range filters {
		col, err := qcol(a, table, f.column)
		if err != nil {
			return nil, err
		}
		if f.asText {
			col = textCast(db.Dialect, col)
		}
		where = append(where, col+" = "+a.Add(f.value))
	}
	uidCol, err := qcol(a, table, "uid")
	if err != nil {
		return nil, err
	}
	stmt := "SELECT " + sel + " FROM " + from + " WHERE " + strings.Join(where, " AND ") +
		" ORDER BY " + uidCol + " LIMIT " + strconv.FormatInt(limit, 10) + " OFFSET " + strconv.FormatInt(offset, 10)
	return query(ctx, db, stmt, a.Values())
}
