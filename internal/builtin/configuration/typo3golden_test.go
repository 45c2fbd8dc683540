package configuration_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/guardrail"
)

// TestIntroductionPage1MatchesTYPO3 reads introduction page 1 through the
// tools, as a model would (top-level keys, then every subtree, deeper
// wherever an answer is cut), and compares every value shown with
// TYPO3's own output in testdata/typo3/golden-typoscript/page-1. The
// introduction holds no credentials, so nothing may differ: redaction
// must not hide flags such as showForgotPassword = 0 or the split token
// pagets__. The mandatory secret redaction, which every answer passes on
// its way to a provider, must leave the answers unchanged too.
func TestIntroductionPage1MatchesTYPO3(t *testing.T) {
	t.Parallel()
	f := introFixture(t)
	golden := filepath.Join(f.materialDir(t), "golden-typoscript", "page-1")
	for _, c := range []struct {
		name, tool, typ, file string
	}{
		{"setup", "get_typoscript", "setup", "setup.flat.json"},
		{"constants", "get_typoscript", "constants", "constants.flat.json"},
		{"pagets", "get_tsconfig", "", "pagets.flat.json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := readFlat(t, filepath.Join(golden, c.file))
			cr := &crawl{t: t, f: f, tool: c.tool, typ: c.typ, got: map[string]string{}, asked: map[string]bool{}}
			cr.all(want)
			var diff []string
			for _, k := range slices.Sorted(maps.Keys(want)) {
				g, ok := cr.got[k]
				switch {
				case !ok:
					diff = append(diff, fmt.Sprintf("- missing %s = %q", k, want[k]))
				case g != shown(want[k]):
					diff = append(diff, fmt.Sprintf("~ %s: TYPO3 %q, the tool %q", k, want[k], g))
				}
			}
			for _, k := range slices.Sorted(maps.Keys(cr.got)) {
				if _, ok := want[k]; !ok {
					diff = append(diff, fmt.Sprintf("+ extra %s = %q", k, cr.got[k]))
				}
			}
			if len(diff) > 0 {
				t.Errorf("%s through %s differs from TYPO3 in %d values:\n%s", c.name, c.tool, len(diff), strings.Join(diff, "\n"))
			}
			if cr.calls < 2 {
				t.Errorf("only %d calls", cr.calls)
			}
		})
	}
}

// materialDir is the TYPO3 test material the introduction was imported from.
func (f *fixture) materialDir(t *testing.T) string {
	t.Helper()
	if f.material == "" {
		t.Fatal("the fixture was not built from the introduction")
	}
	return f.material
}

// readFlat reads TYPO3's flattened tree (a JSON object of strings).
func readFlat(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(m) == 0 {
		t.Fatalf("%s is empty; nothing would be compared", path)
	}
	return m
}

// shown is a value as the tools show it: on one line.
func shown(v string) string {
	return strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(v)
}

// crawl collects the flat values of one tree from a tool's answers.
type crawl struct {
	t     *testing.T
	f     *fixture
	tool  string
	typ   string // get_typoscript's type; "" for get_tsconfig
	got   map[string]string
	asked map[string]bool
	calls int
}

func (c *crawl) ask(path string) (body, deeper []string, cut bool) {
	c.t.Helper()
	a := args("pageUid", 1)
	if c.typ != "" {
		a["type"] = c.typ
	}
	if path != "" {
		a["path"] = path
	}
	res := c.f.call("admin", c.tool, a)
	if res.IsError {
		c.t.Fatalf("%s %v: %s", c.tool, a, res.Content)
	}
	out := res.Content
	c.calls++
	c.asked[path] = true
	if red, findings := guardrail.RedactSecrets(out); red != out {
		c.t.Errorf("secret redaction changes the answer to %s %v (%+v):\n%s", c.tool, a, findings, red)
	}
	// Header lines, a blank line, the body, then titled sections.
	parts := strings.Split(out, "\n\n")
	if len(parts) < 2 {
		c.t.Fatalf("%s %v: no body:\n%s", c.tool, a, out)
	}
	for _, l := range strings.Split(parts[1], "\n") {
		if strings.HasPrefix(l, "… ") && strings.Contains(l, "more lines not shown") {
			cut = true
			continue
		}
		body = append(body, l)
	}
	for _, p := range parts[2:] {
		if rest, ok := strings.CutPrefix(p, "Deeper paths to ask for:\n"); ok {
			for _, l := range strings.Split(rest, "\n") {
				// "- … and N more" are found by the last pass of all.
				if d := strings.TrimPrefix(l, "- "); !strings.HasPrefix(d, "… ") {
					deeper = append(deeper, d)
				}
			}
		}
	}
	return body, deeper, cut
}

// all reads the top-level keys and every subtree, then, for every key of
// want not seen yet, the subtree of its shortest path not asked for yet
// (a cut answer names at most 20 deeper paths).
func (c *crawl) all(want map[string]string) {
	top, _, _ := c.ask("")
	if len(top) == 0 || !strings.HasPrefix(top[0], "Top-level keys") {
		c.t.Fatalf("no top-level listing: %q", top)
	}
	for _, l := range top[1:] {
		name, _, _ := strings.Cut(l, " ")
		c.subtree(name)
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		for _, p := range prefixes(k) {
			if _, seen := c.got[k]; seen {
				break
			}
			if !c.asked[p] {
				c.subtree(p)
			}
		}
	}
}

// prefixes lists the paths from the first segment of key to key itself;
// an escaped dot (\.) does not cut.
func prefixes(key string) []string {
	var out []string
	for i := 0; i < len(key); i++ {
		if key[i] == '.' && (i == 0 || key[i-1] != '\\') {
			out = append(out, key[:i])
		}
	}
	return append(out, key)
}

// subtree records what the answer for path shows and follows its cuts.
func (c *crawl) subtree(path string) {
	body, deeper, cut := c.ask(path)
	if c.typ == "constants" {
		for _, l := range body {
			k, v, ok := strings.Cut(l, " = ")
			if ok {
				c.got[k] = v
			}
		}
	} else {
		var stack []string
		for i, l := range body {
			depth := (len(l) - len(strings.TrimLeft(l, " "))) / 2
			l = strings.TrimLeft(l, " ")
			name, rest, _ := strings.Cut(l, " ")
			key := name
			if i > 0 {
				stack = append(stack[:depth-1], name)
				key = path + "." + strings.Join(stack, ".")
			}
			// References (=<) are not values in TYPO3's flat form.
			if v, ok := strings.CutPrefix(rest, "= "); ok {
				c.got[key] = v
			}
		}
	}
	if cut {
		for _, d := range deeper {
			c.subtree(d)
		}
	}
}
