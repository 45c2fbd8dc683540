package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/t3agent/t3agent/internal/store/sqlitestore"
)

// BackupParams are the parameters of Backup.
type BackupParams struct {
	// From is the store to back up (a DSN as Open takes it); it may be
	// serving while it is backed up.
	From string
	// To is the backup file to write; it must not exist.
	To     string
	Logger *slog.Logger
}

// BackupReport is what Backup wrote.
type BackupReport struct {
	File string `json:"file"`
	// Method is "sqlite-vacuum-into" for a SQLite store and
	// "logical-copy" for a PostgreSQL one.
	Method        string        `json:"method"`
	SchemaVersion int64         `json:"schemaVersion"`
	Tables        []TableSum    `json:"tables"`
	Bytes         int64         `json:"bytes"`
	Duration      time.Duration `json:"durationNs"`
}

// Backup writes a consistent copy of a store into one SQLite file,
// readable by its owner only (it holds sealed credentials and token
// hashes). A SQLite store is copied page by page with VACUUM INTO, one
// snapshot taken while writers go on; a PostgreSQL store is copied table
// by table (Copy) in one repeatable-read snapshot, so the backup of
// either is a file Restore takes back into either. The file appears
// under its name only once it is complete and checked.
func Backup(ctx context.Context, p BackupParams) (BackupReport, error) {
	start := time.Now()
	kind, target, err := parseDSN(p.From)
	if err != nil {
		return BackupReport{}, err
	}
	to, err := filepath.Abs(p.To)
	if err != nil {
		return BackupReport{}, fmt.Errorf("store: cannot resolve the backup path %s: %w", p.To, err)
	}
	if _, err := os.Lstat(to); err == nil {
		return BackupReport{}, fmt.Errorf("store: %s already exists; a backup never overwrites a file", to)
	}
	tmp, err := os.CreateTemp(filepath.Dir(to), "."+filepath.Base(to)+".partial-*")
	if err != nil {
		return BackupReport{}, fmt.Errorf("store: cannot write the backup next to %s: %w", to, err)
	}
	tmpPath := tmp.Name()
	_ = tmp.Close()
	// VACUUM INTO refuses an existing file, and so would a fresh SQLite
	// store; the name was only reserved.
	_ = os.Remove(tmpPath)
	defer removeSQLite(tmpPath)

	rep := BackupReport{File: to}
	if kind == kindPostgres {
		rep.Method = "logical-copy"
		cr, err := Copy(ctx, CopyParams{From: p.From, To: "sqlite:" + tmpPath, Logger: p.Logger})
		if err != nil {
			return BackupReport{}, err
		}
		rep.SchemaVersion = cr.SchemaVersion
	} else {
		rep.Method = "sqlite-vacuum-into"
		if err := vacuumInto(ctx, target, tmpPath); err != nil {
			return BackupReport{}, err
		}
	}
	if err := sqlitestore.Seal(ctx, tmpPath); err != nil {
		return BackupReport{}, err
	}
	// What the file holds, read back from the file.
	src, err := openSource(ctx, "sqlite:"+tmpPath)
	if err != nil {
		return BackupReport{}, err
	}
	rep.SchemaVersion, err = src.schemaVersion(ctx)
	_ = src.close()
	if err != nil {
		return BackupReport{}, err
	}
	if rep.Tables, err = Inventory(ctx, "sqlite:"+tmpPath); err != nil {
		return BackupReport{}, err
	}
	if err := os.Chmod(tmpPath, 0o600); err != nil {
		return BackupReport{}, fmt.Errorf("store: cannot restrict the backup's permissions: %w", err)
	}
	// Link, not rename: a file that appeared under the name meanwhile is
	// never replaced. A file system without hard links gets a rename.
	if err := os.Link(tmpPath, to); err != nil {
		if _, serr := os.Lstat(to); serr == nil {
			return BackupReport{}, fmt.Errorf("store: %s appeared while the backup was written; a backup never overwrites a file", to)
		}
		if err := os.Rename(tmpPath, to); err != nil {
			return BackupReport{}, fmt.Errorf("store: cannot put the backup at %s: %w", to, err)
		}
	}
	if st, err := os.Stat(to); err == nil {
		rep.Bytes = st.Size()
	}
	rep.Duration = time.Since(start)
	return rep, nil
}

// vacuumInto writes a snapshot of the SQLite store at path into to.
func vacuumInto(ctx context.Context, path, to string) error {
	db, err := sqlitestore.OpenReadOnly(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+versionTable).Scan(&n); err != nil || n == 0 {
		return fmt.Errorf("store: %s holds no t3agent store", path)
	}
	if _, err := db.ExecContext(ctx, `VACUUM INTO $1`, to); err != nil {
		return fmt.Errorf("store: cannot back up %s: %w", path, err)
	}
	return nil
}

// removeSQLite removes a database file with its journal files.
func removeSQLite(path string) {
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		_ = os.Remove(p)
	}
}

// RestoreParams are the parameters of Restore.
type RestoreParams struct {
	// From is a backup file written by Backup (any SQLite store file
	// will do). It is only read.
	From string
	// To is the store to restore into: a new SQLite file or an empty
	// PostgreSQL database, as Copy takes it.
	To     string
	Logger *slog.Logger
}

// sqliteHeader starts every SQLite database file.
var sqliteHeader = []byte("SQLite format 3\x00")

// Restore copies a backup into an empty store (Copy, verified table by
// table). A backup from an older t3agent is restored at its own schema
// version; the next start migrates it.
func Restore(ctx context.Context, p RestoreParams) (CopyReport, error) {
	f, err := os.Open(p.From)
	if errors.Is(err, fs.ErrNotExist) {
		return CopyReport{}, fmt.Errorf("store: the backup %s does not exist", p.From)
	}
	if err != nil {
		return CopyReport{}, fmt.Errorf("store: cannot read the backup %s: %w", p.From, err)
	}
	head := make([]byte, len(sqliteHeader))
	_, err = io.ReadFull(f, head)
	_ = f.Close()
	if err != nil || !bytes.Equal(head, sqliteHeader) {
		return CopyReport{}, fmt.Errorf("store: %s is not a backup (not a SQLite database file)", p.From)
	}
	return Copy(ctx, CopyParams{From: "sqlite:" + p.From, To: p.To, Logger: p.Logger})
}
