package agentconfig_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/agentconfig"
)

func TestApplyIsIdempotent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envParams{})
	rep := e.mustApply(t, fullDoc, false)
	if rep.Count(agentconfig.ActionCreated) != 12 || len(rep.Changes) != 12 {
		t.Fatalf("first apply = %+v, want 12 records created", rep.Changes)
	}
	// Document order: providers, models, configurations, tasks, budgets; by identifier within.
	var order []string
	for _, c := range rep.Changes {
		order = append(order, c.Kind+" "+c.Identifier)
	}
	want := []string{"provider anthropic", "provider ollama", "provider openai", "model claude", "model gpt-4o-mini",
		"model llama", "configuration careful", "configuration local", "configuration support", "task chat",
		"budget admin", "budget editor"}
	if !slices.Equal(order, want) {
		t.Errorf("report order = %q, want %q", order, want)
	}
	before := e.snapshot(t)

	again := e.mustApply(t, fullDoc, false)
	if again.Changed() || again.Count(agentconfig.ActionUnchanged) != 12 {
		t.Errorf("re-apply = %+v, want every record unchanged", again.Changes)
	}
	// Nothing was rewritten: not even the stamps or the sealed key.
	if after := e.snapshot(t); !reflect.DeepEqual(before, after) {
		t.Errorf("re-applying changed the store:\nbefore %+v\nafter  %+v", before, after)
	}
	// Prune with the same document deletes nothing either.
	if pruned := e.mustApply(t, fullDoc, true); pruned.Changed() {
		t.Errorf("prune with the full document = %+v", pruned.Changes)
	}

	// One changed field updates exactly that record and names the field.
	changed := strings.Replace(fullDoc, "temperature: 0.2", "temperature: 0.3", 1)
	changed = strings.Replace(changed, "cost_per_month: 25.50", "cost_per_month: 30", 1)
	rep = e.mustApply(t, changed, false)
	for _, c := range rep.Changes {
		switch {
		case c.Identifier == "support" && c.Kind == "configuration":
			if c.Action != agentconfig.ActionUpdated || !slices.Equal(c.Fields, []string{"temperature", "budgets.cost_per_month"}) {
				t.Errorf("support = %+v, want updated temperature and budgets.cost_per_month", c)
			}
		case c.Action != agentconfig.ActionUnchanged:
			t.Errorf("%s %s = %s, want unchanged", c.Kind, c.Identifier, c.Action)
		}
	}
	s := e.snapshot(t)
	for _, c := range s.Configurations {
		if c.Identifier == "support" && (*c.Temperature != 0.3 || c.Budget.CostPerMonth != 30*int64(agentconfig.Dollar)) {
			t.Errorf("stored support = %+v", c)
		}
	}
}

