package content_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/t3agent/t3agent/internal/typo3"
)

// statement is one statement a tool sent to the site database.
type statement struct {
	text string
	args []any
}

// queryLog records every statement sent through a loggingConnector.
type queryLog struct {
	mu    sync.Mutex
	stmts []statement
}

func (l *queryLog) add(text string, args []driver.NamedValue) {
	vals := make([]any, len(args))
	for i, a := range args {
		vals[i] = a.Value
	}
	l.mu.Lock()
	l.stmts = append(l.stmts, statement{text: text, args: vals})
	l.mu.Unlock()
}

// mark returns a position; since returns what was logged after it.
func (l *queryLog) mark() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.stmts)
}

func (l *queryLog) since(m int) []statement {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]statement(nil), l.stmts[m:]...)
}

// loggingConnector wraps a real driver's connector and records the text
// and arguments of every query, exec and prepare, so a test can prove at
// the SQL level which tables a tool touched.
type loggingConnector struct {
	inner driver.Connector
	log   *queryLog
}

func (c *loggingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &loggingConn{Conn: conn, log: c.log}, nil
}

func (c *loggingConnector) Driver() driver.Driver { return c.inner.Driver() }

// dsnConnector adapts a driver without DriverContext.
type dsnConnector struct {
	drv driver.Driver
	dsn string
}

func (c dsnConnector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }
func (c dsnConnector) Driver() driver.Driver                        { return c.drv }

type loggingConn struct {
	driver.Conn
	log *queryLog
}

func (c *loggingConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	c.log.add(q, args)
	qc, ok := c.Conn.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip // database/sql falls back to PrepareContext, logged below
	}
	return qc.QueryContext(ctx, q, args)
}

func (c *loggingConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	c.log.add(q, args)
	ec, ok := c.Conn.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	return ec.ExecContext(ctx, q, args)
}

func (c *loggingConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	c.log.add("PREPARE "+q, nil)
	if pc, ok := c.Conn.(driver.ConnPrepareContext); ok {
		return pc.PrepareContext(ctx, q)
	}
	return c.Conn.Prepare(q)
}

func (c *loggingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if bc, ok := c.Conn.(driver.ConnBeginTx); ok {
		return bc.BeginTx(ctx, opts)
	}
	//lint:ignore SA1019 only for drivers without BeginTx
	return c.Conn.Begin()
}

func (c *loggingConn) Ping(ctx context.Context) error {
	if p, ok := c.Conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (c *loggingConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *loggingConn) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

// CheckNamedValue lets the wrapped driver convert arguments its own way
// (the MySQL driver accepts more types than database/sql's default).
func (c *loggingConn) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := c.Conn.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

// openLogged opens the site database named by a typo3.Open DSN read-only
// through a loggingConnector.
func openLogged(t testing.TB, dsn string, d typo3.Dialect) (*typo3.DB, *queryLog) {
	t.Helper()
	var name, src string
	switch d {
	case typo3.DialectSQLite:
		path := strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite:"), "//")
		q := url.Values{}
		q.Add("_pragma", "busy_timeout(5000)")
		q.Set("mode", "ro")
		name, src = "sqlite", "file:"+filepath.Clean(path)+"?"+q.Encode()
	case typo3.DialectMySQL:
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		cfg := mysql.NewConfig()
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
		cfg.Net, cfg.Addr = "tcp", u.Host
		cfg.DBName = strings.TrimPrefix(u.Path, "/")
		cfg.Params = map[string]string{"charset": "utf8mb4"}
		name, src = "mysql", cfg.FormatDSN()
	case typo3.DialectPostgres:
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set("default_transaction_read_only", "on")
		u.RawQuery = q.Encode()
		name, src = "pgx", u.String()
	default:
		t.Fatalf("unknown dialect %q", d)
	}
	probe, err := sql.Open(name, src)
	if err != nil {
		t.Fatal(err)
	}
	drv := probe.Driver()
	_ = probe.Close()
	var inner driver.Connector = dsnConnector{drv: drv, dsn: src}
	if dc, ok := drv.(driver.DriverContext); ok {
		if inner, err = dc.OpenConnector(src); err != nil {
			t.Fatal(err)
		}
	}
	log := &queryLog{}
	sqldb := sql.OpenDB(&loggingConnector{inner: inner, log: log})
	if d == typo3.DialectSQLite {
		sqldb.SetMaxOpenConns(8)
	}
	t.Cleanup(func() { _ = sqldb.Close() })
	if err := sqldb.PingContext(context.Background()); err != nil {
		t.Fatalf("open logged site database: %v", err)
	}
	return &typo3.DB{SQL: sqldb, Dialect: d, DSN: typo3.RedactDSN(dsn)}, log
}

// touches reports which of the named tables a statement reads: the name
// as a whole word in the SQL text, or as a bound value (schema lookups
// pass the table name as a parameter).
func touches(s statement, tables []*regexp.Regexp) []string {
	var out []string
	for _, re := range tables {
		if re.MatchString(strings.ToLower(s.text)) {
			out = append(out, re.String())
			continue
		}
		for _, a := range s.args {
			v := strings.ToLower(fmt.Sprint(a))
			if b, ok := a.([]byte); ok {
				v = strings.ToLower(string(b))
			}
			if re.MatchString(v) {
				out = append(out, re.String()+" (as a value)")
				break
			}
		}
	}
	return out
}
