package typo3

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	_ "modernc.org/sqlite"             // registers the "sqlite" database/sql driver

	"github.com/t3agent/t3agent/internal/sqliteconn"
)

// Dialect names the SQL flavour of a TYPO3 site database.
type Dialect string

const (
	DialectSQLite   Dialect = "sqlite"
	DialectMySQL    Dialect = "mysql"
	DialectPostgres Dialect = "postgres"
)

// DB is a connection pool to a TYPO3 site database. It is safe for
// concurrent use. Table and column names handed to QuoteIdent must come from
// the TCA or the live schema, never from raw input; values are always bound.
type DB struct {
	SQL     *sql.DB
	Dialect Dialect
	// DSN is the redacted form of the source name, for messages and logs.
	DSN string

	mu       sync.Mutex
	prepared map[string]*sql.Stmt // by query text; see QueryPrepared
}

// maxPrepared bounds the statements a DB keeps prepared. The queries it
// is meant for differ only by the length of an IN list, so a few dozen
// cover them; past the bound a query simply runs unprepared.
const maxPrepared = 64

// OpenParams tunes Open.
type OpenParams struct {
	// Writable opens the database for writing. Only the demo generator and
	// the T3D importer set it; t3agent itself reads a site and never writes.
	Writable bool
}

// Open connects to a site database named by dsn:
//
//	sqlite:PATH (or a bare path ending in .db, .sqlite or .sqlite3)
//	mysql://user:pass@host:port/db   (also mariadb://)
//	postgres://user:pass@host:port/db (also postgresql://)
//
// It pings the database before returning.
func Open(ctx context.Context, dsn string, p OpenParams) (*DB, error) {
	dialect, driver, source, err := parseDSN(dsn, p.Writable)
	if err != nil {
		return nil, err
	}
	var sqldb *sql.DB
	if dialect == DialectSQLite {
		// Connections that keep their statements prepared: a content
		// tool's queries repeat, and parsing them against TYPO3's schema
		// was a third of a call's CPU.
		sqldb, err = sqliteconn.Open(source)
	} else {
		sqldb, err = sql.Open(driver, source)
	}
	if err != nil {
		return nil, fmt.Errorf("site database %s: %w", RedactDSN(dsn), err)
	}
	if dialect == DialectSQLite {
		// SQLite serialises writers; one connection for a writable file
		// avoids "database is locked" during the demo's bulk inserts.
		if p.Writable {
			sqldb.SetMaxOpenConns(1)
		} else {
			// Keep every reader open: a new SQLite connection parses the
			// whole TYPO3 schema again, which the default of two idle
			// connections would make a cost of busy moments.
			sqldb.SetMaxOpenConns(8)
			sqldb.SetMaxIdleConns(8)
		}
	} else {
		sqldb.SetMaxOpenConns(16)
		sqldb.SetMaxIdleConns(4)
		sqldb.SetConnMaxIdleTime(5 * time.Minute)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := sqldb.PingContext(pingCtx); err != nil {
		_ = sqldb.Close()
		return nil, fmt.Errorf("site database %s is not reachable: %w", RedactDSN(dsn), err)
	}
	return &DB{SQL: sqldb, Dialect: dialect, DSN: RedactDSN(dsn)}, nil
}

// Close releases the prepared statements and the pool.
func (db *DB) Close() error {
	db.mu.Lock()
	stmts := db.prepared
	db.prepared = nil
	db.mu.Unlock()
	var errs []error
	for _, st := range stmts {
		errs = append(errs, st.Close())
	}
	return errors.Join(append(errs, db.SQL.Close())...)
}

// QueryPrepared runs q as a statement prepared once and reused, for the
// queries every agent run repeats (the acting user, its groups and
// mounts). SQLite then parses q against the site's schema once instead of
// every time, and MySQL answers in one round trip instead of three
// (prepare, execute, close); both re-prepare by themselves when the schema
// changes. PostgreSQL's driver already keeps its own cache of prepared
// statements, so there q runs as any query. q must be built from code and
// TCA names only, as every query here is; its values are bound.
func (db *DB) QueryPrepared(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if db.Dialect == DialectPostgres {
		return db.SQL.QueryContext(ctx, q, args...)
	}
	st, err := db.statement(ctx, q)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return db.SQL.QueryContext(ctx, q, args...)
	}
	return st.QueryContext(ctx, args...)
}

