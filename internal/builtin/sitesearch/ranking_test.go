package sitesearch_test

import (
	"testing"

	"github.com/t3agent/t3agent/internal/builtin/sitesearch"
	"github.com/t3agent/t3agent/internal/typo3"
)

// question is a natural question and the page (default-language uid) in
// the language that must be among the first five passages.
type question struct {
	text string
	lang int
	page int64
}

// demoQuestions are about the fixed pages of the demo site
// (docs/demo-site.md) and its German translations.
var demoQuestions = []question{
	{"How much water does the Aqua 200 move per hour?", 0, 6},
	{"Does the control unit of the Aqua 200 save energy?", 0, 6},
	{"Which pumps does Nordlicht build for farms and factories?", 0, 1},
	{"How did the company grow from a workshop in Kiel to a supplier in 24 countries?", 0, 4},
	{"Where do I find the contact page?", 0, 17},
	{"What is the Product A domestic pump?", 0, 6},
	{"Welche Produkte gibt es?", 1, 5},
	{"Neuigkeiten von Nordlicht", 1, 13},
	{"Was bietet das Produkt A?", 1, 6},
}

// introQuestions are about the introduction package's pages.
var introQuestions = []question{
	{"How many extensions are available in the TYPO3 Extension Repository?", 0, 82},
	{"Which templating engine does TYPO3 use for extension templates?", 0, 82},
	{"Can the TYPO3 backend be managed from a tablet?", 0, 83},
	{"Is TYPO3 free open source software without license fees?", 0, 1},
	{"Does TYPO3 support all languages and characters?", 0, 10},
	{"Show me an accordion example", 0, 45},
	{"Where is the carousel example?", 0, 44},
	{"Does TYPO3 ship with a ready to use indexed search?", 0, 37},
	{"What is the blockquote element for?", 0, 58},
	{"Can TYPO3 upgrade reliably with stable APIs?", 0, 83},
	{"Unterstützt TYPO3 alle Sprachen und Zeichen?", 1, 10},
	{"Welche Codierung verwendet TYPO3 im Frontend und Backend?", 1, 10},
}

// TestRelevantPagesRankTop5 fills each search extension's tables from the
// site's own pages (as the extension's indexer would) and asks the
// question sets in English and German: the expected page is among the
// first five passages, in the question's language, for every backend,
// on SQLite and MariaDB.
func TestRelevantPagesRankTop5(t *testing.T) {
	t.Parallel()
	sites := []struct {
		name      string
		build     func(t *testing.T, d typo3.Dialect) *fixture
		questions []question
	}{
		{"demo", func(t *testing.T, d typo3.Dialect) *fixture { return demoFixture(t, d, sitesearch.Params{}) }, demoQuestions},
		{"introduction", func(t *testing.T, d typo3.Dialect) *fixture { return introFixture(t, d) }, introQuestions},
	}
	for _, s := range sites {
		for _, d := range []typo3.Dialect{typo3.DialectSQLite, typo3.DialectMySQL} {
			t.Run(s.name+"/"+string(d), func(t *testing.T) {
				t.Parallel()
				f := s.build(t, d)
				docs := f.siteDocs()
				for _, backend := range []string{"ke_search", "indexed_search"} {
					f.fill(backend, docs)
					for _, q := range s.questions {
						res := f.call("site_rag_query", map[string]any{"question": q.text, "language": q.lang, "max_sources": 5})
						found := false
						for _, h := range hits(t, res) {
							found = found || h.page == q.page && h.lang == q.lang
						}
						if !found {
							t.Errorf("%s: %q (language %d): page %d is not in the first five:\n%s", backend, q.text, q.lang, q.page, res.Content)
						}
					}
				}
			})
		}
	}
}
