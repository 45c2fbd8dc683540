package sitesearch

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/extpath"
	"github.com/t3agent/t3agent/internal/typo3/siteconfig"
)

// This file decides what an anonymous visitor of the live site may read,
// the only thing the site search tools return. A page is public in
// language L when
//
//   - its default-language row exists, is not deleted, is the live
//     version, is not hidden, has started and not ended, and its fe_group
//     lets a visitor without login in (empty, 0, or a list holding 0 or
//     -1, "hide at login"); it is a page with content of its own (doktype
//     below 199 other than link, shortcut, backend user section and mount
//     point) and not excluded from search (no_search);
//   - every page above it exists (a deleted ancestor cuts it off), is live
//     and no recycler, and those that extend their visibility to subpages
//     (extendToSubpages) are visible and free of fe_group as well;
//   - it lies below the root page of a configured site whose language L is
//     enabled;
//   - for L > 0, its translation row for L passes the same row checks.
//
// A record (tt_content, or any TCA table) is public when its own row
// passes the restrictions of the live site (TCA enable columns, delete
// flag, live workspace) and fe_group, its language is L or -1 (all), a
// translation's default-language record is public too, and its page is
// public in L. Everything is re-read from the site database on every
// call; an index only proposes candidates.

// anonymousGroups are the frontend groups of a visitor without login:
// 0 (everybody) and -1 (hide at login).
func feGroupPublic(v string) bool {
	v = strings.TrimSpace(v)
	if v == "" {
		return true
	}
	for _, g := range strings.Split(v, ",") {
		switch strings.TrimSpace(g) {
		case "0", "-1":
			return true
		}
	}
	return false
}

// contentDoktype reports whether pages of doktype d render content of
// their own: standard and custom types below 199 (spacer), but not
// external links (3), shortcuts (4), backend user sections (6) or mount
// points (7).
func contentDoktype(d int) bool {
	switch d {
	case 3, 4, 6, 7:
		return false
	}
	return d > 0 && d < 199
}

const doktypeRecycler = 255

type pageRow struct {
	uid, pid     int64
	doktype      int
	hidden       bool
	start, end   int64
	feGroup      string
	extend       bool
	noSearch     bool
	lang         int
	parent       int64
	wsid, oid    int64
	state        int
	title, slug  string
	navTitle     string
	description  string
	loadedAsPage bool
}

func (p *pageRow) live() bool { return p.wsid == 0 && (p.oid == 0 || p.state == 4) }

func (p *pageRow) visible(now int64) bool {
	return !p.hidden && p.start <= now && (p.end == 0 || p.end > now) && feGroupPublic(p.feGroup)
}

type transKey struct {
	parent int64
	lang   int
}

type recKey struct {
	table string
	uid   int64
}

type recordRow struct {
	uid, pid int64
	lang     int
	parent   int64
	feGroup  string
}

// view is one call's picture of the live site: the site configurations and
// the pages and records loaded for the candidates. It is used by one call
// at a time.
type view struct {
	site  *typo3.Site
	sites []*siteconfig.Site
	now   int64

	pages   map[int64]*pageRow
	missing map[int64]bool
	trans   map[transKey]*pageRow
	asked   map[transKey]bool
	records map[recKey]*recordRow
	recSeen map[recKey]bool
}

// newView loads the site configurations (config/sites); a site without a
// project root has none, and then nothing is public.
func newView(site *typo3.Site) *view {
	v := &view{site: site, now: site.Now().Unix(), pages: map[int64]*pageRow{}, missing: map[int64]bool{},
		trans: map[transKey]*pageRow{}, asked: map[transKey]bool{}, records: map[recKey]*recordRow{}, recSeen: map[recKey]bool{}}
	if site.Root != "" {
		m, _ := extpath.Resolve(site.Root)
		sites, err := siteconfig.Load(siteconfig.Params{Root: site.Root, Extensions: m, Env: siteconfig.EnvLookup(site.Root)})
		if err == nil {
			for _, s := range sites {
				if s.Err == nil && s.RootPageID > 0 {
					v.sites = append(v.sites, s)
				}
			}
		}
	}
	return v
}

