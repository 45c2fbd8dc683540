package structure_test

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/demo"
	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/typo3"
)

var treeLine = regexp.MustCompile(`^( *)\[(\d+)\] .* \(doktype \d+\)( \[(hidden|not yet visible|expired)\])*$`)

// treeUIDs reads the page uids of a get_page_tree answer, checking every
// line's shape and that indentation grows by at most one level.
func treeUIDs(t *testing.T, out string) []int64 {
	t.Helper()
	var uids []int64
	prev := -1
	for i, l := range lines(out) {
		if i == 0 || strings.HasPrefix(l, "…") {
			continue
		}
		m := treeLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("line %d is not a tree line: %q", i, l)
		}
		level := len(m[1]) / 2
		if len(m[1])%2 != 0 || level > prev+1 {
			t.Fatalf("line %d is indented wrongly: %q", i, l)
		}
		prev = level
		uid, _ := strconv.ParseInt(m[2], 10, 64)
		uids = append(uids, uid)
	}
	return uids
}

// TestPageTreeDemo runs on SQLite and MariaDB with the same golden files:
// the tree is the same data on every dialect.
func TestPageTreeDemo(t *testing.T) {
	t.Parallel()
	for _, d := range []typo3.Dialect{typo3.DialectSQLite, typo3.DialectMySQL} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			site, _ := demoSite(t, d)
			f := newFixture(t, site, demoUsers()...)

			admin := f.ok("admin", "get_page_tree", `{"depth":2}`)
			golden(t, "demo_page_tree_admin", admin)
			uids := treeUIDs(t, admin)
			// Deleted 11, translations 21–25; hidden 7, future 8 and
			// expired 12 are a level deeper.
			for _, never := range []int64{7, 8, 11, 12, 21, 22, 23, 24, 25} {
				if slices.Contains(uids, never) {
					t.Errorf("admin tree shows page %d", never)
				}
			}
			for _, want := range []int64{1, 2, 5, 13, 16, 17, 18, 19, 20} {
				if !slices.Contains(uids, want) {
					t.Errorf("admin tree lacks page %d", want)
				}
			}
			if got := f.ok("admin", "get_page_tree", `{"rootUid":0,"depth":2}`); got != admin {
				t.Error("explicit defaults differ from implicit ones")
			}

			// Admins see hidden and timed pages, marked as get_page_content
			// marks them; editors do not see them at all.
			below5 := f.ok("admin", "get_page_tree", `{"rootUid":5,"depth":1}`)
			for _, want := range []string{"\n[7] Product B (doktype 1) [hidden]\n", "\n[8] Product C (doktype 1) [not yet visible]\n",
				"\n[12] Seasonal offer (doktype 1) [expired]"} {
				if !strings.Contains(below5, want) {
					t.Errorf("admin below 5 lacks %q:\n%s", want, below5)
				}
			}
			if eu := treeUIDs(t, f.ok("editor", "get_page_tree", `{"rootUid":5,"depth":1}`)); slices.Contains(eu, 7) ||
				slices.Contains(eu, 8) || slices.Contains(eu, 12) || !slices.Contains(eu, 6) {
				t.Errorf("editor below 5: %v", eu)
			}

			// The editor's web mount is page 5; 9 (Management's group) and
			// 10 below it are not showable.
			editor := f.ok("editor", "get_page_tree", `{}`)
			golden(t, "demo_page_tree_editor", editor)
			eu := treeUIDs(t, editor)
			if len(eu) == 0 || eu[0] != 5 || slices.Contains(eu, 9) || slices.Contains(eu, 10) || slices.Contains(eu, 1) {
				t.Errorf("editor tree: %v", eu)
			}
			if got := f.ok("editor", "get_page_tree", `{"rootUid":5,"depth":1}`); !strings.HasPrefix(got, "Pages below [5] Products, depth 1:\n[6] Product A (doktype 1)") {
				t.Errorf("editor below 5:\n%s", got)
			}
			for _, root := range []int{1, 2, 9, 10, 13, 11, 999999} {
				if got := f.refused("editor", "get_page_tree", `{"rootUid":`+strconv.Itoa(root)+`}`); got != readpolicy.DeniedPage {
					t.Errorf("editor rootUid %d: %q", root, got)
				}
			}

			// The intern reaches pages through News readers' mount 13; 15
			// by the everybody bits.
			intern := f.ok("intern", "get_page_tree", `{"depth":2}`)
			golden(t, "demo_page_tree_intern", intern)
			if iu := treeUIDs(t, intern); len(iu) < 3 || iu[0] != 13 || !slices.Contains(iu, 14) || !slices.Contains(iu, 15) || slices.Contains(iu, 5) {
				t.Errorf("intern tree: %v", iu)
			}

			for _, root := range []int{11, 999999} {
				if got := f.refused("admin", "get_page_tree", `{"rootUid":`+strconv.Itoa(root)+`}`); got != readpolicy.DeniedPage {
					t.Errorf("admin rootUid %d: %q", root, got)
				}
			}
			// An admin may start at a hidden page.
			if got := f.ok("admin", "get_page_tree", `{"rootUid":7}`); got != "Pages below [7] Product B, depth 3:\nNo visible pages." {
				t.Errorf("hidden root: %q", got)
			}
			if got := f.refused("former", "get_page_tree", `{}`); got != readpolicy.DeniedUser {
				t.Errorf("former: %q", got)
			}
			for _, bad := range []string{`{"depth":6}`, `{"depth":0}`, `{"rootUid":-1}`, `{"rootUid":"1"}`, `{"depth":2.5}`, `{"root":1}`} {
				if got := f.refused("admin", "get_page_tree", bad); !strings.Contains(got, "invalid arguments") {
					t.Errorf("%s: %q", bad, got)
				}
			}
		})
	}
}

