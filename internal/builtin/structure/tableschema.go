package structure

import (
	"context"
	"fmt"
	"strings"

	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

// maxSchemaFields caps the field lines of get_table_schema.
const maxSchemaFields = 300

// sensitiveMark replaces everything but the name of a credential-like
// column.
const sensitiveMark = "[sensitive — detail withheld]"

type tableSchema struct{ env }

func (t *tableSchema) Spec() tool.Spec {
	return spec("get_table_schema", tool.GroupStructure,
		"One TYPO3 table's schema from its TCA: title; control fields (label, label_alt, type field, language "+
			"fields, sorting, delete flag, enable columns such as hidden/starttime/endtime/fe_group, workspace "+
			"support); then up to 300 fields as `field: type, renderType, → foreign_table (relation kind), via MM "+
			"table, required`. Relation kinds are inline, file (FAL references), select, group and category. "+
			"Credential-like fields are named but not described. Get table names from get_full_tca; for a field "+
			"of type flex call get_flexform_schema. Returns no records.",
		`{"type":"object","properties":{`+
			`"table":{"type":"string","minLength":1,"maxLength":64,"description":"Table name, e.g. tt_content."}`+
			`},"required":["table"],"additionalProperties":false}`)
}

func (t *tableSchema) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	if call.Actor == nil {
		return denyUser(), nil
	}
	name, err := stringArg(args, "table")
	if err != nil {
		return tool.Errorf("%v.", err), nil
	}
	name = strings.TrimSpace(name)
	if !typo3.ValidIdent(name) || !t.policy.CanReadTable(call.Actor, name) {
		return denyTable(), nil
	}
	tab := t.site.TCA.Table(name)
	exts, _ := t.extensions()
	lbl := newLabels(exts)

	var b strings.Builder
	b.WriteString("Table: " + name)
	if tab.Ctrl.Title != "" {
		if title := lbl.text(tab.Ctrl.Title); title != name {
			b.WriteString(" — " + title)
		}
	}
	b.WriteByte('\n')
	writeCtrl(&b, tab)

	fmt.Fprintf(&b, "Fields (%d):\n", len(tab.ColumnOrder))
	shown := 0
	for _, cname := range tab.ColumnOrder {
		if err := ctx.Err(); err != nil {
			return tool.Result{}, err
		}
		if shown >= maxSchemaFields {
			break
		}
		shown++
		col := tab.Columns[cname]
		if readpolicy.IsCredentialColumn(cname) || col == nil {
			b.WriteString("- " + clean(cname, 64) + ": " + sensitiveMark + "\n")
			continue
		}
		b.WriteString("- " + cname + ": " + describeColumn(col) + "\n")
	}
	if rest := len(tab.ColumnOrder) - shown; rest > 0 {
		fmt.Fprintf(&b, "… %d more field(s) not shown.\n", rest)
	}
	return tool.Text(strings.TrimRight(b.String(), "\n")), nil
}

