package tca

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// realTCA is the introduction TCA read from the cache fixture.
func realTCA(t *testing.T) *TCA {
	t.Helper()
	tca, err := LoadCacheFile(fixturePath(t))
	if err != nil {
		t.Fatal(err)
	}
	return tca
}

func itemValues(items []Item) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.Value)
	}
	return out
}

func TestRealTCAFacts(t *testing.T) {
	t.Parallel()
	tca := realTCA(t)

	tt := tca.Table("tt_content")
	if tt == nil {
		t.Fatal("no tt_content")
	}
	want := EnableColumns{Disabled: "hidden", StartTime: "starttime", EndTime: "endtime", FeGroup: "fe_group"}
	c := tt.Ctrl
	if c.Label != "header" || !slices.Equal(c.LabelAlt, []string{"subheader", "bodytext"}) || c.Type != "CType" ||
		c.LanguageField != "sys_language_uid" || c.TransOrigPointerField != "l18n_parent" || c.Delete != "deleted" ||
		c.SortBy != "sorting" || !c.VersioningWS || c.EnableColumns != want || c.AdminOnly || c.RootLevel != 0 {
		t.Errorf("tt_content ctrl: %+v", c)
	}
	if !slices.Equal(c.SearchFields, []string{"header", "header_link", "subheader", "bodytext", "pi_flexform"}) {
		t.Errorf("tt_content searchFields: %q", c.SearchFields)
	}
	if c.Raw["translationSource"] != "l10n_source" || c.Raw["previewRenderer"] != `TYPO3\CMS\Backend\Preview\StandardContentPreviewRenderer` {
		t.Errorf("tt_content ctrl raw: %v / %v", c.Raw["translationSource"], c.Raw["previewRenderer"])
	}
	if tt.ColumnOrder[0] != "CType" || len(tt.ColumnOrder) != len(tt.Columns) {
		t.Errorf("column order starts %q, %d of %d", tt.ColumnOrder[0], len(tt.ColumnOrder), len(tt.Columns))
	}

	ctype := tt.Column("CType").Config
	if ctype.Type != "select" || ctype.RenderType != "selectSingle" || len(ctype.Items) != 50 {
		t.Errorf("CType: %s/%s, %d items", ctype.Type, ctype.RenderType, len(ctype.Items))
	}
	if it := ctype.Items[slices.IndexFunc(ctype.Items, func(i Item) bool { return i.Value == "felogin_login" })]; it.Group != "forms" ||
		!strings.HasPrefix(it.Label, "LLL:EXT:felogin/") {
		t.Errorf("felogin item: %+v", it)
	}
	if got := itemValues(tt.Column("colPos").Config.Items); !slices.Equal(got, []string{"1", "0", "2", "3"}) {
		t.Errorf("colPos items %q", got)
	}
	// Integer item values come out as their decimal strings.
	if got := itemValues(tt.Column("imageorient").Config.Items); !slices.Contains(got, "26") || got[0] != "0" {
		t.Errorf("imageorient items %q", got)
	}

	fx := tt.Column("pi_flexform").Config
	if fx.Type != "flex" || fx.DSPointerField != "list_type,CType" || len(fx.DS) != 15 {
		t.Fatalf("pi_flexform: %s %q, %d ds", fx.Type, fx.DSPointerField, len(fx.DS))
	}
	for key, val := range map[string]string{
		"*,felogin_login":      "FILE:EXT:felogin/Configuration/FlexForms/Login.xml",
		"*,form_formframework": "FILE:EXT:form/Configuration/FlexForms/FormFramework.xml",
		"*,carousel_small":     "FILE:EXT:bootstrap_package/Configuration/FlexForms/Carousel.xml",
	} {
		if fx.DS[key] != val {
			t.Errorf("ds[%q] = %q", key, fx.DS[key])
		}
	}
	if !strings.Contains(fx.DS["default"], "<T3DataStructure>") {
		t.Errorf("ds default is not inline XML: %.40q", fx.DS["default"])
	}
	// PHP's \' escape survives into Raw.
	if s := fx.Raw["search"].(map[string]any)["andWhere"]; s != "{#CType}='list'" {
		t.Errorf("search.andWhere = %q", s)
	}

	pages := tca.Table("pages")
	if pages.Ctrl.EnableColumns != want || pages.Ctrl.Type != "doktype" || pages.Ctrl.TransOrigPointerField != "l10n_parent" {
		t.Errorf("pages ctrl: %+v", pages.Ctrl)
	}
	dok := pages.Column("doktype").Config.Items
	if got := itemValues(dok); !slices.Equal(got, []string{"1", "6", "4", "7", "3", "254", "199"}) {
		t.Errorf("doktype items %q", got)
	}
	if dok[5].Group != "special" || !pages.Column("doktype").Exclude {
		t.Errorf("doktype folder item %+v", dok[5])
	}
	if _, ok := pages.Types["254"]; !ok || !strings.Contains(pages.Types["1"].ShowItem, "--palette--;;title") {
		t.Errorf("pages types: %v", pages.Types["1"])
	}
	if p, ok := pages.Palettes["title"]; !ok || !strings.Contains(p.ShowItem, "title") {
		t.Errorf("pages palette title: %+v", p)
	}
	// Floats stay floats: seo's social crop ratio.
	crop := pages.Column("og_image").Config.Raw["overrideChildTca"].(map[string]any)["columns"].(map[string]any)["crop"].(map[string]any)
	ratio := crop["config"].(map[string]any)["cropVariants"].(map[string]any)["social"].(map[string]any)["allowedAspectRatios"].(map[string]any)["1.91:1"].(map[string]any)["value"]
	if ratio != 1.9047619047619047 {
		t.Errorf("og_image ratio = %#v", ratio)
	}

	be := tca.Table("be_users").Ctrl
	if !be.AdminOnly || be.RootLevel != 1 || be.Type != "admin" || be.EnableColumns.Disabled != "disable" ||
		be.EnableColumns.FeGroup != "" || be.DefaultSortBy != "admin, username" {
		t.Errorf("be_users ctrl: %+v", be)
	}
	if _, ok := tca.Table("be_users").Types["1"]; !ok {
		t.Error("be_users has no type 1 (admin)")
	}
	if g := tca.Table("be_groups").Ctrl; !g.AdminOnly || g.RootLevel != 1 || g.EnableColumns.Disabled != "hidden" {
		t.Errorf("be_groups ctrl: %+v", g)
	}
	if tca.Table("sys_category").Ctrl.RootLevel != -1 || !tca.Table("sys_file").Ctrl.Hidden || tca.Table("pages").Ctrl.Hidden {
		t.Error("sys_category rootLevel / sys_file hideTable wrong")
	}
	if got := tca.Table("sys_file").Ctrl.SearchFields; !slices.Equal(got, []string{"name", "type", "mime_type"}) {
		t.Errorf("sys_file searchFields (written with blanks) = %q", got)
	}
	cat := tca.Table("tt_content").Column("categories").Config
	if cat.Type != "category" || cat.MM != "sys_category_record_mm" || cat.ForeignTable != "sys_category" {
		t.Errorf("tt_content.categories: %+v", cat)
	}
	if got := tca.Table("sys_category").Column("items").Config.Allowed; got != "*" {
		t.Errorf("sys_category.items allowed %q", got)
	}
	if tca.Table("nope") != nil || tca.Table("pages").Column("nope") != nil || (*TCA)(nil).Table("pages") != nil {
		t.Error("lookups of missing names must return nil")
	}
	if names := tca.Names(); len(names) != 24 || !slices.IsSorted(names) {
		t.Errorf("Names() = %v", names)
	}
}

