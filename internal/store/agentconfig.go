package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// AgentConfigs persists the configuration model of the agent runtime:
// LLM providers, their models, agent configurations, tasks, and per-user
// budgets. Package agentconfig validates and interprets the records; the
// store keeps them as given and enforces only the references that must
// hold (a model's provider, a configuration's model, a task's
// configuration). A configuration's fallback chain is not enforced: it may
// name configurations removed later, which the resolver skips.
type AgentConfigs interface {
	// AgentConfigSnapshot reads every record of the model in one
	// consistent read, each list ordered by identifier (bytewise); the
	// lists are never nil.
	AgentConfigSnapshot(ctx context.Context) (AgentConfigSnapshot, error)
	// AgentConfigGeneration returns the current generation of the model:
	// a number that grows with every write to its tables, by t3agent or
	// by anyone else's SQL, and is committed with the write. A snapshot
	// whose Generation equals it is still current. One small query.
	AgentConfigGeneration(ctx context.Context) (int64, error)
	// ApplyAgentConfig saves and deletes records in one transaction: all
	// changes are stored, or none. Saves run first, in dependency order
	// (providers, models, configurations, tasks, user budgets), then
	// deletes in reverse order, so a batch may move a model to a new
	// provider and delete the old one. A delete of a record still
	// referenced, or of one that does not exist, fails the whole batch.
	ApplyAgentConfig(ctx context.Context, params ApplyAgentConfigParams) error
}

// MaxPromptLen bounds a system prompt or a prompt template, in bytes.
const MaxPromptLen = 256 << 10

// LLMProvider is one configured LLM endpoint.
type LLMProvider struct {
	Identifier  string
	Description string
	Adapter     string // openai, openai_compatible, anthropic, gemini
	Endpoint    string // empty: the adapter's default
	// APIKey is "", "env:NAME" or a value sealed by package secret; never
	// the plaintext. The store does not interpret it.
	APIKey     string
	TrustZone  string
	Timeout    time.Duration // stored in milliseconds
	MaxRetries int
	// Headers are extra request headers, each value in APIKey's form.
	Headers   map[string]string
	Active    bool
	CreatedAt time.Time
	UpdatedAt time.Time
	UpdatedBy string
}

// LLMModel is one model a provider serves.
type LLMModel struct {
	Identifier      string
	Description     string
	Provider        string // an LLMProvider identifier
	ModelID         string // the provider's name for the model
	ContextLength   int64
	MaxOutputTokens int64
	Capabilities    []string
	// InputPrice and OutputPrice are picodollars (1e-12 USD) per million
	// tokens; nil means the model has no price and its cost is unknown.
	InputPrice  *int64
	OutputPrice *int64
	Active      bool
	CreatedAt   time.Time
	UpdatedAt   time.Time
	UpdatedBy   string
}

// BudgetLimits caps usage per day and per calendar month; 0 means
// unlimited. Costs are picodollars.
type BudgetLimits struct {
	RequestsPerDay   int64
	TokensPerDay     int64
	CostPerDay       int64
	RequestsPerMonth int64
	TokensPerMonth   int64
	CostPerMonth     int64
}

// LLMConfiguration is an agent configuration: a model with its prompt,
// sampling, tool grant, guardrails, limits and fallback chain.
type LLMConfiguration struct {
	Identifier            string
	Description           string
	Model                 string // an LLMModel identifier
	SystemPrompt          string
	Temperature           *float64 // nil: the provider's default
	MaxTokens             int64
	AllowedToolGroups     []string
	Guardrails            []string
	RequireSecondApprover bool
	MaxRounds             int64
	PrivacyLevel          string
	Budget                BudgetLimits
	FallbackChain         []string // LLMConfiguration identifiers, in order
	Active                bool
	CreatedAt             time.Time
	UpdatedAt             time.Time
	UpdatedBy             string
}

// LLMTask is a configuration with a prompt template.
type LLMTask struct {
	Identifier     string
	Description    string
	Configuration  string // an LLMConfiguration identifier
	PromptTemplate string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	UpdatedBy      string
}

// UserBudget caps one TYPO3 backend user's usage.
type UserBudget struct {
	Username  string
	Budget    BudgetLimits
	Active    bool
	CreatedAt time.Time
	UpdatedAt time.Time
	UpdatedBy string
}

