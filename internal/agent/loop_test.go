package agent_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/guardrail"
	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

// pageSix is what get_page_content shows of page 6 to the editor.
const pageSix = "The Aqua 200 moves up to 4 m³ of water per hour"

func usd(t testing.TB, s string) agentconfig.USD {
	t.Helper()
	v, err := agentconfig.ParseUSD(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// checkMetadataOnly fails when an event payload holds content: at privacy
// level metadata, events keep names, counts and costs only.
func checkMetadataOnly(t *testing.T, evs []store.RunEvent, content ...string) {
	t.Helper()
	for _, e := range evs {
		for _, c := range content {
			if strings.Contains(string(e.Payload), c) {
				t.Errorf("event %d (%s) holds content %q at privacy level metadata: %s", e.Seq, e.Kind, c, e.Payload)
			}
		}
		for _, key := range []string{`"messagesSent"`, `"content"`, `"toolArguments"`, `"toolResult"`, `"requestedToolCalls"`} {
			if strings.Contains(string(e.Payload), key) {
				t.Errorf("event %d (%s) has a content field %s at privacy level metadata", e.Seq, e.Kind, key)
			}
		}
	}
}

// checkSeq fails unless events are numbered 0, 1, 2, ….
func checkSeq(t *testing.T, evs []store.RunEvent) {
	t.Helper()
	for i, e := range evs {
		if e.Seq != int64(i) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
	}
}

// TestLoopOpenAI replays a three-round conversation on the OpenAI wire:
// two calls in one turn, then malformed arguments and an unknown tool
// (error results the model reads), then the answer.
func TestLoopOpenAI(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureParams{})
	srv := llmtest.NewOpenAI(t,
		llmtest.Calls(
			llmtest.Call("call_1", "search_records", `{"query":"Aqua 200","limit":3}`),
			llmtest.Call("call_2", "get_page_content", `{"uid":6}`),
		).WithUsage(900, 40),
		llmtest.Calls(
			llmtest.Call("call_3", "get_page_content", `{"uid": 6,`),
			llmtest.Call("call_4", "drop_database", `{}`),
		).WithUsage(1400, 30),
		llmtest.Text("The Aqua 200 is on page 6, Product A.").WithUsage(1600, 60),
	)
	f.apply(providerDoc("openai-main", "openai", "externalGlobal", srv, 3, ""))
	res := f.rt.Run(context.Background(), f.request("openai-main", "editor", "Where is the Aqua 200 described?"))

	if res.Outcome != agent.OutcomeCompleted || res.Termination != agent.TerminationCompleted || res.Error != "" {
		t.Fatalf("result = %+v", res)
	}
	if res.Content != "The Aqua 200 is on page 6, Product A." || res.Rounds != 3 || res.ToolCalls != 4 || res.Truncated {
		t.Errorf("content %q, %d rounds, %d tool calls, truncated %v", res.Content, res.Rounds, res.ToolCalls, res.Truncated)
	}
	if res.Usage != (llm.Usage{InputTokens: 3900, OutputTokens: 130}) {
		t.Errorf("usage = %+v", res.Usage)
	}
	// 3900 × $2.50/M + 130 × $10/M.
	if want := usd(t, "0.01105"); res.Cost != want || res.CostUnknown {
		t.Errorf("cost = %s (unknown %v), want %s", res.Cost, res.CostUnknown, want)
	}

	// The request of each round, as the server received it.
	golden(t, srv, "openai")
	first := srv.Request(0)
	tools := toolNames(t, first)
	if !slices.Equal(tools, []string{"browse_fal_folder", "find_missing_files", "get_fal_references", "get_page_content",
		"get_record_history", "list_fal_storages", "read_records", "search_fal_files", "search_records",
		"site_fetch_source", "site_rag_query"}) {
		t.Errorf("offered %v; an externalGlobal configuration gets the editor's content, files and public site search tools only", tools)
	}
	third := messages(t, srv.Request(2))
	results := map[string]string{}
	for _, m := range third {
		if m["role"] == "tool" {
			results[m["tool_call_id"].(string)] = m["content"].(string)
		}
	}
	if !strings.Contains(results["call_1"], "pages:6") || !strings.Contains(results["call_2"], pageSix) {
		t.Errorf("the first turn's results: %q / %q", results["call_1"], results["call_2"])
	}
	if !strings.Contains(results["call_3"], "are not valid JSON") || !strings.Contains(results["call_4"], `"drop_database" is not available`) {
		t.Errorf("the model did not read the error results: %q / %q", results["call_3"], results["call_4"])
	}

	evs := f.events(res.RunID)
	checkSeq(t, evs)
	if got := kinds(evs); got != "context request llm tool tool context request llm tool tool context request llm" {
		t.Errorf("events: %s", got)
	}
	checkMetadataOnly(t, evs, pageSix, "Where is the Aqua", "Product A.")
	toolEvs := payloads[agent.ToolPayload](t, evs, agent.EventTool)
	if len(toolEvs) != 4 || toolEvs[0].IsError || toolEvs[1].IsError || !toolEvs[2].IsError || !toolEvs[3].IsError || toolEvs[3].Tool != "drop_database" {
		t.Errorf("tool events: %+v", toolEvs)
	}
	for _, c := range payloads[agent.ContextPayload](t, evs, agent.EventContext) {
		if c.EstimatedTokens != c.TranscriptTokens+c.ToolSchemaTokens+c.SystemPromptTokens+c.SkillTokens || c.Remaining != c.Budget-c.EstimatedTokens {
			t.Errorf("context breakdown does not add up: %+v", c.Breakdown)
		}
	}
	llms := payloads[agent.LLMPayload](t, evs, agent.EventLLM)
	if len(llms) != 3 || llms[0].Cost == nil || *llms[0].Cost != usd(t, "0.00265") || llms[1].ToolCalls[1].Name != "drop_database" || llms[2].FinishReason != llm.FinishStop {
		t.Errorf("llm events: %+v", llms)
	}

	run := f.run(res.RunID)
	if run.Status != store.RunCompleted || run.Outcome != "completed" || run.TerminationReason != "completed" ||
		run.Rounds != 3 || run.ToolCalls != 4 || run.InputTokens != 3900 || run.OutputTokens != 130 ||
		agentconfig.USD(run.Cost) != res.Cost || run.OwnerUsername != "editor" || run.OwnerUID != 2 ||
		run.Configuration != "openai-main" || run.CallerSource != "test" || run.CallerOperation != "loop" ||
		run.Privacy != "metadata" || run.LeaseOwner != "" || run.FinishedAt.IsZero() {
		t.Errorf("run row = %+v", run)
	}

	calls := f.calls(res.RunID)
	if len(calls) != 3 {
		t.Fatalf("%d telemetry rows, want 3", len(calls))
	}
	for i, want := range []struct{ in, out int64 }{{900, 40}, {1400, 30}, {1600, 60}} {
		c := calls[i]
		if !c.Success || c.Configuration != "openai-main" || c.RequestedConfiguration != "openai-main" || c.FallbackIndex != 0 ||
			c.Provider != "openai-main" || c.Model != "openai-main-model" || c.ModelID != "openai-main-large" || c.Source != "test" ||
			c.Operation != "loop" || c.Username != "editor" || c.Attempts != 1 || *c.InputTokens != want.in || *c.OutputTokens != want.out {
			t.Errorf("telemetry row %d = %+v", i, c)
		}
	}
	if *calls[0].Cost+*calls[1].Cost+*calls[2].Cost != int64(res.Cost) {
		t.Errorf("telemetry costs do not add up to the run's %s", res.Cost)
	}
}

// TestLoopAnthropic replays a conversation on the Anthropic wire with the
// real anthropic-sdk-go client: two calls in one turn, then arguments the
// schema refuses and an unknown tool, then the answer.
func TestLoopAnthropic(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureParams{})
	srv := llmtest.NewAnthropic(t,
		llmtest.Calls(
			llmtest.Call("toolu_1", "search_records", `{"query":"warranty","table":"tt_content","limit":2}`),
			llmtest.Call("toolu_2", "get_page_content", `{"uid":5}`),
		).WithUsage(1100, 55),
		llmtest.Calls(
			llmtest.Call("toolu_3", "get_page_content", `{"uid":"five"}`),
			llmtest.Call("toolu_4", "list_passwords", `{}`),
		).WithUsage(1500, 20),
		llmtest.Text("Register the pump to extend the warranty to five years.").WithUsage(1700, 25),
	)
	f.apply(providerDoc("claude", "anthropic", "externalEu", srv, 3, ""))
	req := f.request("claude", "editor", "How long is the warranty?")
	req.Tools = []string{"search_records", "get_page_content", "get_page_tree"}
	res := f.rt.Run(context.Background(), req)
	if res.Outcome != agent.OutcomeCompleted || res.Rounds != 3 || res.ToolCalls != 4 || res.Content != "Register the pump to extend the warranty to five years." {
		t.Fatalf("result = %+v", res)
	}
	golden(t, srv, "anthropic")
	var second struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type      string `json:"type"`
				ToolUseID string `json:"tool_use_id"`
				IsError   bool   `json:"is_error"`
				Content   any    `json:"content"`
			} `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(srv.Request(2).Body, &second); err != nil {
		t.Fatal(err)
	}
	var offered []string
	for _, tl := range second.Tools {
		offered = append(offered, tl.Name)
	}
	// Requested names are a request: get_page_tree is structure
	// (internalConfiguration), which externalEu may receive.
	if !slices.Equal(offered, []string{"get_page_content", "get_page_tree", "search_records"}) {
		t.Errorf("offered %v", offered)
	}
	last := second.Messages[len(second.Messages)-1]
	body, _ := json.Marshal(last)
	if last.Role != "user" || len(last.Content) != 2 || last.Content[0].ToolUseID != "toolu_3" ||
		!strings.Contains(string(body), "invalid arguments") || !strings.Contains(string(body), `\"list_passwords\" is not available`) {
		t.Errorf("the tool results of round 2 as sent: %s", body)
	}
	evs := f.events(res.RunID)
	checkSeq(t, evs)
	checkMetadataOnly(t, evs, "warranty to five")
	if calls := f.calls(res.RunID); len(calls) != 3 || calls[2].Provider != "claude" || *calls[2].OutputTokens != 25 {
		t.Errorf("telemetry: %+v", calls)
	}
}

