// Package llmtest provides scripted provider servers for tests anywhere in
// the repository: real HTTP servers (httptest) that speak the OpenAI
// chat-completions, Anthropic messages or Gemini generateContent wire
// format, so tests drive the real SDK clients through the real adapters.
//
// A Server replays a script of Rounds in order. Each Round may check the
// request it receives and then answers with text, tool calls, a finish
// reason, usage and a served model, or fails with an HTTP status and
// headers (429 with Retry-After, 500, 401 …), or drops the connection.
// Every request body is recorded, for golden files and for asserting that
// a secret never reached the provider. A request beyond the script fails
// the test (and is answered 400, which nothing retries); so, at cleanup,
// does a script with rounds left over, unless Options.AllowUnused.
//
//	srv := llmtest.NewOpenAI(t,
//		llmtest.Calls(llmtest.Call("c1", "page_read", `{"uid":1}`)),
//		llmtest.Text("done").WithUsage(120, 8),
//	)
//	p := srv.Provider(t) // or openai.New(openai.Params{BaseURL: srv.BaseURL(), APIKey: llmtest.Key})
//	… run the code under test …
//	body := srv.Request(1).JSON(t)
//	srv.AssertNeverSent(t, plantedSecret)
//
// Requests with "stream": true (or Gemini's streamGenerateContent) are
// answered as server-sent events carrying the same Round. Options.Cycle
// replays the script endlessly without recording, a zero-latency provider
// for benchmarks.
//
// A Server is safe for concurrent use; rounds are consumed in arrival order.
package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/t3agent/t3agent/internal/llm"
)

// Key is the API key Provider configures; servers accept any key.
const Key = "sk-llmtest-0123456789abcdef"

// Wire is the HTTP dialect a Server speaks.
type Wire string

const (
	OpenAI    Wire = "openai"
	Anthropic Wire = "anthropic"
	Gemini    Wire = "gemini"
)

// Round is one scripted exchange: optional checks on the request, then
// either an answer or a failure.
type Round struct {
	// Check inspects the request before the answer is sent. It runs on the
	// server's goroutine: report with t.Errorf, not t.Fatal.
	Check func(t testing.TB, r Request)

	// Text and ToolCalls make up the answer. A ToolCall with an empty ID
	// is sent without one, as some providers do. Arguments go out verbatim
	// on the OpenAI wire (malformed text included); the Anthropic and
	// Gemini wires carry objects, so there they must be a JSON object.
	Text      string
	ToolCalls []llm.ToolCall
	// Finish is mapped to the wire's vocabulary; "" means tool_calls when
	// there are calls and stop otherwise. RawFinish, when set, is sent
	// verbatim instead.
	Finish    llm.FinishReason
	RawFinish string
	Usage     llm.Usage
	// Model is the served model reported; "" echoes the requested one.
	Model string

	// Status ≥ 400 answers with the wire's error body carrying Message.
	Status  int
	Message string
	// Header is added to the response (Retry-After, …).
	Header http.Header
	// Body, when set, is sent verbatim (with Status, default 200) instead
	// of anything generated.
	Body string
	// Drop closes the connection without an answer: a connection error.
	// With Body, Body is first sent as the start of a 200 event stream,
	// so the connection breaks mid-stream.
	Drop bool
	// Hold, when set, makes the server wait until it is closed (or the
	// client gives up) before answering: for tests of in-flight calls,
	// cancellation and timeouts, without sleeping.
	Hold <-chan struct{}
}

// Text is a round answering with text.
func Text(s string) Round { return Round{Text: s} }

// Calls is a round answering with tool calls.
func Calls(calls ...llm.ToolCall) Round { return Round{ToolCalls: calls} }

// Call builds a tool call for Calls.
func Call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: args}
}

// Status is a round failing with an HTTP status; headers are name, value
// pairs ("Retry-After", "2").
func Status(code int, headers ...string) Round {
	r := Round{Status: code, Message: http.StatusText(code)}
	if len(headers) > 0 {
		r.Header = http.Header{}
		for i := 0; i+1 < len(headers); i += 2 {
			r.Header.Add(headers[i], headers[i+1])
		}
	}
	return r
}

// Drop is a round that closes the connection unanswered.
func Drop() Round { return Round{Drop: true} }

// WithUsage returns r reporting the given token counts.
func (r Round) WithUsage(in, out int) Round {
	r.Usage = llm.Usage{InputTokens: in, OutputTokens: out}
	return r
}

