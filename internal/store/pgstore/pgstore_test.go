package pgstore_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // "pgx" driver for the raw connection
	"go.uber.org/goleak"

	"github.com/t3agent/t3agent/internal/dbtest"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/store/pgstore"
	"github.com/t3agent/t3agent/internal/store/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newDSN(tb testing.TB) string { return dbtest.Postgres(tb) }

func TestSuite(t *testing.T) { storetest.Run(t, newDSN) }

func BenchmarkStore(b *testing.B) { storetest.Bench(b, newDSN) }

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for _, c := range []struct{ dsn, want string }{
		{"postgres://u:hunter2@127.0.0.1:1/t3?sslmode=disable&connect_timeout=5", `cannot connect to the PostgreSQL database "t3" on 127.0.0.1:1`},
		// pgx tries TLS and then plain text here and reports each attempt.
		{"postgres://u:hunter2@localhost:1/t3?connect_timeout=5", `cannot connect to the PostgreSQL database "t3" on localhost:1: failed to connect`},
		{"postgres://u:hunter2@db/%zz", "the PostgreSQL DSN is not valid: failed to parse as URL"},
		{"postgres://u:hunter2@db:port/t3", "the PostgreSQL DSN is not valid: invalid port"},
		{"postgres:t3", "must be a URL"},
	} {
		st, err := store.Open(ctx, c.dsn, store.OpenParams{})
		if err == nil {
			_ = st.Close()
			t.Errorf("Open(%q) succeeded", c.dsn)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open(%q) = %q, want it to contain %q", c.dsn, err, c.want)
		}
		if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "\n") {
			t.Errorf("Open(%q) = %q: want one line without the password", c.dsn, err)
		}
	}
}

func TestSessionsAreNamed(t *testing.T) {
	t.Parallel()
	d, err := pgstore.Open(t.Context(), dbtest.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var name string
	if err := d.Writer().QueryRowContext(t.Context(), "SHOW application_name").Scan(&name); err != nil {
		t.Fatal(err)
	}
	if name != "t3agent" {
		t.Errorf("application_name = %q, want t3agent", name)
	}
	if d.Reader() != d.Writer() {
		t.Error("PostgreSQL reads and writes should share one pool")
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	t.Parallel()
	dsn := dbtest.Postgres(t)
	st, err := store.Open(t.Context(), dsn, store.OpenParams{})
	if err != nil {
		t.Fatal(err)
	}
	_ = st.Close()
	raw, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	_, err = raw.ExecContext(t.Context(), `INSERT INTO goose_db_version (version_id, is_applied) VALUES (9999, true)`)
	_ = raw.Close()
	if err != nil {
		t.Fatal(err)
	}
	st, err = store.Open(t.Context(), dsn, store.OpenParams{})
	if err == nil {
		_ = st.Close()
		t.Fatal("Open accepted a database from a newer t3agent")
	}
	if !strings.Contains(err.Error(), "schema version 9999, newer than") {
		t.Errorf("err = %q, want it to say the schema is newer", err)
	}
}

// The suite's ordering test cannot tell on a server whose default locale is
// already C, so check the mechanism itself: every key column collates "C".
func TestKeysCollateBytewise(t *testing.T) {
	t.Parallel()
	dsn := dbtest.Postgres(t)
	st, err := store.Open(t.Context(), dsn, store.OpenParams{})
	if err != nil {
		t.Fatal(err)
	}
	_ = st.Close()
	raw, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, c := range [][2]string{{"tool_overrides", "name"}, {"tool_group_overrides", "name"}, {"settings", "key"}, {"mcp_servers", "identifier"}, {"mcp_tools", "name"}, {"mcp_tools", "server"}} {
		var coll sql.NullString
		err := raw.QueryRowContext(t.Context(),
			`SELECT collation_name FROM information_schema.columns WHERE table_name = $1 AND column_name = $2`, c[0], c[1]).Scan(&coll)
		if err != nil {
			t.Fatalf("%s.%s: %v", c[0], c[1], err)
		}
		if coll.String != "C" {
			t.Errorf("%s.%s collates %q, want C", c[0], c[1], coll.String)
		}
	}
}
