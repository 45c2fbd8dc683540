package structure

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/extpath"
)

// maxPointerKeys caps the list of data structure keys.
const maxPointerKeys = 200

type flexFormSchema struct{ env }

func (t *flexFormSchema) Spec() tool.Spec {
	return spec("get_flexform_schema", tool.GroupStructure,
		"The FlexForm data structure of a TCA field of type flex (e.g. tt_content.pi_flexform), rendered as "+
			"`Sheet: key (title)` lines each followed by `- field: type, renderType, relation (label)` lines; "+
			"sections list their containers and the containers' fields. Many fields hold several structures, "+
			"chosen by the record's pointer fields (for tt_content: list_type,CType). Without ds_pointer you get "+
			"the list of structure keys when there is more than one; then call again with ds_pointer set to a key "+
			"(e.g. \"*,felogin_login\"), to the CType or plugin value alone (\"felogin_login\"), or to "+
			"\"list_type,CType\" values; TYPO3's order is tried: `a,b`, `a,*`, `*,b`, `a`, `default`. "+
			"Get field types from get_table_schema first.",
		`{"type":"object","properties":{`+
			`"table":{"type":"string","minLength":1,"maxLength":64,"description":"Table name, e.g. tt_content."},`+
			`"field":{"type":"string","minLength":1,"maxLength":64,"description":"Field of type flex, e.g. pi_flexform."},`+
			`"ds_pointer":{"type":"string","minLength":1,"maxLength":200,"description":"A data structure key, or the pointer field value(s)."}`+
			`},"required":["table","field"],"additionalProperties":false}`)
}

func (t *flexFormSchema) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	if call.Actor == nil {
		return denyUser(), nil
	}
	table, err := stringArg(args, "table")
	if err != nil {
		return tool.Errorf("%v.", err), nil
	}
	field, err := stringArg(args, "field")
	if err != nil {
		return tool.Errorf("%v.", err), nil
	}
	pointer, err := stringArg(args, "ds_pointer")
	if err != nil {
		return tool.Errorf("%v.", err), nil
	}
	table, field, pointer = strings.TrimSpace(table), strings.TrimSpace(field), strings.TrimSpace(pointer)
	if !typo3.ValidIdent(table) || !t.policy.CanReadTable(call.Actor, table) {
		return denyTable(), nil
	}
	col := t.site.TCA.Table(table).Column(field)
	if !typo3.ValidIdent(field) || col == nil || readpolicy.IsCredentialColumn(field) {
		return tool.Errorf("Table %s has no field %s. get_table_schema lists its fields.", table, quoteArg(field)), nil
	}
	if col.Config.Type != "flex" {
		return tool.Errorf("%s.%s is of type %s, not flex; it has no FlexForm. Fields of type flex show as `flex` in get_table_schema.", table, field, orDash(col.Config.Type)), nil
	}
	ds := col.Config.DS
	if len(ds) == 0 {
		return tool.Errorf("%s.%s declares no data structure (config.ds is empty).", table, field), nil
	}
	keys := sortedKeys(ds)
	pointerFields := splitList(col.Config.DSPointerField)

	var key, note string
	switch {
	case pointer == "" && len(ds) == 1:
		key = keys[0]
	case pointer == "":
		return tool.Text(listKeys(table, field, keys, pointerFields)), nil
	default:
		var ok bool
		key, ok = lookupDS(ds, pointerFields, pointer)
		if !ok {
			return tool.Errorf("No data structure of %s.%s matches ds_pointer %s, and there is no default.\n%s",
				table, field, quoteArg(pointer), listKeys(table, field, keys, pointerFields)), nil
		}
		if key == "default" && pointer != "default" {
			note = fmt.Sprintf("No key matches ds_pointer %s; TYPO3 falls back to \"default\".\n", quoteArg(pointer))
		}
	}

	exts, extErr := t.extensions()
	lbl := newLabels(exts)
	value := strings.TrimSpace(ds[key])
	var src []byte
	origin := "inline XML in the TCA"
	if ref, isFile := strings.CutPrefix(value, "FILE:"); isFile {
		ref = strings.TrimSpace(ref)
		origin = "FILE:" + clean(ref, 200)
		src, err = readDSFile(exts, extErr, ref)
		if err != nil {
			return tool.Errorf("The data structure %q of %s.%s is %s, which %v.", key, table, field, origin, err), nil
		}
	} else {
		src = []byte(value)
	}
	loadSheet := func(ref string) ([]byte, error) { return readDSFile(exts, extErr, ref) }
	body, err := renderDataStructure(src, lbl, loadSheet)
	if err != nil {
		return tool.Errorf("The data structure %q of %s.%s (%s) cannot be read: %v.", key, table, field, origin, err), nil
	}
	head := fmt.Sprintf("FlexForm %s.%s, data structure %q (%s)\n", table, field, key, origin)
	return tool.Text(head + note + body), nil
}