func TestApplyDefaults(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envParams{})
	e.mustApply(t, fullDoc, false)
	snap, err := e.svc.Snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	openai, _ := snap.Provider("openai")
	ollama, _ := snap.Provider("ollama")
	anthropic, _ := snap.Provider("anthropic")
	if openai.Timeout.Seconds() != 60 || openai.MaxRetries != 2 || ollama.MaxRetries != 0 ||
		anthropic.Timeout != agentconfig.DefaultTimeout || anthropic.MaxRetries != agentconfig.DefaultMaxRetries {
		t.Errorf("timeouts and retries: openai %v/%d, ollama %d, anthropic %v/%d",
			openai.Timeout, openai.MaxRetries, ollama.MaxRetries, anthropic.Timeout, anthropic.MaxRetries)
	}
	local, _ := snap.Configuration("local")
	careful, _ := snap.Configuration("careful")
	if local.MaxRounds != 8 || careful.MaxRounds != agentconfig.DefaultMaxRounds || careful.Privacy != agentconfig.PrivacyMetadata ||
		careful.Temperature == nil || *careful.Temperature != 1 || local.Temperature != nil || !local.Active {
		t.Errorf("configuration defaults: local %+v, careful %+v", local, careful)
	}
	llama, _ := snap.Model("llama")
	gpt, _ := snap.Model("gpt-4o-mini")
	claude, _ := snap.Model("claude")
	if llama.Prices == nil || llama.Prices.Input != 0 || gpt.Prices.Input != agentconfig.USD(150_000_000_000) ||
		claude.Prices.Input != 3*agentconfig.Dollar || claude.Prices.Output != 15*agentconfig.Dollar {
		t.Errorf("prices: llama %+v, gpt %+v, claude %+v", llama.Prices, gpt.Prices, claude.Prices)
	}
	admin, _ := snap.Budget("admin")
	editor, _ := snap.Budget("editor")
	if admin.Active || !editor.Active || editor.Budget.CostPerDay != agentconfig.USD(1_250_000_000_000) || editor.Budget.RequestsPerDay != 50 {
		t.Errorf("budgets: admin %+v, editor %+v", admin, editor)
	}
	task, _ := snap.Task("chat")
	if got := task.Render("Where is page 5?"); got != "Question: Where is page 5?" {
		t.Errorf("Render = %q", got)
	}
}

func TestApplyPrune(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envParams{})
	e.mustApply(t, fullDoc, false)
	small := `
providers:
  - identifier: ollama
    adapter: openai_compatible
    endpoint: http://127.0.0.1:11434/v1
    trust_zone: local
    max_retries: 0
models:
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
`
	// Without --prune, what the file leaves out stays.
	rep := e.mustApply(t, small, false)
	if rep.Changed() || len(rep.Changes) != 3 {
		t.Errorf("apply of a subset = %+v, want 3 unchanged records", rep.Changes)
	}
	if s := e.snapshot(t); len(s.Configurations) != 3 || len(s.UserBudgets) != 2 {
		t.Errorf("a subset without prune removed records: %d configurations, %d budgets", len(s.Configurations), len(s.UserBudgets))
	}
	// A dry run reports the deletions and keeps everything.
	d, _ := agentconfig.ParseDocument([]byte(small))
	dry, err := e.svc.Apply(t.Context(), agentconfig.ApplyParams{Document: d, Prune: true, DryRun: true, By: "tester"})
	if err != nil || !dry.DryRun || dry.Count(agentconfig.ActionDeleted) != 9 {
		t.Fatalf("dry prune = %+v, %v; want 9 deletions reported", dry, err)
	}
	if s := e.snapshot(t); len(s.Providers) != 3 {
		t.Errorf("a dry run deleted providers")
	}
	// With --prune they go, dependents first, in one transaction.
	rep = e.mustApply(t, small, true)
	got := actions(rep)
	for _, k := range []string{"provider openai", "provider anthropic", "model gpt-4o-mini", "model claude",
		"configuration support", "configuration careful", "task chat", "budget editor", "budget admin"} {
		if got[k] != agentconfig.ActionDeleted {
			t.Errorf("%s = %q, want deleted", k, got[k])
		}
	}
	if got["configuration local"] != agentconfig.ActionUnchanged {
		t.Errorf("local = %q, want unchanged", got["configuration local"])
	}
	s := e.snapshot(t)
	if len(s.Providers) != 1 || len(s.Models) != 1 || len(s.Configurations) != 1 || len(s.Tasks) != 0 || len(s.UserBudgets) != 0 {
		t.Errorf("after prune: %+v", s)
	}
}

