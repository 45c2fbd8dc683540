package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"go.opentelemetry.io/otel/trace"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/builtin"
	"github.com/t3agent/t3agent/internal/builtin/sitesearch"
	"github.com/t3agent/t3agent/internal/chat"
	"github.com/t3agent/t3agent/internal/config"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/mcpauth"
	"github.com/t3agent/t3agent/internal/metrics"
	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/secret"
	"github.com/t3agent/t3agent/internal/siteindex"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/tracing"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/tca"
	"github.com/t3agent/t3agent/internal/web"
)

// runtime is what the long-running commands open: the own store, the site
// database and the site's TCA.
type runtime struct {
	cfg      config.Config
	store    store.Store
	db       *typo3.DB
	site     *typo3.Site
	registry *tool.Registry
	gate     *gate.Gate
	// index is the site index (used by search_records only when enabled).
	index   *siteindex.Index
	keyring *secret.Keyring // nil without a configured master key
	mcp     *mcp.Service
	mcpAuth *mcpauth.Manager // nil without a master key
	// tracing exports spans when the otel: section or OTEL_* configure it.
	tracing *tracing.Provider
	// events counts this process's provider calls, tool calls and gate
	// denials; serve exposes them on /metrics.
	events *metrics.Events
}

// tracerProvider is what the instrumented packages take: nil when
// tracing is off, so they make no spans and wrap no transport.
func (r *runtime) tracerProvider() trace.TracerProvider {
	if !r.tracing.Enabled() {
		return nil
	}
	return r.tracing.TracerProvider()
}

func (r *runtime) Close() {
	if r.mcp != nil {
		// Waits for pending last-contact writes before the store closes.
		_ = r.mcp.Close()
	}
	if r.db != nil {
		_ = r.db.Close()
	}
	if r.store != nil {
		_ = r.store.Close()
	}
	if r.tracing != nil {
		// The spans of the last moments are exported, within bounds.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = r.tracing.Shutdown(ctx)
	}
}

// open connects to the store and the site and loads the TCA.
func (a *app) open(ctx context.Context, cfg config.Config) (*runtime, error) {
	r := &runtime{cfg: cfg, events: metrics.NewEvents()}
	var err error
	if r.tracing, err = tracing.Setup(ctx, tracing.SetupParams{Config: cfg.Otel.Tracing(), Environ: a.env.Environ, Version: Version()}); err != nil {
		return nil, err
	}
	if r.tracing.Enabled() {
		a.logger.Info("tracing", "export", r.tracing.String(), "content", r.tracing.CaptureContent())
	}
	r.store, err = store.Open(ctx, cfg.Store.DSN, store.OpenParams{Logger: a.logger})
	if err != nil {
		return nil, err
	}
	r.db, err = typo3.Open(ctx, cfg.Site.DSN, typo3.OpenParams{})
	if err != nil {
		r.Close()
		return nil, err
	}
	t, err := a.loadTCA(cfg)
	if err != nil {
		r.Close()
		return nil, err
	}
	r.site, err = typo3.NewSite(typo3.SiteParams{DB: r.db, TCA: t, Root: cfg.Site.Root})
	if err != nil {
		r.Close()
		return nil, err
	}
	if r.keyring, r.mcp, r.mcpAuth, err = a.openMCP(ctx, cfg, r.store, r.tracerProvider()); err != nil {
		r.Close()
		return nil, err
	}
	policy := readpolicy.New(t)
	if r.index, err = siteindex.New(siteindex.Params{Store: r.store, Site: r.site, Policy: policy,
		MaxAge: cfg.SiteIndex.MaxAge, Logger: a.logger}); err != nil {
		r.Close()
		return nil, err
	}
	params := builtin.Params{SiteSearch: sitesearch.Params{Solr: sitesearch.SolrParams{URL: cfg.Search.SolrURL, Timeout: cfg.Search.SolrTimeout}}}
	if cfg.SiteIndex.Enabled {
		// search_records takes candidates from it; site_rag_query asks it
		// last, once it is built.
		params.Index = r.index
		params.SiteSearch.Index = r.index
	}
	r.registry, err = tool.NewRegistry(builtin.ToolsWith(r.site, policy, params), r.mcp.Provider())
	if err != nil {
		r.Close()
		return nil, err
	}
	r.registry.SetLogger(a.logger)
	r.gate, err = gate.New(gate.Params{Registry: r.registry, Store: r.store, Logger: a.logger, TracerProvider: r.tracerProvider(),
		OnCallFinished: r.events.ToolCall, OnDenied: r.events.Denied})
	if err != nil {
		r.Close()
		return nil, err
	}
	a.logger.Debug("site opened", "site", cfg.Site.Name, "db", r.db.DSN, "dialect", r.db.Dialect, "tca", t.Source, "tables", len(t.Tables))
	return r, nil
}

// loadTCA takes the TCA from, in order: the installation's TCA cache file,
// the configured JSON export, an export imported with `t3agent tca import`
// into the data directory, and the bundled core TCA.
func (a *app) loadTCA(cfg config.Config) (*tca.TCA, error) {
	jsonPath := cfg.Site.TCA
	if jsonPath == "" {
		if _, err := os.Stat(importedTCAPath(cfg)); err == nil {
			jsonPath = importedTCAPath(cfg)
		}
	}
	t, err := tca.Load(tca.LoadParams{ProjectRoot: cfg.Site.Root, JSONPath: jsonPath})
	if err != nil {
		return nil, fmt.Errorf("the site's TCA cannot be loaded: %w", err)
	}
	return t, nil
}

