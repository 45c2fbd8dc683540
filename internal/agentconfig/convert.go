package agentconfig

import (
	"maps"
	"slices"

	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
)

// Conversions between the store's records and the model. The store keeps
// plain values (picodollars as int64, secrets in their stored form); the
// model gives them types.

func nonNil[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}

func budgetFromStore(b store.BudgetLimits) Budget {
	return Budget{
		RequestsPerDay: b.RequestsPerDay, TokensPerDay: b.TokensPerDay, CostPerDay: USD(b.CostPerDay),
		RequestsPerMonth: b.RequestsPerMonth, TokensPerMonth: b.TokensPerMonth, CostPerMonth: USD(b.CostPerMonth),
	}
}

func (b Budget) toStore() store.BudgetLimits {
	return store.BudgetLimits{
		RequestsPerDay: b.RequestsPerDay, TokensPerDay: b.TokensPerDay, CostPerDay: int64(b.CostPerDay),
		RequestsPerMonth: b.RequestsPerMonth, TokensPerMonth: b.TokensPerMonth, CostPerMonth: int64(b.CostPerMonth),
	}
}

func providerFromStore(r store.LLMProvider) Provider {
	p := Provider{
		Identifier: r.Identifier, Description: r.Description, Adapter: Adapter(r.Adapter), Endpoint: r.Endpoint,
		APIKey: secretFromStore(r.APIKey), TrustZone: tool.TrustZone(r.TrustZone), Timeout: r.Timeout,
		MaxRetries: r.MaxRetries, Active: r.Active, UpdatedAt: r.UpdatedAt, UpdatedBy: r.UpdatedBy,
	}
	if len(r.Headers) > 0 {
		p.Headers = make(map[string]SecretRef, len(r.Headers))
		for k, v := range r.Headers {
			p.Headers[k] = secretFromStore(v)
		}
	}
	return p
}

// toStore is the stored form; secrets must be sealed or env by now.
func (p Provider) toStore() store.LLMProvider {
	r := store.LLMProvider{
		Identifier: p.Identifier, Description: p.Description, Adapter: string(p.Adapter), Endpoint: p.Endpoint,
		APIKey: p.APIKey.stored(), TrustZone: string(p.TrustZone), Timeout: p.Timeout, MaxRetries: p.MaxRetries,
		Headers: map[string]string{}, Active: p.Active,
	}
	for _, k := range slices.Sorted(maps.Keys(p.Headers)) {
		r.Headers[k] = p.Headers[k].stored()
	}
	return r
}

func modelFromStore(r store.LLMModel) Model {
	m := Model{
		Identifier: r.Identifier, Description: r.Description, Provider: r.Provider, ModelID: r.ModelID,
		ContextLength: int(r.ContextLength), MaxOutputTokens: int(r.MaxOutputTokens),
		Capabilities: []Capability{}, Active: r.Active, UpdatedAt: r.UpdatedAt, UpdatedBy: r.UpdatedBy,
	}
	for _, c := range r.Capabilities {
		m.Capabilities = append(m.Capabilities, Capability(c))
	}
	if r.InputPrice != nil && r.OutputPrice != nil {
		m.Prices = &Prices{Input: USD(*r.InputPrice), Output: USD(*r.OutputPrice)}
	}
	return m
}

func (m Model) toStore() store.LLMModel {
	r := store.LLMModel{
		Identifier: m.Identifier, Description: m.Description, Provider: m.Provider, ModelID: m.ModelID,
		ContextLength: int64(m.ContextLength), MaxOutputTokens: int64(m.MaxOutputTokens),
		Capabilities: []string{}, Active: m.Active,
	}
	for _, c := range m.Capabilities {
		r.Capabilities = append(r.Capabilities, string(c))
	}
	if m.Prices != nil {
		in, out := int64(m.Prices.Input), int64(m.Prices.Output)
		r.InputPrice, r.OutputPrice = &in, &out
	}
	return r
}

func configurationFromStore(r store.LLMConfiguration) Configuration {
	return Configuration{
		Identifier: r.Identifier, Description: r.Description, Model: r.Model, SystemPrompt: r.SystemPrompt,
		Temperature: r.Temperature, MaxTokens: int(r.MaxTokens), AllowedToolGroups: nonNil(r.AllowedToolGroups),
		Guardrails: nonNil(r.Guardrails), RequireSecondApprover: r.RequireSecondApprover, MaxRounds: int(r.MaxRounds),
		Privacy: PrivacyLevel(r.PrivacyLevel), Budget: budgetFromStore(r.Budget),
		FallbackChain: nonNil(r.FallbackChain), Active: r.Active, UpdatedAt: r.UpdatedAt, UpdatedBy: r.UpdatedBy,
	}
}

func (c Configuration) toStore() store.LLMConfiguration {
	return store.LLMConfiguration{
		Identifier: c.Identifier, Description: c.Description, Model: c.Model, SystemPrompt: c.SystemPrompt,
		Temperature: c.Temperature, MaxTokens: int64(c.MaxTokens), AllowedToolGroups: nonNil(c.AllowedToolGroups),
		Guardrails: nonNil(c.Guardrails), RequireSecondApprover: c.RequireSecondApprover, MaxRounds: int64(c.MaxRounds),
		PrivacyLevel: string(c.Privacy), Budget: c.Budget.toStore(), FallbackChain: nonNil(c.FallbackChain),
		Active: c.Active,
	}
}

func taskFromStore(r store.LLMTask) Task {
	return Task{
		Identifier: r.Identifier, Description: r.Description, Configuration: r.Configuration,
		PromptTemplate: r.PromptTemplate, UpdatedAt: r.UpdatedAt, UpdatedBy: r.UpdatedBy,
	}
}

func (t Task) toStore() store.LLMTask {
	return store.LLMTask{Identifier: t.Identifier, Description: t.Description, Configuration: t.Configuration, PromptTemplate: t.PromptTemplate}
}

func userBudgetFromStore(r store.UserBudget) UserBudget {
	return UserBudget{Username: r.Username, Budget: budgetFromStore(r.Budget), Active: r.Active, UpdatedAt: r.UpdatedAt, UpdatedBy: r.UpdatedBy}
}

func (b UserBudget) toStore() store.UserBudget {
	return store.UserBudget{Username: b.Username, Budget: b.Budget.toStore(), Active: b.Active}
}

func snapshotFromStore(s store.AgentConfigSnapshot) *Snapshot {
	out := &Snapshot{
		generation:     s.Generation,
		Providers:      make([]Provider, len(s.Providers)),
		Models:         make([]Model, len(s.Models)),
		Configurations: make([]Configuration, len(s.Configurations)),
		Tasks:          make([]Task, len(s.Tasks)),
		Budgets:        make([]UserBudget, len(s.UserBudgets)),
	}
	for i, r := range s.Providers {
		out.Providers[i] = providerFromStore(r)
	}
	for i, r := range s.Models {
		out.Models[i] = modelFromStore(r)
	}
	for i, r := range s.Configurations {
		out.Configurations[i] = configurationFromStore(r)
	}
	for i, r := range s.Tasks {
		out.Tasks[i] = taskFromStore(r)
	}
	for i, r := range s.UserBudgets {
		out.Budgets[i] = userBudgetFromStore(r)
	}
	return out
}
