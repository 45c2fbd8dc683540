package storetest

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/store"
)

// ---- agent configuration: providers, models, configurations, tasks, budgets ----

func ptr[T any](v T) *T { return &v }

// sampleBatch is one record of each kind, with every field set to a value
// that a lossy round trip would change (non-ASCII, NULL vs zero, lists).
func sampleBatch() store.ApplyAgentConfigParams {
	return store.ApplyAgentConfigParams{
		SaveProviders: []store.LLMProvider{{
			Identifier: "openai", Description: "OpenAI – Frankfurt ✓", Adapter: "openai",
			Endpoint: "https://api.openai.com/v1", APIKey: "t3s1:abcd:sealed", TrustZone: "externalGlobal",
			Timeout: 90 * time.Second, MaxRetries: 0,
			Headers: map[string]string{"OpenAI-Organization": "env:OPENAI_ORG", "X-Title": "t3s1:abcd:other"}, Active: true,
		}, {
			Identifier: "ollama", Adapter: "openai_compatible", Endpoint: "http://127.0.0.1:11434/v1",
			TrustZone: "local", Timeout: 1500 * time.Millisecond, MaxRetries: 10, Headers: map[string]string{}, Active: false,
		}},
		SaveModels: []store.LLMModel{{
			Identifier: "gpt-4o-mini", Provider: "openai", ModelID: "gpt-4o-mini", ContextLength: 128000,
			MaxOutputTokens: 16384, Capabilities: []string{"chat", "tools"},
			InputPrice: ptr(int64(150_000_000_000)), OutputPrice: ptr(int64(600_000_000_000)), Active: true,
		}, {
			Identifier: "llama", Description: "unpriced", Provider: "ollama", ModelID: "llama3.1:8b",
			Capabilities: []string{}, Active: true,
		}},
		SaveConfigurations: []store.LLMConfiguration{{
			Identifier: "support", Description: "Support", Model: "gpt-4o-mini", SystemPrompt: "Du bist hilfsbereit.\nÄußerst.",
			Temperature: ptr(0.7), MaxTokens: 2000, AllowedToolGroups: []string{"content", "mcp_docs"},
			Guardrails: []string{"pii-redaction"}, RequireSecondApprover: true, MaxRounds: 20, PrivacyLevel: "full",
			Budget: store.BudgetLimits{RequestsPerDay: 1, TokensPerDay: 2, CostPerDay: 3, RequestsPerMonth: 4,
				TokensPerMonth: 5, CostPerMonth: 6_000_000_000_000_000},
			FallbackChain: []string{"local", "gone"}, Active: true,
		}, {
			Identifier: "local", Model: "llama", Temperature: nil, AllowedToolGroups: []string{}, Guardrails: []string{},
			MaxRounds: 5, PrivacyLevel: "metadata", FallbackChain: []string{}, Active: true,
		}},
		SaveTasks: []store.LLMTask{{
			Identifier: "chat", Description: "The backend chat", Configuration: "support", PromptTemplate: "Answer: {{input}}",
		}},
		SaveUserBudgets: []store.UserBudget{{
			Username: "jürgen", Budget: store.BudgetLimits{RequestsPerDay: 100, CostPerMonth: 20_000_000_000_000}, Active: true,
		}},
		UpdatedBy: "admin",
	}
}

func mustApply(t *testing.T, st store.Store, p store.ApplyAgentConfigParams) {
	t.Helper()
	if err := st.ApplyAgentConfig(t.Context(), p); err != nil {
		t.Fatalf("ApplyAgentConfig: %v", err)
	}
}

func mustSnapshot(t *testing.T, st store.Store) store.AgentConfigSnapshot {
	t.Helper()
	s, err := st.AgentConfigSnapshot(t.Context())
	if err != nil {
		t.Fatalf("AgentConfigSnapshot: %v", err)
	}
	return s
}

