package system

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/t3agent/t3agent/internal/builtin/introspect"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3/logfile"
	"github.com/t3agent/t3agent/internal/typo3/projectpath"
)

// psrLevels are the values of sys_log.level.
var psrLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

type fetchLogs struct{ env }

func (t *fetchLogs) Spec() tool.Spec {
	return introspect.Spec("fetch_logs", tool.GroupSystem, tool.SystemDiagnostics, true,
		"The newest entries of TYPO3's system log (the sys_log table: backend actions, logins, DataHandler and "+
			"PSR-3 database log rows), newest first, one line each: `- date UTC [level] type/action component: "+
			"message`. level filters on one PSR-3 level exactly (error, warning, …); limit defaults to 20, at most "+
			"50. IP addresses, user ids and the log_data field are never read, so placeholders such as {username} "+
			"stay unfilled. For exceptions with stack traces use get_last_exception, for deprecations "+
			"list_deprecations.",
		`{"type":"object","properties":{`+
			`"level":{"type":"string","enum":["debug","info","notice","warning","error","critical","alert","emergency"],"description":"Only entries of this PSR-3 level."},`+
			`"limit":{"type":"integer","minimum":1,"maximum":50,"default":20,"description":"How many entries."}`+
			`},"additionalProperties":false}`)
}

func (t *fetchLogs) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	if res, ok := introspect.Authorize(call); !ok {
		return res, nil
	}
	level, err := introspect.String(args, "level")
	if err != nil {
		return tool.Errorf("%s.", err.Error()), nil
	}
	level = strings.ToLower(level)
	if level != "" && !contains(psrLevels, level) {
		return tool.Errorf("level must be one of %s.", strings.Join(psrLevels, ", ")), nil
	}
	limit, err := introspect.Int(args, "limit", 20, 1, 50)
	if err != nil {
		return tool.Errorf("%s.", err.Error()), nil
	}
	db := t.site.DB
	// Only these columns are ever read; IP, userid and log_data never.
	q, cols, err := t.selectExisting(ctx, "sys_log", "uid", "tstamp", "type", "action", "level", "details", "component", "message")
	if err != nil {
		return tool.Result{}, err
	}
	if len(cols) == 0 {
		return tool.Errorf("The site database has no sys_log table."), nil
	}
	a := db.NewArgs()
	if level != "" {
		if !contains(cols, "level") {
			return tool.Errorf("This sys_log table has no level column."), nil
		}
		q += " WHERE " + db.MustQuote("level") + " = " + a.Add(level)
	}
	q += " ORDER BY " + db.MustQuote("tstamp") + " DESC, " + db.MustQuote("uid") + " DESC LIMIT " + fmt.Sprint(limit)
	rows, err := db.SQL.QueryContext(ctx, q, a.Values()...)
	if err != nil {
		return tool.Result{}, fmt.Errorf("read sys_log: %w", err)
	}
	defer rows.Close()
	out := introspect.NewOutput(60)
	n := 0
	for rows.Next() {
		var uid, ts, typ, action *int64
		var lvl, details, component, message *string
		if err := rows.Scan(&uid, &ts, &typ, &action, &lvl, &details, &component, &message); err != nil {
			return tool.Result{}, fmt.Errorf("read sys_log: %w", err)
		}
		text := deref(details)
		if text == "" {
			text = deref(message)
		}
		comp := deref(component)
		if comp != "" {
			comp = " " + comp + ":"
		}
		out.Line("- %s [%s] type %d/action %d%s %s", introspect.Unix(derefInt(ts)), orDash(deref(lvl)), derefInt(typ), derefInt(action),
			comp, introspect.Cut(introspect.Text(text), 300))
		n++
	}
	if err := rows.Err(); err != nil {
		return tool.Result{}, fmt.Errorf("read sys_log: %w", err)
	}
	if n == 0 {
		if level != "" {
			return tool.Text(fmt.Sprintf("sys_log has no entries of level %s.", level)), nil
		}
		return tool.Text("sys_log is empty."), nil
	}
	return tool.Text(out.String()), nil
}

type listDeprecations struct{ env }

// deprecationWindow is how much of the newest deprecation log is read.
const deprecationWindow = 256 << 10