// pageColumns builds the select list of the pages loader, with literal
// defaults for columns the live schema lacks.
func (v *view) pageColumns(ctx context.Context) (string, error) {
	tab := v.site.TCA.Table("pages")
	if tab == nil {
		return "", fmt.Errorf("the TCA has no pages table")
	}
	ec := tab.Ctrl.EnableColumns
	names := []struct{ col, def string }{
		{"uid", "0"}, {"pid", "0"}, {"doktype", "1"}, {ec.Disabled, "0"}, {ec.StartTime, "0"}, {ec.EndTime, "0"},
		{ec.FeGroup, "''"}, {"extendToSubpages", "0"}, {"no_search", "0"},
		{tab.Ctrl.LanguageField, "0"}, {tab.Ctrl.TransOrigPointerField, "0"},
		{"t3ver_wsid", "0"}, {"t3ver_oid", "0"}, {"t3ver_state", "0"},
		{"title", "''"}, {"slug", "''"}, {"nav_title", "''"}, {"description", "''"},
	}
	var cols []string
	for _, n := range names {
		ok := n.col != ""
		if ok {
			var err error
			if ok, err = v.site.HasColumn(ctx, "pages", n.col); err != nil {
				return "", err
			}
		}
		if !ok {
			cols = append(cols, n.def)
			continue
		}
		q, err := v.site.DB.QuoteIdent(n.col)
		if err != nil {
			return "", err
		}
		cols = append(cols, q)
	}
	return strings.Join(cols, ", "), nil
}

