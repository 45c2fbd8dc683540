package demotest

import (
	"context"
	"testing"

	"github.com/t3agent/t3agent/internal/typo3"
)

var dialects = []typo3.Dialect{typo3.DialectSQLite, typo3.DialectMySQL, typo3.DialectPostgres}

// TestNew checks the helper on every dialect: the database opens read-only
// and holds the fixed layout, and the logins are there.
func TestNew(t *testing.T) {
	t.Parallel()
	for _, d := range dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			s := New(t, d)
			db := s.Open(t)
			var title string
			if err := db.SQL.QueryRowContext(context.Background(), "SELECT title FROM pages WHERE uid = 5").Scan(&title); err != nil {
				t.Fatal(err)
			}
			if title != "Products" {
				t.Errorf("page 5 title = %q, want Products", title)
			}
			if pw := s.Password(t, "editor"); len(pw) != 23 {
				t.Errorf("editor password %q has an unexpected shape", pw)
			}
			if s.Dialect != d {
				t.Errorf("dialect = %s, want %s", s.Dialect, d)
			}
		})
	}
}

// TestIntroduction imports the introduction package on every dialect.
func TestIntroduction(t *testing.T) {
	t.Parallel()
	for _, d := range dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			in := Introduction(t, d)
			db := in.Open(t)
			var n int
			if err := db.SQL.QueryRowContext(context.Background(), "SELECT count(*) FROM tt_content").Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 226 {
				t.Errorf("tt_content rows = %d, want 226", n)
			}
			if in.Password(t, "admin") == "" {
				t.Error("admin has no password")
			}
		})
	}
}
