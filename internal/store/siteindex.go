package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pressly/goose/v3"
)

// SiteIndex keeps t3agent's search index of the TYPO3 site: one document
// per indexed site row with its folded terms, searched with the database's
// own full-text search (FTS5 on SQLite, tsvector and GIN on PostgreSQL).
// It is a cache derived from the site database: backup, restore and copy
// leave its tables out (a restored store has no index until the next
// build), and package siteindex owns what goes in.
//
// Terms reach the store already folded (package siteindex folds case,
// diacritics and ß): every term is a run of lower-case letters and digits,
// which the store checks, so a term can be put into a MATCH or tsquery
// expression without quoting rules of its own.
//
// Several processes may share the index: document writes are idempotent
// upserts, and FinishSiteIndexSync keeps the furthest marks, so two syncs
// running at once waste work but never lose it.
type SiteIndex interface {
	// SiteIndexState returns the index's state, Ready only when a build
	// has finished since the last one began; ErrNotFound when none ever
	// began.
	SiteIndexState(ctx context.Context) (SiteIndexState, error)
	// BeginSiteIndexBuild empties the index and marks it as building (not
	// Ready) until FinishSiteIndexSync. It returns the new generation.
	BeginSiteIndexBuild(ctx context.Context) (int64, error)
	// PutSiteIndexDocs creates or replaces documents, in one transaction,
	// and adds their terms to the vocabulary.
	PutSiteIndexDocs(ctx context.Context, docs []SiteIndexDoc) error
	// DeleteSiteIndexDocs removes the documents of table with the given uids.
	DeleteSiteIndexDocs(ctx context.Context, table string, uids []int64) error
	// SiteIndexUIDs lists the uids indexed for table, ascending; never nil.
	SiteIndexUIDs(ctx context.Context, table string) ([]int64, error)
	// FinishSiteIndexSync records a finished build or sync: the marks of
	// each table (the furthest of stored and given are kept) and the time.
	// It refuses a generation other than the current one (a build began
	// meanwhile) with ErrNotFound.
	FinishSiteIndexSync(ctx context.Context, p FinishSiteIndexSyncParams) error
	// SiteIndexTerms lists the vocabulary entries with an id above
	// afterID, ascending by id; never nil.
	SiteIndexTerms(ctx context.Context, afterID int64) ([]SiteIndexTerm, error)
	// SiteIndexCandidates lists uids of table whose documents match every
	// group of p.Match (any term of the group), ascending, above AfterUID,
	// at most Limit.
	SiteIndexCandidates(ctx context.Context, p SiteIndexCandidatesParams) ([]int64, error)
	// SearchSiteIndex ranks documents by BM25 (ts_rank_cd on PostgreSQL)
	// against the terms of p, best first.
	SearchSiteIndex(ctx context.Context, p SearchSiteIndexParams) ([]SiteIndexHit, error)
}

// SiteIndexState is the state of the site index.
type SiteIndexState struct {
	Ready      bool      // false while a build runs (or after one broke off)
	BuiltFrom  time.Time // when the current generation's build began
	Generation int64
	BuiltAt    time.Time // when the last full build finished
	SyncedAt   time.Time // when the last build or sync finished
	Docs       int64     // documents indexed
	MaxTermID  int64     // the highest vocabulary id
	Tables     []SiteIndexTable
}

// SiteIndexTable is one indexed table with its sync marks: rows with a
// tstamp at or above MarkTstamp, or a uid above MarkUID, may have changed
// since the last sync.
type SiteIndexTable struct {
	Name       string
	MarkTstamp int64
	MarkUID    int64
	Docs       int64
}

// SiteIndexDoc is one indexed site row.
type SiteIndexDoc struct {
	Table    string
	UID, PID int64
	Language int
	Tstamp   int64
	// The visibility of the row as indexed, for a public-only pre-filter.
	Hidden, Deleted    bool
	StartTime, EndTime int64
	FeGroup            string
	Workspace          int64 // t3ver_wsid; 0 is live
	// Title and Body are display text (the label, the start of the text).
	Title, Body string
	// TitleTerms and BodyTerms are ranked; ExtraTerms (raw markup and
	// the like) only narrow substring searches. Each is folded terms
	// separated by single spaces.
	TitleTerms, BodyTerms, ExtraTerms string
}