func (v *view) queryPages(ctx context.Context, where func(a *typo3.Args) string) ([]*pageRow, error) {
	cols, err := v.pageColumns(ctx)
	if err != nil {
		return nil, err
	}
	db := v.site.DB
	a := db.NewArgs()
	cond := where(a) // bound first: it comes first in the statement
	notDeleted, err := v.site.Restrict(a, "pages", "", typo3.RestrictDeleted)
	if err != nil {
		return nil, err
	}
	q := `SELECT ` + cols + ` FROM ` + db.MustQuote("pages") + ` WHERE ` + cond + ` AND ` + notDeleted
	rows, err := db.SQL.QueryContext(ctx, q, a.Values()...)
	if err != nil {
		return nil, fmt.Errorf("read pages: %w", err)
	}
	defer rows.Close()
	var out []*pageRow
	for rows.Next() {
		var p pageRow
		var hidden, extend, noSearch sql.NullInt64
		var start, end, parent, wsid, oid, state, lang, doktype sql.NullInt64
		var fe, title, slug, nav, desc sql.NullString
		if err := rows.Scan(&p.uid, &p.pid, &doktype, &hidden, &start, &end, &fe, &extend, &noSearch, &lang, &parent,
			&wsid, &oid, &state, &title, &slug, &nav, &desc); err != nil {
			return nil, fmt.Errorf("read pages: %w", err)
		}
		p.doktype, p.hidden, p.start, p.end = int(doktype.Int64), hidden.Int64 != 0, start.Int64, end.Int64
		p.feGroup, p.extend, p.noSearch = fe.String, extend.Int64 != 0, noSearch.Int64 != 0
		p.lang, p.parent, p.wsid, p.oid, p.state = int(lang.Int64), parent.Int64, wsid.Int64, oid.Int64, int(state.Int64)
		p.title, p.slug, p.navTitle, p.description = title.String, slug.String, nav.String, desc.String
		out = append(out, &p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read pages: %w", err)
	}
	return out, nil
}

// loadPages loads the pages uids and every page above them, one query per
// tree level for all of them together.
func (v *view) loadPages(ctx context.Context, uids []int64) error {
	want := uids
	for depth := 0; depth <= typo3.MaxRootlineDepth && len(want) > 0; depth++ {
		var need []int64
		seen := map[int64]bool{}
		for _, u := range want {
			if u > 0 && v.pages[u] == nil && !v.missing[u] && !seen[u] {
				need = append(need, u)
				seen[u] = true
			}
		}
		if len(need) == 0 {
			return nil
		}
		rows, err := v.queryPages(ctx, func(a *typo3.Args) string {
			return v.site.DB.MustQuote("uid") + ` IN (` + a.AddInts(need) + `)`
		})
		if err != nil {
			return err
		}
		want = want[:0:0]
		for _, p := range rows {
			p.loadedAsPage = true
			v.pages[p.uid] = p
			want = append(want, p.pid)
			if p.lang > 0 && p.parent > 0 {
				want = append(want, p.parent)
			}
		}
		for _, u := range need {
			if v.pages[u] == nil {
				v.missing[u] = true
			}
		}
	}
	return nil
}

// loadTranslations loads the translations of the default-language pages
// parents into each language of langs (> 0), in one query.
func (v *view) loadTranslations(ctx context.Context, keys []transKey) error {
	tab := v.site.TCA.Table("pages")
	if tab == nil || tab.Ctrl.LanguageField == "" || tab.Ctrl.TransOrigPointerField == "" {
		for _, k := range keys {
			v.asked[k] = true
		}
		return nil
	}
	var parents []int64
	langs := map[int]bool{}
	var langList []int64
	seenParent := map[int64]bool{}
	for _, k := range keys {
		if v.asked[k] || k.lang <= 0 {
			continue
		}
		if !seenParent[k.parent] {
			seenParent[k.parent] = true
			parents = append(parents, k.parent)
		}
		if !langs[k.lang] {
			langs[k.lang] = true
			langList = append(langList, int64(k.lang))
		}
	}
	if len(parents) == 0 {
		return nil
	}
	rows, err := v.queryPages(ctx, func(a *typo3.Args) string {
		db := v.site.DB
		return db.MustQuote(tab.Ctrl.TransOrigPointerField) + ` IN (` + a.AddInts(parents) + `) AND ` +
			db.MustQuote(tab.Ctrl.LanguageField) + ` IN (` + a.AddInts(langList) + `)`
	})
	if err != nil {
		return err
	}
	for _, p := range rows {
		k := transKey{p.parent, p.lang}
		// The live row wins over workspace versions of the same translation.
		if cur := v.trans[k]; cur == nil || !cur.live() && p.live() {
			v.trans[k] = p
		}
	}
	for _, k := range keys {
		v.asked[k] = true
	}
	return nil
}

// loadRecords loads the records of table among uids that pass the live
// site's restrictions, and the default-language records of the
// translations among them.
func (v *view) loadRecords(ctx context.Context, table string, uids []int64) error {
	tab := v.site.TCA.Table(table)
	if tab == nil || readpolicy.IsSensitiveTable(table) {
		for _, u := range uids {
			v.recSeen[recKey{table, u}] = true
		}
		return nil
	}
	for round := 0; round < 2 && len(uids) > 0; round++ {
		var need []int64
		for _, u := range uids {
			if !v.recSeen[recKey{table, u}] {
				need = append(need, u)
				v.recSeen[recKey{table, u}] = true
			}
		}
		if len(need) == 0 {
			return nil
		}
		db := v.site.DB
		a := db.NewArgs()
		// "?" placeholders bind by position: the IN list comes first in
		// the statement, so it is bound first.
		in := a.AddInts(need)
		restrict, err := v.site.Restrict(a, table, "", typo3.RestrictLive)
		if err != nil {
			return err
		}
		cols := db.MustQuote("uid") + `, ` + db.MustQuote("pid")
		for _, c := range []string{tab.Ctrl.LanguageField, tab.Ctrl.TransOrigPointerField, tab.Ctrl.EnableColumns.FeGroup} {
			ok := c != ""
			if ok {
				if ok, err = v.site.HasColumn(ctx, table, c); err != nil {
					return err
				}
			}
			if ok {
				cols += `, ` + db.MustQuote(c)
			} else if c == tab.Ctrl.EnableColumns.FeGroup {
				cols += `, ''`
			} else {
				cols += `, 0`
			}
		}
		q := `SELECT ` + cols + ` FROM ` + db.MustQuote(table) + ` WHERE ` + db.MustQuote("uid") + ` IN (` + in + `) AND ` + restrict
		rows, err := db.SQL.QueryContext(ctx, q, a.Values()...)
		if err != nil {
			return fmt.Errorf("read %s: %w", table, err)
		}
		uids = uids[:0:0]
		for rows.Next() {
			var r recordRow
			var lang, parent sql.NullInt64
			var fe sql.NullString
			if err := rows.Scan(&r.uid, &r.pid, &lang, &parent, &fe); err != nil {
				rows.Close()
				return fmt.Errorf("read %s: %w", table, err)
			}
			r.lang, r.parent, r.feGroup = int(lang.Int64), parent.Int64, fe.String
			v.records[recKey{table, r.uid}] = &r
			if r.lang > 0 && r.parent > 0 {
				uids = append(uids, r.parent)
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("read %s: %w", table, err)
		}
	}
	return nil
}

// prepare loads, in a bounded number of queries, everything the public
// checks of cands need.
func (v *view) prepare(ctx context.Context, cands []Candidate) error {
	var pages []int64
	recs := map[string][]int64{}
	for _, c := range cands {
		if c.Record.Table != "" && c.Record.Table != "pages" {
			recs[c.Record.Table] = append(recs[c.Record.Table], c.Record.UID)
		}
	}
	for table, uids := range recs {
		if err := v.loadRecords(ctx, table, uids); err != nil {
			return err
		}
	}
	for _, c := range cands {
		pages = append(pages, c.Page)
		if r := v.records[recKey{c.Record.Table, c.Record.UID}]; r != nil {
			pages = append(pages, r.pid)
		}
	}
	if err := v.loadPages(ctx, pages); err != nil {
		return err
	}
	var keys []transKey
	for _, c := range cands {
		if p := v.defaultPage(c.Page); p != nil && c.Lang > 0 {
			keys = append(keys, transKey{p.uid, c.Lang})
		}
	}
	return v.loadTranslations(ctx, keys)
}

// defaultPage maps a page uid (default-language or translation) to its
// loaded default-language row.
func (v *view) defaultPage(uid int64) *pageRow {
	p := v.pages[uid]
	if p != nil && p.lang > 0 && p.parent > 0 {
		p = v.pages[p.parent]
	}
	if p == nil || p.lang != 0 {
		return nil
	}
	return p
}

// citation is where a public passage can be read.
type citation struct {
	Site  string
	Page  int64
	Lang  int
	Title string
	URL   string
	// Description is the page's (translation's) description, public as
	// the page's meta description.
	Description string
}

// publicPage reports whether page uid (either language's row) is public in
// language lang, and on which site (siteID "" means any); it needs
// prepare to have loaded it.
func (v *view) publicPage(uid int64, lang int, siteID string) (*citation, bool) {
	p := v.defaultPage(uid)
	if p == nil || !p.live() || !p.visible(v.now) || !contentDoktype(p.doktype) || p.noSearch {
		return nil, false
	}
	// The rootline: every page above must be loaded, live, no recycler,
	// and visible where it extends its visibility to subpages.
	var line []int64
	seen := map[int64]bool{}
	for cur := p; ; {
		line = append(line, cur.uid)
		if cur.pid == 0 {
			break
		}
		up := v.pages[cur.pid]
		if up == nil || seen[up.uid] || len(line) > typo3.MaxRootlineDepth || up.lang != 0 {
			return nil, false
		}
		seen[up.uid] = true
		if !up.live() || up.doktype == doktypeRecycler || up.extend && !up.visible(v.now) {
			return nil, false
		}
		cur = up
	}
	cfg, language := v.siteOf(line, lang)
	if cfg == nil || siteID != "" && cfg.Identifier != siteID {
		return nil, false
	}
	title, slug, desc := p.title, p.slug, p.description
	if lang > 0 {
		t := v.trans[transKey{p.uid, lang}]
		if t == nil || !t.live() || !t.visible(v.now) || t.noSearch {
			return nil, false
		}
		title, slug, desc = t.title, t.slug, t.description
	}
	return &citation{Site: cfg.Identifier, Page: p.uid, Lang: lang, Title: title, URL: joinURL(language.Base, slug), Description: desc}, true
}

// siteOf finds the configured site whose root page is on line (the page
// first, then upwards: the nearest root wins) and its language lang, if
// that language is enabled there.
func (v *view) siteOf(line []int64, lang int) (*siteconfig.Site, *siteconfig.Language) {
	for _, uid := range line {
		for _, s := range v.sites {
			if s.RootPageID != uid {
				continue
			}
			for i := range s.Languages {
				if l := &s.Languages[i]; l.ID == int64(lang) && l.Enabled {
					return s, l
				}
			}
			return nil, nil
		}
	}
	return nil, nil
}

// publicRecord reports whether the record is public in language lang, and
// returns its page's citation.
func (v *view) publicRecord(table string, uid int64, lang int, siteID string) (*citation, bool) {
	r := v.records[recKey{table, uid}]
	if r == nil || !feGroupPublic(r.feGroup) || r.lang != lang && r.lang != -1 {
		return nil, false
	}
	if r.lang > 0 && r.parent > 0 {
		p := v.records[recKey{table, r.parent}]
		if p == nil || !feGroupPublic(p.feGroup) {
			return nil, false
		}
	}
	return v.publicPage(r.pid, lang, siteID)
}

// check decides one candidate.
func (v *view) check(c Candidate, siteID string) (*citation, bool) {
	if c.Record.Table != "" && c.Record.Table != "pages" {
		return v.publicRecord(c.Record.Table, c.Record.UID, c.Lang, siteID)
	}
	return v.publicPage(c.Page, c.Lang, siteID)
}

// joinURL appends a page slug to a language base.
func joinURL(base, slug string) string {
	if slug == "" || slug == "/" {
		if base == "" {
			return "/"
		}
		return base
	}
	return strings.TrimSuffix(base, "/") + "/" + strings.TrimPrefix(slug, "/")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