// AgentConfigSnapshot is every record of the configuration model.
type AgentConfigSnapshot struct {
	// Generation is the model's generation the records were read at.
	Generation     int64
	Providers      []LLMProvider
	Models         []LLMModel
	Configurations []LLMConfiguration
	Tasks          []LLMTask
	UserBudgets    []UserBudget
}

// ApplyAgentConfigParams is one batch of changes. The CreatedAt, UpdatedAt
// and UpdatedBy fields of saved records are ignored: the store stamps them
// (CreatedAt only for new records) and UpdatedBy comes from the batch.
type ApplyAgentConfigParams struct {
	SaveProviders      []LLMProvider
	SaveModels         []LLMModel
	SaveConfigurations []LLMConfiguration
	SaveTasks          []LLMTask
	SaveUserBudgets    []UserBudget

	DeleteProviders      []string
	DeleteModels         []string
	DeleteConfigurations []string
	DeleteTasks          []string
	DeleteUserBudgets    []string

	UpdatedBy string // required: who applied the batch
}

// ---- validation: only what keeps both databases alike ----

func checkNames(what string, list []string) error {
	for _, v := range list {
		if err := checkName(what, v); err != nil {
			return err
		}
	}
	return nil
}

func checkLimits(what string, b BudgetLimits) error {
	for _, v := range []int64{b.RequestsPerDay, b.TokensPerDay, b.CostPerDay, b.RequestsPerMonth, b.TokensPerMonth, b.CostPerMonth} {
		if v < 0 {
			return invalid("%s has a negative budget limit", what)
		}
	}
	return nil
}

func checkProvider(p LLMProvider) error {
	if err := checkName("LLM provider identifier", p.Identifier); err != nil {
		return err
	}
	what := fmt.Sprintf("LLM provider %q", p.Identifier)
	for _, f := range []struct{ field, v string }{
		{"description", p.Description}, {"adapter", p.Adapter}, {"endpoint", p.Endpoint},
		{"API key", p.APIKey}, {"trust zone", p.TrustZone},
	} {
		if err := checkText(what+" "+f.field, f.v, MaxSettingValueLen); err != nil {
			return err
		}
	}
	for k, v := range p.Headers {
		if err := checkName(what+" header name", k); err != nil {
			return err
		}
		if err := checkText(what+" header value", v, MaxSettingValueLen); err != nil {
			return err
		}
	}
	if p.Timeout < 0 || p.MaxRetries < 0 {
		return invalid("%s has a negative timeout or retry count", what)
	}
	return nil
}

func checkModel(m LLMModel) error {
	if err := checkName("LLM model identifier", m.Identifier); err != nil {
		return err
	}
	what := fmt.Sprintf("LLM model %q", m.Identifier)
	if err := checkName(what+" provider", m.Provider); err != nil {
		return err
	}
	if err := checkText(what+" model id", m.ModelID, MaxNameLen); err != nil {
		return err
	}
	if err := checkText(what+" description", m.Description, MaxSettingValueLen); err != nil {
		return err
	}
	if err := checkNames(what+" capability", m.Capabilities); err != nil {
		return err
	}
	if m.ContextLength < 0 || m.MaxOutputTokens < 0 ||
		(m.InputPrice != nil && *m.InputPrice < 0) || (m.OutputPrice != nil && *m.OutputPrice < 0) {
		return invalid("%s has a negative length or price", what)
	}
	return nil
}

func checkConfiguration(c LLMConfiguration) error {
	if err := checkName("LLM configuration identifier", c.Identifier); err != nil {
		return err
	}
	what := fmt.Sprintf("LLM configuration %q", c.Identifier)
	if err := checkName(what+" model", c.Model); err != nil {
		return err
	}
	if err := checkText(what+" description", c.Description, MaxSettingValueLen); err != nil {
		return err
	}
	if err := checkText(what+" system prompt", c.SystemPrompt, MaxPromptLen); err != nil {
		return err
	}
	if err := checkText(what+" privacy level", c.PrivacyLevel, MaxNameLen); err != nil {
		return err
	}
	for _, l := range []struct {
		field string
		v     []string
	}{{"tool group", c.AllowedToolGroups}, {"guardrail", c.Guardrails}, {"fallback", c.FallbackChain}} {
		if err := checkNames(what+" "+l.field, l.v); err != nil {
			return err
		}
	}
	if c.MaxTokens < 0 || c.MaxRounds < 0 {
		return invalid("%s has a negative max tokens or max rounds", what)
	}
	return checkLimits(what, c.Budget)
}

