// Package tracing sets up OpenTelemetry traces for t3agent and holds the
// few helpers the instrumented packages share. It is a leaf: it imports
// nothing of t3agent's.
//
// # Off unless configured
//
// Setup returns a Provider whose TracerProvider is a no-op unless an OTLP
// endpoint is configured, by the otel: section (Config) or by the standard
// OTEL_* variables (OTEL_EXPORTER_OTLP_ENDPOINT,
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, their _PROTOCOL, _HEADERS,
// _TIMEOUT, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES,
// OTEL_TRACES_SAMPLER and _ARG, OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER).
// The section wins over the variables, key by key. Spans go out over OTLP,
// HTTP/protobuf by default or gRPC.
//
// # No globals
//
// Nothing here sets otel's global tracer provider or propagator. The
// TracerProvider travels through the Params of the packages that make
// spans (agent, gate, llm providers through agent, mcp, chat), and the
// W3C trace context is written into the requests to MCP servers and model
// providers by Transport, with the propagator fixed to TraceContext.
//
// # Content
//
// Spans carry names, ids, models, token counts, outcomes; never a prompt,
// a completion or tool arguments, unless Config.CaptureContent is set, and
// then only text the guardrails' secret redaction has passed (the agent
// redacts before it records).
package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// ScopeName is the instrumentation scope of every t3agent span.
const ScopeName = "github.com/t3agent/t3agent"

// Protocols of the OTLP exporter.
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// Config is the otel: section of the configuration. Empty fields fall
// back to the OTEL_* variables.
type Config struct {
	// Endpoint is the collector: a base URL such as
	// http://collector:4318 (the HTTP exporter adds /v1/traces when no
	// path is given) or, for gRPC, http://collector:4317.
	Endpoint string
	// Protocol is http/protobuf (default) or grpc.
	Protocol string
	// Headers are comma-separated key=value pairs sent with every export
	// (an API key of a hosted backend).
	Headers string
	// Insecure sends to an https-less gRPC endpoint; for HTTP the URL's
	// scheme decides.
	Insecure bool
	// ServiceName names the service; default "t3agent".
	ServiceName string
	// CaptureContent records prompts, completions and tool arguments on
	// the spans, after secret redaction. Off by default.
	CaptureContent bool
}

// SetupParams are the parameters of Setup.
type SetupParams struct {
	Config Config
	// Environ is the process environment (os.Environ format), where the
	// OTEL_* variables are read.
	Environ []string
	// Version is the service version on every span.
	Version string
	// Exporter, when set, receives the spans synchronously instead of an
	// OTLP exporter, and tracing is on whatever the configuration says:
	// for tests (sdk/trace/tracetest's in-memory exporter).
	Exporter sdktrace.SpanExporter
}

// Provider is the set-up tracing of one process.
type Provider struct {
	tp      trace.TracerProvider
	sdk     *sdktrace.TracerProvider
	content bool
	desc    string
}

// Off is the Provider of a process without tracing.
func Off() *Provider { return &Provider{tp: noop.NewTracerProvider(), desc: "off"} }

// Setup builds the process's tracing from the configuration and the
// environment. An endpoint neither names is tracing off, not an error.
func Setup(ctx context.Context, p SetupParams) (*Provider, error) {
	env := envMap(p.Environ)
	cfg := p.Config
	if p.Exporter == nil {
		if strings.EqualFold(env["OTEL_SDK_DISABLED"], "true") || env["OTEL_TRACES_EXPORTER"] == "none" {
			return Off(), nil
		}
		if cfg.Endpoint == "" && env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] == "" && env["OTEL_EXPORTER_OTLP_ENDPOINT"] == "" {
			return Off(), nil
		}
		if e := env["OTEL_TRACES_EXPORTER"]; e != "" && e != "otlp" {
			return nil, fmt.Errorf("OTEL_TRACES_EXPORTER: %q is not supported; use otlp or none", e)
		}
	}
	name := firstOf(cfg.ServiceName, env["OTEL_SERVICE_NAME"], "t3agent")
	attrs := append(resourceAttributes(env["OTEL_RESOURCE_ATTRIBUTES"]),
		semconv.ServiceName(name), semconv.ServiceVersion(p.Version))
	res, err := resource.New(ctx, resource.WithAttributes(attrs...), resource.WithHost(), resource.WithProcessPID())
	if err != nil {
		return nil, fmt.Errorf("otel: cannot describe the service: %w", err)
	}
	sampler, err := samplerOf(env["OTEL_TRACES_SAMPLER"], env["OTEL_TRACES_SAMPLER_ARG"])
	if err != nil {
		return nil, err
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res), sdktrace.WithSampler(sampler)}
	desc := "in-process exporter"
	if p.Exporter != nil {
		opts = append(opts, sdktrace.WithSyncer(p.Exporter))
	} else {
		exp, d, err := newExporter(ctx, cfg, env)
		if err != nil {
			return nil, err
		}
		opts = append(opts, sdktrace.WithBatcher(exp))
		desc = d
	}
	sdk := sdktrace.NewTracerProvider(opts...)
	return &Provider{tp: sdk, sdk: sdk, content: cfg.CaptureContent, desc: desc}, nil
}

