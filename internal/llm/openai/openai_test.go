package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/llm/openai"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newProvider(t *testing.T, srv *llmtest.Server, mod func(*openai.Params)) *openai.Provider {
	t.Helper()
	params := openai.Params{BaseURL: srv.BaseURL(), APIKey: llmtest.Key}
	if mod != nil {
		mod(&params)
	}
	p, err := openai.New(params)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func userReq(text string) llm.Request {
	return llm.Request{Model: "gpt-test", Messages: []llm.Message{{Role: llm.RoleUser, Content: text}}}
}

func TestChatMapsTextUsageAndServedModel(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.Text("Hello there").WithUsage(42, 7).WithModel("gpt-test-2025"))
	p := newProvider(t, srv, nil)

	resp, err := p.Chat(context.Background(), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	want := llm.Response{
		Content: "Hello there", FinishReason: llm.FinishStop, Usage: llm.Usage{InputTokens: 42, OutputTokens: 7},
		Model: "gpt-test-2025", Attempts: 1, Provider: "openai",
	}
	if !equalResponse(resp, want) {
		t.Errorf("response = %+v, want %+v", resp, want)
	}
	r := srv.Request(0)
	if got := r.Header.Get("Authorization"); got != "Bearer "+llmtest.Key {
		t.Errorf("Authorization = %q", got)
	}
	if r.Path != "/v1/chat/completions" {
		t.Errorf("path = %s", r.Path)
	}
}

func TestSeveralToolCallsInOneTurn(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.Calls(
		llmtest.Call("call_a", "page_read", `{"uid":1}`),
		llmtest.Call("", "page_list", `{}`),            // no id: synthesised from the index
		llmtest.Call("call_c", "page_search", `{"q":`), // malformed: passed through verbatim
	).WithUsage(10, 20))
	p := newProvider(t, srv, nil)

	resp, err := p.Chat(context.Background(), userReq("go"))
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.ToolCall{
		{ID: "call_a", Name: "page_read", Arguments: `{"uid":1}`},
		{ID: "call_1", Name: "page_list", Arguments: `{}`},
		{ID: "call_c", Name: "page_search", Arguments: `{"q":`},
	}
	if !equalCalls(resp.ToolCalls, want) {
		t.Errorf("tool calls = %+v, want %+v", resp.ToolCalls, want)
	}
	if resp.FinishReason != llm.FinishToolCalls {
		t.Errorf("finish = %s", resp.FinishReason)
	}
}

func TestNoToolsFieldWithoutTools(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.Text("a"), llmtest.Text("b"))
	p := newProvider(t, srv, nil)
	ctx := context.Background()

	if _, err := p.Chat(ctx, userReq("x")); err != nil {
		t.Fatal(err)
	}
	req := userReq("y")
	req.Tools = []llm.ToolDef{{Name: "t", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}}
	if _, err := p.Chat(ctx, req); err != nil {
		t.Fatal(err)
	}
	if r := srv.Request(0); r.Has("tools") || r.Has("tool_choice") {
		t.Errorf("request without tools carried a tools field: %s", r.Body)
	}
	if !srv.Request(1).Has("tools") {
		t.Errorf("request with tools has no tools field: %s", srv.Request(1).Body)
	}
}

func TestToolParametersNormalised(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.Text("ok"))
	p := newProvider(t, srv, nil)
	req := userReq("x")
	req.Tools = []llm.ToolDef{
		{Name: "empty_array", Parameters: json.RawMessage(`{"type":"object","properties":[]}`)},
		{Name: "missing"},
		{Name: "null_props", Parameters: json.RawMessage(`{"type":"object","properties":null}`)},
	}
	if _, err := p.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	body := string(srv.Request(0).Body)
	if strings.Contains(body, `"properties":[]`) || strings.Contains(body, `"properties":null`) {
		t.Errorf("empty properties not sent as {}: %s", body)
	}
	if n := strings.Count(body, `"properties":{}`); n != 3 {
		t.Errorf(`"properties":{} appears %d times, want 3: %s`, n, body)
	}
}

// TestRequestGolden pins the whole wire body of a multi-round transcript.
func TestRequestGolden(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.Text("done"))
	p := newProvider(t, srv, nil)
	temp := 0.2
	req := llm.Request{
		Model:       "gpt-test",
		Temperature: &temp,
		MaxTokens:   512,
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "You are the TYPO3 assistant."},
			{Role: llm.RoleUser, Content: "List the pages and read page 1."},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
				{ID: "call_1", Name: "page_list", Arguments: ""},
				{ID: "call_2", Name: "page_read", Arguments: `{"uid":1}`},
			}},
			{Role: llm.RoleTool, ToolCallID: "call_1", Content: `[{"uid":1,"title":"Home"}]`},
			{Role: llm.RoleTool, ToolCallID: "call_2", Content: `{"uid":1,"title":"Home"}`},
			{Role: llm.RoleAssistant, Content: "Page 1 is Home."},
			{Role: llm.RoleUser, Content: "Thanks."},
		},
		Tools: []llm.ToolDef{
			{Name: "page_list", Description: "Lists pages.", Parameters: json.RawMessage(`{"type":"object","properties":[]}`)},
			{Name: "page_read", Description: "Reads a page.", Parameters: json.RawMessage(`{"type":"object","properties":{"uid":{"type":"integer"}},"required":["uid"]}`)},
		},
	}
	if _, err := p.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	llmtest.Golden(t, "testdata/golden/request.json", srv.Request(0).Body, *update)
}

