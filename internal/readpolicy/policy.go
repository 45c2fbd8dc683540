// Package readpolicy is the one read policy every record, page and schema
// tool goes through (SPEC §4). It answers four questions:
//
//   - may this user read this table at all (CanReadTable)?
//   - which of its columns may appear anywhere (IsCredentialColumn)?
//   - may this user see this page (RowFilter.PageVisible)?
//   - may this user see this row (RowFilter.Allow, applied after the query)?
//
// The column helpers (SearchColumns, LabelColumns, IsReadableColumn,
// IsCredentialField) give the record tools their column lists with the
// credential fields already removed, and RecordRestrictions and
// PageContentRestrictions the query restrictions of SPEC §4.
//
// # The page decision
//
// Every tool that shows a page or a record stored on a page asks
// RowFilter.PageVisible, so get_page_content, get_page_tree,
// search_records, read_records and get_record_history agree on every
// page: a page shows through get_page_content exactly when the records on
// it (that pass their own restrictions) show through the record tools.
// A page is visible when
//
//  1. there is an acting user and the pages table is readable for them
//     (CanReadTable: tables_select for non-admins);
//  2. the page exists, is not deleted and is the live version (workspace
//     0), as for every record;
//  3. for admins, nothing more: like TYPO3's backend, they see hidden and
//     timed pages (the page tools mark them);
//  4. for everyone else, what TYPO3 itself decides for the backend plus
//     what the live site shows, since SPEC §4 gives non-admins the default
//     restrictions:
//     - readPageAccess: the page passes the PAGE_SHOW perms clause (owner,
//     group and everybody bits) and lies in one of the user's DB mounts
//     through pages that pass it too (typo3.PageAccess.CanShow, which maps
//     a translation to its default-language page for the mount);
//     - the page's language is one the user may access
//     (allowed_languages);
//     - the page passes the default restrictions itself: not hidden,
//     starttime reached, endtime not passed (a translation's
//     default-language page too, since the live site shows a translation
//     in its place);
//     - no ancestor with extendToSubpages is hidden or out of its time
//     window, which hides the whole subtree on the live site.
//
// Doktype decides nothing: folders hold the records plugins show, and
// TYPO3's pagetypes_select limits which page types a user may create, not
// which pages they see. Whether the records of a table are readable is the
// table's own question (CanReadTable), which get_page_content asks for
// tt_content as well as pages (SPEC §4 rule 6).
//
// Why non-admins lose the records of hidden and timed pages although
// TYPO3's backend shows such pages to editors: the record tools give
// non-admins only what the live site shows (hidden, timed rows are
// filtered), and content on a page the live site does not show is not
// shown there either. Deciding the page one way for get_page_content and
// another for the records on it was what let tools disagree.
//
// The sensitive tables and the credential-column patterns are fixed in code
// and are not configurable. Denials use one neutral sentence that never
// confirms that a table or page exists.
package readpolicy

import (
	"regexp"
	"strings"

	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

// Neutral denials. They never say whether the table or page exists.
const (
	DeniedTable = "Table not found or not permitted."
	DeniedPage  = "Page not found or not permitted."
	DeniedUser  = "No backend user is acting; nothing can be read."
)

// sensitiveTables are unreadable for everyone, admins included. The
// dedicated redacting tools read some of them in their own narrow way.
var sensitiveTables = map[string]bool{
	"be_users": true, "be_groups": true, "fe_users": true, "fe_groups": true,
	"sys_log": true, "sys_history": true, "sys_refindex": true, "sys_http_report": true,
	"sys_lockedrecords": true, "sys_file_storage": true,
}

var sensitivePrefixes = []string{"tx_nrllm", "tx_nrvault"}

// IsSensitiveTable reports whether table is on the fixed denylist.
func IsSensitiveTable(table string) bool {
	t := strings.ToLower(table)
	if sensitiveTables[t] {
		return true
	}
	for _, p := range sensitivePrefixes {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

var (
	credentialSegment = regexp.MustCompile(`(?i)(^|_)(password|passwd|pwd|secret|token|salt|hash|credential|key|mfa|dsn|authorization|accesskey|licensekey|encryptionkey)(\d+)?($|_)`)
	credentialWord    = regexp.MustCompile(`(?i)(password|passphrase|apikey|apitoken|accesstoken|authtoken|refreshtoken|credential|privatekey|clientsecret)`)
)

// IsCredentialColumn reports whether a column name looks like it holds a
// credential. Such columns are dropped from every select, filter, search
// field and label, for everyone.
func IsCredentialColumn(name string) bool {
	return credentialSegment.MatchString(name) || credentialWord.MatchString(name)
}

// Policy decides table-level access against one site's TCA. It is
// immutable and safe for concurrent use.
type Policy struct {
	tca *tca.TCA
}

// New returns the policy for a site's TCA.
func New(t *tca.TCA) *Policy { return &Policy{tca: t} }

// TCA returns the TCA the policy decides against.
func (p *Policy) TCA() *tca.TCA { return p.tca }

// CanReadTable applies, in order: no user → no; sensitive table → no (even
// for admins); not in TCA → no; admin → yes; adminOnly (any truthy value)
// → no; otherwise the table must be in the user's effective tables_select
// (which includes tables_modify through all subgroups).
func (p *Policy) CanReadTable(user *typo3.BackendUser, table string) bool {
	if user == nil || table == "" {
		return false
	}
	if IsSensitiveTable(table) {
		return false
	}
	t := p.tca.Table(table)
	if t == nil {
		return false
	}
	if user.Admin {
		return true
	}
	if t.Ctrl.AdminOnly {
		return false
	}
	return user.CanSelectTable(table)
}

// ReadableTables lists the tables the user may read, sorted by name.
func (p *Policy) ReadableTables(user *typo3.BackendUser) []string {
	var out []string
	for _, name := range p.tca.Names() {
		if p.CanReadTable(user, name) {
			out = append(out, name)
		}
	}
	return out
}

// ReadableColumns returns the table's TCA columns that are not credential
// fields (IsCredentialField), in TCA order. The table must have passed CanReadTable.
func (p *Policy) ReadableColumns(table string) []string {
	t := p.tca.Table(table)
	if t == nil {
		return nil
	}
	out := make([]string, 0, len(t.ColumnOrder))
	for _, c := range t.ColumnOrder {
		if !p.IsCredentialField(table, c) {
			out = append(out, c)
		}
	}
	return out
}
