package content

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/siteindex"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

const (
	searchDefaultLimit = 20
	searchMaxLimit     = 50
	searchExcerpt      = 120
	searchLabel        = 120
	// searchScanCap bounds how many matching rows one table may yield to
	// the row filter per call, so a user who may see few of many matches
	// costs a bounded number of queries.
	searchScanCap = 500
)

type searchRecords struct {
	base
	index *siteindex.Index // nil: always scan
}

func (t *searchRecords) Spec() tool.Spec {
	return spec("search_records",
		"Full-text search over the TYPO3 records the acting backend user may read: pages, content elements "+
			"and other TCA tables, matching the query as a case-insensitive substring of each table's searchable "+
			"text fields. Tables are searched in alphabetical order and share one result limit (default 20, at "+
			"most 50); within a table, records come in uid order. Each hit is one line `table:uid · label · pid N`, "+
			"followed by `match(field): …` with a 120-character excerpt when the match is not in the label. "+
			"Hidden, timed-out, deleted and draft (workspace) records are never returned, and records on pages "+
			"the user may not see are left out, so fewer hits than the limit do not prove there are no more. "+
			"Use it to find where something is mentioned; then use get_page_content or read_records for details. "+
			"Name a table to search only that table.",
		`{"type":"object","additionalProperties":false,"required":["query"],"properties":{`+
			`"query":{"type":"string","minLength":2,"maxLength":200,"description":"Text to find, 2 to 100 characters after trimming. Matched literally (% and _ are not wildcards)."},`+
			`"table":{"type":"string","minLength":1,"maxLength":64,"description":"Search only this TCA table, e.g. tt_content or pages."},`+
			`"limit":{"type":"integer","minimum":1,"maximum":50,"default":20,"description":"Most hits to return over all tables."}}}`)
}

// searchPlan is what one table's search selects and compares.
type searchPlan struct {
	table    string
	label    []string // label columns present in the live table
	search   []string // searchable columns present in the live table
	flex     []bool   // per search column: a FlexForm field
	langCol  string   // the languageField, if the live table has it
	altForce bool
}

func (t *searchRecords) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	user := call.Actor
	if user == nil {
		return tool.Errorf("%s", readpolicy.DeniedUser), nil
	}
	if err := allowedArgs(args, "query", "table", "limit"); err != nil {
		return refuse(err), nil
	}
	raw, present, err := stringArg(args, "query")
	if err != nil {
		return refuse(err), nil
	}
	q := strings.TrimSpace(raw)
	if n := utf8.RuneCountInString(q); !present || n < 2 || n > 100 {
		return tool.Errorf("Argument query must be 2 to 100 characters long after trimming."), nil
	}
	limit, _, err := intArg(args, "limit", searchDefaultLimit, 1, searchMaxLimit)
	if err != nil {
		return refuse(err), nil
	}
	table, res, ok := t.tableArg(args, user, "table", false)
	if !ok {
		return res, nil
	}
	tables := []string{table}
	if table == "" {
		tables = t.policy.ReadableTables(user)
	}

	filter := readpolicy.NewRowFilter(t.site, t.policy, user)
	idx, err := t.indexFor(ctx, q)
	if err != nil {
		return tool.Result{}, err
	}
	var lines []string
	hits := 0
	for _, name := range tables {
		if hits >= int(limit) {
			break
		}
		plan, err := t.plan(ctx, name)
		if err != nil {
			return tool.Result{}, err
		}
		if plan == nil {
			continue
		}
		found, err := t.searchTable(ctx, filter, plan, q, int(limit)-hits, idx)
		if err != nil {
			return tool.Result{}, err
		}
		for _, h := range found {
			lines = append(lines, h...)
		}
		hits += len(found)
	}
	if hits == 0 {
		return tool.Text(fmt.Sprintf("No readable records match %q.", q)), nil
	}
	head := fmt.Sprintf("%d record(s) match %q:", hits, q)
	if hits >= int(limit) {
		head = fmt.Sprintf("The first %d records matching %q (the limit; name a table or refine the query for more):", hits, q)
	}
	return tool.Text(head + "\n" + strings.Join(lines, "\n")), nil
}

// plan resolves the columns of one table's search; nil when the table has
// nothing searchable in the live database.
func (t *searchRecords) plan(ctx context.Context, table string) (*searchPlan, error) {
	search, err := t.liveColumns(ctx, table, t.policy.SearchColumns(table))
	if err != nil || len(search) == 0 {
		return nil, err
	}
	label, err := t.liveColumns(ctx, table, t.policy.LabelColumns(table))
	if err != nil {
		return nil, err
	}
	p := &searchPlan{table: table, label: label, search: search}
	tc := t.policy.TCA().Table(table)
	p.altForce = tc.Ctrl.LabelAltForce
	for _, c := range search {
		p.flex = append(p.flex, tc.Column(c).Config.Type == "flex")
	}
	if lf := t.policy.LanguageField(table); lf != "" {
		ok, err := t.hasColumn(ctx, table, lf)
		if err != nil {
			return nil, err
		}
		if ok {
			p.langCol = lf
		}
	}
	return p, nil
}

