package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/t3agent/t3agent/internal/config"
	"github.com/t3agent/t3agent/internal/demo"
	"github.com/t3agent/t3agent/internal/demowrite"
)

// Files `demo init` writes into its directory beside the demo itself.
const (
	demoConfigFile    = "t3agent.yaml"
	demoMasterKeyFile = "master.key"
)

func (a *app) demoCommand() *cobra.Command {
	var dir, listen, writesListen string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Create the demo TYPO3 site if it is absent, then serve it on 127.0.0.1",
		Long: "demo builds a realistic TYPO3 v13 demo site (SQLite) with a page tree, content, backend users and\n" +
			"an installation folder in --dir, unless it is there already, then serves the UI and prints the logins.\n" +
			"Beside it, on its own loopback port, it serves an OAuth-protected MCP server that writes to the demo site\n" +
			"(page metadata, hidden content drafts, file alternative texts), registered as the MCP server demo_writes\n" +
			"whose writes wait for approval. `t3agent serve` never starts it.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := a.demoInit(cmd.Context(), demo.InitParams{Dir: a.path(dir)})
			if err != nil {
				return err
			}
			cfg, err := config.Load(filepath.Join(res.Dir, demoConfigFile), a.env.Environ)
			if err != nil {
				return err
			}
			a.applyLogConfig(cfg)
			if listen != "" {
				cfg.Listen = listen
			}
			return a.serve(cmd.Context(), cfg, serveOptions{workers: 1, ready: func(addr string) {
				a.printLogins(a.env.Stdout, "http://"+addr, res)
			}, extra: func(ctx context.Context, r *runtime) (func(), error) {
				return a.startDemoWrites(ctx, r, res, writesListen, a.env.Stdout)
			}})
		},
	}
	cmd.Flags().StringVar(&dir, "dir", DefaultDataDir, "directory of the demo's data")
	cmd.Flags().StringVar(&listen, "listen", "", "address to listen on (default 127.0.0.1:8080)")
	cmd.Flags().StringVar(&writesListen, "writes-listen", demowrite.DefaultAddr, "loopback address of the demo's MCP write server (default: a free port)")
	cmd.AddCommand(a.demoInitCommand(), a.demoImportCommand())
	return cmd
}

func (a *app) demoInitCommand() *cobra.Command {
	var p demo.InitParams
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write the demo TYPO3 site (idempotent)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p.Dir = a.path(p.Dir)
			res, err := a.demoInit(cmd.Context(), p)
			if err != nil {
				return err
			}
			if a.jsonOut {
				return writeJSON(a.env.Stdout, demoSummary(res))
			}
			a.printLogins(a.env.Stdout, "", res)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&p.Dir, "dir", DefaultDataDir, "directory of the demo's data")
	f.StringVar(&p.SiteDSN, "site-dsn", "", "site database to fill (mysql://… or postgres://…; default: SQLite in --dir)")
	f.IntVar(&p.Pages, "pages", demo.DefaultPages, "number of pages")
	f.IntVar(&p.Content, "content", demo.DefaultContent, "number of content elements")
	f.BoolVar(&p.FastHashes, "fast-hashes", false, "hash the demo passwords with cheap settings (tests)")
	_ = f.MarkHidden("fast-hashes")
	return cmd
}

// demoInit runs demo.Init and writes the demo's configuration file beside
// it when that is missing.
func (a *app) demoInit(ctx context.Context, p demo.InitParams) (*demo.Result, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	res, err := demo.Init(ctx, p)
	if err != nil {
		if errors.Is(err, demo.ErrIncomplete) {
			return nil, fmt.Errorf("%w: remove %s and run the command again", err, p.Dir)
		}
		return nil, err
	}
	if _, err := config.EnsureMasterKeyFile(filepath.Join(res.Dir, demoMasterKeyFile)); err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(res.Dir, demoConfigFile)
	if _, err := os.Stat(cfgPath); errors.Is(err, os.ErrNotExist) {
		if err := os.WriteFile(cfgPath, []byte(demoConfig(res)), 0o600); err != nil {
			return nil, fmt.Errorf("cannot write the demo configuration: %w", err)
		}
	}
	if res.Existed {
		a.logger.Info("demo site exists; reusing it", "dir", res.Dir)
	} else {
		a.logger.Info("demo site created", "dir", res.Dir, "pages", res.Counts["pages"], "content", res.Counts["tt_content"])
	}
	return res, nil
}