// TestLoopRateLimitThenSuccess: a 429 with Retry-After is waited out in
// place and the call counts two attempts.
func TestLoopRateLimitThenSuccess(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureParams{})
	srv := llmtest.NewOpenAI(t,
		llmtest.Status(429, "Retry-After", "2"),
		llmtest.Text("Fine.").WithUsage(500, 5),
	)
	f.apply(providerDoc("limited", "openai", "externalGlobal", srv, 3, ""))
	res := f.rt.Run(context.Background(), f.request("limited", "editor", "Hello"))
	if res.Outcome != agent.OutcomeCompleted || res.Content != "Fine." || res.Rounds != 1 {
		t.Fatalf("result = %+v", res)
	}
	if w := f.sleeps.waits(); !slices.Equal(w, []time.Duration{2 * time.Second}) {
		t.Errorf("waits = %v, want the 2s Retry-After", w)
	}
	if len(srv.Requests()) != 2 || string(srv.Request(0).Body) != string(srv.Request(1).Body) {
		t.Error("the retry did not resend the same request")
	}
	llms := payloads[agent.LLMPayload](t, f.events(res.RunID), agent.EventLLM)
	if len(llms) != 1 || llms[0].Attempts != 2 {
		t.Errorf("llm events: %+v", llms)
	}
	if calls := f.calls(res.RunID); len(calls) != 1 || calls[0].Attempts != 2 || !calls[0].Success {
		t.Errorf("telemetry: %+v", calls)
	}
}

