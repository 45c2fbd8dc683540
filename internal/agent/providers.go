package agent

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/llm/anthropic"
	"github.com/t3agent/t3agent/internal/llm/gemini"
	"github.com/t3agent/t3agent/internal/llm/openai"
	"github.com/t3agent/t3agent/internal/tracing"
)

// Keys opens a provider's API key and header values at the moment of use;
// *agentconfig.Service is the implementation.
type Keys interface {
	APIKey(p agentconfig.Provider) (string, error)
	Headers(p agentconfig.Provider) (map[string]string, error)
}

// ProvidersParams configure NewProviders.
type ProvidersParams struct {
	Keys Keys // required
	// Sleep waits between retries; nil means llm.RealSleep. Tests pass
	// one that returns at once.
	Sleep llm.SleepFunc
	// Now is the circuit breakers' clock; nil means time.Now.
	Now func() time.Time
	// HTTPClient, when set, is used by every adapter instead of one built
	// from the provider's timeout.
	HTTPClient *http.Client
	Logger     *slog.Logger
	// TracerProvider, when set, makes every provider request a client
	// span carrying the W3C trace context (traceparent) to the provider,
	// which an OpenAI-compatible gateway joins to its own trace.
	TracerProvider trace.TracerProvider
}

// Providers builds one resilient stack per provider record (a circuit
// breaker over retries over the adapter for its wire) and keeps it, so
// every run and every configuration using an endpoint shares its
// breaker. A record changed since (a new UpdatedAt) is built afresh. It
// is safe for concurrent use; Close releases idle connections.
type Providers struct {
	p     ProvidersParams
	mu    sync.Mutex
	built map[string]builtProvider
}

type builtProvider struct {
	version time.Time
	stack   llm.Provider
	close   func()
}

// NewProviders returns an empty Providers.
func NewProviders(p ProvidersParams) *Providers {
	if p.Logger == nil {
		p.Logger = slog.Default()
	}
	return &Providers{p: p, built: map[string]builtProvider{}}
}

// Provider returns the stack of e's provider, building it on first use.
// Its errors name the provider and never hold a key.
func (ps *Providers) Provider(ctx context.Context, e agentconfig.Entry) (llm.Provider, error) {
	rec := e.Provider
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if b, ok := ps.built[rec.Identifier]; ok && b.version.Equal(rec.UpdatedAt) {
		return b.stack, nil
	}
	key, err := ps.p.Keys.APIKey(rec)
	if err != nil {
		return nil, err
	}
	headers, err := ps.p.Keys.Headers(rec)
	if err != nil {
		return nil, err
	}
	timeout := rec.Timeout
	if timeout <= 0 {
		timeout = agentconfig.DefaultTimeout
	}
	var adapter interface {
		llm.Provider
		Close()
	}
	hc := ps.p.HTTPClient
	if hc == nil && ps.p.TracerProvider != nil {
		hc = llm.NewHTTPClient(llm.HTTPClientParams{Timeout: timeout})
		hc.Transport = tracing.Transport(hc.Transport, ps.p.TracerProvider)
	}
	switch rec.Adapter {
	case agentconfig.AdapterOpenAI, agentconfig.AdapterOpenAICompatible:
		adapter, err = openai.New(openai.Params{Name: rec.Identifier, BaseURL: rec.Endpoint, APIKey: key, Headers: headers, HTTPClient: hc, Timeout: timeout})
	case agentconfig.AdapterAnthropic:
		adapter, err = anthropic.New(anthropic.Params{Name: rec.Identifier, BaseURL: rec.Endpoint, APIKey: key, Headers: headers, HTTPClient: hc, Timeout: timeout})
	case agentconfig.AdapterGemini:
		adapter, err = gemini.New(ctx, gemini.Params{Name: rec.Identifier, BaseURL: rec.Endpoint, APIKey: key, Headers: headers, HTTPClient: hc, Timeout: timeout})
	default:
		return nil, fmt.Errorf("provider %q: adapter %q is not supported", rec.Identifier, rec.Adapter)
	}
	if err != nil {
		return nil, fmt.Errorf("provider %q: %w", rec.Identifier, err)
	}
	log := ps.p.Logger
	stack := llm.Resilient(adapter,
		llm.RetryParams{MaxRetries: rec.MaxRetries, Sleep: ps.p.Sleep, Logger: log},
		llm.BreakerParams{Now: ps.p.Now, OnChange: func(provider string, from, to llm.BreakerState) {
			log.Warn("llm circuit changed", "provider", provider, "from", from, "to", to)
		}})
	if old, ok := ps.built[rec.Identifier]; ok {
		old.close()
	}
	ps.built[rec.Identifier] = builtProvider{version: rec.UpdatedAt, stack: stack, close: adapter.Close}
	return stack, nil
}

// Close releases every adapter's idle connections.
func (ps *Providers) Close() {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for id, b := range ps.built {
		b.close()
		delete(ps.built, id)
	}
}
