// Package readpolicy is the one read policy every record and schema tool
// goes through (SPEC §4). It answers three questions:
//
//   - may this user read this table at all (CanReadTable)?
//   - which of its columns may appear anywhere (IsCredentialColumn)?
//   - may this user see this row (RowFilter, applied after the query)?
//
// The column helpers (SearchColumns, LabelColumns, IsReadableColumn,
// IsCredentialField) give the record tools their column lists with the
// credential fields already removed, and RecordRestrictions and
// PageContentRestrictions the query restrictions of SPEC §4.
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
