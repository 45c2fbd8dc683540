package agent

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/t3agent/t3agent/internal/llm"
)

// Context window constants. There is no tokenizer: the estimate is
// calibrated against the provider's own prompt counts as the run goes.
const (
	// DefaultContextLength is assumed when the model does not say.
	DefaultContextLength = 8192
	// InitialCalibration is the factor a run starts with: the byte
	// ratios undercount for most tokenizers, so the estimate starts high.
	InitialCalibration = 1.15
	// MaxToolResultBytes caps each tool result in the transcript.
	MaxToolResultBytes = 50000

	proseBytesPerToken = 3.5
	denseBytesPerToken = 2.5
	tokensPerMessage   = 8
	tokensPerCall      = 12
)

// toolResultMarker ends a tool result cut at MaxToolResultBytes.
const toolResultMarker = "…[tool result truncated at 50000 bytes]"

// FitParams are the parameters of Fit.
type FitParams struct {
	// Messages is the transcript to send: the head (through the first
	// user message), then turns.
	Messages []llm.Message
	// Tools are the tool definitions sent with it; their JSON counts.
	Tools []llm.ToolDef
	// ContextLength is the model's window in tokens; 0 means
	// DefaultContextLength.
	ContextLength int
	// MaxTokens is the configured answer length, reserved for output;
	// 0 falls back to MaxOutput, then to max(1000, 2 % of the window).
	MaxTokens int
	MaxOutput int
	// Calibration multiplies the byte estimate; below 1 counts as 1.
	Calibration float64
}

// Breakdown is how the window is spent, in estimated tokens. It adds up
// exactly: Budget = ContextLength − ReservedOutput − SafetyMargin,
// EstimatedTokens = TranscriptTokens + ToolSchemaTokens +
// SystemPromptTokens + SkillTokens, Remaining = Budget − EstimatedTokens.
type Breakdown struct {
	ContextLength      int `json:"contextLength"`
	ReservedOutput     int `json:"reservedOutput"`
	SafetyMargin       int `json:"safetyMargin"`
	Budget             int `json:"budget"`
	TranscriptTokens   int `json:"transcriptTokens"`
	ToolSchemaTokens   int `json:"toolSchemaTokens"`
	SystemPromptTokens int `json:"systemPromptTokens"`
	SkillTokens        int `json:"skillTokens"`
	EstimatedTokens    int `json:"estimatedTokens"`
	Remaining          int `json:"remaining"`
}

// Fitted is the transcript Fit chose to send.
type Fitted struct {
	Messages []llm.Message
	// Pruned reports whether turns were dropped.
	Pruned       bool
	DroppedTurns int
	KeptTurns    int
	// CappedResults counts tool results cut at MaxToolResultBytes.
	CappedResults int
	// Overflow reports that even the floor (the head and the last turn)
	// does not fit, or that pruning would have orphaned a tool result.
	Overflow bool
	// RawTokens is the uncalibrated estimate of what is sent, for
	// calibrating against the provider's real count.
	RawTokens   float64
	Calibration float64
	Breakdown   Breakdown
}

// Fit makes the transcript fit the model's window. It keeps the head
// (everything through the first user message) and drops the oldest whole
// turns (an assistant message with the tool results that answer it, or a
// later user message) while the estimate is over budget and more than one
// turn remains. It never summarises and never orphans a tool result: if
// the pruned transcript would hold a tool result without its call, or a
// call without its result, the original is kept and Overflow set. Each
// tool result is capped at MaxToolResultBytes first. A budget ≤ 0 (a
// window no larger than the reserve and the margin) turns fitting off:
// everything is sent and the provider decides. Fit does not change
// p.Messages.
func Fit(p FitParams) Fitted {
	cal := max(p.Calibration, 1)
	ctxLen := p.ContextLength
	if ctxLen <= 0 {
		ctxLen = DefaultContextLength
	}
	reserve := p.MaxTokens
	if reserve <= 0 {
		reserve = p.MaxOutput
	}
	if reserve <= 0 {
		reserve = max(1000, int(math.Ceil(0.02*float64(ctxLen))))
	}
	margin := int(math.Ceil(0.03 * float64(ctxLen)))
	budget := ctxLen - reserve - margin

	msgs, capped := capToolResults(p.Messages)
	out := Fitted{Calibration: cal, CappedResults: capped}
	headEnd := headLength(msgs)
	turns := splitTurns(msgs, headEnd)
	schemaRaw := schemaTokens(p.Tools)

	estimate := func(ms []llm.Message) (sys, transcript float64) {
		for i, m := range ms {
			t := messageTokens(m)
			if i == 0 && m.Role == llm.RoleSystem {
				sys += t
			} else {
				transcript += t
			}
		}
		return sys, transcript
	}

	kept := msgs
	dropped := 0
	sys, transcript := estimate(kept)
	over := func() bool {
		return budget > 0 && calTokens(sys, cal)+calTokens(transcript, cal)+calTokens(schemaRaw, cal) > budget
	}
	for over() && len(turns)-dropped > 1 {
		dropped++
		kept = joinTurns(msgs[:headEnd], turns[dropped:])
		sys, transcript = estimate(kept)
	}
	if dropped > 0 && !paired(kept) {
		// Never send a tool result without its call: keep the original
		// and let the caller end the run.
		kept, dropped = msgs, 0
		sys, transcript = estimate(kept)
		out.Overflow = true
	}
	if over() {
		out.Overflow = true
	}

	out.Messages = kept
	out.Pruned = dropped > 0
	out.DroppedTurns = dropped
	out.KeptTurns = len(turns) - dropped
	out.RawTokens = sys + transcript + schemaRaw
	b := Breakdown{
		ContextLength:      ctxLen,
		ReservedOutput:     reserve,
		SafetyMargin:       margin,
		Budget:             budget,
		TranscriptTokens:   calTokens(transcript, cal),
		ToolSchemaTokens:   calTokens(schemaRaw, cal),
		SystemPromptTokens: calTokens(sys, cal),
	}
	b.EstimatedTokens = b.TranscriptTokens + b.ToolSchemaTokens + b.SystemPromptTokens + b.SkillTokens
	b.Remaining = b.Budget - b.EstimatedTokens
	out.Breakdown = b
	return out
}

