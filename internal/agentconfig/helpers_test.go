package agentconfig_test

import (
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/secret"
	"github.com/t3agent/t3agent/internal/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// env is a real SQLite store with a real keyring and a private environment.
type env struct {
	st      store.Store
	svc     *agentconfig.Service
	keys    *secret.Keyring
	path    string
	environ map[string]string
}

type envParams struct {
	noKeyring bool
	keyring   *secret.Keyring
	path      string // reuse a database file
}

func newKeyring(t testing.TB) *secret.Keyring {
	t.Helper()
	k, err := secret.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	kr, err := secret.NewKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

func newEnv(t testing.TB, p envParams) *env {
	t.Helper()
	e := &env{path: p.path, environ: map[string]string{}, keys: p.keyring}
	if e.path == "" {
		e.path = filepath.Join(t.TempDir(), "t3agent.db")
	}
	st, err := store.Open(t.Context(), "sqlite:"+e.path, store.OpenParams{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	e.st = st
	if e.keys == nil && !p.noKeyring {
		e.keys = newKeyring(t)
	}
	e.svc = agentconfig.New(agentconfig.Params{
		Store: st, Keyring: e.keys,
		LookupEnv: func(name string) (string, bool) { v, ok := e.environ[name]; return v, ok },
	})
	return e
}

func (e *env) apply(t testing.TB, doc string, prune bool) (*agentconfig.ApplyReport, error) {
	t.Helper()
	d, err := agentconfig.ParseDocument([]byte(doc))
	if err != nil {
		return nil, err
	}
	return e.svc.Apply(t.Context(), agentconfig.ApplyParams{Document: d, Prune: prune, By: "tester"})
}

func (e *env) mustApply(t testing.TB, doc string, prune bool) *agentconfig.ApplyReport {
	t.Helper()
	rep, err := e.apply(t, doc, prune)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	return rep
}

func (e *env) snapshot(t testing.TB) store.AgentConfigSnapshot {
	t.Helper()
	s, err := e.st.AgentConfigSnapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// actions maps "kind identifier" to the action of a report.
func actions(rep *agentconfig.ApplyReport) map[string]agentconfig.Action {
	m := map[string]agentconfig.Action{}
	for _, c := range rep.Changes {
		m[c.Kind+" "+c.Identifier] = c.Action
	}
	return m
}

// fullDoc declares every kind of record with most fields set. Its
// literal key is literalKey.
const literalKey = "sk-ant-api03-Zq7vX2mN9pL4kR8sT1wY6uE3oI5aD0fG-plaintext"

const fullDoc = `
providers:
  - identifier: openai
    adapter: openai
    api_key: env:OPENAI_API_KEY
    trust_zone: externalGlobal
    timeout: 60s
    max_retries: 2
  - identifier: anthropic
    adapter: anthropic
    api_key: ` + literalKey + `
    trust_zone: externalEu
    headers:
      anthropic-beta: tools-2024-04-04
  - identifier: ollama
    adapter: openai_compatible
    endpoint: http://127.0.0.1:11434/v1
    trust_zone: local
    max_retries: 0
models:
  - identifier: gpt-4o-mini
    provider: openai
    model_id: gpt-4o-mini
    context_length: 128000
    max_output_tokens: 16384
    capabilities: [chat, tools, streaming]
    input_price: 0.15
    output_price: 0.60
  - identifier: claude
    provider: anthropic
    model_id: claude-sonnet-4-5
    context_length: 200000
    max_output_tokens: 64000
    input_price: "3.00"
    output_price: 15
  - identifier: llama
    provider: ollama
    model_id: llama3.1:8b
    context_length: 8192
    input_price: 0
    output_price: 0
configurations:
  - identifier: local
    model: llama
    system_prompt: You answer questions about the TYPO3 site.
    max_rounds: 8
  - identifier: support
    description: Editors' assistant
    model: gpt-4o-mini
    system_prompt: |
      You help editors of the Nordlicht site.
    temperature: 0.2
    max_tokens: 2000
    allowed_tool_groups: [content, structure]
    guardrails: [pii-redaction, provider-content-filter]
    require_second_approver: true
    privacy_level: full
    budgets:
      requests_per_day: 200
      cost_per_month: 25.50
    fallback_chain: [careful, local]
  - identifier: careful
    model: claude
    temperature: 1
tasks:
  - identifier: chat
    configuration: support
    prompt_template: "Question: {{input}}"
budgets:
  - user: editor
    requests_per_day: 50
    cost_per_day: 1.25
  - user: admin
    active: false
`
