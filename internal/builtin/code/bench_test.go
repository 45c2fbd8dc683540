package code_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/builtin/introspect/introspecttest"
	"github.com/t3agent/t3agent/internal/typo3"
)

// project10k writes a project of 10 000 code files (php, html,
// typoscript, yaml, xlf; about 2 KB each) in 100 folders of 10 packages,
// with "needleInTheHaystack" in 3 of them.
func project10k(b *testing.B) string {
	b.Helper()
	root := b.TempDir()
	exts := []string{".php", ".html", ".typoscript", ".yaml", ".xlf"}
	line := "    $value = $this->renderer->render($data, 'Some/Template', ['key' => 'value']); // filler line\n"
	body := strings.Repeat(line, 2048/len(line))
	for i := range 10000 {
		dir := filepath.Join(root, "packages", fmt.Sprintf("pkg_%d", i%10), "Classes", fmt.Sprintf("Dir%02d", i/100))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		text := body
		if i%3333 == 1 {
			text += "    // needleInTheHaystack\n"
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("File%05d%s", i, exts[i%len(exts)])), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return root
}

// BenchmarkSearchCode10k searches a 10 000-file project (budget: 300 ms).
//
//	go test -run '^$' -bench SearchCode10k -benchtime 20x ./internal/builtin/code
func BenchmarkSearchCode10k(b *testing.B) {
	d := introspecttest.Demo(b, typo3.DialectSQLite, tools)
	site, err := typo3.NewSite(typo3.SiteParams{DB: d.Site.DB, TCA: d.Site.TCA, Root: project10k(b)})
	if err != nil {
		b.Fatal(err)
	}
	f := introspecttest.Over(b, site, d.Demo, tools)
	b.Run("literal", func(b *testing.B) { f.Bench(b, "search_code", map[string]any{"pattern": "needleInTheHaystack"}) })
	b.Run("regex", func(b *testing.B) {
		f.Bench(b, "search_code", map[string]any{"pattern": `needle\w+Hay`, "regex": true})
	})
}
