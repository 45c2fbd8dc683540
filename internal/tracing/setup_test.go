package tracing_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/t3agent/t3agent/internal/tracing"
)

// TestSetupIsOffUnlessConfigured: without an endpoint, or with the SDK
// switched off, tracing is a no-op; bad settings are one sentence.
func TestSetupIsOffUnlessConfigured(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		cfg  tracing.Config
		env  []string
	}{
		{"nothing", tracing.Config{}, nil},
		{"other variables", tracing.Config{}, []string{"OTEL_SERVICE_NAME=x", "PATH=/bin"}},
		{"disabled", tracing.Config{Endpoint: "http://127.0.0.1:4318"}, []string{"OTEL_SDK_DISABLED=true"}},
		{"exporter none", tracing.Config{}, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER=none"}},
	} {
		p, err := tracing.Setup(t.Context(), tracing.SetupParams{Config: c.cfg, Environ: c.env})
		if err != nil || p.Enabled() {
			t.Errorf("%s: enabled=%v, %v", c.name, p != nil && p.Enabled(), err)
		}
	}
	for _, c := range []struct {
		cfg  tracing.Config
		env  []string
		want string
	}{
		{tracing.Config{Endpoint: "collector:4318"}, nil, "otel.endpoint"},
		{tracing.Config{Endpoint: "http://c:4318", Protocol: "thrift"}, nil, "otel.protocol"},
		{tracing.Config{Endpoint: "http://c:4318", Headers: "api-key"}, nil, "otel.headers"},
		{tracing.Config{}, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://c:4318", "OTEL_TRACES_SAMPLER=sometimes"}, "OTEL_TRACES_SAMPLER"},
		{tracing.Config{}, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://c:4318", "OTEL_TRACES_EXPORTER=zipkin"}, "OTEL_TRACES_EXPORTER"},
		{tracing.Config{}, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://c:4318", "OTEL_EXPORTER_OTLP_TIMEOUT=soon"}, "OTEL_EXPORTER_OTLP_TIMEOUT"},
	} {
		_, err := tracing.Setup(t.Context(), tracing.SetupParams{Config: c.cfg, Environ: c.env})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v %v: %v, want one sentence naming %s", c.cfg, c.env, err, c.want)
		}
	}
	p, err := tracing.Setup(t.Context(), tracing.SetupParams{Config: tracing.Config{Endpoint: "http://127.0.0.1:4317", Protocol: "grpc"}})
	if err != nil || !p.Enabled() || !strings.HasPrefix(p.String(), "OTLP/gRPC") {
		t.Errorf("gRPC: %v, %v", p, err)
	}
	_ = p.Shutdown(context.Background())
}

// TestExportOverOTLPHTTP: the standard variables alone send spans, with
// their headers, to a collector's /v1/traces.
func TestExportOverOTLPHTTP(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []*http.Request
	var bodies int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r)
		bodies += len(b)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer srv.Close()
	p, err := tracing.Setup(t.Context(), tracing.SetupParams{Version: "test", Environ: []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + srv.URL, "OTEL_EXPORTER_OTLP_HEADERS=x-api-key=k%3D1",
	}})
	if err != nil || !p.Enabled() {
		t.Fatalf("setup: %v", err)
	}
	_, span := tracing.Tracer(p.TracerProvider()).Start(t.Context(), "exported")
	span.End()
	if err := p.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0].URL.Path != "/v1/traces" || got[0].Header.Get("X-Api-Key") != "k=1" || bodies == 0 {
		t.Fatalf("the collector got %d requests (%v), %d bytes", len(got), got, bodies)
	}
}

// TestHandlerSpans: an API request is a server span named after its
// route and joined to the caller's trace; probes make none.
func TestHandlerSpans(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	p, err := tracing.Setup(t.Context(), tracing.SetupParams{Exporter: exp})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown(context.Background())
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/runs/{id}", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("GET /healthz", func(http.ResponseWriter, *http.Request) {})
	srv := httptest.NewServer(tracing.Handler(mux, p.TracerProvider()))
	defer srv.Close()
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, path := range []string{"/api/v1/runs/42", "/healthz"} {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header.Set("Traceparent", parent)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	spans := exp.GetSpans()
	if len(spans) != 1 || spans[0].Name != "GET /api/v1/runs/{id}" || spans[0].SpanContext.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("spans = %v", spans)
	}
	if tracing.Handler(mux, nil) != http.Handler(mux) {
		t.Error("without tracing the handler is wrapped")
	}
}
