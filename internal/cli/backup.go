package cli

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/typo3"
)

func (a *app) backupCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "backup FILE",
		Short: "Write a consistent copy of t3agent's own store into one file, while it serves",
		Long: "Write a consistent copy of t3agent's own store (runs, events, conversations, the MCP catalogue, " +
			"the agent configuration, telemetry, credentials) into FILE, a SQLite database readable by its owner " +
			"only. A SQLite store is copied with VACUUM INTO, a PostgreSQL store table by table in one snapshot; " +
			"either may go on serving meanwhile. FILE must not exist. The sealed credentials in it open only with " +
			"the master key: back that up too, apart from the file. `t3agent restore FILE` brings it back, into " +
			"SQLite or PostgreSQL.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := a.loadConfig()
			if err != nil {
				return err
			}
			rep, err := store.Backup(cmd.Context(), store.BackupParams{From: cfg.Store.DSN, To: a.path(args[0]), Logger: a.logger})
			if err != nil {
				return err
			}
			if a.jsonOut {
				return writeJSON(a.env.Stdout, rep)
			}
			fmt.Fprintf(a.env.Stdout, "Backed up %s (schema version %d): %d rows in %d tables, %s, in %s.\n",
				rep.File, rep.SchemaVersion, rows(rep.Tables), len(rep.Tables), bytesString(rep.Bytes), rep.Duration.Round(time.Millisecond))
			fmt.Fprintln(a.env.Stdout, "Keep the master key apart from the file: the sealed credentials in it open only with that key.")
			return nil
		},
	}
}

func (a *app) restoreCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "restore FILE",
		Short: "Restore a backup into the configured store, which must be new and empty",
		Long: "Copy the backup FILE (written by `t3agent backup`) into the store the configuration names " +
			"(store.dsn): a new SQLite file or an empty PostgreSQL database. Every table is verified by its row " +
			"count and checksum before the restore commits. A store that holds data is refused: stop t3agent, " +
			"move the old database aside (or create a new one) and restore then. The configured master key must be " +
			"the one the backed-up store used.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := a.loadConfig()
			if err != nil {
				return err
			}
			rep, err := store.Restore(cmd.Context(), store.RestoreParams{From: a.path(args[0]), To: cfg.Store.DSN, Logger: a.logger})
			if err != nil {
				return err
			}
			if a.jsonOut {
				return writeJSON(a.env.Stdout, rep)
			}
			fmt.Fprintf(a.env.Stdout, "Restored %s into %s (schema version %d): %d rows in %d tables, each verified, in %s.\n",
				args[0], typo3.RedactDSN(cfg.Store.DSN), rep.SchemaVersion, rep.Rows(), len(rep.Tables), rep.Duration.Round(time.Millisecond))
			return nil
		},
	}
}

func (a *app) storeCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "store",
		Short: "t3agent's own store: copy it to another database",
	}
	cmd.AddCommand(a.storeCopyCommand())
	return cmd
}

func (a *app) storeCopyCommand() *cobra.Command {
	var from, to string
	cmd := &cobra.Command{
		Use:   "copy --to DSN [--from DSN]",
		Short: "Copy the store into a new database: SQLite to PostgreSQL when one machine is outgrown",
		Long: "Copy every table of the store (--from, default the configured store.dsn) into the empty database " +
			"--to, with its ids, its sealed values and its sequences set past the highest id, in one transaction " +
			"that commits only when every table's row count and checksum match the source's. The source is only " +
			"read and may keep serving; stop t3agent before the copy if nothing written after it may be lost. " +
			"Then point store.dsn at the target and start t3agent (see docs/operations.md).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if to == "" {
				return errors.New("store copy needs --to DSN: the new database (postgres://… or sqlite:PATH)")
			}
			if from == "" {
				cfg, err := a.loadConfig()
				if err != nil {
					return err
				}
				from = cfg.Store.DSN
			}
			rep, err := store.Copy(cmd.Context(), store.CopyParams{From: from, To: to, Logger: a.logger})
			if err != nil {
				return err
			}
			if a.jsonOut {
				return writeJSON(a.env.Stdout, rep)
			}
			printTables(a.env.Stdout, rep.Tables)
			fmt.Fprintf(a.env.Stdout, "Copied %d rows in %d tables into %s (schema version %d), each verified, in %s.\n",
				rep.Rows(), len(rep.Tables), typo3.RedactDSN(to), rep.SchemaVersion, rep.Duration.Round(time.Millisecond))
			fmt.Fprintln(a.env.Stdout, "Set store.dsn to the new database and start t3agent; the source was not changed.")
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "the store to copy (default the configured store.dsn)")
	cmd.Flags().StringVar(&to, "to", "", "the new, empty database: postgres://USER@HOST/DB or sqlite:PATH")
	return cmd
}

func rows(tables []store.TableSum) int64 {
	var n int64
	for _, t := range tables {
		n += t.Rows
	}
	return n
}

func printTables(w io.Writer, tables []store.TableSum) {
	for _, t := range tables {
		fmt.Fprintf(w, "  %-28s %9d rows  %.16s\n", t.Table, t.Rows, t.Checksum)
	}
}

// bytesString is n in the largest binary unit that keeps it ≥ 1.
func bytesString(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
