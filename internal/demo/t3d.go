package demo

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/t3agent/t3agent/internal/typo3"
)

// ImportT3DParams configures ImportT3D.
type ImportT3DParams struct {
	// File is the T3D XML export (e.g. introduction/Initialisation/data.xml).
	File string
	// SchemaSQL is the path of the schema script to run first, in SQLite
	// syntax as TYPO3 writes it; for MariaDB and PostgreSQL it is
	// translated through the schema model.
	SchemaSQL string
	// SiteDSN is the (empty) target database, typo3.Open syntax.
	SiteDSN string
	// FastHashes hashes the added users' passwords cheaply (tests).
	FastHashes bool
	// Now stamps the added users (zero = DefaultNow).
	Now time.Time
}

// ImportResult reports an import.
type ImportResult struct {
	Dialect typo3.Dialect
	// Counts are the rows inserted per table from the export.
	Counts map[string]int
	// Rows is the total of Counts.
	Rows int
	// Users are the backend users added because the export has none.
	Users []User
}

// t3dField is one <field index="col" type="…">value</field>.
type t3dField struct {
	Index string `xml:"index,attr"`
	Type  string `xml:"type,attr"`
	Value string `xml:",chardata"`
}

// t3dRow is one record of the export.
type t3dRow struct {
	table string
	cols  []string
	vals  []any
}

// ReadT3D streams the records of a T3D XML export
// (T3RecordDocument/records/tablerow/fieldlist[@index="data"]/field) and
// calls fn for each, in file order. Values are int64 for type="integer",
// nil for type="NULL", else the string.
func ReadT3D(r io.Reader, fn func(table string, cols []string, vals []any) error) error {
	dec := xml.NewDecoder(r)
	var stack []string
	var row *t3dRow
	inData := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("T3D: %w", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			attr := func(name string) string {
				for _, a := range el.Attr {
					if a.Name.Local == name {
						return a.Value
					}
				}
				return ""
			}
			depth := len(stack)
			switch {
			case depth == 2 && el.Name.Local == "tablerow" && stack[0] == "T3RecordDocument" && stack[1] == "records":
				idx := attr("index")
				table, _, ok := strings.Cut(idx, ":")
				if !ok || !typo3.ValidIdent(table) {
					return fmt.Errorf("T3D: bad tablerow index %q", idx)
				}
				row = &t3dRow{table: table}
			case row != nil && depth == 3 && el.Name.Local == "fieldlist":
				inData = attr("index") == "data"
			case row != nil && inData && depth == 4 && el.Name.Local == "field":
				var f t3dField
				if err := dec.DecodeElement(&f, &el); err != nil {
					return fmt.Errorf("T3D %s: %w", row.table, err)
				}
				if !typo3.ValidIdent(f.Index) {
					return fmt.Errorf("T3D %s: bad column %q", row.table, f.Index)
				}
				var v any
				switch f.Type {
				case "integer":
					n, err := strconv.ParseInt(strings.TrimSpace(f.Value), 10, 64)
					if err != nil {
						return fmt.Errorf("T3D %s.%s: %w", row.table, f.Index, err)
					}
					v = n
				case "NULL":
					v = nil
				default:
					v = f.Value
				}
				row.cols = append(row.cols, f.Index)
				row.vals = append(row.vals, v)
				continue // DecodeElement consumed the end tag
			}
			stack = append(stack, el.Name.Local)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
			switch {
			case len(stack) == 3 && el.Name.Local == "fieldlist":
				inData = false
			case len(stack) == 2 && el.Name.Local == "tablerow" && row != nil:
				if err := fn(row.table, row.cols, row.vals); err != nil {
					return err
				}
				row = nil
			}
		}
	}
}

