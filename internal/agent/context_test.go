package agent_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/llm"
)

// transcript is a system prompt, a user question and n turns, each an
// assistant message with two calls and their two results of size bytes.
func transcript(n, size int) []llm.Message {
	msgs := []llm.Message{
		{Role: llm.RoleSystem, Content: "You answer questions about a TYPO3 site."},
		{Role: llm.RoleUser, Content: "Which pages mention the summer sale?"},
	}
	for i := range n {
		a, b := fmt.Sprintf("call_%d_a", i), fmt.Sprintf("call_%d_b", i)
		msgs = append(msgs,
			llm.Message{Role: llm.RoleAssistant, Content: "Looking.", ToolCalls: []llm.ToolCall{
				{ID: a, Name: "search_records", Arguments: `{"table":"pages","q":"sale"}`},
				{ID: b, Name: "get_page_content", Arguments: fmt.Sprintf(`{"uid":%d}`, i+1)},
			}},
			llm.Message{Role: llm.RoleTool, ToolCallID: a, Content: strings.Repeat("r", size)},
			llm.Message{Role: llm.RoleTool, ToolCallID: b, Content: strings.Repeat("p", size)},
		)
	}
	return msgs
}

// checkPaired fails when a tool result lacks its call or a call its result.
func checkPaired(t *testing.T, msgs []llm.Message) {
	t.Helper()
	open := map[string]bool{}
	for i, m := range msgs {
		if m.Role == llm.RoleTool {
			if !open[m.ToolCallID] {
				t.Fatalf("message %d answers call %q, which no kept assistant message made", i, m.ToolCallID)
			}
			delete(open, m.ToolCallID)
			continue
		}
		if len(open) > 0 {
			t.Fatalf("message %d follows calls without results: %v", i, open)
		}
		for _, c := range m.ToolCalls {
			open[c.ID] = true
		}
	}
	if len(open) > 0 {
		t.Fatalf("the transcript ends with calls without results: %v", open)
	}
}

func checkBreakdown(t *testing.T, b agent.Breakdown) {
	t.Helper()
	if b.Budget != b.ContextLength-b.ReservedOutput-b.SafetyMargin {
		t.Errorf("budget %d ≠ %d − %d − %d", b.Budget, b.ContextLength, b.ReservedOutput, b.SafetyMargin)
	}
	if sum := b.TranscriptTokens + b.ToolSchemaTokens + b.SystemPromptTokens + b.SkillTokens; sum != b.EstimatedTokens {
		t.Errorf("estimated %d ≠ the sum of its parts %d", b.EstimatedTokens, sum)
	}
	if b.Remaining != b.Budget-b.EstimatedTokens {
		t.Errorf("remaining %d ≠ %d − %d", b.Remaining, b.Budget, b.EstimatedTokens)
	}
}

func TestFitPrunesWholeTurnsWithoutOrphans(t *testing.T) {
	t.Parallel()
	msgs := transcript(30, 2000)
	orig := slices.Clone(msgs)
	tools := []llm.ToolDef{{Name: "search_records", Description: "Searches records.", Parameters: []byte(`{"type":"object"}`)}}
	fit := agent.Fit(agent.FitParams{Messages: msgs, Tools: tools, ContextLength: 16384, MaxTokens: 1000, Calibration: agent.InitialCalibration})

	if !slices.EqualFunc(msgs, orig, messagesEqual) {
		t.Fatal("Fit changed its input")
	}
	if !fit.Pruned || fit.Overflow {
		t.Fatalf("pruned=%v overflow=%v, want a pruned fit without overflow", fit.Pruned, fit.Overflow)
	}
	if fit.DroppedTurns+fit.KeptTurns != 30 || fit.KeptTurns < 1 {
		t.Errorf("dropped %d + kept %d turns, want 30 in all", fit.DroppedTurns, fit.KeptTurns)
	}
	// The head survives, then exactly the newest KeptTurns turns, whole.
	want := append(slices.Clone(msgs[:2]), msgs[len(msgs)-3*fit.KeptTurns:]...)
	if !slices.EqualFunc(fit.Messages, want, messagesEqual) {
		t.Errorf("kept %d messages; want the head and the last %d turns", len(fit.Messages), fit.KeptTurns)
	}
	checkPaired(t, fit.Messages)
	checkBreakdown(t, fit.Breakdown)
	b := fit.Breakdown
	if b.EstimatedTokens > b.Budget || b.ToolSchemaTokens == 0 || b.SystemPromptTokens == 0 {
		t.Errorf("breakdown %+v: want a fit within budget that counts the tools and the system prompt", b)
	}
	// One more turn would not have fitted: pruning stops as soon as it fits.
	bigger := agent.Fit(agent.FitParams{Messages: append(slices.Clone(msgs[:2]), msgs[len(msgs)-3*(fit.KeptTurns+1):]...),
		Tools: tools, ContextLength: 16384, MaxTokens: 1000, Calibration: agent.InitialCalibration})
	if bigger.DroppedTurns != 1 {
		t.Errorf("with one more turn, %d turns are dropped; want exactly 1", bigger.DroppedTurns)
	}
}

