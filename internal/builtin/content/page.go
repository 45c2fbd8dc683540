package content

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

const (
	pageMaxElements = 100
	pageExcerpt     = 200
)

type getPageContent struct{ base }

func (t *getPageContent) Spec() tool.Spec {
	return spec("get_page_content",
		"Shows one TYPO3 page and its content elements as the backend's page module would: first "+
			"`Page [uid] title (doktype N, slug)`, then up to 100 content elements ordered by column (colPos) "+
			"and sorting, each `[uid] colPos=X CType · header` with a 200-character plain-text excerpt of its "+
			"body text. language selects the content language (default 0, the default language; elements set "+
			"to all languages, -1, are included). Admins also see hidden and scheduled elements, marked as "+
			"such; other users see only what is visible on the live site. Use it to see what is on a page; use "+
			"search_records to find the page first, and read_records for an element's other fields.",
		`{"type":"object","additionalProperties":false,"required":["uid"],"properties":{`+
			`"uid":{"type":"integer","minimum":1,"description":"Page uid (default language)."},`+
			`"language":{"type":"integer","minimum":0,"default":0,"description":"sys_language_uid of the content to show."}}}`)
}

func (t *getPageContent) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	user := call.Actor
	if user == nil {
		return tool.Errorf("%s", readpolicy.DeniedUser), nil
	}
	if err := allowedArgs(args, "uid", "language"); err != nil {
		return refuse(err), nil
	}
	uid, present, err := intArg(args, "uid", 0, 1, math.MaxInt32)
	if err != nil {
		return refuse(err), nil
	}
	if !present {
		return tool.Errorf("Argument uid is required."), nil
	}
	lang, _, err := intArg(args, "language", 0, 0, math.MaxInt32)
	if err != nil {
		return refuse(err), nil
	}
	denied := tool.Errorf("%s", readpolicy.DeniedPage)
	// Both tables, unlike the reference, which never asked about
	// tt_content.
	if !t.policy.CanReadTable(user, "pages") || !t.policy.CanReadTable(user, "tt_content") {
		return denied, nil
	}
	rf := readpolicy.NewRowFilter(t.site, t.policy, user)
	if !rf.CanAccessLanguage(lang) {
		return denied, nil
	}
	// The one page decision, which the record tools ask about every row's
	// page too.
	ok, err := rf.PageVisible(ctx, uid)
	if err != nil {
		return tool.Result{}, err
	}
	if !ok {
		return denied, nil
	}
	restr := readpolicy.PageContentRestrictions(user)
	// The decision has passed the page; its row is read for display only,
	// hidden and timed pages included (admins see them, marked).
	page, err := t.page(ctx, uid)
	if err != nil {
		return tool.Result{}, fmt.Errorf("get_page_content page %d: %w", uid, err)
	}
	if page == nil {
		return denied, nil
	}

	elems, more, err := t.elements(ctx, uid, lang, restr)
	if err != nil {
		return tool.Result{}, fmt.Errorf("get_page_content content of %d: %w", uid, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Page [%d] %s (doktype %d, %s)%s\n", uid, orNone(cut(readpolicy.StripTags(page.title), 200), "[no title]"),
		page.doktype, orNone(page.slug, "no slug"), t.marks(page.vis))
	var shown []element
	for _, e := range elems {
		ok, err := rf.Allow(ctx, "tt_content", readpolicy.Row{UID: e.uid, PID: uid, Language: e.lang})
		if err != nil {
			return tool.Result{}, err
		}
		if ok {
			shown = append(shown, e)
		}
	}
	switch {
	case len(shown) == 0:
		fmt.Fprintf(&b, "No content elements in language %d.", lang)
	case more:
		fmt.Fprintf(&b, "The first %d content elements in language %d (the page has more):\n", len(shown), lang)
	default:
		fmt.Fprintf(&b, "%d content element(s) in language %d:\n", len(shown), lang)
	}
	for _, e := range shown {
		fmt.Fprintf(&b, "[%d] colPos=%d %s · %s%s\n", e.uid, e.colPos, orNone(e.ctype, "?"),
			orNone(cut(readpolicy.StripTags(e.header), 200), "[no header]"), t.marks(e.vis))
		if x := cut(readpolicy.StripTags(e.body), pageExcerpt); x != "" {
			b.WriteString("    " + x + "\n")
		}
	}
	return tool.Text(strings.TrimRight(b.String(), "\n")), nil
}

// visibility is what an admin is told about a row the live site hides.
type visibility struct {
	hidden          bool
	start, end, now int64
}

// marks renders the visibility flags; only admins see such rows at all.
func (t *getPageContent) marks(v visibility) string {
	var m []string
	if v.hidden {
		m = append(m, "[hidden]")
	}
	if v.start > v.now {
		m = append(m, "[visible from "+utcDay(v.start)+"]")
	}
	if v.end != 0 && v.end <= v.now {
		m = append(m, "[expired "+utcDay(v.end)+"]")
	}
	if len(m) == 0 {
		return ""
	}
	return " " + strings.Join(m, " ")
}

func orNone(s, none string) string {
	if s == "" {
		return none
	}
	return s
}

type pageRow struct {
	title, slug string
	doktype     int64
	vis         visibility
}

