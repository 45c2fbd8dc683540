package demo

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
)

func benchmarkInit(b *testing.B, pages, content int) {
	ctx := context.Background()
	base := b.TempDir()
	n := 0
	for b.Loop() {
		n++
		p := InitParams{Dir: filepath.Join(base, strconv.Itoa(n)), Pages: pages, Content: content, FastHashes: true}
		if _, err := Init(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInit200k is the size the spec's speed target names: 10,000
// pages and 200,000 content elements on SQLite.
func BenchmarkInit200k(b *testing.B) { benchmarkInit(b, 10000, 200000) }

// BenchmarkInitDefault is the default demo (60 pages, 300 content).
func BenchmarkInitDefault(b *testing.B) { benchmarkInit(b, DefaultPages, DefaultContent) }