// TestApplyRefusals: each broken document is refused whole, with an error
// naming the item, its line and the field, and the store is untouched.
func TestApplyRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envParams{})
	e.mustApply(t, fullDoc, false)
	before := e.snapshot(t)
	edit := func(old, new string) string {
		if !strings.Contains(fullDoc, old) {
			t.Fatalf("fullDoc has no %q", old)
		}
		return strings.Replace(fullDoc, old, new, 1)
	}
	cases := []struct {
		name, doc string
		prune     bool
		want      []string
	}{
		{"unknown adapter", edit("adapter: openai\n", "adapter: openia\n"),
			false, []string{`provider "openai" (line 3): adapter: "openia" is not openai`}},
		{"compatible without endpoint", edit("    endpoint: http://127.0.0.1:11434/v1\n", ""),
			false, []string{`provider "ollama"`, "endpoint: is required for the openai_compatible adapter"}},
		{"credentials in the endpoint", edit("http://127.0.0.1:11434/v1", "http://u:hunter2@127.0.0.1:11434/v1"),
			false, []string{"endpoint: must not carry credentials"}},
		{"endpoint not http", edit("http://127.0.0.1:11434/v1", "ftp://127.0.0.1/v1"),
			false, []string{"endpoint: must be an http:// or https:// URL"}},
		{"key missing", edit("    api_key: env:OPENAI_API_KEY\n", ""),
			false, []string{`provider "openai"`, "api_key: is required for the openai adapter"}},
		{"bad env name", edit("env:OPENAI_API_KEY", "env:OPENAI-KEY"),
			false, []string{"api_key: env:OPENAI-KEY does not name an environment variable"}},
		{"key with a space", edit(literalKey, `"`+literalKey+` x"`),
			false, []string{"api_key: contains spaces"}},
		{"trust zone", edit("trust_zone: externalGlobal", "trust_zone: external"),
			false, []string{`trust_zone: "external" is not local, privateHosted`}},
		{"timeout", edit("timeout: 60s", "timeout: soon"), false, []string{`timeout: "soon" is not a duration`}},
		{"timeout too long", edit("timeout: 60s", "timeout: 2h"), false, []string{"timeout: must be more than 0 and at most 30m0s"}},
		{"retries", edit("max_retries: 2", "max_retries: 11"), false, []string{"max_retries: must be between 0 and 10, not 11"}},
		{"header name", edit("anthropic-beta:", "anthropic beta:"), false, []string{"headers.anthropic beta: is not a header name"}},
		{"model without provider", edit("provider: openai\n", "provider: opena\n"),
			false, []string{`model "gpt-4o-mini"`, `provider: no provider "opena" in this file or the store`}},
		{"one price only", edit("    output_price: 0.60\n", ""),
			false, []string{"input_price: give input_price and output_price together"}},
		{"price not a number", edit("output_price: 0.60", "output_price: cheap"),
			false, []string{`"cheap" is not an amount of dollars`}},
		{"negative price", edit("output_price: 0.60", "output_price: -1"),
			false, []string{`"-1" is not an amount of dollars`}},
		{"unknown capability", edit("capabilities: [chat, tools, streaming]", "capabilities: [chat, telepathy]"),
			false, []string{`capabilities[1]: "telepathy" is not one of chat, tools`}},
		{"output above context", edit("max_output_tokens: 16384", "max_output_tokens: 200000"),
			false, []string{"max_output_tokens: 200000 is more than the context length 128000"}},
		{"configuration without model", edit("model: gpt-4o-mini\n", "model: gpt-5\n"),
			false, []string{`configuration "support"`, `model: no model "gpt-5" in this file or the store`}},
		{"temperature above 2", edit("temperature: 0.2", "temperature: 2.5"),
			false, []string{`configuration "support"`, "temperature: must be between 0 and 2 for this provider, not 2.5"}},
		{"anthropic temperature above 1", edit("temperature: 1\n", "temperature: 1.5\n"),
			false, []string{`configuration "careful"`, "temperature: must be between 0 and 1 for this provider, not 1.5"}},
		{"max tokens above the model's", edit("max_tokens: 2000", "max_tokens: 20000"),
			false, []string{"max_tokens: 20000 is more than the model's max_output_tokens 16384"}},
		{"rounds above the ceiling", edit("max_rounds: 8", "max_rounds: 21"),
			false, []string{`configuration "local"`, "max_rounds: must be between 1 and 20, not 21"}},
		{"privacy level", edit("privacy_level: full", "privacy_level: none"),
			false, []string{`privacy_level: "none" is not metadata or full`}},
		{"unknown guardrail", edit("[pii-redaction, provider-content-filter]", "[pii-redaction, profanity]"),
			false, []string{`guardrails[1]: "profanity" is not a guardrail`}},
		{"tool group twice", edit("[content, structure]", "[content, content]"),
			false, []string{`allowed_tool_groups[1]: "content" is listed twice`}},
		{"tool group shape", edit("[content, structure]", "[Content]"),
			false, []string{`allowed_tool_groups[0]: "Content" is not a tool group`}},
		{"fallback to itself", edit("fallback_chain: [careful, local]", "fallback_chain: [support]"),
			false, []string{"fallback_chain[0]: a configuration cannot fall back to itself"}},
		{"fallback missing", edit("fallback_chain: [careful, local]", "fallback_chain: [careful, nowhere]"),
			false, []string{`fallback_chain[1]: no configuration "nowhere"`}},
		{"fallback loop", edit("    temperature: 1\n", "    temperature: 1\n    fallback_chain: [support]\n"),
			false, []string{"fallback_chain: loops: ", "support → careful → support"}},
		{"task without configuration", edit("configuration: support", "configuration: sales"),
			false, []string{`task "chat"`, `configuration: no configuration "sales"`}},
		{"negative budget", edit("requests_per_day: 50", "requests_per_day: -5"),
			false, []string{`budget "editor"`, "requests_per_day: must be 0 (unlimited) or a positive count"}},
		{"identifier shape", edit("identifier: careful", "identifier: Careful"),
			false, []string{`identifier: "Careful" must be 1 to 64 characters`}},
		{"declared twice", edit("identifier: careful", "identifier: local"),
			false, []string{`configuration "local"`, "identifier: is declared twice"}},
		{"budget without user", edit("  - user: admin\n", "  - user: \"\"\n"),
			false, []string{"user: must name a TYPO3 backend user"}},
		{"unknown key", edit("max_rounds: 8", "max_round: 8"), false, []string{`configuration "local" (line 43): max_round: is not a known key; did you mean max_rounds?`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.apply(t, c.doc, c.prune)
			if err == nil {
				t.Fatal("applied")
			}
			if !errors.Is(err, agentconfig.ErrInvalid) {
				t.Errorf("err = %v, want ErrInvalid", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %q\nwant it to contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), literalKey) || strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %q: not one line free of secrets", err)
			}
			if after := e.snapshot(t); !reflect.DeepEqual(before, after) {
				t.Error("a refused document changed the store")
			}
		})
	}
}

