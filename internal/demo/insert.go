package demo

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/t3agent/t3agent/internal/typo3"
)

// maxParams keeps one multi-row INSERT below every dialect's bind limit
// (SQLite 32766, PostgreSQL and MariaDB 65535).
const maxParams = 30000

// maxRowsPerInsert bounds the statement size; beyond a few hundred rows the
// gain per round trip is negligible.
const maxRowsPerInsert = 400

// inserter buffers rows of one table and writes them as multi-row INSERTs
// through one prepared statement per batch size, inside the caller's
// transaction.
type inserter struct {
	ctx     context.Context
	tx      *sql.Tx
	dialect typo3.Dialect
	table   string
	cols    []string
	blobs   []bool // columns whose values go to BLOB/BYTEA columns as []byte
	perStmt int
	buf     []any
	rows    int
	full    *sql.Stmt // prepared for perStmt rows
	total   int
}

func newInserter(ctx context.Context, tx *sql.Tx, d typo3.Dialect, t *Table, cols []string) (*inserter, error) {
	ins := &inserter{ctx: ctx, tx: tx, dialect: d, table: t.Name, cols: cols, blobs: make([]bool, len(cols))}
	for i, c := range cols {
		col := t.Column(c)
		if col == nil {
			return nil, fmt.Errorf("table %s has no column %s", t.Name, c)
		}
		ins.blobs[i] = col.Type == Blob
	}
	ins.perStmt = min(maxRowsPerInsert, max(1, maxParams/len(cols)))
	ins.buf = make([]any, 0, ins.perStmt*len(cols))
	return ins, nil
}

func (ins *inserter) statement(rows int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO ")
	b.WriteString(q(ins.dialect, ins.table))
	b.WriteString(" (")
	for i, c := range ins.cols {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(q(ins.dialect, c))
	}
	b.WriteString(") VALUES ")
	n := 1
	for r := 0; r < rows; r++ {
		if r > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		for i := range ins.cols {
			if i > 0 {
				b.WriteByte(',')
			}
			if ins.dialect == typo3.DialectPostgres {
				b.WriteByte('$')
				b.WriteString(strconv.Itoa(n))
				n++
			} else {
				b.WriteByte('?')
			}
		}
		b.WriteByte(')')
	}
	return b.String()
}

// add queues one row; values are in the order of the inserter's columns.
func (ins *inserter) add(vals ...any) error {
	if len(vals) != len(ins.cols) {
		return fmt.Errorf("%s: %d values for %d columns", ins.table, len(vals), len(ins.cols))
	}
	for i, v := range vals {
		if ins.blobs[i] {
			if s, ok := v.(string); ok {
				v = []byte(s)
			}
		}
		ins.buf = append(ins.buf, v)
	}
	ins.rows++
	if ins.rows == ins.perStmt {
		return ins.flush()
	}
	return nil
}

// addMap queues one row given by column name; missing columns are NULL.
func (ins *inserter) addMap(row map[string]any) error {
	vals := make([]any, len(ins.cols))
	for i, c := range ins.cols {
		vals[i] = row[c]
	}
	return ins.add(vals...)
}

func (ins *inserter) flush() error {
	if ins.rows == 0 {
		return nil
	}
	var err error
	if ins.rows == ins.perStmt {
		if ins.full == nil {
			ins.full, err = ins.tx.PrepareContext(ins.ctx, ins.statement(ins.perStmt))
			if err != nil {
				return fmt.Errorf("prepare insert into %s: %w", ins.table, err)
			}
		}
		_, err = ins.full.ExecContext(ins.ctx, ins.buf...)
	} else {
		_, err = ins.tx.ExecContext(ins.ctx, ins.statement(ins.rows), ins.buf...)
	}
	if err != nil {
		return fmt.Errorf("insert into %s: %w", ins.table, err)
	}
	ins.total += ins.rows
	ins.rows = 0
	ins.buf = ins.buf[:0]
	return nil
}

// close writes what is left and releases the prepared statement.
func (ins *inserter) close() error {
	err := ins.flush()
	if ins.full != nil {
		if cerr := ins.full.Close(); err == nil {
			err = cerr
		}
		ins.full = nil
	}
	return err
}