// TracerProvider is what instrumented packages take in their Params; a
// no-op when tracing is off.
func (p *Provider) TracerProvider() trace.TracerProvider { return p.tp }

// Enabled reports whether spans are exported.
func (p *Provider) Enabled() bool { return p.sdk != nil }

// CaptureContent reports whether redacted content goes on spans.
func (p *Provider) CaptureContent() bool { return p.content }

// String says where spans go, without headers.
func (p *Provider) String() string { return p.desc }

// Shutdown exports what is buffered and stops; a no-op when off.
func (p *Provider) Shutdown(ctx context.Context) error {
	if p.sdk == nil {
		return nil
	}
	return p.sdk.Shutdown(ctx)
}

func newExporter(ctx context.Context, cfg Config, env map[string]string) (sdktrace.SpanExporter, string, error) {
	proto := firstOf(cfg.Protocol, env["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"], env["OTEL_EXPORTER_OTLP_PROTOCOL"], ProtocolHTTP)
	headers, err := parseHeaders(firstOf(cfg.Headers, env["OTEL_EXPORTER_OTLP_TRACES_HEADERS"], env["OTEL_EXPORTER_OTLP_HEADERS"]))
	if err != nil {
		return nil, "", err
	}
	timeout := 10 * time.Second
	if v := firstOf(env["OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"], env["OTEL_EXPORTER_OTLP_TIMEOUT"]); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			return nil, "", fmt.Errorf("OTEL_EXPORTER_OTLP_TIMEOUT: %q is not a number of milliseconds", v)
		}
		timeout = time.Duration(ms) * time.Millisecond
	}
	// The signal's own variable is the whole URL; the config key and the
	// general variable are a base the signal's path is added to.
	endpoint, full := cfg.Endpoint, false
	if endpoint == "" {
		if endpoint = env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]; endpoint != "" {
			full = true
		} else {
			endpoint = env["OTEL_EXPORTER_OTLP_ENDPOINT"]
		}
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, "", fmt.Errorf("otel.endpoint: %q is not an http:// or https:// URL of a collector", endpoint)
	}
	switch proto {
	case ProtocolHTTP, "http/json", "http":
		if !full && strings.Trim(u.Path, "/") == "" {
			u.Path = "/v1/traces"
		}
		exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(u.String()),
			otlptracehttp.WithHeaders(headers), otlptracehttp.WithTimeout(timeout))
		return exp, "OTLP/HTTP " + u.Redacted(), err
	case ProtocolGRPC:
		opts := []otlptracegrpc.Option{otlptracegrpc.WithEndpointURL(u.String()),
			otlptracegrpc.WithHeaders(headers), otlptracegrpc.WithTimeout(timeout)}
		if cfg.Insecure || u.Scheme == "http" {
			opts = append(opts, otlptracegrpc.WithInsecure())
		}
		exp, err := otlptracegrpc.New(ctx, opts...)
		return exp, "OTLP/gRPC " + u.Redacted(), err
	}
	return nil, "", fmt.Errorf("otel.protocol: %q is not http/protobuf or grpc", proto)
}

