package tca

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/dbtest"
)

// upstreamQuirks are inconsistencies present in real TYPO3 v13 TCA that
// the bundled copy reproduces on purpose, so it matches reality.
var upstreamQuirks = map[string]string{
	// v12 replaced sys_filemounts.path by identifier but kept it in
	// searchFields.
	"sys_filemounts.path": "searchFields",
}

func TestBundledSanity(t *testing.T) {
	t.Parallel()
	b := Bundled()
	if b.Source != BundledSource {
		t.Errorf("Source = %q", b.Source)
	}
	wantTables := []string{"backend_layout", "be_groups", "be_users", "fe_groups", "fe_users", "pages", "sys_category", "sys_file",
		"sys_file_metadata", "sys_file_reference", "sys_file_storage", "sys_filemounts", "sys_template", "tt_content"}
	if !slices.Equal(b.Names(), wantTables) {
		t.Fatalf("tables = %q", b.Names())
	}
	for _, name := range b.Names() {
		tb := b.Table(name)
		isCol := func(what, field string) {
			t.Helper()
			if tb.Column(field) == nil && upstreamQuirks[name+"."+field] == "" {
				t.Errorf("%s: %s %q is not a column", name, what, field)
			}
		}
		c := tb.Ctrl
		if c.Title == "" || strings.HasPrefix(c.Title, "LLL:") {
			t.Errorf("%s: title %q should be plain words", name, c.Title)
		}
		isCol("label", c.Label)
		for _, f := range c.LabelAlt {
			isCol("label_alt", f)
		}
		for _, f := range c.SearchFields {
			isCol("searchFields", f)
		}
		for _, f := range []string{c.EnableColumns.Disabled, c.EnableColumns.StartTime, c.EnableColumns.EndTime, c.EnableColumns.FeGroup, c.LanguageField, c.TransOrigPointerField} {
			if f != "" {
				isCol("ctrl field", f)
			}
		}
		if (c.LanguageField == "") != (c.TransOrigPointerField == "") {
			t.Errorf("%s: languageField and transOrigPointerField come in pairs", name)
		}
		if c.Type != "" {
			// "uid_local:type" points through a relation; the local part
			// must be a column here.
			local, _, _ := strings.Cut(c.Type, ":")
			isCol("type", local)
		}
		if len(tb.Types) == 0 {
			t.Errorf("%s: no types", name)
		}
		if len(tb.ColumnOrder) != len(tb.Columns) {
			t.Errorf("%s: column order has %d of %d", name, len(tb.ColumnOrder), len(tb.Columns))
		}
		for key, ty := range tb.Types {
			for _, f := range list(ty.ShowItem) {
				if strings.HasPrefix(f, "--") {
					continue
				}
				isCol("types."+key+".showitem field", f)
			}
		}
		for _, cn := range tb.ColumnOrder {
			col := tb.Column(cn)
			cfg := col.Config
			if cfg.Type == "" {
				t.Errorf("%s.%s: no config type", name, cn)
			}
			if cfg.ForeignTable != "" && b.Table(cfg.ForeignTable) == nil {
				t.Errorf("%s.%s: foreign_table %q is not bundled", name, cn, cfg.ForeignTable)
			}
			if cfg.Type == "group" && cfg.Allowed != "*" {
				for _, a := range list(cfg.Allowed) {
					if b.Table(a) == nil {
						t.Errorf("%s.%s: allowed table %q is not bundled", name, cn, a)
					}
				}
			}
			if cfg.Type == "file" && (cfg.ForeignTable != "sys_file_reference" || cfg.Raw["foreign_match_fields"] == nil) {
				t.Errorf("%s.%s: file field without sys_file_reference match fields", name, cn)
			}
			if cfg.Type == "flex" {
				if len(cfg.DS) == 0 {
					t.Errorf("%s.%s: flex without ds", name, cn)
				}
				for _, f := range list(cfg.DSPointerField) {
					isCol("ds_pointerField", f)
				}
			}
			if cfg.Raw == nil || cfg.Raw["type"] != cfg.Type {
				t.Errorf("%s.%s: Raw does not carry the config", name, cn)
			}
		}
	}

	// Record types match the type column's items one to one.
	for _, tc := range []struct{ table, col string }{{"tt_content", "CType"}, {"pages", "doktype"}} {
		tb := b.Table(tc.table)
		values := itemValues(tb.Column(tc.col).Config.Items)
		for _, v := range values {
			if _, ok := tb.Types[v]; !ok {
				t.Errorf("%s: %s %q has no types entry", tc.table, tc.col, v)
			}
		}
		for k := range tb.Types {
			if !slices.Contains(values, k) {
				t.Errorf("%s: types entry %q is not a %s item", tc.table, k, tc.col)
			}
		}
	}

	fx := b.Table("tt_content").Column("pi_flexform").Config
	if fx.DSPointerField != "list_type,CType" || fx.DS["*,felogin_login"] != "FILE:EXT:felogin/Configuration/FlexForms/Login.xml" ||
		!strings.Contains(fx.DS["default"], "<T3DataStructure>") || len(fx.DS) != 2 {
		t.Errorf("pi_flexform: %q %v", fx.DSPointerField, fx.DS)
	}
	colPos := itemValues(b.Table("tt_content").Column("colPos").Config.Items)
	if !slices.Equal(colPos, []string{"1", "0", "2", "3"}) {
		t.Errorf("colPos items %q", colPos)
	}

	// Each call builds its own model, so one caller's edits stay local.
	b.Table("pages").Ctrl.Label = "changed"
	b.Table("pages").Column("title").Config.Raw["type"] = "changed"
	if again := Bundled(); again.Table("pages").Ctrl.Label != "title" || again.Table("pages").Column("title").Config.Raw["type"] != "input" {
		t.Error("Bundled() shares state between calls")
	}
}

