package siteindex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/typo3"
)

// Defaults of Params.
const (
	DefaultMaxAge   = 10 * time.Minute
	DefaultInterval = 30 * time.Second
)

// Params configure New.
type Params struct {
	Store  store.SiteIndex    // required
	Site   *typo3.Site        // required
	Policy *readpolicy.Policy // required: which tables and columns are searchable
	MaxAge time.Duration      // after this long without a sync the index is stale; 0 means DefaultMaxAge
	Now    func() time.Time   // t3agent's clock; nil means time.Now
	Logger *slog.Logger       // nil discards
}

// Index is the site index of one site over one store. It is safe for
// concurrent use; the vocabulary it keeps in memory follows the store's
// (reloaded when a build began elsewhere, extended when terms were added).
type Index struct {
	st     store.SiteIndex
	site   *typo3.Site
	policy *readpolicy.Policy
	maxAge time.Duration
	now    func() time.Time
	log    *slog.Logger

	mu    sync.Mutex
	vocab vocabulary
}

// vocabulary is the store's term list as last loaded.
type vocabulary struct {
	gen    int64
	lastID int64
	terms  []string
}

// New returns the index of p.Site in p.Store.
func New(p Params) (*Index, error) {
	if p.Store == nil || p.Site == nil || p.Policy == nil {
		return nil, errors.New("siteindex.New: a store, a site and a policy are required")
	}
	ix := &Index{st: p.Store, site: p.Site, policy: p.Policy, maxAge: p.MaxAge, now: p.Now, log: p.Logger}
	if ix.maxAge <= 0 {
		ix.maxAge = DefaultMaxAge
	}
	if ix.now == nil {
		ix.now = time.Now
	}
	if ix.log == nil {
		ix.log = slog.New(slog.DiscardHandler)
	}
	return ix, nil
}

// MaxAge is the age after which the index counts as stale.
func (ix *Index) MaxAge() time.Duration { return ix.maxAge }

// QueryParams are the parameters of Query.
type QueryParams struct {
	Text      string
	Tables    []string // empty: all
	Languages []int    // empty: any
	// PublicOnly pre-filters by the indexed values of hidden, deleted,
	// workspace, starttime, endtime and fe_group. The values may be as old
	// as the last sync: a consumer checks the live row again.
	PublicOnly bool
	Limit      int // 0 means 10
}

// Hit is one ranked document.
type Hit struct {
	Table    string
	UID, PID int64
	Language int
	Score    float64 // higher is better
	Title    string
	Snippet  string
}

// ErrAbsent is returned by Query when there is no finished index.
var ErrAbsent = errors.New("the site index has not been built; run t3agent index build")

// maxExpansion bounds the vocabulary terms one query word expands to.
const maxExpansion = 64

// Query ranks the indexed rows against the words of p.Text: each word
// is folded and lightly stemmed (German and English endings), and every
// vocabulary term containing the stem counts, so "Pumpen" finds
// "Wasserpumpe". Stop words are left out. No words, no hits.
func (ix *Index) Query(ctx context.Context, p QueryParams) ([]Hit, error) {
	state, err := ix.st.SiteIndexState(ctx)
	if errors.Is(err, store.ErrNotFound) || err == nil && !state.Ready {
		return nil, ErrAbsent
	}
	if err != nil {
		return nil, err
	}
	vocab := ix.vocabulary(ctx, state)
	if vocab == nil {
		return nil, errors.New("siteindex: cannot read the vocabulary")
	}
	var terms []string
	seen := map[string]bool{}
	var snippetWords []string
	for _, w := range Terms(p.Text) {
		if stopWord(w) || seen[w] {
			continue
		}
		seen[w] = true
		stem := Stem(w)
		snippetWords = append(snippetWords, stem)
		n := 0
		for _, t := range vocab {
			if strings.Contains(t, stem) && !slices.Contains(terms, t) {
				terms = append(terms, t)
				if n++; n == maxExpansion {
					break
				}
			}
		}
	}
	if len(terms) == 0 {
		return []Hit{}, nil
	}
	limit := p.Limit
	if limit <= 0 {
		limit = 10
	}
	hits, err := ix.st.SearchSiteIndex(ctx, store.SearchSiteIndexParams{Terms: terms, Tables: p.Tables,
		Languages: p.Languages, PublicOnly: p.PublicOnly, Now: ix.site.Now().Unix(), Limit: limit})
	if err != nil {
		return nil, err
	}
	out := make([]Hit, len(hits))
	for i, h := range hits {
		out[i] = Hit{Table: h.Table, UID: h.UID, PID: h.PID, Language: h.Language, Score: h.Score, Title: h.Title,
			Snippet: snippet(h.Body, snippetWords, 240)}
	}
	return out, nil
}

