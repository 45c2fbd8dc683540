// Package demo builds the embedded default TYPO3 v13 site of `t3agent demo`
// (docs/demo-site.md) and imports T3D exports such as the introduction
// package for tests. It is the only code in t3agent that writes to a site
// database, and it only ever writes to databases it creates content in.
package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/t3agent/t3agent/internal/typo3"
)

// Version is the layout version of the generated demo; it is stored in
// demo.json and changes when the fixed layout changes.
const Version = 1

// Defaults of InitParams.
const (
	DefaultPages   = 60
	DefaultContent = 300
)

// DefaultNow is the fixed clock of the demo (2026-06-01 UTC), so timestamps
// do not depend on the day Init runs.
func DefaultNow() time.Time { return time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC) }

// File names inside InitParams.Dir.
const (
	MarkerFile      = "demo.json"
	CredentialsFile = "credentials.txt"
	SQLiteFile      = "site.db"
	ProjectDir      = "site"
)

// ErrIncomplete is returned when Dir holds the remains of an interrupted
// Init. Init never mixes a new demo into them.
var ErrIncomplete = errors.New("incomplete demo")

// InitParams configures Init.
type InitParams struct {
	// Dir receives demo.json, credentials.txt, the SQLite database (unless
	// SiteDSN names another one) and the installation folder site/.
	Dir string
	// SiteDSN is the site database (typo3.Open syntax); it must be empty of
	// TYPO3 tables. Empty means sqlite:Dir/site.db.
	SiteDSN string
	// Pages and Content are the total row counts of pages and tt_content,
	// fixed layout and translations included (0 = the defaults).
	Pages, Content int
	// Now is the generator's clock (zero = DefaultNow).
	Now time.Time
	// Seed varies the filler (0 = the default seed).
	Seed uint64
	// FastHashes hashes passwords with cheap Argon2id settings (tests).
	FastHashes bool
}

// Result describes a demo site.
type Result struct {
	// Existed is true when Dir already held a complete demo; nothing was
	// changed then.
	Existed bool
	Dir     string
	// SiteDSN opens the site database: "sqlite:<path>" for the default
	// SQLite file, else the DSN Init was given (for an existing demo built
	// into a server database and no DSN given: the one recorded in
	// demo.json, whose password is redacted).
	SiteDSN string
	Dialect typo3.Dialect
	// ProjectRoot is the composer-mode installation folder (Dir/site).
	ProjectRoot string
	// CredentialsFile holds the backend logins (mode 0600).
	CredentialsFile string
	// Users are the backend users with their plain passwords.
	Users []User
	// Params are the parameters the demo was built with (defaults filled).
	Params InitParams
	// Counts are the rows written per table.
	Counts map[string]int
}

// User returns the backend user with the given username.
func (r *Result) User(username string) (User, bool) {
	for _, u := range r.Users {
		if u.Username == username {
			return u, true
		}
	}
	return User{}, false
}

// marker is the content of demo.json, written last.
type marker struct {
	Version   int            `json:"version"`
	Generator string         `json:"generator"`
	Dialect   string         `json:"dialect"`
	SiteDSN   string         `json:"site_dsn"` // redacted
	Pages     int            `json:"pages"`
	Content   int            `json:"content"`
	Now       time.Time      `json:"now"`
	Seed      uint64         `json:"seed"`
	Counts    map[string]int `json:"counts"`
}

func (p *InitParams) normalise() error {
	if p.Dir == "" {
		return errors.New("demo: no directory given")
	}
	abs, err := filepath.Abs(p.Dir)
	if err != nil {
		return fmt.Errorf("demo directory %s: %w", p.Dir, err)
	}
	p.Dir = abs
	if p.Pages == 0 {
		p.Pages = DefaultPages
	}
	if p.Content == 0 {
		p.Content = DefaultContent
	}
	if p.Pages < fixedPages {
		return fmt.Errorf("demo: %d pages requested, the fixed layout alone has %d", p.Pages, fixedPages)
	}
	if p.Content < fixedContent {
		return fmt.Errorf("demo: %d content elements requested, the fixed layout alone has %d", p.Content, fixedContent)
	}
	if p.Now.IsZero() {
		p.Now = DefaultNow()
	}
	p.Now = p.Now.UTC()
	return nil
}