func checkTask(t LLMTask) error {
	if err := checkName("LLM task identifier", t.Identifier); err != nil {
		return err
	}
	what := fmt.Sprintf("LLM task %q", t.Identifier)
	if err := checkName(what+" configuration", t.Configuration); err != nil {
		return err
	}
	if err := checkText(what+" description", t.Description, MaxSettingValueLen); err != nil {
		return err
	}
	return checkText(what+" prompt template", t.PromptTemplate, MaxPromptLen)
}

func checkUserBudget(b UserBudget) error {
	if err := checkName("budget username", b.Username); err != nil {
		return err
	}
	return checkLimits(fmt.Sprintf("the budget of user %q", b.Username), b.Budget)
}

func checkApply(p ApplyAgentConfigParams) error {
	if err := checkName("actor (UpdatedBy)", p.UpdatedBy); err != nil {
		return err
	}
	seen := map[string]bool{}
	once := func(kind, id string) error {
		if seen[kind+"\x00"+id] {
			return invalid("%s %q is named twice in one batch", kind, id)
		}
		seen[kind+"\x00"+id] = true
		return nil
	}
	for _, r := range p.SaveProviders {
		if err := errors.Join(checkProvider(r), once("LLM provider", r.Identifier)); err != nil {
			return err
		}
	}
	for _, r := range p.SaveModels {
		if err := errors.Join(checkModel(r), once("LLM model", r.Identifier)); err != nil {
			return err
		}
	}
	for _, r := range p.SaveConfigurations {
		if err := errors.Join(checkConfiguration(r), once("LLM configuration", r.Identifier)); err != nil {
			return err
		}
	}
	for _, r := range p.SaveTasks {
		if err := errors.Join(checkTask(r), once("LLM task", r.Identifier)); err != nil {
			return err
		}
	}
	for _, r := range p.SaveUserBudgets {
		if err := errors.Join(checkUserBudget(r), once("user budget", r.Username)); err != nil {
			return err
		}
	}
	for _, d := range []struct {
		kind string
		ids  []string
	}{
		{"LLM provider", p.DeleteProviders}, {"LLM model", p.DeleteModels},
		{"LLM configuration", p.DeleteConfigurations}, {"LLM task", p.DeleteTasks},
		{"user budget", p.DeleteUserBudgets},
	} {
		for _, id := range d.ids {
			if err := errors.Join(checkName(d.kind+" identifier", id), once(d.kind, id)); err != nil {
				return err
			}
		}
	}
	return nil
}

// ---- JSON columns ----

// jsonList stores a list as a JSON array; nil and empty both read back
// as an empty, non-nil list.
func jsonList(v []string) string {
	if len(v) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(v) // strings always encode
	return string(b)
}

func jsonMap(v map[string]string) string {
	if len(v) == 0 {
		return "{}"
	}
	b, _ := json.Marshal(v) // keys are sorted
	return string(b)
}

type jsonListScanner struct{ dst *[]string }

func (j jsonListScanner) Scan(src any) error {
	out := []string{}
	if err := scanJSON(src, &out); err != nil {
		return err
	}
	*j.dst = out
	return nil
}

type jsonMapScanner struct{ dst *map[string]string }

func (j jsonMapScanner) Scan(src any) error {
	out := map[string]string{}
	if err := scanJSON(src, &out); err != nil {
		return err
	}
	*j.dst = out
	return nil
}

func scanJSON(src any, v any) error {
	var b []byte
	switch s := src.(type) {
	case string:
		b = []byte(s)
	case []byte:
		b = s
	default:
		return fmt.Errorf("store: cannot read JSON from %T", src)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("store: a stored JSON value is corrupt: %w", err)
	}
	return nil
}

// nullInt64 is an optional integer column.
type nullInt64 struct{ dst **int64 }

