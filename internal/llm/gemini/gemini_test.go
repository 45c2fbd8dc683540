package gemini_test

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
	"github.com/t3agent/t3agent/internal/llm/gemini"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newProvider(t *testing.T, srv *llmtest.Server) *gemini.Provider {
	t.Helper()
	p, err := gemini.New(context.Background(), gemini.Params{BaseURL: srv.BaseURL(), APIKey: llmtest.Key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func userReq(text string) llm.Request {
	return llm.Request{Model: "gemini-test", Messages: []llm.Message{{Role: llm.RoleUser, Content: text}}}
}

func TestChatMapsTextUsageAndModel(t *testing.T) {
	srv := llmtest.NewGemini(t, llmtest.Text("Hallo").WithUsage(12, 3).WithModel("gemini-test-001"))
	resp, err := newProvider(t, srv).Chat(context.Background(), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "Hallo" || resp.FinishReason != llm.FinishStop || resp.Usage != (llm.Usage{InputTokens: 12, OutputTokens: 3}) ||
		resp.Model != "gemini-test-001" || resp.Provider != "gemini" || resp.Attempts != 1 {
		t.Errorf("response = %+v", resp)
	}
	r := srv.Request(0)
	if r.Path != "/v1beta/models/gemini-test:generateContent" {
		t.Errorf("path = %s", r.Path)
	}
	if r.Header.Get("X-Goog-Api-Key") != llmtest.Key || strings.Contains(r.RawQuery, llmtest.Key) {
		t.Errorf("key not in header only: header %q query %q", r.Header.Get("X-Goog-Api-Key"), r.RawQuery)
	}
}

func TestFunctionCallsGetIDs(t *testing.T) {
	srv := llmtest.NewGemini(t, llmtest.Calls(
		llmtest.Call("", "page_read", `{"uid":1}`),
		llmtest.Call("", "page_list", `{}`),
		llmtest.Call("fc-7", "page_search", `{"q":"news"}`),
	))
	resp, err := newProvider(t, srv).Chat(context.Background(), userReq("x"))
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.ToolCall{
		{ID: "call_0", Name: "page_read", Arguments: `{"uid":1}`},
		{ID: "call_1", Name: "page_list", Arguments: `{}`},
		{ID: "fc-7", Name: "page_search", Arguments: `{"q":"news"}`},
	}
	if fmt.Sprint(resp.ToolCalls) != fmt.Sprint(want) {
		t.Errorf("calls = %+v, want %+v", resp.ToolCalls, want)
	}
	if resp.FinishReason != llm.FinishToolCalls {
		t.Errorf("finish = %s (Gemini says STOP with calls)", resp.FinishReason)
	}
}

func TestThoughtSignatureRoundTrip(t *testing.T) {
	body := `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"page_read","args":{"uid":1}},"thoughtSignature":"c2lnbmVk"}]},"finishReason":"STOP"}],"modelVersion":"gemini-test"}`
	srv := llmtest.NewGemini(t, llmtest.Round{Body: body}, llmtest.Text("ok"))
	p := newProvider(t, srv)
	resp, err := p.Chat(context.Background(), userReq("x"))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Signature != "c2lnbmVk" {
		t.Fatalf("calls = %+v, want the signature kept", resp.ToolCalls)
	}
	req := userReq("x")
	req.Messages = append(req.Messages,
		llm.Message{Role: llm.RoleAssistant, ToolCalls: resp.ToolCalls},
		llm.Message{Role: llm.RoleTool, ToolCallID: resp.ToolCalls[0].ID, Content: "Home"})
	if _, err := p.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(srv.Request(1).Body), `"thoughtSignature":"c2lnbmVk"`) {
		t.Errorf("signature not sent back: %s", srv.Request(1).Body)
	}
}

func TestRequestMapping(t *testing.T) {
	srv := llmtest.NewGemini(t, llmtest.Text("ok"))
	temp := 0.25
	req := llm.Request{
		Model:       "gemini-test",
		Temperature: &temp,
		MaxTokens:   256,
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "You are the TYPO3 assistant."},
			{Role: llm.RoleUser, Content: "Read pages 1 and 2."},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
				{ID: "call_0", Name: "page_read", Arguments: `{"uid":1}`},
				{ID: "call_1", Name: "page_list", Arguments: ``},
			}},
			{Role: llm.RoleTool, ToolCallID: "call_0", Content: "Home"},
			{Role: llm.RoleTool, ToolCallID: "call_1", Content: "[1,2]"},
		},
		Tools: []llm.ToolDef{
			{Name: "page_read", Description: "Reads a page.", Parameters: json.RawMessage(`{"type":"object","properties":{"uid":{"type":"integer"}},"required":["uid"]}`)},
			{Name: "page_list", Description: "Lists pages.", Parameters: json.RawMessage(`{"type":"object","properties":[]}`)},
		},
	}
	if _, err := newProvider(t, srv).Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Contents []struct {
			Role  string
			Parts []map[string]json.RawMessage
		}
	}
	if err := json.Unmarshal(srv.Request(0).Body, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Contents) != 3 || body.Contents[2].Role != "user" || len(body.Contents[2].Parts) != 2 {
		t.Fatalf("function responses not merged into one user turn: %s", srv.Request(0).Body)
	}
	var fr struct{ Name string }
	if err := json.Unmarshal(body.Contents[2].Parts[1]["functionResponse"], &fr); err != nil || fr.Name != "page_list" {
		t.Errorf("second function response named %q (%v), want page_list", fr.Name, err)
	}
	llmtest.Golden(t, "testdata/golden/request.json", srv.Request(0).Body, *update)
}