// Init writes the demo site into p.Dir (and p.SiteDSN). When Dir already
// holds a complete demo it reports Existed and changes nothing; when it
// holds an interrupted one, or anything else, it refuses.
func Init(ctx context.Context, p InitParams) (*Result, error) {
	if err := p.normalise(); err != nil {
		return nil, err
	}
	if res, err := existing(p); res != nil || err != nil {
		return res, err
	}
	dsn := p.SiteDSN
	if dsn == "" {
		dsn = "sqlite:" + filepath.Join(p.Dir, SQLiteFile)
	}
	_, statErr := os.Stat(p.Dir)
	created := errors.Is(statErr, os.ErrNotExist)
	if err := os.MkdirAll(p.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("demo directory: %w", err)
	}
	res, err := build(ctx, p, dsn)
	if err != nil {
		// Leave nothing half-written behind: the next run starts clean.
		cleanup(p.Dir, created)
		return nil, err
	}
	return res, nil
}

// existing inspects Dir: a complete demo yields its Result, remains of an
// interrupted run or foreign files an error, an empty or missing Dir nil.
func existing(p InitParams) (*Result, error) {
	entries, err := os.ReadDir(p.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("demo directory: %w", err)
	}
	if len(entries) == 0 {
		return nil, nil
	}
	raw, err := os.ReadFile(filepath.Join(p.Dir, MarkerFile))
	if errors.Is(err, os.ErrNotExist) {
		for _, e := range entries {
			switch e.Name() {
			case SQLiteFile, SQLiteFile + "-wal", SQLiteFile + "-shm", ProjectDir, CredentialsFile:
				return nil, fmt.Errorf("%w: %s holds the remains of an interrupted demo (no %s); remove the directory and run again", ErrIncomplete, p.Dir, MarkerFile)
			}
		}
		return nil, fmt.Errorf("demo directory %s is not empty and holds no demo; choose an empty or new directory", p.Dir)
	}
	if err != nil {
		return nil, fmt.Errorf("demo marker: %w", err)
	}
	var m marker
	if err := json.Unmarshal(raw, &m); err != nil || m.Version == 0 {
		return nil, fmt.Errorf("%w: %s/%s is damaged; remove the directory and run again", ErrIncomplete, p.Dir, MarkerFile)
	}
	if p.SiteDSN != "" && typo3.RedactDSN(p.SiteDSN) != m.SiteDSN {
		return nil, fmt.Errorf("%s holds a demo built into %s, not %s; choose another directory", p.Dir, m.SiteDSN, typo3.RedactDSN(p.SiteDSN))
	}
	dsn := p.SiteDSN
	switch {
	case dsn != "":
	case m.Dialect == string(typo3.DialectSQLite):
		dsn = "sqlite:" + filepath.Join(p.Dir, SQLiteFile)
	default:
		// Built into a server database: the marker keeps its DSN without
		// the password.
		dsn = m.SiteDSN
	}
	res := &Result{
		Existed: true, Dir: p.Dir, SiteDSN: dsn, Dialect: typo3.Dialect(m.Dialect),
		ProjectRoot:     filepath.Join(p.Dir, ProjectDir),
		CredentialsFile: filepath.Join(p.Dir, CredentialsFile),
		Params: InitParams{Dir: p.Dir, SiteDSN: p.SiteDSN, Pages: m.Pages, Content: m.Content, Now: m.Now,
			Seed: m.Seed, FastHashes: p.FastHashes},
		Counts: m.Counts,
	}
	// The passwords are only known from the credentials file; a demo whose
	// file was removed still exists, just without them.
	if users, err := readCredentials(res.CredentialsFile); err == nil {
		res.Users = users
	}
	return res, nil
}