// TestLoopServerErrorsThenFallback: three 500s exhaust the primary's
// retries, and the fallback configuration (another provider, wire and
// price) answers.
func TestLoopServerErrorsThenFallback(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureParams{})
	primary := llmtest.NewOpenAI(t, llmtest.Status(500), llmtest.Status(500), llmtest.Status(500))
	backup := llmtest.NewAnthropic(t, llmtest.Text("Answered by the backup.").WithUsage(1000, 100))
	f.apply(strings.ReplaceAll(providerDoc("backup", "anthropic", "externalEu", backup, 0, ""), "input_price: 2.50", "input_price: 3"))
	f.apply(providerDoc("primary", "openai", "externalGlobal", primary, 2, "fallback_chain: [backup]"))
	res := f.rt.Run(context.Background(), f.request("primary", "editor", "Hello"))
	if res.Outcome != agent.OutcomeCompleted || res.Content != "Answered by the backup." {
		t.Fatalf("result = %+v", res)
	}
	// 1000 × $3/M + 100 × $10/M, at the backup's prices.
	if res.Cost != usd(t, "0.004") {
		t.Errorf("cost = %s, want $0.004 at the backup's prices", res.Cost)
	}
	if w := f.sleeps.waits(); !slices.Equal(w, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}) {
		t.Errorf("waits = %v, want the 100ms·2^n backoff", w)
	}
	golden(t, backup, "fallback")
	llms := payloads[agent.LLMPayload](t, f.events(res.RunID), agent.EventLLM)
	if len(llms) != 1 || llms[0].Entry != "backup" || llms[0].Attempts != 4 || len(llms[0].FellBack) != 1 ||
		llms[0].FellBack[0].Entry != "primary" || llms[0].FellBack[0].Class != llm.FailServerError || llms[0].FellBack[0].Attempts != 3 {
		t.Errorf("llm event: %+v", llms)
	}
	calls := f.calls(res.RunID)
	if len(calls) != 2 {
		t.Fatalf("telemetry rows: %+v", calls)
	}
	if c := calls[0]; c.Success || c.ErrorClass != "serverError" || c.Attempts != 3 || c.FallbackIndex != 0 || c.Configuration != "primary" {
		t.Errorf("primary's row = %+v", c)
	}
	if c := calls[1]; !c.Success || c.FallbackIndex != 1 || c.Configuration != "backup" || c.RequestedConfiguration != "primary" ||
		c.Provider != "backup" || *c.Cost != int64(res.Cost) {
		t.Errorf("backup's row = %+v", c)
	}
}

// TestLoopProviderFailure: a 401 is not retried and does not fall back.
func TestLoopProviderFailure(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureParams{})
	primary := llmtest.NewOpenAI(t, llmtest.Status(401))
	backup := llmtest.NewOpenAI(t)
	f.apply(providerDoc("backup", "openai", "externalGlobal", backup, 3, ""))
	f.apply(providerDoc("primary", "openai", "externalGlobal", primary, 3, "fallback_chain: [backup]"))
	res := f.rt.Run(context.Background(), f.request("primary", "editor", "Hello"))
	if res.Outcome != agent.OutcomeFailed || res.Termination != agent.TerminationProviderFailed ||
		res.Error != "The model provider failed (auth, HTTP 401)." {
		t.Fatalf("result = %+v", res)
	}
	if run := f.run(res.RunID); run.Status != store.RunFailed || run.ErrorClass != "auth" || run.Error != res.Error {
		t.Errorf("run row = %+v", run)
	}
	if kinds(f.events(res.RunID)) != "context request llm" {
		t.Errorf("events: %s", kinds(f.events(res.RunID)))
	}
}

// TestLoopContentFilter: with provider-content-filter an answer the
// provider filtered ends the run guardrail_blocked; without it the run
// completes with what the provider sent.
func TestLoopContentFilter(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureParams{})
	srv := llmtest.NewOpenAI(t,
		llmtest.Text("I cannot").WithFinish(llm.FinishContentFilter).WithUsage(300, 2),
		llmtest.Text("I cannot").WithFinish(llm.FinishContentFilter).WithUsage(300, 2),
	)
	f.apply(providerDoc("filtered", "openai", "externalGlobal", srv, 0, "guardrails: [provider-content-filter]"))
	res := f.rt.Run(context.Background(), f.request("filtered", "editor", "Something the provider refuses"))
	if res.Outcome != agent.OutcomeGuardrailBlocked || res.Termination != agent.TerminationPolicyDenied || res.Content != "" ||
		!strings.Contains(res.Error, "provider-content-filter") {
		t.Fatalf("result = %+v", res)
	}
	evs := f.events(res.RunID)
	if kinds(evs) != "context request llm guardrail" {
		t.Errorf("events: %s", kinds(evs))
	}
	g := payloads[agent.GuardrailPayload](t, evs, agent.EventGuardrail)
	if g[0].Guardrail != guardrail.ProviderContentFilter || g[0].Verdict != guardrail.Deny || g[0].Stage != guardrail.StageOutput {
		t.Errorf("guardrail event: %+v", g[0])
	}
	if run := f.run(res.RunID); run.Status != store.RunFailed || run.Outcome != "guardrail_blocked" || run.TerminationReason != "policy_denied" || run.InputTokens != 300 {
		t.Errorf("run row = %+v", run)
	}
	if calls := f.calls(res.RunID); len(calls) != 1 || !calls[0].Success {
		t.Errorf("a filtered answer is still a provider call: %+v", calls)
	}

	f.apply(providerDoc("unfiltered", "openai", "externalGlobal", srv, 0, ""))
	res = f.rt.Run(context.Background(), f.request("unfiltered", "editor", "Something the provider refuses"))
	if res.Outcome != agent.OutcomeCompleted || res.Content != "I cannot" {
		t.Errorf("without the content filter: %+v", res)
	}
}