// WithFinish returns r with the finish reason f.
func (r Round) WithFinish(f llm.FinishReason) Round { r.Finish = f; return r }

// WithModel returns r reporting model m as served.
func (r Round) WithModel(m string) Round { r.Model = m; return r }

// WithCheck returns r running fn on its request.
func (r Round) WithCheck(fn func(t testing.TB, req Request)) Round { r.Check = fn; return r }

// WithMessage returns r failing with message m.
func (r Round) WithMessage(m string) Round { r.Message = m; return r }

// Request is one request the server received.
type Request struct {
	// Index is the request's position, from 0.
	Index    int
	Method   string
	Path     string
	RawQuery string
	Header   http.Header
	Body     []byte
}

// JSON decodes the body, failing the test when it is not a JSON object.
func (r Request) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Errorf("llmtest: request %d body is not a JSON object: %v", r.Index, err)
	}
	return m
}

// Has reports whether the body has the top-level field key.
func (r Request) Has(key string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(r.Body, &m) != nil {
		return false
	}
	_, ok := m[key]
	return ok
}

// Options configures New.
type Options struct {
	Wire Wire
	// Cycle replays the script endlessly and records nothing: a
	// zero-latency provider for benchmarks.
	Cycle bool
	// AllowUnused accepts a script with rounds never requested.
	AllowUnused bool
	// Models is the list answered to GET …/models (outside the script,
	// unrecorded).
	Models []llm.ModelInfo
}

// Server is a scripted provider. URL is its root.
type Server struct {
	URL string

	t    testing.TB
	opts Options
	srv  *httptest.Server

	mu     sync.Mutex
	rounds []Round
	next   int
	reqs   []Request
}

// NewOpenAI starts a server speaking OpenAI chat completions.
func NewOpenAI(t testing.TB, rounds ...Round) *Server {
	return New(t, Options{Wire: OpenAI}, rounds...)
}

// NewAnthropic starts a server speaking Anthropic messages.
func NewAnthropic(t testing.TB, rounds ...Round) *Server {
	return New(t, Options{Wire: Anthropic}, rounds...)
}

// NewGemini starts a server speaking Gemini generateContent.
func NewGemini(t testing.TB, rounds ...Round) *Server {
	return New(t, Options{Wire: Gemini}, rounds...)
}

// New starts a server; it is closed, and the script checked, at cleanup.
func New(t testing.TB, opts Options, rounds ...Round) *Server {
	t.Helper()
	switch opts.Wire {
	case OpenAI, Anthropic, Gemini:
	default:
		t.Fatalf("llmtest: unknown wire %q", opts.Wire)
	}
	s := &Server{t: t, opts: opts, rounds: rounds}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	t.Cleanup(func() {
		s.srv.Close() // waits for handlers, so none reports after the test
		if opts.Cycle || opts.AllowUnused {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if left := len(s.rounds) - s.next; left > 0 {
			t.Errorf("llmtest: %d of %d scripted rounds were never requested", left, len(s.rounds))
		}
	})
	return s
}

// BaseURL is the base URL to configure the wire's adapter with.
func (s *Server) BaseURL() string {
	if s.opts.Wire == OpenAI {
		return s.URL + "/v1"
	}
	return s.URL
}

// Push appends rounds to the script.
func (s *Server) Push(rounds ...Round) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rounds = append(s.rounds, rounds...)
}

// Remaining is how many rounds are still to be requested.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.rounds) - s.next
}

// Requests returns a copy of every request received, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Request returns request i, failing the test when there is none.
func (s *Server) Request(i int) Request {
	s.t.Helper()
	reqs := s.Requests()
	if i < 0 || i >= len(reqs) {
		s.t.Fatalf("llmtest: no request %d (received %d)", i, len(reqs))
	}
	return reqs[i]
}

// AssertNeverSent fails the test when any secret appears in a request's
// path, query or body (headers carry the API key by design).
func (s *Server) AssertNeverSent(t testing.TB, secrets ...string) {
	t.Helper()
	for _, r := range s.Requests() {
		for _, sec := range secrets {
			if sec == "" {
				continue
			}
			if bytes.Contains(r.Body, []byte(sec)) || strings.Contains(r.Path+"?"+r.RawQuery, sec) {
				t.Errorf("llmtest: request %d carried a secret (%d bytes) to the provider", r.Index, len(sec))
			}
		}
	}
}

