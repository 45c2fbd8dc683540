package configuration_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/typo3/extpath"
	"github.com/t3agent/t3agent/internal/typoscript"
	"github.com/t3agent/t3agent/internal/typoscript/template"
)

// body returns the lines between the header and the first section after
// it: the rendered keys or subtree.
func body(t *testing.T, out string) []string {
	t.Helper()
	parts := strings.SplitN(out, "\n\n", 3)
	if len(parts) < 2 {
		t.Fatalf("no body in:\n%s", out)
	}
	return strings.Split(strings.TrimRight(parts[1], "\n"), "\n")
}

var topLine = regexp.MustCompile(`^[^ ]+( =<? .*)?( \(\+\d+ child(ren)?(; set in .+:\d+)?\)| \(set in .+:\d+\))?$`)

func TestCaps(t *testing.T) {
	t.Parallel()
	f := introFixture(t)
	header := regexp.MustCompile(`Top-level keys \((\d+)\)`)

	// Without a path: the top-level keys only, each on one unindented line.
	for _, c := range []struct{ tool, typ string }{
		{"get_typoscript", "setup"}, {"get_typoscript", "constants"}, {"get_tsconfig", ""},
	} {
		a := args("pageUid", 1)
		if c.typ != "" {
			a["type"] = c.typ
		}
		out := f.ok(c.tool, a)
		lines := body(t, out)
		m := header.FindStringSubmatch(lines[0])
		if m == nil {
			t.Fatalf("%s %s: no key count:\n%s", c.tool, c.typ, out)
		}
		keys := lines[1:]
		if n, _ := strconv.Atoi(m[1]); n != len(keys) || n == 0 {
			t.Errorf("%s %s: %s keys announced, %d shown", c.tool, c.typ, m[1], len(keys))
		}
		for _, l := range keys {
			if !topLine.MatchString(l) {
				t.Errorf("%s %s: not a top-level line: %q", c.tool, c.typ, l)
			}
		}
	}
	top := f.ok("get_typoscript", args("pageUid", 1))
	if !strings.Contains(top+"\n", "\npage = PAGE (+10 children; set in EXT:bootstrap_package/Configuration/TypoScript/General/page.typoscript:1)\n") ||
		strings.Contains(top, "FLUIDTEMPLATE") {
		t.Errorf("top-level setup:\n%s", top)
	}

	// With a path: at most 300 lines, the cut marked, deeper paths named.
	out := f.ok("get_typoscript", args("pageUid", 1, "path", "lib.contentElement"))
	lines := body(t, out)
	marker := lines[len(lines)-1]
	shown := lines[:len(lines)-1]
	m := regexp.MustCompile(`^… (\d+) more lines not shown \(an answer holds at most 300 lines or 40 kB\); ask for a deeper path\.$`).FindStringSubmatch(marker)
	if len(shown) != 300 || m == nil || shown[0] != "lib.contentElement = FLUIDTEMPLATE" {
		t.Fatalf("cut subtree: %d lines, marker %q", len(shown), marker)
	}
	// What was cut is counted: shown and cut lines add up to the nodes of
	// the subtree, counted on the engine's own tree.
	if n, _ := strconv.Atoi(m[1]); n+300 != subtreeSize(t, f, 1, "lib.contentElement") {
		t.Errorf("%d lines cut, the subtree has %d nodes", n, subtreeSize(t, f, 1, "lib.contentElement"))
	}
	if !strings.Contains(out, "\nDeeper paths to ask for:\n") || !strings.Contains(out, "\n- lib.contentElement.settings\n") {
		t.Errorf("no deeper paths:\n%s", out)
	}
	// A deeper path fits and carries no marker.
	small := f.ok("get_typoscript", args("pageUid", 1, "path", "lib.contentElement.settings.header"))
	if strings.Contains(small, "more lines not shown") || !strings.Contains(small, "\n  defaultHeaderType = 2\n") {
		t.Errorf("small subtree:\n%s", small)
	}
	// Constants with a path: flat keys, the same cap.
	flat := body(t, f.ok("get_typoscript", args("pageUid", 1, "type", "constants", "path", "page")))
	if len(flat) > 301 || !strings.HasPrefix(flat[0], "page.") {
		t.Errorf("flat constants: %d lines, first %q", len(flat), flat[0])
	}
	for _, l := range flat[:len(flat)-1] {
		if !strings.HasPrefix(l, "page.") || !strings.Contains(l, " = ") {
			t.Errorf("flat constants line %q", l)
		}
	}
}

// subtreeSize counts the nodes at and below path in the setup of a page,
// resolved by the engine directly.
func subtreeSize(t *testing.T, f *fixture, uid int64, path string) int {
	t.Helper()
	m, err := extpath.Resolve(f.site.Root)
	if err != nil {
		t.Fatal(err)
	}
	r, err := template.New(template.Params{Source: template.NewSiteSource(f.site), Paths: m,
		Extensions: template.OrderExtensions(m.Keys()), ProjectRoot: f.site.Root})
	if err != nil {
		t.Fatal(err)
	}
	fe, err := r.Frontend(context.Background(), uid)
	if err != nil {
		t.Fatal(err)
	}
	n := fe.Setup.Root.LookupDotted(path)
	if n == nil {
		t.Fatalf("no %s", path)
	}
	var count func(n *typoscript.Node) int
	count = func(n *typoscript.Node) int {
		k := 1
		for _, c := range n.Children() {
			k += count(c)
		}
		return k
	}
	return count(n)
}

// TestLongValue: one value never takes more than 500 characters, and a
// multi-line value stays on its line.
func TestLongValue(t *testing.T) {
	t.Parallel()
	f := demoFixture(t)
	var values strings.Builder
	for i := range 200 {
		fmt.Fprintf(&values, "lib.many.%d = %s\n", i, strings.Repeat("y", 400))
	}
	f.appendField("sys_template", "config", 1, "lib.long = "+strings.Repeat("x", 2000)+
		"\nlib.multi (\nfirst line\nsecond line\n)\n"+values.String()+
		"[request.getQueryParams()['late'] == 1]\nlib.late = 1\n[END]")
	out := f.ok("get_typoscript", args("pageUid", 1, "path", "lib"))
	if !strings.Contains(out, "\n  long = "+strings.Repeat("x", 500)+"… (1500 more characters)\n") {
		t.Errorf("long value not cut:\n%.2000s", out)
	}
	if !strings.Contains(out, `  multi = first line\nsecond line`+"\n") {
		t.Errorf("multi-line value:\n%s", out)
	}
	// 200 long values exceed the byte budget before the line cap: the body
	// is cut, and the sections after it still arrive whole.
	many := f.ok("get_typoscript", args("pageUid", 1, "path", "lib.many"))
	lines := body(t, many)
	if len(many) > 50000 || len(lines) >= 200 || !strings.HasPrefix(lines[len(lines)-1], "… ") ||
		!strings.Contains(many, "- [request.getQueryParams()['late'] == 1] at [sys_template:1] Nordlicht Pumps:") {
		t.Errorf("byte budget: %d bytes, %d lines:\n%.600s", len(many), len(lines), many)
	}
}
