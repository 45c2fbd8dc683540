package llm_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/llm/openai"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sleeps records every wait a Retry asks for and returns at once.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprint(s.d)
}

// clock is an injected time source for the breaker.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func adapter(t *testing.T, srv *llmtest.Server, name, key string) *openai.Provider {
	t.Helper()
	p, err := openai.New(openai.Params{Name: name, BaseURL: srv.BaseURL(), APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func req() llm.Request {
	return llm.Request{Model: "gpt-test", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
}

func asError(t *testing.T, err error) *llm.Error {
	t.Helper()
	var e *llm.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not an *llm.Error", err)
	}
	return e
}

func TestBackoff(t *testing.T) {
	for n, want := range []time.Duration{
		100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond,
		1600 * time.Millisecond, 3200 * time.Millisecond, 6400 * time.Millisecond, 12800 * time.Millisecond,
		25600 * time.Millisecond, 30 * time.Second, 30 * time.Second,
	} {
		if got := llm.Backoff(n, llm.DefaultBaseDelay, llm.DefaultMaxDelay); got != want {
			t.Errorf("Backoff(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestRetry429HonoursRetryAfter(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.Status(429, "Retry-After", "2"), llmtest.Text("ok"))
	var s sleeps
	p := llm.NewRetry(adapter(t, srv, "openai", llmtest.Key), llm.RetryParams{MaxRetries: 3, Sleep: s.sleep})
	resp, err := p.Chat(context.Background(), req())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "ok" || resp.Attempts != 2 || s.String() != "[2s]" || len(srv.Requests()) != 2 {
		t.Errorf("content %q attempts %d sleeps %s requests %d; want ok 2 [2s] 2", resp.Content, resp.Attempts, &s, len(srv.Requests()))
	}
}

func TestRetry429BeyondCapFailsAtOnce(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.Status(429, "Retry-After", "120"))
	var s sleeps
	p := llm.NewRetry(adapter(t, srv, "openai", llmtest.Key), llm.RetryParams{MaxRetries: 3, Sleep: s.sleep})
	_, err := p.Chat(context.Background(), req())
	e := asError(t, err)
	if e.Class != llm.FailRateLimit || e.RetryAfter != 2*time.Minute || e.Attempts != 1 || s.String() != "[]" {
		t.Errorf("class %s retryAfter %s attempts %d sleeps %s; want rateLimit 2m0s 1 []", e.Class, e.RetryAfter, e.Attempts, &s)
	}
}

func TestRetry429WithoutHintBacksOff(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.Status(429), llmtest.Status(429), llmtest.Text("ok"))
	var s sleeps
	p := llm.NewRetry(adapter(t, srv, "openai", llmtest.Key), llm.RetryParams{MaxRetries: 3, Sleep: s.sleep})
	resp, err := p.Chat(context.Background(), req())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Attempts != 3 || s.String() != "[100ms 200ms]" {
		t.Errorf("attempts %d sleeps %s; want 3 [100ms 200ms]", resp.Attempts, &s)
	}
}

func TestRetryConnectionAndServerErrors(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.Drop(), llmtest.Status(502), llmtest.Status(500), llmtest.Text("ok"))
	var s sleeps
	p := llm.NewRetry(adapter(t, srv, "openai", llmtest.Key), llm.RetryParams{MaxRetries: 3, Sleep: s.sleep})
	resp, err := p.Chat(context.Background(), req())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Attempts != 4 || s.String() != "[100ms 200ms 400ms]" {
		t.Errorf("attempts %d sleeps %s; want 4 [100ms 200ms 400ms]", resp.Attempts, &s)
	}
}

func TestRetryExhausted(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.Status(500), llmtest.Status(500), llmtest.Status(503))
	var s sleeps
	p := llm.NewRetry(adapter(t, srv, "openai", llmtest.Key), llm.RetryParams{MaxRetries: 2, Sleep: s.sleep})
	_, err := p.Chat(context.Background(), req())
	e := asError(t, err)
	if e.Class != llm.FailServerError || e.Status != 503 || e.Attempts != 3 || s.String() != "[100ms 200ms]" {
		t.Errorf("class %s status %d attempts %d sleeps %s", e.Class, e.Status, e.Attempts, &s)
	}
}

func TestRetryMaxRetriesClamped(t *testing.T) {
	rounds := make([]llmtest.Round, 11)
	for i := range rounds {
		rounds[i] = llmtest.Status(500)
	}
	srv := llmtest.NewOpenAI(t, rounds...)
	var s sleeps
	p := llm.NewRetry(adapter(t, srv, "openai", llmtest.Key), llm.RetryParams{MaxRetries: 50, Sleep: s.sleep})
	_, err := p.Chat(context.Background(), req())
	if e := asError(t, err); e.Attempts != 11 {
		t.Errorf("attempts = %d, want 1 + the ceiling of 10 retries", e.Attempts)
	}
}

func TestNotRetried(t *testing.T) {
	for _, round := range []llmtest.Round{llmtest.Status(401), llmtest.Status(403), llmtest.Status(404), llmtest.Status(400)} {
		t.Run(fmt.Sprint(round.Status), func(t *testing.T) {
			srv := llmtest.NewOpenAI(t, round) // a retry would be an unexpected request
			var s sleeps
			p := llm.NewRetry(adapter(t, srv, "openai", llmtest.Key), llm.RetryParams{MaxRetries: 3, Sleep: s.sleep})
			_, err := p.Chat(context.Background(), req())
			if e := asError(t, err); e.Attempts != 1 || s.String() != "[]" {
				t.Errorf("attempts %d sleeps %s, want 1 []", e.Attempts, &s)
			}
		})
	}
}

func TestRetryStopsWhenCanceledWhileWaiting(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.Status(500))
	ctx, cancel := context.WithCancel(context.Background())
	sleep := func(ctx context.Context, _ time.Duration) error { cancel(); return ctx.Err() }
	p := llm.NewRetry(adapter(t, srv, "openai", llmtest.Key), llm.RetryParams{MaxRetries: 3, Sleep: sleep})
	_, err := p.Chat(ctx, req())
	e := asError(t, err)
	if e.Class != llm.FailCanceled || !errors.Is(err, context.Canceled) || e.Attempts != 1 {
		t.Errorf("err = %v (attempts %d), want canceled after 1 attempt", err, e.Attempts)
	}
}

