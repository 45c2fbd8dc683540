package typoscript_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/typoscript"
)

// dirPaths maps extension keys to real directories.
type dirPaths map[string]string

func (p dirPaths) Path(ref string) (string, error) {
	rest, ok := strings.CutPrefix(ref, "EXT:")
	if !ok {
		return "", fmt.Errorf("not EXT:")
	}
	key, rel, _ := strings.Cut(rest, "/")
	dir, ok := p[key]
	if !ok {
		return "", fmt.Errorf("unknown extension %q", key)
	}
	return filepath.Join(dir, filepath.FromSlash(rel)), nil
}

// writeFiles creates files (slash paths relative to dir).
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func extFixture(t testing.TB, files map[string]string) (dirPaths, string) {
	t.Helper()
	root := t.TempDir()
	ext := filepath.Join(root, "ext")
	writeFiles(t, ext, files)
	return dirPaths{"demo": ext}, root
}

func kinds(fs []typoscript.Finding) string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s:%d:%s", f.Include, f.Line, f.Kind))
	}
	return strings.Join(out, " ")
}

func TestImports(t *testing.T) {
	t.Parallel()
	paths, root := extFixture(t, map[string]string{
		"Main/setup.typoscript": "@import './Part/a.typoscript'\n@import 'Part/b'\n@import '../Part/c.typoscript'\n" +
			"@import 'EXT:demo/Dir/'\n@import 'EXT:demo/Glob/x*.typoscript'\n@import './Glob/y*'\n" +
			"[cond]\n@import 'EXT:demo/Part/d.typoscript'\n[END]\n@import 'EXT:demo/missing.typoscript'\n" +
			"@import 'EXT:other/x.typoscript'\nend = 1",
		"Main/Part/a.typoscript": "a = 1", "Main/Part/b.typoscript": "b = 1", "Main/Part/c.typoscript": "c = 1",
		"Part/d.typoscript": "d = 1",
		"Dir/2.typoscript":  "dir2 = 1", "Dir/1.typoscript": "dir1 = 1", "Dir/3.txt": "no = 1",
		"Dir/Sub/4.typoscript": "no = 1", "Dir/5.php.typoscript": "no = 1",
		"Glob/x1.typoscript": "x1 = 1", "Glob/x2.typoscript": "x2 = 1", "Glob/y.typoscript": "no = 1",
		"Main/Glob/y1.typoscript": "y1 = 1",
	})
	b := typoscript.NewBuilder(typoscript.BuildParams{Paths: paths, ProjectRoot: root})
	defer b.Close()
	inc, ok := b.File(typoscript.IncludeFile, "EXT:demo/Main/setup.typoscript", "EXT:demo/Main/setup.typoscript")
	if !ok {
		t.Fatal("main file not found")
	}
	ast := typoscript.BuildAST(inc, typoscript.ASTParams{Eval: fixedEval{"cond": {Value: true, Decided: true}}})
	if got, want := flat(ast.Root), "a=1\nb=1\nc=1\ndir1=1\ndir2=1\nx1=1\nx2=1\ny1=1\nd=1\nend=1\n"; got != want {
		t.Errorf("imported:\n%s\nwant\n%s", got, want)
	}
	if got, want := kinds(typoscript.Scan(inc, b)),
		"EXT:demo/Main/setup.typoscript:10:import.empty EXT:demo/Main/setup.typoscript:11:import.empty"; got != want {
		t.Errorf("findings %s, want %s", got, want)
	}
	tree := inc.TreeString(nil)
	for _, want := range []string{
		"  AtImportInclude: EXT:demo/Main/Part/a.typoscript\n",
		"  AtImportInclude: EXT:demo/Main/Part/b.typoscript\n",
		"  AtImportInclude: EXT:demo/Dir/1.typoscript\n",
		"  AtImportInclude: EXT:demo/Glob/x1.typoscript\n",
		"  AtImportInclude: EXT:demo/Main/Glob/y1.typoscript\n",
		"  ConditionInclude: EXT:demo/Main/setup.typoscript [cond]\n    AtImportInclude: EXT:demo/Part/d.typoscript\n",
	} {
		if !strings.Contains(tree, want) {
			t.Errorf("include tree lacks %q:\n%s", want, tree)
		}
	}
}

func TestImportCycles(t *testing.T) {
	t.Parallel()
	paths, root := extFixture(t, map[string]string{
		"a.typoscript": "a = 1\n@import 'EXT:demo/b.typoscript'",
		"b.typoscript": "b = 1\n@import 'EXT:demo/a.typoscript'\n@import './b.typoscript'",
	})
	b := typoscript.NewBuilder(typoscript.BuildParams{Paths: paths, ProjectRoot: root})
	defer b.Close()
	inc, _ := b.File(typoscript.IncludeFile, "EXT:demo/a.typoscript", "EXT:demo/a.typoscript")
	if got := flat(typoscript.BuildAST(inc, typoscript.ASTParams{}).Root); got != "a=1\nb=1\n" {
		t.Errorf("tree %s", got)
	}
	got := kinds(typoscript.Scan(inc, b))
	want := "EXT:demo/b.typoscript:2:import.cycle EXT:demo/b.typoscript:3:import.cycle"
	if got != want {
		t.Errorf("findings %s, want %s", got, want)
	}
}