func (n nullInt64) Scan(src any) error {
	var v sql.NullInt64
	if err := v.Scan(src); err != nil {
		return err
	}
	*n.dst = nil
	if v.Valid {
		*n.dst = &v.Int64
	}
	return nil
}

type nullFloat64 struct{ dst **float64 }

func (n nullFloat64) Scan(src any) error {
	var v sql.NullFloat64
	if err := v.Scan(src); err != nil {
		return err
	}
	*n.dst = nil
	if v.Valid {
		*n.dst = &v.Float64
	}
	return nil
}

// ---- statements ----

const (
	providerColumns = `identifier, description, adapter, endpoint, api_key, trust_zone, timeout_ms, max_retries,
		headers, active, created_at, updated_at, updated_by`
	modelColumns = `identifier, description, provider, model_id, context_length, max_output_tokens, capabilities,
		input_price, output_price, active, created_at, updated_at, updated_by`
	configurationColumns = `identifier, description, model, system_prompt, temperature, max_tokens,
		allowed_tool_groups, guardrails, require_second_approver, max_rounds, privacy_level, fallback_chain,
		requests_per_day, tokens_per_day, cost_per_day, requests_per_month, tokens_per_month, cost_per_month,
		active, created_at, updated_at, updated_by`
	taskColumns       = `identifier, description, configuration, prompt_template, created_at, updated_at, updated_by`
	userBudgetColumns = `username, requests_per_day, tokens_per_day, cost_per_day, requests_per_month, tokens_per_month,
		cost_per_month, active, created_at, updated_at, updated_by`
)

// upsert builds "INSERT … ON CONFLICT (key) DO UPDATE" for a table whose
// column list ends in created_at, updated_at, updated_by; created_at is
// kept on update. The arguments are constants of this file.
func upsert(table, key string, columns []string) string {
	q := `INSERT INTO ` + table + ` (`
	vals, sets := "", ""
	for i, c := range columns {
		if i > 0 {
			q += ", "
			vals += ", "
		}
		q += c
		vals += fmt.Sprintf("$%d", i+1)
		if c != key && c != "created_at" {
			if sets != "" {
				sets += ", "
			}
			sets += c + " = excluded." + c
		}
	}
	return q + `) VALUES (` + vals + `) ON CONFLICT (` + key + `) DO UPDATE SET ` + sets
}

var (
	upsertProvider = upsert("llm_providers", "identifier", []string{"identifier", "description", "adapter", "endpoint",
		"api_key", "trust_zone", "timeout_ms", "max_retries", "headers", "active", "created_at", "updated_at", "updated_by"})
	upsertModel = upsert("llm_models", "identifier", []string{"identifier", "description", "provider", "model_id",
		"context_length", "max_output_tokens", "capabilities", "input_price", "output_price", "active",
		"created_at", "updated_at", "updated_by"})
	upsertConfiguration = upsert("llm_configurations", "identifier", []string{"identifier", "description", "model",
		"system_prompt", "temperature", "max_tokens", "allowed_tool_groups", "guardrails", "require_second_approver",
		"max_rounds", "privacy_level", "fallback_chain", "requests_per_day", "tokens_per_day", "cost_per_day",
		"requests_per_month", "tokens_per_month", "cost_per_month", "active", "created_at", "updated_at", "updated_by"})
	upsertTask = upsert("llm_tasks", "identifier", []string{"identifier", "description", "configuration",
		"prompt_template", "created_at", "updated_at", "updated_by"})
	upsertUserBudget = upsert("llm_user_budgets", "username", []string{"username", "requests_per_day", "tokens_per_day",
		"cost_per_day", "requests_per_month", "tokens_per_month", "cost_per_month", "active", "created_at",
		"updated_at", "updated_by"})
)

func scanProvider(r rowScanner) (LLMProvider, error) {
	var p LLMProvider
	var timeoutMS int64
	err := r.Scan(&p.Identifier, &p.Description, &p.Adapter, &p.Endpoint, &p.APIKey, &p.TrustZone, &timeoutMS,
		&p.MaxRetries, jsonMapScanner{&p.Headers}, &p.Active, timeScanner{&p.CreatedAt}, timeScanner{&p.UpdatedAt}, &p.UpdatedBy)
	p.Timeout = time.Duration(timeoutMS) * time.Millisecond
	return p, err
}

