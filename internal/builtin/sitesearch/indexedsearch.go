package sitesearch

import (
	"context"
	"crypto/md5"
	"database/sql"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/typo3"
)

// indexedSearch reads the tables of TYPO3's indexed_search: index_phash
// (one row per indexed page view: page, language, title, the frontend
// groups it was indexed for), index_rel (which word a phash holds, how
// often), index_words and index_fulltext (the page's text). A word's id
// (wid) is the md5 of the lower-cased word, as indexed_search computes
// it. Only TYPO3 pages (item_type 0) indexed for a visitor without login
// (gr_list "0,-1") count. Candidates are ranked by how many of the words
// they hold, then by frequency; when no word is known, LIKE over
// index_fulltext finds them instead.
type indexedSearch struct{ site *typo3.Site }

func (x *indexedSearch) Name() string { return "indexed_search" }

func (x *indexedSearch) Available(ctx context.Context, _ *view) (bool, error) {
	for _, t := range []string{"index_rel", "index_fulltext"} {
		if cols, err := x.site.Columns(ctx, t); err != nil || len(cols) == 0 {
			return false, err
		}
	}
	return tableHasRows(ctx, x.site, "index_phash")
}

// wid is indexed_search's word id.
func wid(word string) string {
	sum := md5.Sum([]byte(strings.ToLower(word)))
	return hex.EncodeToString(sum[:])
}

// phashFilter is the public filter on index_phash (alias p).
func (x *indexedSearch) phashFilter(a *typo3.Args, langs []int) string {
	q := x.site.DB.MustQuote
	ls := make([]int64, len(langs))
	for i, l := range langs {
		ls[i] = int64(l)
	}
	return `p.` + q("item_type") + ` = '0' AND p.` + q("gr_list") + ` = '0,-1' AND p.` + q("sys_language_uid") + ` IN (` + a.AddInts(ls) + `)`
}

func (x *indexedSearch) Search(ctx context.Context, v *view, p SearchParams) ([]Candidate, error) {
	db := x.site.DB
	q := db.MustQuote
	a := db.NewArgs()
	wids := make([]string, len(p.Terms))
	for i, t := range p.Terms {
		wids[i] = a.Add(wid(t))
	}
	head := `SELECT p.` + q("phash") + `, p.` + q("data_page_id") + `, p.` + q("sys_language_uid") + `, p.` + q("item_title")
	sel := head + `, COUNT(*) AS hits, SUM(r.` + q("freq") + `) AS freq FROM ` + q("index_rel") + ` r JOIN ` + q("index_phash") +
		` p ON p.` + q("phash") + ` = r.` + q("phash") + ` WHERE r.` + q("wid") + ` IN (` + strings.Join(wids, ", ") + `) AND ` +
		x.phashFilter(a, p.Languages) + ` GROUP BY p.` + q("phash") + `, p.` + q("data_page_id") + `, p.` + q("sys_language_uid") +
		`, p.` + q("item_title") + ` ORDER BY hits DESC, freq DESC LIMIT ` + strconv.Itoa(p.Limit)
	cands, err := x.read(ctx, sel, a.Values())
	if err != nil {
		return nil, err
	}
	if len(cands) == 0 {
		a = db.NewArgs()
		sel = head + `, 0, 0 FROM ` + q("index_phash") + ` p JOIN ` + q("index_fulltext") + ` f ON f.` + q("phash") + ` = p.` + q("phash") +
			` WHERE ` + likeAny(x.site, a, []string{"f." + q("fulltextdata")}, p.Terms, false) + ` AND ` + x.phashFilter(a, p.Languages) +
			` LIMIT ` + strconv.Itoa(p.Limit)
		if cands, err = x.read(ctx, sel, a.Values()); err != nil {
			return nil, err
		}
	}
	if err := x.texts(ctx, cands); err != nil {
		return nil, err
	}
	rank(cands, p.Terms)
	return cands, nil
}

func (x *indexedSearch) read(ctx context.Context, q string, args []any) ([]Candidate, error) {
	rows, err := x.site.DB.SQL.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read index_phash: %w", err)
	}
	defer rows.Close()
	var out []Candidate
	for rows.Next() {
		var phash string
		var page, lang, hits sql.NullInt64
		var title sql.NullString
		var freq sql.NullFloat64
		if err := rows.Scan(&phash, &page, &lang, &title, &hits, &freq); err != nil {
			return nil, fmt.Errorf("read index_phash: %w", err)
		}
		if !phashPattern.MatchString(phash) || page.Int64 <= 0 {
			continue
		}
		out = append(out, Candidate{ID: SourceID{Backend: "indexed_search", Parts: []string{phash}}, Page: page.Int64,
			Lang: int(lang.Int64), Title: readpolicy.StripTags(title.String), LiveText: true})
	}
	return out, rows.Err()
}

var phashPattern = regexp.MustCompile(`^[0-9a-f]{1,32}$`)

// texts reads the full text of cands in one query.
func (x *indexedSearch) texts(ctx context.Context, cands []Candidate) error {
	if len(cands) == 0 {
		return nil
	}
	db := x.site.DB
	a := db.NewArgs()
	var ph []string
	at := map[string][]int{}
	for i, c := range cands {
		if at[c.ID.Parts[0]] == nil {
			ph = append(ph, a.Add(c.ID.Parts[0]))
		}
		at[c.ID.Parts[0]] = append(at[c.ID.Parts[0]], i)
	}
	rows, err := db.SQL.QueryContext(ctx, `SELECT `+db.MustQuote("phash")+`, `+db.MustQuote("fulltextdata")+` FROM `+db.MustQuote("index_fulltext")+
		` WHERE `+db.MustQuote("phash")+` IN (`+strings.Join(ph, ", ")+`)`, a.Values()...)
	if err != nil {
		return fmt.Errorf("read index_fulltext: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var phash string
		var text sql.NullString
		if err := rows.Scan(&phash, &text); err != nil {
			return fmt.Errorf("read index_fulltext: %w", err)
		}
		for _, i := range at[phash] {
			cands[i].Text = readpolicy.StripTags(text.String)
		}
	}
	return rows.Err()
}

func (x *indexedSearch) Fetch(ctx context.Context, v *view, id SourceID) (*Candidate, error) {
	if len(id.Parts) != 1 || !phashPattern.MatchString(id.Parts[0]) {
		return nil, nil
	}
	if ok, err := x.Available(ctx, v); err != nil || !ok {
		return nil, err
	}
	db := x.site.DB
	q := db.MustQuote
	a := db.NewArgs()
	langs := []int{}
	for _, s := range v.sites {
		for _, l := range s.Languages {
			langs = append(langs, int(l.ID))
		}
	}
	if len(langs) == 0 {
		return nil, nil
	}
	sel := `SELECT p.` + q("phash") + `, p.` + q("data_page_id") + `, p.` + q("sys_language_uid") + `, p.` + q("item_title") +
		`, 0, 0 FROM ` + q("index_phash") + ` p WHERE p.` + q("phash") + ` = ` + a.Add(id.Parts[0]) + ` AND ` + x.phashFilter(a, langs)
	cands, err := x.read(ctx, sel, a.Values())
	if err != nil || len(cands) == 0 {
		return nil, err
	}
	if err := x.texts(ctx, cands[:1]); err != nil {
		return nil, err
	}
	return &cands[0], nil
}
