package typoscript_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/typoscript"
)

// buildMain builds EXT:demo/main.typoscript with cache and returns the
// flattened setup, the include tree and the findings, everything a
// resolution shows.
func buildMain(t testing.TB, paths dirPaths, root string, cache *typoscript.FileCache, lim typoscript.Limits) string {
	t.Helper()
	b := typoscript.NewBuilder(typoscript.BuildParams{Paths: paths, ProjectRoot: root, Cache: cache, Limits: lim})
	defer b.Close()
	inc, ok := b.File(typoscript.IncludeFile, "EXT:demo/main.typoscript", "EXT:demo/main.typoscript")
	if !ok {
		t.Fatal("main file not found")
	}
	ast := typoscript.BuildAST(inc, typoscript.ASTParams{})
	return flat(ast.Root) + "--\n" + inc.TreeString(nil) + "--\n" + kinds(append(typoscript.Scan(inc, b), ast.Findings...))
}

// touch gives path a new modification time without changing its size.
func touch(t testing.TB, path string, content string, at time.Time) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

// TestFileCacheSeesChanges: a file changed on disk, in size or only in
// modification time, and a file added to an imported directory count from
// the next build; an unchanged cache gives what reading afresh gives.
func TestFileCacheSeesChanges(t *testing.T) {
	t.Parallel()
	paths, root := extFixture(t, map[string]string{
		"main.typoscript":      "@import 'EXT:demo/part.typoscript'\n@import 'EXT:demo/Dir/'\n@import 'EXT:demo/Glob/*.typoscript'\nmain = 1",
		"part.typoscript":      "part = old",
		"Dir/1.typoscript":     "dir1 = 1",
		"Glob/one.typoscript":  "glob1 = 1",
		"Glob/other.txt":       "no = 1",
		"Dir/Sub/x.typoscript": "no = 1",
	})
	cache := typoscript.NewFileCache(typoscript.FileCacheParams{})
	check := func(step string) string {
		t.Helper()
		want := buildMain(t, paths, root, nil, typoscript.Limits{})
		if got := buildMain(t, paths, root, cache, typoscript.Limits{}); got != want {
			t.Fatalf("%s: the cached build differs from reading afresh:\n%s\nwant:\n%s", step, got, want)
		}
		if got := buildMain(t, paths, root, cache, typoscript.Limits{}); got != want {
			t.Fatalf("%s: the second cached build differs:\n%s\nwant:\n%s", step, got, want)
		}
		return want
	}
	if got := check("first"); !strings.HasPrefix(got, "part=old\ndir1=1\nglob1=1\nmain=1\n") {
		t.Fatalf("first build:\n%s", got)
	}
	if cache.Len() < 4 {
		t.Fatalf("the cache holds %d entries after building", cache.Len())
	}
	ext := paths["demo"]
	part := filepath.Join(ext, "part.typoscript")
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	touch(t, part, "part = older", base)
	if got := check("size changed"); !strings.HasPrefix(got, "part=older\n") {
		t.Errorf("a file of a new size was not read again:\n%s", got)
	}
	touch(t, part, "part = newer", base.Add(time.Second))
	if got := check("mtime changed"); !strings.HasPrefix(got, "part=newer\n") {
		t.Errorf("a file of the same size and a new modification time was not read again:\n%s", got)
	}
	writeFiles(t, ext, map[string]string{"Dir/2.typoscript": "dir2 = 1", "Glob/two.typoscript": "glob2 = 1"})
	if got := check("files added"); !strings.Contains(got, "dir1=1\ndir2=1\nglob1=1\nglob2=1\n") {
		t.Errorf("files added to imported directories were not seen:\n%s", got)
	}
	if err := os.Remove(part); err != nil {
		t.Fatal(err)
	}
	if got := check("file removed"); strings.Contains(got, "part=") {
		t.Errorf("a removed file is still served:\n%s", got)
	}
}

