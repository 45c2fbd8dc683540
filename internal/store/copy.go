package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/t3agent/t3agent/internal/store/pgstore"
	"github.com/t3agent/t3agent/internal/store/sqlitestore"
)

// CopyParams are the parameters of Copy.
type CopyParams struct {
	// From is the store to copy (a DSN as Open takes it). It is only
	// read: a SQLite file is opened read-only, a PostgreSQL database in
	// one read-only snapshot.
	From string
	// To is the store to copy into: a new SQLite file or an empty
	// PostgreSQL database. It is migrated to the source's schema version
	// first; rows other than the ones the migrations write make it
	// refused.
	To string
	// Logger receives one line per table copied; nil discards them.
	Logger *slog.Logger
}

// CopyReport is what Copy did.
type CopyReport struct {
	// SchemaVersion both stores are at.
	SchemaVersion int64 `json:"schemaVersion"`
	// Tables in the order they were copied, with the rows and checksum
	// that both stores were verified to have.
	Tables   []TableSum    `json:"tables"`
	Duration time.Duration `json:"durationNs"`
}

// Rows is the number of rows copied.
func (r CopyReport) Rows() int64 {
	var n int64
	for _, t := range r.Tables {
		n += t.Rows
	}
	return n
}

// copyBatchParams bounds the parameters of one INSERT, below both
// PostgreSQL's (65535) and SQLite's (32766) limit.
const copyBatchParams = 30000

// copyBatchRows bounds the rows of one INSERT.
const copyBatchRows = 500

// Copy copies every table of one store into another, with its ids, its
// sealed values as they are (they open with the same master key, since
// they are bound to ids that do not change) and its sequences set past
// the highest id, in one transaction on the target. The tables are the
// ones the source's catalog lists, in the order of their references.
// Before it commits, Copy reads the target back and compares every
// table's row count and checksum with the source's; on any difference
// the target is left as it was.
//
// It is the way from SQLite to PostgreSQL (and back): the source is left
// untouched, and may go on serving while it is read.
func Copy(ctx context.Context, p CopyParams) (CopyReport, error) {
	start := time.Now()
	log := p.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if sameStore(p.From, p.To) {
		return CopyReport{}, errors.New("store: the source and the target of a copy are the same database")
	}
	src, err := openSource(ctx, p.From)
	if err != nil {
		return CopyReport{}, err
	}
	defer src.close()
	version, err := src.schemaVersion(ctx)
	if err != nil {
		return CopyReport{}, err
	}
	dst, err := openTarget(ctx, p.To, version, log)
	if err != nil {
		return CopyReport{}, err
	}
	defer dst.close()

	srcTx, err := src.db.BeginTx(ctx, src.snapshot())
	if err != nil {
		return CopyReport{}, fmt.Errorf("store: cannot read %s: %w", src.desc, err)
	}
	defer func() { _ = srcTx.Rollback() }()
	dstTx, err := dst.db.BeginTx(ctx, nil)
	if err != nil {
		return CopyReport{}, fmt.Errorf("store: cannot write %s: %w", dst.desc, err)
	}
	defer func() { _ = dstTx.Rollback() }()

	tables, err := matchCatalogs(ctx, src, srcTx, dst, dstTx)
	if err != nil {
		return CopyReport{}, err
	}
	seeded, err := seededTables(dst.migrations, version)
	if err != nil {
		return CopyReport{}, fmt.Errorf("store: cannot read the migrations: %w", err)
	}
	if err := checkEmpty(ctx, dstTx, dst, tables, seeded); err != nil {
		return CopyReport{}, err
	}
	c := copier{src: src, srcTx: srcTx, dst: dst, dstTx: dstTx, log: log}
	rep := CopyReport{SchemaVersion: version}
	if err := c.triggers(ctx, tables, false); err != nil {
		return CopyReport{}, err
	}
	for _, t := range tables {
		if seeded[t.target.name] {
			if _, err := dstTx.ExecContext(ctx, "DELETE FROM "+mustQuote(t.target.name)); err != nil {
				return CopyReport{}, fmt.Errorf("store: cannot clear table %s of %s: %w", t.target.name, dst.desc, err)
			}
		}
	}
	for _, t := range tables {
		sum, err := c.table(ctx, t)
		if err != nil {
			return CopyReport{}, err
		}
		rep.Tables = append(rep.Tables, sum)
		log.InfoContext(ctx, "store table copied", "table", sum.Table, "rows", sum.Rows)
	}
	if err := c.triggers(ctx, tables, true); err != nil {
		return CopyReport{}, err
	}
	for _, t := range tables {
		if err := c.sequence(ctx, t); err != nil {
			return CopyReport{}, err
		}
	}
	// Read back what the target now holds, in the same transaction.
	for i, t := range tables {
		got, err := sumTable(ctx, dstTx, t.target)
		if err != nil {
			return CopyReport{}, err
		}
		if want := rep.Tables[i]; got != want {
			return CopyReport{}, fmt.Errorf("store: the copy of table %s does not match its source (%d rows, checksum %.12s… against %d rows, %.12s…); nothing was written",
				t.target.name, got.Rows, got.Checksum, want.Rows, want.Checksum)
		}
	}
	if err := dstTx.Commit(); err != nil {
		return CopyReport{}, fmt.Errorf("store: cannot commit the copy into %s: %w", dst.desc, err)
	}
	rep.Duration = time.Since(start)
	return rep, nil
}

