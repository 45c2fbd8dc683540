package agentconfig

import (
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/tool"
)

// Adapter names the client library a provider is spoken to with.
type Adapter string

const (
	AdapterOpenAI           Adapter = "openai"
	AdapterOpenAICompatible Adapter = "openai_compatible" // Ollama, vLLM, llama.cpp, OpenRouter, Mistral, Groq, Azure…
	AdapterAnthropic        Adapter = "anthropic"
	AdapterGemini           Adapter = "gemini"
)

// Adapters lists every adapter.
func Adapters() []Adapter {
	return []Adapter{AdapterOpenAI, AdapterOpenAICompatible, AdapterAnthropic, AdapterGemini}
}

// Capability is something a model can do.
type Capability string

const (
	CapChat       Capability = "chat"
	CapTools      Capability = "tools"
	CapStreaming  Capability = "streaming"
	CapVision     Capability = "vision"
	CapJSONMode   Capability = "json_mode"
	CapEmbeddings Capability = "embeddings"
	CapCompletion Capability = "completion"
	CapAudio      Capability = "audio"
)

// Capabilities lists every capability.
func Capabilities() []Capability {
	return []Capability{CapChat, CapTools, CapStreaming, CapVision, CapJSONMode, CapEmbeddings, CapCompletion, CapAudio}
}

// PrivacyLevel says how much of a run its events keep.
type PrivacyLevel string

const (
	// PrivacyMetadata, the default, strips content from run events.
	PrivacyMetadata PrivacyLevel = "metadata"
	// PrivacyFull keeps prompts, answers, tool arguments and results.
	PrivacyFull PrivacyLevel = "full"
)

// Defaults and bounds of the configuration model.
const (
	DefaultTimeout    = 120 * time.Second
	MaxTimeout        = 30 * time.Minute
	DefaultMaxRetries = 3
	MaxRetries        = 10
	DefaultMaxRounds  = 5
	// RoundsCeiling bounds max_rounds: no configuration runs more rounds.
	RoundsCeiling = 20
	// MaxFallbacks bounds one configuration's own fallback chain.
	MaxFallbacks = 8
	// MaxChain bounds a resolved chain, primary included; entries beyond
	// it are skipped.
	MaxChain = 16
	// MaxTemperature is the largest temperature any adapter accepts;
	// Anthropic stops at 1.
	MaxTemperature = 2.0
)

