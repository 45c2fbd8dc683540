package typo3_test

import (
	"context"
	"database/sql"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

// fixedNow is the site clock of every test: between the demo's expired
// endtime (2020-01-01) and its future starttime (2030-01-01).
func fixedNow() time.Time { return time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC) }

// Fixed instants of docs/demo-site.md.
const (
	start2030 = 1893456000 // 2030-01-01 00:00:00 UTC
	end2020   = 1577836800 // 2020-01-01 00:00:00 UTC
)

func allDialects() []typo3.Dialect {
	return []typo3.Dialect{typo3.DialectSQLite, typo3.DialectMySQL, typo3.DialectPostgres}
}

// env is one test's demo site: a read-only Site as t3agent uses it, and a
// writable handle for the extra rows a test adds.
type env struct {
	site *typo3.Site
	rw   *typo3.DB
	dsn  string
	// pass maps demo usernames to their plain passwords.
	pass map[string]string
}

// eachDialect runs fn as a parallel subtest per database, each on its own
// fresh demo site.
func eachDialect(t *testing.T, fn func(t *testing.T, e *env)) {
	t.Helper()
	for _, d := range allDialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			fn(t, setup(t, d))
		})
	}
}

// newEnv opens dsn twice (read-only for the Site, writable for fixtures).
func newEnv(t *testing.T, dsn string, tc *tca.TCA, pass map[string]string, now func() time.Time) *env {
	t.Helper()
	ctx := context.Background()
	rw, err := typo3.Open(ctx, dsn, typo3.OpenParams{Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rw.Close() })
	ro, err := typo3.Open(ctx, dsn, typo3.OpenParams{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ro.Close() })
	site, err := typo3.NewSite(typo3.SiteParams{DB: ro, TCA: tc, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return &env{site: site, rw: rw, dsn: dsn, pass: pass}
}

// withClock returns a Site on the same database with another clock.
func (e *env) withClock(t *testing.T, now time.Time) *typo3.Site {
	t.Helper()
	s, err := typo3.NewSite(typo3.SiteParams{DB: e.site.DB, TCA: e.site.TCA, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// insert adds one row through the writable handle, values bound.
func (e *env) insert(t *testing.T, table string, row map[string]any) {
	t.Helper()
	db := e.rw
	a := db.NewArgs()
	cols := slices.Sorted(maps.Keys(row))
	names := make([]string, len(cols))
	ph := make([]string, len(cols))
	for i, c := range cols {
		names[i] = db.MustQuote(c)
		ph[i] = a.Add(row[c])
	}
	q := "INSERT INTO " + db.MustQuote(table) + " (" + strings.Join(names, ", ") + ") VALUES (" + strings.Join(ph, ", ") + ")"
	if _, err := db.SQL.ExecContext(context.Background(), q, a.Values()...); err != nil {
		t.Fatalf("insert into %s: %v", table, err)
	}
}

// update sets columns of one row by uid.
func (e *env) update(t *testing.T, table string, uid int64, set map[string]any) {
	t.Helper()
	db := e.rw
	a := db.NewArgs()
	var parts []string
	for _, c := range slices.Sorted(maps.Keys(set)) {
		parts = append(parts, db.MustQuote(c)+" = "+a.Add(set[c]))
	}
	q := "UPDATE " + db.MustQuote(table) + " SET " + strings.Join(parts, ", ") + " WHERE " + db.MustQuote("uid") + " = " + a.Add(uid)
	if _, err := db.SQL.ExecContext(context.Background(), q, a.Values()...); err != nil {
		t.Fatalf("update %s %d: %v", table, uid, err)
	}
}

// page inserts a default page (owner 1, group 1, 31/27/0) with overrides.
func (e *env) page(t *testing.T, uid, pid int64, over map[string]any) {
	t.Helper()
	row := map[string]any{
		"uid": uid, "pid": pid, "title": "Extra page", "doktype": 1,
		"perms_userid": 1, "perms_groupid": 1, "perms_user": 31, "perms_group": 27, "perms_everybody": 0,
	}
	maps.Copy(row, over)
	e.insert(t, "pages", row)
}

// beUser inserts a backend user (options 3, no password) with overrides.
func (e *env) beUser(t *testing.T, uid int64, username string, over map[string]any) {
	t.Helper()
	row := map[string]any{"uid": uid, "pid": 0, "username": username, "password": "", "usergroup": "", "options": 3}
	maps.Copy(row, over)
	e.insert(t, "be_users", row)
}

// beGroup inserts a backend group with overrides.
func (e *env) beGroup(t *testing.T, uid int64, title string, over map[string]any) {
	t.Helper()
	row := map[string]any{"uid": uid, "pid": 0, "title": title, "subgroup": ""}
	maps.Copy(row, over)
	e.insert(t, "be_groups", row)
}

func (e *env) user(t *testing.T, username string) *typo3.BackendUser {
	t.Helper()
	u, err := e.site.BackendUserByName(context.Background(), username)
	if err != nil {
		t.Fatalf("load %s: %v", username, err)
	}
	return u
}

// uids runs a single-column query and returns the uids in result order.
func uids(t *testing.T, db *typo3.DB, q string, args ...any) []int64 {
	t.Helper()
	rows, err := db.SQL.QueryContext(context.Background(), q, args...)
	return scanIDs(t, q, rows, err)
}

// scanIDs reads the uids of a single-column result, closing it.
func scanIDs(t *testing.T, q string, rows *sql.Rows, err error) []int64 {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	out := []int64{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// span returns from..to inclusive.
func span(from, to int64) []int64 {
	var out []int64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}
