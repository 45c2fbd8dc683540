package content

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/t3agent/t3agent/internal/typo3"
)

// cell is one selected value as text.
type cell struct {
	s    string
	null bool
}

func (c cell) int() int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(c.s), 10, 64)
	if err != nil {
		// Booleans and decimals from odd schemas: take the integer part.
		f, ferr := strconv.ParseFloat(strings.TrimSpace(c.s), 64)
		if ferr != nil {
			return 0
		}
		return int64(f)
	}
	return n
}

// textOf renders a driver value the way the tools print it.
func textOf(v any) cell {
	switch x := v.(type) {
	case nil:
		return cell{null: true}
	case []byte:
		return cell{s: string(x)}
	case string:
		return cell{s: x}
	case int64:
		return cell{s: strconv.FormatInt(x, 10)}
	case float64:
		return cell{s: strconv.FormatFloat(x, 'f', -1, 64)}
	case bool:
		if x {
			return cell{s: "1"}
		}
		return cell{s: "0"}
	case time.Time:
		return cell{s: x.UTC().Format("2006-01-02 15:04:05")}
	}
	return cell{s: fmt.Sprint(v)}
}

// query runs q and returns every row as cells.
func query(ctx context.Context, db *typo3.DB, q string, args []any) ([][]cell, error) {
	rows, err := db.SQL.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]cell
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]cell, len(cols))
		for i, v := range vals {
			row[i] = textOf(v)
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// liveColumns keeps the names the live table has, in the given order. A
// TCA that declares columns the database lacks (an extension whose schema
// was never applied) must not break a query.
func (b base) liveColumns(ctx context.Context, table string, names []string) ([]string, error) {
	live, err := b.site.Columns(ctx, table)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		if slices.Contains(live, n) && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// hasColumn reports whether the live table has column.
func (b base) hasColumn(ctx context.Context, table, column string) (bool, error) {
	if column == "" {
		return false, nil
	}
	return b.site.HasColumn(ctx, table, column)
}

// selectList quotes names for a SELECT list, qualified by table.
func selectList(a *typo3.Args, table string, names []string) (string, error) {
	qt, err := a.Quote(table)
	if err != nil {
		return "", err
	}
	parts := make([]string, len(names))
	for i, n := range names {
		qn, err := a.Quote(n)
		if err != nil {
			return "", err
		}
		parts[i] = qt + "." + qn
	}
	return strings.Join(parts, ", "), nil
}

// qcol is table.column quoted.
func qcol(a *typo3.Args, table, column string) (string, error) {
	qt, err := a.Quote(table)
	if err != nil {
		return "", err
	}
	qc, err := a.Quote(column)
	if err != nil {
		return "", err
	}
	return qt + "." + qc, nil
}

// textCast is the dialect's cast of any column to text.
func textCast(d typo3.Dialect, expr string) string {
	if d == typo3.DialectMySQL {
		return "CAST(" + expr + " AS CHAR)"
	}
	return "CAST(" + expr + " AS TEXT)"
}

// likeEscape is the escape character of every LIKE pattern. It is not the
// backslash, whose meaning differs between the dialects (and MySQL's SQL
// modes), so one ESCAPE clause means the same everywhere.
const likeEscape = "!"

// likeContains returns a LIKE pattern matching s anywhere, with the
// wildcards and the escape character escaped.
func likeContains(s string) string {
	r := strings.NewReplacer(likeEscape, likeEscape+likeEscape, "%", likeEscape+"%", "_", likeEscape+"_")
	return "%" + r.Replace(s) + "%"
}

// likeExpr compares column expression expr case-insensitively with a
// bound pattern: LIKE is case-insensitive on SQLite (ASCII) and MySQL's
// _ci collations, PostgreSQL needs ILIKE, and a cast so that a column of
// another type cannot make the statement fail.
func likeExpr(d typo3.Dialect, a *typo3.Args, expr, pattern string) string {
	if d == typo3.DialectPostgres {
		return textCast(typo3.DialectPostgres, expr) + " ILIKE " + a.Add(pattern) + " ESCAPE '" + likeEscape + "'"
	}
	return expr + " LIKE " + a.Add(pattern) + " ESCAPE '" + likeEscape + "'"
}
