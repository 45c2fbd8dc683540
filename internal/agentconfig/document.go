package agentconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Document is the declarative form of the configuration model, as
// `t3agent apply -f` reads it from YAML and the API reads it from JSON
// (same keys). Every list item is identified by its identifier (budgets by
// user); see docs/configuration.md for a complete example.
type Document struct {
	Providers      []ProviderSpec      `yaml:"providers" json:"providers,omitempty"`
	Models         []ModelSpec         `yaml:"models" json:"models,omitempty"`
	Configurations []ConfigurationSpec `yaml:"configurations" json:"configurations,omitempty"`
	Tasks          []TaskSpec          `yaml:"tasks" json:"tasks,omitempty"`
	Budgets        []UserBudgetSpec    `yaml:"budgets" json:"budgets,omitempty"`

	// lines holds the YAML line of each item, per section, for errors.
	lines map[string][]int
	// problems are the unknown keys and mistyped values ParseDocument
	// found; Apply refuses the document with them and its own.
	problems []FieldError
}

// ProviderSpec declares a provider.
type ProviderSpec struct {
	Identifier  string `yaml:"identifier" json:"identifier"`
	Description string `yaml:"description" json:"description,omitempty"`
	Adapter     string `yaml:"adapter" json:"adapter"`
	Endpoint    string `yaml:"endpoint" json:"endpoint,omitempty"`
	// APIKey is env:NAME (read from the environment when used, never
	// stored) or the key itself (sealed with the master key).
	APIKey    string `yaml:"api_key" json:"api_key,omitempty"`
	TrustZone string `yaml:"trust_zone" json:"trust_zone"`
	// Timeout is a duration ("120s", "2m") or whole seconds; default 120s.
	Timeout string `yaml:"timeout" json:"timeout,omitempty"`
	// MaxRetries defaults to 3; 0 turns retries off.
	MaxRetries *int `yaml:"max_retries" json:"max_retries,omitempty"`
	// Headers are extra request headers; values as APIKey.
	Headers map[string]string `yaml:"headers" json:"headers,omitempty"`
	Active  *bool             `yaml:"active" json:"active,omitempty"` // default true
}

// ModelSpec declares a model of a provider.
type ModelSpec struct {
	Identifier      string   `yaml:"identifier" json:"identifier"`
	Description     string   `yaml:"description" json:"description,omitempty"`
	Provider        string   `yaml:"provider" json:"provider"`
	ModelID         string   `yaml:"model_id" json:"model_id"`
	ContextLength   int      `yaml:"context_length" json:"context_length,omitempty"`
	MaxOutputTokens int      `yaml:"max_output_tokens" json:"max_output_tokens,omitempty"`
	Capabilities    []string `yaml:"capabilities" json:"capabilities,omitempty"`
	// InputPrice and OutputPrice are dollars per million tokens; give both
	// or neither (a model without prices has an unknown cost).
	InputPrice  *USD  `yaml:"input_price" json:"input_price,omitempty"`
	OutputPrice *USD  `yaml:"output_price" json:"output_price,omitempty"`
	Active      *bool `yaml:"active" json:"active,omitempty"`
}

// BudgetSpec declares limits; 0 or absent means unlimited. Costs are dollars.
type BudgetSpec struct {
	RequestsPerDay   int64 `yaml:"requests_per_day" json:"requests_per_day,omitempty"`
	TokensPerDay     int64 `yaml:"tokens_per_day" json:"tokens_per_day,omitempty"`
	CostPerDay       USD   `yaml:"cost_per_day" json:"cost_per_day,omitempty"`
	RequestsPerMonth int64 `yaml:"requests_per_month" json:"requests_per_month,omitempty"`
	TokensPerMonth   int64 `yaml:"tokens_per_month" json:"tokens_per_month,omitempty"`
	CostPerMonth     USD   `yaml:"cost_per_month" json:"cost_per_month,omitempty"`
}

// ConfigurationSpec declares an agent configuration.
type ConfigurationSpec struct {
	Identifier            string     `yaml:"identifier" json:"identifier"`
	Description           string     `yaml:"description" json:"description,omitempty"`
	Model                 string     `yaml:"model" json:"model"`
	SystemPrompt          string     `yaml:"system_prompt" json:"system_prompt,omitempty"`
	Temperature           *float64   `yaml:"temperature" json:"temperature,omitempty"`
	MaxTokens             int        `yaml:"max_tokens" json:"max_tokens,omitempty"`
	AllowedToolGroups     []string   `yaml:"allowed_tool_groups" json:"allowed_tool_groups,omitempty"`
	Guardrails            []string   `yaml:"guardrails" json:"guardrails,omitempty"`
	RequireSecondApprover bool       `yaml:"require_second_approver" json:"require_second_approver,omitempty"`
	MaxRounds             int        `yaml:"max_rounds" json:"max_rounds,omitempty"`
	PrivacyLevel          string     `yaml:"privacy_level" json:"privacy_level,omitempty"`
	Budgets               BudgetSpec `yaml:"budgets" json:"budgets,omitzero"`
	FallbackChain         []string   `yaml:"fallback_chain" json:"fallback_chain,omitempty"`
	Active                *bool      `yaml:"active" json:"active,omitempty"`
}

// TaskSpec declares a task.
type TaskSpec struct {
	Identifier     string `yaml:"identifier" json:"identifier"`
	Description    string `yaml:"description" json:"description,omitempty"`
	Configuration  string `yaml:"configuration" json:"configuration"`
	PromptTemplate string `yaml:"prompt_template" json:"prompt_template,omitempty"`
}

// UserBudgetSpec declares the budget of one TYPO3 backend user.
type UserBudgetSpec struct {
	User       string `yaml:"user" json:"user"`
	BudgetSpec `yaml:",inline"`
	Active     *bool `yaml:"active" json:"active,omitempty"`
}

// ParseDocument reads one YAML document. What cannot be read at all (bad
// YAML syntax, several documents, an empty document or one that declares
// nothing, which --prune would read as "delete everything") is refused at
// once. Unknown keys, at every level, and values of the wrong type are
// recorded with their place, and Apply refuses the document listing them
// together with every other problem it finds: a misspelt key must not
// silently fall back to a default, and an operator fixes a file in one go.
func ParseDocument(data []byte) (*Document, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: the document is empty", ErrInvalid)
		}
		return nil, fmt.Errorf("%w: %s", ErrInvalid, oneLine(err))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: the file holds more than one YAML document; put everything in one", ErrInvalid)
	}
	var d Document
	var typeErrors []string
	if err := root.Decode(&d); err != nil {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return nil, fmt.Errorf("%w: %s", ErrInvalid, oneLine(err))
		}
		typeErrors = te.Errors
	}
	d.lines = map[string][]int{}
	d.problems = index(&root, &d, typeErrors)
	if len(d.Providers)+len(d.Models)+len(d.Configurations)+len(d.Tasks)+len(d.Budgets) == 0 {
		if len(d.problems) > 0 {
			return nil, &ValidationError{Problems: d.problems}
		}
		return nil, fmt.Errorf("%w: the document declares no providers, models, configurations, tasks or budgets", ErrInvalid)
	}
	return &d, nil
}

// line is the YAML line of item i of a section, 0 when unknown (JSON).
func (d *Document) line(kind string, i int) int {
	if l := d.lines[kind]; i < len(l) {
		return l[i]
	}
	return 0
}

// oneLine folds yaml's multi-line errors into one sentence.
func oneLine(err error) string {
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	s = strings.ReplaceAll(s, "unmarshal errors:\n  ", "")
	return strings.ReplaceAll(s, "\n  ", "; ")
}
