package llmtest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder is a testing.TB that records failures instead of failing, so
// we can assert that the server fails the tests it should. Its cleanups
// run when the test calls finish.
type recorder struct {
	testing.TB
	mu       sync.Mutex
	errors   []string
	cleanups []func()
}

type fatal struct{}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...); panic(fatal{}) }
func (r *recorder) Cleanup(f func())                  { r.cleanups = append(r.cleanups, f) }
func (r *recorder) finish() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
	r.cleanups = nil
}
func (r *recorder) failures() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.errors, "\n")
}

func chat(t *testing.T, p llm.Provider, text string) (llm.Response, error) {
	t.Helper()
	return p.Chat(context.Background(), llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: text}}})
}

func TestExtraRequestFailsTheTest(t *testing.T) {
	for _, wire := range []llmtest.Wire{llmtest.OpenAI, llmtest.Anthropic, llmtest.Gemini} {
		t.Run(string(wire), func(t *testing.T) {
			rec := &recorder{TB: t}
			srv := llmtest.New(rec, llmtest.Options{Wire: wire}, llmtest.Text("only"))
			p := srv.Provider(t)
			if _, err := chat(t, p, "1"); err != nil {
				t.Fatal(err)
			}
			_, err := chat(t, p, "2")
			var e *llm.Error
			if !errors.As(err, &e) || e.Class != llm.FailClientError {
				t.Errorf("extra request answered %v, want a clientError (never retried)", err)
			}
			rec.finish()
			if !strings.Contains(rec.failures(), "unexpected request 1") {
				t.Errorf("extra request did not fail the test; failures: %q", rec.failures())
			}
			if len(srv.Requests()) != 2 {
				t.Errorf("the extra request was not recorded")
			}
		})
	}
}

func TestUnusedRoundsFailTheTest(t *testing.T) {
	rec := &recorder{TB: t}
	llmtest.NewOpenAI(rec, llmtest.Text("a"), llmtest.Text("b"))
	rec.finish()
	if !strings.Contains(rec.failures(), "2 of 2 scripted rounds were never requested") {
		t.Errorf("failures: %q", rec.failures())
	}

	rec = &recorder{TB: t}
	llmtest.New(rec, llmtest.Options{Wire: llmtest.OpenAI, AllowUnused: true}, llmtest.Text("a"))
	rec.finish()
	if rec.failures() != "" {
		t.Errorf("AllowUnused still failed: %q", rec.failures())
	}
}

func TestChecksSeeTheRequest(t *testing.T) {
	var seen []string
	srv := llmtest.NewOpenAI(t, llmtest.Text("ok").WithCheck(func(t testing.TB, r llmtest.Request) {
		seen = append(seen, r.Method, r.Path, fmt.Sprint(r.JSON(t)["model"]))
	}))
	if _, err := chat(t, srv.Provider(t), "x"); err != nil {
		t.Fatal(err)
	}
	if strings.Join(seen, " ") != "POST /v1/chat/completions m" {
		t.Errorf("check saw %q", seen)
	}
	if srv.Remaining() != 0 {
		t.Errorf("remaining = %d", srv.Remaining())
	}
}

func TestPushExtendsTheScript(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Text("one"))
	p := srv.Provider(t)
	srv.Push(llmtest.Text("two"))
	for _, want := range []string{"one", "two"} {
		resp, err := chat(t, p, "x")
		if err != nil || resp.Content != want {
			t.Fatalf("got %q %v, want %q", resp.Content, err, want)
		}
	}
}

func TestAssertNeverSent(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.Text("ok"))
	if _, err := chat(t, srv.Provider(t), "password=hunter2-very-secret"); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{TB: t}
	srv.AssertNeverSent(rec, "hunter2-very-secret")
	if !strings.Contains(rec.failures(), "carried a secret") {
		t.Errorf("planted secret not detected: %q", rec.failures())
	}
	if strings.Contains(rec.failures(), "hunter2") {
		t.Errorf("the failure message repeats the secret: %q", rec.failures())
	}
	rec = &recorder{TB: t}
	srv.AssertNeverSent(rec, "not-sent", llmtest.Key) // headers carry the key by design
	if rec.failures() != "" {
		t.Errorf("false positive: %q", rec.failures())
	}
}

func TestCycleReplaysWithoutRecording(t *testing.T) {
	srv := llmtest.New(t, llmtest.Options{Wire: llmtest.OpenAI, Cycle: true}, llmtest.Text("a"), llmtest.Text("b"))
	p := srv.Provider(t)
	var got []string
	for range 5 {
		resp, err := chat(t, p, "x")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, resp.Content)
	}
	if strings.Join(got, "") != "ababa" || len(srv.Requests()) != 0 {
		t.Errorf("got %v with %d recorded requests", got, len(srv.Requests()))
	}
}

