package tca

import "sort"

// TCA is the resolved Table Configuration Array of one TYPO3 installation,
// reduced to what t3agent's tools need. It is immutable once loaded and safe
// for concurrent reads.
type TCA struct {
	// Tables by table name.
	Tables map[string]*Table
	// Source says where it was loaded from (cache file path, JSON file, or
	// "bundled"), for messages.
	Source string
}

// Table returns the named table, or nil.
func (t *TCA) Table(name string) *Table {
	if t == nil {
		return nil
	}
	return t.Tables[name]
}

// Names returns the table names in lexical order.
func (t *TCA) Names() []string {
	names := make([]string, 0, len(t.Tables))
	for n := range t.Tables {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Table is one table's TCA.
type Table struct {
	Name    string
	Ctrl    Ctrl
	Columns map[string]*Column
	// ColumnOrder keeps the order the columns have in the source.
	ColumnOrder []string
	// Types maps a record type value (or "0"/"1" default) to its showitem.
	Types map[string]Type
	// Palettes by name.
	Palettes map[string]Palette
}

// Column returns the named column, or nil.
func (t *Table) Column(name string) *Column {
	if t == nil {
		return nil
	}
	return t.Columns[name]
}

// Ctrl holds the ctrl section fields the tools use.
type Ctrl struct {
	Title                 string
	Label                 string
	LabelAlt              []string // label_alt, split on commas
	LabelAltForce         bool
	SearchFields          []string // searchFields, split on commas
	AdminOnly             bool     // any truthy value
	RootLevel             int      // 0 pages only, 1 root only, -1 both
	Delete                string   // column name of the deleted flag, or ""
	EnableColumns         EnableColumns
	LanguageField         string
	TransOrigPointerField string
	VersioningWS          bool
	SortBy                string
	DefaultSortBy         string
	Type                  string // column holding the record type, or ""
	Hidden                bool   // ctrl.hideTable
	// Raw is the whole ctrl array as loaded (see Plain), for fields the
	// typed view leaves out (tstamp, crdate, descriptionColumn, …).
	Raw map[string]any
}

// EnableColumns are the columns behind the default restrictions.
type EnableColumns struct {
	Disabled  string
	StartTime string
	EndTime   string
	FeGroup   string
}

// Column is one column's TCA.
type Column struct {
	Name    string
	Label   string
	Exclude bool
	Config  ColumnConfig
}

// ColumnConfig holds the config fields the tools use.
type ColumnConfig struct {
	Type         string
	RenderType   string
	ForeignTable string
	MM           string
	Allowed      string
	Items        []Item
	// DS maps a data structure key to inline XML or a FILE:EXT:… reference
	// (type flex only).
	DS             map[string]string
	DSPointerField string
	// Raw is the full config array as loaded, for schema readouts. Nested
	// arrays are converted as Plain does.
	Raw map[string]any
}

// Item is one entry of a select/radio/check items list.
type Item struct {
	Label string
	Value string
	Group string
}

// Type is a record type's field list.
type Type struct {
	ShowItem string
}

// Palette is a named group of fields.
type Palette struct {
	Label    string
	ShowItem string
}