// vocabulary returns the terms of the store's vocabulary for state,
// loading what the memory lacks; nil on a read error (logged).
func (ix *Index) vocabulary(ctx context.Context, state store.SiteIndexState) []string {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.vocab.gen != state.Generation || state.MaxTermID < ix.vocab.lastID {
		ix.vocab = vocabulary{gen: state.Generation}
	}
	if state.MaxTermID > ix.vocab.lastID {
		more, err := ix.st.SiteIndexTerms(ctx, ix.vocab.lastID)
		if err != nil {
			ix.log.WarnContext(ctx, "site index vocabulary not readable", "error", err)
			return nil
		}
		for _, t := range more {
			ix.vocab.terms = append(ix.vocab.terms, t.Term)
			ix.vocab.lastID = t.ID
		}
	}
	return ix.vocab.terms[:len(ix.vocab.terms):len(ix.vocab.terms)]
}

// snippet is up to n runes of body around the first of words it holds.
func snippet(body string, words []string, n int) string {
	r := []rune(body)
	if len(r) <= n {
		return body
	}
	at := -1
	folded := []rune(Fold(body))
	if len(folded) == len(r) {
		for _, w := range words {
			if i := strings.Index(string(folded), w); i >= 0 {
				at = utf8.RuneCountInString(string(folded)[:i])
				break
			}
		}
	}
	start := min(max(0, at-n/3), len(r)-n)
	s := string(r[start : start+n])
	if start > 0 {
		s = "…" + s
	}
	if start+n < len(r) {
		s += "…"
	}
	return s
}

// Status is what t3agent index status reports.
type Status struct {
	Built      bool
	Building   bool // a build runs (or broke off) since BuildBegan
	BuildBegan time.Time
	Generation int64
	Docs       int64
	BuiltAt    time.Time
	SyncedAt   time.Time
	Age        time.Duration // since the last sync
	Stale      bool          // Age above MaxAge
	// Lag counts the site rows changed since the last sync (a tstamp
	// after the mark or a uid above it), per indexed table; only when
	// asked for (it reads every table).
	Lag    int64
	Tables []store.SiteIndexTable
}

// Status reads the index state; withLag also counts the site rows
// waiting for the next sync.
func (ix *Index) Status(ctx context.Context, withLag bool) (Status, error) {
	state, err := ix.st.SiteIndexState(ctx)
	if errors.Is(err, store.ErrNotFound) {
		return Status{}, nil
	}
	if err != nil {
		return Status{}, err
	}
	if !state.Ready {
		return Status{Building: true, BuildBegan: state.BuiltFrom, Generation: state.Generation}, nil
	}
	s := Status{Built: true, Generation: state.Generation, Docs: state.Docs, BuiltAt: state.BuiltAt,
		SyncedAt: state.SyncedAt, Tables: state.Tables}
	s.Age = ix.now().Sub(state.SyncedAt)
	s.Stale = s.Age > ix.maxAge
	if withLag {
		for _, t := range state.Tables {
			plan, err := ix.plan(ctx, t.Name)
			if err != nil || plan == nil {
				continue
			}
			n, err := ix.countChanged(ctx, plan, t)
			if err != nil {
				return s, err
			}
			s.Lag += n
		}
	}
	return s, nil
}

// tablePlan is how one site table is read into documents.
type tablePlan struct {
	name                           string
	tstamp, lang, hidden, deleted  string
	start, end, feGroup, workspace string
	label                          []string
	search                         []string // the columns search_records compares
	flex                           []bool   // per search column
	extra                          []string // display columns beyond search (page slugs)
}

// extraColumns are indexed for ranking besides a table's search columns.
var extraColumns = map[string][]string{
	"pages":             {"title", "nav_title", "subtitle", "slug", "description", "abstract", "keywords"},
	"tt_content":        {"header", "subheader", "bodytext"},
	"sys_file_metadata": {"title", "description", "alternative"},
}