func (t *listDeprecations) Spec() tool.Spec {
	return introspect.Spec("list_deprecations", tool.GroupSystem, tool.SystemDiagnostics, true,
		"The deprecation notices TYPO3 logged most recently (the last 256 kB of the newest "+
			"var/log/typo3_deprecations_*.log), newest first, identical notices collapsed with their count as "+
			"(×n) and the time they were last seen; file paths are shown relative to the project. limit defaults "+
			"to 15, at most 40. Use it before an upgrade to find code that will stop working; read_source shows "+
			"the lines named.",
		`{"type":"object","properties":{`+
			`"limit":{"type":"integer","minimum":1,"maximum":40,"default":15,"description":"How many distinct notices."}`+
			`},"additionalProperties":false}`)
}

// absPath finds absolute file paths in a notice.
var absPath = regexp.MustCompile(`/[A-Za-z0-9_.\-]+(?:/[A-Za-z0-9_.\-]+)+`)

func (t *listDeprecations) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	if res, ok := introspect.Authorize(call); !ok {
		return res, nil
	}
	limit, err := introspect.Int(args, "limit", 15, 1, 40)
	if err != nil {
		return tool.Errorf("%s.", err.Error()), nil
	}
	root, ok := t.root()
	if !ok {
		return tool.Errorf("%s", noRoot), nil
	}
	files, err := logfile.Files(root, true)
	if err != nil {
		return tool.Result{}, err
	}
	if len(files) == 0 {
		return tool.Text("No deprecation log (var/log/typo3_deprecations_*.log) exists; TYPO3 writes one when its deprecations log writer is enabled."), nil
	}
	b, err := logfile.Tail(files[0].Path, deprecationWindow)
	if err != nil {
		return tool.Result{}, fmt.Errorf("read the deprecation log: %w", err)
	}
	type notice struct {
		text  string
		count int
		last  string
	}
	var order []*notice
	byText := map[string]*notice{}
	recs := logfile.Parse(b)
	prefix := projectPrefix(root, recs)
	for i := len(recs) - 1; i >= 0; i-- {
		r := recs[i]
		msg := r.Message
		msg = absPath.ReplaceAllStringFunc(msg, func(p string) string {
			if prefix != "" && strings.HasPrefix(p, prefix) {
				return strings.TrimPrefix(p, prefix)
			}
			return p
		})
		msg = introspect.Cut(introspect.Text(msg), 600)
		if n, ok := byText[msg]; ok {
			n.count++
			continue
		}
		n := &notice{text: msg, count: 1, last: introspect.Date(r.Time)}
		byText[msg] = n
		order = append(order, n)
	}
	rel := strings.TrimPrefix(files[0].Path, root+"/")
	out := introspect.NewOutput(int(limit) + 2)
	out.Line("%d distinct deprecation notices in the last %d kB of %s (newest first):", len(order), deprecationWindow>>10, rel)
	for i, n := range order {
		if i == int(limit) {
			out.Line("… %d more distinct notices.", len(order)-i)
			break
		}
		out.Line("- (×%d, last %s) %s", n.count, n.last, n.text)
	}
	return tool.Text(out.String()), nil
}

// projectPrefix finds the server's project folder in the paths of the
// notices: the longest prefix P such that a path minus P exists under
// root.
func projectPrefix(root string, recs []logfile.Record) string {
	for _, r := range recs {
		for _, p := range absPath.FindAllString(r.Message, -1) {
			if pre := projectpath.ServerPrefix(root, p); pre != "" {
				return pre
			}
		}
	}
	return ""
}

// selectExisting builds "SELECT a, b, … FROM table" over the wanted
// columns, NULL for those the live table lacks, so the scan shape stays
// fixed across TYPO3 versions; it returns the live columns too (none when
// the table does not exist). No other column is ever named.
func (e env) selectExisting(ctx context.Context, table string, want ...string) (string, []string, error) {
	cols, err := e.site.Columns(ctx, table)
	if err != nil || len(cols) == 0 {
		return "", nil, err
	}
	db := e.site.DB
	sel := make([]string, len(want))
	for i, c := range want {
		sel[i] = "NULL"
		if contains(cols, c) {
			sel[i] = db.MustQuote(c)
		}
	}
	return "SELECT " + strings.Join(sel, ", ") + " FROM " + db.MustQuote(table), cols, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func derefInt(i *int64) int64 {
	if i == nil {
		return 0
	}
	return *i
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
