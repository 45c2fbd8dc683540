package sitesearch_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/builtin/sitesearch"
	"github.com/t3agent/t3agent/internal/dbtest"
	"github.com/t3agent/t3agent/internal/demo"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

// BenchmarkSiteRAGQuery asks the demo questions of the ranking test on
// the large demo (10 000 pages, 200 000 content elements), through the
// gate, with ke_search and then indexed_search filled from the site's
// pages, and reports the median call time (p50-ms). The demo is built
// inside the benchmark, so the normal test run never builds it; on
// MariaDB it needs T3AGENT_TEST_MYSQL_DSN.
func BenchmarkSiteRAGQuery(b *testing.B) {
	for _, d := range []typo3.Dialect{typo3.DialectSQLite, typo3.DialectMySQL} {
		b.Run(string(d), func(b *testing.B) {
			if d == typo3.DialectMySQL && os.Getenv("T3AGENT_TEST_MYSQL_DSN") == "" {
				b.Skip("T3AGENT_TEST_MYSQL_DSN is not set")
			}
			// demo.Init directly: the large demo takes longer than
			// demotest allows on a loaded machine.
			p := demo.InitParams{Dir: filepath.Join(b.TempDir(), "demo"), Pages: 10000, Content: 200000, FastHashes: true}
			if d == typo3.DialectMySQL {
				p.SiteDSN = dbtest.MySQL(b)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 45*time.Minute)
			defer cancel()
			res, err := demo.Init(ctx, p)
			if err != nil {
				b.Fatal(err)
			}
			f := newFixture(b, d, res.SiteDSN, res.ProjectRoot, sitesearch.Params{}, tca.Bundled())
			docs := f.siteDocs()
			for _, backend := range []string{"ke_search", "indexed_search"} {
				f.fill(backend, docs)
				b.Run(backend, func(b *testing.B) {
					times := make([]time.Duration, 0, b.N)
					b.ResetTimer()
					for i := range b.N {
						q := demoQuestions[i%len(demoQuestions)]
						start := time.Now()
						res := f.call("site_rag_query", map[string]any{"question": q.text, "language": q.lang})
						times = append(times, time.Since(start))
						if res.IsError {
							b.Fatal(res.Content)
						}
					}
					sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
					b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
				})
			}
		})
	}
}
