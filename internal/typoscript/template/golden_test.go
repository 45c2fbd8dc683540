package template_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/t3agent/t3agent/internal/typoscript"
	"github.com/t3agent/t3agent/internal/typoscript/template"
)

// TestIntroductionPage1Golden resolves introduction page 1 and compares it
// in full with TYPO3's own output in testdata/typo3/golden-typoscript/page-1:
// without a file cache, with an empty one and with the one the first
// resolution filled.
func TestIntroductionPage1Golden(t *testing.T) {
	t.Parallel()
	uncached, _ := introSite(t, nil)
	cache := typoscript.NewFileCache(typoscript.FileCacheParams{})
	cached, _ := introSite(t, cache)
	for _, c := range []struct {
		name string
		r    *template.Resolver
	}{{"uncached", uncached}, {"cold cache", cached}, {"warm cache", cached}} {
		t.Run(c.name, func(t *testing.T) { page1Golden(t, c.r) })
	}
	if cache.Len() == 0 {
		t.Error("the cache holds nothing after two resolutions")
	}
}

func page1Golden(t *testing.T, r *template.Resolver) {
	_, shared := newSharedPaths(t)
	golden := filepath.Join(shared, "golden-typoscript", "page-1")
	ctx := ctxT(t)
	fe, err := r.Frontend(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := r.PageTSconfig(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("constants", func(t *testing.T) {
		if d := diffKV(ordered(t, filepath.Join(golden, "constants.flat.json")), fe.Constants.Root.Flatten()); d != "" {
			t.Errorf("constants differ from TYPO3's:\n%s", d)
		}
	})
	t.Run("setup", func(t *testing.T) {
		if d := diffKV(ordered(t, filepath.Join(golden, "setup.flat.json")), fe.Setup.Root.Flatten()); d != "" {
			t.Errorf("setup differs from TYPO3's:\n%s", d)
		}
	})
	t.Run("pagets", func(t *testing.T) {
		if d := diffKV(ordered(t, filepath.Join(golden, "pagets.flat.json")), ts.Root.Flatten()); d != "" {
			t.Errorf("Page TSconfig differs from TYPO3's:\n%s", d)
		}
	})
	t.Run("include trees", func(t *testing.T) {
		for name, got := range map[string]string{
			"include-tree.constants.txt": fe.Constants.IncludeTree(),
			"include-tree.setup.txt":     fe.Setup.IncludeTree(),
			"include-tree.pagets.txt":    ts.IncludeTree(),
		} {
			want, err := os.ReadFile(filepath.Join(golden, name))
			if err != nil {
				t.Fatal(err)
			}
			if d := diffLines(string(want), got); d != "" {
				t.Errorf("%s differs from TYPO3's:\n%s", name, d)
			}
		}
	})
	t.Run("conditions", func(t *testing.T) {
		var want struct {
			Constants []typoscript.ConditionResult `json:"constants"`
			Setup     []typoscript.ConditionResult `json:"setup"`
		}
		readJSON(t, filepath.Join(golden, "conditions.json"), &want)
		var wantTS []typoscript.ConditionResult
		readJSON(t, filepath.Join(golden, "pagets.conditions.json"), &wantTS)
		for _, c := range []struct {
			name      string
			want, got []typoscript.ConditionResult
		}{{"constants", want.Constants, fe.Constants.Conditions}, {"setup", want.Setup, fe.Setup.Conditions},
			{"pagets", wantTS, ts.Conditions}} {
			if d := diffConditions(c.want, c.got); d != "" {
				t.Errorf("%s conditions differ from TYPO3's:\n%s", c.name, d)
			}
		}
	})
	t.Run("no findings", func(t *testing.T) {
		for _, f := range append(append(fe.Constants.Syntax, fe.Setup.Syntax...), ts.Syntax...) {
			t.Errorf("unexpected finding: %s", f)
		}
		for _, f := range append(append(fe.Constants.Findings, fe.Setup.Findings...), ts.Findings...) {
			t.Errorf("unexpected evaluation finding: %s", f)
		}
	})
}

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// diffConditions compares condition lists on what TYPO3 reports:
// expression, else, verdict, evaluated and the include.
func diffConditions(want, got []typoscript.ConditionResult) string {
	strip := func(cs []typoscript.ConditionResult) []typoscript.ConditionResult {
		out := make([]typoscript.ConditionResult, len(cs))
		for i, c := range cs {
			out[i] = typoscript.ConditionResult{Expr: c.Expr, Else: c.Else, Verdict: c.Verdict, Decided: c.Decided, In: c.In}
		}
		return out
	}
	w, g := strip(want), strip(got)
	wj, _ := json.MarshalIndent(w, "", "  ")
	gj, _ := json.MarshalIndent(g, "", "  ")
	return diffLines(string(wj), string(gj))
}