// unstamped clears what the store sets, for comparing with what was saved.
func unstamped(s store.AgentConfigSnapshot) store.AgentConfigSnapshot {
	s.Generation = 0
	for i := range s.Providers {
		s.Providers[i].CreatedAt, s.Providers[i].UpdatedAt, s.Providers[i].UpdatedBy = time.Time{}, time.Time{}, ""
	}
	for i := range s.Models {
		s.Models[i].CreatedAt, s.Models[i].UpdatedAt, s.Models[i].UpdatedBy = time.Time{}, time.Time{}, ""
	}
	for i := range s.Configurations {
		s.Configurations[i].CreatedAt, s.Configurations[i].UpdatedAt, s.Configurations[i].UpdatedBy = time.Time{}, time.Time{}, ""
	}
	for i := range s.Tasks {
		s.Tasks[i].CreatedAt, s.Tasks[i].UpdatedAt, s.Tasks[i].UpdatedBy = time.Time{}, time.Time{}, ""
	}
	for i := range s.UserBudgets {
		s.UserBudgets[i].CreatedAt, s.UserBudgets[i].UpdatedAt, s.UserBudgets[i].UpdatedBy = time.Time{}, time.Time{}, ""
	}
	return s
}

func testAgentConfigEmpty(t *testing.T, h harness) {
	f := h.setup(t)
	s := mustSnapshot(t, f.st)
	if s.Providers == nil || s.Models == nil || s.Configurations == nil || s.Tasks == nil || s.UserBudgets == nil {
		t.Errorf("snapshot of a new store has nil lists: %+v", s)
	}
	if n := len(s.Providers) + len(s.Models) + len(s.Configurations) + len(s.Tasks) + len(s.UserBudgets); n != 0 {
		t.Errorf("a new store holds %d records", n)
	}
}

func testAgentConfigRoundTrip(t *testing.T, h harness) {
	f := h.setup(t)
	in := sampleBatch()
	mustApply(t, f.st, in)
	got := mustSnapshot(t, f.st)
	for _, p := range got.Providers {
		checkTime(t, "provider CreatedAt", p.CreatedAt, f.clock.Stamp())
		checkTime(t, "provider UpdatedAt", p.UpdatedAt, f.clock.Stamp())
		if p.UpdatedBy != "admin" {
			t.Errorf("provider UpdatedBy = %q", p.UpdatedBy)
		}
	}
	checkTime(t, "task UpdatedAt", got.Tasks[0].UpdatedAt, f.clock.Stamp())
	want := store.AgentConfigSnapshot{
		Providers:      []store.LLMProvider{in.SaveProviders[1], in.SaveProviders[0]},                // ollama < openai
		Models:         []store.LLMModel{in.SaveModels[0], in.SaveModels[1]},                         // gpt-4o-mini < llama
		Configurations: []store.LLMConfiguration{in.SaveConfigurations[1], in.SaveConfigurations[0]}, // local < support
		Tasks:          in.SaveTasks,
		UserBudgets:    in.SaveUserBudgets,
	}
	if g := unstamped(got); !reflect.DeepEqual(g, want) {
		t.Errorf("round trip:\n got %+v\nwant %+v", g, want)
	}
}

func testAgentConfigUpdate(t *testing.T, h harness) {
	f := h.setup(t)
	in := sampleBatch()
	mustApply(t, f.st, in)
	created := f.clock.Stamp()
	f.clock.Advance(time.Hour)
	cfg := in.SaveConfigurations[1]
	cfg.Temperature, cfg.SystemPrompt, cfg.FallbackChain = ptr(0.0), "changed", []string{"support"}
	mustApply(t, f.st, store.ApplyAgentConfigParams{SaveConfigurations: []store.LLMConfiguration{cfg}, UpdatedBy: "bob"})
	got := mustSnapshot(t, f.st)
	c := got.Configurations[0]
	if c.Identifier != "local" || c.Temperature == nil || *c.Temperature != 0 || c.SystemPrompt != "changed" ||
		!slices.Equal(c.FallbackChain, []string{"support"}) || c.UpdatedBy != "bob" {
		t.Errorf("updated configuration = %+v", c)
	}
	checkTime(t, "CreatedAt after update", c.CreatedAt, created)
	checkTime(t, "UpdatedAt after update", c.UpdatedAt, f.clock.Stamp())
	// The other records were not touched.
	if s := got.Configurations[1]; s.UpdatedBy != "admin" || !s.UpdatedAt.Equal(created) {
		t.Errorf("an unrelated configuration was rewritten: %+v", s)
	}
}

