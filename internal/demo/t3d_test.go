package demo

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/dbtest"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/password"
)

// introductionCounts are the tablerows of introduction/Initialisation/data.xml.
var introductionCounts = map[string]int{
	"be_groups": 3, "fe_groups": 1, "fe_users": 1, "pages": 85, "sys_category": 2, "sys_file": 80,
	"sys_file_collection": 1, "sys_file_metadata": 80, "sys_file_reference": 163, "sys_file_storage": 1,
	"sys_template": 2, "tt_content": 226, "tx_bootstrappackage_accordion_item": 5,
	"tx_bootstrappackage_card_group_item": 16, "tx_bootstrappackage_carousel_item": 9,
	"tx_bootstrappackage_icon_group_item": 12, "tx_bootstrappackage_tab_item": 5,
	"tx_bootstrappackage_timeline_item": 13, "tx_impexp_presets": 1,
}

// TestImportT3D imports the introduction package on every dialect (the
// SQLite schema script translated for MariaDB and PostgreSQL): all 706 rows,
// values typed as the export says, plus the two backend users.
func TestImportT3D(t *testing.T) {
	t.Parallel()
	shared := dbtest.TYPO3Material(t)
	for _, d := range allDialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			dsn := freshDSN(t, d, t.TempDir())
			params := ImportT3DParams{
				File:       filepath.Join(shared, "introduction", "Initialisation", "data.xml"),
				SchemaSQL:  filepath.Join(shared, "schema-sqlite-introduction.sql"),
				SiteDSN:    dsn,
				FastHashes: true,
			}
			res, err := ImportT3D(context.Background(), params)
			if err != nil {
				t.Fatal(err)
			}
			if res.Rows != 706 || !reflect.DeepEqual(res.Counts, introductionCounts) {
				t.Errorf("imported %d rows %v, want 706 %v", res.Rows, res.Counts, introductionCounts)
			}
			db := openRO(t, dsn)
			for table, n := range introductionCounts {
				if got := count(t, db, table, ""); got != n {
					t.Errorf("%s: %d rows in the database, want %d", table, got, n)
				}
			}
			// Typed values: NULL stays NULL, integers and strings as given.
			row := dump(t, db, "SELECT uid, pid, sorting, "+cols(db, "rowDescription", "l18n_diffsource", "frame_class")+" FROM tt_content WHERE uid = 1")[0]
			if row["pid"] != "83" || row["sorting"] != "256" || row["rowDescription"] != "NULL" ||
				row["l18n_diffsource"] != `{"bodytext":""}` || row["frame_class"] != "default" {
				t.Errorf("tt_content 1: %v", row)
			}
			st := dump(t, db, "SELECT root, clear, constants, include_static_file FROM sys_template WHERE uid = 2")[0]
			if st["root"] != "1" || st["clear"] != "3" || !strings.Contains(st["constants"], "page.theme.navigation.type = top") ||
				st["include_static_file"] != "EXT:bootstrap_package/Configuration/TypoScript" {
				t.Errorf("sys_template 2: %v", st)
			}
			if n := count(t, db, "pages", "perms_userid = 2"); n != 85 {
				t.Errorf("%d pages owned by user 2, want 85", n)
			}
			users := dump(t, db, "SELECT uid, username, admin, usergroup, password FROM be_users ORDER BY uid")
			if len(users) != 2 || users[0]["username"] != "admin" || users[0]["admin"] != "1" ||
				users[1]["username"] != "editor" || users[1]["uid"] != "2" || users[1]["usergroup"] != "1" {
				t.Fatalf("be_users: %v", users)
			}
			for i, u := range res.Users {
				if ok, err := password.Verify(users[i]["password"], u.Password); !ok || err != nil {
					t.Errorf("%s: password does not verify (%v)", u.Username, err)
				}
			}
			if d == typo3.DialectPostgres {
				// The uid sequences continue after the imported uids.
				var seq string
				var last int
				var called bool
				if err := db.SQL.QueryRow(`SELECT pg_get_serial_sequence('"pages"', 'uid')`).Scan(&seq); err != nil {
					t.Fatal(err)
				}
				if err := db.SQL.QueryRow("SELECT last_value, is_called FROM "+seq).Scan(&last, &called); err != nil || last != 86 || called {
					t.Errorf("pages uid sequence at %d (called %v, %v), want 86 not yet called", last, called, err)
				}
			}
			if _, err := ImportT3D(context.Background(), params); err == nil || !strings.Contains(err.Error(), "already has TYPO3 tables") {
				t.Errorf("a second import into the same database: %v", err)
			}
		})
	}
}