func scanModel(r rowScanner) (LLMModel, error) {
	var m LLMModel
	err := r.Scan(&m.Identifier, &m.Description, &m.Provider, &m.ModelID, &m.ContextLength, &m.MaxOutputTokens,
		jsonListScanner{&m.Capabilities}, nullInt64{&m.InputPrice}, nullInt64{&m.OutputPrice}, &m.Active,
		timeScanner{&m.CreatedAt}, timeScanner{&m.UpdatedAt}, &m.UpdatedBy)
	return m, err
}

func scanConfiguration(r rowScanner) (LLMConfiguration, error) {
	var c LLMConfiguration
	b := &c.Budget
	err := r.Scan(&c.Identifier, &c.Description, &c.Model, &c.SystemPrompt, nullFloat64{&c.Temperature}, &c.MaxTokens,
		jsonListScanner{&c.AllowedToolGroups}, jsonListScanner{&c.Guardrails}, &c.RequireSecondApprover, &c.MaxRounds,
		&c.PrivacyLevel, jsonListScanner{&c.FallbackChain},
		&b.RequestsPerDay, &b.TokensPerDay, &b.CostPerDay, &b.RequestsPerMonth, &b.TokensPerMonth, &b.CostPerMonth,
		&c.Active, timeScanner{&c.CreatedAt}, timeScanner{&c.UpdatedAt}, &c.UpdatedBy)
	return c, err
}

func scanTask(r rowScanner) (LLMTask, error) {
	var t LLMTask
	err := r.Scan(&t.Identifier, &t.Description, &t.Configuration, &t.PromptTemplate,
		timeScanner{&t.CreatedAt}, timeScanner{&t.UpdatedAt}, &t.UpdatedBy)
	return t, err
}

func scanUserBudget(r rowScanner) (UserBudget, error) {
	var u UserBudget
	b := &u.Budget
	err := r.Scan(&u.Username, &b.RequestsPerDay, &b.TokensPerDay, &b.CostPerDay, &b.RequestsPerMonth,
		&b.TokensPerMonth, &b.CostPerMonth, &u.Active, timeScanner{&u.CreatedAt}, timeScanner{&u.UpdatedAt}, &u.UpdatedBy)
	return u, err
}

const selectAgentConfigGeneration = `SELECT generation FROM agent_config_generation WHERE id = 1`

func (s *sqlStore) AgentConfigGeneration(ctx context.Context) (int64, error) {
	var g int64
	if err := s.r.QueryRowContext(ctx, selectAgentConfigGeneration).Scan(&g); err != nil {
		return 0, fmt.Errorf("store: cannot read the agent configuration's generation: %w", err)
	}
	return g, nil
}

func (s *sqlStore) AgentConfigSnapshot(ctx context.Context) (snap AgentConfigSnapshot, err error) {
	// One read transaction, so a concurrent apply is seen whole or not at
	// all, generation included. Repeatable read makes PostgreSQL hold one
	// snapshot; SQLite's read transactions always do.
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return snap, fmt.Errorf("store: cannot read the agent configuration: %w", err)
	}
	defer func() { err = errors.Join(err, ignoreDone(tx.Rollback())) }()
	if err := tx.QueryRowContext(ctx, selectAgentConfigGeneration).Scan(&snap.Generation); err != nil {
		return snap, fmt.Errorf("store: cannot read the agent configuration's generation: %w", err)
	}
	if snap.Providers, err = queryAll(ctx, tx, "list LLM providers", "LLM providers", scanProvider, `SELECT `+providerColumns+` FROM llm_providers ORDER BY identifier`); err != nil {
		return snap, err
	}
	if snap.Models, err = queryAll(ctx, tx, "list LLM models", "LLM models", scanModel, `SELECT `+modelColumns+` FROM llm_models ORDER BY identifier`); err != nil {
		return snap, err
	}
	if snap.Configurations, err = queryAll(ctx, tx, "list LLM configurations", "LLM configurations", scanConfiguration, `SELECT `+configurationColumns+` FROM llm_configurations ORDER BY identifier`); err != nil {
		return snap, err
	}
	if snap.Tasks, err = queryAll(ctx, tx, "list LLM tasks", "LLM tasks", scanTask, `SELECT `+taskColumns+` FROM llm_tasks ORDER BY identifier`); err != nil {
		return snap, err
	}
	snap.UserBudgets, err = queryAll(ctx, tx, "list user budgets", "user budgets", scanUserBudget, `SELECT `+userBudgetColumns+` FROM llm_user_budgets ORDER BY username`)
	return snap, err
}