func TestFallbackAfterServerErrors(t *testing.T) {
	primary := llmtest.NewOpenAI(t, llmtest.Status(500), llmtest.Status(500), llmtest.Status(500))
	backup := llmtest.NewOpenAI(t, llmtest.Text("from backup").WithModel("backup-model"))
	var s sleeps
	rp := llm.RetryParams{MaxRetries: 2, Sleep: s.sleep}
	f := &llm.Fallback{Entries: []llm.Entry{
		{Name: "primary", Provider: llm.Resilient(adapter(t, primary, "openai", llmtest.Key), rp, llm.BreakerParams{})},
		{Name: "backup", Provider: llm.Resilient(adapter(t, backup, "local", ""), rp, llm.BreakerParams{}), Model: "backup-model"},
	}}
	resp, err := f.Chat(context.Background(), req())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "from backup" || resp.Entry != "backup" || resp.Provider != "local" || resp.Attempts != 4 || resp.Model != "backup-model" {
		t.Errorf("response = %+v", resp)
	}
	wantFell := []llm.EntryFailure{{Entry: "primary", Provider: "openai", Model: "gpt-test", Class: llm.FailServerError, Status: 500, Attempts: 3}}
	if fmt.Sprint(resp.FellBack) != fmt.Sprint(wantFell) {
		t.Errorf("fell back = %+v, want %+v", resp.FellBack, wantFell)
	}
	if s.String() != "[100ms 200ms]" {
		t.Errorf("sleeps = %s", &s)
	}
	if got := backup.Request(0).JSON(t)["model"]; got != "backup-model" {
		t.Errorf("backup asked for model %v", got)
	}
}