// importedTCAPath is where `t3agent tca import` keeps an operator's export.
func importedTCAPath(cfg config.Config) string {
	return filepath.Join(cfg.DataDir, "tca-export.json")
}

func (a *app) serveCommand() *cobra.Command {
	var listen string
	var noWorker bool
	var workers int
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the web UI, the API and the probes for the configured site",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := a.loadConfig()
			if err != nil {
				return err
			}
			if listen != "" {
				cfg.Listen = listen
			}
			if workers < 0 || workers > 256 {
				return errors.New("--workers must be between 0 and 256")
			}
			if noWorker {
				workers = 0
			}
			return a.serve(cmd.Context(), cfg, serveOptions{workers: workers, noChatWorker: noWorker})
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "address to listen on (overrides the configuration)")
	cmd.Flags().BoolVar(&noWorker, "no-worker", false, "do not run queued agent runs and chat turns in this process (run `t3agent worker` and `t3agent chat worker` elsewhere)")
	cmd.Flags().IntVar(&workers, "workers", 1, "how many queued runs this process executes at once")
	return cmd
}

// serveOptions tune serve.
type serveOptions struct {
	// workers is how many queued runs the in-process worker executes at
	// once; 0 runs no worker.
	workers int
	// noChatWorker runs no chat worker in-process (its concurrency and
	// poll interval come from the chat.* configuration keys).
	noChatWorker bool
	// ready, when set, is called with the bound address once the server
	// accepts connections.
	ready func(addr string)
	// extra, when set, starts what this process serves beside the web
	// server (the demo's write server) once the runtime is open; its
	// stop runs after the web server has stopped.
	extra func(ctx context.Context, r *runtime) (stop func(), err error)
}

// serve runs the HTTP server with the API, a worker for queued runs and a
// chat worker until SIGINT/SIGTERM; the workers stop claiming first and
// finish the runs and turns in flight.
func (a *app) serve(ctx context.Context, cfg config.Config, opts serveOptions) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	r, err := a.open(ctx, cfg)
	if err != nil {
		return err
	}
	defer r.Close()
	rt, cfgs, providers, err := a.agentRuntime(r)
	if err != nil {
		return err
	}
	// Deferred after the store's Close, so it runs first; the workers'
	// Stop, deferred later still, runs before it.
	defer providers.Close()
	if opts.extra != nil {
		stopExtra, err := opts.extra(ctx, r)
		if err != nil {
			return err
		}
		defer stopExtra()
	}
	chatSvc, err := a.chatService(r, rt, cfgs)
	if err != nil {
		return err
	}

	proxies, err := cfg.HTTP.Proxies()
	if err != nil {
		return err
	}
	srv := web.New(web.Params{
		Logger:   a.logger,
		SiteName: cfg.Site.Name,
		Version:  Version(),
		Checks: []web.Check{
			{Name: "store", Probe: r.store.Ping},
			{Name: "site database", Probe: r.db.Ping},
		},
		API: &web.API{
			Site: r.site, Credentials: r.store, Runtime: rt, Chat: chatSvc,
			Gate: r.gate, Configs: cfgs, StreamPoll: cfg.Chat.StreamPoll, TrustedProxies: proxies,
			Ops: webOps(r, rt, cfgs),
			MCP: r.mcp, AgentConfig: cfgs,
		},
		MCP: a.mcpServerParams(r, rt, cfgs),
		Collectors: []prometheus.Collector{
			r.events, metrics.NewStore(metrics.StoreParams{Store: r.store, Logger: a.logger}),
		},
		Console: true,
	})
	if opts.workers > 0 {
		w, err := agent.NewWorker(agent.WorkerParams{Runtime: rt, Concurrency: opts.workers, Logger: a.logger})
		if err != nil {
			return err
		}
		w.Start(ctx)
		// Deferred after the store's Close, so it runs first: the worker
		// finishes its runs while the store is still open.
		defer w.Wait()
		defer w.Stop()
	}
	if cfg.SiteIndex.Enabled {
		sy := siteindex.NewSyncer(siteindex.SyncerParams{Index: r.index, Interval: cfg.SiteIndex.Interval,
			After: a.env.After, Logger: a.logger})
		sy.Start(ctx)
		// Stop waits for a sync in flight, before the store closes.
		defer sy.Stop()
	}
	if !opts.noChatWorker {
		cw, err := chat.NewWorker(chat.WorkerParams{
			Service: chatSvc, Concurrency: cfg.Chat.WorkerConcurrency, Poll: cfg.Chat.PollInterval,
			MaintainEvery: cfg.Chat.MaintenanceInterval, After: a.env.After, Logger: a.logger,
		})
		if err != nil {
			return err
		}
		cw.Start(ctx)
		// Stop waits for the turns in flight, before the store closes.
		defer cw.Stop()
	} else {
		// The chat workers run elsewhere; a turn a crashed one left locked
		// still blocks this serve's users, so it maintains all the same.
		m, err := chat.NewMaintainer(chat.MaintainerParams{
			Service: chatSvc, Every: cfg.Chat.MaintenanceInterval, After: a.env.After, Logger: a.logger,
		})
		if err != nil {
			return err
		}
		m.Start(ctx)
		defer m.Stop()
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w", cfg.Listen, err)
	}
	addr := ln.Addr().String()
	a.logger.Info("serving", "url", "http://"+addr, "site", cfg.Site.Name, "db", r.db.DSN, "tca", r.site.TCA.Source, "tools", r.registry.Len(ctx))
	if opts.ready != nil {
		opts.ready(addr)
	}
	return web.Serve(ctx, ln, tracing.Handler(srv.Handler(), r.tracerProvider()), cfg.HTTP.ShutdownTimeout, a.logger)
}
