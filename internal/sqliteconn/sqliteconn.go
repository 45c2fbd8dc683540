// Package sqliteconn opens SQLite databases (modernc.org/sqlite) whose
// connections keep the statements they ran prepared, so a query run again
// costs a bind and a step instead of SQLite parsing and planning it anew.
// t3agent's own store and SQLite site databases both open through it:
// before, the parse was a quarter of the CPU of a gate decision and a
// third of a content tool's call on a SQLite site.
package sqliteconn

import (
	"container/list"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"

	"modernc.org/sqlite"
)

// MaxStatementsPerConn bounds the statements each connection keeps
// prepared. The store's hot paths (the gate's overrides, a run's steps,
// telemetry, the queue) and a site's content queries use a few dozen
// distinct statements; statements built per call (IN lists of varying
// length) pass through and push out the least recently used.
const MaxStatementsPerConn = 64

// Open is sql.Open("sqlite", dsn) with connections that keep their
// statements prepared. dsn is what modernc.org/sqlite accepts (a path or
// a file: URI with _pragma parameters).
func Open(dsn string) (*sql.DB, error) {
	c, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(&connector{c}), nil
}

// connector is modernc's connector, its connections wrapped.
type connector struct{ driver.Connector }

func (c *connector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return newStmtConn(conn, MaxStatementsPerConn)
}

// inner is what stmtConn needs of a modernc connection.
type inner interface {
	driver.Conn
	driver.ConnPrepareContext
	driver.ConnBeginTx
	driver.Pinger
	driver.SessionResetter
	driver.Validator
	sqlite.DBStatus
}

// stmtConn is one connection with a bounded cache of prepared statements,
// keyed by the SQL text, least recently used out first.
//
// Concurrency: database/sql hands a connection, and the statements and
// rows made on it, to one goroutine at a time (it holds the connection's
// lock around every driver call), so stmtConn needs no lock of its own.
// A cached statement is in use from the query that returns rows until
// those rows are closed; running the same SQL again meanwhile (a second
// query inside one transaction while the first one's rows are open)
// prepares a one-off statement instead of resetting the rows under the
// caller.
type stmtConn struct {
	c     inner
	max   int
	lru   *list.List // of *cachedStmt, most recently used first
	stmts map[string]*list.Element
}

func newStmtConn(c driver.Conn, maxStmts int) (*stmtConn, error) {
	in, ok := c.(inner)
	if !ok {
		_ = c.Close()
		return nil, errors.New("sqliteconn: the SQLite driver's connection lacks a method the statement cache needs")
	}
	return &stmtConn{c: in, max: maxStmts, lru: list.New(), stmts: map[string]*list.Element{}}, nil
}

// cachedStmt is a prepared statement and whether rows are open on it.
type cachedStmt struct {
	query string
	s     driver.Stmt
	busy  bool
	// evicted: no longer in the cache; close it once it is not busy.
	evicted bool
}

type stmtExecQuerier interface {
	driver.StmtExecContext
	driver.StmtQueryContext
}

// acquire returns a statement for query, marked busy: the cached one when
// it is free, else a newly prepared one, cached when query is not cached
// yet. done releases it.
func (c *stmtConn) acquire(ctx context.Context, query string) (cs *cachedStmt, err error) {
	if el, ok := c.stmts[query]; ok {
		cs = el.Value.(*cachedStmt)
		if !cs.busy {
			c.lru.MoveToFront(el)
			cs.busy = true
			return cs, nil
		}
	}
	s, err := c.c.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if _, ok := s.(stmtExecQuerier); !ok {
		_ = s.Close()
		return nil, errors.New("sqliteconn: the SQLite driver's statement lacks ExecContext or QueryContext")
	}
	fresh := &cachedStmt{query: query, s: s, busy: true}
	if _, ok := c.stmts[query]; ok {
		// The cached one is busy: this one is for this call only.
		fresh.evicted = true
		return fresh, nil
	}
	c.stmts[query] = c.lru.PushFront(fresh)
	for c.lru.Len() > c.max {
		last := c.lru.Back()
		old := last.Value.(*cachedStmt)
		c.lru.Remove(last)
		delete(c.stmts, old.query)
		old.evicted = true
		if !old.busy {
			_ = old.s.Close()
		}
	}
	return fresh, nil
}

// done releases cs; an evicted or one-off statement is closed.
func (c *stmtConn) done(cs *cachedStmt) error {
	cs.busy = false
	if cs.evicted {
		return cs.s.Close()
	}
	return nil
}

// ExecContext runs query through its prepared statement.
func (c *stmtConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	cs, err := c.acquire(ctx, query)
	if err != nil {
		return nil, err
	}
	res, err := cs.s.(stmtExecQuerier).ExecContext(ctx, args)
	return res, errors.Join(err, c.done(cs))
}

// QueryContext runs query through its prepared statement; the statement
// stays busy until the rows are closed.
func (c *stmtConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	cs, err := c.acquire(ctx, query)
	if err != nil {
		return nil, err
	}
	rows, err := cs.s.(stmtExecQuerier).QueryContext(ctx, args)
	if err != nil {
		return nil, errors.Join(err, c.done(cs))
	}
	return &stmtRows{Rows: rows, conn: c, cs: cs}, nil
}

// stmtRows releases its statement when closed.
type stmtRows struct {
	driver.Rows
	conn *stmtConn
	cs   *cachedStmt
}

func (r *stmtRows) Close() error {
	err := r.Rows.Close()
	if r.cs != nil {
		err = errors.Join(err, r.conn.done(r.cs))
		r.cs = nil
	}
	return err
}

// Prepare and PrepareContext serve database/sql's own prepared statements
// (sql.DB.Prepare), which their caller owns and closes: not cached.
func (c *stmtConn) Prepare(query string) (driver.Stmt, error) {
	return c.c.PrepareContext(context.Background(), query)
}

func (c *stmtConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.c.PrepareContext(ctx, query)
}

// Close finalizes the cached statements, then closes the connection.
func (c *stmtConn) Close() error {
	var errs []error
	for el := c.lru.Front(); el != nil; el = el.Next() {
		errs = append(errs, el.Value.(*cachedStmt).s.Close())
	}
	c.lru.Init()
	clear(c.stmts)
	return errors.Join(append(errs, c.c.Close())...)
}

// Begin is the deprecated form of BeginTx.
func (c *stmtConn) Begin() (driver.Tx, error) {
	return c.c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *stmtConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.c.BeginTx(ctx, opts)
}

func (c *stmtConn) Ping(ctx context.Context) error { return c.c.Ping(ctx) }

func (c *stmtConn) ResetSession(ctx context.Context) error { return c.c.ResetSession(ctx) }

func (c *stmtConn) IsValid() bool { return c.c.IsValid() }

// Status is sqlite3_db_status of the connection (sqlite.DBStatus), for
// tests and diagnostics through sql.Conn.Raw.
func (c *stmtConn) Status(op sqlite.DBStatusOp, reset bool) (current, high int, err error) {
	return c.c.Status(op, reset)
}

// IsReadOnly is sqlite3_db_readonly for the named database of the
// connection (modernc's conn.IsReadOnly), so a check through sql.Conn.Raw
// (t3agent doctor) can tell whether a site file is open read-only.
func (c *stmtConn) IsReadOnly(dbname string) (bool, error) {
	ro, ok := c.c.(interface{ IsReadOnly(string) (bool, error) })
	if !ok {
		return false, errors.New("sqliteconn: the SQLite driver's connection cannot tell whether it is read-only")
	}
	return ro.IsReadOnly(dbname)
}
