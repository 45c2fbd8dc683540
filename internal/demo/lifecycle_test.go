package demo

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/typo3"
)

type fileState struct {
	size int64
	mod  time.Time
}

func snapshot(t *testing.T, dir string) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := os.Lstat(path)
		if err != nil {
			return err
		}
		out[path] = fileState{info.Size(), info.ModTime()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestInitIdempotent runs Init twice on one directory: the second run
// reports the existing demo with the same logins and touches nothing.
func TestInitIdempotent(t *testing.T) {
	t.Parallel()
	first := initDemo(t, InitParams{Pages: 40, Content: 80})
	// Reading first: a WAL-mode SQLite reader creates its -wal/-shm files.
	db := openRO(t, first.SiteDSN)
	pagesBefore := count(t, db, "pages", "")
	before := snapshot(t, first.Dir)

	second := initDemo(t, InitParams{Dir: first.Dir, Pages: 999, Content: 999})
	if !second.Existed {
		t.Fatal("second Init did not report the existing demo")
	}
	if second.Params.Pages != 40 || second.Params.Content != 80 || !reflect.DeepEqual(second.Counts, first.Counts) {
		t.Errorf("existing demo reports params %+v counts %v, built with 40/80 %v", second.Params, second.Counts, first.Counts)
	}
	if !reflect.DeepEqual(second.Users, first.Users) {
		t.Errorf("existing demo reports users %v, want %v", second.Users, first.Users)
	}
	if second.SiteDSN != first.SiteDSN || second.ProjectRoot != first.ProjectRoot {
		t.Errorf("existing demo at %s/%s, built at %s/%s", second.SiteDSN, second.ProjectRoot, first.SiteDSN, first.ProjectRoot)
	}
	if after := snapshot(t, first.Dir); !reflect.DeepEqual(after, before) {
		for p, s := range after {
			if before[p] != s {
				t.Errorf("%s changed: %v → %v", p, before[p], s)
			}
		}
		for p := range before {
			if _, ok := after[p]; !ok {
				t.Errorf("%s vanished", p)
			}
		}
	}
	if n := count(t, db, "pages", ""); n != pagesBefore {
		t.Errorf("pages: %d rows after the second Init, %d before", n, pagesBefore)
	}
	// The same directory with another database is not "the existing demo".
	_, err := Init(context.Background(), InitParams{Dir: first.Dir, SiteDSN: "sqlite:" + filepath.Join(t.TempDir(), "x.db"), FastHashes: true})
	if err == nil || !strings.Contains(err.Error(), "holds a demo built into") {
		t.Errorf("Init with another database over an existing demo: %v", err)
	}
}

// TestInitRefuses covers the directories and databases Init must not
// build into, and that a refused run leaves no trace.
func TestInitRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("interrupted", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, SQLiteFile), []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Init(ctx, InitParams{Dir: dir, FastHashes: true})
		if !errors.Is(err, ErrIncomplete) || !strings.Contains(err.Error(), "remove the directory") {
			t.Fatalf("Init over an interrupted demo: %v", err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, SQLiteFile)); string(b) != "half" {
			t.Error("Init touched the remains it refused")
		}
	})

	t.Run("foreign files", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Init(ctx, InitParams{Dir: dir, FastHashes: true})
		if err == nil || errors.Is(err, ErrIncomplete) || !strings.Contains(err.Error(), "not empty") {
			t.Fatalf("Init into a foreign directory: %v", err)
		}
	})

	t.Run("damaged marker", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, MarkerFile), []byte("{"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Init(ctx, InitParams{Dir: dir, FastHashes: true}); !errors.Is(err, ErrIncomplete) {
			t.Fatalf("Init with a damaged marker: %v", err)
		}
	})

	t.Run("too small", func(t *testing.T) {
		t.Parallel()
		dir := filepath.Join(t.TempDir(), "d")
		if _, err := Init(ctx, InitParams{Dir: dir, Pages: 10}); err == nil || !strings.Contains(err.Error(), "fixed layout") {
			t.Fatalf("Init with 10 pages: %v", err)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Error("a refused Init created its directory")
		}
	})

	// A database that already holds a site: the second demo fails after
	// creating its directory, and removes everything it wrote.
	for _, d := range allDialects {
		t.Run("used database "+string(d), func(t *testing.T) {
			t.Parallel()
			p := InitParams{}
			if d != typo3.DialectSQLite {
				p.SiteDSN = freshDSN(t, d, t.TempDir())
			}
			first := initDemo(t, p)
			dir := filepath.Join(t.TempDir(), "second")
			_, err := Init(ctx, InitParams{Dir: dir, SiteDSN: first.SiteDSN, FastHashes: true})
			if err == nil || !strings.Contains(err.Error(), "already has TYPO3 tables") {
				t.Fatalf("Init into a used database: %v", err)
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Error("the failed Init left its directory behind")
			}
			db := openRO(t, first.SiteDSN)
			if n := count(t, db, "pages", ""); n != DefaultPages {
				t.Errorf("the first site has %d pages after the refused Init", n)
			}
		})
	}
}

