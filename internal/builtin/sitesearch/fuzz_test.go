package sitesearch_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/t3agent/t3agent/internal/builtin/sitesearch"
)

func TestTerms(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"How much water does the Aqua 200 move per hour?":  "water aqua 200 move per hour",
		"Welche Produkte gibt es für Landwirte?":           "produkte landwirte",
		"ÜBER Größe und Maße":                              "größe maße",
		"what is the":                                      "what is the",
		"a b c":                                            "",
		"x' OR 1=1 --; DROP TABLE pages":                   "drop table pages",
		"one two three four five six seven eight nine ten": "one two three four five six seven eight",
	} {
		if got := strings.Join(sitesearch.Terms(in), " "); got != want {
			t.Errorf("Terms(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzTerms(f *testing.F) {
	for _, s := range []string{"How much water?", "Über Größe", "", "%_!'\"\\", "a1 b2 c3", strings.Repeat("ä", 70)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		terms := sitesearch.Terms(s)
		if len(terms) > 8 {
			t.Fatalf("%d terms", len(terms))
		}
		seen := map[string]bool{}
		for _, w := range terms {
			if n := utf8.RuneCountInString(w); n < 2 || n > 60 || seen[w] || w != strings.ToLower(w) {
				t.Fatalf("bad term %q of %q", w, s)
			}
			for _, r := range w {
				if !(('a' <= r && r <= 'z') || ('0' <= r && r <= '9') || r > 127) {
					t.Fatalf("term %q holds %q", w, r)
				}
			}
			seen[w] = true
		}
	})
}

func FuzzParseSourceID(f *testing.F) {
	for _, s := range []string{"ke_search:12", "indexed_search:0123456789abcdef0123456789abcdef", "solr:main:pages:6:0",
		"index:tt_content:1", "x", "a:b:c:d:e:f", "ke_search:", ":12", "KE:1", "ke_search:1/2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := sitesearch.ParseSourceID(s)
		if err != nil {
			return
		}
		if id.String() != s || len(id.Parts) < 1 || len(id.Parts) > 4 {
			t.Fatalf("%q parsed as %+v", s, id)
		}
		if again, err := sitesearch.ParseSourceID(id.String()); err != nil || again.String() != s {
			t.Fatalf("round trip of %q: %v", s, err)
		}
	})
}

func FuzzParseSolrResponse(f *testing.F) {
	for _, s := range []string{
		`{"responseHeader":{"status":0},"response":{"numFound":1,"start":0,"docs":[{"id":"x/pages/6/0/0","type":"pages","uid":6,"pid":5,"title":"Product A","content":"Aqua"}]}}`,
		`{"response":{"docs":[{"type":["tt_content"],"uid":"7","pid":["6"],"title":["t"],"content":["c","d"]}]}}`,
		`{"error":{"msg":"undefined field foo","code":400}}`,
		`{"response":{}}`, `[]`, `null`, `{`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		docs, err := sitesearch.ParseSolrResponse(b)
		if err != nil {
			if docs != nil || err.Error() == "" || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q with docs %v", err, docs)
			}
			return
		}
		_ = docs
	})
}

func FuzzExcerpt(f *testing.F) {
	f.Add("The Aqua 200 moves up to 4 m³ of water per hour and fits under any sink.", "water", 20)
	f.Add(strings.Repeat("İ", 300), "i", 50)
	f.Add("", "", 1)
	f.Fuzz(func(t *testing.T, text, term string, n int) {
		if n < 2 || n > 2000 {
			return
		}
		got := sitesearch.Excerpt(text, []string{strings.ToLower(term)}, n)
		if utf8.RuneCountInString(got) > n+1 {
			t.Fatalf("excerpt of %d runes, limit %d", utf8.RuneCountInString(got), n)
		}
		if utf8.RuneCountInString(text) <= n && got != text {
			t.Fatalf("short text changed: %q → %q", text, got)
		}
	})
}
