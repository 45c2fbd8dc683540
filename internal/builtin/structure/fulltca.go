package structure

import (
	"context"
	"fmt"
	"strings"

	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3/extpath"
)

// maxIndexTables caps the get_full_tca index.
const maxIndexTables = 400

type fullTCA struct{ env }

func (t *fullTCA) Spec() tool.Spec {
	return spec("get_full_tca", tool.GroupStructure,
		"Index of the TYPO3 database tables (TCA) you may read: one line per table, `table — Title`, sorted by name, "+
			"at most 400 lines. It never dumps the TCA itself: call get_table_schema with a table name for its fields "+
			"and relations. Narrow the list with `filter` (a case-insensitive substring of the table name or title) "+
			"or `extension` (an extension key such as bootstrap_package, matching its tables tx_bootstrappackage_*; "+
			"core extensions use other prefixes such as sys_ or tt_). Use it first when you do not know which table "+
			"holds something.",
		`{"type":"object","properties":{`+
			`"filter":{"type":"string","maxLength":100,"description":"Case-insensitive substring of the table name or title."},`+
			`"extension":{"type":"string","pattern":"^[a-z][a-z0-9_]{1,59}$","description":"Extension key; lists the tables tx_<key without underscores>_*."}`+
			`},"additionalProperties":false}`)
}

func (t *fullTCA) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	if call.Actor == nil {
		return denyUser(), nil
	}
	filter, err := stringArg(args, "filter")
	if err != nil {
		return tool.Errorf("%v.", err), nil
	}
	ext, err := stringArg(args, "extension")
	if err != nil {
		return tool.Errorf("%v.", err), nil
	}
	prefix := ""
	if ext != "" {
		if !extpath.ValidKey(ext) {
			return tool.Errorf("%s is not a valid extension key (lower-case letters, digits and underscores, starting with a letter).", quoteArg(ext)), nil
		}
		prefix = "tx_" + strings.ReplaceAll(ext, "_", "")
	}
	filter = strings.ToLower(strings.TrimSpace(filter))

	exts, _ := t.extensions() // titles fall back to label ids without files
	lbl := newLabels(exts)
	var lines []string
	total := 0
	for _, name := range t.policy.ReadableTables(call.Actor) {
		if err := ctx.Err(); err != nil {
			return tool.Result{}, err
		}
		if prefix != "" && name != prefix && !strings.HasPrefix(name, prefix+"_") {
			continue
		}
		title := ""
		if tab := t.site.TCA.Table(name); tab != nil && tab.Ctrl.Title != "" {
			title = lbl.text(tab.Ctrl.Title)
		}
		if filter != "" && !strings.Contains(strings.ToLower(name), filter) && !strings.Contains(strings.ToLower(title), filter) {
			continue
		}
		total++
		if len(lines) >= maxIndexTables {
			continue
		}
		if title == "" || title == name {
			lines = append(lines, name)
		} else {
			lines = append(lines, name+" — "+title)
		}
	}
	if total == 0 {
		if filter == "" && prefix == "" {
			return tool.Text("You may not read any table."), nil
		}
		return tool.Text("No readable table matches. Call get_full_tca without filter and extension for the whole index."), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d readable table(s)", total)
	if prefix != "" {
		fmt.Fprintf(&b, " of extension %s (%s_*)", ext, prefix)
	}
	if filter != "" {
		fmt.Fprintf(&b, " matching %s", quoteArg(filter))
	}
	b.WriteString(":\n")
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if total > len(lines) {
		fmt.Fprintf(&b, "… %d more not shown; narrow the list with filter or extension.\n", total-len(lines))
	}
	b.WriteString("Next: get_table_schema {\"table\": \"<name>\"} for one table's fields and relations.")
	return tool.Text(b.String()), nil
}
