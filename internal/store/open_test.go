package store

import (
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParseDSN(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		dsn    string
		kind   dsnKind
		target string
	}{
		{"sqlite:/var/lib/t3agent/t3agent.db", kindSQLite, "/var/lib/t3agent/t3agent.db"},
		{"sqlite:///var/lib/t3agent/t3agent.db", kindSQLite, "/var/lib/t3agent/t3agent.db"},
		{"SQLite:t3agent.db", kindSQLite, "t3agent.db"},
		{"sqlite3:t3agent.db", kindSQLite, "t3agent.db"},
		{"sqlite:a:b.db", kindSQLite, "a:b.db"},
		{"/var/lib/t3agent.db", kindSQLite, "/var/lib/t3agent.db"},
		{"data/t3agent.db", kindSQLite, "data/t3agent.db"},
		{"./odd:name.db", kindSQLite, "./odd:name.db"},
		{`C:\t3agent\t3agent.db`, kindSQLite, `C:\t3agent\t3agent.db`},
		{"  t3agent.db\n", kindSQLite, "t3agent.db"},
		{"postgres://u:p@db:5432/t3?sslmode=require", kindPostgres, "postgres://u:p@db:5432/t3?sslmode=require"},
		{"postgresql://db/t3", kindPostgres, "postgresql://db/t3"},
	} {
		kind, target, err := parseDSN(c.dsn)
		if err != nil || kind != c.kind || target != c.target {
			t.Errorf("parseDSN(%q) = %v, %q, %v; want %v, %q", c.dsn, kind, target, err, c.kind, c.target)
		}
	}
}

func TestParseDSNErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ dsn, want string }{
		{"", "the store DSN is empty"},
		{"sqlite:", "names no file"},
		{"sqlite://", "names no file"},
		{"postgres:t3", "must be a URL"},
		{"mysql://root:hunter2@db/t3", `DSN scheme "mysql" is not supported`},
		{"redis:hunter2", `DSN scheme "redis" is not supported`},
	} {
		_, _, err := parseDSN(c.dsn)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parseDSN(%q) err = %v, want it to contain %q", c.dsn, err, c.want)
			continue
		}
		if !strings.Contains(err.Error(), dsnHelp) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("parseDSN(%q) err = %q: want the help and no secret", c.dsn, err)
		}
	}
}

func TestErrorMessages(t *testing.T) {
	t.Parallel()
	nf := notFound("setting %q", "x")
	if nf.Error() != `store: setting "x" not found` {
		t.Errorf("notFound message = %q", nf)
	}
	if err := checkName("tool name", ""); err == nil || err.Error() != "store: tool name must not be empty" {
		t.Errorf("checkName message = %v", err)
	}
}
