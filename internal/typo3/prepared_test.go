package typo3_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/typo3"
)

// TestQueryPrepared: on every dialect a prepared query answers as a plain
// one, again and again and concurrently; on SQLite and MySQL, whose
// statements QueryPrepared keeps, also after the table it reads gains a
// column; a hundred distinct queries (past the bound of statements kept)
// all answer; after Close the DB refuses.
func TestQueryPrepared(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		db, err := typo3.Open(ctx, e.dsn, typo3.OpenParams{})
		if err != nil {
			t.Fatal(err)
		}
		byIDs := func(n int) (string, []any) {
			a := db.NewArgs()
			ids := span(1, int64(n))
			return `SELECT ` + db.MustQuote("uid") + ` FROM ` + db.MustQuote("be_users") + ` WHERE ` +
				db.MustQuote("uid") + ` IN (` + a.AddInts(ids) + `) ORDER BY ` + db.MustQuote("uid"), a.Values()
		}
		q, args := byIDs(10)
		want := uids(t, db, q, args...)
		if len(want) == 0 {
			t.Fatal("the demo has no backend users with uids 1..10")
		}
		prepared := func(q string, args ...any) []int64 {
			t.Helper()
			rows, err := db.QueryPrepared(ctx, q, args...)
			return scanIDs(t, q, rows, err)
		}
		for range 3 {
			if got := prepared(q, args...); !slices.Equal(got, want) {
				t.Fatalf("prepared %v, plain %v", got, want)
			}
		}
		errs := make(chan []int64, 16)
		for range 16 {
			go func() { errs <- prepared(q, args...) }()
		}
		for range 16 {
			if got := <-errs; !slices.Equal(got, want) {
				t.Errorf("concurrently: %v, want %v", got, want)
			}
		}

		// PostgreSQL runs QueryPrepared as a plain query: its driver's own
		// statement cache answers a changed result type with one error per
		// connection, then prepares anew.
		if db.Dialect != typo3.DialectPostgres {
			star := `SELECT * FROM ` + db.MustQuote("be_users") + ` WHERE ` + db.MustQuote("uid") + ` = ` + db.NewArgs().Add(want[0])
			columns := func() int {
				t.Helper()
				rows, err := db.QueryPrepared(ctx, star, want[0])
				if err != nil {
					t.Fatalf("%s: %v", star, err)
				}
				defer rows.Close()
				cols, err := rows.Columns()
				if err != nil {
					t.Fatal(err)
				}
				return len(cols)
			}
			before := columns()
			if _, err := e.rw.SQL.ExecContext(ctx, `ALTER TABLE `+db.MustQuote("be_users")+` ADD COLUMN `+db.MustQuote("tx_probe")+` INTEGER`); err != nil {
				t.Fatal(err)
			}
			if after := columns(); after != before+1 {
				t.Errorf("after ALTER TABLE the prepared SELECT * has %d columns, want %d", after, before+1)
			}
		}

		for n := 1; n <= 100; n++ {
			q, args := byIDs(n)
			if got, plain := prepared(q, args...), uids(t, db, q, args...); !slices.Equal(got, plain) {
				t.Fatalf("IN list of %d: prepared %v, plain %v", n, got, plain)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if _, err := db.QueryPrepared(ctx, q, args...); err == nil || !strings.Contains(err.Error(), "closed") {
			t.Errorf("a query after Close: %v, want an error saying the database is closed", err)
		}
	})
}
