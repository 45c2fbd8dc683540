package tca

import (
	"fmt"
	"strings"
)

// FromArray builds the typed model from a generic table map (table name →
// TCA array), as ParsePHPReturn's 'tca' entry or DecodeJSON produce it.
// Field values are read leniently, the way PHP would read them (booleans
// may be true, 1 or '1'; numbers may be strings); only a table or column
// that is not an array is an error, because that means the input is not
// TCA at all.
func FromArray(tables *Array, source string) (*TCA, error) {
	out := &TCA{Tables: make(map[string]*Table, tables.Len()), Source: source}
	if tables == nil {
		return out, nil
	}
	for i, k := range tables.Keys {
		name := k.String()
		ta, ok := tables.Values[i].(*Array)
		if !ok {
			return nil, fmt.Errorf("TCA table %q is %s, not an array", name, kind(tables.Values[i]))
		}
		t, err := tableFrom(name, ta)
		if err != nil {
			return nil, err
		}
		out.Tables[name] = t
	}
	return out, nil
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "NULL"
	case bool:
		return "a boolean"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case string:
		return "a string"
	}
	return "an array"
}

func tableFrom(name string, a *Array) (*Table, error) {
	t := &Table{
		Name:     name,
		Ctrl:     ctrlFrom(a.Array("ctrl")),
		Columns:  map[string]*Column{},
		Types:    map[string]Type{},
		Palettes: map[string]Palette{},
	}
	cols := a.Array("columns")
	for i, k := range cols.keys() {
		cname := k.String()
		ca, ok := cols.Values[i].(*Array)
		if !ok {
			return nil, fmt.Errorf("TCA column %s.%s is %s, not an array", name, cname, kind(cols.Values[i]))
		}
		t.Columns[cname] = columnFrom(cname, ca)
		t.ColumnOrder = append(t.ColumnOrder, cname)
	}
	types := a.Array("types")
	for i, k := range types.keys() {
		ta, _ := types.Values[i].(*Array)
		t.Types[k.String()] = Type{ShowItem: str(ta, "showitem")}
	}
	pals := a.Array("palettes")
	for i, k := range pals.keys() {
		pa, _ := pals.Values[i].(*Array)
		t.Palettes[k.String()] = Palette{Label: str(pa, "label"), ShowItem: str(pa, "showitem")}
	}
	return t, nil
}

// keys returns the keys of a possibly nil array, so callers can range.
func (a *Array) keys() []Key {
	if a == nil {
		return nil
	}
	return a.Keys
}

func ctrlFrom(c *Array) Ctrl {
	ec := c.Array("enablecolumns")
	return Ctrl{
		Title:         str(c, "title"),
		Label:         str(c, "label"),
		LabelAlt:      list(str(c, "label_alt")),
		LabelAltForce: flag(c, "label_alt_force"),
		SearchFields:  list(str(c, "searchFields")),
		AdminOnly:     flag(c, "adminOnly"),
		RootLevel:     num(c, "rootLevel"),
		Delete:        str(c, "delete"),
		EnableColumns: EnableColumns{
			Disabled:  str(ec, "disabled"),
			StartTime: str(ec, "starttime"),
			EndTime:   str(ec, "endtime"),
			FeGroup:   str(ec, "fe_group"),
		},
		LanguageField:         str(c, "languageField"),
		TransOrigPointerField: str(c, "transOrigPointerField"),
		VersioningWS:          flag(c, "versioningWS"),
		SortBy:                str(c, "sortby"),
		DefaultSortBy:         str(c, "default_sortby"),
		Type:                  str(c, "type"),
		Hidden:                flag(c, "hideTable"),
		Raw:                   plainMap(c),
	}
}

func columnFrom(name string, a *Array) *Column {
	col := &Column{Name: name, Label: str(a, "label"), Exclude: flag(a, "exclude")}
	cfg := a.Array("config")
	if cfg == nil {
		return col
	}
	col.Config = ColumnConfig{
		Type:           str(cfg, "type"),
		RenderType:     str(cfg, "renderType"),
		ForeignTable:   str(cfg, "foreign_table"),
		MM:             str(cfg, "MM"),
		Allowed:        str(cfg, "allowed"),
		Items:          itemsFrom(cfg.Array("items")),
		DSPointerField: str(cfg, "ds_pointerField"),
		Raw:            plainMap(cfg),
	}
	switch ds, _ := cfg.Get("ds"); d := ds.(type) {
	case *Array:
		col.Config.DS = make(map[string]string, d.Len())
		for i, k := range d.Keys {
			if s, ok := d.Values[i].(string); ok {
				col.Config.DS[k.String()] = s
			}
		}
	case string:
		// A single data structure without pointer field.
		col.Config.DS = map[string]string{"default": d}
	}
	return col
}

// itemsFrom reads both item forms: v12+ ['label' => …, 'value' => …,
// 'group' => …] and the older positional [label, value, icon, group].
func itemsFrom(a *Array) []Item {
	var items []Item
	for _, v := range a.values() {
		ia, ok := v.(*Array)
		if !ok {
			continue
		}
		_, hasLabel := ia.Get("label")
		_, hasValue := ia.Get("value")
		if hasLabel || hasValue {
			items = append(items, Item{Label: str(ia, "label"), Value: str(ia, "value"), Group: str(ia, "group")})
			continue
		}
		items = append(items, Item{Label: str(ia, "0"), Value: str(ia, "1"), Group: str(ia, "3")})
	}
	return items
}

func (a *Array) values() []any {
	if a == nil {
		return nil
	}
	return a.Values
}

func str(a *Array, name string) string {
	v, _ := a.Get(name)
	return phpString(v)
}

func flag(a *Array, name string) bool {
	v, _ := a.Get(name)
	return truthy(v)
}

func num(a *Array, name string) int {
	v, _ := a.Get(name)
	return intOf(v)
}

// list splits a comma list, trimming blanks (TCA lists are often written
// as "a, b" or across lines) and dropping empty parts.
func list(s string) []string {
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}
