package readpolicy

import (
	"context"

	"github.com/t3agent/t3agent/internal/typo3"
)

// DeniedRecord is the neutral denial for a single record that is missing,
// deleted or not permitted.
const DeniedRecord = "Record not found or not permitted."

// RecordRestrictions are the query restrictions of the record tools, for
// admins too: deleted, hidden, starttime and endtime from TCA ctrl, and
// the live workspace only.
const RecordRestrictions = typo3.RestrictLive

// PageContentRestrictions are get_page_content's restrictions: admins see
// hidden and timed rows (the tool marks them) but never deleted or
// workspace rows; everybody else gets RecordRestrictions.
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
// may see (SPEC §4 rule 3). Checking after the query means a tool may
// return fewer rows than its limit; that is the price of never weakening
// the check into SQL that only approximates it.
//
// Make one per tool call: page answers are memoised per page uid for the
// life of the filter and never notice later changes. It is safe for
// concurrent use.
type RowFilter struct {
	policy *Policy
	user   *typo3.BackendUser
	pages  *typo3.PageAccess
}

// NewRowFilter returns the filter for user's rows on site. A nil user sees
// nothing.
func NewRowFilter(site *typo3.Site, policy *Policy, user *typo3.BackendUser) *RowFilter {
	return &RowFilter{policy: policy, user: user, pages: typo3.NewPageAccess(site, user)}
}

// User is the acting user (nil when there is none).
func (f *RowFilter) User() *typo3.BackendUser { return f.user }

// Allow reports whether the user may see row r of table. The table must be
// readable (Policy.CanReadTable, checked again here). For non-admins:
//
//   - a table with a TCA languageField needs access to the row's language
//     (BackendUser.CanAccessLanguage);
//   - the row's page must pass PAGE_SHOW and lie in the user's web mounts
//     (PageAccess.CanShow): the page is the row itself for pages, else its
//     pid, and a pid below 1 fails, since root-level records belong to no
//     page a non-admin can be granted.
//
// Admins pass every row of a readable table without a query.
func (f *RowFilter) Allow(ctx context.Context, table string, r Row) (bool, error) {
	if f.user == nil || !f.policy.CanReadTable(f.user, table) {
		return false, nil
	}
	if f.user.Admin {
		return true, nil
	}
	if f.policy.LanguageField(table) != "" && !f.user.CanAccessLanguage(int(r.Language)) {
		return false, nil
	}
	page := r.PID
	if table == "pages" {
		page = r.UID
	}
	if page < 1 {
		return false, nil
	}
	return f.pages.CanShow(ctx, page)
}

// CanShowPage reports whether the user may see page uid (PAGE_SHOW and
// web mounts; admins every page that is not deleted), memoised.
func (f *RowFilter) CanShowPage(ctx context.Context, uid int64) (bool, error) {
	return f.pages.CanShow(ctx, uid)
}

// CanAccessLanguage reports whether the user may read records in language
// id; a nil user may not.
func (f *RowFilter) CanAccessLanguage(id int64) bool {
	return f.user != nil && f.user.CanAccessLanguage(int(id))
}
