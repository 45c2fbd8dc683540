package demo

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/dbtest"
	"github.com/t3agent/t3agent/internal/typo3"
)

var allDialects = []typo3.Dialect{typo3.DialectSQLite, typo3.DialectMySQL, typo3.DialectPostgres}

// freshDSN returns an empty database of dialect d (SQLite below dir).
func freshDSN(t *testing.T, d typo3.Dialect, dir string) string {
	t.Helper()
	switch d {
	case typo3.DialectMySQL:
		return dbtest.MySQL(t)
	case typo3.DialectPostgres:
		return dbtest.Postgres(t)
	}
	return "sqlite:" + filepath.Join(dir, "other.db")
}

func initDemo(t *testing.T, p InitParams) *Result {
	t.Helper()
	if p.Dir == "" {
		p.Dir = filepath.Join(t.TempDir(), "demo")
	}
	p.FastHashes = true
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := Init(ctx, p)
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	return res
}

func openRO(t *testing.T, dsn string) *typo3.DB {
	t.Helper()
	db, err := typo3.Open(context.Background(), dsn, typo3.OpenParams{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// asText renders a scanned value the same way on every dialect.
func asText(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case []byte:
		return string(x)
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case time.Time:
		return x.UTC().Format(time.RFC3339)
	}
	return fmt.Sprint(v)
}

// dump runs a query and returns its rows as column → text maps.
func dump(t *testing.T, db *typo3.DB, query string) []map[string]string {
	t.Helper()
	rows, err := db.SQL.QueryContext(context.Background(), query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		m := make(map[string]string, len(cols))
		for i, c := range cols {
			m[c] = asText(vals[i])
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// count returns SELECT count(*) FROM table [WHERE where].
func count(t *testing.T, db *typo3.DB, table, where string) int {
	t.Helper()
	query := "SELECT count(*) FROM " + db.MustQuote(table)
	if where != "" {
		query += " WHERE " + where
	}
	var n int
	if err := db.SQL.QueryRowContext(context.Background(), query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// cols quotes column names for a SELECT list.
func cols(db *typo3.DB, names ...string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = db.MustQuote(n)
	}
	return strings.Join(q, ", ")
}
