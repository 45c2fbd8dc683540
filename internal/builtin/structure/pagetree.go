package structure

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

// Page tree limits (builtin-tools.md: depth ≤ 5, ≤ 200 nodes).
const (
	maxTreeNodes   = 200
	maxTreeDepth   = 5
	defaultDepth   = 3
	maxTitleLength = 120
)

type pageTree struct{ env }

func (t *pageTree) Spec() tool.Spec {
	return spec("get_page_tree", tool.GroupStructure,
		"The TYPO3 page tree below a page, indented two spaces per level, one line per page: "+
			"`[uid] title (doktype d)`. Default-language pages of the live workspace that you may see, in backend "+
			"sorting order; at most 200 pages. Editors see only pages the live site shows (not hidden, within "+
			"start/end time); admins also see hidden and timed pages, marked [hidden], [not yet visible] or [expired]."+
			" A page you may not see hides the pages below it. rootUid 0 (default) "+
			"starts at the top; for editors it starts at their web mounts. depth counts levels below the root "+
			"(default 3, at most 5). Doktypes: 1 standard, 3 link, 4 shortcut, 7 mount point, 199 spacer, "+
			"254 folder, 255 recycler. Use it to find page uids for get_page_content and other tools.",
		`{"type":"object","properties":{`+
			`"rootUid":{"type":"integer","minimum":0,"maximum":2147483647,"default":0,"description":"Page to start below; 0 for the top of the tree."},`+
			`"depth":{"type":"integer","minimum":1,"maximum":5,"default":3,"description":"Levels below the root to show."}`+
			`},"additionalProperties":false}`)
}

// treeNode is one listed page.
type treeNode struct {
	uid        int64
	title      string
	doktype    int
	hidden     bool
	start, end int64
}

// treeWalk holds the state of one call.
type treeWalk struct {
	t      *pageTree
	access *typo3.PageAccess
	// filter holds the page decision every page tool shares.
	filter *readpolicy.RowFilter
	user   *typo3.BackendUser
	now    int64
	b      strings.Builder
	nodes  int
	cut    bool
}

func (t *pageTree) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	if call.Actor == nil {
		return denyUser(), nil
	}
	if !t.policy.CanReadTable(call.Actor, "pages") {
		return denyTable(), nil
	}
	root, err := intArg(args, "rootUid", 0)
	if err != nil || root < 0 {
		return tool.Errorf("rootUid must be a page uid (0 or more)."), nil
	}
	depth, err := intArg(args, "depth", defaultDepth)
	if err != nil {
		return tool.Errorf("depth must be a whole number from 1 to %d.", maxTreeDepth), nil
	}
	depth = min(max(depth, 1), maxTreeDepth)

	w := &treeWalk{t: t, access: typo3.NewPageAccess(t.site, call.Actor), user: call.Actor,
		filter: readpolicy.NewRowFilter(t.site, t.policy, call.Actor), now: t.site.Now().Unix()}
	var head string
	switch {
	case root > 0:
		p, err := w.access.Page(ctx, root)
		if errors.Is(err, typo3.ErrPageNotFound) {
			return tool.Errorf("%s", readpolicy.DeniedPage), nil
		}
		if err != nil {
			return tool.Result{}, err
		}
		// The page decision of every page tool: for non-admins
		// readPageAccess (PAGE_SHOW bits and web mount, stricter than the
		// reference's clause-only check) and the live site's visibility.
		if ok, err := w.filter.PageVisible(ctx, root); err != nil {
			return tool.Result{}, err
		} else if !ok {
			return tool.Errorf("%s", readpolicy.DeniedPage), nil
		}
		head = fmt.Sprintf("Pages below [%d] %s, depth %d:\n", p.UID, clean(p.Title, maxTitleLength), depth)
		err = w.children(ctx, root, 0, int(depth))
		if err != nil {
			return tool.Result{}, err
		}
	case call.Actor.Admin:
		head = fmt.Sprintf("Pages below the tree root [0], depth %d:\n", depth)
		if err := w.children(ctx, 0, 0, int(depth)); err != nil {
			return tool.Result{}, err
		}
	default:
		// TYPO3's page tree shows an editor's web mounts as the tops.
		head = fmt.Sprintf("Your web mounts and the pages below them, depth %d:\n", depth)
		if err := w.mounts(ctx, int(depth)); err != nil {
			return tool.Result{}, err
		}
	}
	if w.nodes == 0 {
		return tool.Text(head + "No visible pages."), nil
	}
	out := head + w.b.String()
	if w.cut {
		out += fmt.Sprintf("… cut at %d pages; call again with a deeper rootUid or a smaller depth.", maxTreeNodes)
	}
	return tool.Text(strings.TrimRight(out, "\n")), nil
}

func (w *treeWalk) write(level int, n treeNode) {
	w.nodes++
	fmt.Fprintf(&w.b, "%s[%d] %s (doktype %d)%s\n", strings.Repeat("  ", level), n.uid, clean(n.title, maxTitleLength),
		n.doktype, w.marks(n))
}

// marks tells an admin why the live site does not show a page; nobody
// else is shown such pages.
func (w *treeWalk) marks(n treeNode) string {
	var m string
	if n.hidden {
		m += " [hidden]"
	}
	if n.start > w.now {
		m += " [not yet visible]"
	}
	if n.end != 0 && n.end <= w.now {
		m += " [expired]"
	}
	return m
}