func (s *sqlStore) ApplyAgentConfig(ctx context.Context, p ApplyAgentConfigParams) error {
	if err := checkApply(p); err != nil {
		return err
	}
	now, by := s.stamp(), p.UpdatedBy
	return s.writeTx(ctx, func(tx *sql.Tx) error {
		exec := func(what, query string, args ...any) error {
			if _, err := tx.ExecContext(ctx, query, args...); err != nil {
				return fmt.Errorf("store: cannot save %s: %w", what, err)
			}
			return nil
		}
		for _, r := range p.SaveProviders {
			if err := exec(fmt.Sprintf("LLM provider %q", r.Identifier), upsertProvider,
				r.Identifier, r.Description, r.Adapter, r.Endpoint, r.APIKey, r.TrustZone, r.Timeout.Milliseconds(),
				r.MaxRetries, jsonMap(r.Headers), r.Active, now, now, by); err != nil {
				return err
			}
		}
		for _, r := range p.SaveModels {
			if err := exec(fmt.Sprintf("LLM model %q", r.Identifier), upsertModel,
				r.Identifier, r.Description, r.Provider, r.ModelID, r.ContextLength, r.MaxOutputTokens,
				jsonList(r.Capabilities), r.InputPrice, r.OutputPrice, r.Active, now, now, by); err != nil {
				return err
			}
		}
		for _, r := range p.SaveConfigurations {
			b := r.Budget
			if err := exec(fmt.Sprintf("LLM configuration %q", r.Identifier), upsertConfiguration,
				r.Identifier, r.Description, r.Model, r.SystemPrompt, r.Temperature, r.MaxTokens,
				jsonList(r.AllowedToolGroups), jsonList(r.Guardrails), r.RequireSecondApprover, r.MaxRounds,
				r.PrivacyLevel, jsonList(r.FallbackChain), b.RequestsPerDay, b.TokensPerDay, b.CostPerDay,
				b.RequestsPerMonth, b.TokensPerMonth, b.CostPerMonth, r.Active, now, now, by); err != nil {
				return err
			}
		}
		for _, r := range p.SaveTasks {
			if err := exec(fmt.Sprintf("LLM task %q", r.Identifier), upsertTask,
				r.Identifier, r.Description, r.Configuration, r.PromptTemplate, now, now, by); err != nil {
				return err
			}
		}
		for _, r := range p.SaveUserBudgets {
			b := r.Budget
			if err := exec(fmt.Sprintf("the budget of user %q", r.Username), upsertUserBudget,
				r.Username, b.RequestsPerDay, b.TokensPerDay, b.CostPerDay, b.RequestsPerMonth, b.TokensPerMonth,
				b.CostPerMonth, r.Active, now, now, by); err != nil {
				return err
			}
		}
		// Dependents first, so a delete never trips a reference that the
		// same batch also removes.
		for _, d := range []struct {
			noun, table, key string
			ids              []string
		}{
			{"user budget", "llm_user_budgets", "username", p.DeleteUserBudgets},
			{"LLM task", "llm_tasks", "identifier", p.DeleteTasks},
			{"LLM configuration", "llm_configurations", "identifier", p.DeleteConfigurations},
			{"LLM model", "llm_models", "identifier", p.DeleteModels},
			{"LLM provider", "llm_providers", "identifier", p.DeleteProviders},
		} {
			for _, id := range slices.Sorted(slices.Values(d.ids)) {
				res, err := tx.ExecContext(ctx, `DELETE FROM `+d.table+` WHERE `+d.key+` = $1`, id)
				if err != nil {
					return fmt.Errorf("store: cannot delete %s %q (is it still referenced?): %w", d.noun, id, err)
				}
				if err := mustAffect(res, "%s %q", d.noun, id); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
