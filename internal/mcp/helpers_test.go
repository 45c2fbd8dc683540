package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/logtest"
	"github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/secret"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func admin() *typo3.BackendUser  { return &typo3.BackendUser{UID: 1, Username: "admin", Admin: true} }
func editor() *typo3.BackendUser { return &typo3.BackendUser{UID: 7, Username: "editor"} }

// fixture is a Service over a real SQLite store, logging into logs.
type fixture struct {
	st   store.Store
	svc  *mcp.Service
	keys *secret.Keyring
	logs *logtest.Buffer
	log  *slog.Logger
}

func newFixture(t testing.TB, mut ...func(*mcp.Params)) *fixture {
	t.Helper()
	st, err := store.Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "t3agent.db"), store.OpenParams{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	key, err := secret.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := secret.NewKeyring(key)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{st: st, keys: keys, logs: &logtest.Buffer{}}
	f.log = slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	p := mcp.Params{Store: st, Keyring: keys, Logger: f.log, ClientVersion: "test"}
	for _, m := range mut {
		m(&p)
	}
	f.svc, err = mcp.New(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.svc.Close() })
	return f
}

// add stores an enabled, classified server; mut adjusts the parameters.
func (f *fixture) add(t testing.TB, id, url string, mut ...func(*mcp.AddParams)) mcp.Server {
	t.Helper()
	p := mcp.AddParams{Identifier: id, Name: "Server " + id, URL: url, DataClass: tool.EditorContent, Enabled: true, By: "admin"}
	for _, m := range mut {
		m(&p)
	}
	s, err := f.svc.Add(t.Context(), p)
	if err != nil {
		t.Fatalf("Add %s: %v", id, err)
	}
	return s
}

