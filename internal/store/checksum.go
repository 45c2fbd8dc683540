package store

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// TableSum is one table's row count and checksum. The checksum does not
// depend on the database or the order of the rows: a boolean is 0 or 1,
// a time is its UTC instant, so a SQLite table and its PostgreSQL copy
// have the same sum exactly when they hold the same rows.
type TableSum struct {
	Table    string `json:"table"`
	Rows     int64  `json:"rows"`
	Checksum string `json:"checksum"`
}

// rowSum adds up the hashes of rows; addition makes the sum independent
// of the order rows are read in.
type rowSum struct {
	rows  int64
	lanes [4]uint64
	buf   []byte
}

// add hashes one row, its values in the table's column order.
func (s *rowSum) add(cols []column, vals []any) error {
	s.buf = s.buf[:0]
	for i, v := range vals {
		var err error
		if s.buf, err = appendCanonical(s.buf, cols[i], v); err != nil {
			return err
		}
	}
	h := sha256.Sum256(s.buf)
	for i := range s.lanes {
		s.lanes[i] += binary.BigEndian.Uint64(h[8*i:])
	}
	s.rows++
	return nil
}

func (s *rowSum) sum(table string) TableSum {
	var b [32]byte
	for i, l := range s.lanes {
		binary.BigEndian.PutUint64(b[8*i:], l)
	}
	return TableSum{Table: table, Rows: s.rows, Checksum: hex.EncodeToString(b[:])}
}

// appendCanonical appends the column's name and its value in a form both
// databases give alike, length-prefixed so no two rows encode the same.
func appendCanonical(b []byte, c column, v any) ([]byte, error) {
	var tag byte
	var text string
	switch x := v.(type) {
	case nil:
		tag = 'N'
	case bool:
		tag, text = 'I', "0"
		if x {
			text = "1"
		}
	case int64:
		tag, text = 'I', strconv.FormatInt(x, 10)
	case float64:
		tag, text = 'F', strconv.FormatFloat(x, 'g', -1, 64)
	case time.Time:
		tag, text = 'T', x.UTC().Format(time.RFC3339Nano)
	case string:
		tag, text = 'S', x
	case []byte:
		tag, text = 'S', string(x)
		if c.kind == kindBytes {
			tag = 'B'
		}
	default:
		return nil, fmt.Errorf("store: column %s holds a %T, which a copy cannot carry", c.name, v)
	}
	b = binary.AppendUvarint(b, uint64(len(c.name)))
	b = append(b, c.name...)
	b = append(b, tag)
	b = binary.AppendUvarint(b, uint64(len(text)))
	return append(b, text...), nil
}

// convert turns a value read from one database into what column c of the
// other takes.
func convert(c column, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	bad := func() (any, error) {
		return nil, fmt.Errorf("store: column %s cannot take the value %v (%T)", c.name, v, v)
	}
	switch c.kind {
	case kindBool:
		switch x := v.(type) {
		case bool:
			return x, nil
		case int64:
			if x == 0 || x == 1 {
				return x == 1, nil
			}
		}
		return bad()
	case kindInt:
		switch x := v.(type) {
		case int64:
			return x, nil
		case bool:
			if x {
				return int64(1), nil
			}
			return int64(0), nil
		case float64:
			if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
				return int64(x), nil
			}
		}
		return bad()
	case kindFloat:
		switch x := v.(type) {
		case float64:
			return x, nil
		case int64:
			return float64(x), nil
		}
		return bad()
	case kindTime:
		switch x := v.(type) {
		case time.Time:
			return x.UTC(), nil
		case string:
			var t time.Time
			if err := (timeScanner{t: &t}).Scan(x); err != nil {
				return nil, err
			}
			return t, nil
		}
		return bad()
	case kindText:
		switch x := v.(type) {
		case string:
			return x, nil
		case []byte:
			return string(x), nil
		}
		return bad()
	}
	return v, nil
}

// sumTable reads every row of t from q and sums it.
func sumTable(ctx context.Context, q catalogQuerier, t table) (TableSum, error) {
	query, err := selectAll(t)
	if err != nil {
		return TableSum{}, err
	}
	var s rowSum
	err = scanRows(ctx, q, query, len(t.cols), func(vals []any) error { return s.add(t.cols, vals) })
	if err != nil {
		return TableSum{}, fmt.Errorf("store: cannot read table %s: %w", t.name, err)
	}
	return s.sum(t.name), nil
}

func selectAll(t table) (string, error) {
	cols := make([]string, len(t.cols))
	for i, c := range t.cols {
		q, err := quoteIdent(c.name)
		if err != nil {
			return "", err
		}
		cols[i] = q
	}
	name, err := quoteIdent(t.name)
	if err != nil {
		return "", err
	}
	return "SELECT " + strings.Join(cols, ", ") + " FROM " + name, nil
}

// scanRows runs query and hands each row's values to fn; the slice is
// reused between rows.
func scanRows(ctx context.Context, q catalogQuerier, query string, n int, fn func([]any) error) error {
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	vals := make([]any, n)
	ptrs := make([]any, n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		if err := fn(vals); err != nil {
			return err
		}
	}
	return rows.Err()
}
