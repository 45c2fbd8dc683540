package template_test

import (
	"slices"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/typoscript"
)

// BenchmarkResolveIntroductionPage1 resolves introduction page 1 per
// iteration: the sys_template rows and rootline from SQLite, both frontend
// trees built with conditions, and (frontend+pagets) the Page TSconfig.
// "uncached" reads and tokenizes every bootstrap_package and core file
// each time; "cached" shares a typoscript.FileCache across iterations, as
// the configuration tools do, so a resolution stats each file and reuses
// what is unchanged. p50-ms is the median iteration, which a preempted
// iteration on a shared machine does not move.
func BenchmarkResolveIntroductionPage1(b *testing.B) {
	for _, mode := range []string{"uncached", "cached"} {
		var cache *typoscript.FileCache
		if mode == "cached" {
			cache = typoscript.NewFileCache(typoscript.FileCacheParams{})
		}
		r, _ := introSite(b, cache)
		b.Run(mode+"/frontend", func(b *testing.B) {
			ctx := ctxT(b) // per run: the benchmark may take longer than one context lasts
			loopP50(b, func() {
				fe, err := r.Frontend(ctx, 1)
				if err != nil || len(fe.Setup.Root.Children()) == 0 {
					b.Fatal(err)
				}
			})
		})
		b.Run(mode+"/frontend+pagets", func(b *testing.B) {
			ctx := ctxT(b)
			loopP50(b, func() {
				if _, err := r.Frontend(ctx, 1); err != nil {
					b.Fatal(err)
				}
				if _, err := r.PageTSconfig(ctx, 1); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// loopP50 runs f in b.Loop, reporting allocations and the median
// iteration in milliseconds.
func loopP50(b *testing.B, f func()) {
	b.ReportAllocs()
	var d []time.Duration
	for b.Loop() {
		start := time.Now()
		f()
		d = append(d, time.Since(start))
	}
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Nanoseconds())/1e6, "p50-ms")
}