// Inventory lists every data table of the store at dsn with its row
// count and checksum, read in one snapshot without writing anything.
// Two stores hold the same data exactly when their inventories are
// equal, whatever their databases.
func Inventory(ctx context.Context, dsn string) ([]TableSum, error) {
	src, err := openSource(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer src.close()
	tx, err := src.db.BeginTx(ctx, src.snapshot())
	if err != nil {
		return nil, fmt.Errorf("store: cannot read %s: %w", src.desc, err)
	}
	defer func() { _ = tx.Rollback() }()
	tables, err := readCatalog(ctx, tx, src.dialect)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(tables, func(a, b table) int { return strings.Compare(a.name, b.name) })
	out := make([]TableSum, 0, len(tables))
	for _, t := range tables {
		s, err := sumTable(ctx, tx, t)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// endpoint is one side of a copy: a pool on the database and what is
// known of it.
type endpoint struct {
	dialect    goose.Dialect
	db         *sql.DB
	desc       string
	migrations fs.FS
	close      func() error
}

// snapshot are the options of the source's read transaction: one
// consistent view of every table.
func (e *endpoint) snapshot() *sql.TxOptions {
	if e.dialect == goose.DialectPostgres {
		return &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	}
	return &sql.TxOptions{ReadOnly: true}
}

// openSource opens the store at dsn for reading only.
func openSource(ctx context.Context, dsn string) (*endpoint, error) {
	kind, target, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	if kind == kindPostgres {
		drv, err := pgstore.Open(ctx, target)
		if err != nil {
			return nil, err
		}
		return &endpoint{dialect: goose.DialectPostgres, db: drv.Reader(), desc: drv.Describe(), migrations: drv.Migrations(), close: drv.Close}, nil
	}
	db, err := sqlitestore.OpenReadOnly(ctx, target)
	if err != nil {
		return nil, err
	}
	abs, _ := filepath.Abs(target)
	return &endpoint{dialect: goose.DialectSQLite3, db: db, desc: "SQLite database " + abs, migrations: sqlitestore.MigrationFiles(), close: db.Close}, nil
}

// schemaVersion is the source's schema version; a database without
// t3agent's schema, or with a newer one, is refused.
func (e *endpoint) schemaVersion(ctx context.Context) (int64, error) {
	var v int64
	err := e.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version_id), 0) FROM `+versionTable).Scan(&v)
	if err != nil || v == 0 {
		return 0, fmt.Errorf("store: %s holds no t3agent store", e.desc)
	}
	latest, err := latestVersion(e.migrations)
	if err != nil {
		return 0, err
	}
	if v > latest {
		return 0, fmt.Errorf("store: %s has schema version %d, newer than the %d this t3agent knows; use the t3agent that wrote it", e.desc, v, latest)
	}
	return v, nil
}

// latestVersion is the highest migration version in migrations.
func latestVersion(migrations fs.FS) (int64, error) {
	files, err := fs.Glob(migrations, "*.sql")
	if err != nil {
		return 0, err
	}
	var latest int64
	for _, f := range files {
		if v, err := strconv.ParseInt(strings.SplitN(f, "_", 2)[0], 10, 64); err == nil {
			latest = max(latest, v)
		}
	}
	return latest, nil
}

// openTarget opens (creating a SQLite file) the store at dsn and migrates
// it to version, no further: the copy then finds the source's tables.
func openTarget(ctx context.Context, dsn string, version int64, log *slog.Logger) (*endpoint, error) {
	kind, target, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	var drv Driver
	if kind == kindPostgres {
		drv, err = pgstore.Open(ctx, target)
	} else {
		drv, err = sqlitestore.Open(ctx, target)
	}
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*endpoint, error) {
		_ = drv.Close()
		return nil, err
	}
	p, err := migrator(drv, log)
	if err != nil {
		return fail(err)
	}
	current, err := p.GetDBVersion(ctx)
	if err != nil {
		return fail(fmt.Errorf("store: cannot read the schema version of %s: %w", drv.Describe(), err))
	}
	if current > version {
		return fail(fmt.Errorf("store: %s already has schema version %d, newer than the source's %d; copy into an empty database, or start t3agent once on the source to bring it to version %d",
			drv.Describe(), current, version, current))
	}
	if _, err := p.UpTo(ctx, version); err != nil {
		return fail(fmt.Errorf("store: migrating %s to schema version %d failed: %w", drv.Describe(), version, err))
	}
	return &endpoint{dialect: drv.Dialect(), db: drv.Writer(), desc: drv.Describe(), migrations: drv.Migrations(), close: drv.Close}, nil
}

// sameStore reports whether two DSNs name one database.
func sameStore(a, b string) bool {
	ka, ta, errA := parseDSN(a)
	kb, tb, errB := parseDSN(b)
	if errA != nil || errB != nil || ka != kb {
		return false
	}
	if ka == kindSQLite {
		aa, _ := filepath.Abs(ta)
		ab, _ := filepath.Abs(tb)
		return aa == ab
	}
	return ta == tb
}

// tablePair is one table as the source and the target have it.
type tablePair struct {
	source, target table
}

// matchCatalogs reads both catalogs and pairs their tables, in the
// target's insert order. Both stores are at one schema version, so a
// table or column only one of them has is an error, never skipped.
func matchCatalogs(ctx context.Context, src *endpoint, srcTx *sql.Tx, dst *endpoint, dstTx *sql.Tx) ([]tablePair, error) {
	st, err := readCatalog(ctx, srcTx, src.dialect)
	if err != nil {
		return nil, err
	}
	dt, err := readCatalog(ctx, dstTx, dst.dialect)
	if err != nil {
		return nil, err
	}
	bySource := map[string]table{}
	for _, t := range st {
		bySource[t.name] = t
	}
	var out []tablePair
	for _, t := range dt {
		s, ok := bySource[t.name]
		if !ok {
			return nil, fmt.Errorf("store: table %s of %s is missing in %s, though both are at one schema version", t.name, dst.desc, src.desc)
		}
		delete(bySource, t.name)
		// The target's columns in the source's order, so a row read
		// from the source lines up with them.
		cols := make([]column, 0, len(s.cols))
		for _, sc := range s.cols {
			i := slices.IndexFunc(t.cols, func(c column) bool { return c.name == sc.name })
			if i < 0 {
				return nil, fmt.Errorf("store: column %s.%s of %s is missing in %s", t.name, sc.name, src.desc, dst.desc)
			}
			cols = append(cols, t.cols[i])
		}
		if len(cols) != len(t.cols) {
			return nil, fmt.Errorf("store: table %s of %s has columns %s lacks", t.name, dst.desc, src.desc)
		}
		t.cols = cols
		out = append(out, tablePair{source: s, target: t})
	}
	for name := range bySource {
		return nil, fmt.Errorf("store: table %s of %s is missing in %s, though both are at one schema version", name, src.desc, dst.desc)
	}
	return out, nil
}

// checkEmpty refuses a target that holds rows the migrations did not
// write: a copy never merges into, or overwrites, a store in use.
func checkEmpty(ctx context.Context, tx *sql.Tx, dst *endpoint, tables []tablePair, seeded map[string]bool) error {
	for _, t := range tables {
		if seeded[t.target.name] {
			continue
		}
		var n int64
		if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+mustQuote(t.target.name)).Scan(&n); err != nil {
			return fmt.Errorf("store: cannot read table %s of %s: %w", t.target.name, dst.desc, err)
		}
		if n > 0 {
			return fmt.Errorf("store: %s is not empty (table %s has %d rows); copy into a new, empty database", dst.desc, t.target.name, n)
		}
	}
	return nil
}

// mustQuote quotes a name that came from the catalog and was checked
// there.
func mustQuote(name string) string {
	q, err := quoteIdent(name)
	if err != nil {
		panic(err)
	}
	return q
}

// copier copies tables from a source transaction into a target one.
type copier struct {
	src, dst     *endpoint
	srcTx, dstTx *sql.Tx
	log          *slog.Logger
}

// table copies one table in batches and returns the source's sum.
func (c *copier) table(ctx context.Context, t tablePair) (TableSum, error) {
	query, err := selectAll(t.source)
	if err != nil {
		return TableSum{}, err
	}
	// Only the target's names go into SQL; the source's rows arrive in
	// the same column order.
	names := make([]string, len(t.target.cols))
	for i, col := range t.target.cols {
		names[i] = mustQuote(col.name)
	}
	prefix := "INSERT INTO " + mustQuote(t.target.name) + " (" + strings.Join(names, ", ") + ")"
	if c.dst.dialect == goose.DialectPostgres && t.target.identity {
		prefix += " OVERRIDING SYSTEM VALUE"
	}
	prefix += " VALUES "
	pg := c.dst.dialect == goose.DialectPostgres
	n := len(names)
	per := max(1, min(copyBatchRows, copyBatchParams/max(n, 1)))
	var sum rowSum
	batch := make([]any, 0, per*n)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		var sb strings.Builder
		sb.WriteString(prefix)
		for r := range len(batch) / n {
			if r > 0 {
				sb.WriteString(", ")
			}
			sb.WriteByte('(')
			for i := range n {
				if i > 0 {
					sb.WriteString(", ")
				}
				if pg {
					sb.WriteByte('$')
					sb.WriteString(strconv.Itoa(r*n + i + 1))
				} else {
					// SQLite finds a "$n" by a linear search over the
					// names, which a batch of thousands turns quadratic.
					sb.WriteByte('?')
				}
			}
			sb.WriteByte(')')
		}
		if _, err := c.dstTx.ExecContext(ctx, sb.String(), batch...); err != nil {
			return fmt.Errorf("store: cannot write table %s of %s: %w", t.target.name, c.dst.desc, err)
		}
		batch = batch[:0]
		return nil
	}
	err = scanRows(ctx, c.srcTx, query, n, func(vals []any) error {
		if err := sum.add(t.source.cols, vals); err != nil {
			return err
		}
		for i, v := range vals {
			cv, err := convert(t.target.cols[i], v)
			if err != nil {
				return fmt.Errorf("store: table %s: %w", t.target.name, err)
			}
			batch = append(batch, cv)
		}
		if len(batch) >= per*n {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return TableSum{}, fmt.Errorf("store: copying table %s: %w", t.target.name, err)
	}
	return sum.sum(t.target.name), nil
}

// triggers takes the target's user triggers off before the copy and puts
// them back after it: a copied row must arrive as it was, not as a
// trigger would change it (the configuration generation would move).
func (c *copier) triggers(ctx context.Context, tables []tablePair, on bool) error {
	for _, t := range tables {
		for _, tr := range t.target.triggers {
			var stmt string
			switch {
			case c.dst.dialect == goose.DialectPostgres:
				// Per table, once: USER covers every user trigger.
				if tr != t.target.triggers[0] {
					continue
				}
				stmt = "ALTER TABLE " + mustQuote(t.target.name) + " DISABLE TRIGGER USER"
				if on {
					stmt = "ALTER TABLE " + mustQuote(t.target.name) + " ENABLE TRIGGER USER"
				}
			case on:
				stmt = tr.sql
			default:
				q, err := quoteIdent(tr.name)
				if err != nil {
					return err
				}
				stmt = "DROP TRIGGER " + q
			}
			if _, err := c.dstTx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("store: cannot switch the triggers of table %s of %s: %w", t.target.name, c.dst.desc, err)
			}
		}
	}
	return nil
}

// sequence moves the target's sequence of t past both the highest id
// copied and the source's own sequence, so an id the source handed out
// (even of a row deleted since) is never handed out again.
func (c *copier) sequence(ctx context.Context, t tablePair) error {
	if t.target.seq == "" {
		return nil
	}
	last, err := c.lastValue(ctx, c.src, c.srcTx, t.source)
	if err != nil {
		return err
	}
	var top sql.NullInt64
	if err := c.dstTx.QueryRowContext(ctx, "SELECT MAX("+mustQuote(t.target.seq)+") FROM "+mustQuote(t.target.name)).Scan(&top); err != nil {
		return fmt.Errorf("store: cannot read the highest id of table %s: %w", t.target.name, err)
	}
	last = max(last, top.Int64)
	if c.dst.dialect == goose.DialectPostgres {
		q := `SELECT setval(pg_get_serial_sequence($1, $2), $3, true)`
		args := []any{t.target.name, t.target.seq, last}
		if last < 1 {
			q, args = `SELECT setval(pg_get_serial_sequence($1, $2), 1, false)`, args[:2]
		}
		if _, err := c.dstTx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("store: cannot set the sequence of table %s: %w", t.target.name, err)
		}
		return nil
	}
	if last < 1 {
		return nil
	}
	res, err := c.dstTx.ExecContext(ctx, `UPDATE sqlite_sequence SET seq = MAX(seq, $1) WHERE name = $2`, last, t.target.name)
	if err == nil {
		var n int64
		if n, err = res.RowsAffected(); err == nil && n == 0 {
			_, err = c.dstTx.ExecContext(ctx, `INSERT INTO sqlite_sequence (name, seq) VALUES ($1, $2)`, t.target.name, last)
		}
	}
	if err != nil {
		return fmt.Errorf("store: cannot set the sequence of table %s: %w", t.target.name, err)
	}
	return nil
}

// lastValue is the last id a sequence of the source handed out; 0 when
// it has none or handed out none.
func (c *copier) lastValue(ctx context.Context, e *endpoint, tx *sql.Tx, t table) (int64, error) {
	if t.seq == "" {
		return 0, nil
	}
	if e.dialect == goose.DialectPostgres {
		var seq sql.NullString
		if err := tx.QueryRowContext(ctx, `SELECT pg_get_serial_sequence($1, $2)`, t.name, t.seq).Scan(&seq); err != nil {
			return 0, fmt.Errorf("store: cannot find the sequence of table %s: %w", t.name, err)
		}
		if !seq.Valid {
			return 0, nil
		}
		// seq is the qualified, quoted name PostgreSQL itself returned.
		var last int64
		var called bool
		if err := tx.QueryRowContext(ctx, `SELECT last_value, is_called FROM `+seq.String).Scan(&last, &called); err != nil {
			return 0, fmt.Errorf("store: cannot read the sequence of table %s: %w", t.name, err)
		}
		if !called {
			last--
		}
		return last, nil
	}
	var last sql.NullInt64
	err := tx.QueryRowContext(ctx, `SELECT seq FROM sqlite_sequence WHERE name = $1`, t.name).Scan(&last)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("store: cannot read the sequence of table %s: %w", t.name, err)
	}
	return last.Int64, nil
}
