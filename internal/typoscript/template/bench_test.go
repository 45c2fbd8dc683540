package template_test

import (
	"testing"

	"github.com/t3agent/t3agent/internal/typoscript"
)

// BenchmarkResolveIntroductionPage1 resolves introduction page 1 per
// iteration: the sys_template rows and rootline from SQLite, both frontend
// trees built with conditions, and (frontend+pagets) the Page TSconfig.
// "uncached" reads and tokenizes every bootstrap_package and core file
// each time; "cached" shares a typoscript.FileCache across iterations, as
// the configuration tools do, so a resolution stats each file and reuses
// what is unchanged.
func BenchmarkResolveIntroductionPage1(b *testing.B) {
	ctx := ctxT(b)
	for _, mode := range []string{"uncached", "cached"} {
		var cache *typoscript.FileCache
		if mode == "cached" {
			cache = typoscript.NewFileCache(typoscript.FileCacheParams{})
		}
		r, _ := introSite(b, cache)
		b.Run(mode+"/frontend", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				fe, err := r.Frontend(ctx, 1)
				if err != nil || len(fe.Setup.Root.Children()) == 0 {
					b.Fatal(err)
				}
			}
		})
		b.Run(mode+"/frontend+pagets", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.Frontend(ctx, 1); err != nil {
					b.Fatal(err)
				}
				if _, err := r.PageTSconfig(ctx, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
