package store

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/pressly/goose/v3"
)

// The catalog is what backup, restore and copy know of a schema: they
// read it from the database itself (sqlite_master and its pragmas, or
// PostgreSQL's information schema and pg_catalog), never from a list in
// the code, so a table a later migration adds is copied without anyone
// remembering to add it here.

// colKind is how a column's values are converted and compared across
// databases: SQLite keeps booleans as 0/1 integers and timestamps as
// text, PostgreSQL has types of their own.
type colKind int

const (
	kindAny colKind = iota
	kindBool
	kindInt
	kindFloat
	kindText
	kindTime
	kindBytes
)

type column struct {
	name string
	kind colKind
}

// table is one table of the catalog.
type table struct {
	name string
	cols []column
	// refs are the tables its foreign keys reference (itself excluded).
	refs []string
	// seq is the column a sequence fills (an identity, serial or
	// AUTOINCREMENT key), "" when none; identity says PostgreSQL
	// generates it ALWAYS, so an insert must override it.
	seq      string
	identity bool
	// triggers are the user triggers on the table.
	triggers []trigger
}

// trigger is a user trigger: its name and, on SQLite, the statement that
// creates it again.
type trigger struct{ name, sql string }

// internalTable reports tables that are not t3agent's data: goose's
// version table (each database keeps its own history), SQLite's own, and
// the site index (a cache of the site database whose FTS5 and tsvector
// structures have no counterpart in the other dialect; a build makes it
// again, see SiteIndex).
func internalTable(name string) bool {
	return name == versionTable || strings.HasPrefix(name, "sqlite_") || strings.HasPrefix(name, siteIndexPrefix)
}

// siteIndexPrefix begins the name of every table of the site index.
const siteIndexPrefix = "site_index"

// identPattern is what a catalog name must look like before it is put
// into SQL; t3agent's migrations name nothing else.
var identPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// quoteIdent quotes a catalog name for both dialects.
func quoteIdent(name string) (string, error) {
	if !identPattern.MatchString(name) {
		return "", fmt.Errorf("store: the catalog names %q, which is not a plain identifier", name)
	}
	return `"` + name + `"`, nil
}

type catalogQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// readCatalog lists the data tables of the database behind q, ordered so
// that every table comes after the tables it references.
func readCatalog(ctx context.Context, q catalogQuerier, dialect goose.Dialect) ([]table, error) {
	var tables []table
	var err error
	if dialect == goose.DialectPostgres {
		tables, err = readPostgresCatalog(ctx, q)
	} else {
		tables, err = readSQLiteCatalog(ctx, q)
	}
	if err != nil {
		return nil, fmt.Errorf("store: cannot read the schema catalog: %w", err)
	}
	return orderByReferences(tables)
}

