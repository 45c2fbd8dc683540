package sitesearch

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/siteindex"
	"github.com/t3agent/t3agent/internal/typo3"
)

// Index is t3agent's own site index (package siteindex) as the site
// search uses it: ranked candidates, which are then read again live.
type Index interface {
	Query(ctx context.Context, p siteindex.QueryParams) ([]siteindex.Hit, error)
}

// ownIndex asks t3agent's own index for pages and content elements,
// pre-filtered by the indexed visibility (PublicOnly), then reads each
// candidate's text from the live site: the index may be as old as its
// last sync, the answer never is.
type ownIndex struct {
	site *typo3.Site
	ix   Index
}

// indexTables are the tables whose rows are passages of a page.
var indexTables = []string{"pages", "tt_content"}

func (o *ownIndex) Name() string { return "index" }

func (o *ownIndex) Available(ctx context.Context, _ *view) (bool, error) {
	_, err := o.ix.Query(ctx, siteindex.QueryParams{Limit: 1})
	if errors.Is(err, siteindex.ErrAbsent) {
		return false, nil
	}
	return err == nil, err
}

func (o *ownIndex) Search(ctx context.Context, v *view, p SearchParams) ([]Candidate, error) {
	hits, err := o.ix.Query(ctx, siteindex.QueryParams{Text: strings.Join(p.Terms, " "), Tables: indexTables,
		Languages: append([]int{-1}, p.Languages...), PublicOnly: true, Limit: p.Limit})
	if err != nil {
		return nil, err
	}
	var out []Candidate
	for _, h := range hits {
		c := Candidate{ID: SourceID{Backend: "index", Parts: []string{h.Table, itoa(h.UID)}}, Lang: max(h.Language, 0), Score: h.Score}
		if h.Table == "pages" {
			c.Page = h.UID
		} else {
			c.Page, c.Record = h.PID, RecordRef{Table: h.Table, UID: h.UID}
		}
		out = append(out, c)
	}
	if err := o.texts(ctx, out); err != nil {
		return nil, err
	}
	return out, nil
}

// textColumns are read live for a passage's title and text.
var textColumns = map[string][2][]string{
	"pages":      {{"title"}, {"subtitle", "description", "abstract"}},
	"tt_content": {{"header"}, {"subheader", "bodytext"}},
}

// texts reads the live title and text of cands, one query per table.
func (o *ownIndex) texts(ctx context.Context, cands []Candidate) error {
	byTable := map[string][]int{}
	for i, c := range cands {
		byTable[c.ID.Parts[0]] = append(byTable[c.ID.Parts[0]], i)
	}
	db := o.site.DB
	for table, idx := range byTable {
		cols, ok := textColumns[table]
		if !ok {
			continue
		}
		var names []string
		for _, c := range append(append([]string{}, cols[0]...), cols[1]...) {
			if has, err := o.site.HasColumn(ctx, table, c); err != nil {
				return err
			} else if has {
				names = append(names, c)
			}
		}
		if len(names) == 0 {
			continue
		}
		a := db.NewArgs()
		uids := make([]int64, len(idx))
		for j, i := range idx {
			uids[j], _ = strconv.ParseInt(cands[i].ID.Parts[1], 10, 64)
		}
		sel := make([]string, len(names))
		for j, n := range names {
			sel[j] = db.MustQuote(n)
		}
		rows, err := db.SQL.QueryContext(ctx, `SELECT `+db.MustQuote("uid")+`, `+strings.Join(sel, ", ")+` FROM `+db.MustQuote(table)+
			` WHERE `+db.MustQuote("uid")+` IN (`+a.AddInts(uids)+`)`, a.Values()...)
		if err != nil {
			return fmt.Errorf("read %s: %w", table, err)
		}
		texts := map[int64][2]string{}
		for rows.Next() {
			vals := make([]sql.NullString, len(names))
			dest := []any{new(int64)}
			for j := range vals {
				dest = append(dest, &vals[j])
			}
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return fmt.Errorf("read %s: %w", table, err)
			}
			var title, body []string
			for j, n := range names {
				if readpolicy.IsCredentialColumn(n) || vals[j].String == "" {
					continue
				}
				if n == cols[0][0] {
					title = append(title, readpolicy.StripTags(vals[j].String))
				} else {
					body = append(body, readpolicy.StripTags(vals[j].String))
				}
			}
			texts[*dest[0].(*int64)] = [2]string{strings.Join(title, " "), strings.Join(body, " ")}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("read %s: %w", table, err)
		}
		for _, i := range idx {
			uid, _ := strconv.ParseInt(cands[i].ID.Parts[1], 10, 64)
			t := texts[uid]
			cands[i].Title, cands[i].Text = t[0], strings.TrimSpace(t[0]+". "+t[1])
		}
	}
	return nil
}

func (o *ownIndex) Fetch(ctx context.Context, v *view, id SourceID) (*Candidate, error) {
	if len(id.Parts) != 2 {
		return nil, nil
	}
	table := id.Parts[0]
	tab := o.site.TCA.Table(table)
	uid, err := strconv.ParseInt(id.Parts[1], 10, 64)
	if _, ok := textColumns[table]; !ok || err != nil || tab == nil || tab.Ctrl.LanguageField == "" {
		return nil, nil
	}
	// The live row decides the page and language; the checks follow.
	db := o.site.DB
	a := db.NewArgs()
	var pid, lang int64
	err = db.SQL.QueryRowContext(ctx, `SELECT `+db.MustQuote("pid")+`, `+db.MustQuote(tab.Ctrl.LanguageField)+` FROM `+db.MustQuote(table)+
		` WHERE `+db.MustQuote("uid")+` = `+a.Add(uid), a.Values()...).Scan(&pid, &lang)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", table, err)
	}
	c := Candidate{ID: id, Lang: int(max(lang, 0))}
	if table == "pages" {
		c.Page = uid
	} else {
		c.Page, c.Record = pid, RecordRef{Table: table, UID: uid}
	}
	cands := []Candidate{c}
	if err := o.texts(ctx, cands); err != nil {
		return nil, err
	}
	return &cands[0], nil
}
