package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/t3agent/t3agent/internal/store/pgstore"
	"github.com/t3agent/t3agent/internal/store/sqlitestore"
)

// dsnHelp ends every DSN error, so the reader knows what would have worked.
const dsnHelp = "use sqlite:PATH, a plain file path, or postgres://USER@HOST/DB"

// Open connects to the store named by dsn, migrates it to the current
// schema and returns it:
//
//	sqlite:/var/lib/t3agent/t3agent.db   SQLite file (created if missing)
//	sqlite:///var/lib/t3agent/t3agent.db the same, URL-style
//	/var/lib/t3agent/t3agent.db          a plain path means SQLite too
//	postgres://t3agent@db/t3agent        PostgreSQL (postgresql:// too)
//
// Errors are one sentence naming the problem and never repeat a password.
func Open(ctx context.Context, dsn string, params OpenParams) (Store, error) {
	kind, target, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	var drv Driver
	switch kind {
	case kindPostgres:
		drv, err = pgstore.Open(ctx, target)
	default:
		drv, err = sqlitestore.Open(ctx, target)
	}
	if err != nil {
		return nil, err
	}
	return New(ctx, drv, params)
}

type dsnKind int

const (
	kindSQLite dsnKind = iota
	kindPostgres
)

// parseDSN tells the database kind and what its driver opens: a file path
// for SQLite, the URL itself for PostgreSQL.
func parseDSN(dsn string) (dsnKind, string, error) {
	dsn = strings.TrimSpace(dsn)
	if dsn == "" {
		return 0, "", fmt.Errorf("store: the store DSN is empty; %s", dsnHelp)
	}
	scheme, rest, hasScheme := strings.Cut(dsn, ":")
	// One letter before the colon is a Windows drive, not a scheme.
	if !hasScheme || len(scheme) < 2 || !isScheme(scheme) {
		return kindSQLite, dsn, nil
	}
	switch strings.ToLower(scheme) {
	case "postgres", "postgresql":
		if !strings.HasPrefix(rest, "//") {
			return 0, "", fmt.Errorf("store: a PostgreSQL DSN must be a URL starting with %s://; %s", scheme, dsnHelp)
		}
		return kindPostgres, dsn, nil
	case "sqlite", "sqlite3":
		path := strings.TrimPrefix(rest, "//")
		if path == "" {
			return 0, "", fmt.Errorf("store: the SQLite DSN names no file; %s", dsnHelp)
		}
		return kindSQLite, path, nil
	default:
		// Name the scheme only: the rest may hold a password.
		return 0, "", fmt.Errorf("store: DSN scheme %q is not supported; %s", scheme, dsnHelp)
	}
}

// isScheme reports whether s has the shape of a URL scheme (RFC 3986).
func isScheme(s string) bool {
	for i, c := range s {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return true
}