func TestFitEstimate(t *testing.T) {
	t.Parallel()
	// 35 prose bytes = 10 tokens + 8; 25 dense bytes = 10 tokens + 8.
	msgs := []llm.Message{
		{Role: llm.RoleUser, Content: strings.Repeat("a", 35)},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c", Name: "t", Arguments: strings.Repeat("x", 23)}}},
		{Role: llm.RoleTool, ToolCallID: "c", Content: strings.Repeat("d", 24)},
	}
	fit := agent.Fit(agent.FitParams{Messages: msgs, ContextLength: 100000, Calibration: 1})
	// user 18; assistant 8 + 12 + 25/2.5 = 30; tool 8 + 25/2.5 = 18.
	if fit.RawTokens != 66 || fit.Breakdown.TranscriptTokens != 66 {
		t.Errorf("raw %v, transcript %d; want 66", fit.RawTokens, fit.Breakdown.TranscriptTokens)
	}
	cal := agent.Fit(agent.FitParams{Messages: msgs, ContextLength: 100000, Calibration: 1.5})
	if cal.Breakdown.TranscriptTokens != 99 {
		t.Errorf("calibrated transcript = %d, want ceil(66 × 1.5) = 99", cal.Breakdown.TranscriptTokens)
	}
	low := agent.Fit(agent.FitParams{Messages: msgs, ContextLength: 100000, Calibration: 0.5})
	if low.Calibration != 1 || low.Breakdown.TranscriptTokens != 66 {
		t.Errorf("a calibration below 1 must count as 1: %v, %d", low.Calibration, low.Breakdown.TranscriptTokens)
	}
}

func TestFitBudget(t *testing.T) {
	t.Parallel()
	msgs := transcript(1, 10)
	for _, c := range []struct {
		name                             string
		ctx, maxTokens, maxOutput        int
		wantCtx, wantReserve, wantMargin int
	}{
		{"max tokens", 100000, 4000, 8000, 100000, 4000, 3000},
		{"model output cap", 100000, 0, 8000, 100000, 8000, 3000},
		{"2 % of the window", 100000, 0, 0, 100000, 2000, 3000},
		{"at least 1000", 20000, 0, 0, 20000, 1000, 600},
		{"unknown window", 0, 0, 0, agent.DefaultContextLength, 1000, int(math.Ceil(0.03 * agent.DefaultContextLength))},
	} {
		b := agent.Fit(agent.FitParams{Messages: msgs, ContextLength: c.ctx, MaxTokens: c.maxTokens, MaxOutput: c.maxOutput}).Breakdown
		if b.ContextLength != c.wantCtx || b.ReservedOutput != c.wantReserve || b.SafetyMargin != c.wantMargin {
			t.Errorf("%s: %+v, want ctx %d reserve %d margin %d", c.name, b, c.wantCtx, c.wantReserve, c.wantMargin)
		}
		checkBreakdown(t, b)
	}
	// A budget ≤ 0 means no fitting: everything passes, nothing overflows.
	fit := agent.Fit(agent.FitParams{Messages: transcript(20, 5000), ContextLength: 1000, MaxTokens: 2000})
	if fit.Pruned || fit.Overflow || len(fit.Messages) != 2+60 {
		t.Errorf("budget ≤ 0: pruned=%v overflow=%v sent %d", fit.Pruned, fit.Overflow, len(fit.Messages))
	}
}