func TestApplyReportsEveryProblem(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envParams{})
	doc := `
providers:
  - identifier: p
    adapter: nope
    trust_zone: mars
models:
  - identifier: m
    provider: p
    model_id: x
    capabilities: [chat, chat]
`
	_, err := e.apply(t, doc, false)
	var ve *agentconfig.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v, want a *ValidationError", err)
	}
	var fields []string
	for _, p := range ve.Problems {
		fields = append(fields, p.Kind+"."+p.Field)
	}
	want := []string{"provider.adapter", "provider.trust_zone", "model.capabilities[1]"}
	if !slices.Equal(fields, want) {
		t.Errorf("problems = %q, want %q", fields, want)
	}
	if ve.Problems[0].Line != 3 || ve.Problems[2].Line != 7 {
		t.Errorf("lines = %d, %d; want 3 and 7", ve.Problems[0].Line, ve.Problems[2].Line)
	}
}

func TestApplyPruneNeedsReferencesInTheFile(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envParams{})
	e.mustApply(t, fullDoc, false)
	doc := `
models:
  - identifier: llama
    provider: ollama
    model_id: llama3.1:8b
`
	// Without prune the model may name a provider already stored…
	if _, err := e.apply(t, doc, false); err != nil {
		t.Fatalf("apply without prune: %v", err)
	}
	// …with prune that provider would be deleted, so the file is refused.
	_, err := e.apply(t, doc, true)
	if err == nil || !strings.Contains(err.Error(), `provider: no provider "ollama" in this file (with --prune`) {
		t.Errorf("prune with an outside reference: %v", err)
	}
	if s := e.snapshot(t); len(s.Providers) != 3 {
		t.Error("the refused prune deleted providers")
	}
}