// TestDeterministic: the same parameters give the same rows, on one
// dialect and across dialects; another seed gives other filler.
func TestDeterministic(t *testing.T) {
	t.Parallel()
	p := InitParams{Pages: 90, Content: 400}
	a := initDemo(t, p)
	b := initDemo(t, p)
	other := p
	other.Seed = 7
	c := initDemo(t, other)
	dbA, dbB, dbC := openRO(t, a.SiteDSN), openRO(t, b.SiteDSN), openRO(t, c.SiteDSN)
	orders := map[string]string{
		"pages": "uid", "tt_content": "uid", "sys_category": "uid", "sys_file_reference": "uid",
		"sys_history": "uid", "sys_log": "uid", "be_groups": "uid",
		"sys_category_record_mm": "uid_local, uid_foreign, tablenames", "sys_refindex": "hash",
	}
	for table, order := range orders {
		q := "SELECT * FROM " + table + " ORDER BY " + order
		if !reflect.DeepEqual(dump(t, dbA, q), dump(t, dbB, q)) {
			t.Errorf("%s differs between two runs with the same parameters", table)
		}
		if table == "tt_content" && reflect.DeepEqual(dump(t, dbA, q), dump(t, dbC, q)) {
			t.Error("another seed produced the same content")
		}
	}
	if a.Users[0].Password == b.Users[0].Password {
		t.Error("two demos share the admin password")
	}

	// The same rows on MariaDB and PostgreSQL.
	for _, d := range []typo3.Dialect{typo3.DialectMySQL, typo3.DialectPostgres} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			q := p
			q.SiteDSN = freshDSN(t, d, t.TempDir())
			res := initDemo(t, q)
			db := openRO(t, res.SiteDSN)
			for _, table := range []string{"pages", "tt_content", "sys_history"} {
				query := "SELECT * FROM " + db.MustQuote(table) + " ORDER BY uid"
				want, got := dump(t, dbA, query), dump(t, db, query)
				if len(want) != len(got) {
					t.Fatalf("%s: %d rows on %s, %d on SQLite", table, len(got), d, len(want))
				}
				for i := range want {
					if !reflect.DeepEqual(want[i], got[i]) {
						for k, v := range want[i] {
							if got[i][k] != v {
								t.Errorf("%s uid %s column %s: %s %q, SQLite %q", table, want[i]["uid"], k, d, got[i][k], v)
							}
						}
						break
					}
				}
			}
		})
	}
}

// TestInitDefaultHashCost: without FastHashes the logins carry TYPO3 v13's
// default Argon2id cost, as `t3agent demo` writes them.
func TestInitDefaultHashCost(t *testing.T) {
	t.Parallel()
	res, err := Init(context.Background(), InitParams{Dir: filepath.Join(t.TempDir(), "d"), Pages: 25, Content: 6})
	if err != nil {
		t.Fatal(err)
	}
	db := openRO(t, res.SiteDSN)
	for _, table := range []string{"be_users", "fe_users"} {
		for _, r := range dump(t, db, "SELECT username, password FROM "+table) {
			if !strings.HasPrefix(r["password"], "$argon2id$v=19$m=65536,t=16,p=1$") {
				t.Errorf("%s %s: hash %s lacks the default cost", table, r["username"], r["password"])
			}
		}
	}
	if n := count(t, db, "pages", ""); n != 25 {
		t.Errorf("minimal demo: %d pages, want the 25 fixed ones", n)
	}
	if n := count(t, db, "tt_content", ""); n != 6 {
		t.Errorf("minimal demo: %d content elements, want the 6 fixed ones", n)
	}
}