func TestNoToolsFieldWithoutTools(t *testing.T) {
	srv := llmtest.NewGemini(t, llmtest.Text("ok"))
	if _, err := newProvider(t, srv).Chat(context.Background(), userReq("x")); err != nil {
		t.Fatal(err)
	}
	if r := srv.Request(0); r.Has("tools") || r.Has("toolConfig") || r.Has("systemInstruction") {
		t.Errorf("unset fields were sent: %s", r.Body)
	}
}

func TestSafetyIsContentFilter(t *testing.T) {
	srv := llmtest.NewGemini(t, llmtest.Text("").WithFinish(llm.FinishContentFilter),
		llmtest.Round{Body: `{"promptFeedback":{"blockReason":"SAFETY"},"modelVersion":"gemini-test"}`})
	p := newProvider(t, srv)
	for i := range 2 {
		resp, err := p.Chat(context.Background(), userReq("x"))
		if err != nil {
			t.Fatal(err)
		}
		if resp.FinishReason != llm.FinishContentFilter {
			t.Errorf("round %d: finish = %s, want content_filter", i, resp.FinishReason)
		}
	}
}

func TestFailuresClassified(t *testing.T) {
	retryInfo := `{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED","details":[` +
		`{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"7s"}]}}`
	cases := []struct {
		name   string
		round  llmtest.Round
		class  llm.FailureClass
		status int
		after  string
	}{
		{"retry info", llmtest.Round{Status: 429, Body: retryInfo}, llm.FailRateLimit, 429, "7s"},
		{"retry-after header", llmtest.Status(429, "Retry-After", "4"), llm.FailRateLimit, 429, "4s"},
		{"server error", llmtest.Status(500), llm.FailServerError, 500, "0s"},
		{"bad key", llmtest.Status(403).WithMessage("API key not valid: " + llmtest.Key), llm.FailAuth, 403, "0s"},
		{"unknown model", llmtest.Status(404), llm.FailConfiguration, 404, "0s"},
		{"bad request", llmtest.Status(400), llm.FailClientError, 400, "0s"},
		{"dropped", llmtest.Drop(), llm.FailConnection, 0, "0s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewGemini(t, tc.round)
			_, err := newProvider(t, srv).Chat(context.Background(), userReq("x"))
			var e *llm.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not an *llm.Error", err)
			}
			if e.Class != tc.class || e.Status != tc.status || e.RetryAfter.String() != tc.after {
				t.Errorf("got %s %d %s, want %s %d %s", e.Class, e.Status, e.RetryAfter, tc.class, tc.status, tc.after)
			}
			if strings.Contains(err.Error(), llmtest.Key) {
				t.Errorf("the key leaked: %v", err)
			}
		})
	}
}

func TestStreaming(t *testing.T) {
	srv := llmtest.NewGemini(t,
		llmtest.Text("Gemini streams too").WithUsage(9, 4),
		llmtest.Calls(llmtest.Call("", "page_read", `{"uid":3}`)),
	)
	p := newProvider(t, srv)
	var deltas []string
	resp, err := p.ChatStream(context.Background(), userReq("x"), func(s string) { deltas = append(deltas, s) })
	if err != nil {
		t.Fatal(err)
	}
	if len(deltas) < 2 || strings.Join(deltas, "") != "Gemini streams too" || resp.Content != "Gemini streams too" {
		t.Errorf("deltas %q content %q", deltas, resp.Content)
	}
	if resp.Usage != (llm.Usage{InputTokens: 9, OutputTokens: 4}) || !strings.HasSuffix(srv.Request(0).Path, ":streamGenerateContent") {
		t.Errorf("usage %+v path %s", resp.Usage, srv.Request(0).Path)
	}
	resp, err = p.ChatStream(context.Background(), userReq("y"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0] != (llm.ToolCall{ID: "call_0", Name: "page_read", Arguments: `{"uid":3}`}) {
		t.Errorf("streamed calls = %+v", resp.ToolCalls)
	}
}

func TestAPIKeyRequired(t *testing.T) {
	t.Setenv("GOOGLE_API_KEY", "ambient-google-key")
	_, err := gemini.New(context.Background(), gemini.Params{})
	var e *llm.Error
	if !errors.As(err, &e) || e.Class != llm.FailConfiguration {
		t.Errorf("err = %v, want a configuration error instead of the ambient key", err)
	}
}