// SiteIndexTerm is one vocabulary entry.
type SiteIndexTerm struct {
	ID   int64
	Term string
}

// FinishSiteIndexSyncParams are the parameters of FinishSiteIndexSync.
type FinishSiteIndexSyncParams struct {
	Generation int64
	Build      bool // a full build finished (sets BuiltAt)
	Tables     []SiteIndexTable
}

// SiteIndexCandidatesParams are the parameters of SiteIndexCandidates.
type SiteIndexCandidatesParams struct {
	Table    string
	AfterUID int64
	Match    [][]string
	Limit    int
}

// SearchSiteIndexParams are the parameters of SearchSiteIndex.
type SearchSiteIndexParams struct {
	// Terms are alternatives: a document matching any of them is ranked.
	Terms     []string
	Tables    []string // empty: every table
	Languages []int    // empty: any
	// PublicOnly keeps documents an anonymous visitor could see at Now
	// as indexed: not hidden, deleted or a workspace version, started and
	// not ended, no fe_group restriction.
	PublicOnly bool
	Now        int64
	Limit      int
}

// SiteIndexHit is one ranked document.
type SiteIndexHit struct {
	Table       string
	UID, PID    int64
	Language    int
	Score       float64 // higher is better
	Title, Body string
}

// Limits of the site index.
const (
	// MaxSiteIndexTable is the longest table name.
	MaxSiteIndexTable = 64
	// MaxSiteIndexUID is the largest uid: a document's id packs the
	// table's number above the uid's 32 bits.
	MaxSiteIndexUID = 1<<32 - 1
	// MaxSiteIndexMatchTerms bounds the terms of one query.
	MaxSiteIndexMatchTerms = 2048
)

func checkIndexTerm(t string) error {
	if t == "" || len(t) > 1024 {
		return invalid("a site index term must be 1 to 1024 bytes long")
	}
	for _, r := range t {
		if r == ' ' || r == '"' || r == '\'' || r == '\\' || r == '*' || r == ':' || r == '&' || r == '|' || r == '!' || r == '(' || r == ')' || r == '<' || r < ' ' {
			return invalid("site index term %q holds a character a term may not have", t)
		}
	}
	return nil
}

func checkIndexTerms(s string) error {
	if s == "" {
		return nil
	}
	for _, t := range strings.Split(s, " ") {
		if err := checkIndexTerm(t); err != nil {
			return err
		}
	}
	return nil
}

func checkIndexTable(t string) error {
	if t == "" || len(t) > MaxSiteIndexTable || !identPattern.MatchString(t) {
		return invalid("site index table %q is not a plain table name", t)
	}
	return nil
}

// siteDocID packs a table's number and a uid into a document id, so that
// one table's documents are one id range in uid order.
func siteDocID(no, uid int64) int64 { return no<<32 | uid }

func (s *sqlStore) pg() bool { return s.drv.Dialect() == goose.DialectPostgres }

func (s *sqlStore) SiteIndexState(ctx context.Context) (SiteIndexState, error) {
	var st SiteIndexState
	var built, synced time.Time
	var status string
	err := s.r.QueryRowContext(ctx, `SELECT generation, status, begun_at, built_at, synced_at,
		(SELECT COALESCE(MAX(id), 0) FROM site_index_terms)
		FROM site_index_state WHERE id = 1`).Scan(&st.Generation, &status, timeScanner{&st.BuiltFrom},
		nullTimeScanner{&built}, nullTimeScanner{&synced}, &st.MaxTermID)
	if errors.Is(err, sql.ErrNoRows) {
		return SiteIndexState{}, notFound("site index")
	}
	st.Ready = status == "ready"
	if err != nil {
		return SiteIndexState{}, fmt.Errorf("store: cannot read the site index state: %w", err)
	}
	st.BuiltAt, st.SyncedAt = built, synced
	st.Tables, err = queryAll(ctx, s.r, "list site index tables", "a site index table", func(r rowScanner) (SiteIndexTable, error) {
		var t SiteIndexTable
		err := r.Scan(&t.Name, &t.MarkTstamp, &t.MarkUID, &t.Docs)
		return t, err
	}, `SELECT name, mark_tstamp, mark_uid, docs FROM site_index_tables ORDER BY name`)
	if err != nil {
		return SiteIndexState{}, err
	}
	for _, t := range st.Tables {
		st.Docs += t.Docs
	}
	return st, nil
}