// TestParseDocumentErrors: what cannot be read at all is refused by the
// parse, in one sentence.
func TestParseDocumentErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ doc, want string }{
		{"", "the document is empty"},
		{"# only a comment\n", "the document is empty"},
		{"providers: []\n", "declares no providers"},
		{"providers:\n  - identifier: a\n---\nmodels: []\n", "more than one YAML document"},
		{"providers:\n  - identifier: [a\n", "did not find expected"},
		// Nothing declared, so nothing else to check: the keys are the problem.
		{"provider:\n  - identifier: a\nmodel: []\n", "line 1: provider: is not a known key; did you mean providers?; line 3: model: is not a known key"},
		{"providers: {a: 1}\n", "line 1: providers: must be a list, not a map"},
	} {
		_, err := agentconfig.ParseDocument([]byte(c.doc))
		if err == nil || !errors.Is(err, agentconfig.ErrInvalid) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseDocument(%q) = %v, want one line containing %q", c.doc, err, c.want)
		}
	}
}

// TestApplyListsEveryProblemOfADocument: unknown keys at every level,
// values of the wrong type, invalid values and dangling references are
// all reported in one refusal, each with its item, line and path, in
// document order; a field that could not be read is not reported again
// for the zero value it was left with.
func TestApplyListsEveryProblemOfADocument(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envParams{})
	doc := `
providers:
  - identifier: openai
    adapter: openai
    api_kye: env:OPENAI_API_KEY
    trust_zone: mars
    max_retries: three
models:
  - identifier: gpt
    provider: opena
    model_id: gpt-4o-mini
    input_price: [1]
    output_price: 0.60
configurations:
  - identifier: support
    model: gpt
    fallback_chain: [nowhere]
    budgets:
      cost_per_dya: 5
sections: []
`
	_, err := e.apply(t, doc, false)
	var ve *agentconfig.ValidationError
	if !errors.As(err, &ve) || !errors.Is(err, agentconfig.ErrInvalid) {
		t.Fatalf("err = %v, want a *ValidationError", err)
	}
	var got []string
	for _, p := range ve.Problems {
		got = append(got, p.Error())
	}
	want := []string{
		`provider "openai" (line 3): api_kye: is not a known key; did you mean api_key?`,
		`provider "openai" (line 3): max_retries: must be a whole number, not "three"`,
		`provider "openai" (line 3): api_key: is required for the openai adapter; give env:NAME or the key`,
		`provider "openai" (line 3): trust_zone: "mars" is not local, privateHosted, externalEu or externalGlobal`,
		`model "gpt" (line 9): input_price: must be an amount of dollars such as 2.50`,
		`model "gpt" (line 9): provider: no provider "opena" in this file or the store`,
		`configuration "support" (line 15): budgets.cost_per_dya: is not a known key; did you mean cost_per_day?`,
		`configuration "support" (line 15): fallback_chain[0]: no configuration "nowhere" in this file or the store`,
		`line 20: sections: is not a known key`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "the configuration is refused, nothing was applied: ") {
		t.Errorf("err = %q, want one line", err)
	}
	if s := e.snapshot(t); len(s.Providers)+len(s.Models)+len(s.Configurations) != 0 {
		t.Error("a refused document wrote records")
	}
}

