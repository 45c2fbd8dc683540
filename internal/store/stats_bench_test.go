package store_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/t3agent/t3agent/internal/dbtest"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/store/storetest"
)

// BenchmarkStats reads what a /metrics scrape reads from the store
// (RunStats, ConversationStats, MCPServers every scrape, FinishedRuns
// once a minute) on a store of 20,000 finished runs beside the suite's
// sample, on SQLite and, copied there, on PostgreSQL.
func BenchmarkStats(b *testing.B) {
	const runs = 20000
	src := "sqlite:" + filepath.Join(b.TempDir(), "src.db")
	st, err := store.Open(b.Context(), src, store.OpenParams{})
	if err != nil {
		b.Fatal(err)
	}
	storetest.Fill(b, st, storetest.FillParams{Runs: runs})
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		dsn  func(b *testing.B) string
	}{
		{"sqlite", func(*testing.B) string { return src }},
		{"postgres", func(b *testing.B) string {
			dst := dbtest.Postgres(b)
			if _, err := store.Copy(b.Context(), store.CopyParams{From: src, To: dst}); err != nil {
				b.Fatal(err)
			}
			// As autovacuum leaves a table: analysed, its visibility map
			// set, so that counts can be read from an index alone.
			db, err := sql.Open("pgx", dst)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			if _, err := db.ExecContext(b.Context(), `VACUUM ANALYZE runs`); err != nil {
				b.Fatal(err)
			}
			return dst
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			st, err := store.Open(b.Context(), tc.dsn(b), store.OpenParams{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = st.Close() })
			b.Run("RunStats", func(b *testing.B) {
				for b.Loop() {
					rs, err := st.RunStats(b.Context())
					if err != nil {
						b.Fatal(err)
					}
					if n := total(rs.Counts); n < runs {
						b.Fatalf("counted %d runs, want at least %d", n, runs)
					}
				}
			})
			b.Run("FinishedRuns", func(b *testing.B) {
				for b.Loop() {
					counts, err := st.FinishedRuns(b.Context())
					if err != nil {
						b.Fatal(err)
					}
					if n := total(counts); n < runs {
						b.Fatalf("counted %d finished runs, want at least %d", n, runs)
					}
				}
			})
			b.Run("ConversationStats", func(b *testing.B) {
				for b.Loop() {
					if _, err := st.ConversationStats(b.Context()); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("MCPServers", func(b *testing.B) {
				for b.Loop() {
					if _, err := st.MCPServers(b.Context()); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

func total(counts []store.RunCount) int64 {
	var n int64
	for _, c := range counts {
		n += c.Runs
	}
	return n
}
