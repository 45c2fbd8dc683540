// Package dbtest gives tests a fresh, empty database on the machine's real
// PostgreSQL and MariaDB servers. Each call creates its own database and
// drops it when the test ends, so tests run in parallel without sharing
// state.
//
// The servers are named by environment variables:
//
//	T3AGENT_TEST_POSTGRES_DSN  e.g. postgres://root@127.0.0.1:5432/test?sslmode=disable
//	T3AGENT_TEST_MYSQL_DSN     e.g. mysql://root@127.0.0.1:3306/test
//
// A test that needs a server skips only when its variable is unset; when it
// is set and the server does not answer, the test fails.
package dbtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // "pgx" driver
)

const (
	PostgresEnv = "T3AGENT_TEST_POSTGRES_DSN"
	MySQLEnv    = "T3AGENT_TEST_MYSQL_DSN"
)

// Postgres returns the URL of a new empty PostgreSQL database.
func Postgres(t testing.TB) string {
	t.Helper()
	base := os.Getenv(PostgresEnv)
	if base == "" {
		t.Skipf("%s is not set", PostgresEnv)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", PostgresEnv, err)
	}
	admin := openOrFail(t, "pgx", base)
	name := newName()
	exec(t, admin, `CREATE DATABASE `+name)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
		_ = admin.Close()
	})
	u.Path = "/" + name
	return u.String()
}

// MySQL returns the URL (mysql://…) of a new empty MariaDB/MySQL database.
func MySQL(t testing.TB) string {
	t.Helper()
	base := os.Getenv(MySQLEnv)
	if base == "" {
		t.Skipf("%s is not set", MySQLEnv)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", MySQLEnv, err)
	}
	cfg := mysql.NewConfig()
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.Net = "tcp"
	cfg.Addr = u.Host
	admin := openOrFail(t, "mysql", cfg.FormatDSN())
	name := newName()
	exec(t, admin, "CREATE DATABASE `"+name+"` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS `"+name+"`"); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
		_ = admin.Close()
	})
	u.Path = "/" + name
	return u.String()
}

func openOrFail(t testing.TB, driver, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatalf("open %s: %v", driver, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		t.Fatalf("%s server does not answer: %v", driver, err)
	}
	return db
}

func exec(t testing.TB, db *sql.DB, q string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func newName() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "t3a_" + hex.EncodeToString(b)
}