func (s *Server) serve(w http.ResponseWriter, hr *http.Request) {
	if hr.Method == http.MethodGet && (strings.HasSuffix(hr.URL.Path, "/models") || strings.HasSuffix(hr.URL.Path, "/models/")) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(modelList(s.opts.Wire, s.opts.Models))
		return
	}
	body, _ := io.ReadAll(hr.Body)
	req := Request{Method: hr.Method, Path: hr.URL.Path, RawQuery: hr.URL.RawQuery, Header: hr.Header.Clone(), Body: body}

	s.mu.Lock()
	var round Round
	ok := true
	switch {
	case s.opts.Cycle && len(s.rounds) > 0:
		round = s.rounds[s.next%len(s.rounds)]
		req.Index = s.next
		s.next++
	case s.next < len(s.rounds):
		round = s.rounds[s.next]
		req.Index = s.next
		s.next++
		s.reqs = append(s.reqs, req)
	default:
		ok = false
		req.Index = len(s.reqs)
		s.reqs = append(s.reqs, req)
	}
	total := len(s.rounds)
	s.mu.Unlock()

	if !ok {
		s.t.Errorf("llmtest: unexpected request %d %s %s: the script has only %d rounds", req.Index, hr.Method, hr.URL.Path, total)
		writeError(w, s.opts.Wire, http.StatusBadRequest, "llmtest: script exhausted")
		return
	}
	if !s.validPath(hr) {
		s.t.Errorf("llmtest: request %d to unexpected path %s %s", req.Index, hr.Method, hr.URL.Path)
		writeError(w, s.opts.Wire, http.StatusNotFound, "llmtest: no such endpoint")
		return
	}
	if round.Check != nil {
		round.Check(s.t, req)
	}
	if round.Hold != nil {
		select {
		case <-round.Hold:
		case <-hr.Context().Done():
			return
		}
	}
	if round.Drop {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, buf, err := hj.Hijack(); err == nil {
				if round.Body != "" {
					// A chunked response that never sends its last chunk.
					fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", len(round.Body), round.Body)
					_ = buf.Flush()
				}
				_ = conn.Close()
				return
			}
		}
		s.t.Errorf("llmtest: cannot drop the connection")
		return
	}
	for k, vs := range round.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if round.Body != "" {
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(max(round.Status, http.StatusOK))
		_, _ = io.WriteString(w, round.Body)
		return
	}
	if round.Status >= 400 {
		writeError(w, s.opts.Wire, round.Status, round.Message)
		return
	}
	var in struct {
		Model         string `json:"model"`
		Stream        bool   `json:"stream"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	_ = json.Unmarshal(body, &in)
	if s.opts.Wire == Gemini {
		in.Model = geminiModel(hr.URL.Path)
		in.Stream = strings.HasSuffix(hr.URL.Path, ":streamGenerateContent")
	}
	a := answer{Round: round, model: round.Model, includeUsage: in.StreamOptions.IncludeUsage}
	if a.model == "" {
		a.model = in.Model
	}
	if a.Finish == "" {
		a.Finish = llm.FinishStop
		if len(a.ToolCalls) > 0 {
			a.Finish = llm.FinishToolCalls
		}
	}
	if in.Stream {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		fl, _ := w.(http.Flusher)
		for _, ev := range a.events(s.opts.Wire) {
			_, _ = w.Write(ev)
			if fl != nil {
				fl.Flush()
			}
		}
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(a.body(s.opts.Wire))
}

func (s *Server) validPath(r *http.Request) bool {
	if r.Method != http.MethodPost {
		return false
	}
	switch s.opts.Wire {
	case OpenAI:
		return strings.HasSuffix(r.URL.Path, "/chat/completions")
	case Anthropic:
		return strings.HasSuffix(r.URL.Path, "/v1/messages")
	case Gemini:
		return strings.Contains(r.URL.Path, "/models/") &&
			(strings.HasSuffix(r.URL.Path, ":generateContent") || strings.HasSuffix(r.URL.Path, ":streamGenerateContent"))
	}
	return false
}

func geminiModel(path string) string {
	i := strings.LastIndex(path, "/models/")
	if i < 0 {
		return ""
	}
	m := path[i+len("/models/"):]
	if j := strings.IndexByte(m, ':'); j >= 0 {
		m = m[:j]
	}
	return m
}
