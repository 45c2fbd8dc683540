package tca

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/dbtest"
)

func introJSONPath(t testing.TB) string {
	return filepath.Join(dbtest.TYPO3Material(t), "tca-introduction.json")
}

// TestCacheFixtureEqualsJSONExport is README point 3: the cache file and
// the JSON of the same TCA must be the same data.
func TestCacheFixtureEqualsJSONExport(t *testing.T) {
	t.Parallel()
	v, err := ParsePHPReturn(readFixture(t))
	if err != nil {
		t.Fatal(err)
	}
	fromPHP := v.(*Array).Array("tca")
	if fromPHP.Len() != 24 {
		t.Fatalf("fixture has %d tables, want 24", fromPHP.Len())
	}
	raw, err := os.ReadFile(introJSONPath(t))
	if err != nil {
		t.Fatal(err)
	}

	t.Run("ordered generic values", func(t *testing.T) {
		fromJSON, err := DecodeJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		if d := firstDiff(fromPHP, fromJSON, ""); d != "" {
			t.Fatalf("cache and JSON differ: %s", d)
		}
	})

	t.Run("plain values against encoding/json", func(t *testing.T) {
		// An independent reading of the JSON: json_encode turned empty and
		// 0…n-1 arrays into lists and int keys into strings, which is
		// exactly what Plain does.
		var want any
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&want); err != nil {
			t.Fatal(err)
		}
		got := Plain(fromPHP)
		if !reflect.DeepEqual(numbersToGo(want), got) {
			t.Fatal("Plain(cache) differs from the JSON decoded by encoding/json")
		}
	})

	t.Run("typed models", func(t *testing.T) {
		fromCache, err := LoadCacheFile(fixturePath(t))
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(introJSONPath(t))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fromJSON, err := LoadJSON(f)
		if err != nil {
			t.Fatal(err)
		}
		if fromCache.Source != fixturePath(t) || fromJSON.Source != "json" {
			t.Errorf("sources %q, %q", fromCache.Source, fromJSON.Source)
		}
		fromCache.Source, fromJSON.Source = "", ""
		if !reflect.DeepEqual(fromCache, fromJSON) {
			for _, name := range fromCache.Names() {
				if !reflect.DeepEqual(fromCache.Tables[name], fromJSON.Tables[name]) {
					t.Errorf("table %s differs", name)
				}
			}
			t.Fatal("typed models differ")
		}
	})
}