func testAgentConfigDeleteOrder(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	in := sampleBatch()
	mustApply(t, f.st, in)

	// A provider still used by a model cannot go, and the refused batch
	// leaves everything as it was, including its saves.
	moved := in.SaveModels[1]
	moved.Description = "should not be stored"
	err := f.st.ApplyAgentConfig(ctx, store.ApplyAgentConfigParams{
		SaveModels: []store.LLMModel{moved}, DeleteProviders: []string{"ollama"}, UpdatedBy: "admin",
	})
	if err == nil {
		t.Fatal("deleting a referenced provider succeeded")
	}
	if got := unstamped(mustSnapshot(t, f.st)); got.Models[1].Description != "unpriced" || len(got.Providers) != 2 {
		t.Errorf("a refused batch changed the store: %+v", got)
	}

	// One batch may move the model to another provider and drop the old one.
	moved.Provider = "openai"
	mustApply(t, f.st, store.ApplyAgentConfigParams{
		SaveModels: []store.LLMModel{moved}, DeleteProviders: []string{"ollama"}, UpdatedBy: "admin",
	})
	got := mustSnapshot(t, f.st)
	if len(got.Providers) != 1 || got.Models[1].Provider != "openai" {
		t.Errorf("after the move: providers %+v, model %+v", got.Providers, got.Models[1])
	}

	// Deleting a whole chain at once works in any listed order.
	mustApply(t, f.st, store.ApplyAgentConfigParams{
		DeleteProviders: []string{"openai"}, DeleteModels: []string{"llama", "gpt-4o-mini"},
		DeleteConfigurations: []string{"support", "local"}, DeleteTasks: []string{"chat"},
		DeleteUserBudgets: []string{"jürgen"}, UpdatedBy: "admin",
	})
	if got := mustSnapshot(t, f.st); len(got.Providers)+len(got.Models)+len(got.Configurations)+len(got.Tasks)+len(got.UserBudgets) != 0 {
		t.Errorf("records left after deleting everything: %+v", got)
	}

	// Deleting what does not exist fails the batch with ErrNotFound.
	err = f.st.ApplyAgentConfig(ctx, store.ApplyAgentConfigParams{
		SaveProviders: in.SaveProviders[:1], DeleteTasks: []string{"never"}, UpdatedBy: "admin",
	})
	if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), `"never"`) {
		t.Errorf("deleting a missing task: %v, want ErrNotFound naming it", err)
	}
	if got := mustSnapshot(t, f.st); len(got.Providers) != 0 {
		t.Error("the save of a failed batch was kept")
	}
}

func testAgentConfigReferences(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	in := sampleBatch()
	for _, c := range []struct {
		name  string
		batch store.ApplyAgentConfigParams
	}{
		{"model without provider", store.ApplyAgentConfigParams{SaveModels: in.SaveModels[:1], UpdatedBy: "a"}},
		{"configuration without model", store.ApplyAgentConfigParams{
			SaveProviders: in.SaveProviders, SaveConfigurations: in.SaveConfigurations[:1], UpdatedBy: "a"}},
		{"task without configuration", store.ApplyAgentConfigParams{
			SaveProviders: in.SaveProviders, SaveModels: in.SaveModels, SaveTasks: in.SaveTasks, UpdatedBy: "a"}},
	} {
		if err := f.st.ApplyAgentConfig(ctx, c.batch); err == nil {
			t.Errorf("%s: stored", c.name)
		}
	}
	if got := mustSnapshot(t, f.st); len(got.Providers) != 0 {
		t.Errorf("a refused batch left providers: %+v", got.Providers)
	}
	// The fallback chain is not a reference: "gone" does not exist.
	mustApply(t, f.st, in)
}