// statement returns q prepared, preparing it on first use; nil once
// maxPrepared statements are kept.
func (db *DB) statement(ctx context.Context, q string) (*sql.Stmt, error) {
	db.mu.Lock()
	st, ok := db.prepared[q]
	full := len(db.prepared) >= maxPrepared
	db.mu.Unlock()
	if ok || full {
		return st, nil
	}
	fresh, err := db.SQL.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	db.mu.Lock()
	st, ok = db.prepared[q]
	if !ok && len(db.prepared) < maxPrepared {
		if db.prepared == nil {
			db.prepared = make(map[string]*sql.Stmt)
		}
		db.prepared[q] = fresh
		db.mu.Unlock()
		return fresh, nil
	}
	db.mu.Unlock()
	// Another caller prepared q meanwhile, or the bound was reached.
	_ = fresh.Close()
	return st, nil
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error { return db.SQL.PingContext(ctx) }

// QuoteIdent quotes a table or column name for the dialect. The name must
// come from the TCA or the live schema; a name with characters outside
// [A-Za-z0-9_] is refused, so a quoting bug can never become an injection.
func (db *DB) QuoteIdent(name string) (string, error) {
	return QuoteIdent(db.Dialect, name)
}

// MustQuote is QuoteIdent for names that are compile-time constants in this
// code base (core TYPO3 columns such as "pid"); it panics on a bad name,
// which would be a programming error.
func (db *DB) MustQuote(name string) string {
	q, err := QuoteIdent(db.Dialect, name)
	if err != nil {
		panic(err)
	}
	return q
}

// Placeholder returns the bind placeholder for the n-th (1-based) argument.
func (db *DB) Placeholder(n int) string {
	if db.Dialect == DialectPostgres {
		return fmt.Sprintf("$%d", n)
	}
	return "?"
}

// ErrBadIdentifier is returned for table or column names that cannot be a
// TYPO3 identifier.
var ErrBadIdentifier = errors.New("not a valid table or column name")

// QuoteIdent quotes name for dialect d; see DB.QuoteIdent.
func QuoteIdent(d Dialect, name string) (string, error) {
	if !ValidIdent(name) {
		return "", fmt.Errorf("%q: %w", name, ErrBadIdentifier)
	}
	if d == DialectMySQL {
		return "`" + name + "`", nil
	}
	return `"` + name + `"`, nil
}

// ValidIdent reports whether name is a plausible TYPO3 table or column name.
func ValidIdent(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func parseDSN(dsn string, writable bool) (Dialect, string, string, error) {
	lower := strings.ToLower(dsn)
	switch {
	case strings.HasPrefix(lower, "sqlite:"):
		path := strings.TrimPrefix(dsn[len("sqlite:"):], "//")
		return sqliteSource(path, writable)
	case strings.HasSuffix(lower, ".db") || strings.HasSuffix(lower, ".sqlite") || strings.HasSuffix(lower, ".sqlite3"):
		return sqliteSource(dsn, writable)
	case strings.HasPrefix(lower, "mysql://") || strings.HasPrefix(lower, "mariadb://"):
		u, err := url.Parse(dsn)
		if err != nil {
			return "", "", "", fmt.Errorf("site DSN %s is not a valid URL: %w", RedactDSN(dsn), err)
		}
		cfg := mysql.NewConfig()
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
		cfg.Net = "tcp"
		cfg.Addr = u.Host
		if u.Port() == "" {
			cfg.Addr = u.Hostname() + ":3306"
		}
		cfg.DBName = strings.TrimPrefix(u.Path, "/")
		if cfg.DBName == "" {
			return "", "", "", fmt.Errorf("site DSN %s names no database", RedactDSN(dsn))
		}
		cfg.Params = map[string]string{"charset": "utf8mb4"}
		for k, v := range u.Query() {
			cfg.Params[k] = v[0]
		}
		return DialectMySQL, "mysql", cfg.FormatDSN(), nil
	case strings.HasPrefix(lower, "postgres://") || strings.HasPrefix(lower, "postgresql://"):
		u, err := url.Parse(dsn)
		if err != nil {
			return "", "", "", fmt.Errorf("site DSN %s is not a valid URL: %w", RedactDSN(dsn), err)
		}
		if !writable {
			q := u.Query()
			q.Set("default_transaction_read_only", "on")
			u.RawQuery = q.Encode()
		}
		return DialectPostgres, "pgx", u.String(), nil
	}
	return "", "", "", fmt.Errorf("site DSN %s is not understood: use sqlite:PATH, mysql://user:pass@host:port/db or postgres://user:pass@host:port/db", RedactDSN(dsn))
}

func sqliteSource(path string, writable bool) (Dialect, string, string, error) {
	if path == "" {
		return "", "", "", errors.New("site DSN sqlite: names no file")
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "foreign_keys(0)")
	if writable {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Set("_txlock", "immediate")
	} else {
		q.Set("mode", "ro")
	}
	return DialectSQLite, "sqlite", "file:" + path + "?" + q.Encode(), nil
}

// RedactDSN hides the password of a URL-shaped DSN.
func RedactDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		return dsn
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// Args collects the bound values of one statement and hands out the
// dialect's placeholder for each. Fragments built by different helpers
// share one Args so PostgreSQL's numbered parameters stay consistent.
// Build the statement in text order: "?" placeholders (SQLite, MySQL) are
// matched by position, so a fragment must be requested where it goes.
type Args struct {
	dialect Dialect
	values  []any
}

// NewArgs starts the argument list of one statement.
func (db *DB) NewArgs() *Args { return &Args{dialect: db.Dialect} }

// Add binds v and returns its placeholder.
func (a *Args) Add(v any) string {
	a.values = append(a.values, v)
	if a.dialect == DialectPostgres {
		return fmt.Sprintf("$%d", len(a.values))
	}
	return "?"
}

// AddInts binds every value and returns the comma-separated placeholders,
// for an IN list. An empty list yields "NULL" so "x IN (NULL)" matches
// nothing instead of being a syntax error.
func (a *Args) AddInts(vs []int64) string {
	if len(vs) == 0 {
		return "NULL"
	}
	ph := make([]string, len(vs))
	for i, v := range vs {
		ph[i] = a.Add(v)
	}
	return strings.Join(ph, ", ")
}

// Values returns the bound values in placeholder order.
func (a *Args) Values() []any { return a.values }

// Quote quotes an identifier for the statement's dialect; see DB.QuoteIdent.
func (a *Args) Quote(name string) (string, error) { return QuoteIdent(a.dialect, name) }