func TestContentFilter(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.Text("").WithFinish(llm.FinishContentFilter))
	p := newProvider(t, srv, nil)
	resp, err := p.Chat(context.Background(), userReq("x"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.FinishReason != llm.FinishContentFilter {
		t.Errorf("finish = %s, want content_filter", resp.FinishReason)
	}
}

func TestFailuresClassified(t *testing.T) {
	cases := []struct {
		name   string
		round  llmtest.Round
		class  llm.FailureClass
		status int
		after  string // RetryAfter as a duration string
	}{
		{"rate limit with Retry-After", llmtest.Status(429, "Retry-After", "2"), llm.FailRateLimit, 429, "2s"},
		{"rate limit with Retry-After-Ms", llmtest.Status(429, "Retry-After-Ms", "1500"), llm.FailRateLimit, 429, "1.5s"},
		{"rate limit without hint", llmtest.Status(429), llm.FailRateLimit, 429, "0s"},
		{"server error", llmtest.Status(500), llm.FailServerError, 500, "0s"},
		{"overloaded", llmtest.Status(503), llm.FailServerError, 503, "0s"},
		{"unauthorised", llmtest.Status(401), llm.FailAuth, 401, "0s"},
		{"forbidden", llmtest.Status(403), llm.FailAuth, 403, "0s"},
		{"unknown model", llmtest.Status(404), llm.FailConfiguration, 404, "0s"},
		{"bad request", llmtest.Status(400), llm.FailClientError, 400, "0s"},
		{"unprocessable", llmtest.Status(422), llm.FailClientError, 422, "0s"},
		{"dropped connection", llmtest.Drop(), llm.FailConnection, 0, "0s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewOpenAI(t, tc.round)
			p := newProvider(t, srv, nil)
			_, err := p.Chat(context.Background(), userReq("x"))
			var e *llm.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not an *llm.Error", err)
			}
			if e.Class != tc.class || e.Status != tc.status || e.RetryAfter.String() != tc.after || e.Attempts != 1 {
				t.Errorf("got class %s status %d retryAfter %s attempts %d; want %s %d %s 1",
					e.Class, e.Status, e.RetryAfter, e.Attempts, tc.class, tc.status, tc.after)
			}
			if e.Provider != "openai" {
				t.Errorf("provider = %q", e.Provider)
			}
		})
	}
}

func TestAPIKeyNeverInErrors(t *testing.T) {
	// Providers echo (parts of) a rejected key; the message must not.
	srv := llmtest.NewOpenAI(t, llmtest.Status(401).WithMessage("Incorrect API key provided: "+llmtest.Key+"."))
	p := newProvider(t, srv, nil)
	_, err := p.Chat(context.Background(), userReq("x"))
	if err == nil {
		t.Fatal("want an error")
	}
	for _, s := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
		if strings.Contains(s, llmtest.Key) {
			t.Errorf("error text carries the key: %s", s)
		}
	}
	if !strings.Contains(err.Error(), "[redacted]") {
		t.Errorf("error text lost the provider's message: %s", err)
	}
}

func TestCanceledContext(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	arrived := make(chan struct{})
	srv := llmtest.NewOpenAI(t, llmtest.Round{Text: "late", Hold: hold,
		Check: func(testing.TB, llmtest.Request) { close(arrived) }})
	p := newProvider(t, srv, nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived // the call is in flight
		cancel()
	}()
	_, err := p.Chat(ctx, userReq("x"))
	var e *llm.Error
	if !errors.As(err, &e) || e.Class != llm.FailCanceled || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want canceled wrapping context.Canceled", err)
	}
}