func samplerOf(name, arg string) (sdktrace.Sampler, error) {
	ratio := func() (float64, error) {
		if arg == "" {
			return 1, nil
		}
		f, err := strconv.ParseFloat(arg, 64)
		if err != nil || f < 0 || f > 1 {
			return 0, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG: %q is not a ratio between 0 and 1", arg)
		}
		return f, nil
	}
	switch name {
	case "", "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), nil
	case "always_on":
		return sdktrace.AlwaysSample(), nil
	case "always_off":
		return sdktrace.NeverSample(), nil
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), nil
	case "traceidratio", "parentbased_traceidratio":
		r, err := ratio()
		if err != nil {
			return nil, err
		}
		if name == "traceidratio" {
			return sdktrace.TraceIDRatioBased(r), nil
		}
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(r)), nil
	}
	return nil, fmt.Errorf("OTEL_TRACES_SAMPLER: %q is not supported", name)
}

// parseHeaders reads "k=v,k2=v2" with URL-encoded values, as the OTLP
// variables give them.
func parseHeaders(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if strings.TrimSpace(kv) == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			// Never quote the pair: it may hold a key.
			return nil, errors.New("otel.headers: every entry must be key=value, comma-separated")
		}
		if dv, err := url.QueryUnescape(strings.TrimSpace(v)); err == nil {
			v = dv
		}
		out[k] = v
	}
	return out, nil
}

func resourceAttributes(s string) []attribute.KeyValue {
	var out []attribute.KeyValue
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			continue
		}
		if dv, err := url.QueryUnescape(strings.TrimSpace(v)); err == nil {
			v = dv
		}
		out = append(out, attribute.String(strings.TrimSpace(k), v))
	}
	return out
}

func envMap(environ []string) map[string]string {
	m := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "OTEL_") {
			m[k] = strings.TrimSpace(v)
		}
	}
	return m
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// Tracer is the t3agent tracer of tp; a nil tp is tracing off.
func Tracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	return tp.Tracer(ScopeName)
}

// Propagator is the W3C trace context, the one header every OTLP-aware
// server and gateway reads.
func Propagator() propagation.TextMapPropagator { return propagation.TraceContext{} }

// Transport wraps base so every request is a client span and carries the
// W3C traceparent of its context; with a nil tp it returns base as it is.
// The result closes base's idle connections when asked to.
func Transport(base http.RoundTripper, tp trace.TracerProvider) http.RoundTripper {
	if tp == nil {
		return base
	}
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{base: base, otel: otelhttp.NewTransport(base,
		otelhttp.WithTracerProvider(tp), otelhttp.WithPropagators(Propagator()),
		otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()))}
}

type transport struct {
	base, otel http.RoundTripper
}

func (t *transport) RoundTrip(r *http.Request) (*http.Response, error) { return t.otel.RoundTrip(r) }

func (t *transport) CloseIdleConnections() {
	if ci, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

// Handler wraps an HTTP server's handler so each request under /api/ is
// a server span named after its route ("GET /api/v1/runs/{id}"), joined
// to the caller's trace when the request carries a traceparent. Probes,
// metrics and pages are left out. With a nil tp it returns h.
func Handler(h http.Handler, tp trace.TracerProvider) http.Handler {
	if tp == nil {
		return h
	}
	return otelhttp.NewHandler(h, "t3agent",
		otelhttp.WithTracerProvider(tp), otelhttp.WithPropagators(Propagator()),
		otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()),
		otelhttp.WithFilter(func(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/api/") }))
}

type conversationKey struct{}

// WithConversation marks ctx as working on a chat conversation, so the
// agent run started under it carries gen_ai.conversation.id.
func WithConversation(ctx context.Context, id int64) context.Context {
	return context.WithValue(ctx, conversationKey{}, id)
}

// Conversation is the conversation ctx works on, if any.
func Conversation(ctx context.Context) (int64, bool) {
	id, ok := ctx.Value(conversationKey{}).(int64)
	return id, ok
}

// Fail marks span failed with errType (the error.type attribute, a low
// cardinality class) and a message that must hold nothing secret.
func Fail(span trace.Span, errType, msg string) {
	span.SetAttributes(semconv.ErrorTypeKey.String(errType))
	span.SetStatus(codes.Error, msg)
}