func (s *sqlStore) BeginSiteIndexBuild(ctx context.Context) (int64, error) {
	var gen int64
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		stmts := []string{`DELETE FROM site_index_docs`, `DELETE FROM site_index_terms`, `DELETE FROM site_index_tables`}
		if !s.pg() {
			// The contentless FTS table is emptied with its own command.
			stmts = append(stmts, `INSERT INTO site_index_fts (site_index_fts) VALUES ('delete-all')`)
		}
		for _, q := range stmts {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return tx.QueryRowContext(ctx, `
			INSERT INTO site_index_state (id, generation, status, begun_at, built_at, synced_at, updated_at)
			VALUES (1, 1, 'building', $1, NULL, NULL, $1)
			ON CONFLICT (id) DO UPDATE SET generation = site_index_state.generation + 1, status = 'building',
				begun_at = excluded.begun_at, built_at = NULL, synced_at = NULL, updated_at = excluded.updated_at
			RETURNING generation`, s.stamp()).Scan(&gen)
	})
	if err != nil {
		return 0, fmt.Errorf("store: cannot begin a site index build: %w", err)
	}
	return gen, nil
}

// tableNo returns the number of table in the index, registering it.
func (s *sqlStore) tableNo(ctx context.Context, tx *sql.Tx, table string, cache map[string]int64) (int64, error) {
	if no, ok := cache[table]; ok {
		return no, nil
	}
	var no int64
	err := tx.QueryRowContext(ctx, `INSERT INTO site_index_tables (name, mark_tstamp, mark_uid, docs) VALUES ($1, 0, 0, 0)
		ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING no`, table).Scan(&no)
	if err != nil {
		return 0, err
	}
	cache[table] = no
	return no, nil
}

