// Package endpoint builds the adapter for a configured provider record:
// it knows which adapter serves each adapter kind and the usual base URL
// of the OpenAI-compatible ones, so configuration code needs no switch of
// its own. Wrap the result with llm.Resilient once per endpoint.
package endpoint

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/llm/anthropic"
	"github.com/t3agent/t3agent/internal/llm/gemini"
	"github.com/t3agent/t3agent/internal/llm/openai"
)

// compatibleKinds are the OpenAI-compatible kinds.
func compatibleKinds() []string {
	return []string{"openai", "ollama", "vllm", "llamacpp", "lmstudio", "openrouter", "mistral", "groq", "azure", "custom"}
}

// defaultBase is a compatible kind's usual base URL ("" when the record
// must give one); ok is false for a kind that is not compatible.
func defaultBase(kind string) (base string, ok bool) {
	switch kind {
	case "openai":
		return openai.DefaultBaseURL, true
	case "ollama":
		return "http://localhost:11434/v1", true
	case "vllm":
		return "http://localhost:8000/v1", true
	case "llamacpp":
		return "http://localhost:8080/v1", true
	case "lmstudio":
		return "http://localhost:1234/v1", true
	case "openrouter":
		return "https://openrouter.ai/api/v1", true
	case "mistral":
		return "https://api.mistral.ai/v1", true
	case "groq":
		return "https://api.groq.com/openai/v1", true
	case "azure", "custom":
		return "", true
	}
	return "", false
}

// Kinds lists every adapter kind New accepts, sorted.
func Kinds() []string {
	kinds := append([]string{"anthropic", "gemini"}, compatibleKinds()...)
	slices.Sort(kinds)
	return kinds
}

// Params is a provider record as configuration holds it.
type Params struct {
	// Kind is one of Kinds().
	Kind string
	// Name identifies the provider in telemetry; "" means Kind.
	Name string
	// BaseURL overrides the kind's default; azure and custom need one.
	BaseURL string
	APIKey  string
	Headers map[string]string
	// APIVersion is Azure's api-version query parameter or Gemini's API
	// version; other kinds ignore it.
	APIVersion string
	Timeout    time.Duration
	// HTTPClient, when set, replaces the client built from Timeout.
	HTTPClient *http.Client
}

// Provider is what New returns: a streaming, model-listing adapter whose
// idle connections Close releases.
type Provider interface {
	llm.Streamer
	llm.ModelLister
	Close()
}

// New builds the adapter for p.
func New(ctx context.Context, p Params) (Provider, error) {
	name := p.Name
	if name == "" {
		name = p.Kind
	}
	switch p.Kind {
	case "anthropic":
		return anthropic.New(anthropic.Params{
			Name: name, BaseURL: p.BaseURL, APIKey: p.APIKey, Headers: p.Headers, HTTPClient: p.HTTPClient, Timeout: p.Timeout,
		})
	case "gemini":
		return gemini.New(ctx, gemini.Params{
			Name: name, BaseURL: p.BaseURL, APIVersion: p.APIVersion, APIKey: p.APIKey, Headers: p.Headers,
			HTTPClient: p.HTTPClient, Timeout: p.Timeout,
		})
	}
	def, ok := defaultBase(p.Kind)
	if !ok {
		return nil, &llm.Error{Provider: name, Class: llm.FailConfiguration, Message: "unknown adapter kind " + p.Kind}
	}
	base := p.BaseURL
	if base == "" {
		base = def
	}
	if base == "" {
		return nil, &llm.Error{Provider: name, Class: llm.FailConfiguration, Message: "adapter kind " + p.Kind + " needs an endpoint"}
	}
	op := openai.Params{Name: name, BaseURL: base, APIKey: p.APIKey, Headers: p.Headers, HTTPClient: p.HTTPClient, Timeout: p.Timeout}
	if p.Kind == "azure" {
		op.APIKeyHeader = "api-key"
		if p.APIVersion != "" {
			op.Query = map[string]string{"api-version": p.APIVersion}
		}
	}
	return openai.New(op)
}
