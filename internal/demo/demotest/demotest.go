// Package demotest gives other packages' tests a real demo TYPO3 site: the
// generated demo of docs/demo-site.md, or the introduction package imported
// from its T3D export. It lives apart from package demo so the product
// binary does not link package testing.
package demotest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/dbtest"
	"github.com/t3agent/t3agent/internal/demo"
	"github.com/t3agent/t3agent/internal/typo3"
)

// Site is a demo site built for one test.
type Site struct {
	// DSN opens the site database with typo3.Open.
	DSN     string
	Dialect typo3.Dialect
	// Dir holds demo.json, credentials.txt and (SQLite) site.db.
	Dir string
	// Root is the installation folder (composer project root, Dir/site).
	Root   string
	Result *demo.Result
}

// Password returns the plain password of a backend user, failing the test
// when there is no such user.
func (s *Site) Password(t testing.TB, username string) string {
	t.Helper()
	u, ok := s.Result.User(username)
	if !ok {
		t.Fatalf("demo site has no backend user %q", username)
	}
	return u.Password
}

// Open opens the site database read-only, as t3agent does; it is closed
// when the test ends.
func (s *Site) Open(t testing.TB) *typo3.DB {
	t.Helper()
	return open(t, s.DSN)
}

func open(t testing.TB, dsn string) *typo3.DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := typo3.Open(ctx, dsn, typo3.OpenParams{})
	if err != nil {
		t.Fatalf("open demo site database: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// siteDSN returns a fresh empty database for d: a SQLite file below dir,
// or a new MariaDB/PostgreSQL database (skipping when the server's
// environment variable is unset, see package dbtest).
func siteDSN(t testing.TB, d typo3.Dialect, dir string) string {
	t.Helper()
	switch d {
	case typo3.DialectSQLite:
		return "sqlite:" + filepath.Join(dir, "site.db")
	case typo3.DialectMySQL:
		return dbtest.MySQL(t)
	case typo3.DialectPostgres:
		return dbtest.Postgres(t)
	}
	t.Fatalf("unknown dialect %q", d)
	return ""
}

// New builds the default-size demo (60 pages, 300 content elements) with
// cheap password hashes on dialect d: SQLite in a temporary directory,
// MariaDB or PostgreSQL in a fresh database of package dbtest.
func New(t testing.TB, d typo3.Dialect) *Site {
	t.Helper()
	return NewWith(t, d, demo.InitParams{})
}

// NewWith is New with explicit parameters; Dir and SiteDSN are chosen by
// NewWith, FastHashes is always on.
func NewWith(t testing.TB, d typo3.Dialect, p demo.InitParams) *Site {
	t.Helper()
	p.Dir = filepath.Join(t.TempDir(), "demo")
	p.SiteDSN = ""
	if d != typo3.DialectSQLite {
		p.SiteDSN = siteDSN(t, d, p.Dir)
	}
	p.FastHashes = true
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := demo.Init(ctx, p)
	if err != nil {
		t.Fatalf("build demo site: %v", err)
	}
	return &Site{DSN: res.SiteDSN, Dialect: res.Dialect, Dir: res.Dir, Root: res.ProjectRoot, Result: res}
}

// Intro is the introduction package imported for one test.
type Intro struct {
	DSN     string
	Dialect typo3.Dialect
	// Material is the TYPO3 test material (testdata/typo3): TCA JSON,
	// golden TypoScript, bootstrap_package files.
	Material string
	Result   *demo.ImportResult
}

// Password returns the plain password of an imported backend user.
func (in *Intro) Password(t testing.TB, username string) string {
	t.Helper()
	for _, u := range in.Result.Users {
		if u.Username == username {
			return u.Password
		}
	}
	t.Fatalf("introduction site has no backend user %q", username)
	return ""
}

// Open opens the imported database read-only; closed when the test ends.
func (in *Intro) Open(t testing.TB) *typo3.DB {
	t.Helper()
	return open(t, in.DSN)
}

// Introduction imports the introduction package's data.xml (85 pages, 226
// content elements, …) with its extension schema into a fresh database of
// dialect d and adds backend users admin (uid 1, admin) and editor (uid 2,
// group 1).
func Introduction(t testing.TB, d typo3.Dialect) *Intro {
	t.Helper()
	shared := dbtest.TYPO3Material(t)
	dsn := siteDSN(t, d, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := demo.ImportT3D(ctx, demo.ImportT3DParams{
		File:       filepath.Join(shared, "introduction", "Initialisation", "data.xml"),
		SchemaSQL:  filepath.Join(shared, "schema-sqlite-introduction.sql"),
		SiteDSN:    dsn,
		FastHashes: true,
	})
	if err != nil {
		t.Fatalf("import introduction package: %v", err)
	}
	return &Intro{DSN: dsn, Dialect: res.Dialect, Material: shared, Result: res}
}