func TestFitOverflowAtTheFloor(t *testing.T) {
	t.Parallel()
	// Each turn alone is larger than the window: even the last one does not fit.
	fit := agent.Fit(agent.FitParams{Messages: transcript(4, 40000), ContextLength: 16384, MaxTokens: 1000})
	if !fit.Overflow || fit.KeptTurns != 1 || fit.DroppedTurns != 3 {
		t.Errorf("overflow=%v kept=%d dropped=%d; want overflow with only the last turn left", fit.Overflow, fit.KeptTurns, fit.DroppedTurns)
	}
	checkPaired(t, fit.Messages)
	checkBreakdown(t, fit.Breakdown)
	if fit.Breakdown.Remaining >= 0 {
		t.Errorf("remaining %d, want < 0 at an overflow", fit.Breakdown.Remaining)
	}
}

func TestFitNeverOrphans(t *testing.T) {
	t.Parallel()
	// The second turn has lost the result of its second call. Dropping the
	// first turn would send that dangling call, so Fit keeps the original
	// and reports an overflow instead.
	msgs := transcript(3, 8000)
	broken := slices.Delete(slices.Clone(msgs), 2+3+2, 2+3+3)
	fit := agent.Fit(agent.FitParams{Messages: broken, ContextLength: 12000, MaxTokens: 500})
	if !fit.Overflow || fit.Pruned || len(fit.Messages) != len(broken) {
		t.Errorf("overflow=%v pruned=%v sent %d of %d; want the original kept and an overflow", fit.Overflow, fit.Pruned, len(fit.Messages), len(broken))
	}
	// The same transcript, whole, is pruned normally.
	if fit := agent.Fit(agent.FitParams{Messages: msgs, ContextLength: 12000, MaxTokens: 500}); !fit.Pruned || fit.Overflow {
		t.Errorf("the intact transcript: pruned=%v overflow=%v", fit.Pruned, fit.Overflow)
	}
}

func TestFitCapsToolResults(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("ä", agent.MaxToolResultBytes) // 2 bytes a rune
	msgs := []llm.Message{
		{Role: llm.RoleUser, Content: "q"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c", Name: "t"}}},
		{Role: llm.RoleTool, ToolCallID: "c", Content: big + "x"},
	}
	fit := agent.Fit(agent.FitParams{Messages: msgs, ContextLength: 1 << 20})
	got := fit.Messages[2].Content
	if fit.CappedResults != 1 || !strings.HasSuffix(got, "[tool result truncated at 50000 bytes]") || !utf8.ValidString(got) {
		t.Fatalf("capped %d, content ends %q", fit.CappedResults, got[len(got)-60:])
	}
	if body := strings.TrimSuffix(got, "…[tool result truncated at 50000 bytes]"); len(body) > agent.MaxToolResultBytes || len(body) < agent.MaxToolResultBytes-1 {
		t.Errorf("kept %d bytes of the result, want up to %d on a rune boundary", len(body), agent.MaxToolResultBytes)
	}
	if msgs[2].Content != big+"x" {
		t.Error("Fit changed its input's tool result")
	}
}

func TestCalibrateOnlyGrows(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cal  float64
		real int
		raw  float64
		want float64
	}{
		{agent.InitialCalibration, 1300, 1000, 1.3},
		{1.3, 1100, 1000, 1.3},
		{1.3, 0, 1000, 1.3},
		{0.5, 900, 1000, 1},
		{1.2, 500, 0, 1.2},
	} {
		if got := agent.Calibrate(c.cal, c.real, c.raw); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("Calibrate(%v, %d, %v) = %v, want %v", c.cal, c.real, c.raw, got, c.want)
		}
	}
}

func messagesEqual(a, b llm.Message) bool {
	return a.Role == b.Role && a.Content == b.Content && a.ToolCallID == b.ToolCallID && slices.Equal(a.ToolCalls, b.ToolCalls)
}
