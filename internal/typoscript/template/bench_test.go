package template_test

import (
	"testing"
)

// BenchmarkResolveIntroductionPage1 parses and resolves introduction page 1
// from scratch per iteration: the sys_template rows and rootline from
// SQLite, every bootstrap_package and core file read and tokenized, both
// frontend trees built with conditions, and the Page TSconfig.
func BenchmarkResolveIntroductionPage1(b *testing.B) {
	r, _ := introSite(b)
	ctx := ctxT(b)
	b.Run("frontend", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			fe, err := r.Frontend(ctx, 1)
			if err != nil || len(fe.Setup.Root.Children()) == 0 {
				b.Fatal(err)
			}
		}
	})
	b.Run("frontend+pagets", func(b *testing.B) {
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
