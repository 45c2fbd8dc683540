package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/t3agent/t3agent/internal/siteindex"
)

func (a *app) indexCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Build or inspect t3agent's search index of the site",
	}
	cmd.AddCommand(a.indexBuildCommand(), a.indexStatusCommand())
	return cmd
}

func (a *app) indexBuildCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "build",
		Short: "Index the whole site again (search_records scans the site until it finishes)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := a.loadConfig()
			if err != nil {
				return err
			}
			r, err := a.open(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			defer r.Close()
			last := time.Time{}
			res, err := r.index.Build(cmd.Context(), func(p siteindex.Progress) {
				// One progress line a second at most, on stderr.
				if now := time.Now(); now.Sub(last) >= time.Second {
					last = now
					fmt.Fprintf(a.env.Stderr, "indexing %s: %d rows\n", p.Table, p.Rows)
				}
			})
			if err != nil {
				return fmt.Errorf("the site index build failed: %w", err)
			}
			if a.jsonOut {
				return writeJSON(a.env.Stdout, map[string]any{"tables": res.Tables, "documents": res.Docs,
					"seconds": res.Duration.Seconds()})
			}
			fmt.Fprintf(a.env.Stdout, "Indexed %d rows of %d tables in %s.\n", res.Docs, res.Tables, res.Duration.Round(time.Millisecond))
			return nil
		},
	}
}

func (a *app) indexStatusCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show the site index: rows, age of the last sync, rows changed since (lag)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := a.loadConfig()
			if err != nil {
				return err
			}
			r, err := a.open(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			defer r.Close()
			st, err := r.index.Status(cmd.Context(), true)
			if err != nil {
				return err
			}
			if a.jsonOut {
				return writeJSON(a.env.Stdout, map[string]any{"built": st.Built, "building": st.Building,
					"documents": st.Docs, "built_at": st.BuiltAt, "synced_at": st.SyncedAt,
					"age_seconds": st.Age.Seconds(), "stale": st.Stale, "lag": st.Lag, "enabled": cfg.SiteIndex.Enabled})
			}
			w := a.env.Stdout
			switch {
			case st.Building:
				fmt.Fprintf(w, "A build began at %s and has not finished; search_records scans the site.\n", st.BuildBegan.Format(time.RFC3339))
			case !st.Built:
				fmt.Fprintln(w, "The site index has not been built; run t3agent index build.")
			default:
				state := "fresh"
				if st.Stale {
					state = "stale (older than site_index.max_age; search_records scans the site)"
				}
				fmt.Fprintf(w, "rows: %d\nbuilt: %s\nlast sync: %s (%s ago, %s)\nlag: %d rows changed since the last sync\n",
					st.Docs, st.BuiltAt.Format(time.RFC3339), st.SyncedAt.Format(time.RFC3339), st.Age.Round(time.Second), state, st.Lag)
				if !cfg.SiteIndex.Enabled {
					fmt.Fprintln(w, "site_index.enabled is off: serve neither syncs it nor lets search_records use it.")
				}
			}
			return nil
		},
	}
}