func testAgentConfigInvalid(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	in := sampleBatch()
	bad := func(mod func(p *store.ApplyAgentConfigParams)) store.ApplyAgentConfigParams {
		p := sampleBatch()
		mod(&p)
		return p
	}
	for _, c := range []struct {
		why   string
		batch store.ApplyAgentConfigParams
	}{
		{"no actor", bad(func(p *store.ApplyAgentConfigParams) { p.UpdatedBy = "" })},
		{"empty identifier", bad(func(p *store.ApplyAgentConfigParams) { p.SaveProviders[0].Identifier = "" })},
		{"provider twice", bad(func(p *store.ApplyAgentConfigParams) { p.SaveProviders[1].Identifier = "openai" })},
		{"NUL in prompt", bad(func(p *store.ApplyAgentConfigParams) { p.SaveConfigurations[0].SystemPrompt = "a\x00b" })},
		{"prompt too long", bad(func(p *store.ApplyAgentConfigParams) {
			p.SaveConfigurations[0].SystemPrompt = strings.Repeat("x", store.MaxPromptLen+1)
		})},
		{"bad UTF-8 header", bad(func(p *store.ApplyAgentConfigParams) { p.SaveProviders[0].Headers["X"] = "\xff" })},
		{"negative budget", bad(func(p *store.ApplyAgentConfigParams) { p.SaveUserBudgets[0].Budget.TokensPerDay = -1 })},
		{"negative price", bad(func(p *store.ApplyAgentConfigParams) { p.SaveModels[0].InputPrice = ptr(int64(-1)) })},
		{"negative timeout", bad(func(p *store.ApplyAgentConfigParams) { p.SaveProviders[0].Timeout = -time.Second })},
		{"delete twice", bad(func(p *store.ApplyAgentConfigParams) { p.DeleteTasks = []string{"x", "x"} })},
		{"empty fallback name", bad(func(p *store.ApplyAgentConfigParams) { p.SaveConfigurations[0].FallbackChain = []string{""} })},
	} {
		if err := f.st.ApplyAgentConfig(ctx, c.batch); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", c.why, err)
		}
	}
	if got := mustSnapshot(t, f.st); len(got.Providers) != 0 {
		t.Error("an invalid batch was stored")
	}
	// The longest prompt is accepted.
	in.SaveConfigurations[0].SystemPrompt = strings.Repeat("ß", store.MaxPromptLen/2)
	mustApply(t, f.st, in)
	if got := mustSnapshot(t, f.st); len(got.Configurations[1].SystemPrompt) != store.MaxPromptLen {
		t.Errorf("the longest prompt came back as %d bytes", len(got.Configurations[1].SystemPrompt))
	}
}

func testAgentConfigOrdering(t *testing.T, h harness) {
	f := h.setup(t)
	in := []string{"b", "a_b", "aB", "A", "ab", "B", "a", "ä", "Z", "a-b", "a.b"}
	var batch store.ApplyAgentConfigParams
	for _, u := range in {
		batch.SaveUserBudgets = append(batch.SaveUserBudgets, store.UserBudget{Username: u, Active: true})
		batch.SaveProviders = append(batch.SaveProviders, store.LLMProvider{Identifier: u, Adapter: "openai", TrustZone: "local"})
	}
	batch.UpdatedBy = "admin"
	mustApply(t, f.st, batch)
	want := slices.Sorted(slices.Values(in))
	s := mustSnapshot(t, f.st)
	var users, providers []string
	for _, b := range s.UserBudgets {
		users = append(users, b.Username)
	}
	for _, p := range s.Providers {
		providers = append(providers, p.Identifier)
	}
	if !slices.Equal(users, want) || !slices.Equal(providers, want) {
		t.Errorf("order = %q / %q, want bytewise %q", users, providers, want)
	}
}

