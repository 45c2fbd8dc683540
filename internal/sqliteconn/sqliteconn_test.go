package sqliteconn_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"modernc.org/sqlite"

	"go.uber.org/goleak"

	"github.com/t3agent/t3agent/internal/sqliteconn"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// open is a database in a new file, one connection so a test sees the
// statements of the connection it runs on.
func open(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sqliteconn.Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// stmtMemory is the memory SQLite holds for prepared statements on one
// connection of db (sqlite3_db_status STMT_USED), read on the connection
// conn, which the caller holds.
func stmtMemory(t *testing.T, conn *sql.Conn) int {
	t.Helper()
	var cur int
	err := conn.Raw(func(dc any) error {
		st, ok := dc.(sqlite.DBStatus)
		if !ok {
			return fmt.Errorf("%T has no sqlite3_db_status", dc)
		}
		var err error
		cur, _, err = st.Status(sqlite.DBStatusStmtUsed, false)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return cur
}

func queryInt(t *testing.T, ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, query string, args ...any) int {
	t.Helper()
	var n int
	if err := q.QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// TestStatementsStayPrepared: a query run again on a connection reuses
// its prepared statement instead of SQLite parsing it anew, which used to
// take a quarter of a gate decision's CPU: the statement is still
// prepared after its rows are closed, running it many times holds no more
// statement memory than running it once, and the memory of many distinct
// statements stays bounded by MaxStatementsPerConn.
func TestStatementsStayPrepared(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	w := open(t)
	if _, err := w.ExecContext(ctx, "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)"); err != nil {
		t.Fatal(err)
	}
	conn, err := w.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	base := stmtMemory(t, conn)
	const hot = "SELECT count(*) FROM t WHERE v = $1 OR id > $2"
	queryInt(t, ctx, conn, hot, "x", 1)
	once := stmtMemory(t, conn)
	if once <= base {
		t.Fatalf("statement memory %d after a query, %d before: the statement was finalized, not kept", once, base)
	}
	for i := range 200 {
		queryInt(t, ctx, conn, hot, "x", i)
	}
	if again := stmtMemory(t, conn); again != once {
		t.Errorf("statement memory %d after 200 more runs, %d after one: the statement is prepared again", again, once)
	}
	for i := range 3 * sqliteconn.MaxStatementsPerConn {
		queryInt(t, ctx, conn, fmt.Sprintf("SELECT count(*) FROM t WHERE id > %d", i))
	}
	// Each distinct statement here takes about what the hot one took.
	if many := stmtMemory(t, conn); many > (sqliteconn.MaxStatementsPerConn+2)*(once-base)*2 {
		t.Errorf("statement memory %d after %d distinct statements; the cache holds at most %d", many,
			3*sqliteconn.MaxStatementsPerConn, sqliteconn.MaxStatementsPerConn)
	}
}

// TestStatementBusy: the same SQL run again while the first run's rows
// are open (inside one transaction, on one connection) gets its own
// statement; both result sets are complete and correct.
func TestStatementBusy(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	w := open(t)
	if _, err := w.ExecContext(ctx, "CREATE TABLE t (id INTEGER PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 5; i++ {
		if _, err := w.ExecContext(ctx, "INSERT INTO t (id) VALUES ($1)", i); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	const q = "SELECT id FROM t WHERE id >= $1 ORDER BY id"
	outer, err := tx.QueryContext(ctx, q, 1)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for outer.Next() {
		var id int
		if err := outer.Scan(&id); err != nil {
			t.Fatal(err)
		}
		inner, err := tx.QueryContext(ctx, q, id)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for inner.Next() {
			n++
		}
		if err := inner.Close(); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d:%d", id, n))
	}
	if err := outer.Err(); err != nil {
		t.Fatal(err)
	}
	if err := outer.Close(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[1:5 2:4 3:3 4:2 5:1]" {
		t.Errorf("nested runs of one statement: %v", got)
	}
	// The cached statement is free again and answers correctly.
	if n := queryInt(t, ctx, tx, "SELECT count(*) FROM t WHERE id >= $1", 3); n != 3 {
		t.Errorf("count = %d", n)
	}
}

// TestStatementErrors: a failing statement leaves the connection usable
// and caches nothing broken; a constraint error on a cached statement
// does not stick to its next run.
func TestStatementErrors(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	w := open(t)
	if _, err := w.ExecContext(ctx, "CREATE TABLE t (id INTEGER PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.ExecContext(ctx, "SELEC broken"); err == nil {
		t.Fatal("a syntax error passed")
	}
	const ins = "INSERT INTO t (id) VALUES ($1)"
	for i, want := range []bool{true, false, true} {
		_, err := w.ExecContext(ctx, ins, []int{1, 1, 2}[i])
		if (err == nil) != want {
			t.Errorf("insert %d: %v", i, err)
		}
	}
	if n := queryInt(t, ctx, w, "SELECT count(*) FROM t"); n != 2 {
		t.Errorf("%d rows", n)
	}
	// Canceled while running: the next run of the statement is fine.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := w.QueryContext(cctx, "SELECT id FROM t"); err == nil {
		t.Error("a canceled query ran")
	}
	if n := queryInt(t, ctx, w, "SELECT count(*) FROM t WHERE id > $1", 0); n != 2 {
		t.Errorf("%d rows after a canceled query", n)
	}
}

// TestIsReadOnly: the wrapped connection still answers whether its file
// is open read-only, which doctor asks of SQLite site databases.
func TestIsReadOnly(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "s.db")
	for _, c := range []struct {
		dsn  string
		want bool
	}{{path, false}, {"file:" + path + "?mode=ro", true}} {
		db, err := sqliteconn.Open(c.dsn)
		if err != nil {
			t.Fatal(err)
		}
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var ro bool
		err = conn.Raw(func(dc any) error {
			r, ok := dc.(interface{ IsReadOnly(string) (bool, error) })
			if !ok {
				return fmt.Errorf("%T cannot tell whether it is read-only", dc)
			}
			var err error
			ro, err = r.IsReadOnly("main")
			return err
		})
		_ = conn.Close()
		_ = db.Close()
		if err != nil || ro != c.want {
			t.Errorf("%s: read-only = %v, %v; want %v", c.dsn, ro, err, c.want)
		}
	}
}
