package structure

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

// Limits of get_tca.
const (
	maxTCATables = 500
	maxTCALines  = 300
)

type getTCA struct{ env }

func (t *getTCA) Spec() tool.Spec {
	return spec("get_tca", tool.GroupStructure,
		"Navigate the TYPO3 TCA (the table configuration array) of the tables you may read. Without `table`: the "+
			"readable table names (at most 500). With `table` and no `path`: the table's sections ctrl, columns "+
			"(each `field: config.type`), types and palettes. With `path`, a dotted key inside the table such as "+
			"`ctrl`, `columns.header.config`, `types.textmedia` or `palettes.general`: that subtree as flat "+
			"`key = value` lines, at most 300 (a larger subtree lists its children; go one level deeper). "+
			"Credential-like columns are left out entirely. For a readable summary use get_table_schema.",
		`{"type":"object","properties":{`+
			`"table":{"type":"string","minLength":1,"maxLength":64,"description":"Table name, e.g. tt_content."},`+
			`"path":{"type":"string","maxLength":300,"pattern":"^[A-Za-z0-9_.:-]*$","description":"Dotted path inside the table's TCA, e.g. columns.header.config."}`+
			`},"additionalProperties":false}`)
}

// unknownTCA is the answer for an unknown or unreadable table, as the
// reference gives it.
const unknownTCA = "Unknown TCA table."

func (t *getTCA) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	if call.Actor == nil {
		return denyUser(), nil
	}
	name, err := stringArg(args, "table")
	if err != nil {
		return tool.Errorf("%v.", err), nil
	}
	p, err := stringArg(args, "path")
	if err != nil {
		return tool.Errorf("%v.", err), nil
	}
	name = strings.TrimSpace(name)
	if name == "" {
		if p != "" {
			return tool.Errorf("Name a table for the path."), nil
		}
		names := t.policy.ReadableTables(call.Actor)
		if len(names) == 0 {
			return tool.Text("You may not read any table."), nil
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%d readable TCA table(s):\n", len(names))
		for i, n := range names {
			if i == maxTCATables {
				fmt.Fprintf(&b, "… %d more not shown.\n", len(names)-maxTCATables)
				break
			}
			b.WriteString(n + "\n")
		}
		b.WriteString(`Next: get_tca {"table": "<name>"}.`)
		return tool.Text(b.String()), nil
	}
	if !typo3.ValidIdent(name) || !t.policy.CanReadTable(call.Actor, name) {
		return tool.Errorf("%s", unknownTCA), nil
	}
	tree := tcaTree(t.policy, name, t.site.TCA.Table(name))
	if p == "" {
		return tool.Text(tableOverview(name, tree)), nil
	}
	segs := strings.Split(strings.Trim(p, "."), ".")
	node, ok := tree.lookup(segs)
	if !ok {
		return tool.Errorf("Table %s has no TCA entry at %s.", name, quoteArg(p)), nil
	}
	return tool.Text(renderTCA(name, strings.Join(segs, "."), node)), nil
}

// tnode is a TCA subtree with ordered keys: a map (keys and children), or
// a scalar value.
type tnode struct {
	keys     []string
	children map[string]*tnode
	value    string
	leaf     bool
}

func (n *tnode) lookup(segs []string) (*tnode, bool) {
	cur := n
	for _, s := range segs {
		if cur.leaf {
			return nil, false
		}
		next, ok := cur.children[s]
		if !ok {
			return nil, false
		}
		cur = next
	}
	return cur, true
}

func (n *tnode) add(key string, child *tnode) {
	if n.children == nil {
		n.children = map[string]*tnode{}
	}
	if _, ok := n.children[key]; !ok {
		n.keys = append(n.keys, key)
	}
	n.children[key] = child
}

// count is the number of leaves below n.
func (n *tnode) count() int {
	if n.leaf {
		return 1
	}
	c := 0
	for _, k := range n.keys {
		c += n.children[k].count()
	}
	return c
}

// plainNode converts a plain TCA value (maps, lists, scalars); map keys
// are sorted, lists keep their order.
func plainNode(v any) *tnode {
	switch x := v.(type) {
	case map[string]any:
		n := &tnode{}
		for _, k := range keysOf(x) {
			n.add(k, plainNode(x[k]))
		}
		return n
	case []any:
		n := &tnode{}
		for i, e := range x {
			n.add(strconv.Itoa(i), plainNode(e))
		}
		return n
	case nil:
		return &tnode{leaf: true, value: "null"}
	case bool:
		return &tnode{leaf: true, value: strconv.FormatBool(x)}
	}
	return &tnode{leaf: true, value: fmt.Sprint(v)}
}

func leaf(s string) *tnode { return &tnode{leaf: true, value: s} }