func TestReadT3DSkipsHeaderAndRelations(t *testing.T) {
	t.Parallel()
	doc := `<?xml version="1.0" encoding="utf-8" standalone="yes" ?>
<T3RecordDocument>
	<header type="array">
		<records type="array"><table index="pages" type="array"><rec index="1" type="array"><uid>1</uid></rec></table></records>
	</header>
	<records type="array">
		<tablerow index="pages:7" type="array">
			<fieldlist index="data" type="array">
				<field index="uid" type="integer">7</field>
				<field index="title">A &amp; B &lt;c&gt;</field>
				<field index="TSconfig" type="NULL"></field>
			</fieldlist>
			<related index="rels" type="array">
				<field index="shortcut" type="array"><type>db</type></field>
			</related>
		</tablerow>
	</records>
</T3RecordDocument>`
	var got [][]any
	var tables []string
	err := ReadT3D(strings.NewReader(doc), func(table string, cols []string, vals []any) error {
		tables = append(tables, table)
		got = append(got, append([]any{strings.Join(cols, ",")}, vals...))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{{"uid,title,TSconfig", int64(7), "A & B <c>", nil}}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(tables, []string{"pages"}) {
		t.Errorf("ReadT3D: %v %v, want pages %v", tables, got, want)
	}
	bad := strings.Replace(doc, `index="pages:7"`, `index="pages;drop:7"`, 1)
	if err := ReadT3D(strings.NewReader(bad), func(string, []string, []any) error { return nil }); err == nil {
		t.Error("a table name that is no identifier was accepted")
	}
}

// TestImportT3DFailureLeavesNothing: an export naming a table the schema
// lacks fails, takes the created tables out again, and a corrected import
// into the same database then works.
func TestImportT3DFailureLeavesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	schema := filepath.Join(dir, "schema.sql")
	write := func(name, content string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	write("schema.sql", `CREATE TABLE "pages" ("uid" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, "pid" INTEGER UNSIGNED DEFAULT 0 NOT NULL, "title" VARCHAR(255) DEFAULT '' NOT NULL COLLATE "BINARY");
CREATE INDEX "parent_0a1b2c3d" ON "pages" ("pid");`)
	row := func(table string) string {
		return `<T3RecordDocument><records><tablerow index="` + table + `:1"><fieldlist index="data">
<field index="uid" type="integer">1</field><field index="pid" type="integer">0</field><field index="title">Root</field>
</fieldlist></tablerow></records></T3RecordDocument>`
	}
	dsn := "sqlite:" + filepath.Join(dir, "site.db")
	_, err := ImportT3D(context.Background(), ImportT3DParams{File: write("bad.xml", row("tt_content")), SchemaSQL: schema, SiteDSN: dsn, FastHashes: true})
	if err == nil || !strings.Contains(err.Error(), "tt_content") {
		t.Fatalf("import of an unknown table: %v", err)
	}
	db := openRO(t, dsn)
	if n := count(t, db, "sqlite_master", "type = 'table' AND name NOT LIKE 'sqlite_%'"); n != 0 {
		t.Errorf("%d tables left after the failed import", n)
	}
	res, err := ImportT3D(context.Background(), ImportT3DParams{File: write("good.xml", row("pages")), SchemaSQL: schema, SiteDSN: dsn, FastHashes: true})
	if err != nil {
		t.Fatal(err)
	}
	// This schema has no be_users table, so no users are added.
	if res.Rows != 1 || res.Counts["pages"] != 1 || len(res.Users) != 0 {
		t.Errorf("corrected import: %+v", res)
	}
	if got := dump(t, db, "SELECT uid, title FROM pages"); len(got) != 1 || got[0]["title"] != "Root" {
		t.Errorf("pages after the corrected import: %v", got)
	}
}