// TestLoopSecretRedaction plants credentials in the demo site's content,
// the system prompt and the user's message: none reaches the provider,
// and the answer's own credential is redacted.
func TestLoopSecretRedaction(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureParams{})
	const (
		contentKey = "sk-proj-Zq8PlantedInContent0123456789abcd"
		promptKey  = "AKIAIOSFODNN7EXAMPLE"
		userKey    = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
		answerKey  = "sk-ant-api03-AnswerLeak0123456789abcdefghij"
	)
	rw, err := typo3.Open(context.Background(), f.site.DSN, typo3.OpenParams{Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = rw.SQL.ExecContext(context.Background(), "UPDATE tt_content SET bodytext = 'Partner API key: "+contentKey+". "+pageSix+".' WHERE uid = 1")
	_ = rw.Close()
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewOpenAI(t,
		llmtest.Calls(llmtest.Call("call_1", "get_page_content", `{"uid":6}`)).WithUsage(800, 20),
		llmtest.Text("The page mentions a key, "+answerKey+".").WithUsage(900, 20),
	)
	doc := strings.Replace(providerDoc("redacting", "openai", "externalGlobal", srv, 0, "privacy_level: full"),
		"system_prompt: You are the site assistant of Nordlicht Pumps.",
		"system_prompt: \"You are the site assistant of Nordlicht Pumps. Deploy key "+promptKey+".\"", 1)
	f.apply(doc)
	res := f.rt.Run(context.Background(), f.request("redacting", "editor", "My token is "+userKey+"; what is on page 6?"))
	if res.Outcome != agent.OutcomeCompleted {
		t.Fatalf("result = %+v", res)
	}
	srv.AssertNeverSent(t, contentKey, promptKey, userKey)
	sent := string(srv.Request(1).Body)
	for _, marker := range []string{"[REDACTED:openai_key]", "[REDACTED:aws_access_key]", "[REDACTED:github_token]"} {
		if !strings.Contains(sent, marker) {
			t.Errorf("the second request lacks %s: the model should read that something was there", marker)
		}
	}
	if !strings.Contains(sent, pageSix) {
		t.Error("redaction took more than the secret: the page content is gone")
	}
	if strings.Contains(res.Content, answerKey) || !strings.Contains(res.Content, "[REDACTED:anthropic_key]") {
		t.Errorf("answer = %q, want its key redacted", res.Content)
	}
	evs := f.events(res.RunID)
	stages := map[guardrail.Stage]bool{}
	for _, g := range payloads[agent.GuardrailPayload](t, evs, agent.EventGuardrail) {
		if g.Guardrail != guardrail.SecretRedaction || g.Verdict != guardrail.Redact || len(g.Findings) == 0 {
			t.Errorf("guardrail event: %+v", g)
		}
		stages[g.Stage] = true
	}
	for _, s := range []guardrail.Stage{guardrail.StageSystemPrompt, guardrail.StageInput, guardrail.StageToolResult, guardrail.StageOutput} {
		if !stages[s] {
			t.Errorf("no redaction recorded on stage %s", s)
		}
	}
	// Privacy level full keeps content, but only as the provider saw it.
	var full bool
	for _, e := range evs {
		for _, k := range []string{contentKey, promptKey, userKey, answerKey} {
			if strings.Contains(string(e.Payload), k) {
				t.Errorf("event %d (%s) holds a planted secret", e.Seq, e.Kind)
			}
		}
		full = full || strings.Contains(string(e.Payload), pageSix)
	}
	if !full {
		t.Error("privacy level full kept no content")
	}
	req := payloads[agent.RequestPayload](t, evs, agent.EventRequest)
	if len(req[1].MessagesSent) != 4 || req[1].MessagesSent[3].Role != llm.RoleTool {
		t.Errorf("the second request event at privacy level full: %+v", req[1].MessagesSent)
	}
}

// TestLoopPrunesLongTranscript: a long history is pruned by whole turns
// before it is sent, and no tool result loses its call.
func TestLoopPrunesLongTranscript(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureParams{})
	srv := llmtest.NewOpenAI(t, llmtest.Text("Done.").WithUsage(6000, 3))
	f.apply(strings.Replace(providerDoc("small", "openai", "externalGlobal", srv, 0, ""), "context_length: 128000", "context_length: 16000", 1))
	history := transcript(30, 3000)[1:] // the configuration brings the system prompt
	history = append(history, llm.Message{Role: llm.RoleAssistant, Content: "Anything else?"},
		llm.Message{Role: llm.RoleUser, Content: "Summarise the sale pages."})
	req := f.request("small", "editor", "")
	req.Messages = history
	res := f.rt.Run(context.Background(), req)
	if res.Outcome != agent.OutcomeCompleted {
		t.Fatalf("result = %+v", res)
	}
	ctxEv := payloads[agent.ContextPayload](t, f.events(res.RunID), agent.EventContext)[0]
	if !ctxEv.Pruned || ctxEv.DroppedTurns == 0 || ctxEv.Overflow || ctxEv.Sent >= ctxEv.Messages {
		t.Errorf("context event: %+v", ctxEv)
	}
	b := ctxEv.Breakdown
	if b.Budget != b.ContextLength-b.ReservedOutput-b.SafetyMargin || b.EstimatedTokens != b.TranscriptTokens+b.ToolSchemaTokens+b.SystemPromptTokens+b.SkillTokens ||
		b.Remaining != b.Budget-b.EstimatedTokens || b.Remaining < 0 {
		t.Errorf("breakdown: %+v", b)
	}
	sent := messages(t, srv.Request(0))
	if len(sent) != ctxEv.Sent || sent[0]["role"] != "system" || sent[1]["content"] != "Which pages mention the summer sale?" ||
		sent[len(sent)-1]["content"] != "Summarise the sale pages." {
		t.Fatalf("sent %d messages: head %v, last %v", len(sent), sent[:2], sent[len(sent)-1])
	}
	open := map[string]bool{}
	for i, m := range sent {
		if m["role"] == "tool" {
			id, _ := m["tool_call_id"].(string)
			if !open[id] {
				t.Fatalf("message %d answers %q, whose call was not sent", i, id)
			}
			delete(open, id)
			continue
		}
		if len(open) > 0 {
			t.Fatalf("message %d follows calls without results", i)
		}
		calls, _ := m["tool_calls"].([]any)
		for _, c := range calls {
			open[c.(map[string]any)["id"].(string)] = true
		}
	}
}

// TestLoopContextTruncated: a transcript whose last turn alone overflows
// ends the run before any request.
func TestLoopContextTruncated(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureParams{})
	srv := llmtest.NewOpenAI(t)
	f.apply(strings.Replace(providerDoc("tiny", "openai", "externalGlobal", srv, 0, ""), "context_length: 128000", "context_length: 8000", 1))
	res := f.rt.Run(context.Background(), f.request("tiny", "editor", strings.Repeat("Please read all of this. ", 3000)))
	if res.Outcome != agent.OutcomeFailed || res.Termination != agent.TerminationContextTruncated || res.Rounds != 0 {
		t.Fatalf("result = %+v", res)
	}
	if len(srv.Requests()) != 0 {
		t.Error("a request was sent")
	}
	if kinds(f.events(res.RunID)) != "context" || f.run(res.RunID).TerminationReason != "context_truncated" {
		t.Errorf("events %s, row %+v", kinds(f.events(res.RunID)), f.run(res.RunID))
	}
}