func TestStreaming(t *testing.T) {
	srv := llmtest.NewOpenAI(t,
		llmtest.Text("Streaming is fun to watch").WithUsage(5, 6),
		llmtest.Calls(llmtest.Call("call_x", "page_read", `{"uid":42}`), llmtest.Call("", "page_list", "")),
	)
	p := newProvider(t, srv, nil)
	var deltas []string
	resp, err := p.ChatStream(context.Background(), userReq("x"), func(s string) { deltas = append(deltas, s) })
	if err != nil {
		t.Fatal(err)
	}
	if len(deltas) < 2 || strings.Join(deltas, "") != "Streaming is fun to watch" || resp.Content != "Streaming is fun to watch" {
		t.Errorf("deltas %q, content %q", deltas, resp.Content)
	}
	if resp.Usage != (llm.Usage{InputTokens: 5, OutputTokens: 6}) || resp.FinishReason != llm.FinishStop || resp.Model != "gpt-test" {
		t.Errorf("response = %+v", resp)
	}
	if !strings.Contains(string(srv.Request(0).Body), `"include_usage":true`) {
		t.Errorf("stream request did not ask for usage: %s", srv.Request(0).Body)
	}

	resp, err = p.ChatStream(context.Background(), userReq("y"), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.ToolCall{{ID: "call_x", Name: "page_read", Arguments: `{"uid":42}`}, {ID: "call_1", Name: "page_list", Arguments: ""}}
	if !equalCalls(resp.ToolCalls, want) || resp.FinishReason != llm.FinishToolCalls {
		t.Errorf("streamed calls %+v finish %s, want %+v", resp.ToolCalls, resp.FinishReason, want)
	}
}

func TestAzureStyleEndpoint(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.Text("ok"))
	p := newProvider(t, srv, func(p *openai.Params) {
		p.Name = "azure"
		p.APIKeyHeader = "api-key"
		p.Query = map[string]string{"api-version": "2024-10-21"}
		p.Headers = map[string]string{"X-Tenant": "demo"}
	})
	req := userReq("x")
	req.MaxTokens = 100
	if _, err := p.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	r := srv.Request(0)
	if r.Header.Get("api-key") != llmtest.Key || r.Header.Get("Authorization") != "" {
		t.Errorf("api-key %q, Authorization %q", r.Header.Get("api-key"), r.Header.Get("Authorization"))
	}
	if r.RawQuery != "api-version=2024-10-21" || r.Header.Get("X-Tenant") != "demo" {
		t.Errorf("query %q, X-Tenant %q", r.RawQuery, r.Header.Get("X-Tenant"))
	}
	if !r.Has("max_tokens") || r.Has("max_completion_tokens") {
		t.Errorf("a compatible endpoint should get max_tokens: %s", r.Body)
	}
}

func TestTokenFieldChoice(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.Text("ok"))
	p := newProvider(t, srv, func(p *openai.Params) { p.TokenField = openai.MaxCompletionTokens })
	req := userReq("x")
	req.MaxTokens = 64
	if _, err := p.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if r := srv.Request(0); !r.Has("max_completion_tokens") || r.Has("max_tokens") {
		t.Errorf("want max_completion_tokens only: %s", r.Body)
	}
	if _, err := openai.New(openai.Params{TokenField: "max_output"}); err == nil {
		t.Error("an unknown token field was accepted")
	}
}

func TestAmbientEnvironmentIgnored(t *testing.T) {
	t.Setenv("OPENAI_ORG_ID", "org-ambient")
	t.Setenv("OPENAI_API_KEY", "sk-ambient-key")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Ambient: yes")
	srv := llmtest.NewOpenAI(t, llmtest.Text("ok"))
	p := newProvider(t, srv, func(p *openai.Params) { p.APIKey = "" })
	if _, err := p.Chat(context.Background(), userReq("x")); err != nil {
		t.Fatal(err)
	}
	h := srv.Request(0).Header
	if h.Get("Authorization") != "" || h.Get("OpenAI-Organization") != "" || h.Get("X-Ambient") != "" {
		t.Errorf("ambient OPENAI_* leaked into the request: %v", h)
	}
}

func TestTimeoutIsConnectionFailure(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	srv := llmtest.NewOpenAI(t, llmtest.Round{Text: "late", Hold: hold})
	client := llm.NewHTTPClient(llm.HTTPClientParams{Timeout: 50 * time.Millisecond})
	p := newProvider(t, srv, func(p *openai.Params) { p.HTTPClient = client })
	t.Cleanup(client.CloseIdleConnections)
	_, err := p.Chat(context.Background(), userReq("x"))
	var e *llm.Error
	if !errors.As(err, &e) || e.Class != llm.FailConnection || !e.Timeout {
		t.Fatalf("err = %#v, want a connection failure marked Timeout", err)
	}
	if strings.Contains(e.Message, srv.URL) {
		t.Errorf("message quotes the URL: %s", e.Message)
	}
}

func equalCalls(a, b []llm.ToolCall) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func equalResponse(a, b llm.Response) bool {
	return a.Content == b.Content && a.FinishReason == b.FinishReason && a.Usage == b.Usage &&
		a.Model == b.Model && a.Attempts == b.Attempts && a.Provider == b.Provider &&
		equalCalls(a.ToolCalls, b.ToolCalls) && a.Entry == b.Entry && len(a.FellBack) == len(b.FellBack)
}
