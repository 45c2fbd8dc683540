package files

import (
	"context"
	"fmt"
	"strings"

	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

// scanBudget is how many rows a non-admin's search or missing-file scan
// reads before the mount check filters them.
const scanBudget = 1000

type searchFiles struct{ env }

func (t *searchFiles) Spec() tool.Spec {
	return spec("search_fal_files",
		"Find files of the TYPO3 file storages by name, title or alternative text (case-insensitive, literal). "+
			"One line per file: `- [sys_file uid] storage:path (MIME, size) · title`. Files TYPO3 marks missing are "+
			"left out (find_missing_files lists them). `storage` narrows to one storage; `limit` 1–50 (default 20). "+
			"Editors find only files inside their file mounts. Next: get_fal_references with a uid shows where a "+
			"file is used.",
		`{"type":"object","properties":{`+
			`"query":{"type":"string","minLength":1,"maxLength":100,"description":"Text to find in the file name, title or alternative text."},`+
			`"storage":{"type":"integer","minimum":1,"description":"Storage uid (list_fal_storages)."},`+
			`"limit":{"type":"integer","minimum":1,"maximum":50,"description":"At most this many files (default 20)."}`+
			`},"required":["query"],"additionalProperties":false}`)
}

func (t *searchFiles) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	if call.Actor == nil {
		return denyUser(), nil
	}
	query, _, err := tool.ArgString(args, "query")
	if err != nil {
		return refuse(err), nil
	}
	query = strings.TrimSpace(query)
	if n := len([]rune(query)); n < 1 || n > 100 {
		return tool.Errorf("Argument query must be 1 to 100 characters."), nil
	}
	limit, _, err := tool.ArgInt(args, "limit", 20, 1, 50)
	if err != nil {
		return refuse(err), nil
	}
	fa, err := t.access(ctx, call.Actor)
	if err != nil {
		return tool.Result{}, err
	}
	storages, res, ok := storageFilter(args, fa)
	if !ok {
		return res, nil
	}
	if len(storages) == 0 {
		return tool.Text("You may not use any file storage, so there is nothing to search."), nil
	}
	scan := limit + 1
	if !call.Actor.Admin {
		scan = scanBudget
	}
	found, err := t.query(ctx, query, storages, scan)
	if err != nil {
		return tool.Result{}, err
	}
	var shown []fileRow
	more := false
	for _, f := range found {
		if !visible(fa, f) {
			continue
		}
		if int64(len(shown)) == limit {
			more = true
			break
		}
		shown = append(shown, f)
	}
	if len(shown) == 0 {
		return tool.Text(fmt.Sprintf("No file matches %s.", quote(query))), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d file(s) matching %s", len(shown), quote(query))
	if more {
		b.WriteString(" (the limit; refine the query or name a storage for more)")
	}
	b.WriteString(":\n")
	for _, f := range shown {
		fmt.Fprintf(&b, "- [%d] %s (%s, %s)", f.uid, clean(f.combined(), 300), clean(f.mime, 80), humanSize(f.size))
		if f.title != "" {
			b.WriteString(" · " + clean(f.title, 120))
		}
		if f.alt != "" && f.alt != f.title {
			b.WriteString(" · alt: " + clean(f.alt, 120))
		}
		b.WriteByte('\n')
	}
	return tool.Text(strings.TrimRight(b.String(), "\n")), nil
}

// query runs the search: sys_file joined with its live default-language
// metadata, not missing, in the given storages, by uid, at most n rows
// (one per file).
func (t *searchFiles) query(ctx context.Context, query string, storages []int64, n int64) ([]fileRow, error) {
	db := t.site.DB
	a := db.NewArgs()
	q := func(s string) string { return db.MustQuote(s) }
	// live reports the live default-language metadata rows of alias.
	var conds []string
	for _, c := range []string{"sys_language_uid", "t3ver_wsid"} {
		ok, err := t.site.HasColumn(ctx, "sys_file_metadata", c)
		if err != nil {
			return nil, err
		}
		if ok {
			conds = append(conds, c)
		}
	}
	live := func(alias string) string {
		s := alias + `.` + q("file") + ` = f.` + q("uid")
		for _, c := range conds {
			s += ` AND ` + alias + `.` + q(c) + ` = 0`
		}
		return s
	}
	// The lowest uid is the file's metadata row; a second row for the
	// same file (a broken index) must not repeat the file.
	meta := live("m") + ` AND m.` + q("uid") + ` = (SELECT MIN(m2.` + q("uid") + `) FROM ` + q("sys_file_metadata") +
		` m2 WHERE ` + live("m2") + `)`
	pattern := likeContains(query)
	like := func(expr string) string {
		return `LOWER(` + expr + `) LIKE ` + a.Add(pattern) + ` ESCAPE '` + likeEscape + `'`
	}
	stmt := `SELECT ` + fileColumns(db, "f") + `, m.` + q("title") + `, m.` + q("alternative") +
		` FROM ` + q("sys_file") + ` f LEFT JOIN ` + q("sys_file_metadata") + ` m ON ` + meta +
		` WHERE f.` + q("missing") + ` = 0 AND f.` + q("storage") + ` IN (` + a.AddInts(storages) + `) AND (` +
		like(`f.`+q("name")) + ` OR ` + like(`m.`+q("title")) + ` OR ` + like(`m.`+q("alternative")) + `)` +
		` ORDER BY f.` + q("uid") + ` LIMIT ` + fmt.Sprint(n)
	rows, err := db.SQL.QueryContext(ctx, stmt, a.Values()...)
	if err != nil {
		return nil, fmt.Errorf("search sys_file: %w", err)
	}
	return scanFiles(rows, true)
}

// quote echoes a model-supplied value, bounded.
func quote(s string) string {
	if len([]rune(s)) > 80 {
		s = string([]rune(s)[:80]) + "…"
	}
	return fmt.Sprintf("%q", s)
}

type missingFiles struct{ env }

func (t *missingFiles) Spec() tool.Spec {
	return spec("find_missing_files",
		"Files TYPO3 has indexed (sys_file) but marked missing from their storage, usually deleted or renamed "+
			"outside TYPO3; content that references them shows broken images or links. One line per file: "+
			"`- [sys_file uid] storage:path (MIME)`. Admins get the storage-wide total, editors the count inside "+
			"their file mounts. `storage` narrows to one storage; `limit` 1–50 (default 20). Use get_fal_references "+
			"on a uid to find the content to fix.",
		`{"type":"object","properties":{`+
			`"storage":{"type":"integer","minimum":1,"description":"Storage uid (list_fal_storages)."},`+
			`"limit":{"type":"integer","minimum":1,"maximum":50,"description":"At most this many files (default 20)."}`+
			`},"additionalProperties":false}`)
}

func (t *missingFiles) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	if call.Actor == nil {
		return denyUser(), nil
	}
	limit, _, err := tool.ArgInt(args, "limit", 20, 1, 50)
	if err != nil {
		return refuse(err), nil
	}
	fa, err := t.access(ctx, call.Actor)
	if err != nil {
		return tool.Result{}, err
	}
	storages, res, ok := storageFilter(args, fa)
	if !ok {
		return res, nil
	}
	if len(storages) == 0 {
		return tool.Text("You may not use any file storage, so no file of yours can be missing."), nil
	}
	db := t.site.DB
	q := func(s string) string { return db.MustQuote(s) }
	a := db.NewArgs()
	where := ` FROM ` + q("sys_file") + ` WHERE ` + q("missing") + ` = 1 AND ` + q("storage") + ` IN (` + a.AddInts(storages) + `)`
	total := int64(-1)
	scan := limit
	if call.Actor.Admin {
		if err := db.SQL.QueryRowContext(ctx, `SELECT COUNT(*)`+where, a.Values()...).Scan(&total); err != nil {
			return tool.Result{}, fmt.Errorf("count missing files: %w", err)
		}
	} else {
		scan = scanBudget
	}
	rows, err := db.SQL.QueryContext(ctx, `SELECT `+fileColumns(db, "")+where+` ORDER BY `+q("uid")+` LIMIT `+fmt.Sprint(scan),
		a.Values()...)
	if err != nil {
		return tool.Result{}, fmt.Errorf("read missing files: %w", err)
	}
	found, err := scanFiles(rows, false)
	if err != nil {
		return tool.Result{}, err
	}
	var own []fileRow
	for _, f := range found {
		if visible(fa, f) {
			own = append(own, f)
		}
	}
	if total < 0 {
		total = int64(len(own))
	}
	if total == 0 {
		return tool.Text("No indexed file is marked missing."), nil
	}
	var b strings.Builder
	if call.Actor.Admin {
		fmt.Fprintf(&b, "%d file(s) marked missing", total)
	} else {
		fmt.Fprintf(&b, "%d file(s) inside your file mounts marked missing", total)
		if len(found) == scanBudget {
			fmt.Fprintf(&b, " among the first %d missing files", scanBudget)
		}
	}
	b.WriteString(":\n")
	for i, f := range own {
		if int64(i) == limit {
			break
		}
		fmt.Fprintf(&b, "- [%d] %s (%s)\n", f.uid, clean(f.combined(), 300), clean(f.mime, 80))
	}
	if shown := min(int64(len(own)), limit); total > shown {
		fmt.Fprintf(&b, "… %d more not shown.\n", total-shown)
	}
	return tool.Text(strings.TrimRight(b.String(), "\n")), nil
}

