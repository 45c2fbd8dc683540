package demo

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/t3agent/t3agent/internal/typo3"
)

// Kind is the portable column type of the schema model. Each dialect maps it
// the way TYPO3's Doctrine platform does.
type Kind int

const (
	Int Kind = iota
	SmallInt
	BigInt
	Varchar
	Text
	Blob
	Double
	Numeric
	DateTime
)

// Column is one column of a table definition.
type Column struct {
	Name     string
	Type     Kind
	Len      int  // VARCHAR length; NUMERIC precision
	Scale    int  // NUMERIC scale
	Unsigned bool // honoured on MariaDB only, as Doctrine does
	// Default is nil (DEFAULT NULL when Nullable, none otherwise), an int,
	// a float64 or a string.
	Default  any
	Nullable bool
	// AutoUID marks the auto-increment primary key (TYPO3's "uid").
	AutoUID bool
}

// Index is a secondary index.
type Index struct {
	Name    string
	Columns []string
	Unique  bool
}

// Table is one table definition, rendered for every dialect from this one
// description.
type Table struct {
	Name       string
	Columns    []Column
	PrimaryKey []string // empty with an AutoUID column: that column
	Indexes    []Index
}

// Column returns the named column, or nil.
func (t *Table) Column(name string) *Column {
	for i := range t.Columns {
		if t.Columns[i].Name == name {
			return &t.Columns[i]
		}
	}
	return nil
}

func q(d typo3.Dialect, name string) string {
	s, err := typo3.QuoteIdent(d, name)
	if err != nil {
		// Table definitions are compile-time data or parsed from a schema
		// script whose identifiers were validated on the way in.
		panic(err)
	}
	return s
}

// CreateSQL renders the CREATE TABLE statement for d.
func (t *Table) CreateSQL(d typo3.Dialect) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE ")
	b.WriteString(q(d, t.Name))
	b.WriteString(" (\n")
	pk := t.PrimaryKey
	for i, c := range t.Columns {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString("  ")
		b.WriteString(q(d, c.Name))
		b.WriteString(" ")
		b.WriteString(columnSQL(d, c))
		if c.AutoUID && d != typo3.DialectSQLite {
			pk = []string{c.Name}
		}
	}
	if len(pk) > 0 {
		b.WriteString(",\n  PRIMARY KEY (")
		for i, c := range pk {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(q(d, c))
			if col := t.Column(c); d == typo3.DialectMySQL && col != nil && (col.Type == Text || col.Type == Blob) {
				b.WriteString("(191)")
			}
		}
		b.WriteString(")")
	}
	if d == typo3.DialectMySQL {
		// MariaDB rebuilds the table for every CREATE INDEX; declaring the
		// keys inline makes the schema one statement per table.
		for _, ix := range t.Indexes {
			b.WriteString(",\n  ")
			if ix.Unique {
				b.WriteString("UNIQUE ")
			}
			b.WriteString("KEY ")
			b.WriteString(q(d, ix.Name))
			b.WriteString(" (")
			b.WriteString(t.indexColumns(d, ix))
			b.WriteString(")")
		}
	}
	b.WriteString("\n)")
	if d == typo3.DialectMySQL {
		b.WriteString(" ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci")
	}
	return b.String()
}

// IndexSQL renders the CREATE INDEX statements for d (none on MariaDB,
// where CreateSQL declares the keys). Index names are global per schema on
// SQLite and PostgreSQL, so they carry a short hash of table and key, as
// TYPO3's Doctrine layer does.
func (t *Table) IndexSQL(d typo3.Dialect) []string {
	if d == typo3.DialectMySQL {
		return nil
	}
	out := make([]string, 0, len(t.Indexes))
	for _, ix := range t.Indexes {
		h := fnv.New32a()
		h.Write([]byte(t.Name + "." + ix.Name))
		name := fmt.Sprintf("%s_%08x", ix.Name, h.Sum32())
		var b strings.Builder
		b.WriteString("CREATE ")
		if ix.Unique {
			b.WriteString("UNIQUE ")
		}
		b.WriteString("INDEX ")
		b.WriteString(q(d, name))
		b.WriteString(" ON ")
		b.WriteString(q(d, t.Name))
		b.WriteString(" (")
		b.WriteString(t.indexColumns(d, ix))
		b.WriteString(")")
		out = append(out, b.String())
	}
	return out
}

