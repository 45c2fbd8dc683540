package system

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/t3agent/t3agent/internal/builtin/introspect"
	"github.com/t3agent/t3agent/internal/tool"
)

type schedulerTasks struct{ env }

func (t *schedulerTasks) Spec() tool.Spec {
	return introspect.Spec("list_scheduler_tasks", tool.GroupSystem, tool.SystemDiagnostics, true,
		"The tasks of TYPO3's scheduler (tx_scheduler_task), at most 50, one line each: uid, task class, "+
			"description, next and last run (UTC), disabled, and the last failure (cut, credentials masked). The "+
			"serialized task object (which can hold credentials) is never read. Use it when asked whether cron "+
			"jobs run, failed or are disabled.",
		`{"type":"object","properties":{},"additionalProperties":false}`)
}

func (t *schedulerTasks) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	if res, ok := introspect.Authorize(call); !ok {
		return res, nil
	}
	db := t.site.DB
	// Whichever of these exist; serialized_task_object is never among them.
	q, cols, err := t.selectExisting(ctx, "tx_scheduler_task", "uid", "tasktype", "description", "nextexecution",
		"lastexecution_time", "lastexecution_failure", "disable", "deleted")
	if err != nil {
		return tool.Result{}, err
	}
	if len(cols) == 0 {
		return tool.Text("The scheduler is not installed: the site database has no tx_scheduler_task table."), nil
	}
	if contains(cols, "deleted") {
		q += " WHERE " + db.MustQuote("deleted") + " = 0"
	}
	q += " ORDER BY " + db.MustQuote("uid") + " LIMIT 50"
	rows, err := db.SQL.QueryContext(ctx, q)
	if err != nil {
		return tool.Result{}, fmt.Errorf("read tx_scheduler_task: %w", err)
	}
	defer rows.Close()
	out := introspect.NewOutput(60)
	n := 0
	for rows.Next() {
		var uid, next, last, disable, deleted *int64
		var typ, desc, failure *string
		if err := rows.Scan(&uid, &typ, &desc, &next, &last, &failure, &disable, &deleted); err != nil {
			return tool.Result{}, fmt.Errorf("read tx_scheduler_task: %w", err)
		}
		line := fmt.Sprintf("- [%d]", derefInt(uid))
		if typ != nil {
			line += " " + *typ
		}
		if d := strings.TrimSpace(deref(desc)); d != "" {
			line += " — " + introspect.Cut(introspect.Text(d), 160)
		}
		line += " · next run " + introspect.Unix(derefInt(next)) + " · last run " + introspect.Unix(derefInt(last))
		if derefInt(disable) != 0 {
			line += " · disabled"
		}
		if f := failureText(deref(failure)); f != "" {
			line += " · last failure: " + introspect.Cut(introspect.Text(f), 200)
		}
		out.Line("%s", line)
		n++
	}
	if err := rows.Err(); err != nil {
		return tool.Result{}, fmt.Errorf("read tx_scheduler_task: %w", err)
	}
	if n == 0 {
		return tool.Text("The scheduler has no tasks."), nil
	}
	if !contains(cols, "tasktype") {
		out.Line("(This TYPO3 version keeps each task's class only inside the serialized task object, which is never read.)")
	}
	return tool.Text(out.String()), nil
}

// serializedMessage finds the message of a serialized exception.
var serializedMessage = regexp.MustCompile(`s:7:"message";s:\d+:"((?:[^"\\]|\\.)*)";`)

// failureText is lastexecution_failure as a sentence: the message of a
// serialized exception (never the rest of the object), or the text.
func failureText(f string) string {
	f = strings.TrimSpace(f)
	if strings.HasPrefix(f, "O:") || strings.HasPrefix(f, "a:") {
		if m := serializedMessage.FindStringSubmatch(f); m != nil {
			return m[1]
		}
		return "(stored as a serialized object t3agent does not read)"
	}
	return f
}