// searchIndex is the site index as one search_records call uses it.
type searchIndex struct {
	snap  *siteindex.Snapshot
	match *siteindex.Match
}

// indexFor returns the index for query q, or nil when there is none, it
// is stale, or it cannot narrow q: then every table is scanned.
func (t *searchRecords) indexFor(ctx context.Context, q string) (*searchIndex, error) {
	if t.index == nil {
		return nil, nil
	}
	snap, err := t.index.Snapshot(ctx)
	if err != nil || snap == nil {
		return nil, err
	}
	m, ok := snap.Substring(q)
	if !ok {
		return nil, nil
	}
	return &searchIndex{snap: snap, match: m}, nil
}

// searchCandidates is how many index candidates one round trip reads.
const searchCandidates = 200

// searchTable returns up to budget hits of one table, each as its output
// lines. Matching rows are read in uid order in batches and passed through
// the row filter; a FlexForm column counts as a match only when its
// readable fields (credential-like fields left out) contain the query, so
// a search can never confirm a secret stored in a plugin setting.
//
// With the site index (idx not nil and covering the table) the rows read
// are the same, in the same order, but the statement only looks at the
// index's candidates and at the rows changed since the last sync (a
// tstamp at or after the table's mark, or a uid above it): the index is
// a superset of the rows whose indexed text matches, and the live
// statement decides.
func (t *searchRecords) searchTable(ctx context.Context, filter *readpolicy.RowFilter, p *searchPlan, q string, budget int, idx *searchIndex) ([][]string, error) {
	var mark siteindex.TableMark
	indexed := false
	if idx != nil {
		var err error
		mark, indexed, err = idx.snap.Table(ctx, p.table)
		if err != nil {
			return nil, err
		}
	}
	var out [][]string
	var after int64
	scanned := 0
	for len(out) < budget && scanned < searchScanCap {
		batch := budget - len(out)
		if !filter.User().Admin {
			// The filter may drop rows; read a little more per round trip.
			batch = max(batch, 20)
		}
		rows, exhausted, err := t.nextBatch(ctx, p, q, after, batch, idx, indexed, mark)
		if err != nil {
			return nil, err
		}
		if err := filter.Preload(ctx, p.table, rowKeys(p, rows)); err != nil {
			return nil, err
		}
		for _, r := range rows {
			scanned++
			uid, pid := r[0].int(), r[1].int()
			after = uid
			row := readpolicy.Row{UID: uid, PID: pid}
			i := 3
			if p.langCol != "" {
				row.Language = r[i].int()
				i++
			}
			labels := r[i : i+len(p.label)]
			values := r[i+len(p.label):]
			hit := r[2].int() == 1
			texts := make([]string, len(values))
			for j, v := range values {
				if p.flex[j] {
					texts[j] = readpolicy.FlexText(v.s)
					hit = hit || containsFold(texts[j], q)
				} else {
					texts[j] = readpolicy.StripTags(v.s)
				}
			}
			if !hit {
				continue
			}
			ok, err := filter.Allow(ctx, p.table, row)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			out = append(out, p.render(uid, pid, labels, texts, q))
			if len(out) == budget {
				break
			}
		}
		if exhausted {
			break
		}
	}
	return out, nil
}

// nextBatch reads the next batch of matching rows after uid after: up to
// n rows, exhausted when fewer exist. With the index it reads the same
// rows a scan would, in rounds over the candidates, so the batches (and
// with them where the scan cap falls) are the same.
func (t *searchRecords) nextBatch(ctx context.Context, p *searchPlan, q string, after int64, n int, idx *searchIndex,
	indexed bool, mark siteindex.TableMark) ([][]cell, bool, error) {
	if !indexed {
		rows, err := t.queryBatch(ctx, p, q, after, n, nil)
		if err != nil {
			return nil, false, fmt.Errorf("search %s: %w", p.table, err)
		}
		return rows, len(rows) < n, nil
	}
	var rows [][]cell
	for len(rows) < n {
		cands, err := idx.snap.Candidates(ctx, p.table, idx.match, after, searchCandidates)
		if err != nil {
			return nil, false, fmt.Errorf("search %s in the site index: %w", p.table, err)
		}
		more := len(cands) == searchCandidates
		need := n - len(rows)
		got, err := t.queryBatch(ctx, p, q, after, need, func(a *typo3.Args) (string, error) {
			return freshOrCandidate(a, p.table, mark, cands, more)
		})
		if err != nil {
			return nil, false, fmt.Errorf("search %s: %w", p.table, err)
		}
		rows = append(rows, got...)
		if len(got) == need {
			break
		}
		if !more {
			return rows, true, nil
		}
		// Every matching row up to the last candidate has been read.
		after = cands[len(cands)-1]
	}
	return rows, false, nil
}

