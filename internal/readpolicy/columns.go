package readpolicy

import (
	"slices"

	"github.com/t3agent/t3agent/internal/typo3/tca"
)

// textLikeTypes are the TCA column types whose values are free text a
// search may match: what TYPO3 v13's record search compares with LIKE
// (input, text, email, link, slug, color, flex) plus json and uuid, which
// v14 marks searchable.
var textLikeTypes = []string{"input", "text", "email", "link", "slug", "color", "flex", "json", "uuid"}

// IsTextLike reports whether a TCA column holds searchable text.
func IsTextLike(c *tca.Column) bool {
	return c != nil && slices.Contains(textLikeTypes, c.Config.Type)
}

// IsCredentialField reports whether column of table must never be read:
// a credential-like name (IsCredentialColumn), a TCA column of type
// password whatever its name, or the ctrl transOrigDiffSourceField, whose
// serialized snapshot of the whole record would carry every other
// column's value, credentials included.
func (p *Policy) IsCredentialField(table, column string) bool {
	if IsCredentialColumn(column) {
		return true
	}
	t := p.tca.Table(table)
	if t == nil {
		return false
	}
	if c := t.Column(column); c != nil && c.Config.Type == "password" {
		return true
	}
	diff, _ := t.Ctrl.Raw["transOrigDiffSourceField"].(string)
	return diff != "" && diff == column
}

// LanguageField is the table's TCA languageField, or "" when it has none
// (or names a credential-like column, which no tool may read).
func (p *Policy) LanguageField(table string) string {
	t := p.tca.Table(table)
	if t == nil || t.Ctrl.LanguageField == "" || p.IsCredentialField(table, t.Ctrl.LanguageField) {
		return ""
	}
	return t.Ctrl.LanguageField
}

// IsReadableColumn reports whether column of table may be selected or
// filtered on: uid and pid, or a TCA column that is not a credential
// field (IsCredentialField).
// Whether the live database has it is the caller's question.
func (p *Policy) IsReadableColumn(table, column string) bool {
	if column == "uid" || column == "pid" {
		return p.tca.Table(table) != nil
	}
	t := p.tca.Table(table)
	return t != nil && t.Column(column) != nil && !p.IsCredentialField(table, column)
}

// SearchColumns are the columns a full-text search of table compares:
// ctrl.searchFields that are text-like TCA columns, or every text-like
// column when searchFields declares none, in either case without the
// credential-like ones. Order follows searchFields, else the TCA.
func (p *Policy) SearchColumns(table string) []string {
	t := p.tca.Table(table)
	if t == nil {
		return nil
	}
	var out []string
	add := func(name string) {
		if IsTextLike(t.Column(name)) && !p.IsCredentialField(table, name) && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	if len(t.Ctrl.SearchFields) > 0 {
		for _, f := range t.Ctrl.SearchFields {
			add(f)
		}
		return out
	}
	for _, c := range t.ColumnOrder {
		add(c)
	}
	return out
}

// LabelColumns are ctrl.label followed by ctrl.label_alt, without
// credential-like columns (a credential label is suppressed, never shown)
// and without duplicates.
func (p *Policy) LabelColumns(table string) []string {
	t := p.tca.Table(table)
	if t == nil {
		return nil
	}
	var out []string
	for _, c := range append([]string{t.Ctrl.Label}, t.Ctrl.LabelAlt...) {
		if c != "" && !p.IsCredentialField(table, c) && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}