func (s *sqlStore) PutSiteIndexDocs(ctx context.Context, docs []SiteIndexDoc) error {
	if len(docs) == 0 {
		return nil
	}
	vocab := map[string]bool{}
	for _, d := range docs {
		if err := checkIndexTable(d.Table); err != nil {
			return err
		}
		if d.UID < 1 || d.UID > MaxSiteIndexUID {
			return invalid("site index uid %d is out of range", d.UID)
		}
		for _, ts := range []string{d.TitleTerms, d.BodyTerms, d.ExtraTerms} {
			if err := checkIndexTerms(ts); err != nil {
				return err
			}
			for _, t := range strings.Fields(ts) {
				vocab[t] = true
			}
		}
	}
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		nos := map[string]int64{}
		ids := make([]int64, len(docs))
		byTable := map[string][]int64{}
		for i, d := range docs {
			no, err := s.tableNo(ctx, tx, d.Table, nos)
			if err != nil {
				return err
			}
			ids[i] = siteDocID(no, d.UID)
			byTable[d.Table] = append(byTable[d.Table], ids[i])
		}
		for t, tids := range byTable {
			gone, err := s.deleteDocs(ctx, tx, tids)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE site_index_tables SET docs = docs + $1 WHERE name = $2`,
				int64(len(tids))-gone, t); err != nil {
				return err
			}
		}
		if err := s.insertDocs(ctx, tx, docs, ids, nos); err != nil {
			return err
		}
		return s.addTerms(ctx, tx, vocab)
	})
	if err != nil {
		return fmt.Errorf("store: cannot save site index documents: %w", err)
	}
	return nil
}

// insertDocs inserts documents whose ids are free: on PostgreSQL many per
// statement (a round trip each), on SQLite one prepared statement per row
// and FTS entry (in process, so cheap).
func (s *sqlStore) insertDocs(ctx context.Context, tx *sql.Tx, docs []SiteIndexDoc, ids []int64, nos map[string]int64) error {
	const cols = `id, tbl, uid, pid, lang, tstamp, hidden, deleted, starttime, endtime, fe_group, workspace, title, body`
	row := func(i int) []any {
		d := docs[i]
		return []any{ids[i], nos[d.Table], d.UID, d.PID, d.Language, d.Tstamp, d.Hidden, d.Deleted, d.StartTime, d.EndTime,
			d.FeGroup, d.Workspace, d.Title, d.Body}
	}
	if s.pg() {
		const per = 200
		for at := 0; at < len(docs); at += per {
			end := min(at+per, len(docs))
			var b strings.Builder
			b.WriteString(`INSERT INTO site_index_docs (` + cols + `, terms) VALUES `)
			var args []any
			for i := at; i < end; i++ {
				if i > at {
					b.WriteString(", ")
				}
				vals := append(row(i), docs[i].TitleTerms, docs[i].BodyTerms, docs[i].ExtraTerms)
				ph := make([]string, len(vals))
				for j := range vals {
					ph[j] = fmt.Sprintf("$%d", len(args)+j+1)
				}
				args = append(args, vals...)
				n := len(ph)
				fmt.Fprintf(&b, "(%s, setweight(to_tsvector('simple', %s), 'A') || setweight(to_tsvector('simple', %s), 'B') || setweight(to_tsvector('simple', %s), 'D'))",
					strings.Join(ph[:n-3], ", "), ph[n-3], ph[n-2], ph[n-1])
			}
			if _, err := tx.ExecContext(ctx, b.String(), args...); err != nil {
				return err
			}
		}
		return nil
	}
	ins, err := tx.PrepareContext(ctx, `INSERT INTO site_index_docs (`+cols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`)
	if err != nil {
		return err
	}
	defer ins.Close()
	fts, err := tx.PrepareContext(ctx, `INSERT INTO site_index_fts (rowid, title, body, extra) VALUES ($1, $2, $3, $4)`)
	if err != nil {
		return err
	}
	defer fts.Close()
	for i, d := range docs {
		if _, err := ins.ExecContext(ctx, row(i)...); err != nil {
			return err
		}
		if _, err := fts.ExecContext(ctx, ids[i], d.TitleTerms, d.BodyTerms, d.ExtraTerms); err != nil {
			return err
		}
	}
	return nil
}

// deleteDocs removes documents by id (on SQLite their FTS entries too)
// and reports how many existed.
func (s *sqlStore) deleteDocs(ctx context.Context, tx *sql.Tx, ids []int64) (int64, error) {
	var gone int64
	if s.pg() {
		const per = 500
		for at := 0; at < len(ids); at += per {
			chunk := ids[at:min(at+per, len(ids))]
			ph := make([]string, len(chunk))
			args := make([]any, len(chunk))
			for i, id := range chunk {
				ph[i] = fmt.Sprintf("$%d", i+1)
				args[i] = id
			}
			res, err := tx.ExecContext(ctx, `DELETE FROM site_index_docs WHERE id IN (`+strings.Join(ph, ", ")+`)`, args...)
			if err != nil {
				return 0, err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return 0, err
			}
			gone += n
		}
		return gone, nil
	}
	del, err := tx.PrepareContext(ctx, `DELETE FROM site_index_docs WHERE id = $1`)
	if err != nil {
		return 0, err
	}
	defer del.Close()
	fts, err := tx.PrepareContext(ctx, `DELETE FROM site_index_fts WHERE rowid = $1`)
	if err != nil {
		return 0, err
	}
	defer fts.Close()
	for _, id := range ids {
		res, err := del.ExecContext(ctx, id)
		if err != nil {
			return 0, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, err
		}
		if n > 0 {
			if _, err := fts.ExecContext(ctx, id); err != nil {
				return 0, err
			}
			gone += n
		}
	}
	return gone, nil
}

// addTerms adds the terms the vocabulary lacks, many per statement.
func (s *sqlStore) addTerms(ctx context.Context, tx *sql.Tx, vocab map[string]bool) error {
	terms := make([]string, 0, len(vocab))
	for t := range vocab {
		terms = append(terms, t)
	}
	const per = 200
	for len(terms) > 0 {
		n := min(per, len(terms))
		var b strings.Builder
		b.WriteString(`INSERT INTO site_index_terms (term) VALUES `)
		args := make([]any, n)
		for i := range n {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "($%d)", i+1)
			args[i] = terms[i]
		}
		b.WriteString(` ON CONFLICT (term) DO NOTHING`)
		if _, err := tx.ExecContext(ctx, b.String(), args...); err != nil {
			return err
		}
		terms = terms[n:]
	}
	return nil
}

