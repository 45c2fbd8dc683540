package mcp_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/store"
)

// rawServer is a real HTTP server speaking just enough MCP by hand to
// answer one method with a failure shape the SDK's server never sends.
// It answers discovery as a legacy server, the handshake properly, and
// tools/list with one tool.
type rawServer struct {
	*httptest.Server
	failOn string // JSON-RPC method answered with shape
	shape  func(w http.ResponseWriter, _ *http.Request, id json.RawMessage)
	delay  time.Duration // before every answer

	mu       sync.Mutex
	arrivals []time.Time
}

func newRawServer(t testing.TB, failOn string, shape func(w http.ResponseWriter, _ *http.Request, id json.RawMessage)) *rawServer {
	t.Helper()
	rs := &rawServer{failOn: failOn, shape: shape}
	rs.Server = httptest.NewServer(http.HandlerFunc(rs.serve))
	t.Cleanup(rs.Close)
	return rs
}

func writeJSON(w http.ResponseWriter, id json.RawMessage, result string) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result)
}

func (rs *rawServer) serve(w http.ResponseWriter, r *http.Request) {
	rs.mu.Lock()
	rs.arrivals = append(rs.arrivals, time.Now())
	rs.mu.Unlock()
	if rs.delay > 0 {
		select {
		case <-time.After(rs.delay):
		case <-r.Context().Done():
			return
		}
	}
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(body, &msg)
	rs.mu.Lock()
	failOn, shape := rs.failOn, rs.shape
	rs.mu.Unlock()
	if shape != nil && msg.Method == failOn {
		shape(w, r, msg.ID)
		return
	}
	switch msg.Method {
	case "server/discover":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, msg.ID)
	case "initialize":
		writeJSON(w, msg.ID, `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"0"}}`)
	case "tools/list":
		writeJSON(w, msg.ID, `{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`)
	case "tools/call":
		writeJSON(w, msg.ID, `{"content":[{"type":"text","text":"fine"}]}`)
	default: // notifications
		w.WriteHeader(http.StatusAccepted)
	}
}

// setShape changes the failure of tools/call; nil answers properly.
func (rs *rawServer) setShape(fn func(w http.ResponseWriter, r *http.Request, id json.RawMessage)) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.failOn, rs.shape = "tools/call", fn
}

func (rs *rawServer) arrivedAfter(t time.Time) int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	n := 0
	for _, a := range rs.arrivals {
		if a.After(t) {
			n++
		}
	}
	return n
}

type shape struct {
	name string
	kind mcp.Kind
	fn   func(w http.ResponseWriter, _ *http.Request, id json.RawMessage)
}

func failureShapes() []shape {
	return []shape{
		{"500", mcp.KindHTTPStatus, func(w http.ResponseWriter, _ *http.Request, _ json.RawMessage) {
			http.Error(w, "internal error", http.StatusInternalServerError)
		}},
		{"302", mcp.KindRedirect, func(w http.ResponseWriter, _ *http.Request, _ json.RawMessage) {
			w.Header().Set("Location", "http://127.0.0.1:1/elsewhere")
			w.WriteHeader(http.StatusFound)
		}},
		{"401", mcp.KindUnauthorized, func(w http.ResponseWriter, _ *http.Request, _ json.RawMessage) {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "who are you", http.StatusUnauthorized)
		}},
		{"jsonrpc_error", mcp.KindRPCError, func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":"the \u001b[31mdatabase\nis down"}}`, id)
		}},
		{"html", mcp.KindContentType, func(w http.ResponseWriter, _ *http.Request, _ json.RawMessage) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, "<html><body>Login required</body></html>")
		}},
		{"html_as_json", mcp.KindMalformed, func(w http.ResponseWriter, _ *http.Request, _ json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, "<html><body>Login required</body></html>")
		}},
		{"sse_only_comments", mcp.KindStreamLost, func(w http.ResponseWriter, _ *http.Request, _ json.RawMessage) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, ": keep-alive\n\n: still here\n\n")
		}},
		{"sse_only_notification", mcp.KindStreamLost, func(w http.ResponseWriter, _ *http.Request, _ json.RawMessage) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"hi\"}}\n\n")
		}},
		{"no_result", mcp.KindMalformed, func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s}`, id)
		}},
		{"empty_body", mcp.KindMalformed, func(w http.ResponseWriter, _ *http.Request, _ json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
		}},
		{"3_MiB", mcp.KindTooLarge, func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s"}]}}`, id, strings.Repeat("x", 3<<20))
		}},
		{"3_MiB_sse", mcp.KindTooLarge, func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"%s\"}]}}\n\n", id, strings.Repeat("x", 3<<20))
		}},
	}
}