// cleanup removes what a failed Init wrote into dir, and dir itself when
// Init created it.
func cleanup(dir string, created bool) {
	for _, name := range []string{MarkerFile, MarkerFile + ".tmp", CredentialsFile, SQLiteFile, SQLiteFile + "-wal", SQLiteFile + "-shm", SQLiteFile + "-journal", ProjectDir} {
		_ = os.RemoveAll(filepath.Join(dir, name))
	}
	if created {
		_ = os.Remove(dir)
	}
}

func seedFor(p InitParams) (uint64, uint64) {
	h := fnv.New64a()
	fmt.Fprintf(h, "t3agent-demo/%d/%d/%d/%d/%d", Version, p.Pages, p.Content, p.Now.Unix(), p.Seed)
	s := h.Sum64()
	return s, s ^ 0x9e3779b97f4a7c15
}

func build(ctx context.Context, p InitParams, dsn string) (_ *Result, err error) {
	// Hash passwords while the rows are generated: default Argon2id costs
	// take a while per hash. Backend users first, then three frontend users.
	users := demoUsers()
	pws, err := newPasswords(len(users) + 3)
	if err != nil {
		return nil, err
	}
	for i := range users {
		users[i].Password = pws[i]
	}
	wait := hashInBackground(pws, p.FastHashes)
	hashes := func() ([]userRow, []string, error) {
		h, err := wait()
		if err != nil {
			return nil, nil, err
		}
		for i := range users {
			users[i].hash = h[i]
		}
		return users, h[len(users):], nil
	}
	// Every return below waits for the hashing goroutines first.
	defer func() { _, _ = wait() }()

	db, err := typo3.Open(ctx, dsn, typo3.OpenParams{Writable: true})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	counts, err := populate(ctx, db, p, hashes)
	if err != nil {
		return nil, err
	}
	defer func() {
		// The rows are in, but the demo is not complete without its files
		// and marker: take the rows out again.
		if err != nil {
			dropTables(db, demoSchema())
		}
	}()
	res := &Result{
		Dir: p.Dir, SiteDSN: dsn, Dialect: db.Dialect,
		ProjectRoot:     filepath.Join(p.Dir, ProjectDir),
		CredentialsFile: filepath.Join(p.Dir, CredentialsFile),
		Params:          p,
		Counts:          counts,
	}
	for _, u := range users {
		res.Users = append(res.Users, u.User)
	}
	if err := writeProject(res.ProjectRoot, p, db.Dialect, dsn); err != nil {
		return nil, err
	}
	if err := writeSystemFiles(res.ProjectRoot, p); err != nil {
		return nil, fmt.Errorf("write system files: %w", err)
	}
	if err := writeCredentials(res.CredentialsFile, res.Users, p.Now); err != nil {
		return nil, err
	}
	m := marker{Version: Version, Generator: "t3agent demo", Dialect: string(db.Dialect), SiteDSN: typo3.RedactDSN(dsn),
		Pages: p.Pages, Content: p.Content, Now: p.Now, Seed: p.Seed, Counts: counts}
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	// The marker goes last and atomically: its presence means complete.
	tmp := filepath.Join(p.Dir, MarkerFile+".tmp")
	if err := os.WriteFile(tmp, append(raw, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("demo marker: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(p.Dir, MarkerFile)); err != nil {
		return nil, fmt.Errorf("demo marker: %w", err)
	}
	return res, nil
}

// populate creates the schema in db and fills it.
func populate(ctx context.Context, db *typo3.DB, p InitParams, hashes func() ([]userRow, []string, error)) (counts map[string]int, err error) {
	schema := demoSchema()
	if err := ensureEmpty(ctx, db, schema); err != nil {
		return nil, err
	}
	if db.Dialect == typo3.DialectSQLite {
		// A fresh file with no marker yet: durability of each commit does
		// not matter, a crash means starting over anyway.
		if _, err := db.SQL.ExecContext(ctx, "PRAGMA synchronous=OFF"); err != nil {
			return nil, err
		}
	}
	defer func() {
		if err != nil {
			dropTables(db, schema)
		}
	}()
	if err := execDDL(ctx, db, schema.CreateStatements(db.Dialect)); err != nil {
		return nil, fmt.Errorf("create demo schema: %w", err)
	}
	tx, err := db.SQL.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }()
	s1, s2 := seedFor(p)
	g := &generator{
		ctx: ctx, tx: tx, d: db.Dialect, schema: schema, r: rand.New(rand.NewPCG(s1, s2)), w: newPools(),
		now: p.Now.Unix(), p: p, slugs: slugs{}, counts: map[string]int{}, pageTitles: map[int]string{},
	}
	if err := g.generate(hashes); err != nil {
		return nil, err
	}
	if err := g.scheduler(); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("commit demo rows: %w", err)
	}
	if err := execDDL(ctx, db, schema.IndexStatements(db.Dialect)); err != nil {
		return nil, fmt.Errorf("create demo indexes: %w", err)
	}
	if err := resetSequences(ctx, db, schema); err != nil {
		return nil, err
	}
	return g.counts, nil
}