func TestFallbackStopsOnAuth(t *testing.T) {
	primary := llmtest.NewOpenAI(t, llmtest.Status(401))
	backup := llmtest.NewOpenAI(t) // any request fails the test
	f := &llm.Fallback{Entries: []llm.Entry{
		{Name: "primary", Provider: llm.NewRetry(adapter(t, primary, "openai", llmtest.Key), llm.RetryParams{MaxRetries: 3})},
		{Name: "backup", Provider: adapter(t, backup, "local", "")},
	}}
	_, err := f.Chat(context.Background(), req())
	e := asError(t, err)
	if e.Class != llm.FailAuth || e.Entry != "primary" || e.Attempts != 1 || len(e.FellBack) != 0 {
		t.Errorf("error = %+v", e)
	}
}

func TestFallbackExhaustedIsClassifiedByLastAttempt(t *testing.T) {
	a := llmtest.NewOpenAI(t, llmtest.Status(500))
	b := llmtest.NewOpenAI(t, llmtest.Status(429, "Retry-After", "600"))
	f := &llm.Fallback{Entries: []llm.Entry{
		{Name: "a", Provider: adapter(t, a, "pa", llmtest.Key)},
		{Name: "b", Provider: llm.NewRetry(adapter(t, b, "pb", llmtest.Key), llm.RetryParams{MaxRetries: 3})},
	}}
	_, err := f.Chat(context.Background(), req())
	e := asError(t, err)
	if e.Class != llm.FailRateLimit || e.Entry != "b" || e.Provider != "pb" || e.Attempts != 2 || e.RetryAfter != 10*time.Minute {
		t.Errorf("error = %+v", e)
	}
	if len(e.FellBack) != 1 || e.FellBack[0].Entry != "a" || e.FellBack[0].Class != llm.FailServerError {
		t.Errorf("fell back = %+v", e.FellBack)
	}
}

func TestEmptyFallbackIsConfigurationError(t *testing.T) {
	_, err := (&llm.Fallback{}).Chat(context.Background(), req())
	if e := asError(t, err); e.Class != llm.FailConfiguration {
		t.Errorf("class = %s", e.Class)
	}
}

