// Package sitesearch holds the builtin site search tools of group rag,
// site_rag_query and site_fetch_source: passages of the site's public
// content, each with a stable source id and a citation (page title and
// URL from the site configuration), for a chat that must cite its
// sources.
//
// The passages come from the first available backend in this order:
// Apache Solr over its HTTP API (when search.solr_url is configured),
// the site's own ke_search index (tx_kesearch_index), the site's
// indexed_search tables (index_phash, index_rel, index_words,
// index_fulltext), and t3agent's own site index when one is given.
// Whatever a backend proposes is a candidate only: every candidate is
// read again from the live site database and returned only when an
// anonymous visitor of the live site may read it (see public.go), and
// site_fetch_source applies the same checks again.
//
// The tools act for a backend user (a call without one is refused) but
// return only public content, the same for everyone: their data class is
// publicContent.
package sitesearch

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

// Answer limits.
const (
	defaultSources = 8
	maxSources     = 20
	passageRunes   = 600
	fetchRunes     = 8000
	// overFetch is how many candidates are asked for per passage wanted:
	// the live checks drop what is not public.
	overFetch = 5
)

// Candidate is a passage a backend proposes. It is not yet checked.
type Candidate struct {
	// ID is the source id.
	ID SourceID
	// Page is the page the passage is shown on (either language's uid).
	Page int64
	// Lang is the passage's language (sys_language_uid).
	Lang int
	// Record, when its Table is set, is a record (other than a page) that
	// must be public as well; its page must then be Page's.
	Record RecordRef
	Title  string
	// Text is the passage's plain text.
	Text  string
	Score float64
	// LiveText says that Text is the backend's copy of the page's text,
	// which the answer replaces with the page's public content as it is
	// now (liveTexts).
	LiveText bool
}

// RecordRef names one record of a TCA table.
type RecordRef struct {
	Table string
	UID   int64
}

// SearchParams is one question to a backend.
type SearchParams struct {
	// Terms are the question's search words (Terms).
	Terms []string
	// Languages are the sys_language_uids asked for, never empty.
	Languages []int
	// Limit bounds the candidates.
	Limit int
}

// Backend is one search source. Implementations are safe for concurrent
// use; each call reads what it needs anew.
type Backend interface {
	// Name is the source id prefix: solr, ke_search, indexed_search, index.
	Name() string
	// Available reports whether the backend can answer now: it is
	// configured, its tables exist and hold rows. An unavailable backend
	// is skipped; the first available one answers, even with nothing.
	Available(ctx context.Context, v *view) (bool, error)
	// Search returns candidates, best first, at most p.Limit.
	Search(ctx context.Context, v *view, p SearchParams) ([]Candidate, error)
	// Fetch reads one source again; nil when it no longer exists.
	Fetch(ctx context.Context, v *view, id SourceID) (*Candidate, error)
}

// Params configure ToolsWith; the zero value searches ke_search and
// indexed_search only.
type Params struct {
	// Solr, when its URL is set, puts Solr first.
	Solr SolrParams
	// Index is t3agent's own site index, asked last; nil leaves it out.
	Index Index
}

// Tools returns the site search tools over site. policy is accepted for
// the builtin groups' common signature; public content needs no user's
// read policy.
func Tools(site *typo3.Site, policy *readpolicy.Policy) []tool.Tool {
	return ToolsWith(site, Params{})
}

// ToolsWith is Tools with explicit parameters.
func ToolsWith(site *typo3.Site, p Params) []tool.Tool {
	e := &engine{site: site, backends: backends(site, p)}
	return []tool.Tool{&ragQuery{e}, &fetchSource{e}}
}

// backends lists the backends in priority order.
func backends(site *typo3.Site, p Params) []Backend {
	var out []Backend
	if p.Solr.URL != "" {
		out = append(out, newSolr(site, p.Solr))
	}
	out = append(out, &keSearch{site: site}, &indexedSearch{site: site})
	if p.Index != nil {
		out = append(out, &ownIndex{site: site, ix: p.Index})
	}
	return out
}

type engine struct {
	site     *typo3.Site
	backends []Backend
}

func spec(name, description, schema string) tool.Spec {
	return tool.Spec{
		Name:             name,
		Description:      description,
		InputSchema:      json.RawMessage(schema),
		Group:            tool.GroupRAG,
		Effect:           tool.ReadOnly,
		DataClass:        tool.PublicContent,
		EnabledByDefault: true,
	}
}

// passage is a checked candidate with its citation.
type passage struct {
	Candidate
	cite *citation
}