// TestFileCacheBounded: the cache never holds more entries or bytes than
// its bounds, and builds through a full cache stay correct.
func TestFileCacheBounded(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	var main strings.Builder
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		files[n+".typoscript"] = n + " = " + strings.Repeat(n, 100)
		main.WriteString("@import 'EXT:demo/" + n + ".typoscript'\n")
	}
	files["main.typoscript"] = main.String()
	paths, root := extFixture(t, files)
	want := buildMain(t, paths, root, nil, typoscript.Limits{})
	for _, p := range []typoscript.FileCacheParams{{MaxEntries: 3}, {MaxBytes: 350}} {
		cache := typoscript.NewFileCache(p)
		for range 3 {
			if got := buildMain(t, paths, root, cache, typoscript.Limits{}); got != want {
				t.Fatalf("%+v: a build through a full cache differs:\n%s", p, got)
			}
			if (p.MaxEntries > 0 && cache.Len() > p.MaxEntries) || (p.MaxBytes > 0 && cache.Bytes() > p.MaxBytes) {
				t.Errorf("%+v: the cache holds %d entries of %d bytes", p, cache.Len(), cache.Bytes())
			}
		}
		if cache.Len() == 0 {
			t.Errorf("%+v: nothing cached", p)
		}
	}
}

// TestFileCacheLineBudget: lines tokenized under one line budget are
// reused only where tokenizing again would give the same lines, so a
// build that runs out of lines reports it as an uncached build does.
func TestFileCacheLineBudget(t *testing.T) {
	t.Parallel()
	paths, root := extFixture(t, map[string]string{
		"main.typoscript": "@import 'EXT:demo/big.typoscript'\n@import 'EXT:demo/big.typoscript'\nend = 1",
		"big.typoscript":  strings.Repeat("a = 1\n", 20),
	})
	cache := typoscript.NewFileCache(typoscript.FileCacheParams{})
	for _, lim := range []typoscript.Limits{{}, {MaxLines: 30}, {MaxLines: 10}, {}, {MaxLines: 30}} {
		want := buildMain(t, paths, root, nil, lim)
		if got := buildMain(t, paths, root, cache, lim); got != want {
			t.Errorf("MaxLines %d: cached build differs:\n%s\nwant:\n%s", lim.MaxLines, got, want)
		}
	}
}

// TestFileCacheConfinement: the cache does not widen what a build may
// read: a symlink leading outside the extension stays unreadable, also
// after the same path held a readable file.
func TestFileCacheConfinement(t *testing.T) {
	t.Parallel()
	paths, root := extFixture(t, map[string]string{"main.typoscript": "@import 'EXT:demo/x.typoscript'\nend = 1", "x.typoscript": "x = inside"})
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"secret.typoscript": "x = secret"})
	cache := typoscript.NewFileCache(typoscript.FileCacheParams{})
	if got := buildMain(t, paths, root, cache, typoscript.Limits{}); !strings.HasPrefix(got, "x=inside\n") {
		t.Fatalf("first build:\n%s", got)
	}
	x := filepath.Join(paths["demo"], "x.typoscript")
	if err := os.Remove(x); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.typoscript"), x); err != nil {
		t.Fatal(err)
	}
	if got := buildMain(t, paths, root, cache, typoscript.Limits{}); strings.Contains(got, "secret") || strings.Contains(got, "inside") {
		t.Errorf("a symlink out of the extension was followed or a stale file served:\n%s", got)
	}
}

// TestFileCacheConcurrent: builds share one cache from many goroutines
// (run with -race) and all give what reading afresh gives.
func TestFileCacheConcurrent(t *testing.T) {
	t.Parallel()
	files := map[string]string{"main.typoscript": "@import 'EXT:demo/Parts/*.typoscript'\nend = 1"}
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		files["Parts/"+n+".typoscript"] = n + " {\n  x = 1\n  y < .x\n}\n"
	}
	paths, root := extFixture(t, files)
	want := buildMain(t, paths, root, nil, typoscript.Limits{})
	cache := typoscript.NewFileCache(typoscript.FileCacheParams{MaxEntries: 4})
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for range 8 {
		wg.Go(func() {
			for range 20 {
				if got := buildMain(t, paths, root, cache, typoscript.Limits{}); got != want {
					errs <- got
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for got := range errs {
		t.Errorf("a concurrent build differs:\n%s\nwant:\n%s", got, want)
	}
}
