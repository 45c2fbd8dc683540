package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/t3agent/t3agent/internal/web"
)

// serveMetrics serves GET /metrics on addr for a process that serves no
// web UI (a worker): its provider, tool and denial counters and the Go
// runtime's. The store's aggregates are left to serve, which reports
// them for every process. "" serves nothing. The returned stop ends the
// server and waits for it.
func (a *app) serveMetrics(ctx context.Context, addr string, r *runtime) (stop func(), err error) {
	if addr == "" {
		return func() {}, nil
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), r.events)
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-listen %s cannot be used: %w", addr, err)
	}
	a.logger.Info("serving metrics", "url", "http://"+ln.Addr().String()+"/metrics")
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := web.Serve(ctx, ln, mux, 5*time.Second, a.logger); err != nil {
			a.logger.Error("the metrics server stopped", "err", err)
		}
	}()
	return func() {
		cancel()
		<-done
	}, nil
}
