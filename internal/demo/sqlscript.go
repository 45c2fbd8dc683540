package demo

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/t3agent/t3agent/internal/typo3"
)

// SplitSQL splits an SQL script into statements at semicolons that are
// outside quotes ('…', "…", `…`) and comments (-- … and /* … */). Comments
// are dropped; empty statements are skipped.
func SplitSQL(script string) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			out = append(out, s)
		}
		cur.Reset()
	}
	for i := 0; i < len(script); i++ {
		c := script[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			// Copy the quoted run; a doubled quote is an escaped one.
			j := i + 1
			for j < len(script) {
				if script[j] == c {
					if j+1 < len(script) && script[j+1] == c {
						j += 2
						continue
					}
					break
				}
				if c == '\'' && script[j] == '\\' && j+1 < len(script) {
					j += 2
					continue
				}
				j++
			}
			if j >= len(script) {
				j = len(script) - 1
			}
			cur.WriteString(script[i : j+1])
			i = j
		case c == '-' && i+1 < len(script) && script[i+1] == '-':
			for i < len(script) && script[i] != '\n' {
				i++
			}
			cur.WriteByte('\n')
		case c == '/' && i+1 < len(script) && script[i+1] == '*':
			end := strings.Index(script[i+2:], "*/")
			if end < 0 {
				i = len(script)
			} else {
				i += end + 3
			}
			cur.WriteByte(' ')
		case c == ';':
			flush()
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return out
}

var (
	createTableRe = regexp.MustCompile(`(?is)^CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?["` + "`" + `]?(\w+)["` + "`" + `]?\s*\((.*)\)\s*$`)
	createIndexRe = regexp.MustCompile(`(?is)^CREATE\s+(UNIQUE\s+)?INDEX\s+(?:IF\s+NOT\s+EXISTS\s+)?["` + "`" + `]?(\w+)["` + "`" + `]?\s+ON\s+["` + "`" + `]?(\w+)["` + "`" + `]?\s*\(([^)]*)\)\s*$`)
	columnRe      = regexp.MustCompile(`(?is)^["` + "`" + `]?(\w+)["` + "`" + `]?\s+([A-Z]+(?:\s+PRECISION)?)(?:\s*\(\s*(\d+)(?:\s*,\s*(\d+))?\s*\))?(.*)$`)
	defaultRe     = regexp.MustCompile(`(?i)\bDEFAULT\s+('(?:[^']|'')*'|NULL|-?\d+(?:\.\d+)?)`)
	primaryKeyRe  = regexp.MustCompile(`(?is)^PRIMARY\s+KEY\s*\(([^)]*)\)$`)
	indexHashRe   = regexp.MustCompile(`_[0-9a-f]{8}$`)
)

// ParseSQLiteSchema reads a schema script as TYPO3 writes it for SQLite
// (CREATE TABLE and CREATE INDEX statements; see shared schema dumps) into
// the portable model, so it can be rendered for MariaDB and PostgreSQL.
func ParseSQLiteSchema(script string) (Schema, error) {
	var schema Schema
	for _, st := range SplitSQL(script) {
		if m := createTableRe.FindStringSubmatch(st); m != nil {
			t, err := parseTable(m[1], m[2])
			if err != nil {
				return nil, err
			}
			schema = append(schema, t)
			continue
		}
		if m := createIndexRe.FindStringSubmatch(st); m != nil {
			t := schema.Table(m[3])
			if t == nil {
				return nil, fmt.Errorf("index %s on unknown table %s", m[2], m[3])
			}
			ix := Index{Name: indexHashRe.ReplaceAllString(m[2], ""), Unique: m[1] != ""}
			for _, c := range strings.Split(m[4], ",") {
				ix.Columns = append(ix.Columns, unquote(c))
			}
			t.Indexes = append(t.Indexes, ix)
			continue
		}
		return nil, fmt.Errorf("schema script: unsupported statement %.60q", st)
	}
	return schema, nil
}

func unquote(s string) string {
	return strings.Trim(strings.TrimSpace(s), "\"`")
}

// splitTopLevel splits a column list at commas outside parentheses and
// quotes.
func splitTopLevel(s string) []string {
	var out []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"' || c == '`':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ',' && depth == 0:
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

func parseTable(name, body string) (*Table, error) {
	if !typo3.ValidIdent(name) {
		return nil, fmt.Errorf("schema script: bad table name %q", name)
	}
	t := &Table{Name: name}
	for _, def := range splitTopLevel(body) {
		if def == "" {
			continue
		}
		if m := primaryKeyRe.FindStringSubmatch(def); m != nil {
			for _, c := range strings.Split(m[1], ",") {
				t.PrimaryKey = append(t.PrimaryKey, unquote(c))
			}
			continue
		}
		m := columnRe.FindStringSubmatch(def)
		if m == nil || !typo3.ValidIdent(m[1]) {
			return nil, fmt.Errorf("schema script: table %s: cannot read column %q", name, def)
		}
		c := Column{Name: m[1]}
		rest := strings.ToUpper(m[5])
		switch strings.ToUpper(m[2]) {
		case "INTEGER", "INT":
			c.Type = Int
		case "SMALLINT", "TINYINT":
			c.Type = SmallInt
		case "BIGINT":
			c.Type = BigInt
		case "VARCHAR", "CHAR":
			c.Type = Varchar
		case "CLOB", "TEXT":
			c.Type = Text
		case "BLOB":
			c.Type = Blob
		case "DOUBLE PRECISION", "DOUBLE", "REAL", "FLOAT":
			c.Type = Double
		case "NUMERIC", "DECIMAL":
			c.Type = Numeric
		case "DATETIME":
			c.Type = DateTime
		default:
			return nil, fmt.Errorf("schema script: table %s: unknown type %s of column %s", name, m[2], m[1])
		}
		if m[3] != "" {
			c.Len, _ = strconv.Atoi(m[3])
		}
		if m[4] != "" {
			c.Scale, _ = strconv.Atoi(m[4])
		}
		c.Unsigned = strings.Contains(rest, "UNSIGNED")
		if strings.Contains(rest, "AUTOINCREMENT") || strings.Contains(rest, "AUTO_INCREMENT") {
			c.AutoUID = true
		}
		c.Nullable = !strings.Contains(rest, "NOT NULL")
		if d := defaultRe.FindStringSubmatch(m[5]); d != nil && !strings.EqualFold(d[1], "NULL") {
			v := d[1]
			if strings.HasPrefix(v, "'") {
				v = strings.ReplaceAll(v[1:len(v)-1], "''", "'")
				// '0' on a number column is a number default.
				if c.Type == Double || c.Type == Numeric || c.Type == Int || c.Type == SmallInt || c.Type == BigInt {
					if f, err := strconv.ParseFloat(v, 64); err == nil {
						c.Default = f
						if c.Type != Double && c.Type != Numeric {
							c.Default = int(f)
						}
						t.Columns = append(t.Columns, c)
						continue
					}
				}
				c.Default = v
			} else if n, err := strconv.Atoi(v); err == nil {
				c.Default = n
			} else if f, err := strconv.ParseFloat(v, 64); err == nil {
				c.Default = f
			}
		}
		t.Columns = append(t.Columns, c)
	}
	return t, nil
}
