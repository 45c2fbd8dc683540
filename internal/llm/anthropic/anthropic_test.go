package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/llm/anthropic"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newProvider(t *testing.T, srv *llmtest.Server) *anthropic.Provider {
	t.Helper()
	p, err := anthropic.New(anthropic.Params{BaseURL: srv.BaseURL(), APIKey: llmtest.Key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func userReq(text string) llm.Request {
	return llm.Request{Model: "claude-test", Messages: []llm.Message{{Role: llm.RoleUser, Content: text}}}
}

func TestChatMapsTextUsageAndModel(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Text("Hello").WithUsage(30, 4).WithModel("claude-test-20250101"))
	p := newProvider(t, srv)
	resp, err := p.Chat(context.Background(), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "Hello" || resp.FinishReason != llm.FinishStop || resp.Usage != (llm.Usage{InputTokens: 30, OutputTokens: 4}) ||
		resp.Model != "claude-test-20250101" || resp.Provider != "anthropic" || resp.Attempts != 1 {
		t.Errorf("response = %+v", resp)
	}
	r := srv.Request(0)
	if r.Header.Get("Authorization") != "Bearer "+llmtest.Key || r.Header.Get("Anthropic-Version") == "" {
		t.Errorf("headers: authorization %q, anthropic-version %q", r.Header.Get("Authorization"), r.Header.Get("Anthropic-Version"))
	}
	if body := r.JSON(t); body["max_tokens"] != float64(anthropic.DefaultMaxTokens) {
		t.Errorf("max_tokens = %v, want the default %d", body["max_tokens"], anthropic.DefaultMaxTokens)
	}
}

func TestCachedInputTokensCount(t *testing.T) {
	body := `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[{"type":"text","text":"ok"}],` +
		`"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000,"output_tokens":3}}`
	srv := llmtest.NewAnthropic(t, llmtest.Round{Body: body})
	resp, err := newProvider(t, srv).Chat(context.Background(), userReq("x"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage != (llm.Usage{InputTokens: 1110, OutputTokens: 3}) {
		t.Errorf("usage = %+v, want cached tokens counted as input", resp.Usage)
	}
}

func TestToolUseBlocks(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Round{
		Text: "Let me look.",
		ToolCalls: []llm.ToolCall{
			llmtest.Call("toolu_1", "page_read", `{"uid":1}`),
			llmtest.Call("", "page_list", ``),
		},
	})
	resp, err := newProvider(t, srv).Chat(context.Background(), userReq("x"))
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.ToolCall{{ID: "toolu_1", Name: "page_read", Arguments: `{"uid":1}`}, {ID: "call_1", Name: "page_list", Arguments: `{}`}}
	if len(resp.ToolCalls) != 2 || resp.ToolCalls[0] != want[0] || resp.ToolCalls[1] != want[1] {
		t.Errorf("calls = %+v, want %+v", resp.ToolCalls, want)
	}
	if resp.Content != "Let me look." || resp.FinishReason != llm.FinishToolCalls {
		t.Errorf("content %q finish %s", resp.Content, resp.FinishReason)
	}
}

// transcript exercises every mapping rule: a separate system prompt,
// tool_use blocks, consecutive tool results merged into one user turn and
// a user message following them joining that turn.
func transcript() llm.Request {
	temp := 0.5
	return llm.Request{
		Model:       "claude-test",
		Temperature: &temp,
		MaxTokens:   1000,
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "You are the TYPO3 assistant."},
			{Role: llm.RoleUser, Content: "Read pages 1 and 2."},
			{Role: llm.RoleAssistant, Content: "Reading.", ToolCalls: []llm.ToolCall{
				{ID: "toolu_1", Name: "page_read", Arguments: `{"uid":1}`},
				{ID: "toolu_2", Name: "page_read", Arguments: `{"uid":`}, // malformed: sent as {}
			}},
			{Role: llm.RoleTool, ToolCallID: "toolu_1", Content: "Home"},
			{Role: llm.RoleTool, ToolCallID: "toolu_2", Content: "error: malformed arguments"},
			{Role: llm.RoleUser, Content: "And summarise."},
		},
		Tools: []llm.ToolDef{
			{Name: "page_read", Description: "Reads a page.", Parameters: json.RawMessage(
				`{"type":"object","properties":{"uid":{"type":"integer"}},"required":["uid"],"additionalProperties":false}`)},
			{Name: "page_list", Parameters: json.RawMessage(`{"type":"object","properties":[]}`)},
		},
	}
}

func TestRequestMapping(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Text("ok"))
	if _, err := newProvider(t, srv).Chat(context.Background(), transcript()); err != nil {
		t.Fatal(err)
	}
	var body struct {
		System   []struct{ Text string } `json:"system"`
		Messages []struct {
			Role    string
			Content []map[string]any
		}
		Temperature float64
	}
	if err := json.Unmarshal(srv.Request(0).Body, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.System) != 1 || body.System[0].Text != "You are the TYPO3 assistant." {
		t.Errorf("system = %+v", body.System)
	}
	roles := []string{}
	for _, m := range body.Messages {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "user,assistant,user" {
		t.Fatalf("roles = %v, want user,assistant,user", roles)
	}
	merged := body.Messages[2].Content
	if len(merged) != 3 || merged[0]["type"] != "tool_result" || merged[1]["type"] != "tool_result" || merged[2]["type"] != "text" {
		t.Errorf("tool results not merged into one user turn: %+v", merged)
	}
	if merged[1]["tool_use_id"] != "toolu_2" {
		t.Errorf("second result answers %v", merged[1]["tool_use_id"])
	}
	if body.Temperature != 0.5 {
		t.Errorf("temperature = %v", body.Temperature)
	}
	llmtest.Golden(t, "testdata/golden/request.json", srv.Request(0).Body, *update)
}

func TestNoToolsFieldWithoutTools(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Text("ok"))
	if _, err := newProvider(t, srv).Chat(context.Background(), userReq("x")); err != nil {
		t.Fatal(err)
	}
	if r := srv.Request(0); r.Has("tools") || r.Has("tool_choice") || r.Has("system") || r.Has("temperature") {
		t.Errorf("unset fields were sent: %s", r.Body)
	}
}

