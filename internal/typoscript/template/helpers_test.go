package template_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/dbtest"
	"github.com/t3agent/t3agent/internal/demo/demotest"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/extpath"
	"github.com/t3agent/t3agent/internal/typo3/tca"
	"github.com/t3agent/t3agent/internal/typoscript"
	"github.com/t3agent/t3agent/internal/typoscript/template"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current output")

// sharedPaths resolves EXT:bootstrap_package to the shared copy of
// bootstrap_package and EXT:<core ext> to testdata/typo3/core-extensions; an
// optional fallback (the demo's own installation) is asked first. A real
// resolver over real folders.
type sharedPaths struct {
	dirs     map[string]string
	fallback typoscript.ExtensionPaths
}

func (p sharedPaths) Path(ref string) (string, error) {
	rest, ok := strings.CutPrefix(ref, "EXT:")
	if !ok {
		return "", fmt.Errorf("%q is not an EXT: reference", ref)
	}
	key, rel, _ := strings.Cut(rest, "/")
	if p.fallback != nil {
		// The installation's own folder wins when it exists; the demo lists
		// core packages it does not ship.
		if dir, err := p.fallback.Path("EXT:" + key); err == nil {
			if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
				return p.fallback.Path(ref)
			}
		}
	}
	dir, ok := p.dirs[key]
	if !ok {
		return "", fmt.Errorf("extension %q is not installed", key)
	}
	return filepath.Join(dir, filepath.FromSlash(rel)), nil
}

func newSharedPaths(t testing.TB) (sharedPaths, string) {
	t.Helper()
	shared := dbtest.TYPO3Material(t)
	p := sharedPaths{dirs: map[string]string{"bootstrap_package": filepath.Join(shared, "bootstrap_package")}}
	ents, err := os.ReadDir(filepath.Join(shared, "core-extensions"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		p.dirs[e.Name()] = filepath.Join(shared, "core-extensions", e.Name())
	}
	return p, shared
}

// introExtensions is the extension set the goldens were produced with, in
// that profile's load order (FACTS.md, tca-introduction.json).
var introExtensions = []string{"core", "backend", "frontend", "extbase", "seo", "felogin", "filemetadata", "form",
	"impexp", "indexed_search", "bootstrap_package"}

var fixedNow = func() time.Time { return time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC) }

// introSite imports the introduction package into SQLite and returns a
// resolver over it with the introduction's site configuration, reading
// files through cache (nil: none).
func introSite(t testing.TB, cache *typoscript.FileCache) (*template.Resolver, *typo3.Site) {
	t.Helper()
	in := demotest.Introduction(t, typo3.DialectSQLite)
	paths, shared := newSharedPaths(t)
	f, err := os.Open(filepath.Join(shared, "tca-introduction.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tc, err := tca.LoadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	site, err := typo3.NewSite(typo3.SiteParams{DB: in.Open(t), TCA: tc, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	cfg, err := os.ReadFile(filepath.Join(shared, "introduction", "Initialisation", "Site", "introduction", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	siteDir := filepath.Join(root, "config", "sites", "introduction")
	if err := os.MkdirAll(siteDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(siteDir, "config.yaml"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := template.New(template.Params{
		Source: template.NewSiteSource(site), Paths: paths, Extensions: introExtensions, ProjectRoot: root, Cache: cache,
	})
	if err != nil {
		t.Fatal(err)
	}
	return r, site
}

// ordered reads a JSON object keeping its key order.
func ordered(t testing.TB, path string) []typoscript.KV {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("%s: not a JSON object", path)
	}
	var out []typoscript.KV
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var v string
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, typoscript.KV{Key: k.(string), Value: v})
	}
	return out
}

// diffKV compares two ordered flat lists completely and returns a readable
// report: missing and extra keys, different values, then order.
func diffKV(want, got []typoscript.KV) string {
	if len(want) == 0 {
		return "the golden has no entries; nothing would be compared"
	}
	wm, gm := map[string]string{}, map[string]string{}
	for _, e := range want {
		wm[e.Key] = e.Value
	}
	for _, e := range got {
		gm[e.Key] = e.Value
	}
	var b strings.Builder
	const maxLines = 60
	n := 0
	line := func(format string, a ...any) {
		if n < maxLines {
			fmt.Fprintf(&b, format+"\n", a...)
		}
		n++
	}
	for _, e := range want {
		g, ok := gm[e.Key]
		switch {
		case !ok:
			line("- missing  %s = %q", e.Key, e.Value)
		case g != e.Value:
			line("~ value    %s: want %q, got %q", e.Key, e.Value, g)
		}
	}
	for _, e := range got {
		if _, ok := wm[e.Key]; !ok {
			line("+ extra    %s = %q", e.Key, e.Value)
		}
	}
	if n == 0 && len(want) == len(got) {
		for i := range want {
			if want[i].Key != got[i].Key {
				line("order differs at entry %d: want %s, got %s", i, want[i].Key, got[i].Key)
				break
			}
		}
	}
	if n > maxLines {
		fmt.Fprintf(&b, "… %d more differences\n", n-maxLines)
	}
	if n > 0 {
		fmt.Fprintf(&b, "(%d entries wanted, %d got)", len(want), len(got))
	}
	return b.String()
}

// diffLines compares two texts line by line and reports the first
// differences.
func diffLines(want, got string) string {
	w, g := strings.Split(strings.TrimRight(want, "\n"), "\n"), strings.Split(strings.TrimRight(got, "\n"), "\n")
	var b strings.Builder
	n := 0
	for i := 0; i < max(len(w), len(g)) && n < 20; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  want %q\n  got  %q\n", i+1, wl, gl)
			n++
		}
	}
	if n > 0 {
		fmt.Fprintf(&b, "(%d lines wanted, %d got)", len(w), len(g))
	}
	return b.String()
}

func ctxT(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// demoSite builds the generated demo (docs/demo-site.md) and a resolver
// over it: its own installation for site_demo, the shared core extension
// files for the core packages it lists but does not ship.
func demoSite(t testing.TB) (*template.Resolver, *demotest.Site) {
	t.Helper()
	d := demotest.New(t, typo3.DialectSQLite)
	m, err := extpath.Resolve(d.Root)
	if err != nil {
		t.Fatal(err)
	}
	paths, _ := newSharedPaths(t)
	paths.fallback = m
	site, err := typo3.NewSite(typo3.SiteParams{DB: d.Open(t), TCA: tca.Bundled(), Root: d.Root, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	r, err := template.New(template.Params{
		Source: template.NewSiteSource(site), Paths: paths, Extensions: template.OrderExtensions(m.Keys()),
		ProjectRoot: d.Root,
	})
	if err != nil {
		t.Fatal(err)
	}
	return r, d
}