func loadJSONFile(t *testing.T, path string) *TCA {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tca, err := LoadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	return tca
}

// TestBundledMatchesRealTYPO3 keeps the hand-written bundled TCA honest:
// every ctrl and config setting it states must be what TYPO3 v13.4 itself
// produces (tca-core.json), and its items and FlexForm keys must exist in
// a real install (core or the introduction profile, which adds felogin).
func TestBundledMatchesRealTYPO3(t *testing.T) {
	t.Parallel()
	shared := dbtest.TYPO3Material(t)
	core := loadJSONFile(t, filepath.Join(shared, "tca-core.json"))
	intro := loadJSONFile(t, filepath.Join(shared, "tca-introduction.json"))
	b := Bundled()
	for _, name := range b.Names() {
		mine, real := b.Table(name), core.Table(name)
		if real == nil {
			t.Errorf("%s is not a core table", name)
			continue
		}
		// Typed ctrl: equal except the title, which we word ourselves.
		mc, rc := mine.Ctrl, real.Ctrl
		mc.Title, rc.Title, mc.Raw, rc.Raw = "", "", nil, nil
		if !reflect.DeepEqual(mc, rc) {
			t.Errorf("%s ctrl:\n bundled %+v\n real    %+v", name, mc, rc)
		}
		for k, v := range mine.Ctrl.Raw {
			if k != "title" && !reflect.DeepEqual(v, real.Ctrl.Raw[k]) {
				t.Errorf("%s ctrl.%s = %#v, real %#v", name, k, v, real.Ctrl.Raw[k])
			}
		}
		for _, cn := range mine.ColumnOrder {
			mcol, rcol := mine.Column(cn), real.Column(cn)
			if rcol == nil {
				t.Errorf("%s.%s is not a core column", name, cn)
				continue
			}
			if mcol.Exclude != rcol.Exclude {
				t.Errorf("%s.%s exclude = %v, real %v", name, cn, mcol.Exclude, rcol.Exclude)
			}
			for k, v := range mcol.Config.Raw {
				if k == "items" || k == "ds" {
					continue
				}
				if rv, ok := rcol.Config.Raw[k]; !ok || !reflect.DeepEqual(v, rv) {
					t.Errorf("%s.%s config.%s = %#v, real %#v", name, cn, k, v, rv)
				}
			}
			realItems := itemValues(rcol.Config.Items)
			if ic := intro.Table(name).Column(cn); ic != nil {
				realItems = append(realItems, itemValues(ic.Config.Items)...)
			}
			for _, it := range mcol.Config.Items {
				if !slices.Contains(realItems, it.Value) {
					t.Errorf("%s.%s item value %q does not exist in TYPO3", name, cn, it.Value)
				}
			}
			mineGroups := map[string]string{}
			for _, it := range mcol.Config.Items {
				mineGroups[it.Value] = it.Group
			}
			for _, src := range []*TCA{core, intro} {
				if c := src.Table(name).Column(cn); c != nil {
					for _, it := range c.Config.Items {
						if g, ok := mineGroups[it.Value]; ok && g != it.Group {
							t.Errorf("%s.%s item %q group %q, real %q", name, cn, it.Value, g, it.Group)
						}
					}
				}
			}
			for key, val := range mcol.Config.DS {
				realDS := intro.Table(name).Column(cn).Config.DS
				rv, ok := realDS[key]
				if !ok {
					t.Errorf("%s.%s ds key %q does not exist in TYPO3", name, cn, key)
				} else if strings.HasPrefix(val, "FILE:") && val != rv {
					t.Errorf("%s.%s ds[%q] = %q, real %q", name, cn, key, val, rv)
				}
			}
			if mcol.Config.DSPointerField != rcol.Config.DSPointerField {
				t.Errorf("%s.%s ds_pointerField %q, real %q", name, cn, mcol.Config.DSPointerField, rcol.Config.DSPointerField)
			}
		}
		// Columns a writer must fill for the ctrl features are all there.
		for _, cn := range real.ColumnOrder {
			if mine.Column(cn) == nil && isCtrlColumn(real.Ctrl, cn) {
				t.Errorf("%s: bundled lacks ctrl column %s", name, cn)
			}
		}
	}
}

func isCtrlColumn(c Ctrl, name string) bool {
	e := c.EnableColumns
	for _, f := range []string{c.Label, e.Disabled, e.StartTime, e.EndTime, e.FeGroup, c.LanguageField, c.TransOrigPointerField} {
		if f == name {
			return true
		}
	}
	return slices.Contains(c.SearchFields, name) || slices.Contains(c.LabelAlt, name)
}
