// Package cli holds t3agent's command tree. Every command returns an error
// that is one clear sentence; main prints it and exits non-zero.
package cli

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/t3agent/t3agent/internal/config"
	"github.com/t3agent/t3agent/internal/tracing"
)

// DefaultDataDir is where `t3agent demo` keeps its data and configuration.
const DefaultDataDir = "t3agent-data"

// Env is what the commands take from the process, so tests can run them
// in-process with their own streams and environment.
type Env struct {
	// Stdin is read by `-` arguments and answers prompts; nil is the
	// process's standard input.
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
	Environ []string
	// Interactive says a person answers prompts on Stdin even though it is
	// not a terminal (tests); otherwise only a terminal Stdin is asked.
	Interactive bool
	// WorkDir resolves the default configuration locations; empty means
	// the process's working directory.
	WorkDir string
	// After is the timer of the chat's schedules (worker polls,
	// maintenance passes) in serve and chat worker; nil means
	// time.After. Tests inject one to fire them without waiting.
	After func(time.Duration) <-chan time.Time
}

// app carries the global flags and the shared set-up of one invocation.
type app struct {
	env        Env
	configPath string
	logLevel   string
	jsonOut    bool
	as         string
	logger     *slog.Logger
}

// NewRootCommand builds the command tree.
func NewRootCommand(env Env) *cobra.Command {
	if env.Stdout == nil {
		env.Stdout = io.Discard
	}
	if env.Stderr == nil {
		env.Stderr = io.Discard
	}
	// Log lines come from workers' goroutines while the command prints its
	// own lines; one lock per stream keeps every write whole, whatever
	// writer the caller passed.
	env.Stdout = &lockedWriter{w: env.Stdout}
	env.Stderr = &lockedWriter{w: env.Stderr}
	a := &app{env: env}
	root := &cobra.Command{
		Use:           "t3agent",
		Short:         "The AI tooling authority for a TYPO3 site",
		Long:          "t3agent owns every tool an LLM agent may use on a TYPO3 site and runs every agent turn through one gate.",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return a.setupLogger()
		},
	}
	if env.Stdin != nil {
		root.SetIn(env.Stdin)
	}
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	pf := root.PersistentFlags()
	pf.StringVar(&a.configPath, "config", "", "configuration file (default ./t3agent.yaml, else ./"+DefaultDataDir+"/t3agent.yaml)")
	pf.StringVar(&a.logLevel, "log-level", "", "log level: debug, info, warn or error (overrides the configuration)")
	pf.BoolVar(&a.jsonOut, "json", false, "print machine-readable JSON")
	pf.StringVar(&a.as, "as", "", "the TYPO3 backend user a local operator command acts as")

	root.AddCommand(
		a.versionCommand(),
		a.serveCommand(),
		a.demoCommand(),
		a.tcaCommand(),
		a.toolsCommand(),
		a.mcpCommand(),
		a.runCommand(), a.runsCommand(), a.workerCommand(),
		a.applyCommand(), a.configCommand(), a.usageCommand(),
		a.chatCommand(), a.tokenCommand(), a.mcpServerCommand(),
		a.backupCommand(), a.restoreCommand(), a.storeCommand(), a.doctorCommand(), a.indexCommand(),
	)
	return root
}

func (a *app) setupLogger() error {
	level := slog.LevelInfo
	if a.logLevel != "" {
		if err := level.UnmarshalText([]byte(a.logLevel)); err != nil {
			return fmt.Errorf("--log-level: %q is not one of debug, info, warn, error", a.logLevel)
		}
	}
	a.logger = slog.New(tracing.LogHandler(slog.NewTextHandler(a.env.Stderr, &slog.HandlerOptions{Level: level})))
	return nil
}

// applyLogConfig replaces the start-up logger by the configured one, unless
// --log-level was given.
func (a *app) applyLogConfig(cfg config.Config) {
	level := slog.LevelInfo
	_ = level.UnmarshalText([]byte(cfg.Log.Level))
	if a.logLevel != "" {
		_ = level.UnmarshalText([]byte(a.logLevel))
	}
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(a.env.Stderr, opts)
	if cfg.Log.Format == "json" {
		h = slog.NewJSONHandler(a.env.Stderr, opts)
	}
	// A line logged inside a span names its trace and span.
	a.logger = slog.New(tracing.LogHandler(h))
}

func (a *app) path(p string) string {
	if filepath.IsAbs(p) || a.env.WorkDir == "" {
		return p
	}
	return filepath.Join(a.env.WorkDir, p)
}

// errNoConfig is returned when no configuration file can be found.
var errNoConfig = errors.New("no configuration found: pass --config, create ./t3agent.yaml, or run `t3agent demo` first")

// loadConfig finds and loads the configuration: --config, else
// ./t3agent.yaml, else the demo's ./t3agent-data/t3agent.yaml; it creates
// the master key file on first start.
func (a *app) loadConfig() (config.Config, error) {
	cfg, err := a.readConfig()
	if err != nil {
		return config.Config{}, err
	}
	if err := a.ensureMasterKey(cfg); err != nil {
		return config.Config{}, err
	}
	return cfg, nil
}

// readConfig is loadConfig without creating anything.
func (a *app) readConfig() (config.Config, error) {
	path := a.configPath
	if path == "" {
		for _, p := range []string{"t3agent.yaml", filepath.Join(DefaultDataDir, "t3agent.yaml")} {
			if _, err := os.Stat(a.path(p)); err == nil {
				path = p
				break
			}
		}
		if path == "" {
			return config.Config{}, errNoConfig
		}
	}
	cfg, err := config.Load(a.path(path), a.env.Environ)
	if err != nil {
		return config.Config{}, err
	}
	a.applyLogConfig(cfg)
	return cfg, nil
}

// ExitError ends the process with Code and prints nothing more: the
// command has said what there is to say (doctor's findings).
type ExitError struct{ Code int }

func (e ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// ensureMasterKey creates the configured master key file on first start
// and refuses one others may read or that holds no key.
func (a *app) ensureMasterKey(cfg config.Config) error {
	created, err := cfg.EnsureMasterKey()
	if err != nil {
		return err
	}
	if created {
		a.logger.Info("master key created; back it up, it opens the credentials sealed with it", "file", cfg.Security.MasterKeyFile)
	}
	return nil
}

// Version is the module version and VCS revision the binary was built from.
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := info.Main.Version
	if v == "" || v == "(devel)" {
		v = "dev"
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += "+" + s.Value[:12]
		}
	}
	return v
}

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if a.jsonOut {
				return writeJSON(a.env.Stdout, map[string]string{"version": Version()})
			}
			_, err := fmt.Fprintln(a.env.Stdout, "t3agent", Version())
			return err
		},
	}
}

// lockedWriter serialises the writes to one stream.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