func TestTSconfigImportSuffixes(t *testing.T) {
	t.Parallel()
	paths, root := extFixture(t, map[string]string{
		"Dir/b.typoscript": "b = 1", "Dir/a.tsconfig": "a = 1", "Dir/c.tsconfig": "c = 1",
	})
	b := typoscript.NewBuilder(typoscript.BuildParams{Type: typoscript.TypeTSconfig, Paths: paths, ProjectRoot: root})
	defer b.Close()
	inc := b.String(typoscript.IncludeTsConfig, "pagets", "", "@import 'EXT:demo/Dir/'")
	// TYPO3 looks for .typoscript files first, then .tsconfig ones.
	if got := flat(typoscript.BuildAST(inc, typoscript.ASTParams{}).Root); got != "b=1\na=1\nc=1\n" {
		t.Errorf("got %s", got)
	}
}

func TestIncludeTyposcript(t *testing.T) {
	t.Parallel()
	paths, root := extFixture(t, map[string]string{
		"main.typoscript": "<INCLUDE_TYPOSCRIPT: source=\"FILE:EXT:demo/one.txt\">\n" +
			"<INCLUDE_TYPOSCRIPT: source=\"FILE:./two.ts\" condition=\"[no]\">\n" +
			"<INCLUDE_TYPOSCRIPT: source=\"DIR:EXT:demo/Dir\" extensions=\"typoscript\">\n" +
			"<INCLUDE_TYPOSCRIPT: source=\"FILE:EXT:demo/missing.txt\">",
		"one.txt": "one = 1", "two.ts": "two = 1",
		"Dir/b.typoscript": "b = 1", "Dir/a.txt": "no = 1", "Dir/Sub/c.typoscript": "c = 1",
	})
	b := typoscript.NewBuilder(typoscript.BuildParams{Paths: paths, ProjectRoot: root})
	defer b.Close()
	inc, _ := b.File(typoscript.IncludeFile, "EXT:demo/main.typoscript", "EXT:demo/main.typoscript")
	ast := typoscript.BuildAST(inc, typoscript.ASTParams{Eval: fixedEval{"no": {Decided: true}}})
	if got := flat(ast.Root); got != "one=1\nb=1\nc=1\n" {
		t.Errorf("got %s", got)
	}
	if len(ast.Conditions) != 1 || ast.Conditions[0].Expr != "no" {
		t.Errorf("condition attribute: %+v", ast.Conditions)
	}
	fs := typoscript.Scan(inc, b)
	dep, empty := 0, 0
	for _, f := range fs {
		switch f.Kind {
		case typoscript.KindDeprecated:
			dep++
		case typoscript.KindImportEmpty:
			empty++
			if f.Line != 4 {
				t.Errorf("import.empty on line %d", f.Line)
			}
		}
	}
	if dep != 4 || empty != 1 {
		t.Errorf("findings: %s", kinds(fs))
	}
}

// TestFileConfinement: references cannot leave the extension or the
// project, not even through a symlink.
func TestFileConfinement(t *testing.T) {
	t.Parallel()
	paths, root := extFixture(t, map[string]string{"in.typoscript": "in = 1"})
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"secret.typoscript": "secret = 1"})
	if err := os.Symlink(filepath.Join(outside, "secret.typoscript"), filepath.Join(paths["demo"], "link.typoscript")); err != nil {
		t.Fatal(err)
	}
	b := typoscript.NewBuilder(typoscript.BuildParams{Paths: paths, ProjectRoot: root})
	defer b.Close()
	src := "@import 'EXT:demo/in.typoscript'\n@import 'EXT:demo/../../" + filepath.Base(outside) + "/secret.typoscript'\n" +
		"@import 'EXT:demo/link.typoscript'\n@import '" + filepath.Join(outside, "secret.typoscript") + "'\n" +
		"<INCLUDE_TYPOSCRIPT: source=\"FILE:" + filepath.Join(outside, "secret.typoscript") + "\">"
	inc := b.String(typoscript.IncludeSysTemplate, "t", "", src)
	if got := flat(typoscript.BuildAST(inc, typoscript.ASTParams{}).Root); got != "in=1\n" {
		t.Errorf("escaped confinement: %s", got)
	}
}

func TestScanBraces(t *testing.T) {
	t.Parallel()
	b := typoscript.NewBuilder(typoscript.BuildParams{})
	defer b.Close()
	inc := b.String(typoscript.IncludeSysTemplate, "[sys_template:1] T", "",
		"a {\n b = 1\n}\n}\nc {\n[x]\nd = 1\n}\n[END]\nbroken line\ne {")
	got := kinds(typoscript.Scan(inc, b))
	// Each segment counts its own braces: lines 1-5, the condition body
	// 7-9 and lines 10-11.
	want := "[sys_template:1] T:4:brace.excess [sys_template:1] T:5:brace.missing [sys_template:1] T:8:brace.excess " +
		"[sys_template:1] T:10:line.invalid [sys_template:1] T:11:brace.missing"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	for _, f := range typoscript.Scan(inc, b) {
		if strings.Contains(f.String(), "broken") {
			t.Errorf("finding echoes the line: %s", f)
		}
	}
}

// TestInactiveExtension: EXT: paths of installed but inactive extensions do
// not resolve, as in TYPO3.
func TestInactiveExtension(t *testing.T) {
	t.Parallel()
	paths, root := extFixture(t, map[string]string{"a.typoscript": "a = 1"})
	for _, active := range []bool{true, false} {
		b := typoscript.NewBuilder(typoscript.BuildParams{Paths: paths, ProjectRoot: root,
			Loaded: func(string) bool { return active }})
		inc := b.String(typoscript.IncludeSysTemplate, "t", "", "@import 'EXT:demo/a.typoscript'")
		got := flat(typoscript.BuildAST(inc, typoscript.ASTParams{}).Root)
		empty := hasFinding(typoscript.Scan(inc, b), typoscript.KindImportEmpty, "")
		b.Close()
		if (got == "a=1\n") != active || empty == active {
			t.Errorf("active %v: tree %q, import.empty %v", active, got, empty)
		}
	}
}
