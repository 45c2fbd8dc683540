package typo3

import (
	"context"
	"slices"
	"sync"
)

// PageAccess answers page permission questions for one acting user and
// memoises page rows and answers, so a tool that filters many rows asks
// the database about each page once. Make one per request: it does not
// notice later changes to the site. It is safe for concurrent use.
type PageAccess struct {
	site *Site
	user *BackendUser

	mu    sync.Mutex
	pages map[int64]*Page // nil entry: missing or deleted
	show  map[int64]bool
}

// NewPageAccess returns a checker for user; a nil user may see nothing.
func NewPageAccess(site *Site, user *BackendUser) *PageAccess {
	return &PageAccess{site: site, user: user, pages: map[int64]*Page{}, show: map[int64]bool{}}
}

// User returns the acting user (nil when there is none).
func (a *PageAccess) User() *BackendUser { return a.user }

// page is the memoised pageLoader.
func (a *PageAccess) page(ctx context.Context, uid int64) (*Page, error) {
	a.mu.Lock()
	p, ok := a.pages[uid]
	a.mu.Unlock()
	if ok {
		return p, nil
	}
	p, err := a.site.loadPage(ctx, uid)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.pages[uid] = p
	a.mu.Unlock()
	return p, nil
}

// Preload loads the pages uids with all they depend on (rootlines, the
// pages translations and versions stand for) in one statement, so the
// checks that follow ask the database nothing more: a tool checking the
// rows of one batch costs one statement, not one per page. Pages already
// memoised are not asked for again.
func (a *PageAccess) Preload(ctx context.Context, uids []int64) error {
	a.mu.Lock()
	var want []int64
	for _, u := range uids {
		if _, ok := a.pages[u]; !ok && u > 0 && !slices.Contains(want, u) {
			want = append(want, u)
		}
	}
	a.mu.Unlock()
	if len(want) == 0 {
		return nil
	}
	pages, err := a.site.loadPages(ctx, want)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var refs []int64
	for _, p := range pages {
		a.pages[p.UID] = p
		refs = append(refs, p.PID, p.L10nParent, p.T3verOID)
	}
	// What was asked for or pointed to and did not come back is missing
	// or deleted.
	for _, u := range append(want, refs...) {
		if _, ok := a.pages[u]; !ok && u > 0 {
			a.pages[u] = nil
		}
	}
	return nil
}

// Page returns a page that is not deleted, memoised; ErrPageNotFound
// otherwise. It checks no permission.
func (a *PageAccess) Page(ctx context.Context, uid int64) (*Page, error) {
	p, err := a.page(ctx, uid)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, ErrPageNotFound
	}
	return p, nil
}

// Rootline is Site.Rootline through the memo.
func (a *PageAccess) Rootline(ctx context.Context, uid int64) ([]Page, error) {
	return rootline(ctx, a.page, uid)
}

// CanShow reports whether the user may see page uid, as
// BackendUtility::readPageAccess(uid, getPagePermsClause(PAGE_SHOW))
// decides: the page exists and is not deleted, its row passes the
// PAGE_SHOW perms clause, and it lies in one of the user's web mounts
// (IsInWebMount). Admins see every page that is not deleted, and uid 0,
// the tree root. Hidden or timed pages are not treated differently: these
// are backend permissions.
//
// Unlike CalcPerms, a user without groups is not refused outright: the
// owner and everybody bits still count, as in TYPO3's page tree.
func (a *PageAccess) CanShow(ctx context.Context, uid int64) (bool, error) {
	if a.user == nil {
		return false, nil
	}
	if uid == 0 {
		return a.user.Admin, nil
	}
	a.mu.Lock()
	ok, known := a.show[uid]
	a.mu.Unlock()
	if known {
		return ok, nil
	}
	ok, err := a.canShow(ctx, uid)
	if err != nil {
		return false, err
	}
	a.mu.Lock()
	a.show[uid] = ok
	a.mu.Unlock()
	return ok, nil
}

func (a *PageAccess) canShow(ctx context.Context, uid int64) (bool, error) {
	p, err := a.page(ctx, uid)
	if err != nil || p == nil {
		return false, err
	}
	if a.user.Admin {
		return true, nil
	}
	if !a.user.MatchesPermsClause(p, PermPageShow) {
		return false, nil
	}
	_, in, err := a.inWebMount(ctx, p)
	return in, err
}

// IsInWebMount follows isInWebMount: a workspace version is mapped to its
// live page (t3ver_oid), a translation to its default-language page
// (l10n_parent); then the rootline is walked upwards, each page having to
// pass the PAGE_SHOW perms clause, until a page in the user's DB mounts is
// found. A page the user may not show breaks the chain, so a mount above
// it does not count. It returns the mount found; admins get (0, true).
func (a *PageAccess) IsInWebMount(ctx context.Context, uid int64) (mount int64, ok bool, err error) {
	if a.user == nil {
		return 0, false, nil
	}
	if a.user.Admin {
		return 0, true, nil
	}
	p, err := a.page(ctx, uid)
	if err != nil || p == nil {
		return 0, false, err
	}
	return a.inWebMount(ctx, p)
}

func (a *PageAccess) inWebMount(ctx context.Context, p *Page) (int64, bool, error) {
	id := p.UID
	if p.T3verOID > 0 {
		id = p.T3verOID
	}
	if p.SysLanguageUID != 0 && p.L10nParent != 0 {
		id = p.L10nParent
	}
	seen := map[int64]bool{}
	for depth := 0; id > 0 && depth < MaxRootlineDepth && !seen[id]; depth++ {
		seen[id] = true
		row, err := a.page(ctx, id)
		if err != nil {
			return 0, false, err
		}
		if row == nil || !a.user.MatchesPermsClause(row, PermPageShow) {
			return 0, false, nil
		}
		if slices.Contains(a.user.DBMounts, id) {
			return id, true, nil
		}
		id = row.PID
	}
	// Reached the tree root, or a broken chain: not mounted.
	return 0, false, nil
}

// CalcPerms follows calcPerms: admins get PermAll; a page outside the web
// mounts, missing or deleted gets PermNothing; a user without any group
// gets PermNothing; otherwise the OR of perms_user (when the user owns the
// page), perms_group (when the user is in its group) and perms_everybody.
func (a *PageAccess) CalcPerms(ctx context.Context, uid int64) (Permission, error) {
	if a.user == nil {
		return PermNothing, nil
	}
	if a.user.Admin {
		return PermAll, nil
	}
	p, err := a.page(ctx, uid)
	if err != nil || p == nil {
		return PermNothing, err
	}
	_, in, err := a.inWebMount(ctx, p)
	if err != nil || !in {
		return PermNothing, err
	}
	if len(a.user.GroupUIDs) == 0 {
		return PermNothing, nil
	}
	out := p.PermsEverybody
	if p.PermsUserID == a.user.UID {
		out |= p.PermsUser
	}
	if a.user.IsMemberOf(p.PermsGroupID) {
		out |= p.PermsGroup
	}
	return out, nil
}

// DoesUserHaveAccess reports whether CalcPerms grants every bit of perms.
func (a *PageAccess) DoesUserHaveAccess(ctx context.Context, uid int64, perms Permission) (bool, error) {
	got, err := a.CalcPerms(ctx, uid)
	return err == nil && got&perms == perms, err
}
