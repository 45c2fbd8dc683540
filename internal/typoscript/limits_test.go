package typoscript_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/typoscript"
)

func hasFinding(fs []typoscript.Finding, kind, detailPart string) bool {
	for _, f := range fs {
		if f.Kind == kind && strings.Contains(f.Detail, detailPart) {
			return true
		}
	}
	return false
}

func TestLimitSourceBytes(t *testing.T) {
	t.Parallel()
	lines := typoscript.Tokenize(strings.Repeat("a = 1\n", 100), typoscript.Limits{MaxSourceBytes: 100})
	if len(lines) != 1 || lines[0].Problem != typoscript.ProblemSourceTooLarge {
		t.Errorf("got %+v", lines)
	}
	paths, root := extFixture(t, map[string]string{"big.typoscript": strings.Repeat("a = 1\n", 100)})
	b := typoscript.NewBuilder(typoscript.BuildParams{Paths: paths, ProjectRoot: root, Limits: typoscript.Limits{MaxSourceBytes: 100}})
	defer b.Close()
	inc := b.String(typoscript.IncludeSysTemplate, "t", "", "@import 'EXT:demo/big.typoscript'")
	if fs := typoscript.Scan(inc, b); !hasFinding(fs, typoscript.KindLimit, "larger than the limit") {
		t.Errorf("findings %s", kinds(fs))
	}
}

func TestLimitTotalBytes(t *testing.T) {
	t.Parallel()
	b := typoscript.NewBuilder(typoscript.BuildParams{Limits: typoscript.Limits{MaxTotalBytes: 10}})
	defer b.Close()
	b.String(typoscript.IncludeSysTemplate, "one", "", "a = 12345")
	second := b.String(typoscript.IncludeSysTemplate, "two", "", "b = 12345")
	if len(second.Lines) != 0 || !hasFinding(b.Findings(), typoscript.KindLimit, "total size") {
		t.Errorf("second source read: %+v %v", second.Lines, b.Findings())
	}
}

// TestLimitValueBytes feeds a 50 MB multi-line value: it is refused
// without being copied. Not parallel: it measures the process's
// allocations, which other tests would add to.
func TestLimitValueBytes(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("a (\n")
	row := strings.Repeat("x", 99) + "\n"
	for sb.Len() < 50<<20 {
		sb.WriteString(row)
	}
	sb.WriteString(")\nb = after\n")
	src := sb.String()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	lines := typoscript.Tokenize(src, typoscript.Limits{})
	runtime.ReadMemStats(&after)
	if len(lines) != 2 || lines[0].Problem != typoscript.ProblemValueTooLarge || lines[1].Value != "after" {
		t.Fatalf("got %d lines, first %+v", len(lines), lines[0])
	}
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 8<<20 {
		t.Errorf("tokenizing allocated %d MB", grown>>20)
	}
	long := "a = " + strings.Repeat("y", 2<<20)
	if l := typoscript.Tokenize(long, typoscript.Limits{}); l[0].Problem != typoscript.ProblemValueTooLarge {
		t.Errorf("long single-line value: %+v", l[0].Kind)
	}
	// Constant substitution and modifiers are held to the same limit.
	consts := map[string]string{"big": strings.Repeat("z", 600)}
	ast := build(t, "x = {$big}{$big}\ny = 1\ny := appendString({$big})\ny := appendString({$big})",
		typoscript.ASTParams{Constants: consts, Limits: typoscript.Limits{MaxValueBytes: 1000}})
	if ast.Root.Child("x").Value != "{$big}{$big}" || len(ast.Root.Child("y").Value) != 601 {
		t.Errorf("values beyond the limit were built")
	}
	if n := len(ast.Findings); n != 2 {
		t.Errorf("want 2 limit findings, got %v", ast.Findings)
	}
}

// TestLimitDepth: 10 000 nested blocks and a 100 000 segment path.
func TestLimitDepth(t *testing.T) {
	t.Parallel()
	src := strings.Repeat("a {\n", 10000) + "deep = 1\n" + strings.Repeat("}\n", 10000) + "top = 1\n" +
		strings.Repeat("p.", 100000) + "x = 1\n"
	ast := build(t, src, typoscript.ASTParams{})
	if ast.Root.Child("top") == nil {
		t.Error("lines after the deep block were lost")
	}
	depth := 0
	for n := ast.Root.Child("a"); n != nil; n = n.Child("a") {
		depth++
	}
	if depth == 0 || depth > typoscript.DefaultLimits().MaxDepth {
		t.Errorf("nesting depth %d", depth)
	}
	if !hasFinding(ast.Findings, typoscript.KindLimit, "deeper") {
		t.Error("no depth finding")
	}
	b := typoscript.NewBuilder(typoscript.BuildParams{})
	defer b.Close()
	if fs := typoscript.Scan(b.String(typoscript.IncludeFile, "f", "", src), b); !hasFinding(fs, typoscript.KindLineInvalid, "deeper") {
		t.Errorf("long path not reported: %s", kinds(fs))
	}
	// Copies cannot grow a tree beyond the limit either.
	copies := "a.b = 1\n" + strings.Repeat("a.b.c < a\n", 300)
	ast = build(t, copies, typoscript.ASTParams{Limits: typoscript.Limits{MaxDepth: 20}})
	if !hasFinding(ast.Findings, typoscript.KindLimit, "deeper") {
		t.Error("copy depth not limited")
	}
}

