package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/t3agent/t3agent/internal/typo3/tca"
)

func (a *app) tcaCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tca",
		Short: "Show or import the site's TCA",
	}
	cmd.AddCommand(a.tcaShowCommand(), a.tcaImportCommand())
	return cmd
}

func (a *app) tcaShowCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "show [TABLE]",
		Short: "List the tables of the resolved TCA, or show one table",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := a.loadConfig()
			if err != nil {
				return err
			}
			t, err := a.loadTCA(cfg)
			if err != nil {
				return err
			}
			if len(args) == 0 {
				return a.printTables(a.env.Stdout, t)
			}
			tbl := t.Table(args[0])
			if tbl == nil {
				return fmt.Errorf("the TCA (%s) has no table %q", t.Source, args[0])
			}
			return a.printTable(a.env.Stdout, tbl)
		},
	}
}

func (a *app) printTables(w io.Writer, t *tca.TCA) error {
	if a.jsonOut {
		rows := make([]map[string]any, 0, len(t.Tables))
		for _, n := range t.Names() {
			tbl := t.Tables[n]
			rows = append(rows, map[string]any{"table": n, "title": tbl.Ctrl.Title, "columns": len(tbl.Columns), "adminOnly": tbl.Ctrl.AdminOnly})
		}
		return writeJSON(w, map[string]any{"source": t.Source, "tables": rows})
	}
	fmt.Fprintf(w, "TCA from %s: %d tables\n", t.Source, len(t.Tables))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TABLE\tCOLUMNS\tADMIN ONLY\tTITLE")
	for _, n := range t.Names() {
		tbl := t.Tables[n]
		fmt.Fprintf(tw, "%s\t%d\t%v\t%s\n", n, len(tbl.Columns), tbl.Ctrl.AdminOnly, tbl.Ctrl.Title)
	}
	return tw.Flush()
}

func (a *app) printTable(w io.Writer, tbl *tca.Table) error {
	if a.jsonOut {
		cols := make([]map[string]any, 0, len(tbl.ColumnOrder))
		for _, name := range tbl.ColumnOrder {
			c := tbl.Columns[name]
			cols = append(cols, map[string]any{"name": name, "label": c.Label, "type": c.Config.Type, "renderType": c.Config.RenderType, "foreignTable": c.Config.ForeignTable, "mm": c.Config.MM})
		}
		return writeJSON(w, map[string]any{"table": tbl.Name, "ctrl": ctrlOf(tbl.Ctrl), "columns": cols})
	}
	c := tbl.Ctrl
	fmt.Fprintf(w, "%s — %s\n", tbl.Name, c.Title)
	fmt.Fprintf(w, "  label %s", c.Label)
	if len(c.LabelAlt) > 0 {
		fmt.Fprintf(w, " (alt: %s)", strings.Join(c.LabelAlt, ", "))
	}
	fmt.Fprintf(w, "\n  searchFields %s\n", strings.Join(c.SearchFields, ", "))
	fmt.Fprintf(w, "  delete %q, disabled %q, starttime %q, endtime %q\n", c.Delete, c.EnableColumns.Disabled, c.EnableColumns.StartTime, c.EnableColumns.EndTime)
	fmt.Fprintf(w, "  languageField %q, versioningWS %v, adminOnly %v, rootLevel %d, type %q\n", c.LanguageField, c.VersioningWS, c.AdminOnly, c.RootLevel, c.Type)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "COLUMN\tTYPE\tRELATION\tLABEL")
	for _, name := range tbl.ColumnOrder {
		col := tbl.Columns[name]
		rel := col.Config.ForeignTable
		if col.Config.MM != "" {
			rel += " via " + col.Config.MM
		}
		if col.Config.Allowed != "" {
			rel = col.Config.Allowed
		}
		typ := col.Config.Type
		if col.Config.RenderType != "" {
			typ += "/" + col.Config.RenderType
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", name, typ, rel, col.Label)
	}
	return tw.Flush()
}

func (a *app) tcaImportCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "import FILE",
		Short: "Store a JSON export of the site's TCA, used when the installation has no TCA cache file",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := a.loadConfig()
			if err != nil {
				return err
			}
			data, err := os.ReadFile(a.path(args[0]))
			if err != nil {
				return fmt.Errorf("cannot read %s: %w", args[0], err)
			}
			t, err := tca.LoadJSON(bytes.NewReader(data))
			if err != nil {
				return fmt.Errorf("%s is not a usable TCA export: %w", args[0], err)
			}
			if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
				return fmt.Errorf("cannot create the data directory: %w", err)
			}
			// Write then rename, so a failed import never leaves half a file
			// that the next start would refuse.
			dst := importedTCAPath(cfg)
			if err := os.WriteFile(dst+".tmp", data, 0o600); err != nil {
				return fmt.Errorf("cannot store the TCA export: %w", err)
			}
			if err := os.Rename(dst+".tmp", dst); err != nil {
				return fmt.Errorf("cannot store the TCA export: %w", err)
			}
			names := t.Names()
			sort.Strings(names)
			fmt.Fprintf(a.env.Stdout, "Imported a TCA of %d tables (%s); it is used when %s has no TCA cache file.\n", len(names), strings.Join(names, ", "), cfg.Site.Root)
			return nil
		},
	}
}

// ctrlJSON is the typed ctrl section, in camelCase as every --json
// output; raw is the whole section as loaded, under TYPO3's own keys.
type ctrlJSON struct {
	Title                 string            `json:"title"`
	Label                 string            `json:"label"`
	LabelAlt              []string          `json:"labelAlt"`
	LabelAltForce         bool              `json:"labelAltForce"`
	SearchFields          []string          `json:"searchFields"`
	AdminOnly             bool              `json:"adminOnly"`
	RootLevel             int               `json:"rootLevel"`
	Delete                string            `json:"delete"`
	EnableColumns         enableColumnsJSON `json:"enableColumns"`
	LanguageField         string            `json:"languageField"`
	TransOrigPointerField string            `json:"transOrigPointerField"`
	VersioningWS          bool              `json:"versioningWS"`
	SortBy                string            `json:"sortBy"`
	DefaultSortBy         string            `json:"defaultSortBy"`
	Type                  string            `json:"type"`
	HideTable             bool              `json:"hideTable"`
	Raw                   map[string]any    `json:"raw"`
}

// enableColumnsJSON is tca.EnableColumns with json tags.
type enableColumnsJSON struct {
	Disabled  string `json:"disabled"`
	StartTime string `json:"startTime"`
	EndTime   string `json:"endTime"`
	FeGroup   string `json:"feGroup"`
}

func ctrlOf(c tca.Ctrl) ctrlJSON {
	return ctrlJSON{
		Title: c.Title, Label: c.Label, LabelAlt: c.LabelAlt, LabelAltForce: c.LabelAltForce, SearchFields: c.SearchFields,
		AdminOnly: c.AdminOnly, RootLevel: c.RootLevel, Delete: c.Delete, EnableColumns: enableColumnsJSON(c.EnableColumns),
		LanguageField: c.LanguageField, TransOrigPointerField: c.TransOrigPointerField, VersioningWS: c.VersioningWS,
		SortBy: c.SortBy, DefaultSortBy: c.DefaultSortBy, Type: c.Type, HideTable: c.Hidden, Raw: c.Raw,
	}
}