// Calibrate returns the calibration after a call whose prompt the
// provider counted as real tokens and Fit estimated at raw (uncalibrated)
// tokens. It only grows, so a run never trusts its estimate more than
// its worst observation.
func Calibrate(cal float64, real int, raw float64) float64 {
	cal = max(cal, 1)
	if real <= 0 || raw <= 0 {
		return cal
	}
	return max(cal, float64(real)/raw)
}

func calTokens(raw, cal float64) int { return int(math.Ceil(raw * cal)) }

// messageTokens is the raw estimate of one message: prose at 3.5 bytes a
// token, tool results, call ids and arguments at 2.5, plus the per-message
// and per-call overheads.
func messageTokens(m llm.Message) float64 {
	t := float64(tokensPerMessage)
	if m.Role == llm.RoleTool {
		t += float64(len(m.Content)+len(m.ToolCallID)) / denseBytesPerToken
	} else {
		t += float64(len(m.Content)) / proseBytesPerToken
	}
	for _, c := range m.ToolCalls {
		t += tokensPerCall + float64(len(c.ID)+len(c.Name)+len(c.Arguments))/denseBytesPerToken
	}
	return t
}

// schemaTokens estimates the tools' share of the prompt from the length
// of their JSON encoding, counted rather than encoded on every round:
// exact for compact schemas and plain text, a little off when escapes or
// whitespace change the length.
func schemaTokens(tools []llm.ToolDef) float64 {
	if len(tools) == 0 {
		return 0
	}
	const perTool = len(`{"name":"","description":"","parameters":},`)
	n := len(`[]`) - len(`,`)
	for _, t := range tools {
		n += perTool + len(t.Name) + len(t.Description) + max(len(t.Parameters), len(`null`))
	}
	return float64(n) / denseBytesPerToken
}

// headLength is the number of messages through the first user message;
// all of them when there is none.
func headLength(msgs []llm.Message) int {
	for i, m := range msgs {
		if m.Role == llm.RoleUser {
			return i + 1
		}
	}
	return len(msgs)
}

// splitTurns cuts msgs[from:] into turns: each starts at a message that
// is not a tool result and takes the tool results that follow it.
func splitTurns(msgs []llm.Message, from int) [][]llm.Message {
	var turns [][]llm.Message
	for i := from; i < len(msgs); i++ {
		if msgs[i].Role != llm.RoleTool || len(turns) == 0 {
			turns = append(turns, nil)
		}
		turns[len(turns)-1] = append(turns[len(turns)-1], msgs[i])
	}
	return turns
}

func joinTurns(head []llm.Message, turns [][]llm.Message) []llm.Message {
	n := len(head)
	for _, t := range turns {
		n += len(t)
	}
	out := make([]llm.Message, 0, n)
	out = append(out, head...)
	for _, t := range turns {
		out = append(out, t...)
	}
	return out
}

// paired reports whether every tool result answers a call of the
// assistant message before it and every call has its result.
func paired(msgs []llm.Message) bool {
	open := map[string]bool{}
	for _, m := range msgs {
		switch {
		case m.Role == llm.RoleTool:
			if !open[m.ToolCallID] {
				return false
			}
			delete(open, m.ToolCallID)
		default:
			if len(open) > 0 {
				return false
			}
			for _, c := range m.ToolCalls {
				open[c.ID] = true
			}
		}
	}
	return true
}

// capToolResults cuts tool results longer than MaxToolResultBytes on a
// rune boundary; it copies the slice only when it changes something.
func capToolResults(msgs []llm.Message) ([]llm.Message, int) {
	var out []llm.Message
	n := 0
	for i, m := range msgs {
		if m.Role != llm.RoleTool || len(m.Content) <= MaxToolResultBytes {
			continue
		}
		if out == nil {
			out = append([]llm.Message(nil), msgs...)
		}
		out[i].Content = cutUTF8(m.Content, MaxToolResultBytes) + toolResultMarker
		n++
	}
	if out == nil {
		return msgs, 0
	}
	return out, n
}

// cutUTF8 returns the longest prefix of s of at most n bytes that does
// not split a rune, with invalid bytes replaced.
func cutUTF8(s string, n int) string {
	if len(s) > n {
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n]
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