// tcaTree builds one table's TCA as a tree; credential-like columns are
// left out.
func tcaTree(policy *readpolicy.Policy, table string, tab *tca.Table) *tnode {
	root := &tnode{}
	root.add("ctrl", plainNode(tab.Ctrl.Raw))
	cols := &tnode{}
	for _, c := range tab.ColumnOrder {
		col := tab.Columns[c]
		if col == nil || policy.IsCredentialField(table, c) {
			continue
		}
		n := &tnode{}
		if col.Label != "" {
			n.add("label", leaf(col.Label))
		}
		if col.Exclude {
			n.add("exclude", leaf("true"))
		}
		n.add("config", plainNode(col.Config.Raw))
		cols.add(c, n)
	}
	root.add("columns", cols)
	types := &tnode{}
	for _, k := range keysOf(tab.Types) {
		n := &tnode{}
		n.add("showitem", leaf(tab.Types[k].ShowItem))
		types.add(k, n)
	}
	root.add("types", types)
	pals := &tnode{}
	for _, k := range keysOf(tab.Palettes) {
		n := &tnode{}
		if tab.Palettes[k].Label != "" {
			n.add("label", leaf(tab.Palettes[k].Label))
		}
		n.add("showitem", leaf(tab.Palettes[k].ShowItem))
		pals.add(k, n)
	}
	root.add("palettes", pals)
	return root
}