func TestLimitIncludeDepthAndImports(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 50 {
		files[fmt.Sprintf("f%d.typoscript", i)] = fmt.Sprintf("v%d = 1\n@import 'EXT:demo/f%d.typoscript'", i, i+1)
	}
	files["f50.typoscript"] = "end = 1"
	for i := range 20 {
		files[fmt.Sprintf("Many/%02d.typoscript", i)] = "m = 1"
	}
	paths, root := extFixture(t, files)
	b := typoscript.NewBuilder(typoscript.BuildParams{Paths: paths, ProjectRoot: root, Limits: typoscript.Limits{MaxIncludeDepth: 10}})
	defer b.Close()
	inc := b.String(typoscript.IncludeSysTemplate, "t", "", "@import 'EXT:demo/f0.typoscript'")
	ast := typoscript.BuildAST(inc, typoscript.ASTParams{})
	if ast.Root.Child("v9") == nil || ast.Root.Child("v11") != nil || ast.Root.Child("end") != nil {
		t.Errorf("include depth not limited: %s", flat(ast.Root))
	}
	if !hasFinding(b.Findings(), typoscript.KindLimit, "nested deeper") {
		t.Errorf("findings %v", b.Findings())
	}
	b2 := typoscript.NewBuilder(typoscript.BuildParams{Paths: paths, ProjectRoot: root, Limits: typoscript.Limits{MaxImports: 5}})
	defer b2.Close()
	b2.String(typoscript.IncludeSysTemplate, "t", "", "@import 'EXT:demo/Many/'")
	if !hasFinding(b2.Findings(), typoscript.KindLimit, "more included files") {
		t.Errorf("findings %v", b2.Findings())
	}
}

// TestLimitNodes: a copy bomb doubles a tree with every line.
func TestLimitNodes(t *testing.T) {
	t.Parallel()
	var sb strings.Builder
	sb.WriteString("a.x = 1\n")
	for i := range 64 {
		fmt.Fprintf(&sb, "a.c%d < a\n", i)
	}
	ast := build(t, sb.String(), typoscript.ASTParams{Limits: typoscript.Limits{MaxNodes: 100000}})
	if !hasFinding(ast.Findings, typoscript.KindLimit, "more nodes") {
		t.Error("no node limit finding")
	}
	n := len(ast.Root.Flatten())
	if n == 0 || n > 100000 {
		t.Errorf("%d values", n)
	}
}

// TestLargeBlockUnsets: unsetting every child of a 200 000 child block
// stays linear (each removal used to shift the whole child list).
func TestLargeBlockUnsets(t *testing.T) {
	t.Parallel()
	var sb strings.Builder
	const n = 200000
	for i := range n {
		fmt.Fprintf(&sb, "b.x%d = 1\n", i)
	}
	for i := range n - 1 {
		fmt.Fprintf(&sb, "b.x%d >\n", i)
	}
	start := time.Now()
	ast := build(t, sb.String(), typoscript.ASTParams{})
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("took %v", d)
	}
	if got := flat(ast.Root); got != fmt.Sprintf("b.x%d=1\n", n-1) {
		t.Errorf("got %q", got)
	}
}

func TestLimitLines(t *testing.T) {
	t.Parallel()
	lines := typoscript.Tokenize(strings.Repeat("a = 1\n", 100), typoscript.Limits{MaxLines: 10})
	if len(lines) != 11 || lines[10].Problem != typoscript.ProblemTooManyLines || lines[10].Num != 11 {
		t.Errorf("got %d lines, last %+v", len(lines), lines[len(lines)-1])
	}
	b := typoscript.NewBuilder(typoscript.BuildParams{Limits: typoscript.Limits{MaxLines: 15}})
	defer b.Close()
	first := b.String(typoscript.IncludeSysTemplate, "one", "", strings.Repeat("a = 1\n", 10))
	second := b.String(typoscript.IncludeSysTemplate, "two", "", strings.Repeat("b = 1\n", 10))
	third := b.String(typoscript.IncludeSysTemplate, "three", "", "c = 1")
	if len(first.Lines) != 10 || len(second.Lines) != 6 || len(third.Lines) != 1 || third.Lines[0].Kind != typoscript.LineInvalid {
		t.Errorf("line budget: %d, %d, %+v", len(first.Lines), len(second.Lines), third.Lines)
	}
}