// identifierPattern is the shape of every identifier of the model.
var identifierPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,63}$`)

// toolGroupPattern is the shape of a tool group (content, mcp_docs…).
var toolGroupPattern = regexp.MustCompile(`^[a-z0-9_]{1,64}$`)

// envNamePattern is the shape of an environment variable name.
var envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// SecretRef says where an API key or a header value comes from: an
// environment variable read when it is used (never stored), or a value
// sealed with the master key. It never holds the plaintext once stored,
// and every way of printing it (String, GoString, MarshalText) shows only
// "env:NAME", "sealed" or "none".
type SecretRef struct {
	env    string
	sealed string
	// plain is a literal from a document on its way to being sealed; it
	// lives only inside Apply.
	plain string
}

// EnvSecret refers to the environment variable name.
func EnvSecret(name string) SecretRef { return SecretRef{env: name} }

// Env is the variable name, or "" when the value is not from the environment.
func (s SecretRef) Env() string { return s.env }

// Sealed reports whether the value is kept sealed in the store.
func (s SecretRef) Sealed() bool { return s.sealed != "" }

// IsZero reports whether there is no value at all.
func (s SecretRef) IsZero() bool { return s.env == "" && s.sealed == "" && s.plain == "" }

func (s SecretRef) String() string {
	switch {
	case s.env != "":
		return "env:" + s.env
	case s.sealed != "" || s.plain != "":
		return "sealed"
	}
	return "none"
}

// GoString keeps %#v from printing the fields.
func (s SecretRef) GoString() string { return "agentconfig.SecretRef(" + s.String() + ")" }

// MarshalText writes String, so JSON and YAML output never hold a key.
func (s SecretRef) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// stored is the store's form: "", "env:NAME" or the sealed value.
func (s SecretRef) stored() string {
	if s.env != "" {
		return "env:" + s.env
	}
	return s.sealed
}

// secretFromStore reads the store's form.
func secretFromStore(v string) SecretRef {
	if name, ok := strings.CutPrefix(v, "env:"); ok {
		return SecretRef{env: name}
	}
	return SecretRef{sealed: v}
}

// Provider is one LLM endpoint.
type Provider struct {
	Identifier  string    `json:"identifier"`
	Description string    `json:"description,omitempty"`
	Adapter     Adapter   `json:"adapter"`
	Endpoint    string    `json:"endpoint,omitempty"` // "" means the adapter's default
	APIKey      SecretRef `json:"apiKey"`
	// TrustZone says how far the provider is trusted with data; it sets
	// which tools a configuration using it may be offered.
	TrustZone  tool.TrustZone       `json:"trustZone"`
	Timeout    time.Duration        `json:"timeout"`
	MaxRetries int                  `json:"maxRetries"`
	Headers    map[string]SecretRef `json:"headers,omitempty"`
	Active     bool                 `json:"active"`
	UpdatedAt  time.Time            `json:"updatedAt"`
	UpdatedBy  string               `json:"updatedBy"`
}

// Prices are dollars per million tokens.
type Prices struct {
	Input  USD `json:"input"`
	Output USD `json:"output"`
}

// Cost is what usage costs at these prices, rounded up to a picodollar.
func (p Prices) Cost(u llm.Usage) USD {
	in, out := CostOf(int64(u.InputTokens), p.Input), CostOf(int64(u.OutputTokens), p.Output)
	if in > math.MaxInt64-out {
		return math.MaxInt64
	}
	return in + out
}

// Model is one model of a provider.
type Model struct {
	Identifier      string       `json:"identifier"`
	Description     string       `json:"description,omitempty"`
	Provider        string       `json:"provider"`
	ModelID         string       `json:"modelId"`
	ContextLength   int          `json:"contextLength,omitempty"`   // 0: unknown
	MaxOutputTokens int          `json:"maxOutputTokens,omitempty"` // 0: unknown
	Capabilities    []Capability `json:"capabilities"`
	// Prices is nil for a model without prices, whose cost is unknown
	// (rather than zero: give zero prices for a free local model).
	Prices    *Prices   `json:"prices,omitempty"`
	Active    bool      `json:"active"`
	UpdatedAt time.Time `json:"updatedAt"`
	UpdatedBy string    `json:"updatedBy"`
}

// Can reports whether the model has capability c. A model that lists no
// capabilities is taken to chat, call tools and stream, as chat models do.
func (m Model) Can(c Capability) bool {
	if len(m.Capabilities) == 0 {
		return c == CapChat || c == CapTools || c == CapStreaming
	}
	return slices.Contains(m.Capabilities, c)
}

// Budget caps usage per day and per calendar month; 0 means unlimited.
type Budget struct {
	RequestsPerDay   int64 `json:"requestsPerDay,omitempty"`
	TokensPerDay     int64 `json:"tokensPerDay,omitempty"`
	CostPerDay       USD   `json:"costPerDay,omitempty"`
	RequestsPerMonth int64 `json:"requestsPerMonth,omitempty"`
	TokensPerMonth   int64 `json:"tokensPerMonth,omitempty"`
	CostPerMonth     USD   `json:"costPerMonth,omitempty"`
}

// Unlimited reports whether every limit is 0.
func (b Budget) Unlimited() bool { return b == Budget{} }

// Configuration is an agent configuration: which model answers, with
// which prompt and sampling, which tools it may be offered, which
// guardrails apply beyond the mandatory ones, its limits and where to
// fall back when its provider fails.
type Configuration struct {
	Identifier   string   `json:"identifier"`
	Description  string   `json:"description,omitempty"`
	Model        string   `json:"model"`
	SystemPrompt string   `json:"systemPrompt,omitempty"`
	Temperature  *float64 `json:"temperature,omitempty"` // nil: the provider's default
	MaxTokens    int      `json:"maxTokens,omitempty"`   // 0: the model's output cap
	// AllowedToolGroups narrows the offered tools; empty means every group.
	AllowedToolGroups []string `json:"allowedToolGroups"`
	// Guardrails are the optional guardrails enabled; the mandatory ones
	// always apply.
	Guardrails            []string     `json:"guardrails"`
	RequireSecondApprover bool         `json:"requireSecondApprover"`
	MaxRounds             int          `json:"maxRounds"`
	Privacy               PrivacyLevel `json:"privacyLevel"`
	Budget                Budget       `json:"budgets"`
	// FallbackChain names configurations tried in order when this one's
	// provider fails with a retryable failure.
	FallbackChain []string  `json:"fallbackChain"`
	Active        bool      `json:"active"`
	UpdatedAt     time.Time `json:"updatedAt"`
	UpdatedBy     string    `json:"updatedBy"`
}

// Task is a configuration with a prompt template.
type Task struct {
	Identifier    string `json:"identifier"`
	Description   string `json:"description,omitempty"`
	Configuration string `json:"configuration"`
	// PromptTemplate is the task's prompt; "{{input}}" marks where the
	// caller's input goes.
	PromptTemplate string    `json:"promptTemplate"`
	UpdatedAt      time.Time `json:"updatedAt"`
	UpdatedBy      string    `json:"updatedBy"`
}

// Render puts input where the template says {{input}}, or after the
// template when it does not say.
func (t Task) Render(input string) string {
	if strings.Contains(t.PromptTemplate, "{{input}}") {
		return strings.ReplaceAll(t.PromptTemplate, "{{input}}", input)
	}
	if input == "" {
		return t.PromptTemplate
	}
	if t.PromptTemplate == "" {
		return input
	}
	return t.PromptTemplate + "\n\n" + input
}

// UserBudget caps one backend user's usage across every configuration.
type UserBudget struct {
	Username  string    `json:"user"`
	Budget    Budget    `json:"budgets"`
	Active    bool      `json:"active"`
	UpdatedAt time.Time `json:"updatedAt"`
	UpdatedBy string    `json:"updatedBy"`
}

// Snapshot is every record of the configuration model, each list ordered
// by identifier.
type Snapshot struct {
	Providers      []Provider      `json:"providers"`
	Models         []Model         `json:"models"`
	Configurations []Configuration `json:"configurations"`
	Tasks          []Task          `json:"tasks"`
	Budgets        []UserBudget    `json:"budgets"`
	// generation is the store's generation the records were read at.
	generation int64
}

func find[T any](list []T, id func(T) string, want string) (T, bool) {
	for _, v := range list {
		if id(v) == want {
			return v, true
		}
	}
	var zero T
	return zero, false
}

// Provider returns the provider with this identifier.
func (s *Snapshot) Provider(id string) (Provider, bool) {
	return find(s.Providers, func(p Provider) string { return p.Identifier }, id)
}

// Model returns the model with this identifier.
func (s *Snapshot) Model(id string) (Model, bool) {
	return find(s.Models, func(m Model) string { return m.Identifier }, id)
}

// Configuration returns the configuration with this identifier.
func (s *Snapshot) Configuration(id string) (Configuration, bool) {
	return find(s.Configurations, func(c Configuration) string { return c.Identifier }, id)
}

// Task returns the task with this identifier.
func (s *Snapshot) Task(id string) (Task, bool) {
	return find(s.Tasks, func(t Task) string { return t.Identifier }, id)
}

// Budget returns the budget of this backend user.
func (s *Snapshot) Budget(username string) (UserBudget, bool) {
	return find(s.Budgets, func(b UserBudget) string { return b.Username }, username)
}

// UserLimits returns the limits of the user's budget when it is active,
// and no limits (the zero Budget) when the user has none or it is
// switched off.
func (s *Snapshot) UserLimits(username string) Budget {
	if b, ok := s.Budget(username); ok && b.Active {
		return b.Budget
	}
	return Budget{}
}