// demoConfig is the configuration of a demo directory; paths are relative
// to it so the directory can be moved.
func demoConfig(res *demo.Result) string {
	siteDSN := res.SiteDSN
	if rel, ok := strings.CutPrefix(siteDSN, "sqlite:"); ok {
		if r, err := filepath.Rel(res.Dir, rel); err == nil && !strings.HasPrefix(r, "..") {
			siteDSN = "sqlite:" + r
		}
	}
	root := res.ProjectRoot
	if r, err := filepath.Rel(res.Dir, root); err == nil {
		root = r
	}
	return fmt.Sprintf(`# Written by t3agent demo init. Every key can be overridden as T3AGENT_<KEY>.
listen: 127.0.0.1:8080
data_dir: .
store:
  dsn: sqlite:t3agent.db
site:
  name: Nordlicht Pumps (t3agent demo)
  dsn: %q
  root: %s
log:
  level: info
  format: text
security:
  master_key_file: %s
`, siteDSN, root, demoMasterKeyFile)
}

func (a *app) printLogins(w io.Writer, url string, res *demo.Result) {
	if url != "" {
		fmt.Fprintf(w, "t3agent demo is serving %s\n", url)
	}
	if res.Existed {
		fmt.Fprintf(w, "Demo site in %s (reused).\n", res.Dir)
	} else {
		fmt.Fprintf(w, "Demo site created in %s.\n", res.Dir)
	}
	for _, name := range []string{"admin", "editor"} {
		if u, ok := res.User(name); ok {
			fmt.Fprintf(w, "  %-7s login: %s / %s\n", roleOf(u), u.Username, u.Password)
		}
	}
	fmt.Fprintf(w, "All logins: %s\n", res.CredentialsFile)
}

func roleOf(u demo.User) string {
	if u.Admin {
		return "admin"
	}
	return "editor"
}

func demoSummary(res *demo.Result) map[string]any {
	return map[string]any{
		"dir":         res.Dir,
		"existed":     res.Existed,
		"siteDsn":     res.SiteDSN,
		"projectRoot": res.ProjectRoot,
		"counts":      res.Counts,
		"users":       usersJSON(res.Users),
	}
}

func usersJSON(list []demo.User) []map[string]any {
	users := make([]map[string]any, 0, len(list))
	for _, u := range list {
		users = append(users, map[string]any{"username": u.Username, "password": u.Password, "admin": u.Admin, "disabled": u.Disabled})
	}
	return users
}

func (a *app) demoImportCommand() *cobra.Command {
	var p demo.ImportT3DParams
	cmd := &cobra.Command{
		Use:   "import-t3d FILE --schema SQLFILE",
		Short: "Load a TYPO3 T3D XML export into a site database and add the backend users it lacks",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p.File = a.path(args[0])
			if p.SchemaSQL == "" {
				return errors.New("--schema is required: name the SQL script that creates the site's tables")
			}
			p.SchemaSQL = a.path(p.SchemaSQL)
			if p.SiteDSN == "" {
				p.SiteDSN = "sqlite:" + a.path("site.db")
			}
			res, err := demo.ImportT3D(cmd.Context(), p)
			if err != nil {
				return err
			}
			if a.jsonOut {
				return writeJSON(a.env.Stdout, map[string]any{"dialect": res.Dialect, "counts": res.Counts, "rows": res.Rows, "users": usersJSON(res.Users)})
			}
			fmt.Fprintf(a.env.Stdout, "Imported %d records into %s.\n", res.Rows, p.SiteDSN)
			for _, u := range res.Users {
				fmt.Fprintf(a.env.Stdout, "  %-7s login: %s / %s\n", roleOf(u), u.Username, u.Password)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&p.SchemaSQL, "schema", "", "SQL script creating the site's tables (SQLite syntax)")
	cmd.Flags().StringVar(&p.SiteDSN, "site-dsn", "", "target site database (default: sqlite:./site.db)")
	return cmd
}