// optional selects column when the live table has it, else a constant, so
// an older or trimmed schema still answers.
func (t *getPageContent) optional(ctx context.Context, a *typo3.Args, table, column, fallback string) (string, error) {
	ok, err := t.hasColumn(ctx, table, column)
	if err != nil || !ok {
		return fallback, err
	}
	return qcol(a, table, column)
}

// enableColumns selects hidden, starttime and endtime from the TCA ctrl
// names, or 0 where the table has none.
func (t *getPageContent) enableColumns(ctx context.Context, a *typo3.Args, table string) ([]string, error) {
	ec := t.policy.TCA().Table(table).Ctrl.EnableColumns
	var out []string
	for _, c := range []string{ec.Disabled, ec.StartTime, ec.EndTime} {
		s, err := t.optional(ctx, a, table, c, "0")
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// page reads the row of page uid for display, hidden and timed pages
// included: whether it may be shown is PageVisible's question.
func (t *getPageContent) page(ctx context.Context, uid int64) (*pageRow, error) {
	db := t.site.DB
	a := db.NewArgs()
	sel := []string{}
	for _, c := range []struct{ col, fallback string }{
		{"title", "''"}, {"slug", "''"}, {"doktype", "0"},
	} {
		s, err := t.optional(ctx, a, "pages", c.col, c.fallback)
		if err != nil {
			return nil, err
		}
		sel = append(sel, s)
	}
	ec, err := t.enableColumns(ctx, a, "pages")
	if err != nil {
		return nil, err
	}
	sel = append(sel, ec...)
	restrict, err := t.site.Restrict(a, "pages", "", typo3.RestrictDeleted|typo3.RestrictLiveWorkspace)
	if err != nil {
		return nil, err
	}
	uidCol, _ := qcol(a, "pages", "uid")
	// restrict's placeholders come first, so it goes first in the text.
	stmt := "SELECT " + strings.Join(sel, ", ") + " FROM " + db.MustQuote("pages") +
		" WHERE " + restrict + " AND " + uidCol + " = " + a.Add(uid)
	rows, err := query(ctx, db, stmt, a.Values())
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	r := rows[0]
	return &pageRow{
		title: r[0].s, slug: r[1].s, doktype: r[2].int(),
		vis: visibility{hidden: r[3].int() != 0, start: r[4].int(), end: r[5].int(), now: t.site.Now().Unix()},
	}, nil
}

type element struct {
	uid, colPos, lang   int64
	ctype, header, body string
	vis                 visibility
}

// elements reads up to pageMaxElements content elements of page uid in
// language lang (and "all languages", -1), ordered by colPos, sorting and
// uid; more tells whether there were further ones.
func (t *getPageContent) elements(ctx context.Context, uid, lang int64, restr typo3.Restriction) ([]element, bool, error) {
	db := t.site.DB
	a := db.NewArgs()
	const table = "tt_content"
	langField := t.policy.LanguageField(table)
	var sel []string
	for _, c := range []struct{ col, fallback string }{
		{"uid", "0"}, {"colPos", "0"}, {langField, "0"}, {"CType", "''"}, {"header", "''"}, {"bodytext", "''"},
	} {
		s, err := t.optional(ctx, a, table, c.col, c.fallback)
		if err != nil {
			return nil, false, err
		}
		sel = append(sel, s)
	}
	ec, err := t.enableColumns(ctx, a, table)
	if err != nil {
		return nil, false, err
	}
	sel = append(sel, ec...)
	restrict, err := t.site.Restrict(a, table, "", restr)
	if err != nil {
		return nil, false, err
	}
	pidCol, _ := qcol(a, table, "pid")
	where := restrict + " AND " + pidCol + " = " + a.Add(uid)
	if sel[2] != "0" {
		where += " AND " + sel[2] + " IN (" + a.Add(lang) + ", " + a.Add(int64(-1)) + ")"
	} else if lang != 0 {
		// Without a language column every element is in the default language.
		return nil, false, nil
	}
	order := []string{}
	for _, c := range []string{"colPos", t.policy.TCA().Table(table).Ctrl.SortBy, "uid"} {
		ok, err := t.hasColumn(ctx, table, c)
		if err != nil {
			return nil, false, err
		}
		if ok {
			q, _ := qcol(a, table, c)
			order = append(order, q)
		}
	}
	stmt := "SELECT " + strings.Join(sel, ", ") + " FROM " + db.MustQuote(table) + " WHERE " + where +
		" ORDER BY " + strings.Join(order, ", ") + " LIMIT " + strconv.Itoa(pageMaxElements+1)
	rows, err := query(ctx, db, stmt, a.Values())
	if err != nil {
		return nil, false, err
	}
	now := t.site.Now().Unix()
	var out []element
	for i, r := range rows {
		if i == pageMaxElements {
			return out, true, nil
		}
		out = append(out, element{
			uid: r[0].int(), colPos: r[1].int(), lang: r[2].int(), ctype: r[3].s, header: r[4].s, body: r[5].s,
			vis: visibility{hidden: r[6].int() != 0, start: r[7].int(), end: r[8].int(), now: now},
		})
	}
	return out, false, nil
}
