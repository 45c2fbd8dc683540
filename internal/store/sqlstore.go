package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// versionTable is goose's own table; SchemaVersion reads it.
const versionTable = "goose_db_version"

// sqlStore is the one implementation of Store, shared by every driver.
type sqlStore struct {
	drv    Driver
	w, r   *sql.DB
	now    func() time.Time
	log    *slog.Logger
	closed sync.Once
	cerr   error
}

var _ Store = (*sqlStore)(nil)

// New migrates the driver's database to the current schema and returns a
// Store on it. On error it closes the driver. Most callers want Open.
func New(ctx context.Context, drv Driver, params OpenParams) (Store, error) {
	s := &sqlStore{
		drv: drv,
		w:   drv.Writer(),
		r:   drv.Reader(),
		now: params.Now,
		log: params.Logger,
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if err := s.migrate(ctx); err != nil {
		_ = drv.Close()
		return nil, err
	}
	return s, nil
}

// migrator is goose's provider over the driver's migrations. It is not
// closed: its Close would close the driver's writer pool.
func migrator(drv Driver, log *slog.Logger) (*goose.Provider, error) {
	opts := []goose.ProviderOption{
		goose.WithDisableGlobalRegistry(true),
		goose.WithSlog(log),
	}
	if drv.Dialect() == goose.DialectPostgres {
		// Several processes may start at once; the advisory lock lets one
		// migrate while the others wait (polled each second, 5 minutes at most).
		locker, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(1, 300))
		if err != nil {
			return nil, fmt.Errorf("store: cannot set up the migration lock: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	p, err := goose.NewProvider(drv.Dialect(), drv.Writer(), drv.Migrations(), opts...)
	if err != nil {
		return nil, fmt.Errorf("store: cannot load the %s migrations: %w", drv.Dialect(), err)
	}
	return p, nil
}

func (s *sqlStore) migrate(ctx context.Context) error {
	p, err := migrator(s.drv, s.log)
	if err != nil {
		return err
	}

	// SQLite has no migration lock, so a second process may apply a step
	// between our look and our attempt; goose then fails on that step. We
	// retry for as long as the schema moves forward, which bounds the loop
	// by the number of migrations.
	for {
		current, target, err := p.GetVersions(ctx)
		if err != nil {
			return fmt.Errorf("store: cannot read the schema version of %s: %w", s.drv.Describe(), err)
		}
		if current > target {
			return fmt.Errorf("store: %s has schema version %d, newer than the %d this t3agent knows; upgrade t3agent or use another database",
				s.drv.Describe(), current, target)
		}
		results, upErr := p.Up(ctx)
		for _, r := range results {
			if r.Error == nil {
				s.log.InfoContext(ctx, "store migration applied", "database", s.drv.Describe(),
					"version", r.Source.Version, "duration", r.Duration)
			}
		}
		if upErr == nil {
			s.log.DebugContext(ctx, "store ready", "database", s.drv.Describe(), "schema_version", target)
			return nil
		}
		after, _, verr := p.GetVersions(ctx)
		if verr != nil || after <= current || ctx.Err() != nil {
			return fmt.Errorf("store: migrating %s to schema version %d failed: %w", s.drv.Describe(), target, upErr)
		}
		s.log.InfoContext(ctx, "store migration raced another process; retrying", "database", s.drv.Describe(), "error", upErr)
	}
}

// stamp is the store's notion of now: UTC and microsecond precision, the
// finest PostgreSQL keeps, so every driver returns what it stored.
func (s *sqlStore) stamp() time.Time {
	return s.now().UTC().Truncate(time.Microsecond)
}

// writeTx runs fn in one transaction on the writer. On SQLite the
// transaction begins IMMEDIATE, taking the write lock up front. fn must use
// only tx: the SQLite writer has one connection, so touching s.w inside fn
// would wait for itself.
func (s *sqlStore) writeTx(ctx context.Context, fn func(tx *sql.Tx) error) (err error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, ignoreDone(tx.Rollback()))
		}
	}()
	if err = fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// ignoreDone drops the error Rollback reports when the driver already
// ended the transaction (e.g. on context cancellation).
func ignoreDone(err error) error {
	if errors.Is(err, sql.ErrTxDone) {
		return nil
	}
	return err
}

func (s *sqlStore) Ping(ctx context.Context) error {
	if err := s.w.PingContext(ctx); err != nil {
		return fmt.Errorf("store: %s does not answer: %w", s.drv.Describe(), err)
	}
	if s.r != s.w {
		if err := s.r.PingContext(ctx); err != nil {
			return fmt.Errorf("store: %s does not answer for reads: %w", s.drv.Describe(), err)
		}
	}
	return nil
}

func (s *sqlStore) SchemaVersion(ctx context.Context) (int64, error) {
	var v int64
	err := s.r.QueryRowContext(ctx, `SELECT COALESCE(MAX(version_id), 0) FROM `+versionTable).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("store: cannot read the schema version: %w", err)
	}
	return v, nil
}

