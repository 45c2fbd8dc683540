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
	langField, parentField := "sys_language_uid", "l10n_parent"
	if t := s.TCA.Table("pages"); t != nil {
		if t.Ctrl.LanguageField != "" {
			langField = t.Ctrl.LanguageField
		}
		if t.Ctrl.TransOrigPointerField != "" {
			parentField = t.Ctrl.TransOrigPointerField
		}
	}
	lang, err := db.QuoteIdent(langField)
	if err != nil {
		return nil, err
	}
	parent, err := db.QuoteIdent(parentField)
	if err != nil {
		return nil, err
	}
	a := db.NewArgs()
	notDeleted, err := s.Restrict(a, "pages", "", RestrictDeleted)
	if err != nil {
		return nil, err
	}
	q := `SELECT ` + quoteList(db, "uid", "pid", "title", "doktype", "is_siteroot", "hidden", "nav_hide",
		"starttime", "endtime", "editlock", "extendToSubpages", "perms_userid", "perms_groupid", "perms_user", "perms_group",
		"perms_everybody") + `, ` + lang + `, ` + parent + `, ` + quoteList(db, "t3ver_oid", "t3ver_wsid", "t3ver_state") +
		` FROM ` + db.MustQuote("pages") + ` WHERE ` + db.MustQuote("pages") + `.` + db.MustQuote("uid") + ` = ` + a.Add(uid) +
		` AND ` + notDeleted
	var p Page
	var title sql.NullString
	var siteRoot, hidden, navHide, editlock, extend int
	err = db.SQL.QueryRowContext(ctx, q, a.Values()...).Scan(&p.UID, &p.PID, &title, &p.Doktype, &siteRoot, &hidden,
		&navHide, &p.StartTime, &p.EndTime, &editlock, &extend, &p.PermsUserID, &p.PermsGroupID, &p.PermsUser, &p.PermsGroup,
		&p.PermsEverybody, &p.SysLanguageUID, &p.L10nParent, &p.T3verOID, &p.T3verWSID, &p.T3verState)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read page %d: %w", uid, err)
	}
	p.Title = title.String
	p.IsSiteRoot, p.Hidden, p.NavHide, p.Editlock = siteRoot != 0, hidden != 0, navHide != 0, editlock != 0
	p.ExtendToSubpages = extend != 0
	return &p, nil
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
