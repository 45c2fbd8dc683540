package sitesearch

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/typo3"
)

// liveTexts replaces the text of page passages whose backend stores a
// copy of the page's text (ke_search, indexed_search) with the page's
// public content as it is now: its title and the headers and text of its
// content elements that pass the live site's restrictions and fe_group, in
// the passage's language (or all languages). An index copy made before an
// element was hidden or restricted thus never reaches an answer. One query
// for all passages.
func (v *view) liveTexts(ctx context.Context, ps []passage) error {
	tab := v.site.TCA.Table("tt_content")
	var pages []int64
	langs := map[int64]bool{-1: true, 0: true}
	for _, p := range ps {
		if p.LiveText {
			pages = append(pages, p.cite.Page)
			langs[int64(p.cite.Lang)] = true
		}
	}
	if len(pages) == 0 {
		return nil
	}
	type element struct {
		lang          int
		parent        int64
		uid           int64
		header, body  string
		publicByGroup bool
	}
	byPage := map[int64][]element{}
	if tab != nil && tab.Ctrl.LanguageField != "" {
		db := v.site.DB
		q := db.MustQuote
		a := db.NewArgs()
		var ls []int64
		for l := range langs {
			ls = append(ls, l)
		}
		parent, fe := "0", "''"
		if tab.Ctrl.TransOrigPointerField != "" {
			parent = q(tab.Ctrl.TransOrigPointerField)
		}
		if tab.Ctrl.EnableColumns.FeGroup != "" {
			fe = q(tab.Ctrl.EnableColumns.FeGroup)
		}
		where := q("pid") + ` IN (` + a.AddInts(pages) + `) AND ` + q(tab.Ctrl.LanguageField) + ` IN (` + a.AddInts(ls) + `)`
		restrict, err := v.site.Restrict(a, "tt_content", "", typo3.RestrictLive)
		if err != nil {
			return err
		}
		order := ""
		if tab.Ctrl.SortBy != "" {
			order = ` ORDER BY ` + q(tab.Ctrl.SortBy)
		}
		rows, err := db.SQL.QueryContext(ctx, `SELECT `+q("uid")+`, `+q("pid")+`, `+q(tab.Ctrl.LanguageField)+`, `+parent+`, `+fe+`, `+
			q("header")+`, `+q("bodytext")+` FROM `+q("tt_content")+` WHERE `+where+` AND `+restrict+order, a.Values()...)
		if err != nil {
			return fmt.Errorf("read tt_content: %w", err)
		}
		for rows.Next() {
			var e element
			var pid int64
			var lang, par sql.NullInt64
			var group, header, body sql.NullString
			if err := rows.Scan(&e.uid, &pid, &lang, &par, &group, &header, &body); err != nil {
				rows.Close()
				return fmt.Errorf("read tt_content: %w", err)
			}
			e.lang, e.parent, e.header, e.body = int(lang.Int64), par.Int64, header.String, body.String
			e.publicByGroup = feGroupPublic(group.String)
			byPage[pid] = append(byPage[pid], e)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("read tt_content: %w", err)
		}
	}
	for i := range ps {
		p := &ps[i]
		if !p.LiveText {
			continue
		}
		public := map[int64]bool{}
		for _, e := range byPage[p.cite.Page] {
			if e.publicByGroup && e.lang <= 0 {
				public[e.uid] = true
			}
		}
		parts := []string{p.cite.Title + "."}
		if d := readpolicy.StripTags(p.cite.Description); d != "" {
			parts = append(parts, d)
		}
		for _, e := range byPage[p.cite.Page] {
			// An element in the passage's language; a translation only
			// while its default-language element is public too.
			if !e.publicByGroup || e.lang != p.cite.Lang && e.lang != -1 || e.lang > 0 && e.parent > 0 && !public[e.parent] {
				continue
			}
			if h := readpolicy.StripTags(e.header); h != "" {
				parts = append(parts, h+".")
			}
			if b := readpolicy.StripTags(e.body); b != "" {
				parts = append(parts, b)
			}
		}
		p.Title, p.Text = p.cite.Title, strings.Join(parts, " ")
	}
	return nil
}