// writeCtrl writes the control fields that explain how rows are labelled,
// translated, sorted, hidden and versioned. Column names only; a
// credential-like name is withheld even here.
func writeCtrl(b *strings.Builder, tab *tca.Table) {
	c := tab.Ctrl
	col := func(name string) string {
		if readpolicy.IsCredentialColumn(name) {
			return sensitiveMark
		}
		return clean(name, 64)
	}
	cols := func(names []string) string {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = col(n)
		}
		return strings.Join(out, ", ")
	}
	b.WriteString("Control:\n")
	line := func(k, v string) {
		if v != "" {
			b.WriteString("  " + k + ": " + v + "\n")
		}
	}
	label := ""
	if c.Label != "" {
		label = col(c.Label)
	}
	line("label", label)
	if len(c.LabelAlt) > 0 {
		alt := cols(c.LabelAlt)
		if c.LabelAltForce {
			alt += " (always appended)"
		}
		line("label_alt", alt)
	}
	if c.Type != "" {
		line("type field", col(c.Type))
	}
	if c.LanguageField != "" {
		lang := col(c.LanguageField)
		if c.TransOrigPointerField != "" {
			lang += ", translation parent " + col(c.TransOrigPointerField)
		}
		if ts, _ := c.Raw["translationSource"].(string); ts != "" {
			lang += ", translation source " + col(ts)
		}
		line("language field", lang)
	} else {
		line("language field", "none (not translatable)")
	}
	switch {
	case c.SortBy != "":
		line("sortby", col(c.SortBy)+" (manual sorting)")
	case c.DefaultSortBy != "":
		line("default_sortby", clean(c.DefaultSortBy, 120))
	}
	if c.Delete != "" {
		line("delete", col(c.Delete)+" (soft delete)")
	} else {
		line("delete", "none (rows are deleted for real)")
	}
	ec := c.EnableColumns
	var enable []string
	for _, p := range [][2]string{{"disabled", ec.Disabled}, {"starttime", ec.StartTime}, {"endtime", ec.EndTime}, {"fe_group", ec.FeGroup}} {
		if p[1] != "" {
			enable = append(enable, p[0]+"="+col(p[1]))
		}
	}
	if len(enable) > 0 {
		line("enable columns", strings.Join(enable, ", "))
	}
	if c.VersioningWS {
		line("workspaces", "yes (versioningWS; live rows have t3ver_wsid 0)")
	} else {
		line("workspaces", "no")
	}
	switch c.RootLevel {
	case 1:
		line("rootLevel", "1 (records only on the root, pid 0)")
	case -1:
		line("rootLevel", "-1 (records on the root and on pages)")
	}
	if c.AdminOnly {
		line("adminOnly", "yes")
	}
	if c.Hidden {
		line("hideTable", "yes (not listed in the backend's list module)")
	}
}

// describeColumn renders one field: type, renderType, relation, MM,
// required.
func describeColumn(col *tca.Column) string {
	cfg := col.Config
	parts := []string{orDash(cfg.Type)}
	if cfg.RenderType != "" {
		parts = append(parts, clean(cfg.RenderType, 64))
	}
	if rel := relation(cfg); rel != "" {
		parts = append(parts, rel)
	}
	if cfg.MM != "" {
		parts = append(parts, "via MM "+clean(cfg.MM, 64))
	}
	if required(cfg) {
		parts = append(parts, "required")
	}
	return strings.Join(parts, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "(no type)"
	}
	return clean(s, 64)
}

// relation describes where a field points, or "".
func relation(cfg tca.ColumnConfig) string {
	ff, _ := cfg.Raw["foreign_field"].(string)
	switch cfg.Type {
	case "inline":
		if cfg.ForeignTable == "" {
			return ""
		}
		if ff != "" {
			return "→ " + clean(cfg.ForeignTable, 64) + " (inline, foreign_field " + clean(ff, 64) + ")"
		}
		return "→ " + clean(cfg.ForeignTable, 64) + " (inline)"
	case "file":
		ft := cfg.ForeignTable
		if ft == "" {
			ft = "sys_file_reference"
		}
		return "→ " + clean(ft, 64) + " (file)"
	case "select":
		if cfg.ForeignTable != "" {
			return "→ " + clean(cfg.ForeignTable, 64) + " (select)"
		}
	case "category":
		ft := cfg.ForeignTable
		if ft == "" {
			ft = "sys_category"
		}
		return "→ " + clean(ft, 64) + " (category)"
	case "group":
		if cfg.Allowed != "" {
			return "→ " + clean(strings.Join(splitList(cfg.Allowed), "|"), 200) + " (group)"
		}
	}
	return ""
}

// required reads config.required (v12+) and the older eval=required.
func required(cfg tca.ColumnConfig) bool {
	switch v := cfg.Raw["required"].(type) {
	case bool:
		return v
	case int64:
		return v != 0
	case float64:
		return v != 0
	case string:
		return v != "" && v != "0"
	}
	if eval, ok := cfg.Raw["eval"].(string); ok {
		for _, e := range splitList(eval) {
			if e == "required" {
				return true
			}
		}
	}
	return false
}

func splitList(s string) []string {
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}
