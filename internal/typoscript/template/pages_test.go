package template_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/typoscript"
	"github.com/t3agent/t3agent/internal/typoscript/template"
)

// page is one resolved page: frontend TypoScript and Page TSconfig.
type page struct {
	fe *template.Frontend
	ts *template.TSconfig
}

func resolvePage(t *testing.T, r *template.Resolver, uid int64) page {
	t.Helper()
	ctx := ctxT(t)
	fe, err := r.Frontend(ctx, uid)
	if err != nil {
		t.Fatalf("page %d: %v", uid, err)
	}
	ts, err := r.PageTSconfig(ctx, uid)
	if err != nil {
		t.Fatalf("page %d Page TSconfig: %v", uid, err)
	}
	return page{fe: fe, ts: ts}
}

// dump renders a page for a golden file. Flat values are given in full,
// or, with base, as the difference to the base page (+ added, - removed,
// ~ changed), which keeps the goldens of deeper pages to what differs.
func dump(p page, base *page) string {
	var b strings.Builder
	var uids []string
	for _, r := range p.fe.Rootline {
		uids = append(uids, strconv.FormatInt(r.UID, 10))
	}
	fmt.Fprintf(&b, "# page %d, rootline %s\n", p.fe.PageUID, strings.Join(uids, " > "))
	if p.fe.Site != nil {
		fmt.Fprintf(&b, "site: %s\n", p.fe.Site.Identifier)
	}
	for _, tpl := range p.fe.Templates {
		fmt.Fprintf(&b, "template: [sys_template:%d] %s (root %v, clear %d)\n", tpl.UID, tpl.Title, tpl.Root, tpl.Clear)
	}
	for _, n := range append(p.fe.Notes, p.ts.Notes...) {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	section := func(title string, tree *template.Tree, baseTree *template.Tree) {
		fmt.Fprintf(&b, "\n## %s conditions\n", title)
		for _, c := range tree.Conditions {
			fmt.Fprintf(&b, "[%s] else=%v verdict=%v evaluated=%v in %s", c.Expr, c.Else, c.Verdict, c.Decided, c.In)
			if c.Reason != "" {
				fmt.Fprintf(&b, " (%s)", c.Reason)
			}
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "\n## %s findings\n", title)
		for _, f := range append(append([]typoscript.Finding{}, tree.Syntax...), tree.Findings...) {
			fmt.Fprintf(&b, "%s\n", f)
		}
		fmt.Fprintf(&b, "\n## %s include tree\n%s", title, tree.IncludeTree())
		got := tree.Root.Flatten()
		if baseTree == nil {
			fmt.Fprintf(&b, "\n## %s (%d values)\n", title, len(got))
			for _, kv := range got {
				fmt.Fprintf(&b, "%s = %s\n", kv.Key, quote(kv.Value))
			}
			return
		}
		fmt.Fprintf(&b, "\n## %s (%d values; difference to page %d)\n", title, len(got), base.fe.PageUID)
		want := map[string]string{}
		for _, kv := range baseTree.Root.Flatten() {
			want[kv.Key] = kv.Value
		}
		have := map[string]bool{}
		for _, kv := range got {
			have[kv.Key] = true
			w, ok := want[kv.Key]
			switch {
			case !ok:
				fmt.Fprintf(&b, "+ %s = %s\n", kv.Key, quote(kv.Value))
			case w != kv.Value:
				fmt.Fprintf(&b, "~ %s = %s\n", kv.Key, quote(kv.Value))
			}
		}
		for _, kv := range baseTree.Root.Flatten() {
			if !have[kv.Key] {
				fmt.Fprintf(&b, "- %s\n", kv.Key)
			}
		}
	}
	var bc, bs, bt *template.Tree
	if base != nil {
		bc, bs, bt = &base.fe.Constants, &base.fe.Setup, &base.ts.Tree
	}
	section("constants", &p.fe.Constants, bc)
	section("setup", &p.fe.Setup, bs)
	section("Page TSconfig", &p.ts.Tree, bt)
	return b.String()
}

// quote keeps values on one line.
func quote(v string) string {
	if strings.ContainsAny(v, "\r\n\t") || strings.TrimSpace(v) != v {
		return strconv.Quote(v)
	}
	return v
}

// checkGolden compares got with testdata/golden/name, rewriting it with
// -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if d := diffLines(string(want), got); d != "" {
		t.Errorf("%s differs (run with -update after checking):\n%s", name, d)
	}
}

// value returns a dotted path's value ("<none>" when missing).
func value(n *typoscript.Node, path string) string {
	if c := n.LookupDotted(path); c != nil && c.HasValue {
		return c.Value
	}
	return "<none>"
}

