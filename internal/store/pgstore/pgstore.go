// Package pgstore is the PostgreSQL driver of the store, for when several
// t3agent processes on several machines share the work. It goes through
// database/sql with pgx's stdlib adapter so that the shared SQL layer in
// package store runs unchanged on both databases; reads and writes share
// one pool, and PostgreSQL's row locks do the coordinating.
//
// Use it through store.Open("postgres://…"); Open here is for store.New.
package pgstore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
)

// Pool limits. Each process holds at most MaxConns connections, so an
// operator can size max_connections as processes × MaxConns.
const (
	MaxConns     = 16
	maxIdleConns = 4
	maxIdleTime  = 5 * time.Minute
)

//go:embed migrations/*.sql
var migrations embed.FS

// Driver is an open PostgreSQL database. It satisfies store.Driver.
type Driver struct {
	db   *sql.DB
	desc string
}

// Open connects to the database named by the postgres:// URL and checks
// that it answers.
func Open(ctx context.Context, dsn string) (*Driver, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("pgstore: the PostgreSQL DSN is not valid: %s", parseProblem(err))
	}
	if cfg.RuntimeParams["application_name"] == "" {
		// Lets a DBA tell t3agent's sessions apart in pg_stat_activity.
		cfg.RuntimeParams["application_name"] = "t3agent"
	}
	d := &Driver{
		db:   stdlib.OpenDB(*cfg),
		desc: fmt.Sprintf("PostgreSQL database %q on %s", cfg.Database, hostPort(cfg.Host, cfg.Port)),
	}
	d.db.SetMaxOpenConns(MaxConns)
	d.db.SetMaxIdleConns(maxIdleConns)
	d.db.SetConnMaxIdleTime(maxIdleTime)
	if err := d.db.PingContext(ctx); err != nil {
		_ = d.db.Close()
		return nil, oneLine{msg: "pgstore: cannot connect to the " + d.desc + ": " + flatten(err.Error()), err: err}
	}
	return d, nil
}

// oneLine keeps pgx's error for errors.Is/As but reads as one line: pgx
// lists each address it tried on a line of its own.
type oneLine struct {
	msg string
	err error
}

func (e oneLine) Error() string { return e.msg }
func (e oneLine) Unwrap() error { return e.err }

func flatten(s string) string {
	return strings.NewReplacer("\n\t", "; ", "\n", "; ").Replace(s)
}

// parseProblem says what is wrong with a DSN without repeating the DSN:
// pgx redacts passwords only as well as it can parse the string, so the
// quoted string is cut off and only pgx's reason kept.
func parseProblem(err error) string {
	var pe *pgconn.ParseConfigError
	if errors.As(err, &pe) {
		if _, reason, ok := strings.Cut(pe.Error(), "`: "); ok {
			return reason
		}
	}
	return "it cannot be parsed"
}

func hostPort(host string, port uint16) string {
	if strings.HasPrefix(host, "/") {
		return "socket " + host
	}
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}

// Dialect is goose.DialectPostgres.
func (d *Driver) Dialect() goose.Dialect { return goose.DialectPostgres }

// Writer is the connection pool.
func (d *Driver) Writer() *sql.DB { return d.db }

// Reader is the same pool as Writer.
func (d *Driver) Reader() *sql.DB { return d.db }

// Migrations are the PostgreSQL schema migrations.
func (d *Driver) Migrations() fs.FS {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		panic(err) // the directory is embedded; this cannot fail
	}
	return sub
}

// Describe names the database and server, never the credentials.
func (d *Driver) Describe() string { return d.desc }

// Close closes the pool.
func (d *Driver) Close() error { return d.db.Close() }
