package demowrite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"

	"github.com/t3agent/t3agent/internal/typo3"
)

// sys_history action types and sys_log actions of TYPO3's DataHandler.
const (
	historyInsert = 1
	historyUpdate = 2
	logInsert     = 1
	logUpdate     = 2
)

// col is one column and its value, in statement order.
type col struct {
	name  string
	value any
}

func (s *Server) q(name string) string { return s.db.MustQuote(name) }

// insert adds a row and returns its uid.
func (s *Server) insert(ctx context.Context, tx *sql.Tx, table string, cols []col) (int64, error) {
	a := s.db.NewArgs()
	names, marks := make([]string, len(cols)), make([]string, len(cols))
	for i, c := range cols {
		names[i], marks[i] = s.q(c.name), a.Add(c.value)
	}
	q := "INSERT INTO " + s.q(table) + " (" + strings.Join(names, ", ") + ") VALUES (" + strings.Join(marks, ", ") + ")"
	if s.db.Dialect == typo3.DialectPostgres {
		var id int64
		err := tx.QueryRowContext(ctx, q+" RETURNING "+s.q("uid"), a.Values()...).Scan(&id)
		return id, err
	}
	res, err := tx.ExecContext(ctx, q, a.Values()...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// entry is what one write records in sys_history and sys_log.
type entry struct {
	user      *typo3.BackendUser
	now       int64
	table     string
	uid, pid  int64
	title     string
	pageTitle string
	insert    bool
	data      map[string]any
}

// record writes the sys_history row and the sys_log row of a write, the
// way DataHandler does, and returns the history uid.
func (s *Server) record(ctx context.Context, tx *sql.Tx, e entry) (int64, error) {
	action, logAction, verb := historyUpdate, logUpdate, "updated"
	if e.insert {
		action, logAction, verb = historyInsert, logInsert, "inserted"
	}
	hist, err := s.insert(ctx, tx, "sys_history", []col{
		{"tstamp", e.now}, {"actiontype", action}, {"usertype", "BE"}, {"userid", e.user.UID},
		{"recuid", e.uid}, {"tablename", e.table}, {"history_data", jsonText(e.data)}, {"workspace", 0}, {"correlation_id", ""},
	})
	if err != nil {
		return 0, err
	}
	logData := map[string]any{"title": e.title, "table": e.table, "uid": e.uid, "pageTitle": e.pageTitle, "pid": e.pid}
	if !e.insert {
		logData["history"] = strconv.FormatInt(hist, 10)
	}
	_, err = s.insert(ctx, tx, "sys_log", []col{
		{"tstamp", e.now}, {"userid", e.user.UID}, {"action", logAction}, {"recuid", e.uid}, {"tablename", e.table},
		{"recpid", e.pid}, {"error", 0}, {"details", "Record '{title}' ({table}:{uid}) was " + verb + " on page '{pageTitle}' ({pid})"},
		{"type", 1}, {"channel", "content"}, {"details_nr", 0}, {"IP", "127.0.0.1"}, {"log_data", jsonText(logData)},
		{"event_pid", e.pid}, {"workspace", 0}, {"request_id", requestID()}, {"time_micro", float64(s.now().UnixMicro()) / 1e6},
		{"level", "info"},
	})
	return hist, err
}

// requestID is a 13-character id like TYPO3's request ids.
func requestID() string {
	b := make([]byte, 7)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)[:13]
}

type updateParams struct {
	user  *typo3.BackendUser
	table string
	uid   int64
	pid   int64
	// label is the record's title column, for the log; titleOverride
	// replaces it when the table has none worth showing.
	label         string
	titleOverride string
	values        map[string]string
	order         []string
	pageTitle     string
}

type updateResult struct {
	changed  []string
	history  int64
	title    string
	old, new map[string]any
}

// update changes the fields of one record whose value differs, sets its
// tstamp and records the change; nothing is written when nothing
// differs, as DataHandler does.
func (s *Server) update(ctx context.Context, p updateParams) (updateResult, error) {
	tx, err := s.db.SQL.BeginTx(ctx, nil)
	if err != nil {
		return updateResult{}, err
	}
	defer func() { _ = tx.Rollback() }()
	cols := append([]string{}, p.order...)
	if p.label != "" {
		cols = append(cols, p.label)
	}
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = s.q(c)
	}
	a := s.db.NewArgs()
	q := "SELECT " + strings.Join(quoted, ", ") + " FROM " + s.q(p.table) + " WHERE " + s.q("uid") + " = " + a.Add(p.uid)
	if p.table == "pages" || p.table == "tt_content" {
		q += " AND " + s.q("deleted") + " = 0"
	}
	if s.db.Dialect != typo3.DialectSQLite {
		q += " FOR UPDATE" // SQLite's write transaction already holds the lock
	}
	cur := make([]sql.NullString, len(cols))
	dest := make([]any, len(cols))
	for i := range cur {
		dest[i] = &cur[i]
	}
	if err := tx.QueryRowContext(ctx, q, a.Values()...).Scan(dest...); errors.Is(err, sql.ErrNoRows) {
		return updateResult{}, refuse("Record %s:%d does not exist.", p.table, p.uid)
	} else if err != nil {
		return updateResult{}, err
	}
	res := updateResult{old: map[string]any{}, new: map[string]any{}, title: p.titleOverride}
	if res.title == "" && p.label != "" {
		res.title = cur[len(cols)-1].String
	}
	now := s.now().Unix()
	set := s.db.NewArgs()
	var assignments []string
	for i, c := range p.order {
		v := p.values[c]
		if cur[i].String == v {
			continue
		}
		res.changed = append(res.changed, c)
		res.old[c], res.new[c] = cur[i].String, v
		assignments = append(assignments, s.q(c)+" = "+set.Add(v))
	}
	if len(res.changed) == 0 {
		return res, tx.Commit()
	}
	if v, ok := res.new[p.label].(string); ok && p.titleOverride == "" {
		res.title = v
	}
	assignments = append(assignments, s.q("tstamp")+" = "+set.Add(now))
	upd := "UPDATE " + s.q(p.table) + " SET " + strings.Join(assignments, ", ") + " WHERE " + s.q("uid") + " = " + set.Add(p.uid)
	if _, err := tx.ExecContext(ctx, upd, set.Values()...); err != nil {
		return updateResult{}, err
	}
	pageTitle := p.pageTitle
	if p.table == "pages" {
		pageTitle = res.title
	}
	res.history, err = s.record(ctx, tx, entry{user: p.user, now: now, table: p.table, uid: p.uid, pid: p.pid, title: res.title,
		pageTitle: pageTitle, data: map[string]any{"oldRecord": res.old, "newRecord": res.new}})
	if err != nil {
		return updateResult{}, err
	}
	return res, tx.Commit()
}