// TestLenientValues feeds the spellings PHP TCA uses interchangeably.
func TestLenientValues(t *testing.T) {
	t.Parallel()
	src := `array (
  'a' => array (
    'ctrl' => array (
      'adminOnly' => '1', 'versioningWS' => 1, 'hideTable' => 'yes', 'label_alt_force' => 0,
      'rootLevel' => '-1', 'label_alt' => ' x ,y,, z ', 'searchFields' => 'x' . "\0" . '',
      'enablecolumns' => 'not an array',
    ),
    'columns' => array (
      'x' => array ( 'exclude' => '0', 'label' => 7, 'config' => array (
        'type' => 'select',
        'items' => array (
          0 => array ( 0 => 'Legacy', 1 => 5, 2 => 'icon', 3 => 'grp' ),
          1 => array ( 'label' => 'New', 'value' => 1.5, 'group' => 'g' ),
          2 => array ( 'label' => 'No value' ),
          3 => 'not an item',
          4 => array ( 0 => 'Only label' ),
        ),
      ) ),
      'y' => array ( 'exclude' => true, 'config' => array ( 'type' => 'flex', 'ds' => '<T3DataStructure/>' ) ),
      'z' => array ( 'config' => array ( 'type' => 'flex', 'ds' => array ( 'default' => 'FILE:x.xml', 'other' => array () ) ) ),
      'n' => array ( 'label' => 'no config' ),
    ),
    'types' => array ( 0 => array ( 'showitem' => 'x, y' ), 'b' => 'junk' ),
  ),
)`
	v, err := ParseVarExport([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	tca, err := FromArray(v.(*Array), "test")
	if err != nil {
		t.Fatal(err)
	}
	a := tca.Table("a")
	c := a.Ctrl
	if !c.AdminOnly || !c.VersioningWS || !c.Hidden || c.LabelAltForce || c.RootLevel != -1 {
		t.Errorf("flags: %+v", c)
	}
	if !slices.Equal(c.LabelAlt, []string{"x", "y", "z"}) || len(c.SearchFields) != 1 || c.SearchFields[0] != "x\x00" {
		t.Errorf("lists: %q %q", c.LabelAlt, c.SearchFields)
	}
	if c.EnableColumns != (EnableColumns{}) {
		t.Errorf("enablecolumns from a string: %+v", c.EnableColumns)
	}
	x := a.Column("x")
	if x.Exclude || x.Label != "7" {
		t.Errorf("column x: %+v", x)
	}
	wantItems := []Item{
		{Label: "Legacy", Value: "5", Group: "grp"},
		{Label: "New", Value: "1.5", Group: "g"},
		{Label: "No value"},
		{Label: "Only label"},
	}
	if !reflect.DeepEqual(x.Config.Items, wantItems) {
		t.Errorf("items = %+v", x.Config.Items)
	}
	if y := a.Column("y"); !y.Exclude || !reflect.DeepEqual(y.Config.DS, map[string]string{"default": "<T3DataStructure/>"}) {
		t.Errorf("column y: %+v", y)
	}
	if z := a.Column("z").Config; !reflect.DeepEqual(z.DS, map[string]string{"default": "FILE:x.xml"}) ||
		!reflect.DeepEqual(z.Raw["ds"], map[string]any{"default": "FILE:x.xml", "other": []any{}}) {
		t.Errorf("column z: %+v", z)
	}
	if n := a.Column("n"); n.Config.Type != "" || n.Config.Raw != nil || n.Label != "no config" {
		t.Errorf("column n: %+v", n)
	}
	if !reflect.DeepEqual(a.Types, map[string]Type{"0": {ShowItem: "x, y"}, "b": {}}) {
		t.Errorf("types: %+v", a.Types)
	}
	if !slices.Equal(a.ColumnOrder, []string{"x", "y", "z", "n"}) {
		t.Errorf("order: %q", a.ColumnOrder)
	}
	// Raw keeps lists as slices and numbers with their PHP type.
	items := x.Config.Raw["items"].([]any)
	if len(items) != 5 || items[1].(map[string]any)["value"] != 1.5 || items[0].([]any)[1] != int64(5) {
		t.Errorf("raw items: %#v", items)
	}
}

func TestPHPConversions(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		v     any
		str   string
		truth bool
		n     int
	}{
		{nil, "", false, 0},
		{true, "1", true, 1},
		{false, "", false, 0},
		{int64(-3), "-3", true, -3},
		{0.0, "0", false, 0},
		{2.5, "2.5", true, 2},
		{"0", "0", false, 0},
		{"", "", false, 0},
		{" 12abc", " 12abc", true, 12},
		{"-1", "-1", true, -1},
		{"0.0", "0.0", true, 0},
		{&Array{}, "", false, 0},
		{arr(0, int64(1)), "", true, 0},
	} {
		if got := phpString(c.v); got != c.str {
			t.Errorf("phpString(%#v) = %q, want %q", c.v, got, c.str)
		}
		if got := truthy(c.v); got != c.truth {
			t.Errorf("truthy(%#v) = %v", c.v, got)
		}
		if got := intOf(c.v); got != c.n {
			t.Errorf("intOf(%#v) = %d, want %d", c.v, got, c.n)
		}
	}
	for s, want := range map[string]Key{
		"0": IntKey(0), "42": IntKey(42), "-42": IntKey(-42), "-0": {Str: "-0"}, "042": {Str: "042"},
		"9223372036854775807": IntKey(9223372036854775807), "9223372036854775808": {Str: "9223372036854775808"},
		"1.5": {Str: "1.5"}, " 1": {Str: " 1"}, "": {Str: ""}, "-": {Str: "-"},
	} {
		if got := StrKey(s); got != want {
			t.Errorf("StrKey(%q) = %#v, want %#v", s, got, want)
		}
	}
}