// TestLoopTrustZone: an externalGlobal configuration is never offered a
// systemDiagnostics or secretAdjacent tool; a local one is. A fallback to
// an external provider lowers a local configuration to its zone.
func TestLoopTrustZone(t *testing.T) {
	t.Parallel()
	diag := newTestTool("read_error_log", tool.GroupSystem, tool.SystemDiagnostics)
	secret := newTestTool("read_site_credentials", tool.GroupAccounts, tool.SecretAdjacent)
	f := newFixture(t, fixtureParams{extra: []tool.Tool{diag, secret}})
	global := llmtest.NewOpenAI(t, llmtest.Calls(llmtest.Call("c1", "read_error_log", `{}`), llmtest.Call("c2", "read_site_credentials", `{}`)), llmtest.Text("No."))
	local := llmtest.NewOpenAI(t, llmtest.Calls(llmtest.Call("c1", "read_error_log", `{}`), llmtest.Call("c2", "read_site_credentials", `{}`)), llmtest.Text("Yes."))
	mixed := llmtest.NewOpenAI(t, llmtest.Text("Mixed."))
	f.apply(providerDoc("global", "openai", "externalGlobal", global, 0, ""))
	f.apply(providerDoc("local", "openai_compatible", "local", local, 0, ""))
	f.apply(providerDoc("mixed", "openai_compatible", "local", mixed, 0, "fallback_chain: [global]"))

	res := f.rt.Run(context.Background(), f.request("global", "admin", "Show me the error log."))
	if res.Outcome != agent.OutcomeCompleted {
		t.Fatalf("global: %+v", res)
	}
	offered := toolNames(t, global.Request(0))
	if slices.Contains(offered, "read_error_log") || slices.Contains(offered, "read_site_credentials") || len(offered) == 0 {
		t.Errorf("externalGlobal was offered %v", offered)
	}
	if diag.calls.Load() != 0 || secret.calls.Load() != 0 {
		t.Error("a tool the configuration was not offered ran anyway")
	}
	denied, err := f.st.GovernanceEvents(context.Background(), store.ListGovernanceEventsParams{RunID: res.RunID})
	if err != nil {
		t.Fatal(err)
	}
	var zoneDenials []string
	for _, d := range denied {
		if d.Reason == "trust_zone" {
			zoneDenials = append(zoneDenials, d.Tool)
		}
	}
	slices.Sort(zoneDenials)
	if !slices.Contains(zoneDenials, "read_error_log") || !slices.Contains(zoneDenials, "read_site_credentials") {
		t.Errorf("trust-zone denials recorded for the run: %v", zoneDenials)
	}

	res = f.rt.Run(context.Background(), f.request("local", "admin", "Show me the error log."))
	if res.Outcome != agent.OutcomeCompleted || res.ToolCalls != 2 {
		t.Fatalf("local: %+v", res)
	}
	offered = toolNames(t, local.Request(0))
	if !slices.Contains(offered, "read_error_log") || !slices.Contains(offered, "read_site_credentials") {
		t.Errorf("local was offered %v", offered)
	}
	if diag.calls.Load() != 1 || secret.calls.Load() != 1 {
		t.Errorf("local calls ran %d and %d times", diag.calls.Load(), secret.calls.Load())
	}

	res = f.rt.Run(context.Background(), f.request("mixed", "admin", "Show me the error log."))
	if offered := toolNames(t, mixed.Request(0)); res.Outcome != agent.OutcomeCompleted || slices.Contains(offered, "read_error_log") {
		t.Errorf("a local configuration falling back to externalGlobal was offered %v", offered)
	}
}

// TestLoopBudgetExhausted: a configuration's daily request budget stops
// the run before the provider call.
func TestLoopBudgetExhausted(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureParams{})
	srv := llmtest.NewOpenAI(t, llmtest.Text("First.").WithUsage(100, 5))
	f.apply(providerDoc("capped", "openai", "externalGlobal", srv, 0, "budgets:\n  requests_per_day: 1"))
	if res := f.rt.Run(context.Background(), f.request("capped", "editor", "One")); res.Outcome != agent.OutcomeCompleted {
		t.Fatalf("first run: %+v", res)
	}
	res := f.rt.Run(context.Background(), f.request("capped", "editor", "Two"))
	if res.Outcome != agent.OutcomeFailed || res.Termination != agent.TerminationBudgetExhausted || res.Rounds != 0 ||
		!strings.Contains(res.Error, "daily requests budget") {
		t.Fatalf("second run: %+v", res)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("the provider got %d requests, want only the first run's", n)
	}
	if kinds(f.events(res.RunID)) != "context request" || len(f.calls(res.RunID)) != 0 {
		t.Errorf("events %s, telemetry %v", kinds(f.events(res.RunID)), f.calls(res.RunID))
	}
	if run := f.run(res.RunID); run.Status != store.RunFailed || run.TerminationReason != "budget_exhausted" {
		t.Errorf("run row = %+v", run)
	}
}

