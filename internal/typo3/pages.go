package typo3

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// Permission is the page permission bitmask of TYPO3's
// Core\Type\Bitmask\Permission.
type Permission int

const (
	PermNothing     Permission = 0
	PermPageShow    Permission = 1
	PermPageEdit    Permission = 2
	PermPageDelete  Permission = 4
	PermPageNew     Permission = 8
	PermContentEdit Permission = 16
	PermAll         Permission = 31
)

// MaxRootlineDepth bounds every walk up the page tree, like TYPO3's
// BEgetRootLine loop check; a deeper chain is treated as broken data.
const MaxRootlineDepth = 100

// ErrPageNotFound is returned for a page uid that does not exist or is
// deleted.
var ErrPageNotFound = errors.New("page not found")

// ErrBrokenRootline is returned when the pid chain of a page loops or is
// deeper than MaxRootlineDepth.
var ErrBrokenRootline = errors.New("the page tree above this page is broken (a pid loop or too deep)")

// Page is a pages row with the fields that tree walks and permission
// checks need. Language fields use the TCA's names when they differ.
type Page struct {
	UID, PID   int64
	Title      string
	Doktype    int
	IsSiteRoot bool
	Hidden     bool
	NavHide    bool
	StartTime  int64
	EndTime    int64
	Editlock   bool
	// ExtendToSubpages carries hidden, starttime and endtime down to
	// every page below on the live site.
	ExtendToSubpages bool

	PermsUserID    int64
	PermsGroupID   int64
	PermsUser      Permission
	PermsGroup     Permission
	PermsEverybody Permission

	// SysLanguageUID and L10nParent are the ctrl languageField and
	// transOrigPointerField.
	SysLanguageUID int
	L10nParent     int64
	T3verOID       int64
	T3verWSID      int64
	T3verState     int
}

// pageLoader returns a page row or nil when it is missing or deleted.
type pageLoader func(ctx context.Context, uid int64) (*Page, error)

// Page loads a page that is not deleted (hidden and timed pages are
// returned; backend permissions do not depend on visibility).
func (s *Site) Page(ctx context.Context, uid int64) (*Page, error) {
	p, err := s.loadPage(ctx, uid)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, ErrPageNotFound
	}
	return p, nil
}