func TestBreakerTransitions(t *testing.T) {
	rounds := []llmtest.Round{}
	for range 5 {
		rounds = append(rounds, llmtest.Status(500))
	}
	// After the cooldown: a failing probe, then (after another) a good one.
	rounds = append(rounds, llmtest.Status(503), llmtest.Text("back"), llmtest.Text("steady"))
	srv := llmtest.NewOpenAI(t, rounds...)
	clk := &clock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	var changes []string
	b := llm.NewBreaker(adapter(t, srv, "openai", llmtest.Key), llm.BreakerParams{
		Now:      clk.Now,
		OnChange: func(p string, from, to llm.BreakerState) { changes = append(changes, string(from)+">"+string(to)) },
	})
	ctx := context.Background()

	for i := range 5 {
		if b.State() != llm.BreakerClosed {
			t.Fatalf("open after %d failures", i)
		}
		if _, err := b.Chat(ctx, req()); asError(t, err).Class != llm.FailServerError {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if b.State() != llm.BreakerOpen {
		t.Fatalf("state after 5 failures = %s", b.State())
	}
	_, err := b.Chat(ctx, req())
	if e := asError(t, err); e.Class != llm.FailCircuitOpen || e.Attempts != 0 {
		t.Errorf("open circuit: %+v", e)
	}
	if n := len(srv.Requests()); n != 5 {
		t.Errorf("the open circuit made a network call: %d requests", n)
	}

	clk.Advance(29 * time.Second)
	if b.State() != llm.BreakerOpen {
		t.Errorf("half-open before the cooldown")
	}
	clk.Advance(time.Second)
	if b.State() != llm.BreakerHalfOpen {
		t.Fatalf("state after cooldown = %s", b.State())
	}
	if _, err := b.Chat(ctx, req()); asError(t, err).Class != llm.FailServerError {
		t.Fatalf("probe: %v", err)
	}
	if b.State() != llm.BreakerOpen {
		t.Fatalf("a failed probe left the circuit %s", b.State())
	}
	clk.Advance(30 * time.Second)
	if resp, err := b.Chat(ctx, req()); err != nil || resp.Content != "back" {
		t.Fatalf("probe: %v", err)
	}
	if b.State() != llm.BreakerClosed {
		t.Fatalf("a good probe left the circuit %s", b.State())
	}
	if _, err := b.Chat(ctx, req()); err != nil {
		t.Fatal(err)
	}
	want := "closed>open open>halfOpen halfOpen>open open>halfOpen halfOpen>closed"
	if got := strings.Join(changes, " "); got != want {
		t.Errorf("transitions %q, want %q", got, want)
	}
}

func TestBreakerLetsOneProbeThrough(t *testing.T) {
	hold := make(chan struct{})
	arrived := make(chan struct{})
	srv := llmtest.NewOpenAI(t, llmtest.Status(500),
		llmtest.Round{Text: "probe", Hold: hold, Check: func(testing.TB, llmtest.Request) { close(arrived) }})
	clk := &clock{now: time.Unix(0, 0)}
	b := llm.NewBreaker(adapter(t, srv, "openai", llmtest.Key), llm.BreakerParams{Threshold: 1, Now: clk.Now})
	ctx := context.Background()
	if _, err := b.Chat(ctx, req()); err == nil {
		t.Fatal("want the tripping failure")
	}
	clk.Advance(llm.DefaultBreakerCooldown)

	done := make(chan error)
	go func() {
		_, err := b.Chat(ctx, req())
		done <- err
	}()
	<-arrived // the probe is in flight
	_, err := b.Chat(ctx, req())
	if e := asError(t, err); e.Class != llm.FailCircuitOpen {
		t.Errorf("second caller during the probe: %+v", e)
	}
	close(hold)
	if err := <-done; err != nil {
		t.Errorf("probe: %v", err)
	}
	if b.State() != llm.BreakerClosed {
		t.Errorf("state = %s", b.State())
	}
}

func TestBreakerIgnoresNonTrippingFailures(t *testing.T) {
	rounds := []llmtest.Round{}
	for range 6 {
		rounds = append(rounds, llmtest.Status(400))
	}
	srv := llmtest.NewOpenAI(t, rounds...)
	b := llm.NewBreaker(adapter(t, srv, "openai", llmtest.Key), llm.BreakerParams{})
	for range 6 {
		_, _ = b.Chat(context.Background(), req())
	}
	if b.State() != llm.BreakerClosed {
		t.Errorf("client errors opened the circuit")
	}
}

func TestFallbackMovesOnFromOpenCircuit(t *testing.T) {
	primary := llmtest.NewOpenAI(t, llmtest.Status(500))
	backup := llmtest.NewOpenAI(t, llmtest.Text("one"), llmtest.Text("two"))
	brk := llm.NewBreaker(adapter(t, primary, "openai", llmtest.Key), llm.BreakerParams{Threshold: 1})
	f := &llm.Fallback{Entries: []llm.Entry{
		{Name: "primary", Provider: brk},
		{Name: "backup", Provider: adapter(t, backup, "local", "")},
	}}
	for i, want := range []string{"one", "two"} {
		resp, err := f.Chat(context.Background(), req())
		if err != nil || resp.Content != want {
			t.Fatalf("call %d: %q %v", i, resp.Content, err)
		}
		if i == 1 && (resp.Attempts != 1 || resp.FellBack[0].Class != llm.FailCircuitOpen) {
			t.Errorf("second call: attempts %d fell back %+v, want 1 and circuitOpen", resp.Attempts, resp.FellBack)
		}
	}
	if n := len(primary.Requests()); n != 1 {
		t.Errorf("primary got %d requests, want 1", n)
	}
}

func TestStreamThroughDecorators(t *testing.T) {
	primary := llmtest.NewOpenAI(t, llmtest.Status(500))
	backup := llmtest.NewOpenAI(t, llmtest.Text("streamed through the chain"))
	var s sleeps
	f := &llm.Fallback{Entries: []llm.Entry{
		{Name: "primary", Provider: llm.Resilient(adapter(t, primary, "openai", llmtest.Key), llm.RetryParams{Sleep: s.sleep}, llm.BreakerParams{})},
		{Name: "backup", Provider: llm.Resilient(adapter(t, backup, "local", ""), llm.RetryParams{Sleep: s.sleep}, llm.BreakerParams{})},
	}}
	var got strings.Builder
	resp, err := llm.Stream(context.Background(), f, req(), func(d string) { got.WriteString(d) })
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != "streamed through the chain" || resp.Entry != "backup" {
		t.Errorf("deltas %q entry %q", got.String(), resp.Entry)
	}
	if !backup.Request(0).Has("stream") {
		t.Errorf("the backup was not asked to stream: %s", backup.Request(0).Body)
	}
}

func TestAPIKeyNeverInErrorsOrLogs(t *testing.T) {
	const key = "sk-live-SECRET-4242424242"
	primary := llmtest.NewOpenAI(t,
		llmtest.Status(500).WithMessage("upstream rejected "+key),
		llmtest.Status(429, "Retry-After", "1").WithMessage("slow down "+key))
	backup := llmtest.NewOpenAI(t, llmtest.Status(401).WithMessage("Incorrect API key provided: "+key))
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var s sleeps
	rp := llm.RetryParams{MaxRetries: 1, Sleep: s.sleep, Logger: logger}
	f := &llm.Fallback{Logger: logger, Entries: []llm.Entry{
		{Name: "primary", Provider: llm.NewRetry(adapter(t, primary, "openai", key), rp)},
		{Name: "backup", Provider: llm.NewRetry(adapter(t, backup, "other", key), rp)},
	}}
	_, err := f.Chat(context.Background(), req())
	if err == nil {
		t.Fatal("want an error")
	}
	if !strings.Contains(logs.String(), "retrying") || !strings.Contains(logs.String(), "falling back") {
		t.Fatalf("expected retry and fallback records, got:\n%s", logs.String())
	}
	for what, text := range map[string]string{
		"error": err.Error(), "error %+v": fmt.Sprintf("%+v", err), "error %#v": fmt.Sprintf("%#v", asError(t, err)), "logs": logs.String(),
	} {
		if strings.Contains(text, key) {
			t.Errorf("%s carries the API key:\n%s", what, text)
		}
	}
}

func TestStreamNotRetriedAfterDeltas(t *testing.T) {
	partial := `data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"gpt-test","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}` + "\n\n"
	primary := llmtest.NewOpenAI(t, llmtest.Round{Body: partial, Drop: true})
	backup := llmtest.NewOpenAI(t) // moving on would repeat text already shown
	var s sleeps
	f := &llm.Fallback{Entries: []llm.Entry{
		{Name: "primary", Provider: llm.NewRetry(adapter(t, primary, "openai", llmtest.Key), llm.RetryParams{MaxRetries: 3, Sleep: s.sleep})},
		{Name: "backup", Provider: adapter(t, backup, "local", "")},
	}}
	var got strings.Builder
	_, err := f.ChatStream(context.Background(), req(), func(d string) { got.WriteString(d) })
	e := asError(t, err)
	if e.Class != llm.FailConnection || e.Attempts != 1 || e.Entry != "primary" || got.String() != "Hel" || s.String() != "[]" {
		t.Errorf("class %s attempts %d entry %q deltas %q sleeps %s; want connection 1 primary Hel []",
			e.Class, e.Attempts, e.Entry, got.String(), &s)
	}
}