// testAgentConfigConcurrentApply: batches from many writers each land
// whole; a reader never sees half of one.
func testAgentConfigConcurrentApply(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	const n = 12
	err := runAll(n, func(i int) error {
		id := string(rune('a' + i))
		err := f.st.ApplyAgentConfig(ctx, store.ApplyAgentConfigParams{
			SaveProviders: []store.LLMProvider{{Identifier: "p" + id, Adapter: "openai", TrustZone: "local", Active: true}},
			SaveModels:    []store.LLMModel{{Identifier: "m" + id, Provider: "p" + id, ModelID: "x", Active: true}},
			UpdatedBy:     "w" + id,
		})
		if err != nil {
			return err
		}
		s, err := f.st.AgentConfigSnapshot(ctx)
		if err != nil {
			return err
		}
		if len(s.Providers) != len(s.Models) {
			return errors.New("a snapshot saw half a batch")
		}
		g, err := f.st.AgentConfigGeneration(ctx)
		if err != nil {
			return err
		}
		if g < s.Generation {
			return fmt.Errorf("generation %d after a snapshot of generation %d", g, s.Generation)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if s := mustSnapshot(t, f.st); len(s.Providers) != n || len(s.Models) != n {
		t.Errorf("%d providers and %d models, want %d each", len(s.Providers), len(s.Models), n)
	}
}

// testAgentConfigGeneration: every committed write to any table of the
// model, t3agent's or an operator's own SQL, moves the generation on; reads
// and refused batches do not; a snapshot carries the generation it was
// read at.
func testAgentConfigGeneration(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	current := func() int64 {
		t.Helper()
		g, err := f.st.AgentConfigGeneration(ctx)
		if err != nil {
			t.Fatalf("AgentConfigGeneration: %v", err)
		}
		if s := mustSnapshot(t, f.st); s.Generation != g {
			t.Fatalf("snapshot generation %d, current %d", s.Generation, g)
		}
		return g
	}
	last := current()
	if again := current(); again != last {
		t.Fatalf("reading moved the generation: %d → %d", last, again)
	}
	in := sampleBatch()
	budget := in.SaveUserBudgets[0]
	budget.Active = false
	task := in.SaveTasks[0]
	task.Description = "changed"
	db := rawDB(t, f.dsn)
	for _, c := range []struct {
		name  string
		apply *store.ApplyAgentConfigParams
		sql   string
		moves bool
	}{
		{"apply a whole batch", &in, "", true},
		{"save one user budget", &store.ApplyAgentConfigParams{SaveUserBudgets: []store.UserBudget{budget}, UpdatedBy: "a"}, "", true},
		{"save one task", &store.ApplyAgentConfigParams{SaveTasks: []store.LLMTask{task}, UpdatedBy: "a"}, "", true},
		{"delete a task", &store.ApplyAgentConfigParams{DeleteTasks: []string{"chat"}, UpdatedBy: "a"}, "", true},
		{"refused batch", &store.ApplyAgentConfigParams{DeleteProviders: []string{"openai"}, UpdatedBy: "a"}, "", false},
		{"operator's UPDATE of a provider", nil, `UPDATE llm_providers SET description = 'by hand' WHERE identifier = 'ollama'`, true},
		{"operator's UPDATE of a model", nil, `UPDATE llm_models SET description = 'by hand'`, true},
		{"operator's UPDATE of a configuration", nil, `UPDATE llm_configurations SET system_prompt = 'by hand'`, true},
		{"operator's DELETE of a budget", nil, `DELETE FROM llm_user_budgets`, true},
	} {
		if c.apply != nil {
			err := f.st.ApplyAgentConfig(ctx, *c.apply)
			if (err == nil) != c.moves {
				t.Fatalf("%s: apply error %v", c.name, err)
			}
		} else if _, err := db.ExecContext(ctx, c.sql); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		g := current()
		if moved := g > last; moved != c.moves {
			t.Errorf("%s: generation %d → %d, want moved=%v", c.name, last, g, c.moves)
		}
		last = g
	}
}