func (s *Site) loadPage(ctx context.Context, uid int64) (*Page, error) {
	if uid <= 0 {
		return nil, nil
	}
	db := s.DB
	cols, err := s.pageColumns()
	if err != nil {
		return nil, err
	}
	a := db.NewArgs()
	notDeleted, err := s.Restrict(a, "pages", "", RestrictDeleted)
	if err != nil {
		return nil, err
	}
	q := `SELECT ` + cols + ` FROM ` + db.MustQuote("pages") + ` WHERE ` + db.MustQuote("pages") + `.` + db.MustQuote("uid") + ` = ` + a.Add(uid) +
		` AND ` + notDeleted
	p, err := scanPage(db.SQL.QueryRowContext(ctx, q, a.Values()...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read page %d: %w", uid, err)
	}
	return p, nil
}

// pageColumns is the SELECT list of a Page, qualified by the pages table.
func (s *Site) pageColumns() (string, error) {
	db := s.DB
	langField, parentField := s.pageLanguageFields()
	names := []string{"uid", "pid", "title", "doktype", "is_siteroot", "hidden", "nav_hide",
		"starttime", "endtime", "editlock", "extendToSubpages", "perms_userid", "perms_groupid", "perms_user", "perms_group",
		"perms_everybody", langField, parentField, "t3ver_oid", "t3ver_wsid", "t3ver_state"}
	t := db.MustQuote("pages")
	out := make([]string, len(names))
	for i, n := range names {
		q, err := db.QuoteIdent(n)
		if err != nil {
			return "", err
		}
		out[i] = t + "." + q
	}
	return strings.Join(out, ", "), nil
}

// pageLanguageFields are the TCA's languageField and transOrigPointerField
// of pages, TYPO3's names when the TCA has none.
func (s *Site) pageLanguageFields() (lang, parent string) {
	lang, parent = "sys_language_uid", "l10n_parent"
	if t := s.TCA.Table("pages"); t != nil {
		if t.Ctrl.LanguageField != "" {
			lang = t.Ctrl.LanguageField
		}
		if t.Ctrl.TransOrigPointerField != "" {
			parent = t.Ctrl.TransOrigPointerField
		}
	}
	return lang, parent
}

// scanPage reads one row of pageColumns.
func scanPage(r interface{ Scan(...any) error }) (*Page, error) {
	var p Page
	var title sql.NullString
	var siteRoot, hidden, navHide, editlock, extend int
	err := r.Scan(&p.UID, &p.PID, &title, &p.Doktype, &siteRoot, &hidden,
		&navHide, &p.StartTime, &p.EndTime, &editlock, &extend, &p.PermsUserID, &p.PermsGroupID, &p.PermsUser, &p.PermsGroup,
		&p.PermsEverybody, &p.SysLanguageUID, &p.L10nParent, &p.T3verOID, &p.T3verWSID, &p.T3verState)
	if err != nil {
		return nil, err
	}
	p.Title = title.String
	p.IsSiteRoot, p.Hidden, p.NavHide, p.Editlock = siteRoot != 0, hidden != 0, navHide != 0, editlock != 0
	p.ExtendToSubpages = extend != 0
	return &p, nil
}

// loadPages loads the pages uids and everything above them — their
// rootlines, and the default-language and live pages their translations
// and workspace versions point to — in one recursive statement. It
// returns the pages that are not deleted; the walk follows deleted pages
// too (the callers stop at them, as with loadPage).
func (s *Site) loadPages(ctx context.Context, uids []int64) ([]*Page, error) {
	if len(uids) == 0 {
		return nil, nil
	}
	db := s.DB
	cols, err := s.pageColumns()
	if err != nil {
		return nil, err
	}
	_, parentField := s.pageLanguageFields()
	q := func(n string) string { return db.MustQuote(n) }
	parent, err := db.QuoteIdent(parentField)
	if err != nil {
		return nil, err
	}
	a := db.NewArgs()
	next := "CASE k.n WHEN 1 THEN pg." + q("pid") + " WHEN 2 THEN pg." + parent + " ELSE pg." + q("t3ver_oid") + " END"
	cte := "WITH RECURSIVE up(id) AS (SELECT " + q("uid") + " FROM " + q("pages") + " WHERE " + q("uid") + " IN (" + a.AddInts(uids) + ")" +
		" UNION SELECT " + next + " FROM " + q("pages") + " pg JOIN up ON pg." + q("uid") + " = up.id" +
		" CROSS JOIN (SELECT 1 AS n UNION ALL SELECT 2 UNION ALL SELECT 3) k WHERE " + next + " > 0)"
	notDeleted, err := s.Restrict(a, "pages", "", RestrictDeleted)
	if err != nil {
		return nil, err
	}
	stmt := cte + " SELECT " + cols + " FROM " + q("pages") + " WHERE " + q("pages") + "." + q("uid") +
		" IN (SELECT id FROM up) AND " + notDeleted
	rows, err := db.SQL.QueryContext(ctx, stmt, a.Values()...)
	if err != nil {
		return nil, fmt.Errorf("read pages: %w", err)
	}
	defer rows.Close()
	var out []*Page
	for rows.Next() {
		p, err := scanPage(rows)
		if err != nil {
			return nil, fmt.Errorf("read pages: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// Enabled reports whether the page passes the enable-field restrictions
// at now (Unix seconds), as Site.Restrict's hidden, starttime and endtime
// conditions would: not hidden, started, and not ended.
func (p *Page) Enabled(now int64) bool {
	return !p.Hidden && p.StartTime <= now && (p.EndTime == 0 || p.EndTime > now)
}

// IsLive reports whether the page row is the live version, as
// RestrictLiveWorkspace decides: workspace 0 and not an old archived
// version.
func (p *Page) IsLive() bool {
	return p.T3verWSID == 0 && (p.T3verOID == 0 || p.T3verState == 4)
}

// Rootline returns the pages from the tree root down to uid: element 0 is
// the topmost page reached (its tree level is 0 when its PID is 0), the
// last element is the page itself. Deleted pages are left out: the walk
// stops below a missing or deleted ancestor, so an orphaned page's rootline
// starts with a page whose PID is not 0. Hidden and timed pages are
// included. The pid chain is followed as stored; a translated page's
// rootline is that of its own pid, callers wanting the default-language
// tree map it to L10nParent first. A loop or a chain deeper than
// MaxRootlineDepth yields ErrBrokenRootline; a missing or deleted uid
// yields ErrPageNotFound.
func (s *Site) Rootline(ctx context.Context, uid int64) ([]Page, error) {
	return rootline(ctx, s.loadPage, uid)
}

func rootline(ctx context.Context, load pageLoader, uid int64) ([]Page, error) {
	var up []Page
	seen := map[int64]bool{}
	for id := uid; id > 0; {
		if seen[id] || len(up) >= MaxRootlineDepth {
			return nil, ErrBrokenRootline
		}
		seen[id] = true
		p, err := load(ctx, id)
		if err != nil {
			return nil, err
		}
		if p == nil {
			break
		}
		up = append(up, *p)
		id = p.PID
	}
	if len(up) == 0 {
		return nil, ErrPageNotFound
	}
	for i, j := 0, len(up)-1; i < j; i, j = i+1, j-1 {
		up[i], up[j] = up[j], up[i]
	}
	return up, nil
}

// PermsClause returns a SQL condition on the pages table (qualified by
// alias, "pages" when empty) that holds for the pages on which the user
// has every bit of perms, binding values into a. It is
// getPagePermsClause: admins get "1=1", a nil user "1=0", others
//
//	(perms_everybody & P) = P
//	OR (perms_userid = uid AND (perms_user & P) = P)
//	OR (perms_groupid IN (groups) AND (perms_group & P) = P)
//
// where the group part is present only when the user has groups. Web
// mounts are not part of it.
func (u *BackendUser) PermsClause(a *Args, alias string, perms Permission) (string, error) {
	if u == nil {
		return "1=0", nil
	}
	if u.Admin {
		return "1=1", nil
	}
	if alias == "" {
		alias = "pages"
	}
	qual, err := a.Quote(alias)
	if err != nil {
		return "", err
	}
	col := func(name string) string {
		q, _ := a.Quote(name) // constant names below
		return qual + "." + q
	}
	bits := func(column string) string {
		return "(" + col(column) + " & " + a.Add(int64(perms)) + ") = " + a.Add(int64(perms))
	}
	parts := []string{
		bits("perms_everybody"),
		"(" + col("perms_userid") + " = " + a.Add(u.UID) + " AND " + bits("perms_user") + ")",
	}
	if len(u.GroupUIDs) > 0 {
		parts = append(parts, "("+col("perms_groupid")+" IN ("+a.AddInts(u.GroupUIDs)+") AND "+bits("perms_group")+")")
	}
	return "(" + strings.Join(parts, " OR ") + ")", nil
}

// MatchesPermsClause evaluates PermsClause on a loaded row, so memoising
// checkers need not query again.
func (u *BackendUser) MatchesPermsClause(p *Page, perms Permission) bool {
	if u == nil || p == nil {
		return false
	}
	if u.Admin {
		return true
	}
	if p.PermsEverybody&perms == perms {
		return true
	}
	if p.PermsUserID == u.UID && p.PermsUser&perms == perms {
		return true
	}
	return len(u.GroupUIDs) > 0 && u.IsMemberOf(p.PermsGroupID) && p.PermsGroup&perms == perms
}
