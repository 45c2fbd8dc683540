package readpolicy

import (
	"context"
	"errors"
	"sync"

	"github.com/t3agent/t3agent/internal/typo3"
)

// DeniedRecord is the neutral denial for a single record that is missing,
// deleted or not permitted.
const DeniedRecord = "Record not found or not permitted."

// RecordRestrictions are the query restrictions of the record tools, for
// admins too: deleted, hidden, starttime and endtime from TCA ctrl, and
// the live workspace only.
const RecordRestrictions = typo3.RestrictLive

// PageContentRestrictions are the restrictions on the rows a page shows
// (get_page_content's elements, get_page_tree's pages): admins see hidden
// and timed rows (the tools mark them) but never deleted or workspace
// rows; everybody else gets RecordRestrictions. They are a prefilter in
// SQL; whether a page may be shown at all is RowFilter.PageVisible.
func PageContentRestrictions(user *typo3.BackendUser) typo3.Restriction {
	if user != nil && user.Admin {
		return typo3.RestrictDeleted | typo3.RestrictLiveWorkspace
	}
	return RecordRestrictions
}

// Row is what RowFilter needs to know about one returned row.
type Row struct {
	UID, PID int64
	// Language is the value of the table's TCA languageField; it is read
	// only when the table has one (Policy.LanguageField).
	Language int64
}

// RowFilter decides, row by row and after the query, which rows one user
// may see (SPEC §4 rule 3), and which pages (PageVisible, the page
// decision of the package doc). Checking after the query means a tool may
// return fewer rows than its limit; that is the price of never weakening
// the check into SQL that only approximates it.
//
// Make one per tool call: page answers are memoised per page uid for the
// life of the filter, against the site clock read when the filter was
// made, and never notice later changes. It is safe for concurrent use.
type RowFilter struct {
	policy *Policy
	user   *typo3.BackendUser
	pages  *typo3.PageAccess
	now    int64

	mu      sync.Mutex
	visible map[int64]bool
}

// NewRowFilter returns the filter for user's rows on site. A nil user sees
// nothing.
func NewRowFilter(site *typo3.Site, policy *Policy, user *typo3.BackendUser) *RowFilter {
	return &RowFilter{policy: policy, user: user, pages: typo3.NewPageAccess(site, user),
		now: site.Now().Unix(), visible: map[int64]bool{}}
}

// User is the acting user (nil when there is none).
func (f *RowFilter) User() *typo3.BackendUser { return f.user }

// Allow reports whether the user may see row r of table. The table must be
// readable (Policy.CanReadTable, checked again here); for non-admins a
// table with a TCA languageField needs access to the row's language
// (BackendUser.CanAccessLanguage). Then the row's page decides: the row
// itself for pages, else its pid, through PageVisible. Only admins see
// root-level rows (pid 0) of other tables: they belong to no page a
// non-admin can be granted.
func (f *RowFilter) Allow(ctx context.Context, table string, r Row) (bool, error) {
	if f.user == nil || !f.policy.CanReadTable(f.user, table) {
		return false, nil
	}
	if !f.user.Admin && f.policy.LanguageField(table) != "" && !f.user.CanAccessLanguage(int(r.Language)) {
		return false, nil
	}
	page := r.PID
	if table == "pages" {
		page = r.UID
	}
	if page == 0 && table != "pages" {
		return f.user.Admin, nil
	}
	return f.PageVisible(ctx, page)
}

// Preload loads at once the pages that deciding on rows of table with
// the given page uids (the pid, or for pages the uid) will need, so the
// Allow calls that follow cost no statement each.
func (f *RowFilter) Preload(ctx context.Context, table string, pages []int64) error {
	if f.user == nil || !f.policy.CanReadTable(f.user, table) {
		return nil
	}
	return f.pages.Preload(ctx, pages)
}

// PageVisible is the page decision (see the package doc): may the user
// see page uid and, through it, the records stored on it? It is memoised
// per page.
func (f *RowFilter) PageVisible(ctx context.Context, uid int64) (bool, error) {
	if f.user == nil || uid < 1 || !f.policy.CanReadTable(f.user, "pages") {
		return false, nil
	}
	f.mu.Lock()
	ok, known := f.visible[uid]
	f.mu.Unlock()
	if known {
		return ok, nil
	}
	ok, err := f.pageVisible(ctx, uid)
	if err != nil {
		return false, err
	}
	f.mu.Lock()
	f.visible[uid] = ok
	f.mu.Unlock()
	return ok, nil
}

func (f *RowFilter) pageVisible(ctx context.Context, uid int64) (bool, error) {
	p, err := f.page(ctx, uid)
	if p == nil || err != nil || !p.IsLive() {
		return false, err
	}
	if f.user.Admin {
		return true, nil
	}
	if !p.Enabled(f.now) || !f.user.CanAccessLanguage(p.SysLanguageUID) {
		return false, nil
	}
	// A translation is shown in its default-language page's place: that
	// page must be live and enabled too, and its ancestors are the ones
	// that count.
	base := p
	if p.SysLanguageUID != 0 && p.L10nParent != 0 {
		base, err = f.page(ctx, p.L10nParent)
		if base == nil || err != nil || !base.IsLive() || !base.Enabled(f.now) {
			return false, err
		}
	}
	if ok, err := f.pages.CanShow(ctx, uid); err != nil || !ok {
		return false, err
	}
	return f.ancestorsEnabled(ctx, base)
}

// ancestorsEnabled reports whether no page above p hides it from the live
// site: an ancestor with extendToSubpages must itself be enabled. The walk
// ends at the tree root, at a missing or deleted ancestor, or at a loop.
func (f *RowFilter) ancestorsEnabled(ctx context.Context, p *typo3.Page) (bool, error) {
	seen := map[int64]bool{p.UID: true}
	for id := p.PID; id > 0 && !seen[id] && len(seen) <= typo3.MaxRootlineDepth; {
		seen[id] = true
		a, err := f.page(ctx, id)
		if a == nil || err != nil {
			return err == nil, err
		}
		if a.ExtendToSubpages && !a.Enabled(f.now) {
			return false, nil
		}
		id = a.PID
	}
	return true, nil
}

// page is PageAccess.Page with a missing or deleted page as nil.
func (f *RowFilter) page(ctx context.Context, uid int64) (*typo3.Page, error) {
	p, err := f.pages.Page(ctx, uid)
	if errors.Is(err, typo3.ErrPageNotFound) {
		return nil, nil
	}
	return p, err
}

// CanAccessLanguage reports whether the user may read records in language
// id; a nil user may not.
func (f *RowFilter) CanAccessLanguage(id int64) bool {
	return f.user != nil && f.user.CanAccessLanguage(int(id))
}