// execDDL runs schema statements, in one transaction where the dialect
// has transactional DDL (one commit instead of one per statement; MariaDB
// commits each DDL statement by itself).
func execDDL(ctx context.Context, db *typo3.DB, statements []string) error {
	if db.Dialect == typo3.DialectMySQL {
		for _, st := range statements {
			if _, err := db.SQL.ExecContext(ctx, st); err != nil {
				return err
			}
		}
		return nil
	}
	tx, err := db.SQL.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	for _, st := range statements {
		if _, err := tx.ExecContext(ctx, st); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// dropTables removes the demo tables after a failed run, so a server
// database is left as empty as it was found (best effort).
func dropTables(db *typo3.DB, schema Schema) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, t := range schema {
		_, _ = db.SQL.ExecContext(ctx, "DROP TABLE IF EXISTS "+q(db.Dialect, t.Name))
	}
}

// ensureEmpty refuses a database that already has any of the demo tables.
func ensureEmpty(ctx context.Context, db *typo3.DB, schema Schema) error {
	var found []string
	for _, t := range schema {
		var probe string
		switch db.Dialect {
		case typo3.DialectSQLite:
			probe = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?"
		case typo3.DialectMySQL:
			probe = "SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?"
		default:
			probe = "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = $1"
		}
		var n int
		if err := db.SQL.QueryRowContext(ctx, probe, t.Name).Scan(&n); err != nil {
			return fmt.Errorf("inspect site database: %w", err)
		}
		if n > 0 {
			found = append(found, t.Name)
		}
	}
	if len(found) > 0 {
		sort.Strings(found)
		return fmt.Errorf("site database %s already has TYPO3 tables (%s); the demo needs an empty database", db.DSN, strings.Join(found, ", "))
	}
	return nil
}

// resetSequences moves PostgreSQL's uid sequences past the explicit uids
// the demo inserted (MariaDB and SQLite do this by themselves).
func resetSequences(ctx context.Context, db *typo3.DB, schema Schema) error {
	if db.Dialect != typo3.DialectPostgres {
		return nil
	}
	for _, t := range schema {
		var auto string
		for _, c := range t.Columns {
			if c.AutoUID {
				auto = c.Name
			}
		}
		if auto == "" {
			continue
		}
		qt, qc := q(db.Dialect, t.Name), q(db.Dialect, auto)
		st := fmt.Sprintf(`SELECT setval(pg_get_serial_sequence('%s', '%s'), COALESCE((SELECT MAX(%s) FROM %s), 0) + 1, false)`, qt, auto, qc, qt)
		if _, err := db.SQL.ExecContext(ctx, st); err != nil {
			return fmt.Errorf("reset sequence of %s: %w", t.Name, err)
		}
	}
	return nil
}
