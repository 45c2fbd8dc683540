package typo3_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/typo3"
)

func TestQuoteIdentMatrix(t *testing.T) {
	t.Parallel()
	good := map[string][3]string{ // sqlite, mysql, postgres
		"uid":                       {`"uid"`, "`uid`", `"uid"`},
		"CType":                     {`"CType"`, "`CType`", `"CType"`},
		"t3ver_oid":                 {`"t3ver_oid"`, "`t3ver_oid`", `"t3ver_oid"`},
		"tx_news_domain_model_news": {`"tx_news_domain_model_news"`, "`tx_news_domain_model_news`", `"tx_news_domain_model_news"`},
		"_x9":                       {`"_x9"`, "`_x9`", `"_x9"`},
		strings.Repeat("a", 64):     {`"` + strings.Repeat("a", 64) + `"`, "`" + strings.Repeat("a", 64) + "`", `"` + strings.Repeat("a", 64) + `"`},
	}
	bad := []string{
		"", " ", "uid ", "a b", "a;b", "a`b", `a"b`, "a'b", "a.b", "a-b", "a/*b*/", "--", "uid)", "(uid)",
		"ü", "tt_contént", "a\x00b", "a\nb", "a\\b", "$1", "?", strings.Repeat("a", 65), "pages; DROP TABLE pages",
	}
	for i, d := range allDialects() {
		for name, want := range good {
			got, err := typo3.QuoteIdent(d, name)
			if err != nil || got != want[i] {
				t.Errorf("%s QuoteIdent(%q) = %q, %v; want %q", d, name, got, err, want[i])
			}
		}
		for _, name := range bad {
			got, err := typo3.QuoteIdent(d, name)
			if !errors.Is(err, typo3.ErrBadIdentifier) || got != "" {
				t.Errorf("%s QuoteIdent(%q) = %q, %v; want ErrBadIdentifier", d, name, got, err)
			}
		}
	}
}

func TestArgsPlaceholders(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		d    typo3.Dialect
		want string
	}{
		{typo3.DialectSQLite, "?|?, ?, ?|NULL|?"},
		{typo3.DialectMySQL, "?|?, ?, ?|NULL|?"},
		{typo3.DialectPostgres, "$1|$2, $3, $4|NULL|$5"},
	} {
		a := (&typo3.DB{Dialect: c.d}).NewArgs()
		got := strings.Join([]string{a.Add("x"), a.AddInts([]int64{1, 2, 3}), a.AddInts(nil), a.Add(7)}, "|")
		if got != c.want || !slices.Equal(a.Values(), []any{"x", int64(1), int64(2), int64(3), 7}) {
			t.Errorf("%s: %s %v, want %s", c.d, got, a.Values(), c.want)
		}
	}
}

// TestValuesAreBound stores and finds values full of SQL metacharacters on
// every database: they travel as bound values, never as SQL text.
func TestValuesAreBound(t *testing.T) {
	t.Parallel()
	nasty := []string{
		`o'brien`, `"; DROP TABLE pages; --`, `' OR '1'='1`, `\' OR 1=1 -- `, `a\`, `%`, `_ditor`, `$1`, `?`,
		"`backtick`", "line\nbreak", "ünï´cødé", `/* c */`,
	}
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		for i, name := range nasty {
			e.beUser(t, int64(1000+i), name, map[string]any{"usergroup": "1"})
		}
		for i, name := range nasty {
			u, err := e.site.BackendUserByName(ctx, name)
			if err != nil || u.UID != int64(1000+i) || u.Username != name {
				t.Errorf("user %q: %v %v", name, u, err)
			}
		}
		// Equality, not LIKE: wildcards match nothing else.
		if _, err := e.site.BackendUserByName(ctx, "edito_"); !errors.Is(err, typo3.ErrUserCannotAct) {
			t.Errorf("edito_ matched a user: %v", err)
		}
		if _, err := e.site.BackendUserByName(ctx, "%"); err != nil {
			t.Errorf("%% should find only the user named %%: %v", err)
		}
		// The tables are intact.
		if n := len(uids(t, e.site.DB, `SELECT uid FROM pages WHERE uid <= 25`)); n != 25 {
			t.Errorf("pages 1–25: %d rows", n)
		}
		// A page title with metacharacters round-trips through Page.
		e.page(t, 1100, 1, map[string]any{"title": `'); DELETE FROM pages; --`})
		if p, err := e.site.Page(ctx, 1100); err != nil || p.Title != `'); DELETE FROM pages; --` {
			t.Errorf("page title: %+v %v", p, err)
		}
	})
}

func TestColumns(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		cols, err := e.site.Columns(ctx, "pages")
		if err != nil {
			t.Fatal(err)
		}
		if len(cols) < 20 || cols[0] != "uid" || cols[1] != "pid" {
			t.Errorf("pages columns start %v (%d), want uid, pid, …", cols[:min(3, len(cols))], len(cols))
		}
		for _, c := range []struct {
			table, col string
			want       bool
		}{
			{"pages", "perms_userid", true},
			{"tt_content", "CType", true}, // case kept on every database
			{"tt_content", "ctype", false},
			{"be_users", "realName", true},
			{"pages", "no_such_column", false},
			{"no_such_table", "uid", false},
		} {
			got, err := e.site.HasColumn(ctx, c.table, c.col)
			if err != nil || got != c.want {
				t.Errorf("HasColumn(%s, %s) = %v, %v; want %v", c.table, c.col, got, err, c.want)
			}
		}
		if cols, err := e.site.Columns(ctx, "no_such_table"); err != nil || len(cols) != 0 {
			t.Errorf("missing table: %v %v", cols, err)
		}
		if _, err := e.site.Columns(ctx, "pages' OR '1'='1"); !errors.Is(err, typo3.ErrBadIdentifier) {
			t.Errorf("bad table name: %v", err)
		}
		// Cached: a column added later is not seen by the same Site.
		if _, err := e.rw.SQL.ExecContext(ctx, `ALTER TABLE pages ADD COLUMN tx_added INTEGER DEFAULT 0 NOT NULL`); err != nil {
			t.Fatal(err)
		}
		if ok, _ := e.site.HasColumn(ctx, "pages", "tx_added"); ok {
			t.Error("schema cache did not hold")
		}
		if ok, _ := e.withClock(t, fixedNow()).HasColumn(ctx, "pages", "tx_added"); !ok {
			t.Error("a new Site does not see the added column")
		}
	})
}

func TestNewSiteRequiresDBAndTCA(t *testing.T) {
	t.Parallel()
	if _, err := typo3.NewSite(typo3.SiteParams{}); err == nil {
		t.Error("NewSite without a database succeeded")
	}
	if _, err := typo3.NewSite(typo3.SiteParams{DB: &typo3.DB{Dialect: typo3.DialectSQLite}}); err == nil {
		t.Error("NewSite without a TCA succeeded")
	}
}
