// Package sqlitestore is the SQLite driver of the store: one file, no
// server, the default. It hands the shared SQL layer in package store two
// pools on that file:
//
//   - the writer: exactly one connection. Every write in this process
//     queues for it, so writers never contend for SQLite's lock among
//     themselves; its transactions BEGIN IMMEDIATE, so a transaction takes
//     the lock before it reads and cannot fail half-way on an upgrade.
//   - the reader: a few connections set query_only. In WAL mode they read
//     a committed snapshot while the writer writes.
//
// Every connection keeps the statements it ran prepared (package
// sqliteconn), so the store's repeated queries skip SQLite's parser.
//
// Other processes on the same file (a CLI command beside the server) wait
// for the lock up to the busy timeout instead of failing at once.
//
// Use it through store.Open("sqlite:PATH"); Open here is for store.New.
package sqlitestore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/t3agent/t3agent/internal/sqliteconn"
)

// BusyTimeout is how long a statement waits for another process's write
// lock before it fails.
const BusyTimeout = 10 * time.Second

//go:embed migrations/*.sql
var migrations embed.FS

// Driver is an open SQLite database. It satisfies store.Driver.
type Driver struct {
	path string
	w, r *sql.DB
}

// Open opens (creating if needed) the SQLite database file at path and
// switches it to WAL mode. The directory must exist. In-memory databases
// are refused: the reader pool would not see the writer's data.
func Open(ctx context.Context, path string) (*Driver, error) {
	if path == "" {
		return nil, errors.New("sqlitestore: the database path is empty")
	}
	if path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("sqlitestore: %q is not supported; give the path of a database file", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: cannot resolve the path %s: %w", path, err)
	}
	if err := checkPath(abs); err != nil {
		return nil, err
	}

	bt := fmt.Sprint(BusyTimeout.Milliseconds())
	w, err := sqliteconn.Open(fileURI(abs,
		"_pragma=busy_timeout("+bt+")",
		"_pragma=journal_mode(WAL)",
		"_pragma=foreign_keys(1)",
		// NORMAL is safe under WAL: a power cut may lose the last commits
		// but never corrupts the file.
		"_pragma=synchronous(NORMAL)",
		"_txlock=immediate",
		"_time_format=sqlite",
	))
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: cannot open %s: %w", abs, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	d := &Driver{path: abs, w: w}
	if err := d.checkWriter(ctx); err != nil {
		_ = w.Close()
		return nil, err
	}

	d.r, err = sqliteconn.Open(fileURI(abs,
		"_pragma=busy_timeout("+bt+")",
		"_pragma=query_only(1)",
		// The writer's time format, so that a time bound into a read
		// compares with the stored text as the same instant.
		"_time_format=sqlite",
	))
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("sqlitestore: cannot open %s for reading: %w", abs, err)
	}
	n := max(4, runtime.GOMAXPROCS(0))
	d.r.SetMaxOpenConns(n)
	d.r.SetMaxIdleConns(n)
	if err := d.r.PingContext(ctx); err != nil {
		_ = d.Close()
		return nil, fmt.Errorf("sqlitestore: cannot open %s for reading: %w", abs, err)
	}
	return d, nil
}

// checkPath turns the common mistakes into plain sentences before SQLite
// reports them as "unable to open database file".
func checkPath(abs string) error {
	dir := filepath.Dir(abs)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("sqlitestore: cannot open %s: directory %s does not exist", abs, dir)
	case err != nil:
		return fmt.Errorf("sqlitestore: cannot open %s: %w", abs, err)
	case !st.IsDir():
		return fmt.Errorf("sqlitestore: cannot open %s: %s is not a directory", abs, dir)
	}
	if st, err := os.Stat(abs); err == nil && st.IsDir() {
		return fmt.Errorf("sqlitestore: cannot open %s: it is a directory", abs)
	}
	return nil
}

// checkWriter opens the writer's connection, which applies the pragmas,
// and makes sure WAL took: without it readers would block the writer.
func (d *Driver) checkWriter(ctx context.Context) error {
	var mode string
	if err := d.w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("sqlitestore: cannot open %s: %w", d.path, err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("sqlitestore: cannot open %s: it stays in journal mode %q instead of WAL; put it on a local file system", d.path, mode)
	}
	return nil
}

// fileURI builds a SQLite URI filename. Characters that would end the path
// are escaped so any file name works; query holds the modernc parameters.
func fileURI(abs string, query ...string) string {
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(abs))
	return "file:" + esc + "?" + strings.Join(query, "&")
}

// Path is the absolute path of the database file.
func (d *Driver) Path() string { return d.path }

// Dialect is goose.DialectSQLite3.
func (d *Driver) Dialect() goose.Dialect { return goose.DialectSQLite3 }

// Writer is the single-connection write pool.
func (d *Driver) Writer() *sql.DB { return d.w }

// Reader is the query_only read pool.
func (d *Driver) Reader() *sql.DB { return d.r }

// Migrations are the SQLite schema migrations.
func (d *Driver) Migrations() fs.FS {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		panic(err) // the directory is embedded; this cannot fail
	}
	return sub
}

// Describe names the database file.
func (d *Driver) Describe() string { return "SQLite database " + d.path }

// Close closes both pools; SQLite checkpoints the WAL as the last
// connection goes.
func (d *Driver) Close() error {
	var rerr error
	if d.r != nil {
		rerr = d.r.Close()
	}
	return errors.Join(rerr, d.w.Close())
}
