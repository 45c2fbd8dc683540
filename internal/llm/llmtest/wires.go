package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/t3agent/t3agent/internal/llm"
)

// answer is a Round being rendered for one request.
type answer struct {
	Round
	model        string
	includeUsage bool
}

type obj = map[string]any

func (a answer) finish(w Wire) string {
	if a.RawFinish != "" {
		return a.RawFinish
	}
	switch w {
	case Anthropic:
		return map[llm.FinishReason]string{
			llm.FinishStop: "end_turn", llm.FinishToolCalls: "tool_use", llm.FinishLength: "max_tokens",
			llm.FinishContentFilter: "refusal", llm.FinishOther: "pause_turn",
		}[a.Finish]
	case Gemini:
		return map[llm.FinishReason]string{
			llm.FinishStop: "STOP", llm.FinishToolCalls: "STOP", llm.FinishLength: "MAX_TOKENS",
			llm.FinishContentFilter: "SAFETY", llm.FinishOther: "OTHER",
		}[a.Finish]
	}
	return map[llm.FinishReason]string{
		llm.FinishStop: "stop", llm.FinishToolCalls: "tool_calls", llm.FinishLength: "length",
		llm.FinishContentFilter: "content_filter", llm.FinishOther: "other",
	}[a.Finish]
}

// objectArgs is a call's arguments for the object wires.
func objectArgs(args string) json.RawMessage {
	if strings.TrimSpace(args) == "" {
		return json.RawMessage(`{}`)
	}
	return json.RawMessage(args)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("llmtest: cannot encode answer: %v", err))
	}
	return b
}

func (a answer) body(w Wire) []byte {
	switch w {
	case Anthropic:
		return mustJSON(a.anthropicMessage(true))
	case Gemini:
		return mustJSON(a.geminiChunk(a.geminiParts(), true))
	}
	msg := obj{"role": "assistant", "content": nil}
	if a.Text != "" || len(a.ToolCalls) == 0 {
		msg["content"] = a.Text
	}
	if len(a.ToolCalls) > 0 {
		var calls []obj
		for _, c := range a.ToolCalls {
			tc := obj{"type": "function", "function": obj{"name": c.Name, "arguments": c.Arguments}}
			if c.ID != "" {
				tc["id"] = c.ID
			}
			calls = append(calls, tc)
		}
		msg["tool_calls"] = calls
	}
	return mustJSON(obj{
		"id": "chatcmpl-llmtest", "object": "chat.completion", "created": 0, "model": a.model,
		"choices": []obj{{"index": 0, "message": msg, "finish_reason": a.finish(w), "logprobs": nil}},
		"usage":   a.openAIUsage(),
	})
}

func (a answer) openAIUsage() obj {
	return obj{
		"prompt_tokens": a.Usage.InputTokens, "completion_tokens": a.Usage.OutputTokens,
		"total_tokens": a.Usage.InputTokens + a.Usage.OutputTokens,
	}
}

func (a answer) anthropicMessage(full bool) obj {
	content := []obj{}
	if full {
		if a.Text != "" {
			content = append(content, obj{"type": "text", "text": a.Text})
		}
		for _, c := range a.ToolCalls {
			content = append(content, obj{"type": "tool_use", "id": c.ID, "name": c.Name, "input": objectArgs(c.Arguments)})
		}
	}
	m := obj{
		"id": "msg_llmtest", "type": "message", "role": "assistant", "model": a.model,
		"content": content, "stop_reason": nil, "stop_sequence": nil,
		"usage": obj{"input_tokens": a.Usage.InputTokens, "output_tokens": a.Usage.OutputTokens},
	}
	if full {
		m["stop_reason"] = a.finish(Anthropic)
	}
	return m
}

func (a answer) geminiParts() []obj {
	var parts []obj
	if a.Text != "" {
		parts = append(parts, obj{"text": a.Text})
	}
	for _, c := range a.ToolCalls {
		fc := obj{"name": c.Name, "args": objectArgs(c.Arguments)}
		if c.ID != "" {
			fc["id"] = c.ID
		}
		parts = append(parts, obj{"functionCall": fc})
	}
	return parts
}

func (a answer) geminiChunk(parts []obj, last bool) obj {
	cand := obj{"content": obj{"role": "model", "parts": parts}, "index": 0}
	out := obj{"candidates": []obj{cand}, "modelVersion": a.model}
	if last {
		cand["finishReason"] = a.finish(Gemini)
		out["usageMetadata"] = obj{
			"promptTokenCount": a.Usage.InputTokens, "candidatesTokenCount": a.Usage.OutputTokens,
			"totalTokenCount": a.Usage.InputTokens + a.Usage.OutputTokens,
		}
	}
	return out
}

