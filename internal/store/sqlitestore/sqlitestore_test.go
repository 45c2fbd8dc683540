package sqlitestore_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/store/sqlitestore"
	"github.com/t3agent/t3agent/internal/store/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newDSN(tb testing.TB) string {
	return "sqlite:" + filepath.Join(tb.TempDir(), "t3agent.db")
}

func TestSuite(t *testing.T) { storetest.Run(t, newDSN) }

func BenchmarkStore(b *testing.B) { storetest.Bench(b, newDSN) }

func openDriver(t *testing.T, path string) *sqlitestore.Driver {
	t.Helper()
	d, err := sqlitestore.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

func pragma(t *testing.T, db *sql.DB, name string) string {
	t.Helper()
	var v string
	if err := db.QueryRowContext(t.Context(), "PRAGMA "+name).Scan(&v); err != nil {
		t.Fatalf("PRAGMA %s: %v", name, err)
	}
	return v
}

func TestConnectionSettings(t *testing.T) {
	t.Parallel()
	d := openDriver(t, filepath.Join(t.TempDir(), "s.db"))
	w, r := d.Writer(), d.Reader()
	for _, c := range []struct {
		db         *sql.DB
		pool, name string
		want       string
	}{
		{w, "writer", "journal_mode", "wal"},
		{w, "writer", "foreign_keys", "1"},
		{w, "writer", "busy_timeout", "10000"},
		{w, "writer", "synchronous", "1"}, // NORMAL
		{w, "writer", "query_only", "0"},
		{r, "reader", "journal_mode", "wal"},
		{r, "reader", "busy_timeout", "10000"},
		{r, "reader", "query_only", "1"},
	} {
		if got := pragma(t, c.db, c.name); got != c.want {
			t.Errorf("%s: PRAGMA %s = %s, want %s", c.pool, c.name, got, c.want)
		}
	}
	if n := w.Stats().MaxOpenConnections; n != 1 {
		t.Errorf("writer allows %d connections, want exactly 1", n)
	}
	if _, err := r.ExecContext(t.Context(), "CREATE TABLE x (a)"); err == nil {
		t.Error("the reader pool accepted a write")
	}
}

func TestWriteTransactionsBeginImmediate(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.db")
	d := openDriver(t, path)
	tx, err := d.Writer().BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	// IMMEDIATE holds the write lock from BEGIN, before any statement: a
	// second connection cannot start writing. A deferred BEGIN would let it.
	other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, err = other.ExecContext(t.Context(), "BEGIN IMMEDIATE")
	if err == nil || !strings.Contains(err.Error(), "locked") {
		t.Errorf("a second writer began while a write transaction was open: err = %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, []byte(strings.Repeat("this is not sqlite ", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "no", "such", "dir")
	for _, c := range []struct{ dsn, want string }{
		{"", "empty"},
		{"   ", "empty"},
		{"sqlite:", "names no file"},
		{"sqlite::memory:", "not supported"},
		{"sqlite:file:x.db?mode=memory", "not supported"},
		{"mysql://root:hunter2@db/t3", `scheme "mysql" is not supported`},
		{"sqlite:" + filepath.Join(missing, "t.db"), "directory " + missing + " does not exist"},
		{"sqlite:" + dir, "is a directory"},
		{"sqlite:" + garbage, "not a database"},
	} {
		st, err := store.Open(t.Context(), c.dsn, store.OpenParams{})
		if err == nil {
			_ = st.Close()
			t.Errorf("Open(%q) succeeded, want an error containing %q", c.dsn, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open(%q) = %q, want it to contain %q", c.dsn, err, c.want)
		}
		if strings.Contains(err.Error(), "hunter2") || strings.Count(err.Error(), "\n") > 0 {
			t.Errorf("Open(%q) = %q: not one sentence free of secrets", c.dsn, err)
		}
	}
}

func TestPathForms(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	odd := filepath.Join(dir, "we?ird #dir %41")
	if err := os.Mkdir(odd, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ dsn, file string }{
		{filepath.Join(dir, "plain.db"), "plain.db"},
		{"sqlite:" + filepath.Join(dir, "prefixed.db"), "prefixed.db"},
		{"sqlite://" + filepath.Join(dir, "url.db"), "url.db"},
		{"sqlite:" + filepath.Join(odd, "odd.db"), filepath.Join(filepath.Base(odd), "odd.db")},
	} {
		st, err := store.Open(t.Context(), c.dsn, store.OpenParams{})
		if err != nil {
			t.Errorf("Open(%q): %v", c.dsn, err)
			continue
		}
		_, err = st.SetSetting(t.Context(), store.SetSettingParams{Key: "k", Value: "v"})
		_ = st.Close()
		if err != nil {
			t.Errorf("write through %q: %v", c.dsn, err)
		}
		if _, err := os.Stat(filepath.Join(dir, c.file)); err != nil {
			t.Errorf("Open(%q) did not create %s: %v", c.dsn, c.file, err)
		}
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.db")
	st, err := store.Open(t.Context(), path, store.OpenParams{})
	if err != nil {
		t.Fatal(err)
	}
	_ = st.Close()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = raw.ExecContext(t.Context(), `INSERT INTO goose_db_version (version_id, is_applied) VALUES (9999, 1)`)
	_ = raw.Close()
	if err != nil {
		t.Fatal(err)
	}
	st, err = store.Open(t.Context(), path, store.OpenParams{})
	if err == nil {
		_ = st.Close()
		t.Fatal("Open accepted a database from a newer t3agent")
	}
	if !strings.Contains(err.Error(), "schema version 9999, newer than") {
		t.Errorf("err = %q, want it to say the schema is newer", err)
	}
}

// TestManyWritersTwoProcesses is the "database is locked" check: two stores
// on one file (as two processes would be) with many goroutines each.
func TestManyWritersTwoProcesses(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.db")
	var stores []store.Store
	for range 2 {
		st, err := store.Open(t.Context(), path, store.OpenParams{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		stores = append(stores, st)
	}
	const goroutines, writes = 20, 25
	start := make(chan struct{})
	errs := make(chan error, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			<-start
			st := stores[g%2]
			for i := range writes {
				p := store.SetToolOverrideParams{Name: "t" + string(rune('a'+g)), Enabled: i%2 == 0, UpdatedBy: "w"}
				if _, err := st.SetToolOverride(context.Background(), p); err != nil {
					errs <- err
					return
				}
				if _, err := st.SetSettings(context.Background(), []store.SetSettingParams{{Key: "a", Value: p.Name}, {Key: "b", Value: p.Name}}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("write failed: %v", err)
		if errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "locked") {
			t.Error("writers hit the SQLite lock")
		}
	}
	list, err := stores[1].ToolOverrides(t.Context())
	if err != nil || len(list) != goroutines {
		t.Errorf("%d overrides, %v; want %d", len(list), err, goroutines)
	}
	a, _ := stores[0].Setting(t.Context(), "a")
	b, _ := stores[0].Setting(t.Context(), "b")
	if a != b {
		t.Errorf("a batch was torn: a=%q b=%q", a, b)
	}
}

// TestConcurrentUpgrade starts several stores at once on a database whose
// version table exists but whose migrations are pending, as after an
// upgrade. SQLite has no migration lock, so they race to apply the same
// steps; every one must still open.
func TestConcurrentUpgrade(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.db")
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = raw.ExecContext(t.Context(), `
		CREATE TABLE goose_db_version (
			id INTEGER PRIMARY KEY AUTOINCREMENT,
			version_id INTEGER NOT NULL,
			is_applied INTEGER NOT NULL,
			tstamp TIMESTAMP DEFAULT (datetime('now')));
		INSERT INTO goose_db_version (version_id, is_applied) VALUES (0, 1);`)
	_ = raw.Close()
	if err != nil {
		t.Fatal(err)
	}
	const n = 6
	stores := make([]store.Store, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			stores[i], errs[i] = store.Open(t.Context(), path, store.OpenParams{})
		})
	}
	close(start)
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Errorf("store %d: %v", i, errs[i])
			continue
		}
		if _, err := stores[i].SetSetting(t.Context(), store.SetSettingParams{Key: "k", Value: "v"}); err != nil {
			t.Errorf("store %d cannot write: %v", i, err)
		}
		_ = stores[i].Close()
	}
}