func (f *fixture) server(t testing.TB, id string) store.MCPServer {
	t.Helper()
	s, err := f.st.MCPServer(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// gated is a registry over the catalogue (and builtins) with the real gate.
type gated struct {
	reg  *tool.Registry
	gate *gate.Gate
}

func (f *fixture) gated(t testing.TB, builtins ...tool.Tool) gated {
	t.Helper()
	reg, err := tool.NewRegistry(builtins, f.svc.Provider())
	if err != nil {
		t.Fatal(err)
	}
	reg.SetLogger(f.log)
	g, err := gate.New(gate.Params{Registry: reg, Store: f.st, Logger: f.log})
	if err != nil {
		t.Fatal(err)
	}
	return gated{reg: reg, gate: g}
}

// importTools imports a server into the registry and enables the named
// tools by override (MCP tools of an enabled server are on by default;
// the override keeps them on whatever the server's default).
func (f *fixture) importTools(t testing.TB, g gated, id string, enable ...string) mcp.ImportResult {
	t.Helper()
	res, err := f.svc.Import(t.Context(), mcp.ImportParams{Server: id, Registry: g.reg})
	if err != nil {
		t.Fatalf("Import %s: %v", id, err)
	}
	for _, name := range enable {
		if _, err := g.gate.Availability().SetTool(t.Context(), gate.SetToolParams{Name: name, Enabled: true, By: "admin"}); err != nil {
			t.Fatal(err)
		}
	}
	return res
}

// invoke calls a tool through the gate as an admin for a local provider,
// with a fresh budget of CallsPerSegment.
func (g gated) invoke(ctx context.Context, name, args string) tool.Result {
	ctx = mcp.WithCallBudget(ctx, mcp.NewCallBudget(mcp.CallsPerSegment))
	return g.invokeBudget(ctx, name, args)
}

func (g gated) invokeBudget(ctx context.Context, name, args string) tool.Result {
	return g.invokeIn(ctx, nil, name, args)
}

// offer is a turn's offer to an admin for a local provider, as the loop
// makes it at the start of a run.
func (g gated) offer(t testing.TB) *gate.Offered {
	t.Helper()
	o, err := g.gate.Offer(t.Context(), gate.OfferParams{Actor: admin(), Config: gate.Config{Name: "test", TrustZone: tool.ZoneLocal}})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// invokeIn calls a tool within an offered set (nil: decided afresh), as
// the loop calls the tools of its turn.
func (g gated) invokeIn(ctx context.Context, offered *gate.Offered, name, args string) tool.Result {
	if _, ok := mcp.CallBudgetFrom(ctx); !ok && offered != nil {
		ctx = mcp.WithCallBudget(ctx, mcp.NewCallBudget(mcp.CallsPerSegment))
	}
	return g.gate.Invoke(ctx, gate.InvokeParams{
		Name: name, Args: json.RawMessage(args), Call: tool.Call{Actor: admin(), CallID: "c1"},
		Config: gate.Config{Name: "test", TrustZone: tool.ZoneLocal}, Offered: offered,
	})
}

// ---- real MCP servers built with the Go SDK ----

type serverKind struct {
	name      string
	stateless bool
	json      bool
	versions  []string // nil: every version the SDK knows
}

var serverKinds = []serverKind{
	{name: "stateless_json", stateless: true, json: true},
	{name: "stateless_sse", stateless: true},
	{name: "sessions_sse_2025_03_26", versions: []string{"2025-03-26"}},
	{name: "sessions_json_2025_06_18", json: true, versions: []string{"2025-06-18"}},
}

func textResult(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

func argsOf(req *sdk.CallToolRequest) map[string]any {
	var m map[string]any
	_ = json.Unmarshal(req.Params.Arguments, &m)
	return m
}

// standardTools are what the test servers offer.
func standardTools(s *sdk.Server) {
	obj := func(props string, required ...string) map[string]any {
		var p map[string]any
		if err := json.Unmarshal([]byte(props), &p); err != nil {
			panic(err)
		}
		m := map[string]any{"type": "object", "properties": p}
		if required != nil {
			m["required"] = required
		}
		return m
	}
	yes := true
	s.AddTool(&sdk.Tool{Name: "echo", Description: "Echoes text.", InputSchema: obj(`{"text":{"type":"string"}}`, "text"),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			text, _ := argsOf(req)["text"].(string)
			return textResult(text), nil
		})
	s.AddTool(&sdk.Tool{Name: "add", Description: "Adds two numbers.", InputSchema: obj(`{"a":{"type":"number"},"b":{"type":"number"}}`, "a", "b")},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			a, _ := argsOf(req)["a"].(float64)
			b, _ := argsOf(req)["b"].(float64)
			return textResult(fmt.Sprintf("sum=%g", a+b)), nil
		})
	s.AddTool(&sdk.Tool{Name: "image", Description: "Shows a picture.", InputSchema: obj(`{}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "before"},
				&sdk.ImageContent{Data: []byte{0x89, 'P', 'N', 'G'}, MIMEType: "image/png"},
				&sdk.AudioContent{Data: []byte{1}, MIMEType: "audio/wav"},
				&sdk.TextContent{Text: "after"},
			}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "structured", Description: "Returns structured content only.", InputSchema: obj(`{}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{}, StructuredContent: map[string]any{"temperature": 21, "unit": "C"}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "fails", Description: "Always reports an error.", InputSchema: obj(`{}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "bad\x1b[31m input\u202e"}}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "delete_page", Description: "Deletes a page.", InputSchema: obj(`{"uid":{"type":"integer"}}`),
		Annotations: &sdk.ToolAnnotations{DestructiveHint: &yes}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return textResult("deleted"), nil
		})
}

// recorder counts what a server was asked, by JSON-RPC method, and keeps
// the credential headers it saw.
type recorder struct {
	mu       sync.Mutex
	methods  []string
	auth     []string
	apiKeys  []string
	sessions []string
}

func (r *recorder) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var msg struct {
			Method string `json:"method"`
		}
		if req.Method == http.MethodPost {
			body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
			_ = json.Unmarshal(body, &msg)
			req.Body = io.NopCloser(bytes.NewReader(body))
		}
		r.mu.Lock()
		r.methods = append(r.methods, req.Method+" "+msg.Method)
		r.auth = append(r.auth, req.Header.Get("Authorization"))
		r.apiKeys = append(r.apiKeys, req.Header.Get("X-Api-Key"))
		r.sessions = append(r.sessions, req.Header.Get("Mcp-Session-Id"))
		r.mu.Unlock()
		next.ServeHTTP(w, req)
	})
}

func (r *recorder) count(method string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, m := range r.methods {
		if m == "POST "+method {
			n++
		}
	}
	return n
}

func (r *recorder) authSeen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.auth)
}

// sdkServer is a real MCP server over httptest.
type sdkServer struct {
	*httptest.Server
	mcp *sdk.Server
	rec *recorder
}

func newSDKServer(t testing.TB, kind serverKind, mut ...func(*sdk.ServerOptions)) *sdkServer {
	t.Helper()
	return startSDKServer(t, kind, true, mut...)
}

// startSDKServer is newSDKServer; without record, requests are not
// recorded (benchmarks: a record growing with every request would grow
// the live heap, and so change the garbage collector's share, as a run
// goes on).
func startSDKServer(t testing.TB, kind serverKind, record bool, mut ...func(*sdk.ServerOptions)) *sdkServer {
	t.Helper()
	opts := &sdk.ServerOptions{SupportedProtocolVersions: kind.versions}
	for _, m := range mut {
		m(opts)
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "test-server", Version: "1.2.3"}, opts)
	standardTools(s)
	rec := &recorder{}
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{
		Stateless: kind.stateless, JSONResponse: kind.json,
	})
	handler := http.Handler(h)
	if record {
		handler = rec.wrap(h)
	}
	ts := httptest.NewServer(handler)
	t.Cleanup(func() {
		ts.Close()
		// Sessions a client left open (its DELETE may come after the
		// listener closed) end with the test.
		for ss := range s.Sessions() {
			_ = ss.Close()
		}
	})
	return &sdkServer{Server: ts, mcp: s, rec: rec}
}