// Tables lists the site tables the index covers: every TCA table that is
// not on the sensitive list, exists live with uid and pid, has searchable
// columns and a tstamp column (without one, changes cannot be found, and
// search_records scans the table live).
func (ix *Index) Tables(ctx context.Context) ([]string, error) {
	var out []string
	for _, name := range ix.policy.TCA().Names() {
		p, err := ix.plan(ctx, name)
		if err != nil {
			return nil, err
		}
		if p != nil {
			out = append(out, name)
		}
	}
	return out, nil
}

func (ix *Index) plan(ctx context.Context, table string) (*tablePlan, error) {
	if readpolicy.IsSensitiveTable(table) || !typo3.ValidIdent(table) {
		return nil, nil
	}
	tc := ix.policy.TCA().Table(table)
	if tc == nil {
		return nil, nil
	}
	live, err := ix.site.Columns(ctx, table)
	if err != nil {
		return nil, err
	}
	has := func(c string) string {
		if c != "" && slices.Contains(live, c) {
			return c
		}
		return ""
	}
	tstamp, _ := tc.Ctrl.Raw["tstamp"].(string)
	p := &tablePlan{name: table, tstamp: has(tstamp), lang: has(ix.policy.LanguageField(table)),
		hidden: has(tc.Ctrl.EnableColumns.Disabled), deleted: has(tc.Ctrl.Delete),
		start: has(tc.Ctrl.EnableColumns.StartTime), end: has(tc.Ctrl.EnableColumns.EndTime),
		feGroup: has(tc.Ctrl.EnableColumns.FeGroup)}
	if tc.Ctrl.VersioningWS {
		p.workspace = has("t3ver_wsid")
	}
	if p.tstamp == "" || has("uid") == "" || has("pid") == "" {
		return nil, nil
	}
	for _, c := range ix.policy.SearchColumns(table) {
		if has(c) != "" {
			p.search = append(p.search, c)
			p.flex = append(p.flex, tc.Column(c).Config.Type == "flex")
		}
	}
	if len(p.search) == 0 {
		return nil, nil
	}
	for _, c := range ix.policy.LabelColumns(table) {
		if has(c) != "" {
			p.label = append(p.label, c)
		}
	}
	for _, c := range extraColumns[table] {
		if has(c) != "" && !slices.Contains(p.search, c) && ix.policy.IsReadableColumn(table, c) {
			p.extra = append(p.extra, c)
		}
	}
	return p, nil
}

// siteRow is one row read for indexing.
type siteRow struct {
	doc store.SiteIndexDoc
}

// readBatch reads up to n rows of plan with uid > after, in uid order,
// that also satisfy cond (SQL over the table, its values in a).
func (ix *Index) readBatch(ctx context.Context, p *tablePlan, a *typo3.Args, cond string, after int64, n int) ([]store.SiteIndexDoc, error) {
	db := ix.site.DB
	qt, err := a.Quote(p.name)
	if err != nil {
		return nil, err
	}
	col := func(c, zero string) (string, error) {
		if c == "" {
			return zero, nil
		}
		q, err := a.Quote(c)
		if err != nil {
			return "", err
		}
		return qt + "." + q, nil
	}
	var sel []string
	for _, c := range []struct{ name, zero string }{{"uid", ""}, {"pid", ""}, {p.tstamp, "0"}, {p.lang, "0"},
		{p.hidden, "0"}, {p.deleted, "0"}, {p.start, "0"}, {p.end, "0"}, {p.feGroup, "''"}, {p.workspace, "0"}} {
		s, err := col(c.name, c.zero)
		if err != nil {
			return nil, err
		}
		sel = append(sel, s)
	}
	texts := slices.Concat(p.label, p.search, p.extra)
	for _, c := range texts {
		s, err := col(c, "")
		if err != nil {
			return nil, err
		}
		sel = append(sel, s)
	}
	uidCol := sel[0]
	// cond's placeholders were handed out first; "?" binds in text order.
	where := uidCol + " > " + a.Add(after)
	if cond != "" {
		where = "(" + cond + ") AND " + where
	}
	q := "SELECT " + strings.Join(sel, ", ") + " FROM " + qt + " WHERE " + where + " ORDER BY " + uidCol + " LIMIT " + strconv.Itoa(n)
	rows, err := db.SQL.QueryContext(ctx, q, a.Values()...)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p.name, err)
	}
	defer rows.Close()
	vals := make([]sql.NullString, len(sel))
	ptrs := make([]any, len(sel))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var out []store.SiteIndexDoc
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("read %s: %w", p.name, err)
		}
		num := func(i int) int64 {
			n, err := strconv.ParseInt(strings.TrimSpace(vals[i].String), 10, 64)
			if err != nil {
				f, _ := strconv.ParseFloat(strings.TrimSpace(vals[i].String), 64)
				return int64(f)
			}
			return n
		}
		d := store.SiteIndexDoc{Table: p.name, UID: num(0), PID: num(1), Tstamp: num(2), Language: int(num(3)),
			Hidden: num(4) != 0, Deleted: num(5) != 0, StartTime: num(6), EndTime: num(7),
			FeGroup: strings.TrimSpace(vals[8].String), Workspace: num(9)}
		t := 10
		p.fill(&d, vals[t:t+len(p.label)], vals[t+len(p.label):t+len(p.label)+len(p.search)], vals[t+len(p.label)+len(p.search):])
		if d.UID >= 1 && d.UID <= store.MaxSiteIndexUID {
			out = append(out, d)
		}
	}
	return out, rows.Err()
}

