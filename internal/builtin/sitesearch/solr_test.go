package sitesearch_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/t3agent/t3agent/internal/builtin/sitesearch"
	"github.com/t3agent/t3agent/internal/typo3"
)

// No Apache Solr can be installed on the machines this project is built
// on (no Debian package, and its distribution is not in a registry they
// reach), so these tests are NOT tests against a real Solr. They check
// the backend's side of the contract: the requests it makes (core path,
// edismax over title and content, EXT:solr's access filter), that the
// answers it reads in Solr's JSON response format become candidates that
// pass the same live public checks as every other backend, and that a
// failing or refused Solr hands over to the site's own tables. The
// answers are written here in the shape EXT:solr's documents have (type,
// uid, pid, title, content).

// fakeSolr answers select requests from docs whose content holds one of
// the query's words, and records the requests.
type fakeSolr struct {
	mu   sync.Mutex
	reqs []*http.Request
	docs []map[string]any
}

func (s *fakeSolr) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.reqs = append(s.reqs, r)
	s.mu.Unlock()
	q := r.URL.Query()
	core := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/solr/"), "/select")
	var out []map[string]any
	for _, d := range s.docs {
		if d["core"] != core {
			continue
		}
		match := q.Get("q") == "*:*"
		for _, w := range strings.Fields(q.Get("q")) {
			match = match || strings.Contains(strings.ToLower(d["title"].(string)+" "+d["content"].(string)), w)
		}
		for _, fq := range q["fq"] {
			if strings.HasPrefix(fq, "uid:") && strings.TrimPrefix(fq, "uid:") != jsonText(d["uid"]) {
				match = false
			}
			if strings.HasPrefix(fq, "type:") && strings.Trim(strings.TrimPrefix(fq, "type:"), `"`) != d["type"] {
				match = false
			}
		}
		if match {
			out = append(out, d)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"responseHeader": map[string]any{"status": 0},
		"response": map[string]any{"numFound": len(out), "start": 0, "docs": out}})
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return strings.Trim(string(b), `"`)
}

