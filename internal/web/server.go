// Package web is t3agent's HTTP face: health and readiness probes,
// Prometheus metrics, the pages of the UI and the JSON API under /api/v1
// (login and service tokens, the chat, runs and the inbox, tools, labels,
// the OpenAPI document) and, when mounted (mcp_mount.go), the MCP facade
// at /mcp with its OAuth authorization server and consent page. Handlers
// never expose an internal error to the client: the client gets a code
// and a neutral sentence, the log gets the cause.
package web

import (
	"context"
	"embed"
	"errors"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/t3agent/t3agent/internal/mcpserver"
	"github.com/t3agent/t3agent/internal/oauth"
)

// Check is one readiness dependency (the store, the site database).
type Check struct {
	Name string
	// Probe returns nil when the dependency answers. It must honour ctx.
	Probe func(ctx context.Context) error
}

// Params configures a Server.
type Params struct {
	Logger   *slog.Logger
	SiteName string
	Version  string
	// Checks decide /readyz.
	Checks []Check
	// Registry receives the server's metrics; nil creates a private one.
	Registry *prometheus.Registry
	// Collectors are registered on the Registry beside the server's own
	// (package metrics: the runtime's events and the store's aggregates).
	Collectors []prometheus.Collector
	// API serves /api/v1; nil serves no API.
	API *API
	// MCP mounts the MCP facade and its OAuth server (mcp_mount.go); it
	// needs the API.
	MCP *MCPParams
	// Console serves the web console (package console) at "/" instead of
	// the start page; it needs the API.
	Console bool
}

// Server holds the handlers. It is safe for concurrent use.
type Server struct {
	p        Params
	api      *API
	mux      *http.ServeMux
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	// loginFailures counts refused logins by reason.
	loginFailures *prometheus.CounterVec
	limiter       *loginLimiter
	// sessions ends the streams of a session that ends in this process.
	sessions *sessionStreams
	// facade and oauth are the MCP facade and its authorization server,
	// when mounted.
	facade *mcpserver.Server
	oauth  *oauth.Server

	// closing is closed when the HTTP server shuts down, to end the
	// streams, which would otherwise hold the shutdown until its timeout.
	closing   chan struct{}
	closeOnce sync.Once
}

//go:embed templates/*.html
var templateFS embed.FS

var pages = template.Must(template.ParseFS(templateFS, "templates/*.html"))

// New builds a Server.
func New(p Params) *Server {
	if p.Logger == nil {
		p.Logger = slog.New(slog.DiscardHandler)
	}
	if p.Registry == nil {
		p.Registry = prometheus.NewRegistry()
		p.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	s := &Server{
		p:        p,
		mux:      http.NewServeMux(),
		closing:  make(chan struct{}),
		sessions: newSessionStreams(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "t3agent_http_requests_total",
			Help: "HTTP requests by route and status code.",
		}, []string{"route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "t3agent_http_request_duration_seconds",
			Help:    "HTTP request latency by route.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route"}),
	}
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "t3agent_build_info",
		Help: "Build information; always 1.",
	}, []string{"version"})
	build.WithLabelValues(p.Version).Set(1)
	s.loginFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "t3agent_login_failures_total",
		Help: "Refused logins (API and MCP consent page) by reason: wrong_credentials, disabled, legacy_hash, rate_limited.",
	}, []string{"reason"})
	for _, reason := range []string{failWrongCredentials, failDisabled, failLegacyHash, failRateLimited} {
		s.loginFailures.WithLabelValues(reason)
	}
	p.Registry.MustRegister(s.requests, s.duration, build, s.loginFailures)
	p.Registry.MustRegister(p.Collectors...)

	s.handle("GET /healthz", s.healthz)
	s.handle("GET /readyz", s.readyz)
	s.mux.Handle("GET /metrics", promhttp.HandlerFor(p.Registry, promhttp.HandlerOpts{}))
	if p.API != nil {
		api := *p.API
		s.api = &api
		s.registerAPI()
		if p.MCP != nil {
			if err := s.mountMCP(); err != nil {
				p.Logger.Error("the MCP facade is not served", "err", err)
			}
		}
	}
	if p.Console && s.api != nil {
		s.mountConsole()
	} else {
		s.handle("GET /{$}", s.home)
	}
	return s
}

// Handler returns the root handler.
func (s *Server) Handler() http.Handler { return s }

// ServeHTTP serves every route.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// CloseStreams ends the open event streams and the MCP facade's
// sessions; Serve calls it when the server shuts down. It may be called
// more than once.
func (s *Server) CloseStreams() {
	s.closeOnce.Do(func() {
		close(s.closing)
		if s.facade != nil {
			s.facade.Close()
		}
	})
}

func (s *Server) handle(pattern string, h http.HandlerFunc) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		h(rec, r)
		s.requests.WithLabelValues(pattern, strconv.Itoa(rec.code)).Inc()
		s.duration.WithLabelValues(pattern).Observe(time.Since(start).Seconds())
	})
}

type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.code = code
	r.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection (flushing a
// stream).
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}

// readyz answers 200 only when every dependency answers within 5 s. The
// body names failing dependencies but never their error text, which may
// hold hosts or user names.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	body := ""
	failed := false
	for _, c := range s.p.Checks {
		if err := c.Probe(ctx); err != nil {
			s.p.Logger.Warn("readiness check failed", "check", c.Name, "err", err)
			body += c.Name + ": unavailable\n"
			failed = true
			continue
		}
		body += c.Name + ": ok\n"
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if failed {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_, _ = w.Write([]byte(body))
}

// home is the start page. It is public, so it names no backend user.
func (s *Server) home(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	err := pages.ExecuteTemplate(w, "home.html", map[string]any{
		"SiteName": s.p.SiteName,
		"Version":  s.p.Version,
	})
	if err != nil {
		s.p.Logger.Error("rendering the start page", "err", err)
	}
}

// Serve runs handler on ln until ctx is cancelled, then shuts down
// gracefully, waiting at most shutdownTimeout for requests in flight. A
// handler with open streams (a Server's) has them closed when the
// shutdown begins.
func Serve(ctx context.Context, ln net.Listener, handler http.Handler, shutdownTimeout time.Duration, logger *slog.Logger) error {
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	if sc, ok := handler.(interface{ CloseStreams() }); ok {
		srv.RegisterOnShutdown(sc.CloseStreams)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down", "timeout", shutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return err
}