func readSQLiteCatalog(ctx context.Context, q catalogQuerier) ([]table, error) {
	type master struct{ name, sql string }
	objs, err := queryAll(ctx, q, "list tables", "a table", func(r rowScanner) (master, error) {
		var m master
		var s sql.NullString
		err := r.Scan(&m.name, &s)
		m.sql = s.String
		return m, err
	}, `SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	trig, err := queryAll(ctx, q, "list triggers", "a trigger", func(r rowScanner) ([3]string, error) {
		var v [3]string
		err := r.Scan(&v[0], &v[1], &v[2])
		return v, err
	}, `SELECT tbl_name, name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	var out []table
	for _, m := range objs {
		if internalTable(m.name) {
			continue
		}
		t := table{name: m.name}
		type info struct {
			name, typ string
			pk        int
		}
		cols, err := queryAll(ctx, q, "list columns", "a column", func(r rowScanner) (info, error) {
			var i info
			err := r.Scan(&i.name, &i.typ, &i.pk)
			return i, err
		}, `SELECT name, type, pk FROM pragma_table_info($1) ORDER BY cid`, m.name)
		if err != nil {
			return nil, err
		}
		autoinc := strings.Contains(strings.ToUpper(m.sql), "AUTOINCREMENT")
		for _, c := range cols {
			t.cols = append(t.cols, column{name: c.name, kind: sqliteKind(c.typ)})
			if autoinc && c.pk == 1 && sqliteKind(c.typ) == kindInt {
				t.seq = c.name
			}
		}
		refs, err := queryAll(ctx, q, "list foreign keys", "a foreign key", func(r rowScanner) (string, error) {
			var s string
			return s, r.Scan(&s)
		}, `SELECT DISTINCT "table" FROM pragma_foreign_key_list($1)`, m.name)
		if err != nil {
			return nil, err
		}
		for _, r := range refs {
			if r != m.name {
				t.refs = append(t.refs, r)
			}
		}
		for _, tr := range trig {
			if tr[0] == m.name {
				t.triggers = append(t.triggers, trigger{name: tr[1], sql: tr[2]})
			}
		}
		out = append(out, t)
	}
	return out, nil
}

// sqliteKind follows SQLite's type affinity rules, with the declared
// TIMESTAMP the store uses for times.
func sqliteKind(decl string) colKind {
	d := strings.ToUpper(decl)
	switch {
	case d == "TIMESTAMP" || d == "DATETIME" || d == "DATE":
		return kindTime
	case strings.Contains(d, "INT"):
		return kindInt
	case strings.Contains(d, "CHAR"), strings.Contains(d, "CLOB"), strings.Contains(d, "TEXT"):
		return kindText
	case strings.Contains(d, "BLOB"):
		return kindBytes
	case strings.Contains(d, "REAL"), strings.Contains(d, "FLOA"), strings.Contains(d, "DOUB"):
		return kindFloat
	}
	return kindAny
}

func readPostgresCatalog(ctx context.Context, q catalogQuerier) ([]table, error) {
	names, err := queryAll(ctx, q, "list tables", "a table", func(r rowScanner) (string, error) {
		var s string
		return s, r.Scan(&s)
	}, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`)
	if err != nil {
		return nil, err
	}
	type colRow struct {
		table, name, typ string
		identity, serial bool
	}
	cols, err := queryAll(ctx, q, "list columns", "a column", func(r rowScanner) (colRow, error) {
		var c colRow
		err := r.Scan(&c.table, &c.name, &c.typ, &c.identity, &c.serial)
		return c, err
	}, `SELECT table_name, column_name, data_type, is_identity = 'YES',
			COALESCE(column_default, '') LIKE 'nextval(%'
		FROM information_schema.columns WHERE table_schema = current_schema()
		ORDER BY table_name, ordinal_position`)
	if err != nil {
		return nil, err
	}
	refs, err := queryAll(ctx, q, "list foreign keys", "a foreign key", func(r rowScanner) ([2]string, error) {
		var v [2]string
		err := r.Scan(&v[0], &v[1])
		return v, err
	}, `SELECT DISTINCT c.relname, p.relname FROM pg_constraint k
		JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE k.contype = 'f' AND n.nspname = current_schema()`)
	if err != nil {
		return nil, err
	}
	trig, err := queryAll(ctx, q, "list triggers", "a trigger", func(r rowScanner) ([2]string, error) {
		var v [2]string
		err := r.Scan(&v[0], &v[1])
		return v, err
	}, `SELECT c.relname, t.tgname FROM pg_trigger t
		JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE NOT t.tgisinternal AND n.nspname = current_schema() ORDER BY t.tgname`)
	if err != nil {
		return nil, err
	}
	var out []table
	for _, name := range names {
		if internalTable(name) {
			continue
		}
		t := table{name: name}
		for _, c := range cols {
			if c.table != name {
				continue
			}
			t.cols = append(t.cols, column{name: c.name, kind: postgresKind(c.typ)})
			if c.identity || c.serial {
				t.seq, t.identity = c.name, c.identity
			}
		}
		for _, r := range refs {
			if r[0] == name && r[1] != name {
				t.refs = append(t.refs, r[1])
			}
		}
		for _, tr := range trig {
			if tr[0] == name {
				t.triggers = append(t.triggers, trigger{name: tr[1]})
			}
		}
		out = append(out, t)
	}
	return out, nil
}

func postgresKind(typ string) colKind {
	switch typ {
	case "boolean":
		return kindBool
	case "smallint", "integer", "bigint":
		return kindInt
	case "real", "double precision":
		return kindFloat
	case "text", "character varying", "character", "json", "jsonb", "uuid":
		return kindText
	case "bytea":
		return kindBytes
	}
	if strings.HasPrefix(typ, "timestamp") || typ == "date" {
		return kindTime
	}
	return kindAny
}

// orderByReferences sorts tables so that each follows the tables it
// references (by name otherwise), which is the order to insert them in.
func orderByReferences(tables []table) ([]table, error) {
	byName := map[string]table{}
	for _, t := range tables {
		byName[t.name] = t
	}
	var out []table
	done := map[string]bool{}
	visiting := map[string]bool{}
	var visit func(name string) error
	visit = func(name string) error {
		if done[name] {
			return nil
		}
		t, ok := byName[name]
		if !ok {
			return nil // a reference outside the data tables
		}
		if visiting[name] {
			return fmt.Errorf("store: the foreign keys of table %s form a cycle; it cannot be copied table by table", name)
		}
		visiting[name] = true
		refs := slices.Clone(t.refs)
		slices.Sort(refs)
		for _, r := range refs {
			if err := visit(r); err != nil {
				return err
			}
		}
		visiting[name] = false
		done[name] = true
		out = append(out, t)
		return nil
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if err := visit(n); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// seedPattern finds the tables a migration writes rows into.
var seedPattern = regexp.MustCompile(`(?i)\bINSERT\s+INTO\s+"?([A-Za-z_][A-Za-z0-9_]*)"?`)

// seededTables names the tables whose rows the migrations up to version
// insert themselves (agent_config_generation's single row): a freshly
// migrated database has rows there, and a copy replaces them.
func seededTables(migrations fs.FS, version int64) (map[string]bool, error) {
	files, err := fs.Glob(migrations, "*.sql")
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, f := range files {
		v, err := strconv.ParseInt(strings.SplitN(f, "_", 2)[0], 10, 64)
		if err != nil || v > version {
			continue
		}
		b, err := fs.ReadFile(migrations, f)
		if err != nil {
			return nil, err
		}
		for _, m := range seedPattern.FindAllStringSubmatch(upSection(b), -1) {
			out[m[1]] = true
		}
	}
	return out, nil
}

// upSection is the part of a goose SQL file between "-- +goose Up" and
// "-- +goose Down".
func upSection(b []byte) string {
	var sb strings.Builder
	up := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch trimmed := strings.TrimSpace(line); {
		case strings.HasPrefix(trimmed, "-- +goose Up"):
			up = true
			continue
		case strings.HasPrefix(trimmed, "-- +goose Down"):
			up = false
			continue
		case strings.HasPrefix(trimmed, "--"):
			continue
		}
		if up {
			sb.WriteString(line)
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}