// TestLoopApproval: an approval-bound call stops the whole turn before
// any call runs, with the pending turn sealed in the run row.
func TestLoopApproval(t *testing.T) {
	t.Parallel()
	writer := newTestTool("update_page_title", tool.GroupContent, tool.EditorContent, func(s *tool.Spec) { s.Effect = tool.IdempotentWrite })
	f := newFixture(t, fixtureParams{extra: []tool.Tool{writer}})
	calls := []llm.ToolCall{
		llmtest.Call("call_1", "search_records", `{"query":"Aqua"}`),
		llmtest.Call("call_2", "update_page_title", `{}`),
	}
	srv := llmtest.NewOpenAI(t, llmtest.Calls(calls...).WithUsage(400, 20))
	f.apply(providerDoc("writer", "openai", "externalGlobal", srv, 0, ""))
	res := f.rt.Run(context.Background(), f.request("writer", "editor", "Rename page 6."))
	if res.Outcome != agent.OutcomeAwaitingApproval || res.Pending == nil || res.ToolCalls != 0 || res.Rounds != 1 {
		t.Fatalf("result = %+v", res)
	}
	b, _ := json.Marshal(calls)
	sum := sha256.Sum256(b)
	if res.Pending.Digest != hex.EncodeToString(sum[:]) || len(res.Pending.Calls) != 2 {
		t.Errorf("pending = %+v", res.Pending)
	}
	if writer.calls.Load() != 0 {
		t.Error("the approval-bound tool ran")
	}
	evs := f.events(res.RunID)
	if kinds(evs) != "context request llm approval" {
		t.Errorf("events: %s (no call of the turn may run)", kinds(evs))
	}
	run := f.run(res.RunID)
	if run.Status != store.RunWaitingForApproval || run.Outcome != "awaiting_approval" || run.TurnDigest != res.Pending.Digest ||
		!run.HasSuspendedState || run.LeaseOwner != "" || !run.FinishedAt.IsZero() {
		t.Errorf("run row = %+v", run)
	}
	sealed, err := f.st.RunSuspendedState(context.Background(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sealed, "update_page_title") {
		t.Error("the suspended state is stored in the clear")
	}
	plain, err := f.keyring.Open(sealed, "agent_run:"+res.RunID)
	if err != nil {
		t.Fatalf("the suspended state does not open for its run: %v", err)
	}
	if !strings.Contains(string(plain), `"pending"`) || !strings.Contains(string(plain), "Rename page 6.") {
		t.Errorf("suspended state: %s", plain)
	}
	if _, err := f.keyring.Open(sealed, "agent_run:other"); err == nil {
		t.Error("the suspended state opens for another run")
	}
}

// TestLoopApprovalWithoutKeyring: without a master key the pending turn
// cannot be kept, so the run fails rather than waiting for nothing.
func TestLoopApprovalWithoutKeyring(t *testing.T) {
	t.Parallel()
	writer := newTestTool("update_page_title", tool.GroupContent, tool.EditorContent, func(s *tool.Spec) { s.Effect = tool.NonIdempotentWrite })
	f := newFixture(t, fixtureParams{extra: []tool.Tool{writer}, noKeyring: true})
	srv := llmtest.NewOpenAI(t, llmtest.Calls(llmtest.Call("c", "update_page_title", `{}`)))
	f.apply(providerDoc("writer", "openai", "externalGlobal", srv, 0, ""))
	res := f.rt.Run(context.Background(), f.request("writer", "editor", "Rename page 6."))
	if res.Outcome != agent.OutcomeSuspendFailed || res.Pending != nil || writer.calls.Load() != 0 {
		t.Fatalf("result = %+v", res)
	}
	if run := f.run(res.RunID); run.Status != store.RunFailed || run.HasSuspendedState || run.Outcome != "suspend_failed" {
		t.Errorf("run row = %+v", run)
	}
}

// TestLoopInput: a tool that needs a person's input stops the run
// awaiting_input with its schema.
func TestLoopInput(t *testing.T) {
	t.Parallel()
	schema := json.RawMessage(`{"type":"object","properties":{"choice":{"type":"string","enum":["a","b"]}}}`)
	ask := newTestTool("ask_editor", tool.GroupContent, tool.EditorContent, func(s *tool.Spec) { s.InputRequest = schema })
	f := newFixture(t, fixtureParams{extra: []tool.Tool{ask}})
	srv := llmtest.NewOpenAI(t, llmtest.Calls(llmtest.Call("c1", "get_page_content", `{"uid":6}`), llmtest.Call("c2", "ask_editor", `{}`)))
	f.apply(providerDoc("asking", "openai", "externalGlobal", srv, 0, ""))
	res := f.rt.Run(context.Background(), f.request("asking", "editor", "Which variant?"))
	if res.Outcome != agent.OutcomeAwaitingInput || res.Pending == nil || res.Pending.InputTool != "ask_editor" ||
		string(res.Pending.InputSchema) != string(schema) || ask.calls.Load() != 0 || res.ToolCalls != 0 {
		t.Fatalf("result = %+v", res)
	}
	if run := f.run(res.RunID); run.Status != store.RunWaitingForInput || run.TurnDigest != res.Pending.Digest {
		t.Errorf("run row = %+v", run)
	}
	in := payloads[agent.InputPayload](t, f.events(res.RunID), agent.EventInput)
	if len(in) != 1 || in[0].Tool != "ask_editor" || in[0].CallID != "c2" {
		t.Errorf("input event: %+v", in)
	}
}

// TestLoopMaxRounds: at the cap with calls pending, one final call
// without tools gives the answer and the run is truncated.
func TestLoopMaxRounds(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureParams{})
	srv := llmtest.NewOpenAI(t,
		llmtest.Calls(llmtest.Call("c1", "search_records", `{"query":"pump"}`)).WithUsage(100, 10),
		llmtest.Calls(llmtest.Call("c2", "get_page_content", `{"uid":5}`)).WithUsage(200, 10),
		llmtest.Text("Here is what I found so far.").WithUsage(300, 10),
	)
	f.apply(providerDoc("short", "openai", "externalGlobal", srv, 0, "max_rounds: 2"))
	res := f.rt.Run(context.Background(), f.request("short", "editor", "Tell me everything."))
	if res.Outcome != agent.OutcomeCompleted || res.Termination != agent.TerminationMaxIterations || !res.Truncated ||
		res.Rounds != 3 || res.ToolCalls != 2 || res.Content != "Here is what I found so far." {
		t.Fatalf("result = %+v", res)
	}
	if !srv.Request(0).Has("tools") || !srv.Request(1).Has("tools") || srv.Request(2).Has("tools") {
		t.Error("the final call must be the only one without a tools field")
	}
	reqs := payloads[agent.RequestPayload](t, f.events(res.RunID), agent.EventRequest)
	if len(reqs) != 3 || reqs[2].Final != true || len(reqs[2].Tools) != 0 {
		t.Errorf("request events: %+v", reqs)
	}
	if run := f.run(res.RunID); !run.Truncated || run.TerminationReason != "max_iterations" {
		t.Errorf("run row = %+v", run)
	}
	// A request may lower the cap but never raise it past 20.
	over := f.request("short", "editor", "Again.")
	over.MaxRounds = 1
	srv.Push(llmtest.Calls(llmtest.Call("c3", "search_records", `{"query":"pump"}`)), llmtest.Text("Short."))
	if res := f.rt.Run(context.Background(), over); res.Rounds != 2 || !res.Truncated {
		t.Errorf("MaxRounds 1: %+v", res)
	}
}

