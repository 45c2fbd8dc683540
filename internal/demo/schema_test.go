package demo

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/t3agent/t3agent/internal/dbtest"
)

func TestSplitSQL(t *testing.T) {
	t.Parallel()
	script := "-- header; with a semicolon\nCREATE TABLE \"a;b\" (x VARCHAR(3) DEFAULT ';' NOT NULL);\n" +
		"/* block; comment */ INSERT INTO t VALUES ('it''s; fine', \"q;\");;\n  \nSELECT `c;d` FROM t"
	want := []string{
		"CREATE TABLE \"a;b\" (x VARCHAR(3) DEFAULT ';' NOT NULL)",
		"INSERT INTO t VALUES ('it''s; fine', \"q;\")",
		"SELECT `c;d` FROM t",
	}
	if got := SplitSQL(script); !reflect.DeepEqual(got, want) {
		t.Errorf("SplitSQL:\n got %q\nwant %q", got, want)
	}
}

// TestSchemaMatchesTYPO3 compares the Go table definitions with the schema
// TYPO3 v13.4 itself created (testdata/typo3/schema-sqlite.sql): same columns
// in the same order with the same types, defaults and nullability, same
// indexes.
func TestSchemaMatchesTYPO3(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(dbtest.TYPO3Material(t), "schema-sqlite.sql"))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := ParseSQLiteSchema(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	ours := SiteSchema()
	if len(ours) != 19 {
		t.Errorf("%d tables, want the 19 of the brief", len(ours))
	}
	for _, tbl := range ours {
		want := ref.Table(tbl.Name)
		if want == nil {
			t.Errorf("TYPO3 has no table %s", tbl.Name)
			continue
		}
		if len(tbl.Columns) != len(want.Columns) {
			t.Errorf("%s: %d columns, TYPO3 has %d", tbl.Name, len(tbl.Columns), len(want.Columns))
			continue
		}
		for i, c := range tbl.Columns {
			w := want.Columns[i]
			if c.AutoUID {
				w.Unsigned = c.Unsigned // SQLite's INTEGER PRIMARY KEY has no sign
			}
			if w.Type == Varchar && w.Len == 0 {
				w.Len = 255 // VARCHAR without length (password) needs one on MariaDB
			}
			if fmt.Sprint(c.Default) != fmt.Sprint(w.Default) {
				t.Errorf("%s.%s: default %v, TYPO3 %v", tbl.Name, c.Name, c.Default, w.Default)
			}
			c.Default, w.Default = nil, nil
			if c != w {
				t.Errorf("%s column %d:\n ours  %+v\n TYPO3 %+v", tbl.Name, i, c, w)
			}
		}
		if !reflect.DeepEqual(tbl.PrimaryKey, want.PrimaryKey) {
			t.Errorf("%s: primary key %v, TYPO3 %v", tbl.Name, tbl.PrimaryKey, want.PrimaryKey)
		}
		if !reflect.DeepEqual(tbl.Indexes, want.Indexes) {
			t.Errorf("%s: indexes\n ours  %v\n TYPO3 %v", tbl.Name, tbl.Indexes, want.Indexes)
		}
	}
}
