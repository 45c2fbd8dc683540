package sitesearch

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/typo3"
)

// keSearch reads EXT:ke_search's index table, tx_kesearch_index: one row
// per indexed page or record, with its target page (targetpid), language,
// frontend groups and time window. Rows the index itself marks as not
// public (fe_group, starttime, endtime) are left out in SQL; the page
// checks follow. On MySQL/MariaDB the table's FULLTEXT index (title,
// content) ranks; elsewhere LIKE finds rows holding every word, then any
// word, and rank orders them. hidden_content is never read.
type keSearch struct{ site *typo3.Site }

const keTable = "tx_kesearch_index"

func (k *keSearch) Name() string { return "ke_search" }

func (k *keSearch) Available(ctx context.Context, _ *view) (bool, error) {
	return tableHasRows(ctx, k.site, keTable)
}

func (k *keSearch) columns() string {
	q := k.site.DB.MustQuote
	return strings.Join([]string{q("uid"), q("targetpid"), q("language"), q("title"), q("content"), q("fe_group")}, ", ")
}

// publicWhere is the index's own public filter. Only rows of ke_search's
// page indexer (type page) are read: rows of its other indexers (news,
// files, …) stand for records whose visibility t3agent cannot check
// against the live site.
func (k *keSearch) publicWhere(a *typo3.Args, now int64) string {
	q := k.site.DB.MustQuote
	return q("type") + ` = 'page' AND ` + q("fe_group") + ` IN ('', '0', '-1') AND ` + q("starttime") + ` <= ` + a.Add(now) +
		` AND (` + q("endtime") + ` = 0 OR ` + q("endtime") + ` > ` + a.Add(now) + `)`
}

func (k *keSearch) Search(ctx context.Context, v *view, p SearchParams) ([]Candidate, error) {
	db := k.site.DB
	q := db.MustQuote
	langs := []int64{-1}
	for _, l := range p.Languages {
		langs = append(langs, int64(l))
	}
	if db.Dialect == typo3.DialectMySQL {
		a := db.NewArgs()
		words := strings.Join(p.Terms, " ")
		match := func() string {
			return `MATCH(` + q("title") + `, ` + q("content") + `) AGAINST (` + a.Add(words) + ` IN NATURAL LANGUAGE MODE)`
		}
		sel := `SELECT ` + k.columns() + `, ` + match() + ` AS score FROM ` + q(keTable) + ` WHERE ` + match() + ` > 0 AND ` +
			q("language") + ` IN (` + a.AddInts(langs) + `) AND ` + k.publicWhere(a, v.now) + ` ORDER BY score DESC LIMIT ` + strconv.Itoa(p.Limit)
		return k.read(ctx, sel, a.Values(), true)
	}
	var out []Candidate
	seen := map[int64]bool{}
	for _, all := range []bool{true, false} {
		if all && len(p.Terms) == 1 {
			continue
		}
		a := db.NewArgs()
		sel := `SELECT ` + k.columns() + `, 0 FROM ` + q(keTable) + ` WHERE ` +
			likeAny(k.site, a, []string{q("title"), q("content")}, p.Terms, all) + ` AND ` +
			q("language") + ` IN (` + a.AddInts(langs) + `) AND ` + k.publicWhere(a, v.now) +
			` LIMIT ` + strconv.Itoa(p.Limit*4)
		cands, err := k.read(ctx, sel, a.Values(), false)
		if err != nil {
			return nil, err
		}
		for _, c := range cands {
			uid, _ := strconv.ParseInt(c.ID.Parts[0], 10, 64)
			if !seen[uid] {
				seen[uid] = true
				out = append(out, c)
			}
		}
		if len(out) >= p.Limit*4 {
			break
		}
	}
	rank(out, p.Terms)
	if len(out) > p.Limit {
		out = out[:p.Limit]
	}
	return out, nil
}

func (k *keSearch) read(ctx context.Context, q string, args []any, scored bool) ([]Candidate, error) {
	rows, err := k.site.DB.SQL.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", keTable, err)
	}
	defer rows.Close()
	var out []Candidate
	for rows.Next() {
		var uid, lang int64
		var target, title, content, fe sql.NullString
		var score sql.NullFloat64
		if err := rows.Scan(&uid, &target, &lang, &title, &content, &fe, &score); err != nil {
			return nil, fmt.Errorf("read %s: %w", keTable, err)
		}
		page, err := strconv.ParseInt(strings.TrimSpace(target.String), 10, 64)
		if err != nil || page <= 0 || !feGroupPublic(fe.String) {
			continue
		}
		c := Candidate{ID: SourceID{Backend: "ke_search", Parts: []string{itoa(uid)}}, Page: page, Lang: int(max(lang, 0)),
			Title: readpolicy.StripTags(title.String), Text: readpolicy.StripTags(content.String), LiveText: true}
		if scored {
			c.Score = score.Float64
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

func (k *keSearch) Fetch(ctx context.Context, v *view, id SourceID) (*Candidate, error) {
	if len(id.Parts) != 1 {
		return nil, nil
	}
	uid, err := strconv.ParseInt(id.Parts[0], 10, 64)
	if err != nil {
		return nil, nil
	}
	if ok, err := tableHasRows(ctx, k.site, keTable); err != nil || !ok {
		return nil, err
	}
	db := k.site.DB
	a := db.NewArgs()
	sel := `SELECT ` + k.columns() + `, 0 FROM ` + db.MustQuote(keTable) + ` WHERE ` + db.MustQuote("uid") + ` = ` + a.Add(uid) +
		` AND ` + k.publicWhere(a, v.now)
	cands, err := k.read(ctx, sel, a.Values(), false)
	if err != nil || len(cands) == 0 {
		return nil, err
	}
	return &cands[0], nil
}
