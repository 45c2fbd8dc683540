package typoscript_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/dbtest"
	"github.com/t3agent/t3agent/internal/typoscript"
)

// addSeeds adds the real TypoScript and TSconfig files of the reference
// material plus hostile shapes to a fuzz corpus.
func addSeeds(f *testing.F, add func(src string)) {
	shared := dbtest.TYPO3Material(f)
	for _, dir := range []string{"bootstrap_package", "core-extensions", "default-typoscript"} {
		err := filepath.WalkDir(filepath.Join(shared, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if !strings.HasSuffix(p, ".typoscript") && !strings.HasSuffix(p, ".tsconfig") {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			add(string(b))
			return nil
		})
		if err != nil {
			f.Fatal(err)
		}
	}
	for _, s := range []string{
		strings.Repeat("a {\n", 200) + strings.Repeat("}\n", 199),
		"a (\n" + strings.Repeat("x\n", 100),
		"a.b = 1\nc < a\nc.d < c\nc.e < c\n",
		"[tree.level == (1 + (2 * (3)))]\nx = 1\n[ELSE]\ny = 2\n[END]",
		"x := sortList(numeric)\nx := removeString()\nx := replaceString(|)",
		"@import '*'\n@import './../*'\n<INCLUDE_TYPOSCRIPT: source=\"DIR:./\">",
		"/*\n", "{$", "x = {$a ?? $b ?? }", "\r\n\r\n", "\\.\\.\\. = 1", "a =< .b\nc < .",
	} {
		add(s)
	}
}

var fuzzLimits = typoscript.Limits{MaxValueBytes: 64 << 10, MaxNodes: 50000, MaxDepth: 64, MaxOutputLines: 50}

func FuzzTokenize(f *testing.F) {
	addSeeds(f, func(s string) { f.Add(s) })
	f.Fuzz(func(t *testing.T, src string) {
		lines := typoscript.Tokenize(src, fuzzLimits)
		physical := strings.Count(src, "\n") + 1
		last := 0
		for _, l := range lines {
			if l.Num < last || l.Num < 1 || l.Num > physical {
				t.Fatalf("line number %d after %d (of %d lines)", l.Num, last, physical)
			}
			last = l.Num
			if len(l.Value) > fuzzLimits.MaxValueBytes && l.Kind == typoscript.LineAssign {
				t.Fatalf("value of %d bytes passed the limit", len(l.Value))
			}
			if l.Kind == typoscript.LineInvalid && l.Problem == "" {
				t.Fatal("invalid line without a problem")
			}
			if len(l.Path) > fuzzLimits.MaxDepth {
				t.Fatalf("path of %d segments passed the limit", len(l.Path))
			}
		}
	})
}

func FuzzParse(f *testing.F) {
	addSeeds(f, func(s string) { f.Add(s) })
	env := testEnv()
	env.Limits = fuzzLimits
	f.Fuzz(func(t *testing.T, src string) {
		b := typoscript.NewBuilder(typoscript.BuildParams{Limits: fuzzLimits})
		defer b.Close()
		inc := b.String(typoscript.IncludeSysTemplate, "fuzz", "", src)
		findings := typoscript.Scan(inc, b)
		for _, fd := range findings {
			if fd.Line < 0 || fd.Kind == "" {
				t.Fatalf("bad finding %+v", fd)
			}
		}
		ast := typoscript.BuildAST(inc, typoscript.ASTParams{Eval: env, Limits: fuzzLimits})
		var depth func(n *typoscript.Node) int
		depth = func(n *typoscript.Node) int {
			d := 0
			for _, c := range n.Children() {
				d = max(d, depth(c)+1)
			}
			return d
		}
		if d := depth(ast.Root); d > fuzzLimits.MaxDepth {
			t.Fatalf("tree depth %d passed the limit", d)
		}
		if n := len(ast.Root.Flatten()); n > fuzzLimits.MaxNodes {
			t.Fatalf("%d values passed the node limit", n)
		}
		r := typoscript.Render(ast.Root, typoscript.RenderParams{MaxLines: fuzzLimits.MaxOutputLines, Redact: true})
		if strings.Count(r.Text, "\n") > fuzzLimits.MaxOutputLines+1 {
			t.Fatal("render passed the line limit")
		}
		_ = inc.TreeString(ast.Shown)
		_ = ast.Root.Array()
	})
}

func FuzzConstants(f *testing.F) {
	addSeeds(f, func(s string) { f.Add(s, "x = {$page.theme.cookieconsent.enable}{$a ?? $b}") })
	f.Add("a = {$b}\nb = {$a}", "x = {$a}{$b}")
	f.Fuzz(func(t *testing.T, constants, setup string) {
		b := typoscript.NewBuilder(typoscript.BuildParams{Type: typoscript.TypeConstants, Limits: fuzzLimits})
		defer b.Close()
		consts := typoscript.BuildAST(b.String(typoscript.IncludeSysTemplate, "c", "", constants),
			typoscript.ASTParams{Limits: fuzzLimits}).Root.FlatMap()
		sb := typoscript.NewBuilder(typoscript.BuildParams{Limits: fuzzLimits})
		defer sb.Close()
		ast := typoscript.BuildAST(sb.String(typoscript.IncludeSysTemplate, "s", "", setup),
			typoscript.ASTParams{Constants: consts, Limits: fuzzLimits})
		for _, kv := range ast.Root.Flatten() {
			if len(kv.Value) > fuzzLimits.MaxValueBytes {
				t.Fatalf("value of %d bytes passed the limit", len(kv.Value))
			}
		}
		// Without "{$" substitution changes nothing.
		if !strings.Contains(setup, "{$") {
			plain := typoscript.BuildAST(sb.String(typoscript.IncludeSysTemplate, "p", "", setup),
				typoscript.ASTParams{Limits: fuzzLimits})
			a, b := ast.Root.Flatten(), plain.Root.Flatten()
			if len(a) != len(b) {
				t.Fatalf("constants changed a setup without constants: %d vs %d values", len(a), len(b))
			}
			for i := range a {
				if a[i] != b[i] {
					t.Fatalf("constants changed %s", a[i].Key)
				}
			}
		}
	})
}