// TestPageTreeCap: a large tree is cut at 200 pages, in depth-first order.
func TestPageTreeCap(t *testing.T) {
	t.Parallel()
	site, _ := demoSiteWith(t, typo3.DialectSQLite, demo.InitParams{Pages: 600, Content: 50}, demoTCA())
	f := newFixture(t, site, "admin", "editor")
	out := f.ok("admin", "get_page_tree", `{"depth":5}`)
	uids := treeUIDs(t, out)
	if len(uids) != 200 || !strings.HasSuffix(out, "… cut at 200 pages; call again with a deeper rootUid or a smaller depth.") {
		t.Errorf("%d pages, ending %q", len(uids), out[max(0, len(out)-100):])
	}
	if uids[0] != 1 || uids[1] != 2 || uids[2] != 3 {
		t.Errorf("not depth first: %v", uids[:5])
	}
	seen := map[int64]bool{}
	for _, u := range uids {
		if seen[u] {
			t.Errorf("page %d listed twice", u)
		}
		seen[u] = true
	}
	small := f.ok("editor", "get_page_tree", `{"rootUid":6,"depth":1}`)
	if n := len(treeUIDs(t, small)); n == 0 || n > 200 {
		t.Errorf("editor below 6: %d pages", n)
	}
}

func TestPageTreeIntroduction(t *testing.T) {
	t.Parallel()
	site, _ := introSite(t, typo3.DialectSQLite)
	f := newFixture(t, site, "admin", "editor")
	admin := f.ok("admin", "get_page_tree", `{"depth":2}`)
	golden(t, "intro_page_tree_admin", admin)
	// Simple editors are mounted on page 1, the site root.
	editor := f.ok("editor", "get_page_tree", `{"depth":3}`)
	if eu := treeUIDs(t, editor); len(eu) == 0 || eu[0] != 1 {
		t.Errorf("editor tree: %v\n%s", eu, editor)
	}
	if got := f.refused("", "get_page_tree", `{}`); got != readpolicy.DeniedUser {
		t.Errorf("no user: %q", got)
	}
}