func (s *sqlStore) DeleteSiteIndexDocs(ctx context.Context, table string, uids []int64) error {
	if err := checkIndexTable(table); err != nil {
		return err
	}
	if len(uids) == 0 {
		return nil
	}
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		var no int64
		err := tx.QueryRowContext(ctx, `SELECT no FROM site_index_tables WHERE name = $1`, table).Scan(&no)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		ids := make([]int64, 0, len(uids))
		for _, uid := range uids {
			if uid >= 1 && uid <= MaxSiteIndexUID {
				ids = append(ids, siteDocID(no, uid))
			}
		}
		gone, err := s.deleteDocs(ctx, tx, ids)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE site_index_tables SET docs = docs - $1 WHERE no = $2`, gone, no)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: cannot delete site index documents of %s: %w", table, err)
	}
	return nil
}

func (s *sqlStore) SiteIndexUIDs(ctx context.Context, table string) ([]int64, error) {
	if err := checkIndexTable(table); err != nil {
		return nil, err
	}
	return queryAll(ctx, s.r, "list indexed uids of "+table, "a uid", func(r rowScanner) (int64, error) {
		var v int64
		err := r.Scan(&v)
		return v, err
	}, `SELECT d.uid FROM site_index_docs d JOIN site_index_tables t ON t.no = d.tbl WHERE t.name = $1 ORDER BY d.uid`, table)
}

func (s *sqlStore) FinishSiteIndexSync(ctx context.Context, p FinishSiteIndexSyncParams) error {
	for _, t := range p.Tables {
		if err := checkIndexTable(t.Name); err != nil {
			return err
		}
	}
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		var gen int64
		lock := ""
		if s.pg() {
			lock = " FOR UPDATE"
		}
		err := tx.QueryRowContext(ctx, `SELECT generation FROM site_index_state WHERE id = 1`+lock).Scan(&gen)
		if errors.Is(err, sql.ErrNoRows) || err == nil && gen != p.Generation {
			return notFound("site index generation %d", p.Generation)
		}
		if err != nil {
			return err
		}
		nos := map[string]int64{}
		for _, t := range p.Tables {
			if _, err := s.tableNo(ctx, tx, t.Name, nos); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE site_index_tables SET
				mark_tstamp = CASE WHEN mark_tstamp > $1 THEN mark_tstamp ELSE $1 END,
				mark_uid = CASE WHEN mark_uid > $2 THEN mark_uid ELSE $2 END WHERE name = $3`,
				t.MarkTstamp, t.MarkUID, t.Name); err != nil {
				return err
			}
		}
		now := s.stamp()
		q := `UPDATE site_index_state SET status = 'ready', synced_at = $1, updated_at = $1 WHERE id = 1`
		if p.Build {
			q = `UPDATE site_index_state SET status = 'ready', built_at = $1, synced_at = $1, updated_at = $1 WHERE id = 1`
		}
		_, err = tx.ExecContext(ctx, q, now)
		return err
	})
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return err
		}
		return fmt.Errorf("store: cannot finish the site index sync: %w", err)
	}
	return nil
}

func (s *sqlStore) SiteIndexTerms(ctx context.Context, afterID int64) ([]SiteIndexTerm, error) {
	return queryAll(ctx, s.r, "list the site index vocabulary", "a term", func(r rowScanner) (SiteIndexTerm, error) {
		var t SiteIndexTerm
		err := r.Scan(&t.ID, &t.Term)
		return t, err
	}, `SELECT id, term FROM site_index_terms WHERE id > $1 ORDER BY id`, afterID)
}

// matchExpr renders AND-of-OR groups of checked terms for FTS5 MATCH or
// to_tsquery('simple', …).
func (s *sqlStore) matchExpr(groups [][]string, columns string) (string, error) {
	and, or := " AND ", " OR "
	if s.pg() {
		and, or = " & ", " | "
	}
	n := 0
	parts := make([]string, 0, len(groups))
	for _, g := range groups {
		if len(g) == 0 {
			return "", invalid("a site index match group is empty")
		}
		alts := make([]string, len(g))
		for i, t := range g {
			if err := checkIndexTerm(t); err != nil {
				return "", err
			}
			n++
			if s.pg() {
				alts[i] = "'" + t + "'" + columns
			} else {
				alts[i] = `"` + t + `"`
			}
		}
		parts = append(parts, "("+strings.Join(alts, or)+")")
	}
	if n == 0 || n > MaxSiteIndexMatchTerms {
		return "", invalid("a site index query needs 1 to %d terms", MaxSiteIndexMatchTerms)
	}
	expr := strings.Join(parts, and)
	if !s.pg() && columns != "" {
		expr = columns + " : (" + expr + ")"
	}
	return expr, nil
}