// freshOrCandidate is the condition of an indexed search: the row was
// changed since the last sync, or it is a candidate. When more
// candidates follow, rows are read only up to the last of these, so none
// is skipped.
func freshOrCandidate(a *typo3.Args, table string, mark siteindex.TableMark, cands []int64, more bool) (string, error) {
	uid, err := qcol(a, table, "uid")
	if err != nil {
		return "", err
	}
	ts, err := qcol(a, table, mark.TstampColumn)
	if err != nil {
		return "", err
	}
	cond := ts + " >= " + a.Add(mark.Tstamp) + " OR " + uid + " > " + a.Add(mark.UID)
	if len(cands) > 0 {
		cond += " OR " + uid + " IN (" + a.AddInts(cands) + ")"
	}
	cond = "(" + cond + ")"
	if more {
		cond += " AND " + uid + " <= " + a.Add(cands[len(cands)-1])
	}
	return cond, nil
}

// rowKeys are the pages the rows of one batch hang on (for pages the row
// itself), for the row filter to load at once.
func rowKeys(p *searchPlan, rows [][]cell) []int64 {
	out := make([]int64, 0, len(rows))
	for _, r := range rows {
		if p.table == "pages" {
			out = append(out, r[0].int())
		} else {
			out = append(out, r[1].int())
		}
	}
	return out
}

// queryBatch selects uid, pid, a flag telling whether a plain (non-flex)
// column matched, the language, the labels and the searchable columns of
// up to n matching rows with uid > after.
func (t *searchRecords) queryBatch(ctx context.Context, p *searchPlan, q string, after int64, n int,
	extra func(a *typo3.Args) (string, error)) ([][]cell, error) {
	db := t.site.DB
	a := db.NewArgs()
	pattern := likeContains(q)
	var plain, all []string
	for i, c := range p.search {
		col, err := qcol(a, p.table, c)
		if err != nil {
			return nil, err
		}
		if !p.flex[i] {
			// Placeholders are handed out in text order: the SELECT list
			// comes first.
			plain = append(plain, likeExpr(db.Dialect, a, col, pattern))
		}
	}
	matched := "0"
	if len(plain) > 0 {
		matched = "CASE WHEN " + strings.Join(plain, " OR ") + " THEN 1 ELSE 0 END"
	}
	uidCol, err := qcol(a, p.table, "uid")
	if err != nil {
		return nil, err
	}
	pidCol, err := qcol(a, p.table, "pid")
	if err != nil {
		return nil, err
	}
	sel := uidCol + ", " + pidCol + ", " + matched
	if p.langCol != "" {
		lang, err := qcol(a, p.table, p.langCol)
		if err != nil {
			return nil, err
		}
		sel += ", " + lang
	}
	if len(p.label) > 0 {
		l, err := selectList(a, p.table, p.label)
		if err != nil {
			return nil, err
		}
		sel += ", " + l
	}
	s, err := selectList(a, p.table, p.search)
	if err != nil {
		return nil, err
	}
	sel += ", " + s
	// The index's condition comes first: it is cheap and narrows most,
	// and its placeholders follow the SELECT list's in text order.
	where := ""
	if extra != nil {
		cond, err := extra(a)
		if err != nil {
			return nil, err
		}
		where = cond + " AND "
	}
	restrict, err := t.site.Restrict(a, p.table, "", readpolicy.RecordRestrictions)
	if err != nil {
		return nil, err
	}
	for _, c := range p.search {
		col, err := qcol(a, p.table, c)
		if err != nil {
			return nil, err
		}
		all = append(all, likeExpr(db.Dialect, a, col, pattern))
	}
	from, err := a.Quote(p.table)
	if err != nil {
		return nil, err
	}
	stmt := "SELECT " + sel + " FROM " + from + " WHERE " + where + restrict +
		" AND (" + strings.Join(all, " OR ") + ") AND " + uidCol + " > " + a.Add(after) +
		" ORDER BY " + uidCol + " LIMIT " + strconv.Itoa(n)
	return query(ctx, db, stmt, a.Values())
}

// render writes one hit: the record line and, when the query matched
// outside the label, the first matching field's excerpt.
func (p *searchPlan) render(uid, pid int64, labels []cell, texts []string, q string) []string {
	label := recordLabel(labels, p.altForce)
	lines := []string{fmt.Sprintf("%s:%d · %s · pid %d", p.table, uid, label, pid)}
	if containsFold(label, q) {
		return lines
	}
	for j, c := range p.search {
		if texts[j] != "" && containsFold(texts[j], q) {
			lines = append(lines, fmt.Sprintf("  match(%s): %s", c, excerpt(texts[j], q, searchExcerpt)))
			break
		}
	}
	return lines
}

// recordLabel follows BackendUtility::getRecordTitle: the label column,
// else the first non-empty label_alt column; with label_alt_force all
// non-empty ones joined. Markup is stripped.
func recordLabel(labels []cell, force bool) string {
	var parts []string
	for _, c := range labels {
		v := readpolicy.StripTags(c.s)
		if v == "" {
			continue
		}
		if !force {
			return cut(v, searchLabel)
		}
		if !slices.Contains(parts, v) {
			parts = append(parts, v)
		}
	}
	if len(parts) == 0 {
		return "[no title]"
	}
	return cut(strings.Join(parts, ", "), searchLabel)
}