// TestLoopNoTools: an empty offer sends no tools field at all.
func TestLoopNoTools(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureParams{})
	srv := llmtest.NewOpenAI(t, llmtest.Text("Hello."), llmtest.Text("Hello again."))
	f.apply(providerDoc("plain", "openai", "externalGlobal", srv, 0, ""))
	req := f.request("plain", "editor", "Hi")
	req.Tools = []string{}
	if res := f.rt.Run(context.Background(), req); res.Outcome != agent.OutcomeCompleted || res.Content != "Hello." {
		t.Fatalf("result = %+v", res)
	}
	// Asking only for tools the configuration may not have is no grant.
	req.Tools = []string{"get_full_tca", "no_such_tool"}
	if res := f.rt.Run(context.Background(), req); res.Outcome != agent.OutcomeCompleted {
		t.Fatalf("result = %+v", res)
	}
	for i := range 2 {
		if srv.Request(i).Has("tools") || srv.Request(i).Has("tool_choice") {
			t.Errorf("request %d has a tools field: %s", i, srv.Request(i).Body)
		}
	}
}

// TestLoopCancelled: a run whose context ends stops at the next step and
// its row says cancelled.
func TestLoopCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopper := newTestTool("stop_everything", tool.GroupContent, tool.EditorContent)
	stopper.run = func(context.Context, tool.Call, map[string]any) (tool.Result, error) {
		cancel()
		return tool.Text("stopping"), nil
	}
	f := newFixture(t, fixtureParams{extra: []tool.Tool{stopper}})
	srv := llmtest.NewOpenAI(t, llmtest.Calls(llmtest.Call("c1", "stop_everything", `{}`), llmtest.Call("c2", "search_records", `{"query":"pump"}`)))
	f.apply(providerDoc("cancel", "openai", "externalGlobal", srv, 0, ""))
	res := f.rt.Run(ctx, f.request("cancel", "editor", "Go."))
	if res.Outcome != agent.OutcomeCancelled || res.Termination != agent.TerminationCancelled || res.ToolCalls != 1 {
		t.Fatalf("result = %+v", res)
	}
	run := f.run(res.RunID)
	if run.Status != store.RunCancelled || run.ToolCalls != 1 || run.FinishedAt.IsZero() {
		t.Errorf("run row = %+v", run)
	}
	if kinds(f.events(res.RunID)) != "context request llm tool" {
		t.Errorf("events: %s", kinds(f.events(res.RunID)))
	}
}

// TestLoopBadConfiguration: runs that cannot start are still rows.
func TestLoopBadConfiguration(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureParams{})
	res := f.rt.Run(context.Background(), agent.Request{Actor: f.user("editor")})
	if res.Outcome != agent.OutcomeFailed || res.RunID == "" || res.Error != "The run has no configuration." {
		t.Fatalf("no configuration: %+v", res)
	}
	srv := llmtest.NewOpenAI(t)
	f.apply(strings.Replace(providerDoc("keyless", "openai", "externalGlobal", srv, 0, ""), "env:LLMTEST_KEY", "env:UNSET_KEY", 1))
	res = f.rt.Run(context.Background(), f.request("keyless", "editor", "Hi"))
	if res.Outcome != agent.OutcomeFailed || !strings.Contains(res.Error, "UNSET_KEY is not set") || f.run(res.RunID).Status != store.RunFailed {
		t.Fatalf("missing key: %+v", res)
	}
}

// toolNames lists the tools field of an OpenAI-wire request.
func toolNames(t testing.TB, r llmtest.Request) []string {
	t.Helper()
	var body struct {
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tl := range body.Tools {
		out = append(out, tl.Function.Name)
	}
	return out
}

// TestLoopCancelledElsewhere: a run settled by another process (a cancel
// from the UI) is no longer the loop's: it stops at its next write, makes
// no further call and leaves the row as the other process wrote it.
func TestLoopCancelledElsewhere(t *testing.T) {
	t.Parallel()
	var f *fixture
	var runID string
	other := newTestTool("cancel_from_elsewhere", tool.GroupContent, tool.EditorContent)
	other.run = func(ctx context.Context, call tool.Call, _ map[string]any) (tool.Result, error) {
		runID = call.RunID
		_, err := f.st.SettleRun(ctx, store.SettleRunParams{ID: call.RunID, Status: store.RunCancelled, Outcome: "cancelled", TerminationReason: "cancelled"})
		return tool.Text("done"), err
	}
	f = newFixture(t, fixtureParams{extra: []tool.Tool{other}})
	srv := llmtest.NewOpenAI(t, llmtest.Calls(llmtest.Call("c1", "cancel_from_elsewhere", `{}`)))
	f.apply(providerDoc("elsewhere", "openai", "externalGlobal", srv, 0, ""))
	res := f.rt.Run(context.Background(), f.request("elsewhere", "editor", "Go."))
	if res.Outcome != agent.OutcomeCancelled || res.RunID != runID || res.ToolCalls != 1 {
		t.Fatalf("result = %+v", res)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests; a cancelled run must not call again", n)
	}
	run := f.run(res.RunID)
	if run.Status != store.RunCancelled || run.Rounds != 0 {
		t.Errorf("run row = %+v; the loop must not write over the cancel", run)
	}
	if kinds(f.events(res.RunID)) != "context request" {
		t.Errorf("events after the cancel: %s", kinds(f.events(res.RunID)))
	}
}

// TestLoopRoundCeiling: a request cannot raise the cap past 20.
func TestLoopRoundCeiling(t *testing.T) {
	t.Parallel()
	noop := newTestTool("noop", tool.GroupContent, tool.EditorContent)
	f := newFixture(t, fixtureParams{extra: []tool.Tool{noop}})
	var rounds []llmtest.Round
	for range agent.MaxRounds {
		rounds = append(rounds, llmtest.Calls(llmtest.Call("", "noop", `{}`)))
	}
	srv := llmtest.NewOpenAI(t, append(rounds, llmtest.Text("Stopped."))...)
	f.apply(providerDoc("long", "openai", "externalGlobal", srv, 0, ""))
	req := f.request("long", "editor", "Loop.")
	req.MaxRounds = 50
	res := f.rt.Run(context.Background(), req)
	if res.Rounds != agent.MaxRounds+1 || res.ToolCalls != agent.MaxRounds || !res.Truncated || res.Content != "Stopped." {
		t.Fatalf("result = %+v", res)
	}
	// Calls sent without ids get one, so every result pairs with its call.
	last := messages(t, srv.Request(agent.MaxRounds))
	result, call := last[len(last)-1], last[len(last)-2]
	calls, _ := call["tool_calls"].([]any)
	if id, _ := result["tool_call_id"].(string); id == "" || len(calls) != 1 || calls[0].(map[string]any)["id"] != id {
		t.Errorf("the last tool result %v does not answer the call before it %v", result, call)
	}
}

// TestLoopUserBudget: a backend user's own budget stops that user's run
// and no one else's.
func TestLoopUserBudget(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureParams{})
	srv := llmtest.NewOpenAI(t, llmtest.Text("For the admin.").WithUsage(10, 2))
	f.apply(providerDoc("shared", "openai", "externalGlobal", srv, 0, ""))
	f.apply("budgets:\n  - user: editor\n    tokens_per_day: 10\n")
	res := f.rt.Run(context.Background(), f.request("shared", "editor", "A question far longer than ten tokens, surely."))
	if res.Termination != agent.TerminationBudgetExhausted || !strings.Contains(res.Error, `tokens budget of user "editor"`) {
		t.Fatalf("editor: %+v", res)
	}
	if res := f.rt.Run(context.Background(), f.request("shared", "admin", "Same question.")); res.Outcome != agent.OutcomeCompleted {
		t.Fatalf("admin: %+v", res)
	}
}