// withSolrCore names the Solr core in the demo's main site configuration,
// as EXT:solr's site configuration does.
func withSolrCore(t *testing.T, root string) {
	t.Helper()
	p := filepath.Join(root, "config", "sites", "main", "config.yaml")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	y := strings.Replace(string(b), "    languageId: 0\n", "    languageId: 0\n    solr_core_read: core_en\n", 1)
	y = strings.Replace(y, "    languageId: 1\n", "    languageId: 1\n    solr_core_read: core_de\n", 1)
	if !strings.Contains(y, "core_de") {
		t.Fatal("the demo's site configuration has no language 1")
	}
	if err := os.WriteFile(p, []byte(y+"\nsolr_enabled_read: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSolrContract runs the public matrix through the Solr backend
// against an HTTP server answering in Solr's format (not a real Solr, see
// above) and checks the requests.
func TestSolrContract(t *testing.T) {
	t.Parallel()
	fs := &fakeSolr{}
	srv := httptest.NewServer(fs)
	defer srv.Close()
	s := demoTestSite(t, typo3.DialectSQLite)
	withSolrCore(t, s.root)
	f := newFixture(t, typo3.DialectSQLite, s.dsn, s.root, sitesearch.Params{Solr: sitesearch.SolrParams{URL: srv.URL + "/solr"}}, s.tca)
	cases := leakCases()
	docs := addLeakCases(f, cases)
	for _, d := range docs {
		if d.feGroup != "" || d.start != 0 || d.end != 0 {
			continue // EXT:solr's access filter and time handling keep these out of its answer
		}
		core := map[int]string{0: "core_en", 1: "core_de"}[d.lang]
		if core == "" {
			continue // the site has no such language, so EXT:solr has no core for it
		}
		fs.docs = append(fs.docs, map[string]any{"core": core, "id": "x/pages/" + jsonText(d.page), "type": "pages", "uid": d.page, "pid": 0,
			"title": d.title, "content": d.text})
	}
	// Records: a hidden and a visible content element of the public page 6.
	fs.docs = append(fs.docs,
		map[string]any{"core": "core_en", "type": "tt_content", "uid": 2, "pid": 6, "title": "Launch offer", "content": "quokkarecordhidden mounting kit"},
		map[string]any{"core": "core_en", "type": "tt_content", "uid": 1, "pid": 6, "title": "Product A at a glance", "content": "quokkarecordvisible"},
		map[string]any{"core": "core_en", "type": "tt_content", "uid": 4, "pid": 6, "title": "draft", "content": "quokkarecorddraft"},
		map[string]any{"core": "core_en", "type": "be_users", "uid": 1, "pid": 0, "title": "admin", "content": "quokkabeuser"})
	checkSolrMatrix(t, f, cases)

	for q, want := range map[string]int{"quokkarecordhidden": 0, "quokkarecordvisible": 1, "quokkarecorddraft": 0, "quokkabeuser": 0} {
		res := f.call("site_rag_query", map[string]any{"question": q})
		if got := hits(t, res); len(got) != want {
			t.Errorf("%s: %d passages, want %d:\n%s", q, len(got), want, res.Content)
		}
	}
	fs.mu.Lock()
	r := fs.reqs[0]
	fs.mu.Unlock()
	q := r.URL.Query()
	if r.URL.Path != "/solr/core_en/select" || q.Get("defType") != "edismax" || q.Get("qf") != "title^5 content^1" ||
		q.Get("fq") != "{!typo3access}0,-1" || q.Get("wt") != "json" {
		t.Errorf("request %s", r.URL)
	}
}

func checkSolrMatrix(t *testing.T, f *fixture, cases []leakCase) {
	t.Helper()
	for _, c := range cases {
		if len(c.pages) == 0 || c.index != nil || c.staleText {
			continue
		}
		res := f.call("site_rag_query", map[string]any{"question": c.marker, "max_sources": 20})
		if !strings.Contains(res.Content, "Search backend: solr.") {
			t.Fatalf("%s: %s", c.name, res.Content)
		}
		got := hits(t, res)
		if c.public != (len(got) == 1) || len(got) > 1 {
			t.Errorf("solr / %s (public %v): %s", c.name, c.public, res.Content)
		}
		for _, h := range got {
			fetched := f.call("site_fetch_source", map[string]any{"source_id": h.source})
			if fetched.IsError || !strings.Contains(fetched.Content, c.marker) {
				t.Errorf("solr / %s: fetch %s: %s", c.name, h.source, fetched.Content)
			}
		}
	}
}

// TestSolrFallsBack: a Solr that errs or that the egress guard refuses
// hands the question to the site's own tables, and says so.
func TestSolrFallsBack(t *testing.T) {
	t.Parallel()
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"error":{"msg":"SolrCore 'core_en' is not available","code":500}}`))
	}))
	defer broken.Close()
	for name, url := range map[string]string{"error": broken.URL + "/solr", "metadata": "http://169.254.169.254/solr"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := demoTestSite(t, typo3.DialectSQLite)
			withSolrCore(t, s.root)
			f := newFixture(t, typo3.DialectSQLite, s.dsn, s.root, sitesearch.Params{Solr: sitesearch.SolrParams{URL: url}}, s.tca)
			f.fillKeSearch(f.siteDocs())
			res := f.call("site_rag_query", map[string]any{"question": "Aqua 200"})
			if !strings.Contains(res.Content, "Not answered by solr") || !strings.Contains(res.Content, "Search backend: ke_search.") {
				t.Errorf("%s", res.Content)
			}
			if name == "metadata" && !strings.Contains(res.Content, "refused") {
				t.Errorf("the guard did not refuse: %s", res.Content)
			}
		})
	}
}