func TestRefusalIsContentFilter(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Text("I can't help with that.").WithFinish(llm.FinishContentFilter))
	resp, err := newProvider(t, srv).Chat(context.Background(), userReq("x"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.FinishReason != llm.FinishContentFilter {
		t.Errorf("finish = %s", resp.FinishReason)
	}
}

func TestFailuresClassified(t *testing.T) {
	cases := []struct {
		round  llmtest.Round
		class  llm.FailureClass
		status int
		after  string
	}{
		{llmtest.Status(429, "Retry-After", "3"), llm.FailRateLimit, 429, "3s"},
		{llmtest.Status(529), llm.FailServerError, 529, "0s"}, // Anthropic's "overloaded"
		{llmtest.Status(401), llm.FailAuth, 401, "0s"},
		{llmtest.Status(404), llm.FailConfiguration, 404, "0s"},
		{llmtest.Status(413), llm.FailClientError, 413, "0s"},
		{llmtest.Drop(), llm.FailConnection, 0, "0s"},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.status, tc.class), func(t *testing.T) {
			srv := llmtest.NewAnthropic(t, tc.round.WithMessage("failed for key "+llmtest.Key))
			_, err := newProvider(t, srv).Chat(context.Background(), userReq("x"))
			var e *llm.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not an *llm.Error", err)
			}
			if e.Class != tc.class || e.Status != tc.status || e.RetryAfter.String() != tc.after {
				t.Errorf("got %s %d %s, want %s %d %s", e.Class, e.Status, e.RetryAfter, tc.class, tc.status, tc.after)
			}
			if strings.Contains(fmt.Sprintf("%v %+v", err, e), llmtest.Key) {
				t.Errorf("the key leaked into the error: %v", err)
			}
		})
	}
}

func TestStreaming(t *testing.T) {
	srv := llmtest.NewAnthropic(t,
		llmtest.Text("Streams arrive in pieces").WithUsage(11, 5),
		llmtest.Round{Text: "Calling.", ToolCalls: []llm.ToolCall{llmtest.Call("toolu_9", "page_read", `{"uid":9}`)}},
	)
	p := newProvider(t, srv)
	var deltas []string
	resp, err := p.ChatStream(context.Background(), userReq("x"), func(s string) { deltas = append(deltas, s) })
	if err != nil {
		t.Fatal(err)
	}
	if len(deltas) < 2 || strings.Join(deltas, "") != resp.Content || resp.Content != "Streams arrive in pieces" {
		t.Errorf("deltas %q content %q", deltas, resp.Content)
	}
	if resp.Usage != (llm.Usage{InputTokens: 11, OutputTokens: 5}) || resp.FinishReason != llm.FinishStop {
		t.Errorf("response = %+v", resp)
	}
	resp, err = p.ChatStream(context.Background(), userReq("y"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0] != (llm.ToolCall{ID: "toolu_9", Name: "page_read", Arguments: `{"uid":9}`}) ||
		resp.FinishReason != llm.FinishToolCalls || resp.Content != "Calling." {
		t.Errorf("streamed tool call response = %+v", resp)
	}
}

func TestAmbientEnvironmentIgnored(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-ambient")
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Ambient: yes")
	srv := llmtest.NewAnthropic(t, llmtest.Text("ok"))
	if _, err := newProvider(t, srv).Chat(context.Background(), userReq("x")); err != nil {
		t.Fatal(err)
	}
	if h := srv.Request(0).Header; h.Get("Authorization") != "Bearer "+llmtest.Key || h.Get("X-Ambient") != "" {
		t.Errorf("ambient ANTHROPIC_* leaked: %v", h)
	}
}