func TestIntroductionDeeperPages(t *testing.T) {
	t.Parallel()
	r, _ := introSite(t, nil)
	base := resolvePage(t, r, 1)
	pages := map[int64]page{}
	for _, uid := range []int64{6, 44, 68, 75, 8} {
		p := resolvePage(t, r, uid)
		pages[uid] = p
		checkGolden(t, fmt.Sprintf("introduction-page-%d.txt", uid), dump(p, &base))
	}
	// Page 68 has the extension template sys_template 1 (root 0, clear 0);
	// its [tree.level === 2] block applies on the pages below it only.
	if got := len(pages[68].fe.Templates); got != 2 {
		t.Errorf("page 68 uses %d templates, want 2", got)
	}
	if v := value(pages[68].fe.Setup.Root, "lib.dynamicContent.10"); v != "<none>" {
		t.Errorf("page 68 lib.dynamicContent.10 = %q; the level-2 override leaked", v)
	}
	if v := value(pages[75].fe.Setup.Root, "lib.dynamicContent.10"); v != "CASE" {
		t.Errorf("page 75 lib.dynamicContent.10 = %q, want CASE", v)
	}
	// The root template's constant for level 0 holds on page 1 only.
	if a, b := value(base.fe.Constants.Root, "page.theme.navigation.style"),
		value(pages[6].fe.Constants.Root, "page.theme.navigation.style"); a != "default-transition" || a == b {
		t.Errorf("navigation style: page 1 %q, page 6 %q", a, b)
	}
	// A translated page resolves as its default-language page (8 → 10).
	if p := pages[8]; p.fe.PageUID != 10 || p.ts.PageUID != 10 {
		t.Errorf("translation resolved as page %d/%d, want 10", p.fe.PageUID, p.ts.PageUID)
	}
	for uid, p := range pages {
		for _, f := range append(append(p.fe.Setup.Syntax, p.fe.Constants.Syntax...), p.ts.Syntax...) {
			t.Errorf("page %d: unexpected finding %s", uid, f)
		}
	}
}

func TestDemoPages(t *testing.T) {
	t.Parallel()
	r, _ := demoSite(t)
	base := resolvePage(t, r, 1)
	checkGolden(t, "demo-page-1.txt", dump(base, nil))
	pages := map[int64]page{}
	for _, uid := range []int64{2, 6, 10, 21} {
		p := resolvePage(t, r, uid)
		pages[uid] = p
		checkGolden(t, fmt.Sprintf("demo-page-%d.txt", uid), dump(p, &base))
	}
	checks := []struct {
		uid        int64
		tree, path string
		want       string
	}{
		// [tree.level == 1] of sys_template 1.
		{1, "setup", "page.bodyTagCObject.value", "<none>"},
		{2, "setup", "page.bodyTagCObject.value", "<body class=\"level-1 has-hero\">"},
		// sys_template 2 on page 5 overrides constants for the section.
		{1, "constants", "site.email", "info@nordlicht-pumps.example"},
		{6, "constants", "site.email", "sales@nordlicht-pumps.example"},
		{6, "setup", "page.10.settings.contactEmail", "sales@nordlicht-pumps.example"},
		{6, "setup", "page.10.settings.section", "products"},
		{1, "setup", "page.10.settings.contactEmail", "info@nordlicht-pumps.example"},
		// Constants do not nest: the constant's value keeps its {$…}.
		{1, "setup", "page.10.settings.logoAlt", "{$site.company}"},
		// [9 in tree.rootLineIds] below Internal pricing.
		{6, "setup", "page.meta.robots", "index,follow"},
		{10, "setup", "page.meta.robots", "noindex,nofollow"},
		{10, "setup", "config.index_enable", "0"},
		// Content rendering of fluid_styled_content plus felogin's plugin.
		{1, "setup", "tt_content.felogin_login.20", "EXTBASEPLUGIN"},
		{1, "setup", "lib.contentElement.templateRootPaths.200", "EXT:site_demo/Resources/Private/Templates/ContentElements/"},
		// Page TSconfig along the rootline and the includes of page 5.
		{1, "pagets", "TCEMAIN.permissions.groupid", "1"},
		{6, "pagets", "TCEMAIN.clearCacheCmd", "6,7,8"},
		{6, "pagets", "TCEMAIN.permissions.groupid", "1"},
		{10, "pagets", "TCEMAIN.permissions.groupid", "4"},
		{6, "pagets", "TCAdefaults.tt_content.imagecols", "2"},
		{1, "pagets", "TCAdefaults.tt_content.imagecols", "<none>"},
		{1, "pagets", "mod.web_layout.tt_content.preview.html", "EXT:site_demo/Resources/Private/Templates/Preview/Html.html"},
		{21, "setup", "page.bodyTagCObject.value", "<none>"},
	}
	pages[1] = base
	for _, c := range checks {
		p := pages[c.uid]
		root := p.fe.Setup.Root
		switch c.tree {
		case "constants":
			root = p.fe.Constants.Root
		case "pagets":
			root = p.ts.Root
		}
		if got := value(root, c.path); got != c.want {
			t.Errorf("page %d %s %s = %q, want %q", c.uid, c.tree, c.path, got, c.want)
		}
	}
	// The application context is not known: that condition is listed as
	// undecided and taken as false.
	found := false
	for _, c := range base.fe.Setup.Conditions {
		if strings.Contains(c.Expr, "applicationContext") {
			found = !c.Decided && !c.Verdict && c.Reason != ""
		}
	}
	if !found || value(base.fe.Setup.Root, "config.debug") != "0" {
		t.Errorf("applicationContext condition: listed %v, config.debug %q", found, value(base.fe.Setup.Root, "config.debug"))
	}
	if p := pages[21]; p.fe.PageUID != 1 {
		t.Errorf("German page 21 resolved as %d, want 1", p.fe.PageUID)
	}
}