// pieces splits text into a few fragments, so streams really stream.
func pieces(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	for len(s) > 0 {
		i := strings.IndexByte(s[min(1, len(s)):], ' ')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

func halves(s string) []string {
	if len(s) < 2 {
		return []string{s}
	}
	return []string{s[:len(s)/2], s[len(s)/2:]}
}

func sse(event string, v any) []byte {
	if event == "" {
		return []byte("data: " + string(mustJSON(v)) + "\n\n")
	}
	return []byte("event: " + event + "\ndata: " + string(mustJSON(v)) + "\n\n")
}

func (a answer) events(w Wire) [][]byte {
	switch w {
	case Anthropic:
		return a.anthropicEvents()
	case Gemini:
		var out [][]byte
		ps := pieces(a.Text)
		for _, p := range ps {
			out = append(out, sse("", a.geminiChunk([]obj{{"text": p}}, false)))
		}
		var last []obj
		for _, p := range a.geminiParts() {
			if _, isText := p["text"]; !isText {
				last = append(last, p)
			}
		}
		return append(out, sse("", a.geminiChunk(last, true)))
	}
	chunk := func(delta obj, finish any) obj {
		return obj{
			"id": "chatcmpl-llmtest", "object": "chat.completion.chunk", "created": 0, "model": a.model,
			"choices": []obj{{"index": 0, "delta": delta, "finish_reason": finish}},
		}
	}
	out := [][]byte{sse("", chunk(obj{"role": "assistant", "content": ""}, nil))}
	for _, p := range pieces(a.Text) {
		out = append(out, sse("", chunk(obj{"content": p}, nil)))
	}
	for i, c := range a.ToolCalls {
		head := obj{"index": i, "type": "function", "function": obj{"name": c.Name, "arguments": ""}}
		if c.ID != "" {
			head["id"] = c.ID
		}
		out = append(out, sse("", chunk(obj{"tool_calls": []obj{head}}, nil)))
		for _, h := range halves(c.Arguments) {
			out = append(out, sse("", chunk(obj{"tool_calls": []obj{{"index": i, "function": obj{"arguments": h}}}}, nil)))
		}
	}
	out = append(out, sse("", chunk(obj{}, a.finish(w))))
	if a.includeUsage {
		out = append(out, sse("", obj{
			"id": "chatcmpl-llmtest", "object": "chat.completion.chunk", "created": 0, "model": a.model,
			"choices": []obj{}, "usage": a.openAIUsage(),
		}))
	}
	return append(out, []byte("data: [DONE]\n\n"))
}

func (a answer) anthropicEvents() [][]byte {
	start := a.anthropicMessage(false)
	start["usage"] = obj{"input_tokens": a.Usage.InputTokens, "output_tokens": 0}
	out := [][]byte{sse("message_start", obj{"type": "message_start", "message": start})}
	idx := 0
	if a.Text != "" {
		out = append(out, sse("content_block_start", obj{"type": "content_block_start", "index": idx, "content_block": obj{"type": "text", "text": ""}}))
		for _, p := range pieces(a.Text) {
			out = append(out, sse("content_block_delta", obj{"type": "content_block_delta", "index": idx, "delta": obj{"type": "text_delta", "text": p}}))
		}
		out = append(out, sse("content_block_stop", obj{"type": "content_block_stop", "index": idx}))
		idx++
	}
	for _, c := range a.ToolCalls {
		out = append(out, sse("content_block_start", obj{"type": "content_block_start", "index": idx, "content_block": obj{"type": "tool_use", "id": c.ID, "name": c.Name, "input": obj{}}}))
		for _, h := range halves(string(objectArgs(c.Arguments))) {
			out = append(out, sse("content_block_delta", obj{"type": "content_block_delta", "index": idx, "delta": obj{"type": "input_json_delta", "partial_json": h}}))
		}
		out = append(out, sse("content_block_stop", obj{"type": "content_block_stop", "index": idx}))
		idx++
	}
	out = append(out,
		sse("message_delta", obj{"type": "message_delta", "delta": obj{"stop_reason": a.finish(Anthropic), "stop_sequence": nil}, "usage": obj{"output_tokens": a.Usage.OutputTokens}}),
		sse("message_stop", obj{"type": "message_stop"}),
	)
	return out
}

// writeError answers with the wire's error shape.
func writeError(w http.ResponseWriter, wire Wire, status int, msg string) {
	var body obj
	switch wire {
	case Anthropic:
		body = obj{"type": "error", "error": obj{"type": anthropicErrorType(status), "message": msg}}
	case Gemini:
		body = obj{"error": obj{"code": status, "message": msg, "status": geminiStatus(status)}}
	default:
		body = obj{"error": obj{"message": msg, "type": "llmtest_error", "param": nil, "code": nil}}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(mustJSON(body))
}

func anthropicErrorType(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

func geminiStatus(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	}
	if status >= 500 {
		return "INTERNAL"
	}
	return "INVALID_ARGUMENT"
}

func modelList(w Wire, models []llm.ModelInfo) []byte {
	list := []obj{}
	switch w {
	case Anthropic:
		for _, m := range models {
			list = append(list, obj{
				"id": m.ID, "type": "model", "display_name": m.DisplayName, "created_at": "2025-01-01T00:00:00Z",
				"max_input_tokens": m.ContextLength, "max_tokens": m.MaxOutputTokens,
			})
		}
		return mustJSON(obj{"data": list, "has_more": false, "first_id": nil, "last_id": nil})
	case Gemini:
		for _, m := range models {
			list = append(list, obj{
				"name": "models/" + m.ID, "displayName": m.DisplayName,
				"inputTokenLimit": m.ContextLength, "outputTokenLimit": m.MaxOutputTokens,
			})
		}
		return mustJSON(obj{"models": list})
	}
	for _, m := range models {
		list = append(list, obj{"id": m.ID, "object": "model", "created": 0, "owned_by": "llmtest"})
	}
	return mustJSON(obj{"object": "list", "data": list})
}
