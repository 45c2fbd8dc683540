package siteindex

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFoldAndTerms(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Größe Straße": "grosse strasse", "ÄÖÜ äöü": "aou aou", "Crème brûlée": "creme brulee",
		"Ad\u00admin": "admin", "ÆSIR œuvre": "aesir oeuvre", "ＡＢＣ": "abc",
	} {
		if got := Fold(in); got != want {
			t.Errorf("Fold(%q) = %q, want %q", in, got, want)
		}
	}
	got := strings.Join(Terms("<p class=\"x\">Wasserpumpen, 40% günstiger!</p>"), " ")
	if got != "p class x wasserpumpen 40 gunstiger p" {
		t.Errorf("Terms = %q", got)
	}
	if p, ok := Pieces("%%"); ok || p != nil {
		t.Errorf("Pieces(%%%%) = %v, %v", p, ok)
	}
	if p, ok := Pieces("aqua 200"); !ok || strings.Join(p, "|") != "aqua|200" {
		t.Errorf("Pieces(aqua 200) = %v, %v", p, ok)
	}
	for w, want := range map[string]string{"pumpen": "pump", "wartung": "wart", "pumps": "pump", "gehause": "gehaus", "kiel": "kiel"} {
		if got := Stem(w); got != want {
			t.Errorf("Stem(%q) = %q, want %q", w, got, want)
		}
	}
}

// FuzzSubstringSound: whenever q occurs in a text ignoring case, every
// piece of q lies inside one of the text's terms, which is what makes
// the index a superset of search_records' matches; terms are valid
// UTF-8 runs of letters and digits no longer than a chunk.
func FuzzSubstringSound(f *testing.F) {
	for _, s := range [][2]string{
		{"Die Wasserpumpe läuft", "erpump"}, {"Größe", "öß"}, {"a-b c", "-b c"}, {"x", "x"},
		{"<p>Straße</p>", "straße"}, {strings.Repeat("ab", 900), "babab"}, {"ǅemal", "ǆ"}, {"İstanbul", "i̇s"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, text, q string) {
		terms := Terms(text)
		for _, term := range terms {
			if term == "" || !utf8.ValidString(term) && utf8.ValidString(text) || len(term) > chunkBytes {
				t.Fatalf("bad term %q of %q", term, text)
			}
		}
		// The ASCII case-insensitive containment SQLite's LIKE decides.
		if q == "" || !strings.Contains(strings.ToLower(text), strings.ToLower(q)) || !utf8.ValidString(q) || !utf8.ValidString(text) {
			return
		}
		pieces, ok := Pieces(q)
		if !ok {
			return
		}
		for _, p := range pieces {
			found := false
			for _, term := range terms {
				if strings.Contains(term, p) {
					found = true
					break
				}
			}
			if !found {
				t.Fatalf("%q contains %q but piece %q lies in none of its terms %q", text, q, p, terms)
			}
		}
	})
}