// children lists the subpages of parent at level, then recurses while
// levels remain, depth first so the output reads as a tree.
func (w *treeWalk) children(ctx context.Context, parent int64, level, depth int) error {
	if level >= depth || w.cut {
		return nil
	}
	left := maxTreeNodes - w.nodes
	rows, err := w.query(ctx, parent, nil, left+1)
	if err != nil {
		return err
	}
	for _, n := range rows {
		if w.nodes >= maxTreeNodes {
			w.cut = true
			return nil
		}
		ok, err := w.filter.PageVisible(ctx, n.uid)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		w.write(level, n)
		if err := w.children(ctx, n.uid, level+1, depth); err != nil {
			return err
		}
	}
	return nil
}

// mounts lists a non-admin's web mounts as tops, leaving out mounts that
// lie inside another mount (they show up in that mount's subtree).
func (w *treeWalk) mounts(ctx context.Context, depth int) error {
	var tops []int64
	for _, m := range w.user.DBMounts {
		if m <= 0 {
			continue
		}
		rl, err := w.access.Rootline(ctx, m)
		if errors.Is(err, typo3.ErrPageNotFound) || errors.Is(err, typo3.ErrBrokenRootline) {
			continue
		}
		if err != nil {
			return err
		}
		nested := slices.ContainsFunc(rl[:len(rl)-1], func(p typo3.Page) bool {
			return slices.Contains(w.user.DBMounts, p.UID)
		})
		if !nested && !slices.Contains(tops, m) {
			tops = append(tops, m)
		}
	}
	if len(tops) == 0 {
		return nil
	}
	rows, err := w.query(ctx, -1, tops, len(tops))
	if err != nil {
		return err
	}
	byUID := make(map[int64]treeNode, len(rows))
	for _, n := range rows {
		byUID[n.uid] = n
	}
	for _, m := range tops {
		n, visible := byUID[m]
		if !visible {
			continue
		}
		if w.nodes >= maxTreeNodes {
			w.cut = true
			return nil
		}
		ok, err := w.filter.PageVisible(ctx, m)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		w.write(0, n)
		if err := w.children(ctx, m, 1, depth); err != nil {
			return err
		}
	}
	return nil
}

// query reads default-language live pages: the children of parent, or
// (parent < 0) the pages uids. PageContentRestrictions and, for
// non-admins, the PAGE_SHOW perms clause prefilter in SQL, so the limit
// counts pages they may see; PageVisible still decides every row.
func (w *treeWalk) query(ctx context.Context, parent int64, uids []int64, limit int) ([]treeNode, error) {
	site := w.t.site
	db := site.DB
	tab := site.TCA.Table("pages")
	langField := tab.Ctrl.LanguageField
	if langField == "" {
		langField = "sys_language_uid"
	}
	lang, err := db.QuoteIdent(langField)
	if err != nil {
		return nil, err
	}
	order := db.MustQuote("uid")
	if tab.Ctrl.SortBy != "" {
		s, err := db.QuoteIdent(tab.Ctrl.SortBy)
		if err != nil {
			return nil, err
		}
		order = s + ", " + order
	}
	pages := db.MustQuote("pages")
	a := db.NewArgs()
	var enable []string
	ec := tab.Ctrl.EnableColumns
	for _, c := range []string{ec.Disabled, ec.StartTime, ec.EndTime} {
		if c == "" {
			enable = append(enable, "0")
			continue
		}
		q, err := db.QuoteIdent(c)
		if err != nil {
			return nil, err
		}
		enable = append(enable, pages+"."+q)
	}
	q := "SELECT " + pages + "." + db.MustQuote("uid") + ", " + pages + "." + db.MustQuote("title") + ", " +
		pages + "." + db.MustQuote("doktype") + ", " + strings.Join(enable, ", ") + " FROM " + pages + " WHERE "
	if parent >= 0 {
		q += pages + "." + db.MustQuote("pid") + " = " + a.Add(parent)
	} else {
		q += pages + "." + db.MustQuote("uid") + " IN (" + a.AddInts(uids) + ")"
	}
	q += " AND " + pages + "." + lang + " = " + a.Add(0)
	restrict, err := site.Restrict(a, "pages", "", readpolicy.PageContentRestrictions(w.user))
	if err != nil {
		return nil, err
	}
	q += " AND " + restrict
	perms, err := w.user.PermsClause(a, "pages", typo3.PermPageShow)
	if err != nil {
		return nil, err
	}
	q += " AND " + perms + " ORDER BY " + order + " LIMIT " + a.Add(int64(limit))
	rows, err := db.SQL.QueryContext(ctx, q, a.Values()...)
	if err != nil {
		return nil, fmt.Errorf("read the page tree: %w", err)
	}
	defer rows.Close()
	var out []treeNode
	for rows.Next() {
		var n treeNode
		var title sql.NullString
		var hidden int
		if err := rows.Scan(&n.uid, &title, &n.doktype, &hidden, &n.start, &n.end); err != nil {
			return nil, fmt.Errorf("read the page tree: %w", err)
		}
		n.title, n.hidden = title.String, hidden != 0
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the page tree: %w", err)
	}
	return out, nil
}
