package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// OpenReadOnly opens an existing database file for reading only
// (mode=ro): backup, restore and copy read a store through it and never
// write it, not even to switch its journal mode. It is one connection,
// so a transaction on it is one consistent snapshot.
func OpenReadOnly(ctx context.Context, path string) (*sql.DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: cannot resolve the path %s: %w", path, err)
	}
	st, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("sqlitestore: %s does not exist", abs)
	case err != nil:
		return nil, fmt.Errorf("sqlitestore: cannot open %s: %w", abs, err)
	case st.IsDir():
		return nil, fmt.Errorf("sqlitestore: cannot open %s: it is a directory", abs)
	}
	db, err := sql.Open("sqlite", fileURI(abs,
		"mode=ro",
		"_pragma=busy_timeout("+fmt.Sprint(BusyTimeout.Milliseconds())+")",
		"_time_format=sqlite",
	))
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: cannot open %s: %w", abs, err)
	}
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("sqlitestore: cannot open %s for reading: %w", abs, err)
	}
	return db, nil
}

// MigrationFiles are the SQLite schema migrations, for readers of the
// schema that open no Driver.
func MigrationFiles() fs.FS { return (*Driver)(nil).Migrations() }

// Seal makes the database file at path self-contained, for a backup
// that is copied around: it leaves write-ahead logging (so no -wal file
// belongs to it) and must pass SQLite's integrity check.
func Seal(ctx context.Context, path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("sqlitestore: cannot resolve the path %s: %w", path, err)
	}
	db, err := sql.Open("sqlite", fileURI(abs, "_pragma=busy_timeout("+fmt.Sprint(BusyTimeout.Milliseconds())+")"))
	if err != nil {
		return fmt.Errorf("sqlitestore: cannot open %s: %w", abs, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var mode, ok string
	if err := db.QueryRowContext(ctx, `PRAGMA journal_mode = DELETE`).Scan(&mode); err != nil {
		return fmt.Errorf("sqlitestore: cannot leave WAL mode in %s: %w", abs, err)
	}
	if err := db.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&ok); err != nil {
		return fmt.Errorf("sqlitestore: cannot check %s: %w", abs, err)
	}
	if ok != "ok" {
		return fmt.Errorf("sqlitestore: %s fails SQLite's integrity check: %s", abs, ok)
	}
	return nil
}