func (t *Table) indexColumns(d typo3.Dialect, ix Index) string {
	var b strings.Builder
	for i, c := range ix.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(q(d, c))
		// MariaDB indexes TEXT only by prefix; 127 characters is what
		// TYPO3 uses for pages.slug.
		if col := t.Column(c); d == typo3.DialectMySQL && col != nil && (col.Type == Text || col.Type == Blob) {
			b.WriteString("(127)")
		}
	}
	return b.String()
}

func columnSQL(d typo3.Dialect, c Column) string {
	if c.AutoUID {
		switch d {
		case typo3.DialectMySQL:
			return "INT UNSIGNED AUTO_INCREMENT NOT NULL"
		case typo3.DialectPostgres:
			return "SERIAL NOT NULL"
		default:
			return "INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL"
		}
	}
	var typ string
	switch c.Type {
	case Int:
		typ = "INTEGER"
		if d == typo3.DialectMySQL {
			typ = "INT"
		}
	case SmallInt:
		typ = "SMALLINT"
	case BigInt:
		typ = "BIGINT"
	case Varchar:
		n := c.Len
		if n == 0 {
			n = 255
		}
		typ = "VARCHAR(" + strconv.Itoa(n) + ")"
	case Text:
		switch d {
		case typo3.DialectMySQL:
			typ = "LONGTEXT"
		case typo3.DialectPostgres:
			typ = "TEXT"
		default:
			typ = "CLOB"
		}
	case Blob:
		switch d {
		case typo3.DialectMySQL:
			typ = "LONGBLOB"
		case typo3.DialectPostgres:
			typ = "BYTEA"
		default:
			typ = "BLOB"
		}
	case Double:
		typ = "DOUBLE PRECISION"
	case Numeric:
		typ = fmt.Sprintf("NUMERIC(%d, %d)", c.Len, c.Scale)
	case DateTime:
		typ = "DATETIME"
		if d == typo3.DialectPostgres {
			typ = "TIMESTAMP(0) WITHOUT TIME ZONE"
		}
	}
	if c.Unsigned && d == typo3.DialectMySQL && (c.Type == Int || c.Type == SmallInt || c.Type == BigInt) {
		typ += " UNSIGNED"
	}
	var b strings.Builder
	b.WriteString(typ)
	switch v := c.Default.(type) {
	case nil:
		if c.Nullable && !(d == typo3.DialectMySQL && (c.Type == Text || c.Type == Blob)) {
			b.WriteString(" DEFAULT NULL")
		}
	case int:
		b.WriteString(" DEFAULT " + strconv.Itoa(v))
	case float64:
		b.WriteString(" DEFAULT " + strconv.FormatFloat(v, 'f', -1, 64))
	case string:
		b.WriteString(" DEFAULT '" + strings.ReplaceAll(v, "'", "''") + "'")
	}
	if !c.Nullable {
		b.WriteString(" NOT NULL")
	}
	if d == typo3.DialectSQLite && (c.Type == Varchar || c.Type == Text) {
		b.WriteString(` COLLATE "BINARY"`)
	}
	return b.String()
}

// Schema is an ordered set of tables.
type Schema []*Table

// Table returns the named table, or nil.
func (s Schema) Table(name string) *Table {
	for _, t := range s {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// CreateStatements returns the CREATE TABLE statements (no indexes) for d.
func (s Schema) CreateStatements(d typo3.Dialect) []string {
	out := make([]string, 0, len(s))
	for _, t := range s {
		out = append(out, t.CreateSQL(d))
	}
	return out
}

// IndexStatements returns every CREATE INDEX statement for d. They run after
// the bulk load, which is much faster than maintaining indexes row by row.
func (s Schema) IndexStatements(d typo3.Dialect) []string {
	var out []string
	for _, t := range s {
		out = append(out, t.IndexSQL(d)...)
	}
	return out
}

// Script renders the whole schema (tables then indexes) as one SQL script.
func (s Schema) Script(d typo3.Dialect) string {
	var b strings.Builder
	for _, st := range s.CreateStatements(d) {
		b.WriteString(st)
		b.WriteString(";\n\n")
	}
	for _, st := range s.IndexStatements(d) {
		b.WriteString(st)
		b.WriteString(";\n")
	}
	return b.String()
}