// query answers one question: the first available backend's candidates,
// checked live, at most limit of them. skipped tells which backends could
// not answer and why.
func (e *engine) query(ctx context.Context, v *view, p SearchParams, siteID string, limit int) (string, []passage, []string, error) {
	var skipped []string
	for _, b := range e.backends {
		ok, err := b.Available(ctx, v)
		if err != nil {
			if _, remote := b.(*solr); remote {
				skipped = append(skipped, b.Name()+": "+err.Error())
				continue
			}
			return "", nil, nil, err
		}
		if !ok {
			continue
		}
		p.Limit = limit * overFetch
		cands, err := b.Search(ctx, v, p)
		if err != nil {
			if _, remote := b.(*solr); remote {
				// Solr is another service: when it fails the site's
				// own tables still answer.
				skipped = append(skipped, b.Name()+": "+err.Error())
				continue
			}
			return "", nil, nil, err
		}
		if err := v.prepare(ctx, cands); err != nil {
			return "", nil, nil, err
		}
		var out []passage
		seen := map[string]bool{}
		for _, c := range cands {
			if len(out) >= limit {
				break
			}
			id := c.ID.String()
			if seen[id] {
				continue
			}
			seen[id] = true
			if cite, ok := v.check(c, siteID); ok {
				out = append(out, passage{Candidate: c, cite: cite})
			}
		}
		if err := v.liveTexts(ctx, out); err != nil {
			return "", nil, nil, err
		}
		return b.Name(), out, skipped, nil
	}
	return "", nil, skipped, nil
}

type ragQuery struct{ e *engine }

func (t *ragQuery) Spec() tool.Spec {
	return spec("site_rag_query",
		"Searches the site's public content (what an anonymous visitor of the live site may read) for passages "+
			"that answer a question, in English or German. Each passage has a source id, the page title and URL to "+
			"cite, and its text. Use site_fetch_source with a source id for the whole text. The answer names the search "+
			"backend used (Solr, ke_search, indexed_search or t3agent's index); hidden, access-restricted, scheduled, "+
			"expired, deleted and draft content is never returned.",
		`{"type":"object","properties":{`+
			`"question":{"type":"string","minLength":2,"maxLength":200,"description":"The question or search words."},`+
			`"site":{"type":"string","maxLength":64,"description":"A site identifier (config/sites/<identifier>); all sites when absent."},`+
			`"language":{"type":["integer","string"],"description":"A language id (0, 1, …) or code (en, de); every language of the site when absent."},`+
			`"max_sources":{"type":"integer","minimum":1,"maximum":20,"description":"At most this many passages (default 8)."}`+
			`},"required":["question"],"additionalProperties":false}`)
}

func (t *ragQuery) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	if call.Actor == nil {
		return tool.Errorf("%s", readpolicy.DeniedUser), nil
	}
	if err := onlyArgs(args, "question", "site", "language", "max_sources"); err != nil {
		return tool.Errorf("%s", err), nil
	}
	question, _, err := tool.ArgString(args, "question")
	if err != nil {
		return tool.Errorf("%s", err), nil
	}
	question = strings.TrimSpace(question)
	if n := len([]rune(question)); n < minQuestion || n > maxQuestion {
		return tool.Errorf("Argument question must be %d to %d characters long.", minQuestion, maxQuestion), nil
	}
	limit, _, err := tool.ArgInt(args, "max_sources", defaultSources, 1, maxSources)
	if err != nil {
		return tool.Errorf("%s", err), nil
	}
	siteID, _, err := tool.ArgString(args, "site")
	if err != nil {
		return tool.Errorf("%s", err), nil
	}
	v := newView(t.e.site)
	if len(v.sites) == 0 {
		return tool.Errorf("The installation has no site configuration (config/sites), so no page has a public URL."), nil
	}
	if siteID != "" && v.siteByID(siteID) == nil {
		return tool.Errorf("There is no site %q; the sites are %s.", clipArg(siteID), strings.Join(v.siteIDs(), ", ")), nil
	}
	langs, err := v.languages(args["language"], siteID)
	if err != nil {
		return tool.Errorf("%s", err), nil
	}
	terms := Terms(question)
	if len(terms) == 0 {
		return tool.Errorf("The question has no searchable words (letters or digits, two or more)."), nil
	}
	backend, passages, skipped, err := t.e.query(ctx, v, SearchParams{Terms: terms, Languages: langs}, siteID, int(limit))
	if err != nil {
		return tool.Result{}, err
	}
	var b strings.Builder
	for _, s := range skipped {
		fmt.Fprintf(&b, "Not answered by %s.\n", tool.Line(s, 200))
	}
	if backend == "" {
		b.WriteString("No search backend is available: the site has no ke_search or indexed_search index with rows, no Solr is configured (search.solr_url) and t3agent's own site index is not set up.")
		return tool.Text(b.String()), nil
	}
	fmt.Fprintf(&b, "Search backend: %s. Words: %s.\n", backend, strings.Join(terms, ", "))
	if len(passages) == 0 {
		b.WriteString("No public passage matches.")
		return tool.Text(b.String()), nil
	}
	fmt.Fprintf(&b, "%d passage(s); cite the title and URL.\n", len(passages))
	art := tool.Artifact{Kind: tool.ArtifactTable, Title: "Sources", Columns: []string{"#", "source", "title", "url", "language"}}
	for i, p := range passages {
		fmt.Fprintf(&b, "\n[%d] %s — %s\n", i+1, tool.Line(p.cite.Title, 160), tool.Line(p.cite.URL, 300))
		fmt.Fprintf(&b, "source: %s · page %d · language %d\n", p.ID, p.cite.Page, p.cite.Lang)
		b.WriteString(Excerpt(p.Text, terms, passageRunes) + "\n")
		art.Rows = append(art.Rows, []string{strconv.Itoa(i + 1), p.ID.String(), tool.Line(p.cite.Title, 160), tool.Line(p.cite.URL, 300), strconv.Itoa(p.cite.Lang)})
	}
	return tool.Text(strings.TrimRight(b.String(), "\n"), art), nil
}