func (s *sqlStore) SiteIndexCandidates(ctx context.Context, p SiteIndexCandidatesParams) ([]int64, error) {
	if err := checkIndexTable(p.Table); err != nil {
		return nil, err
	}
	if p.Limit < 1 {
		return nil, invalid("site index candidates need a limit of at least 1")
	}
	expr, err := s.matchExpr(p.Match, "")
	if err != nil {
		return nil, err
	}
	var no int64
	err = s.r.QueryRowContext(ctx, `SELECT no FROM site_index_tables WHERE name = $1`, p.Table).Scan(&no)
	if errors.Is(err, sql.ErrNoRows) {
		return []int64{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: cannot search the site index: %w", err)
	}
	lo, hi := siteDocID(no, max(p.AfterUID, 0)), siteDocID(no+1, 0)
	q := `SELECT rowid FROM site_index_fts WHERE site_index_fts MATCH $1 AND rowid > $2 AND rowid < $3 ORDER BY rowid LIMIT $4`
	if s.pg() {
		q = `SELECT id FROM site_index_docs WHERE terms @@ to_tsquery('simple', $1) AND id > $2 AND id < $3 ORDER BY id LIMIT $4`
	}
	ids, err := queryAll(ctx, s.r, "search the site index", "a candidate", func(r rowScanner) (int64, error) {
		var v int64
		err := r.Scan(&v)
		return v & MaxSiteIndexUID, err
	}, q, expr, lo, hi, p.Limit)
	return ids, err
}

func (s *sqlStore) SearchSiteIndex(ctx context.Context, p SearchSiteIndexParams) ([]SiteIndexHit, error) {
	if p.Limit < 1 {
		return nil, invalid("a site index search needs a limit of at least 1")
	}
	for _, t := range p.Tables {
		if err := checkIndexTable(t); err != nil {
			return nil, err
		}
	}
	cols := "{title body}"
	if s.pg() {
		cols = ":AB"
	}
	expr, err := s.matchExpr([][]string{p.Terms}, cols)
	if err != nil {
		return nil, err
	}
	args := []any{expr}
	add := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	var where []string
	if len(p.Tables) > 0 {
		ph := make([]string, len(p.Tables))
		for i, t := range p.Tables {
			ph[i] = add(t)
		}
		where = append(where, "t.name IN ("+strings.Join(ph, ", ")+")")
	}
	if len(p.Languages) > 0 {
		ph := make([]string, len(p.Languages))
		for i, l := range p.Languages {
			ph[i] = add(l)
		}
		where = append(where, "d.lang IN ("+strings.Join(ph, ", ")+")")
	}
	if p.PublicOnly {
		now := add(p.Now)
		where = append(where, "d.hidden = "+add(false)+" AND d.deleted = "+add(false)+" AND d.workspace = 0",
			"d.starttime <= "+now, "(d.endtime = 0 OR d.endtime > "+now+")", "d.fe_group IN ('', '0')")
	}
	cond := ""
	if len(where) > 0 {
		cond = " AND " + strings.Join(where, " AND ")
	}
	limit := add(p.Limit)
	var q string
	if s.pg() {
		q = `SELECT t.name, d.uid, d.pid, d.lang, ts_rank_cd(d.terms, query) AS score, d.title, d.body
			FROM site_index_docs d JOIN site_index_tables t ON t.no = d.tbl, to_tsquery('simple', $1) query
			WHERE d.terms @@ query` + cond + ` ORDER BY score DESC, d.id LIMIT ` + limit
	} else {
		q = `SELECT t.name, d.uid, d.pid, d.lang, -bm25(site_index_fts, 4.0, 1.0, 0.0) AS score, d.title, d.body
			FROM site_index_fts JOIN site_index_docs d ON d.id = site_index_fts.rowid JOIN site_index_tables t ON t.no = d.tbl
			WHERE site_index_fts MATCH $1` + cond + ` ORDER BY score DESC, d.id LIMIT ` + limit
	}
	return queryAll(ctx, s.r, "search the site index", "a hit", func(r rowScanner) (SiteIndexHit, error) {
		var h SiteIndexHit
		err := r.Scan(&h.Table, &h.UID, &h.PID, &h.Language, &h.Score, &h.Title, &h.Body)
		return h, err
	}, q, args...)
}
