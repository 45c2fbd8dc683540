package typoscript_test

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/typoscript"
)

// TestBootstrapPackageParsesCleanly parses every TypoScript and TSconfig
// file of bootstrap_package and the core extensions (with their imports
// resolved) and expects no finding at all.
func TestBootstrapPackageParsesCleanly(t *testing.T) {
	t.Parallel()
	paths, _ := newSharedPaths(t)
	files, lines := 0, 0
	for key, dir := range paths.dirs {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			typ := typoscript.TypeSetup
			base := filepath.Base(p)
			switch {
			case strings.HasSuffix(base, ".tsconfig"):
				typ = typoscript.TypeTSconfig
			case strings.HasSuffix(base, ".typoscript") && strings.Contains(base, "constants"):
				typ = typoscript.TypeConstants
			case strings.HasSuffix(base, ".typoscript"):
			case base == "ext_conf_template.txt":
				typ = typoscript.TypeOther
			default:
				return nil
			}
			rel, _ := filepath.Rel(dir, p)
			ref := "EXT:" + key + "/" + filepath.ToSlash(rel)
			b := typoscript.NewBuilder(typoscript.BuildParams{Type: typ, Paths: paths})
			defer b.Close()
			inc, ok := b.File(typoscript.IncludeFile, ref, ref)
			if !ok {
				t.Errorf("%s could not be read", ref)
				return nil
			}
			files++
			inc.Walk(func(n *typoscript.Include, _ int) bool {
				lines += len(n.Lines)
				return true
			})
			for _, f := range typoscript.Scan(inc, b) {
				t.Errorf("%s: %s", ref, f)
			}
			ast := typoscript.BuildAST(inc, typoscript.ASTParams{})
			for _, f := range ast.Findings {
				t.Errorf("%s: %s", ref, f)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files < 200 || lines < 5000 {
		t.Errorf("only %d files with %d lines parsed; the reference material looks incomplete", files, lines)
	}
}