type fetchSource struct{ e *engine }

func (t *fetchSource) Spec() tool.Spec {
	return spec("site_fetch_source",
		"The whole public text (up to 8000 characters) of one source of a site_rag_query answer, read again from the "+
			"live site, with its page title and URL. A source that is no longer public is not returned.",
		`{"type":"object","properties":{`+
			`"source_id":{"type":"string","minLength":3,"maxLength":300,"description":"A source id from site_rag_query, e.g. ke_search:12."}`+
			`},"required":["source_id"],"additionalProperties":false}`)
}

// notPublic is the one answer for a source that does not exist, is not
// public, or belongs to a backend that is not in use.
const notPublic = "No public source with this id (it may have been removed, hidden or restricted since)."

func (t *fetchSource) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	if call.Actor == nil {
		return tool.Errorf("%s", readpolicy.DeniedUser), nil
	}
	if err := onlyArgs(args, "source_id"); err != nil {
		return tool.Errorf("%s", err), nil
	}
	raw, _, err := tool.ArgString(args, "source_id")
	if err != nil {
		return tool.Errorf("%s", err), nil
	}
	id, err := ParseSourceID(strings.TrimSpace(raw))
	if err != nil {
		return tool.Errorf("%s.", err), nil
	}
	var backend Backend
	for _, b := range t.e.backends {
		if b.Name() == id.Backend {
			backend = b
		}
	}
	if backend == nil {
		return tool.Errorf("%s", notPublic), nil
	}
	v := newView(t.e.site)
	c, err := backend.Fetch(ctx, v, id)
	if err != nil {
		if _, remote := backend.(*solr); remote {
			return tool.Errorf("Solr did not answer: %s", tool.Line(err.Error(), 200)), nil
		}
		return tool.Result{}, err
	}
	if c == nil {
		return tool.Errorf("%s", notPublic), nil
	}
	if err := v.prepare(ctx, []Candidate{*c}); err != nil {
		return tool.Result{}, err
	}
	cite, ok := v.check(*c, "")
	if !ok {
		return tool.Errorf("%s", notPublic), nil
	}
	ps := []passage{{Candidate: *c, cite: cite}}
	if err := v.liveTexts(ctx, ps); err != nil {
		return tool.Result{}, err
	}
	text := []rune(ps[0].Text)
	if len(text) > fetchRunes {
		text = append(text[:fetchRunes-1], '…')
	}
	return tool.Text(fmt.Sprintf("# %s\nURL: %s\nsource: %s · page %d · language %d\n\n%s",
		tool.Line(cite.Title, 200), tool.Line(cite.URL, 300), id, cite.Page, cite.Lang, string(text))), nil
}

// onlyArgs refuses an argument the schema does not declare.
func onlyArgs(args map[string]any, names ...string) error {
	for k := range args {
		known := false
		for _, n := range names {
			known = known || k == n
		}
		if !known {
			return tool.ArgError(fmt.Sprintf("Unknown argument %q; this tool takes %s.", clipArg(k), strings.Join(names, ", ")))
		}
	}
	return nil
}
