package store_test

import (
	"path/filepath"
	"testing"

	"github.com/t3agent/t3agent/internal/dbtest"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/store/storetest"
)

// BenchmarkCopy copies a SQLite store of 100,000 run events (1,000 runs
// of 100 events, beside the suite's sample) into a new PostgreSQL
// database, the move docs/operations.md describes, and into a new SQLite
// file (what a restore into SQLite does).
func BenchmarkCopy(b *testing.B) {
	src := "sqlite:" + filepath.Join(b.TempDir(), "src.db")
	st, err := store.Open(b.Context(), src, store.OpenParams{})
	if err != nil {
		b.Fatal(err)
	}
	storetest.Fill(b, st, storetest.FillParams{Runs: 1000, EventsPerRun: 100})
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	targets := []struct {
		name   string
		newDSN func(b *testing.B) string
	}{
		{"to_postgres", func(b *testing.B) string { return dbtest.Postgres(b) }},
		{"to_sqlite", func(b *testing.B) string { return "sqlite:" + filepath.Join(b.TempDir(), "dst.db") }},
	}
	for _, tc := range targets {
		b.Run(tc.name, func(b *testing.B) {
			var rows int64
			for b.Loop() {
				b.StopTimer()
				dst := tc.newDSN(b)
				b.StartTimer()
				rep, err := store.Copy(b.Context(), store.CopyParams{From: src, To: dst})
				if err != nil {
					b.Fatal(err)
				}
				rows = rep.Rows()
			}
			b.ReportMetric(float64(rows), "rows/op")
		})
	}
}