func TestRequestOutOfRangeIsFatal(t *testing.T) {
	rec := &recorder{TB: t}
	srv := llmtest.New(rec, llmtest.Options{Wire: llmtest.Gemini, AllowUnused: true})
	func() {
		defer func() {
			if _, ok := recover().(fatal); !ok {
				t.Error("Request(0) on an empty log did not fail fatally")
			}
		}()
		srv.Request(0)
	}()
	rec.finish()
}

func TestGolden(t *testing.T) {
	path := filepath.Join(t.TempDir(), "golden", "body.json")
	llmtest.Golden(t, path, []byte(`{"b":1,"a":[1,2.50]}`), true)
	written, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(written) != "{\n  \"a\": [\n    1,\n    2.50\n  ],\n  \"b\": 1\n}\n" {
		t.Errorf("normalised form = %q", written)
	}
	llmtest.Golden(t, path, []byte(`{"a":[1,2.50],"b":1}`), false) // same document, other key order

	rec := &recorder{TB: t}
	llmtest.Golden(rec, path, []byte(`{"a":[1,2.5],"b":2}`), false)
	if !strings.Contains(rec.failures(), "differs") {
		t.Errorf("a changed document passed: %q", rec.failures())
	}
}

func TestHeadersAndRawBodies(t *testing.T) {
	srv := llmtest.NewOpenAI(t,
		llmtest.Status(http.StatusTooManyRequests, "Retry-After", "9", "X-Extra", "1"),
		llmtest.Round{Body: `{"not":"a completion"`},
	)
	p := srv.Provider(t)
	_, err := chat(t, p, "x")
	var e *llm.Error
	if !errors.As(err, &e) || e.RetryAfter.Seconds() != 9 {
		t.Errorf("429 round: %v", err)
	}
	if _, err := chat(t, p, "y"); !errors.As(err, &e) {
		t.Errorf("a truncated body was accepted: %v", err)
	}
}

// BenchmarkZeroLatencyRound measures one chat round trip through the real
// openai-go client against a cycling scripted server: the floor that the
// loop's own per-round overhead is measured against.
func BenchmarkZeroLatencyRound(b *testing.B) {
	srv := llmtest.New(b, llmtest.Options{Wire: llmtest.OpenAI, Cycle: true},
		llmtest.Calls(llmtest.Call("c1", "page_read", `{"uid":1}`)).WithUsage(100, 10),
		llmtest.Text("done").WithUsage(120, 5),
	)
	p := srv.Provider(b)
	req := llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Chat(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

func TestModelLists(t *testing.T) {
	models := []llm.ModelInfo{
		{ID: "big", DisplayName: "Big", ContextLength: 200000, MaxOutputTokens: 8192},
		{ID: "small", DisplayName: "Small", ContextLength: 32000, MaxOutputTokens: 4096},
	}
	for _, wire := range []llmtest.Wire{llmtest.OpenAI, llmtest.Anthropic, llmtest.Gemini} {
		t.Run(string(wire), func(t *testing.T) {
			srv := llmtest.New(t, llmtest.Options{Wire: wire, Models: models})
			lister, ok := srv.Provider(t).(llm.ModelLister)
			if !ok {
				t.Fatal("the adapter lists no models")
			}
			got, err := lister.ListModels(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprint(models)
			if wire == llmtest.OpenAI { // the wire carries ids only
				want = fmt.Sprint([]llm.ModelInfo{{ID: "big"}, {ID: "small"}})
			}
			if fmt.Sprint(got) != want {
				t.Errorf("models = %v, want %v", got, want)
			}
		})
	}
}

func TestStreamFailuresClassified(t *testing.T) {
	for _, wire := range []llmtest.Wire{llmtest.OpenAI, llmtest.Anthropic, llmtest.Gemini} {
		t.Run(string(wire), func(t *testing.T) {
			srv := llmtest.New(t, llmtest.Options{Wire: wire}, llmtest.Status(429, "Retry-After", "5"), llmtest.Status(503))
			p := srv.Provider(t)
			req := llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}}
			for _, want := range []struct {
				class llm.FailureClass
				after float64
			}{{llm.FailRateLimit, 5}, {llm.FailServerError, 0}} {
				_, err := p.ChatStream(context.Background(), req, func(string) {})
				var e *llm.Error
				if !errors.As(err, &e) || e.Class != want.class || e.RetryAfter.Seconds() != want.after {
					t.Errorf("stream failure = %v, want %s after %vs", err, want.class, want.after)
				}
			}
		})
	}
}

func TestUnreadableAnswer(t *testing.T) {
	for _, wire := range []llmtest.Wire{llmtest.OpenAI, llmtest.Anthropic, llmtest.Gemini} {
		t.Run(string(wire), func(t *testing.T) {
			srv := llmtest.New(t, llmtest.Options{Wire: wire}, llmtest.Round{Body: `{"secret-content": "page body` /* cut short */})
			_, err := chat(t, srv.Provider(t), "x")
			var e *llm.Error
			if !errors.As(err, &e) || e.Class.Retryable() || strings.Contains(err.Error(), "secret-content") {
				t.Errorf("unreadable answer: %v (class %v)", err, e)
			}
		})
	}
}