// ImportT3D creates the schema of p.SchemaSQL in p.SiteDSN, inserts every
// record of the T3D export p.File as is (uids kept) and adds the backend
// users such exports lack: admin (uid 1, admin) and editor (uid 2, member
// of be_groups 1), with generated passwords, when the schema has be_users.
// A failed import drops the tables it created.
func ImportT3D(ctx context.Context, p ImportT3DParams) (_ *ImportResult, err error) {
	if p.File == "" || p.SchemaSQL == "" || p.SiteDSN == "" {
		return nil, errors.New("T3D import needs a file, a schema script and a site database")
	}
	if p.Now.IsZero() {
		p.Now = DefaultNow()
	}
	script, err := os.ReadFile(p.SchemaSQL)
	if err != nil {
		return nil, fmt.Errorf("schema script: %w", err)
	}
	schema, err := ParseSQLiteSchema(string(script))
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p.File)
	if err != nil {
		return nil, fmt.Errorf("T3D file: %w", err)
	}
	defer f.Close()

	users := []userRow{
		{User: User{UID: 1, Username: "admin", Admin: true}, realName: "Administrator", email: "admin@example.com", options: 3},
		{User: User{UID: 2, Username: "editor", Groups: "1"}, realName: "Simple Editor", email: "editor@example.com", options: 3},
	}
	pws, err := newPasswords(len(users))
	if err != nil {
		return nil, err
	}
	for i := range users {
		users[i].Password = pws[i]
	}
	wait := hashInBackground(pws, p.FastHashes)
	defer func() { _, _ = wait() }()

	db, err := typo3.Open(ctx, p.SiteDSN, typo3.OpenParams{Writable: true})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if err := ensureEmpty(ctx, db, schema); err != nil {
		return nil, err
	}
	// A failed import takes its tables out again, so the database is as
	// empty as it was and the next attempt can start over.
	defer func() {
		if err != nil {
			dropTables(db, schema)
		}
	}()
	ddl := SplitSQL(string(script))
	if db.Dialect != typo3.DialectSQLite {
		ddl = append(schema.CreateStatements(db.Dialect), schema.IndexStatements(db.Dialect)...)
	}
	if err := execDDL(ctx, db, ddl); err != nil {
		return nil, fmt.Errorf("schema script (for %s): %w", db.Dialect, err)
	}

	tx, err := db.SQL.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }()
	res := &ImportResult{Dialect: db.Dialect, Counts: map[string]int{}}
	type key struct{ table, cols string }
	inserters := map[key]*inserter{}
	var order []*inserter
	err = ReadT3D(f, func(table string, cols []string, vals []any) error {
		t := schema.Table(table)
		if t == nil {
			return fmt.Errorf("T3D record of table %s, which the schema script does not create", table)
		}
		k := key{table, strings.Join(cols, ",")}
		ins := inserters[k]
		if ins == nil {
			ins, err = newInserter(ctx, tx, db.Dialect, t, cols)
			if err != nil {
				return err
			}
			inserters[k] = ins
			order = append(order, ins)
		}
		for i, c := range cols {
			vals[i] = coerce(t.Column(c), vals[i])
		}
		res.Counts[table]++
		res.Rows++
		return ins.add(vals...)
	})
	if err != nil {
		return nil, err
	}
	for _, ins := range order {
		if err := ins.close(); err != nil {
			return nil, err
		}
	}
	hashes, err := wait()
	if err != nil {
		return nil, err
	}
	for i := range users {
		users[i].hash = hashes[i]
	}
	if t := schema.Table("be_users"); t != nil {
		g := &generator{ctx: ctx, tx: tx, d: db.Dialect, schema: schema, now: p.Now.Unix(), counts: map[string]int{}}
		if err := g.beUsers(users); err != nil {
			return nil, err
		}
		for _, u := range users {
			res.Users = append(res.Users, u.User)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("commit import: %w", err)
	}
	if err := resetSequences(ctx, db, schema); err != nil {
		return nil, err
	}
	return res, nil
}

// coerce converts a T3D string to what the column takes: numbers for
// number columns (T3D leaves some untyped), bytes for BLOB/BYTEA.
func coerce(c *Column, v any) any {
	s, ok := v.(string)
	if !ok || c == nil {
		return v
	}
	switch c.Type {
	case Int, SmallInt, BigInt:
		if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
			return n
		}
		if strings.TrimSpace(s) == "" {
			return int64(0)
		}
	case Blob:
		return []byte(s)
	}
	return v
}
