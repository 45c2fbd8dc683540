// Package wire holds what the adapters share: the HTTP client they wrap,
// classification of transport and API failures into *llm.Error, secret
// redaction and the JSON normalisations every wire format needs.
package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/t3agent/t3agent/internal/llm"
)

// Tap remembers the status and headers of the last HTTP response of one
// call, so Retry-After is read from the real header whatever the SDK's
// error type exposes.
type Tap struct {
	mu     sync.Mutex
	status int
	header http.Header
}

type tapKey struct{}

// WithTap returns ctx carrying a fresh Tap.
func WithTap(ctx context.Context) (context.Context, *Tap) {
	t := &Tap{}
	return context.WithValue(ctx, tapKey{}, t), t
}

// Last returns the last response's status and headers (0, nil if none).
func (t *Tap) Last() (int, http.Header) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status, t.header
}

type tapTransport struct{ next http.RoundTripper }

func (tt tapTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := tt.next.RoundTrip(req)
	if t, ok := req.Context().Value(tapKey{}).(*Tap); ok && resp != nil {
		t.mu.Lock()
		t.status, t.header = resp.StatusCode, resp.Header.Clone()
		t.mu.Unlock()
	}
	return resp, err
}

// Client returns a copy of c (or of a fresh llm.NewHTTPClient when nil)
// whose transport feeds Taps.
func Client(c *http.Client, timeout time.Duration) *http.Client {
	if c == nil {
		c = llm.NewHTTPClient(llm.HTTPClientParams{Timeout: timeout})
	}
	cp := *c
	next := cp.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	cp.Transport = tapTransport{next: next}
	return &cp
}

// CloseIdle closes the idle connections of a client made by Client.
func CloseIdle(c *http.Client) {
	if tt, ok := c.Transport.(tapTransport); ok {
		if ci, ok := tt.next.(interface{ CloseIdleConnections() }); ok {
			ci.CloseIdleConnections()
		}
	}
}

// Redact replaces every secret (and its URL-escaped form) in s.
func Redact(s string, secrets ...string) string {
	for _, sec := range secrets {
		if len(sec) < 4 {
			continue // too short to be a key, too likely to mangle text
		}
		s = strings.ReplaceAll(s, sec, "[redacted]")
		if esc := url.QueryEscape(sec); esc != sec {
			s = strings.ReplaceAll(s, esc, "[redacted]")
		}
	}
	return s
}

// Failure describes a failed call for Classify.
type Failure struct {
	Provider string
	// Err is the SDK's error.
	Err error
	// Status and Message come from the SDK's API error type, when the
	// server answered; Status 0 means a transport failure.
	Status  int
	Message string
	// Tap supplies the real response headers (Retry-After).
	Tap *Tap
	// Secrets are scrubbed from every message.
	Secrets []string
}

// Classify turns a failed call into an *llm.Error.
func Classify(ctx context.Context, f Failure) *llm.Error {
	e := &llm.Error{Provider: f.Provider, Attempts: 1}
	status := f.Status
	var header http.Header
	if f.Tap != nil {
		s, h := f.Tap.Last()
		header = h
		if status == 0 && s >= 400 {
			status = s
		}
	}
	switch {
	case ctx.Err() != nil:
		e.Class, e.Message, e.Cause = llm.FailCanceled, ctx.Err().Error(), ctx.Err()
		return e
	case status >= 400:
		e.Class, e.Status = llm.ClassifyStatus(status), status
		e.Message = f.Message
		if e.Message == "" {
			e.Message = http.StatusText(status)
		}
		if e.Class == llm.FailRateLimit && header != nil {
			e.RetryAfter = llm.ParseRetryAfter(header, time.Now())
		}
	default:
		e.Class, e.Cause = llm.FailConnection, f.Err
		e.Message = transportMessage(f.Err)
		var ne net.Error
		if errors.As(f.Err, &ne) && ne.Timeout() || errors.Is(f.Err, context.DeadlineExceeded) {
			e.Timeout = true
		}
		if !isTransport(f.Err) {
			// The server answered 2xx but the body was unusable; SDKs quote
			// such bodies in their errors, so the text stays generic.
			e.Class, e.Cause, e.Message = llm.FailUnknown, nil, "the answer could not be read"
		}
	}
	e.Message = Redact(e.Message, f.Secrets...)
	return e
}

