package sitesearch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/t3agent/t3agent/internal/egress"
	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/typo3"
)

// SolrParams configure the Solr backend.
type SolrParams struct {
	// URL is the Solr server's base, up to the cores: http://solr:8983/solr
	// (config search.solr_url). Empty leaves Solr out.
	URL string
	// Guard checks every request; nil builds one that allows URL's host
	// and nothing else.
	Guard *egress.Guard
	// Timeout bounds one request; 0 means 10 s.
	Timeout time.Duration
}

// maxSolrBody bounds a Solr answer.
const maxSolrBody = 4 << 20

// solr asks the cores of EXT:solr, one per site language, named by the
// site configuration's solr_core_read (the language's, else the site's).
// The query is edismax over title (boosted) and content, filtered to
// documents a visitor without login may see ({!typo3access}0,-1, EXT:solr's
// access filter); pages come back as type "pages" with their uid, other
// records with their table, uid and page.
type solr struct {
	site    *typo3.Site
	base    *url.URL
	client  *http.Client
	initErr error
}

func newSolr(site *typo3.Site, p SolrParams) *solr {
	s := &solr{site: site}
	u, err := url.Parse(strings.TrimSuffix(p.URL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		s.initErr = errors.New("search.solr_url is not an http(s) URL")
		return s
	}
	s.base = u
	g := p.Guard
	if g == nil {
		if g, err = egress.NewGuard(egress.GuardParams{AllowedHosts: []string{u.Host}, ListName: "Solr host"}); err != nil {
			s.initErr = err
			return s
		}
	}
	if _, err := g.CheckURL(u.String()); err != nil {
		s.initErr = err
		return s
	}
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	s.client = &http.Client{
		Timeout:   timeout,
		Transport: &http.Transport{Proxy: nil, DialContext: g.DialContext, TLSHandshakeTimeout: timeout},
		// A Solr that redirects is misconfigured; following it could
		// leave the allowed host.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return s
}

func (s *solr) Name() string { return "solr" }

// solrCore is one core to ask: a site's language.
type solrCore struct {
	site string
	lang int
	core string
}

var corePattern = regexp.MustCompile(`^[A-Za-z0-9_.\-]{1,64}$`)

// cores lists the cores of the enabled languages langs (all when nil) of
// every configured site.
func (s *solr) cores(v *view, langs []int) []solrCore {
	var out []solrCore
	for _, st := range v.sites {
		if on, ok := st.Config["solr_enabled_read"].(bool); ok && !on {
			continue
		}
		siteCore, _ := st.Config["solr_core_read"].(string)
		raw, _ := st.Config["languages"].([]any)
		for _, l := range st.Languages {
			if !l.Enabled || langs != nil && !containsInt(langs, int(l.ID)) {
				continue
			}
			core := siteCore
			for _, r := range raw {
				if m, _ := r.(map[string]any); m != nil && fmt.Sprint(m["languageId"]) == strconv.FormatInt(l.ID, 10) {
					if c, ok := m["solr_core_read"].(string); ok && c != "" {
						core = c
					}
				}
			}
			if corePattern.MatchString(core) && corePattern.MatchString(st.Identifier) {
				out = append(out, solrCore{site: st.Identifier, lang: int(l.ID), core: core})
			}
		}
	}
	return out
}

func containsInt(s []int, n int) bool {
	for _, x := range s {
		if x == n {
			return true
		}
	}
	return false
}

func (s *solr) Available(_ context.Context, v *view) (bool, error) {
	if s.initErr != nil {
		return false, s.initErr
	}
	return len(s.cores(v, nil)) > 0, nil
}

func (s *solr) Search(ctx context.Context, v *view, p SearchParams) ([]Candidate, error) {
	var out []Candidate
	for _, c := range s.cores(v, p.Languages) {
		form := selectForm(p.Limit)
		form.Set("q", strings.Join(p.Terms, " "))
		form.Set("defType", "edismax")
		form.Set("qf", "title^5 content^1")
		form.Set("q.op", "OR")
		form.Set("mm", "1")
		docs, err := s.get(ctx, c.core, form)
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			if cand, ok := d.candidate(c); ok {
				out = append(out, cand)
			}
		}
	}
	// Scores of different cores are not comparable; within one answer the
	// cores' best come first in core order, which the stable rank keeps
	// for equal coverage.
	rank(out, p.Terms)
	if len(out) > p.Limit {
		out = out[:p.Limit]
	}
	return out, nil
}

func (s *solr) Fetch(ctx context.Context, v *view, id SourceID) (*Candidate, error) {
	if s.initErr != nil {
		return nil, s.initErr
	}
	if len(id.Parts) != 4 {
		return nil, nil
	}
	uid, err1 := strconv.ParseInt(id.Parts[2], 10, 64)
	lang, err2 := strconv.Atoi(id.Parts[3])
	if err1 != nil || err2 != nil || !corePattern.MatchString(id.Parts[1]) {
		return nil, nil
	}
	for _, c := range s.cores(v, []int{lang}) {
		if c.site != id.Parts[0] {
			continue
		}
		form := selectForm(1)
		form.Set("q", "*:*")
		form.Add("fq", `type:"`+id.Parts[1]+`"`)
		form.Add("fq", "uid:"+strconv.FormatInt(uid, 10))
		docs, err := s.get(ctx, c.core, form)
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			if cand, ok := d.candidate(c); ok {
				return &cand, nil
			}
		}
	}
	return nil, nil
}