// keysOf returns a map's keys sorted by name.
func keysOf[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// tableOverview is get_tca with a table and no path.
func tableOverview(name string, tree *tnode) string {
	var b strings.Builder
	fmt.Fprintf(&b, "TCA of %s:\n", name)
	fmt.Fprintf(&b, "ctrl (%d keys)\n", len(tree.children["ctrl"].keys))
	cols := tree.children["columns"]
	fmt.Fprintf(&b, "columns (%d):\n", len(cols.keys))
	for i, c := range cols.keys {
		if i == maxTCATables {
			fmt.Fprintf(&b, "  … %d more not shown.\n", len(cols.keys)-maxTCATables)
			break
		}
		typ := "?"
		if n, ok := cols.children[c].lookup([]string{"config", "type"}); ok && n.leaf {
			typ = n.value
		}
		fmt.Fprintf(&b, "  %s: %s\n", c, clean(typ, 40))
	}
	for _, sec := range []string{"types", "palettes"} {
		keys := tree.children[sec].keys
		fmt.Fprintf(&b, "%s (%d): %s\n", sec, len(keys), clean(strings.Join(keys, ", "), 2000))
	}
	b.WriteString(`Next: get_tca with "path", e.g. "columns.<field>.config" or "types.<type>".`)
	return b.String()
}

// urlCredentials masks user:pass@ in URLs (reference redaction).
var urlCredentials = regexp.MustCompile(`(?i)(\b[a-z][a-z0-9+.\-]*://[^:/?#\s@]*):[^@/?#\s]+@`)

// renderTCA prints a subtree: a scalar as one line, a subtree flat when
// it fits maxTCALines, else its children with their sizes.
func renderTCA(table, path string, n *tnode) string {
	head := fmt.Sprintf("TCA %s.%s", table, path)
	if n.leaf {
		return head + " = " + tcaValue(n.value)
	}
	if len(n.keys) == 0 {
		return head + " is empty."
	}
	var b strings.Builder
	if n.count() <= maxTCALines {
		b.WriteString(head + ":\n")
		var walk func(prefix string, n *tnode)
		walk = func(prefix string, n *tnode) {
			for _, k := range n.keys {
				c := n.children[k]
				if c.leaf {
					b.WriteString(prefix + k + " = " + tcaValue(c.value) + "\n")
					continue
				}
				if len(c.keys) == 0 {
					b.WriteString(prefix + k + " = []\n")
					continue
				}
				walk(prefix+k+".", c)
			}
		}
		walk("", n)
		return strings.TrimRight(b.String(), "\n")
	}
	fmt.Fprintf(&b, "%s has %d values; its children:\n", head, n.count())
	for i, k := range n.keys {
		if i == maxTCALines {
			fmt.Fprintf(&b, "… %d more not shown.\n", len(n.keys)-maxTCALines)
			break
		}
		c := n.children[k]
		if c.leaf {
			b.WriteString(k + " = " + tcaValue(c.value) + "\n")
		} else {
			fmt.Fprintf(&b, "%s (+%d)\n", k, c.count())
		}
	}
	b.WriteString("Add a child to the path to see it.")
	return b.String()
}

func tcaValue(s string) string {
	return clean(urlCredentials.ReplaceAllString(s, "$1:***@"), 300)
}

// ctrlFields are the ctrl keys that name columns showitem may use besides
// the table's columns (reference: validate_tca).
var ctrlFields = []string{"languageField", "transOrigPointerField", "translationSource", "transOrigDiffSourceField",
	"origUid", "editlock", "descriptionColumn", "sortby", "tstamp", "crdate", "delete"}

// maxFindings caps validate_tca.
const maxFindings = 50

type validateTCA struct{ env }

func (t *validateTCA) Spec() tool.Spec {
	return spec("validate_tca", tool.GroupStructure,
		"Check the TCA of one table (or of every table you may read) for configuration mistakes TYPO3 does not "+
			"report until a form breaks: ctrl.label or ctrl.type naming no column, a foreign_table that is not in the "+
			"TCA, showitem entries (of types and palettes) naming no column or ctrl field, --palette-- entries naming "+
			"no palette, and palettes nested in palettes. One finding per line, at most 50.",
		`{"type":"object","properties":{`+
			`"table":{"type":"string","minLength":1,"maxLength":64,"description":"Table name; default: every readable table."}`+
			`},"additionalProperties":false}`)
}

func (t *validateTCA) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	if call.Actor == nil {
		return denyUser(), nil
	}
	name, err := stringArg(args, "table")
	if err != nil {
		return tool.Errorf("%v.", err), nil
	}
	name = strings.TrimSpace(name)
	tables := []string{name}
	if name == "" {
		tables = t.policy.ReadableTables(call.Actor)
	} else if !typo3.ValidIdent(name) || !t.policy.CanReadTable(call.Actor, name) {
		return tool.Errorf("%s", unknownTCA), nil
	}
	var findings []string
	for _, tn := range tables {
		if err := ctx.Err(); err != nil {
			return tool.Result{}, err
		}
		findings = append(findings, validateTable(t.site.TCA, t.policy, tn)...)
	}
	scope := fmt.Sprintf("%d table(s)", len(tables))
	if name != "" {
		scope = name
	}
	if len(findings) == 0 {
		return tool.Text("No findings in the TCA of " + scope + "."), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d finding(s) in the TCA of %s", len(findings), scope)
	if len(findings) > maxFindings {
		fmt.Fprintf(&b, " (the first %d)", maxFindings)
		findings = findings[:maxFindings]
	}
	b.WriteString(":\n")
	for _, f := range findings {
		b.WriteString("- " + f + "\n")
	}
	return tool.Text(strings.TrimRight(b.String(), "\n")), nil
}

// validateTable returns the findings of one table's TCA in a fixed order:
// ctrl, columns (foreign_table), types, palettes. Names are cleaned for
// output; a credential-like column is named only as such.
func validateTable(all *tca.TCA, policy *readpolicy.Policy, table string) []string {
	tab := all.Table(table)
	if tab == nil {
		return nil
	}
	var out []string
	name := func(s string) string {
		if readpolicy.IsCredentialColumn(s) {
			return "[a credential-like field]"
		}
		return quoteArg(clean(s, 64))
	}
	isColumn := func(c string) bool { return tab.Columns[c] != nil }
	if l := tab.Ctrl.Label; l != "" && !isColumn(l) && l != "uid" {
		out = append(out, fmt.Sprintf("%s: ctrl.label %s is not a column", table, name(l)))
	}
	if ty := tab.Ctrl.Type; ty != "" {
		local, _, _ := strings.Cut(ty, ":")
		if !isColumn(local) {
			out = append(out, fmt.Sprintf("%s: ctrl.type %s is not a column", table, name(local)))
		}
	}
	for _, c := range tab.ColumnOrder {
		col := tab.Columns[c]
		if col == nil || policy.IsCredentialField(table, c) {
			continue
		}
		if ft := col.Config.ForeignTable; ft != "" && all.Table(ft) == nil {
			out = append(out, fmt.Sprintf("%s.%s: foreign_table %s is not in the TCA", table, c, name(ft)))
		}
	}
	allowed := map[string]bool{"uid": true, "pid": true}
	for _, k := range ctrlFields {
		if v, ok := tab.Ctrl.Raw[k].(string); ok && v != "" {
			allowed[v] = true
		}
	}
	if ec, ok := tab.Ctrl.Raw["enablecolumns"].(map[string]any); ok {
		for _, v := range ec {
			if s, ok := v.(string); ok && s != "" {
				allowed[s] = true
			}
		}
	}
	check := func(where, showitem string, inPalette bool) {
		for _, item := range strings.Split(showitem, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			parts := strings.Split(item, ";")
			field := strings.TrimSpace(parts[0])
			switch field {
			case "--div--", "--linebreak--":
				continue
			case "--palette--":
				if inPalette {
					out = append(out, fmt.Sprintf("%s: a palette inside a palette", where))
					continue
				}
				pal := ""
				if len(parts) > 2 {
					pal = strings.TrimSpace(parts[2])
				}
				if _, ok := tab.Palettes[pal]; !ok {
					out = append(out, fmt.Sprintf("%s: --palette-- %s does not exist", where, name(pal)))
				}
				continue
			}
			if !isColumn(field) && !allowed[field] {
				out = append(out, fmt.Sprintf("%s: showitem %s is not a column", where, name(field)))
			}
		}
	}
	for _, k := range keysOf(tab.Types) {
		check(fmt.Sprintf("%s types[%s]", table, clean(k, 64)), tab.Types[k].ShowItem, false)
	}
	for _, k := range keysOf(tab.Palettes) {
		check(fmt.Sprintf("%s palettes[%s]", table, clean(k, 64)), tab.Palettes[k].ShowItem, true)
	}
	return slices.Compact(out)
}