type contentParams struct {
	user         *typo3.BackendUser
	page         *typo3.Page
	ctype        string
	header, body string
	colPos, lang int64
}

type insertResult struct{ uid, history int64 }

// insertContent adds a hidden content element at the bottom of its
// column and records it.
func (s *Server) insertContent(ctx context.Context, p contentParams) (insertResult, error) {
	tx, err := s.db.SQL.BeginTx(ctx, nil)
	if err != nil {
		return insertResult{}, err
	}
	defer func() { _ = tx.Rollback() }()
	a := s.db.NewArgs()
	var sorting int64
	q := "SELECT COALESCE(MAX(" + s.q("sorting") + "), 0) FROM " + s.q("tt_content") + " WHERE " + s.q("pid") + " = " + a.Add(p.page.UID) +
		" AND " + s.q("colPos") + " = " + a.Add(p.colPos) + " AND " + s.q("sys_language_uid") + " = " + a.Add(p.lang) +
		" AND " + s.q("deleted") + " = 0"
	if err := tx.QueryRowContext(ctx, q, a.Values()...).Scan(&sorting); err != nil {
		return insertResult{}, err
	}
	now := s.now().Unix()
	cols := []col{
		{"pid", p.page.UID}, {"tstamp", now}, {"crdate", now}, {"hidden", 1}, {"sorting", sorting + contentSortingStep},
		{"CType", p.ctype}, {"header", p.header}, {"bodytext", p.body}, {"colPos", p.colPos}, {"sys_language_uid", p.lang},
	}
	uid, err := s.insert(ctx, tx, "tt_content", cols)
	if err != nil {
		return insertResult{}, err
	}
	data := map[string]any{"uid": uid}
	for _, c := range cols {
		data[c.name] = c.value
	}
	hist, err := s.record(ctx, tx, entry{user: p.user, now: now, table: "tt_content", uid: uid, pid: p.page.UID, title: p.header,
		pageTitle: p.page.Title, insert: true, data: data})
	if err != nil {
		return insertResult{}, err
	}
	return insertResult{uid: uid, history: hist}, tx.Commit()
}

// fileMetadata finds the metadata record of a file in a language, and
// the file's name.
func (s *Server) fileMetadata(ctx context.Context, file, lang int64) (int64, string, error) {
	a := s.db.NewArgs()
	var name sql.NullString
	err := s.db.SQL.QueryRowContext(ctx, "SELECT "+s.q("name")+" FROM "+s.q("sys_file")+" WHERE "+s.q("uid")+" = "+a.Add(file), a.Values()...).Scan(&name)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, "", refuse("File %d does not exist.", file)
	}
	if err != nil {
		return 0, "", err
	}
	a = s.db.NewArgs()
	var meta int64
	err = s.db.SQL.QueryRowContext(ctx, "SELECT "+s.q("uid")+" FROM "+s.q("sys_file_metadata")+" WHERE "+s.q("file")+" = "+a.Add(file)+
		" AND "+s.q("sys_language_uid")+" = "+a.Add(lang)+" ORDER BY "+s.q("uid")+" LIMIT 1", a.Values()...).Scan(&meta)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, "", refuse("File %d has no metadata in language %d.", file, lang)
	}
	return meta, name.String, err
}