func (s *sqlStore) Close() error {
	s.closed.Do(func() { s.cerr = s.drv.Close() })
	return s.cerr
}

// timeScanner accepts a timestamp as the driver hands it over: time.Time
// from pgx and from modernc for TIMESTAMP columns, text otherwise.
type timeScanner struct{ t *time.Time }

// sqliteTimeFormat is what modernc writes with _time_format=sqlite.
const sqliteTimeFormat = "2006-01-02 15:04:05.999999999-07:00"

func (ts timeScanner) Scan(src any) error {
	switch v := src.(type) {
	case time.Time:
		*ts.t = v.UTC()
		return nil
	case string:
		return ts.parse(v)
	case []byte:
		return ts.parse(string(v))
	default:
		return fmt.Errorf("store: cannot read a timestamp from %T", src)
	}
}

func (ts timeScanner) parse(v string) error {
	if t, ok := parseUTCTime(v); ok {
		*ts.t = t
		return nil
	}
	t, err := time.Parse(sqliteTimeFormat, v)
	if err != nil {
		return fmt.Errorf("store: cannot read timestamp %q: %w", v, err)
	}
	*ts.t = t.UTC()
	return nil
}

// parseUTCTime reads the one shape the store writes, a UTC time in
// sqliteTimeFormat ("2026-01-02 15:04:05.123456789+00:00", the fraction
// optional), without time.Parse's general layout walk, which was a
// noticeable part of every read of a few rows. Anything else, valid or
// not, reports false and goes to time.Parse.
func parseUTCTime(v string) (time.Time, bool) {
	const zone = "+00:00"
	n := len(v)
	if n < len("2006-01-02 15:04:05")+len(zone) || v[n-len(zone):] != zone ||
		v[4] != '-' || v[7] != '-' || v[10] != ' ' || v[13] != ':' || v[16] != ':' {
		return time.Time{}, false
	}
	num := func(s string) int {
		x := 0
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return -1
			}
			x = x*10 + int(c-'0')
		}
		return x
	}
	year, month, day := num(v[0:4]), num(v[5:7]), num(v[8:10])
	hour, minute, sec := num(v[11:13]), num(v[14:16]), num(v[17:19])
	if year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || sec < 0 || sec > 59 {
		return time.Time{}, false
	}
	if day > 28 && day > time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day() {
		return time.Time{}, false
	}
	nsec := 0
	if frac := v[19 : n-len(zone)]; frac != "" {
		if len(frac) < 2 || len(frac) > 10 || frac[0] != '.' {
			return time.Time{}, false
		}
		if nsec = num(frac[1:]); nsec < 0 {
			return time.Time{}, false
		}
		for range 10 - len(frac) {
			nsec *= 10
		}
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC), true
}

// rowScanner is a *sql.Row or *sql.Rows.
type rowScanner interface{ Scan(dest ...any) error }

// queryAll runs query on q and scans every row with scan, never
// returning nil; what names the listing ("list runs") and item one row
// ("a run") in errors.
func queryAll[T any](ctx context.Context, q querier, what, item string, scan func(rowScanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: cannot %s: %w", what, err)
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("store: cannot read %s: %w", item, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: cannot %s: %w", what, err)
	}
	return out, nil
}