// maxReferences caps get_fal_references.
const maxReferences = 50

type references struct{ env }

func (t *references) Spec() tool.Spec {
	return spec("get_fal_references",
		"Where one file (sys_file uid from search_fal_files or browse_fal_folder) is used: its file references "+
			"(sys_file_reference) as `table:uid (field f)`, marked [hidden] when the reference is hidden; at most 50. "+
			"Editors see only references from records they may read, on pages they may see.",
		`{"type":"object","properties":{`+
			`"uid":{"type":"integer","minimum":1,"description":"The file's sys_file uid."}`+
			`},"required":["uid"],"additionalProperties":false}`)
}

func (t *references) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	if call.Actor == nil {
		return denyUser(), nil
	}
	uid, given, err := tool.ArgInt(args, "uid", 0, 1, 1<<53)
	if err != nil {
		return refuse(err), nil
	}
	if !given {
		return tool.Errorf("Argument uid is required."), nil
	}
	fa, err := t.access(ctx, call.Actor)
	if err != nil {
		return tool.Result{}, err
	}
	f, err := t.fileByUID(ctx, uid)
	if err != nil {
		return tool.Result{}, err
	}
	if f == nil || !visible(fa, *f) {
		return tool.Errorf("%s", DeniedFile), nil
	}
	db := t.site.DB
	q := func(s string) string { return db.MustQuote(s) }
	a := db.NewArgs()
	stmt := `SELECT ` + q("uid_foreign") + `, ` + q("pid") + `, ` + q("tablenames") + `, ` + q("fieldname") + `, ` +
		q("hidden") + `, ` + q("sys_language_uid") + ` FROM ` + q("sys_file_reference") + ` WHERE ` + q("uid_local") + ` = ` +
		a.Add(uid) + ` AND ` + q("deleted") + ` = 0`
	if ok, err := t.site.HasColumn(ctx, "sys_file_reference", "t3ver_wsid"); err != nil {
		return tool.Result{}, err
	} else if ok {
		stmt += ` AND ` + q("t3ver_wsid") + ` = 0`
	}
	stmt += ` ORDER BY ` + q("tablenames") + `, ` + q("uid_foreign") + `, ` + q("uid") + ` LIMIT ` + fmt.Sprint(scanBudget)
	rows, err := db.SQL.QueryContext(ctx, stmt, a.Values()...)
	if err != nil {
		return tool.Result{}, fmt.Errorf("read sys_file_reference: %w", err)
	}
	type ref struct {
		table, field     string
		foreign, pid     int64
		hidden, language int64
	}
	var refs []ref
	for rows.Next() {
		var r ref
		var table, field *string
		var foreign, pid, hidden, lang *int64
		if err := rows.Scan(&foreign, &pid, &table, &field, &hidden, &lang); err != nil {
			rows.Close()
			return tool.Result{}, fmt.Errorf("read sys_file_reference: %w", err)
		}
		r.table, r.field = derefS(table), derefS(field)
		r.foreign, r.pid, r.hidden, r.language = deref(foreign), deref(pid), deref(hidden), deref(lang)
		refs = append(refs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return tool.Result{}, fmt.Errorf("read sys_file_reference: %w", err)
	}
	filter := readpolicy.NewRowFilter(t.site, t.policy, call.Actor)
	var lines []string
	for _, r := range refs {
		if !typo3.ValidIdent(r.table) || !typo3.ValidIdent(r.field) || readpolicy.IsSensitiveTable(r.table) {
			continue
		}
		if !call.Actor.Admin {
			ok, err := filter.Allow(ctx, r.table, readpolicy.Row{UID: r.foreign, PID: r.pid, Language: r.language})
			if err != nil {
				return tool.Result{}, err
			}
			if !ok {
				continue
			}
		}
		line := fmt.Sprintf("- %s:%d (field %s)", r.table, r.foreign, r.field)
		if r.hidden != 0 {
			line += " [hidden]"
		}
		lines = append(lines, line)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "File [%d] %s", f.uid, clean(f.combined(), 300))
	if len(lines) == 0 {
		b.WriteString(" has no references you may see.")
		return tool.Text(b.String()), nil
	}
	fmt.Fprintf(&b, " is referenced %d time(s):\n", len(lines))
	for i, l := range lines {
		if i == maxReferences {
			fmt.Fprintf(&b, "… %d more not shown.\n", len(lines)-maxReferences)
			break
		}
		b.WriteString(l + "\n")
	}
	return tool.Text(strings.TrimRight(b.String(), "\n")), nil
}