// Size limits of one document.
const (
	titleRunes   = 200
	bodyRunes    = 4000
	maxBodyTerms = 20000
)

// fill renders a row's texts into d: the label as title, the readable
// text as body (FlexForm values without credential fields), and the raw
// values' terms as extra terms, so a substring search on the raw column
// (markup included) finds its candidates.
func (p *tablePlan) fill(d *store.SiteIndexDoc, label, search, extra []sql.NullString) {
	for _, v := range label {
		if s := readpolicy.StripTags(v.String); s != "" {
			d.Title = cutRunes(s, titleRunes)
			break
		}
	}
	var body []string
	var raw []string
	for i, v := range search {
		if !v.Valid || v.String == "" {
			continue
		}
		if p.flex[i] {
			// Only the readable fields: credential-like plugin settings
			// never reach the index. search_records counts a FlexForm
			// match only in these fields too.
			if s := readpolicy.FlexText(v.String); s != "" {
				body = append(body, s)
			}
			continue
		}
		body = append(body, readpolicy.StripTags(v.String))
		raw = append(raw, v.String)
	}
	for _, v := range extra {
		if v.Valid && v.String != "" {
			body = append(body, readpolicy.StripTags(v.String))
		}
	}
	text := strings.Join(body, " ")
	d.Body = cutRunes(text, bodyRunes)
	titleTerms := Terms(d.Title)
	bodyTerms := Terms(text)
	var over []string
	if len(bodyTerms) > maxBodyTerms {
		over = bodyTerms[maxBodyTerms:]
		bodyTerms = bodyTerms[:maxBodyTerms]
	}
	d.TitleTerms = strings.Join(titleTerms, " ")
	d.BodyTerms = strings.Join(bodyTerms, " ")
	have := map[string]bool{}
	for _, t := range titleTerms {
		have[t] = true
	}
	for _, t := range bodyTerms {
		have[t] = true
	}
	var more []string
	for _, t := range over {
		if !have[t] {
			have[t] = true
			more = append(more, t)
		}
	}
	for _, r := range raw {
		for _, t := range Terms(r) {
			if !have[t] {
				have[t] = true
				more = append(more, t)
			}
		}
	}
	d.ExtraTerms = strings.Join(more, " ")
}

func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// countChanged counts the rows of plan changed after t's marks.
func (ix *Index) countChanged(ctx context.Context, p *tablePlan, t store.SiteIndexTable) (int64, error) {
	a := ix.site.DB.NewArgs()
	qt, err := a.Quote(p.name)
	if err != nil {
		return 0, err
	}
	ts, err := a.Quote(p.tstamp)
	if err != nil {
		return 0, err
	}
	uid, _ := a.Quote("uid")
	q := "SELECT COUNT(*) FROM " + qt + " WHERE " + ts + " > " + a.Add(t.MarkTstamp) + " OR " + uid + " > " + a.Add(t.MarkUID)
	var n int64
	err = ix.site.DB.SQL.QueryRowContext(ctx, q, a.Values()...).Scan(&n)
	return n, err
}