// isTransport reports whether err happened below HTTP: dialing, TLS,
// a dropped connection or our own timeout. A body that arrived whole but
// does not parse is not one, though JSON decoders report it with the same
// io.ErrUnexpectedEOF that a cut connection gives.
func isTransport(err error) bool {
	if err == nil {
		return false
	}
	var ue *url.Error
	var ne net.Error
	var oe *net.OpError
	if errors.As(err, &ue) || errors.As(err, &ne) || errors.As(err, &oe) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	if errors.As(err, &se) || errors.As(err, &te) {
		return false
	}
	msg := strings.ToLower(err.Error())
	if strings.Contains(msg, "json") || strings.Contains(msg, "unmarshal") || strings.Contains(msg, "pars") {
		return false
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || strings.Contains(msg, "connection reset")
}

// transportMessage keeps the innermost cause and drops the URL, which an
// SDK may have built with credentials in it.
func transportMessage(err error) string {
	if err == nil {
		return "no response"
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err.Error()
	}
	return err.Error()
}

// ObjectArgs parses tool-call arguments for wires that need an object
// (Anthropic's input, Gemini's args). Empty or malformed text becomes an
// empty object: the original call already failed at the gate, and the
// tool result in the transcript says why.
func ObjectArgs(args string) map[string]any {
	var m map[string]any
	if strings.TrimSpace(args) == "" || json.Unmarshal([]byte(args), &m) != nil || m == nil {
		return map[string]any{}
	}
	return m
}

// ArgsText is the arguments text sent on a string wire (OpenAI): empty
// becomes "{}", anything else goes verbatim.
func ArgsText(args string) string {
	if strings.TrimSpace(args) == "" {
		return "{}"
	}
	return args
}

// Schema parses a tool's JSON Schema into an object schema: missing or
// invalid becomes {"type":"object","properties":{}}, and properties given
// as an empty array or null (as PHP-shaped or hand-written schemas do)
// become {}.
func Schema(raw json.RawMessage) map[string]any {
	var m map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil || m == nil {
		m = map[string]any{}
	}
	if _, ok := m["type"]; !ok {
		m["type"] = "object"
	}
	switch p := m["properties"].(type) {
	case map[string]any:
	case []any:
		if len(p) == 0 {
			m["properties"] = map[string]any{}
		}
	case nil:
		m["properties"] = map[string]any{}
	}
	return m
}

// RawSchema is Schema with its top-level values kept as the JSON they
// were sent as (json.RawMessage): a request encoder then copies each
// value instead of decoding the whole schema and encoding it again on
// every call. It applies Schema's repairs, and Schema's whole treatment
// to a schema that is not a JSON object or not valid UTF-8 (decoding
// replaces the bad bytes; a raw copy would pass them on).
func RawSchema(raw json.RawMessage) map[string]any {
	var top map[string]json.RawMessage
	if len(raw) == 0 || !utf8.Valid(raw) || json.Unmarshal(raw, &top) != nil || top == nil {
		return Schema(raw)
	}
	m := make(map[string]any, len(top)+2)
	for k, v := range top {
		m[k] = v
	}
	if _, ok := top["type"]; !ok {
		m["type"] = "object"
	}
	switch p := bytes.TrimSpace(top["properties"]); {
	case len(p) == 0, string(p) == "null":
		m["properties"] = map[string]any{}
	case p[0] == '[' && len(bytes.TrimSpace(p[1:len(p)-1])) == 0: // [] or [ ]
		m["properties"] = map[string]any{}
	}
	return m
}

// CallID is the id of the i-th tool call of a turn: the provider's, or
// call_<i> when it gave none.
func CallID(id string, i int) string {
	if id != "" {
		return id
	}
	return "call_" + strconv.Itoa(i)
}