// TestLoopOnEvent: the live view sees every event, in order, before it
// is stored, and a panicking view fails the run instead of the caller.
func TestLoopOnEvent(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureParams{})
	srv := llmtest.NewOpenAI(t,
		llmtest.Calls(llmtest.Call("c1", "search_records", `{"query":"pump"}`)),
		llmtest.Text("Done."),
		llmtest.Text("Never seen."),
	)
	f.apply(providerDoc("live", "openai", "externalGlobal", srv, 0, ""))
	req := f.request("live", "editor", "Go.")
	var seen []agent.Event
	req.OnEvent = func(e agent.Event) { seen = append(seen, e) }
	res := f.rt.Run(context.Background(), req)
	stored := f.events(res.RunID)
	if len(seen) != len(stored) {
		t.Fatalf("saw %d events, stored %d", len(seen), len(stored))
	}
	for i, e := range seen {
		if e.Seq != stored[i].Seq || string(e.Kind) != stored[i].Kind || e.RunID != res.RunID || !e.At.Equal(stored[i].CreatedAt) {
			t.Errorf("event %d seen as %+v, stored as %+v", i, e, stored[i])
		}
	}
	if p, ok := seen[3].Payload.(agent.ToolPayload); !ok || p.Tool != "search_records" {
		t.Errorf("the tool event's payload is %T %+v", seen[3].Payload, seen[3].Payload)
	}

	req.OnEvent = func(e agent.Event) {
		if e.Kind == agent.EventLLM {
			panic("the view broke")
		}
	}
	res = f.rt.Run(context.Background(), req)
	if res.Outcome != agent.OutcomeFailed || res.RunID == "" || !strings.Contains(res.Error, "internal error") {
		t.Fatalf("panicking view: %+v", res)
	}
	if run := f.run(res.RunID); run.Status != store.RunFailed || run.ErrorClass != "internal" {
		t.Errorf("run row = %+v", run)
	}
	if !strings.Contains(f.logs.String(), "the view broke") {
		t.Error("the panic was not logged")
	}
}

// TestLoopSystemPrompt: the configuration's prompt comes first, then the
// caller's own system text, in one system message, both screened.
func TestLoopSystemPrompt(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureParams{})
	srv := llmtest.NewOpenAI(t, llmtest.Text("Hi."))
	f.apply(providerDoc("prompted", "openai", "externalGlobal", srv, 0, ""))
	req := f.request("prompted", "editor", "")
	req.Messages = []llm.Message{
		{Role: llm.RoleSystem, Content: "Answer in German. Bearer abcdefghijklmnopqrstuvwxyz0123"},
		{Role: llm.RoleUser, Content: "Hallo"},
	}
	if res := f.rt.Run(context.Background(), req); res.Outcome != agent.OutcomeCompleted {
		t.Fatalf("result = %+v", res)
	}
	sent := messages(t, srv.Request(0))
	if len(sent) != 2 || sent[0]["role"] != "system" ||
		sent[0]["content"] != "You are the site assistant of Nordlicht Pumps.\n\nAnswer in German. Bearer [REDACTED:bearer_token]" {
		t.Errorf("sent %v", sent)
	}
}

// TestLoopEnforcementMode: the operator's enforcement mode, read with the
// overrides at the offer, holds for the whole turn: observe offers and
// runs a tool above the zone's ceiling (recorded as tool_observed), and
// the next run after switching back to enforce neither offers nor runs it.
func TestLoopEnforcementMode(t *testing.T) {
	t.Parallel()
	diag := newTestTool("probe_diag", tool.GroupSystem, tool.SystemDiagnostics)
	f := newFixture(t, fixtureParams{extra: []tool.Tool{diag}})
	srv := llmtest.NewOpenAI(t,
		llmtest.Calls(llmtest.Call("c1", "probe_diag", `{}`)), llmtest.Text("Observed."),
		llmtest.Calls(llmtest.Call("c2", "probe_diag", `{}`)), llmtest.Text("Enforced."),
	)
	f.apply(providerDoc("global", "openai", "externalGlobal", srv, 0, ""))
	ctx := context.Background()
	for _, c := range []struct {
		mode  gate.Enforcement
		calls int64
		kind  string
	}{{gate.Observe, 1, gate.EventToolObserved}, {gate.Enforce, 1, gate.EventToolDenied}} {
		if _, err := f.st.SetSetting(ctx, store.SetSettingParams{Key: gate.EnforcementSetting, Value: string(c.mode)}); err != nil {
			t.Fatal(err)
		}
		req := f.request("global", "admin", "Check the system.")
		req.Tools = []string{"probe_diag"}
		res := f.rt.Run(ctx, req)
		if res.Outcome != agent.OutcomeCompleted || diag.calls.Load() != c.calls {
			t.Fatalf("%s: %+v, the tool ran %d times in all, want %d", c.mode, res, diag.calls.Load(), c.calls)
		}
		evs, err := f.st.GovernanceEvents(ctx, store.ListGovernanceEventsParams{RunID: res.RunID})
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 || evs[len(evs)-1].Kind != c.kind || evs[len(evs)-1].Tool != "probe_diag" {
			t.Errorf("%s: governance events %+v, want the first to be %s of probe_diag", c.mode, evs, c.kind)
		}
	}
}