func TestApplyNeedsAnActorAndADocument(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envParams{})
	d, _ := agentconfig.ParseDocument([]byte(fullDoc))
	if _, err := e.svc.Apply(t.Context(), agentconfig.ApplyParams{Document: d}); !errors.Is(err, agentconfig.ErrInvalid) {
		t.Errorf("apply without By: %v", err)
	}
	if _, err := e.svc.Apply(t.Context(), agentconfig.ApplyParams{By: "x"}); !errors.Is(err, agentconfig.ErrInvalid) {
		t.Errorf("apply without a document: %v", err)
	}
}

func TestDelete(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envParams{})
	e.mustApply(t, fullDoc, false)
	del := func(kind, id string) error {
		return e.svc.Delete(t.Context(), agentconfig.DeleteParams{Kind: kind, Identifier: id, By: "ui"})
	}
	for _, c := range []struct {
		kind, id string
		err      error
		want     string
	}{
		{"provider", "openai", agentconfig.ErrInvalid, `provider "openai" is used by model gpt-4o-mini`},
		{"model", "llama", agentconfig.ErrInvalid, `model "llama" is used by configuration local`},
		{"configuration", "support", agentconfig.ErrInvalid, `configuration "support" is used by task chat`},
		{"task", "nope", agentconfig.ErrNotFound, `there is no task "nope"`},
		{"widget", "x", agentconfig.ErrInvalid, `"widget" is not provider`},
	} {
		err := del(c.kind, c.id)
		if !errors.Is(err, c.err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Delete(%s %s) = %v, want %v containing %q", c.kind, c.id, err, c.err, c.want)
		}
	}
	if err := e.svc.Delete(t.Context(), agentconfig.DeleteParams{Kind: "task", Identifier: "chat"}); !errors.Is(err, agentconfig.ErrInvalid) {
		t.Errorf("Delete without By = %v", err)
	}
	// Dependents first, then what they used; a configuration named as a
	// fallback may go, and resolving then skips it.
	for _, step := range [][2]string{{"task", "chat"}, {"configuration", "careful"}, {"budget", "admin"}} {
		if err := del(step[0], step[1]); err != nil {
			t.Fatalf("Delete(%s %s): %v", step[0], step[1], err)
		}
	}
	r, err := e.svc.Resolve(t.Context(), "support")
	if err != nil || !slices.Equal(chainOf(r), []string{"support", "local"}) || len(r.Skipped) != 1 || r.Skipped[0].Reason != "missing" {
		t.Errorf("after deleting a fallback: %v, %+v (%v)", chainOf(r), r, err)
	}
	s := e.snapshot(t)
	if len(s.Tasks) != 0 || len(s.Configurations) != 2 || len(s.UserBudgets) != 1 {
		t.Errorf("after the deletes: %+v", s)
	}
}

// FuzzParseDocument: any input is read or refused in one line, never a
// panic, and a document it returns declares something.
func FuzzParseDocument(f *testing.F) {
	for _, seed := range []string{fullDoc, "provider:\n  - identifier: a\n", "providers: {a: 1}\n",
		"providers:\n  - &a {identifier: x, adaptor: openai}\n  - *a\nbudgets:\n  - user: u\n    cost_per_dya: [1]\n",
		"models:\n  - identifier: m\n    input_price: [1]\n    capabilities: {a: b}\n"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		d, err := agentconfig.ParseDocument([]byte(doc))
		switch {
		case err != nil && strings.Contains(err.Error(), "\n"):
			t.Errorf("error spans lines: %q", err)
		case err != nil && !errors.Is(err, agentconfig.ErrInvalid):
			t.Errorf("error %v is not ErrInvalid", err)
		case err == nil && len(d.Providers)+len(d.Models)+len(d.Configurations)+len(d.Tasks)+len(d.Budgets) == 0:
			t.Errorf("a document declaring nothing was returned")
		}
	})
}