// selectForm holds what every select request asks: documents a visitor
// without login may see (EXT:solr's access filter), the fields read, JSON.
func selectForm(rows int) url.Values {
	form := url.Values{}
	form.Set("fq", "{!typo3access}0,-1")
	form.Set("fl", "id,type,uid,pid,title,content")
	form.Set("rows", strconv.Itoa(rows))
	form.Set("wt", "json")
	return form
}

// get runs one select request against core.
func (s *solr) get(ctx context.Context, core string, form url.Values) ([]solrDoc, error) {
	u := *s.base
	u.Path = strings.TrimSuffix(u.Path, "/") + "/" + core + "/select"
	u.RawQuery = form.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		var ge *egress.GuardError
		if errors.As(err, &ge) {
			return nil, ge
		}
		return nil, fmt.Errorf("the Solr server at %s cannot be reached", s.base.Host)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxSolrBody+1))
	if err != nil {
		return nil, errors.New("the answer of Solr could not be read")
	}
	if len(body) > maxSolrBody {
		return nil, fmt.Errorf("the answer of Solr is larger than %d bytes", maxSolrBody)
	}
	docs, err := ParseSolrResponse(body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the Solr server answered HTTP %d for core %s", resp.StatusCode, core)
	}
	return docs, nil
}

// solrDoc is one document of a select answer, with the fields EXT:solr
// writes that the backend reads.
type solrDoc struct {
	ID      string
	Type    string
	UID     int64
	PID     int64
	Title   string
	Content string
}

var solrTypePattern = regexp.MustCompile(`^[A-Za-z0-9_]{1,64}$`)

func (d solrDoc) candidate(c solrCore) (Candidate, bool) {
	if !solrTypePattern.MatchString(d.Type) || d.UID <= 0 {
		return Candidate{}, false
	}
	cand := Candidate{ID: SourceID{Backend: "solr", Parts: []string{c.site, d.Type, itoa(d.UID), strconv.Itoa(c.lang)}},
		Lang: c.lang, Title: readpolicy.StripTags(d.Title), Text: readpolicy.StripTags(d.Content)}
	if d.Type == "pages" {
		cand.Page, cand.LiveText = d.UID, true
	} else {
		if d.PID <= 0 {
			return Candidate{}, false
		}
		cand.Page, cand.Record = d.PID, RecordRef{Table: d.Type, UID: d.UID}
	}
	return cand, true
}

// ParseSolrResponse reads a select answer (wt=json): its documents, or
// Solr's error message as the error. Single values may arrive as
// one-element arrays (multiValued fields) and numbers as strings; both
// are accepted.
func ParseSolrResponse(body []byte) ([]solrDoc, error) {
	var r struct {
		Response *struct {
			Docs []map[string]json.RawMessage `json:"docs"`
		} `json:"response"`
		Error *struct {
			Msg  string `json:"msg"`
			Code int    `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, errors.New("the answer of Solr is not JSON")
	}
	if r.Error != nil {
		return nil, fmt.Errorf("the Solr server refused the query (%d): %s", r.Error.Code, clipArg(siteconfigSafe(r.Error.Msg)))
	}
	if r.Response == nil {
		return nil, errors.New("the answer of Solr has no response")
	}
	out := make([]solrDoc, 0, len(r.Response.Docs))
	for _, m := range r.Response.Docs {
		d := solrDoc{ID: solrString(m["id"]), Type: solrString(m["type"]), Title: solrString(m["title"]), Content: solrString(m["content"])}
		d.UID, _ = strconv.ParseInt(solrString(m["uid"]), 10, 64)
		d.PID, _ = strconv.ParseInt(solrString(m["pid"]), 10, 64)
		out = append(out, d)
	}
	return out, nil
}

// solrString reads a string, number or first element of an array.
func solrString(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil && len(list) > 0 {
		return solrString(list[0])
	}
	return ""
}

// siteconfigSafe keeps one line of a message from another service.
func siteconfigSafe(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