// numbersToGo converts json.Number the way DecodeJSON does, so the
// comparison is about structure, not number representation.
func numbersToGo(v any) any {
	switch x := v.(type) {
	case json.Number:
		n, err := jsonNumber(x)
		if err != nil {
			panic(err)
		}
		return n
	case map[string]any:
		for k, e := range x {
			x[k] = numbersToGo(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbersToGo(e)
		}
	}
	return v
}

func TestDecodeJSON(t *testing.T) {
	t.Parallel()
	v, err := DecodeJSON(strings.NewReader(`{"b": [], "a": {"2": 1.0, "x": [true, null, -3, 1e2, 9223372036854775808], "07": "s"}, "b": {}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := arr("b", &Array{}, "a", arr(2, 1.0, "x", arr(0, true, 1, nil, 2, int64(-3), 3, 100.0, 4, 9223372036854775808.0), "07", "s"))
	if !sameValue(v, want) {
		t.Fatalf("got %s", firstDiff(v, want, ""))
	}
	for _, bad := range []string{`{"a": }`, `{"a": 1} {}`, `[1, 2`, strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)} {
		if _, err := DecodeJSON(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "JSON at byte") {
			t.Errorf("DecodeJSON(%.20q) error = %v", bad, err)
		}
	}
}

func TestLoadJSONRejectsNonTCA(t *testing.T) {
	t.Parallel()
	for src, msg := range map[string]string{
		`[1, 2]`:                           `TCA table "0" is an integer, not an array`,
		`"pages"`:                          "must be an object of tables, not a string",
		`{"pages": {"columns": {"x": 1}}}`: "TCA column pages.x is an integer",
	} {
		if _, err := LoadJSON(strings.NewReader(src)); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("LoadJSON(%s) error = %v, want %q", src, err, msg)
		}
	}
}

func TestLoadCacheFileErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	broken := write("broken.php", "<?php\nreturn array (\n  'tca' => array ( 'x' => ,\n);\n#")
	_, err := LoadCacheFile(broken)
	var se *SyntaxError
	if !errors.As(err, &se) || !strings.HasPrefix(err.Error(), broken+":3:27: ") {
		t.Errorf("syntax error = %v, want it to start with %s:3:27", err, broken)
	}
	noTCA := write("other.php", "<?php\nreturn array ( 'x' => 1 );\n#")
	if _, err := LoadCacheFile(noTCA); err == nil || !strings.Contains(err.Error(), "no 'tca' entry") {
		t.Errorf("missing tca: %v", err)
	}
	scalar := write("scalar.php", "<?php\nreturn 1;\n#")
	if _, err := LoadCacheFile(scalar); err == nil || !strings.Contains(err.Error(), "no 'tca' entry") {
		t.Errorf("scalar file: %v", err)
	}
	if _, err := LoadCacheFile(filepath.Join(dir, "missing.php")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// placeCache writes a cache file into root/dir with the given mtime.
func placeCache(t *testing.T, root, dir, name string, content []byte, mtime time.Time) string {
	t.Helper()
	d := filepath.Join(root, dir)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(d, name)
	if err := os.WriteFile(p, content, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFindCacheFileNewestWins(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if _, err := FindCacheFile(root); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("empty root: %v, want fs.ErrNotExist", err)
	}
	base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	composer := placeCache(t, root, "var/cache/code/core", "tca_base_aaaaaaaaaaaaaaaa.php", []byte("x"), base)
	legacy := placeCache(t, root, "public/typo3temp/var/cache/code/core", "tca_base_bbbbbbbbbbbbbbbb.php", []byte("x"), base.Add(time.Hour))
	older := placeCache(t, root, "var/cache/code/core", "tca_base_cccccccccccccccc.php", []byte("x"), base.Add(-time.Hour))
	// Neither another cache entry nor a directory with a matching name counts.
	placeCache(t, root, "var/cache/code/core", "tca_tables_dddddddddddddddd.php", []byte("x"), base.Add(2*time.Hour))
	if err := os.MkdirAll(filepath.Join(root, "var/cache/code/core/tca_base_dir.php"), 0o755); err != nil {
		t.Fatal(err)
	}

	check := func(want string) {
		t.Helper()
		got, err := FindCacheFile(root)
		if err != nil || got != want {
			t.Fatalf("FindCacheFile = %q, %v; want %q", got, err, want)
		}
	}
	check(legacy)
	if err := os.Chtimes(older, base.Add(3*time.Hour), base.Add(3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	check(older)
	if err := os.Chtimes(composer, base.Add(4*time.Hour), base.Add(4*time.Hour)); err != nil {
		t.Fatal(err)
	}
	check(composer)
	// A web-root-as-project layout (typo3temp directly below the root).
	webroot := t.TempDir()
	only := placeCache(t, webroot, "typo3temp/var/cache/code/core", "tca_base_eeeeeeeeeeeeeeee.php", []byte("x"), base)
	if got, err := FindCacheFile(webroot); err != nil || got != only {
		t.Fatalf("web root layout: %q, %v", got, err)
	}
}

func TestLoadSourceOrder(t *testing.T) {
	t.Parallel()
	shared := dbtest.TYPO3Material(t)
	fixtureRoot := filepath.Join(shared, "tca-cache-fixture")
	coreJSON := filepath.Join(shared, "tca-core.json")

	// Cache file first, even when a JSON export is named.
	got, err := Load(LoadParams{ProjectRoot: fixtureRoot, JSONPath: coreJSON})
	if err != nil {
		t.Fatal(err)
	}
	if got.Source != fixturePath(t) || len(got.Tables) != 24 {
		t.Errorf("with cache: source %q, %d tables", got.Source, len(got.Tables))
	}

	// No cache under the root: the JSON export.
	got, err = Load(LoadParams{ProjectRoot: t.TempDir(), JSONPath: coreJSON})
	if err != nil {
		t.Fatal(err)
	}
	if got.Source != coreJSON || len(got.Tables) != 16 || got.Table("sys_news") == nil {
		t.Errorf("with JSON: source %q, %d tables", got.Source, len(got.Tables))
	}

	// Neither: bundled.
	got, err = Load(LoadParams{ProjectRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if got.Source != BundledSource || got.Table("tt_content") == nil {
		t.Errorf("fallback: source %q", got.Source)
	}

	// A legacy-mode install is found too.
	legacyRoot := t.TempDir()
	p := placeCache(t, legacyRoot, "public/typo3temp/var/cache/code/core", "tca_base_0123456789abcdef.php", readFixture(t), time.Now())
	if got, err = Load(LoadParams{ProjectRoot: legacyRoot}); err != nil {
		t.Errorf("legacy: %v", err)
	} else if got.Source != p {
		t.Errorf("legacy: source %q, want %q", got.Source, p)
	}

	// Present but broken sources are errors, never silent fallbacks.
	brokenRoot := t.TempDir()
	placeCache(t, brokenRoot, "var/cache/code/core", "tca_base_ffffffffffffffff.php", []byte("<?php\nreturn array (\n"), time.Now())
	if _, err := Load(LoadParams{ProjectRoot: brokenRoot, JSONPath: coreJSON}); err == nil || !strings.Contains(err.Error(), "never closed") {
		t.Errorf("broken cache: %v", err)
	}
	if _, err := Load(LoadParams{ProjectRoot: filepath.Join(t.TempDir(), "gone")}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing project root: %v", err)
	}
	if _, err := Load(LoadParams{ProjectRoot: coreJSON}); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("project root is a file: %v", err)
	}
	if _, err := Load(LoadParams{JSONPath: filepath.Join(t.TempDir(), "none.json")}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing JSON: %v", err)
	}
	badJSON := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(badJSON, []byte(`{"pages": `), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(LoadParams{JSONPath: badJSON}); err == nil || !strings.HasPrefix(err.Error(), badJSON+": JSON at byte") {
		t.Errorf("bad JSON: %v", err)
	}
}

func BenchmarkParseCacheFixture(b *testing.B) {
	src := readFixture(b)
	b.Run("parse", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ParsePHPReturn(src); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parse+typed", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		b.ReportAllocs()
		for b.Loop() {
			v, err := ParsePHPReturn(src)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := FromArray(v.(*Array).Array("tca"), "bench"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