// readDSFile reads a FILE: target, which must be an EXT: reference inside
// an installed extension.
func readDSFile(exts *extpath.Map, extErr error, ref string) ([]byte, error) {
	if !strings.HasPrefix(ref, "EXT:") {
		return nil, errors.New("is not an EXT: reference t3agent can resolve")
	}
	if _, _, err := extpath.Split(ref); err != nil {
		return nil, errors.New("is not a valid EXT: reference")
	}
	if extErr != nil || exts == nil {
		return nil, errors.New("cannot be read: the installation folder is not available")
	}
	b, err := exts.ReadFile(ref, maxDSBytes)
	switch {
	case errors.Is(err, extpath.ErrUnknownExtension):
		return nil, errors.New("belongs to an extension that is not installed")
	case errors.Is(err, fs.ErrNotExist):
		return nil, errors.New("does not exist in this installation")
	case errors.Is(err, extpath.ErrTooLarge):
		return nil, fmt.Errorf("is larger than %d bytes", maxDSBytes)
	case err != nil:
		return nil, errors.New("cannot be read")
	}
	return b, nil
}

// lookupDS picks the data structure key for a pointer the way
// FlexFormTools::getDataStructureIdentifierFromTcaArray does: an exact key
// first (the caller named one); then, with two pointer fields, a,b → a,* →
// *,b → a → default, where a lone value stands for both fields (as the
// backend would see it when a plugin and a CType share the name); with one
// pointer field the value, then default; without any, default.
func lookupDS(ds map[string]string, pointerFields []string, pointer string) (string, bool) {
	has := func(k string) bool { _, ok := ds[k]; return ok }
	if has(pointer) {
		return pointer, true
	}
	var tries []string
	switch len(pointerFields) {
	case 0:
	case 1:
		tries = []string{pointer}
	default:
		a, b, two := strings.Cut(pointer, ",")
		a, b = strings.TrimSpace(a), strings.TrimSpace(b)
		if !two {
			b = a
		}
		tries = []string{a + "," + b, a + ",*", "*," + b, a}
	}
	tries = append(tries, "default")
	for _, k := range tries {
		if has(k) {
			return k, true
		}
	}
	return "", false
}

// listKeys answers "which structures are there" for a follow-up call.
func listKeys(table, field string, keys, pointerFields []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s.%s has %d data structures", table, field, len(keys))
	if len(pointerFields) > 0 {
		fmt.Fprintf(&b, ", selected by the record's %s", strings.Join(pointerFields, ","))
	}
	b.WriteString(". Call get_flexform_schema again with ds_pointer set to one of these keys:\n")
	for i, k := range keys {
		if i >= maxPointerKeys {
			fmt.Fprintf(&b, "… %d more.\n", len(keys)-i)
			break
		}
		b.WriteString("- " + clean(k, 120) + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// sortedKeys orders keys as the TCA usually reads: default first, then
// the rest by name.
func sortedKeys(ds map[string]string) []string {
	keys := make([]string, 0, len(ds))
	for k := range ds {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		switch {
		case a == b:
			return 0
		case a == "default":
			return -1
		case b == "default":
			return 1
		}
		return strings.Compare(a, b)
	})
	return keys
}