// TestFailureShapes runs every failure shape at the handshake (ping and
// import) and at the call (through the gate): each is an error of the
// right kind, an error result for the model, no recorded contact, and no
// panic.
func TestFailureShapes(t *testing.T) {
	t.Parallel()
	for _, sh := range failureShapes() {
		t.Run(sh.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			f := newFixture(t)

			hs := newRawServer(t, "initialize", sh.fn)
			f.add(t, "hs", hs.URL)
			_, err := f.svc.Ping(ctx, "hs")
			if mcp.KindOf(err) != sh.kind {
				t.Errorf("Ping: err = %v (kind %q), want kind %q", err, mcp.KindOf(err), sh.kind)
			}
			checkOneLine(t, err)
			_, err = f.svc.Import(ctx, mcp.ImportParams{Server: "hs"})
			if mcp.KindOf(err) != sh.kind {
				t.Errorf("Import: err = %v, want kind %q", err, sh.kind)
			}
			srv := f.server(t, "hs")
			if !srv.LastContact.IsZero() || srv.ImportStatus != store.MCPImportError || srv.ImportError != err.Error() {
				t.Errorf("after failed ping and import: %+v; want no contact and the import error", srv)
			}

			cs := newRawServer(t, "tools/call", sh.fn)
			f.add(t, "calls", cs.URL)
			g := f.gated(t)
			f.importTools(t, g, "calls", "mcp_calls_echo")
			imported := f.server(t, "calls").LastContact
			res := g.invoke(ctx, "mcp_calls_echo", `{}`)
			if !res.IsError || !strings.HasPrefix(res.Content, `Error: tool "mcp_calls_echo" failed: the MCP server "calls"`) || strings.Contains(res.Content, "\n") {
				t.Errorf("call = %+v; want one error line naming the server", res)
			}
			if got := f.server(t, "calls").LastContact; !got.Equal(imported) {
				t.Errorf("a failed call recorded a contact: %v after %v", got, imported)
			}
			// The next call still works: a broken session was retired.
			cs.setShape(nil)
			if res := g.invoke(ctx, "mcp_calls_echo", `{}`); res.IsError || res.Content != "fine" {
				t.Errorf("the call after the failure = %+v", res)
			}
		})
	}
}

func checkOneLine(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		t.Error("no error")
		return
	}
	if msg := err.Error(); strings.ContainsAny(msg, "\n\r\x1b") || len(msg) > 600 {
		t.Errorf("error %q is not one clean sentence", msg)
	}
}

// TestDeadlineAcrossLegs gives every request of an operation 250 ms: each
// leg alone is well inside the 700 ms deadline, together they are not.
// The operation must fail at its deadline, and nothing may be sent after.
func TestDeadlineAcrossLegs(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	const deadline = 700 * time.Millisecond
	f := newFixture(t, func(p *mcp.Params) { p.Timeout = deadline })
	rs := newRawServer(t, "", nil)
	rs.delay = 250 * time.Millisecond
	f.add(t, "slow", rs.URL)

	start := time.Now()
	_, err := f.svc.Import(ctx, mcp.ImportParams{Server: "slow"})
	took := time.Since(start)
	if mcp.KindOf(err) != mcp.KindTimeout || !strings.Contains(err.Error(), "did not answer within 700ms") {
		t.Fatalf("Import = %v, want a timeout after 700ms", err)
	}
	// With a timeout per leg every 250 ms leg would succeed, so the
	// timeout error itself proves the one deadline. The bounds only check
	// that the operation ends at it and not later; they are generous
	// because a loaded machine schedules late, and the grace on arrivals
	// covers a request written just before the deadline.
	const slack = 2 * time.Second
	if took < deadline || took > deadline+slack {
		t.Errorf("the import took %v; want the one deadline of %v", took, deadline)
	}
	if n := rs.arrivedAfter(start.Add(deadline + 300*time.Millisecond)); n != 0 {
		t.Errorf("%d requests reached the server after the deadline", n)
	}
	if !f.server(t, "slow").LastContact.IsZero() {
		t.Error("a timed-out import recorded a contact")
	}

	// A server that never answers: the call ends at the deadline too.
	hang := newRawServer(t, "", nil)
	f.add(t, "hang", hang.URL)
	g := f.gated(t)
	f.importTools(t, g, "hang", "mcp_hang_echo")
	hang.setShape(func(w http.ResponseWriter, r *http.Request, _ json.RawMessage) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	start = time.Now()
	res := g.invoke(ctx, "mcp_hang_echo", `{}`)
	if !res.IsError || !strings.Contains(res.Content, "did not answer within") || time.Since(start) > deadline+slack {
		t.Errorf("a hanging call = %+v after %v", res, time.Since(start))
	}
}
