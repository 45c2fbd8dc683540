package siteconfig_test

import (
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/typo3/siteconfig"
)

func lookup(m map[string]string) func(string) (string, bool) {
	return func(n string) (string, bool) { v, ok := m[n]; return v, ok }
}

func TestResolve(t *testing.T) {
	t.Parallel()
	cfg, err := siteconfig.ParseYAML([]byte(`
rootPageId: 3
base: '%env(BASE)%'
baseVariants:
  - { base: 'https://dev.example/', condition: 'applicationContext == "Development"' }
  - { base: 'https://x.example/', condition: 'request.getUri() == "x"' }
  - { base: 'https://env.example/', condition: 'getenv("STAGE") == "on"' }
languages:
  - { languageId: 0, title: English, base: / }
  - { languageId: 1, title: Deutsch, base: 'https://de.example/', enabled: false }
nested: { key: 'a %env(A)% b %env(MISSING)% c' }
`))
	if err != nil {
		t.Fatal(err)
	}
	s := &siteconfig.Site{}
	siteconfig.Resolve(siteconfig.Params{Env: lookup(map[string]string{"BASE": "https://www.example/", "A": "1", "STAGE": "on"})}, s, cfg)
	if s.RootPageID != 3 || s.Base != "https://env.example/" || !strings.HasPrefix(s.BaseFrom, "baseVariants[2]") {
		t.Errorf("site %+v", s)
	}
	if len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "baseVariants[1]") {
		t.Errorf("notes %q", s.Notes)
	}
	if got := s.Config["nested"].(map[string]any)["key"]; got != "a 1 b %env(MISSING)% c" || len(s.Unresolved) != 1 || s.Unresolved[0] != "MISSING" {
		t.Errorf("placeholders: %v %v", got, s.Unresolved)
	}
	if len(s.Languages) != 2 || s.Languages[0].Base != "https://env.example/" || s.Languages[1].Base != "https://de.example/" || s.Languages[1].Enabled {
		t.Errorf("languages %+v", s.Languages)
	}
	if len(s.Bases) != 5 {
		t.Errorf("bases %q", s.Bases)
	}
	if got := siteconfig.ReplaceRecursive(map[string]any{"a": map[string]any{"x": 1, "y": 2}, "l": []any{1, 2}},
		map[string]any{"a": map[string]any{"y": 3}, "l": []any{9}}); got["a"].(map[string]any)["x"] != 1 || got["a"].(map[string]any)["y"] != 3 || got["l"].([]any)[1] != 2 {
		t.Errorf("ReplaceRecursive: %v", got)
	}
}

func FuzzResolve(f *testing.F) {
	f.Add([]byte("base: '%env(B)%'\nbaseVariants:\n  - { base: x, condition: 'applicationContext matches \"#^Dev#\"' }\nlanguages:\n  - { base: /de/ }\n"), "Development")
	f.Add([]byte("imports:\n  - { resource: 'a.yaml' }\nk: [1, {a: '%env(X)%%env(Y)%'}]\n"), "Production")
	f.Add([]byte("{ : }"), "")
	f.Fuzz(func(t *testing.T, b []byte, ctx string) {
		cfg, err := siteconfig.ParseYAML(b)
		if err != nil {
			return
		}
		s := &siteconfig.Site{}
		siteconfig.Resolve(siteconfig.Params{Env: lookup(map[string]string{"TYPO3_CONTEXT": ctx, "B": "https://b/", "X": "%env(Y)%"})}, s, cfg)
		if s.Config == nil {
			t.Fatal("nil configuration")
		}
		for i := 1; i < len(s.Unresolved); i++ {
			if s.Unresolved[i-1] >= s.Unresolved[i] {
				t.Fatalf("unresolved not sorted and unique: %q", s.Unresolved)
			}
		}
	})
}
