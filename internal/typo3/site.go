package typo3

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/t3agent/t3agent/internal/typo3/tca"
)

// SiteParams configures NewSite.
type SiteParams struct {
	// DB is the site database (required).
	DB *DB
	// TCA is the site's resolved TCA (required): restrictions and access
	// checks take table and column names from it.
	TCA *tca.TCA
	// Root is the project root of the installation (the directory holding
	// composer.json, config/ and var/). May be empty for DB-only use.
	Root string
	// Now is the clock for starttime/endtime decisions; nil means time.Now.
	// Tests inject a fixed instant.
	Now func() time.Time
}

// Site is one TYPO3 installation as t3agent reads it: its database, its
// TCA and its files. It is safe for concurrent use.
type Site struct {
	DB   *DB
	TCA  *tca.TCA
	Root string

	now    func() time.Time
	schema schemaCache
}

// NewSite checks p and builds a Site.
func NewSite(p SiteParams) (*Site, error) {
	if p.DB == nil {
		return nil, errors.New("typo3.NewSite: no database")
	}
	if p.TCA == nil {
		return nil, errors.New("typo3.NewSite: no TCA")
	}
	now := p.Now
	if now == nil {
		now = time.Now
	}
	return &Site{DB: p.DB, TCA: p.TCA, Root: p.Root, now: now}, nil
}

// Now returns the site clock's current time.
func (s *Site) Now() time.Time {
	if s.now == nil { // a Site not made by NewSite
		return time.Now()
	}
	return s.now()
}

// schemaCache memoises the live column lists; the schema of a running site
// does not change under a t3agent process often enough to matter.
type schemaCache struct {
	mu   sync.Mutex
	cols map[string][]string
}

// Columns returns the column names of table in the live database, in
// their ordinal order, or an empty list when the table does not exist.
// The result is cached per Site. The table name is bound as a value, and
// still refused unless it looks like an identifier.
func (s *Site) Columns(ctx context.Context, table string) ([]string, error) {
	if !ValidIdent(table) {
		return nil, fmt.Errorf("%q: %w", table, ErrBadIdentifier)
	}
	s.schema.mu.Lock()
	cols, ok := s.schema.cols[table]
	s.schema.mu.Unlock()
	if ok {
		return cols, nil
	}
	var q string
	switch s.DB.Dialect {
	case DialectSQLite:
		q = `SELECT name FROM pragma_table_info(?) ORDER BY cid`
	case DialectMySQL:
		q = `SELECT COLUMN_NAME FROM information_schema.COLUMNS
			WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`
	case DialectPostgres:
		q = `SELECT column_name FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`
	default:
		return nil, fmt.Errorf("unknown database dialect %q", s.DB.Dialect)
	}
	rows, err := s.DB.SQL.QueryContext(ctx, q, table)
	if err != nil {
		return nil, fmt.Errorf("read the columns of %s: %w", table, err)
	}
	defer rows.Close()
	cols = []string{}
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, fmt.Errorf("read the columns of %s: %w", table, err)
		}
		cols = append(cols, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the columns of %s: %w", table, err)
	}
	s.schema.mu.Lock()
	if s.schema.cols == nil {
		s.schema.cols = map[string][]string{}
	}
	s.schema.cols[table] = cols
	s.schema.mu.Unlock()
	return cols, nil
}

// HasColumn reports whether table has column in the live database. The
// comparison is exact: TYPO3 column names are case-sensitive on
// PostgreSQL.
func (s *Site) HasColumn(ctx context.Context, table, column string) (bool, error) {
	cols, err := s.Columns(ctx, table)
	if err != nil {
		return false, err
	}
	for _, c := range cols {
		if c == column {
			return true, nil
		}
	}
	return false, nil
}
