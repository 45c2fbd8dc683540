package mcp_test

import (
	"context"
	"log/slog"
	"net/http"
	"path/filepath"
	"runtime"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/t3agent/t3agent/internal/dbtest"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/tool"
)

// BenchmarkToolsCall compares one tools/call round trip to an SDK server
// over loopback, stateless (2026-07-28) and with sessions (2025-06-18),
// JSON answers:
//
//   - Gate: through t3agent (gate.Invoke with the turn's offered set,
//     argument validation, the tool's declaration check, the budget, the
//     pooled session, result mapping, the throttled contact record);
//   - BareSDK: a bare SDK client session kept open;
//   - HandshakePerCall: a bare SDK client doing a fresh handshake for
//     every call, which is what t3agent's pool saves.
func BenchmarkToolsCall(b *testing.B) {
	for _, kind := range []serverKind{serverKinds[0], serverKinds[3]} {
		b.Run(kind.name, func(b *testing.B) { benchToolsCall(b, kind) })
	}
}

func benchToolsCall(b *testing.B, kind serverKind) {
	srv := startSDKServer(b, kind, false)
	args := `{"text":"hello"}`
	// t3agent's side is set up once for all three, so each runs in a
	// process holding the same live heap: the SDK allocates about 350 KB
	// per round trip (client and server), so the garbage collector's
	// share of each result follows the live heap, not the call path. Each
	// starts after a collection, so none pays for the garbage of the one
	// before.
	f := newFixture(b, func(p *mcp.Params) { p.Logger = slog.New(slog.DiscardHandler) })
	f.add(b, "docs", srv.URL)
	g := f.gated(b)
	f.importTools(b, g, "docs", "mcp_docs_echo")
	cfg := gate.Config{Name: "bench", TrustZone: tool.ZoneLocal}
	offered, err := g.gate.Offer(b.Context(), gate.OfferParams{Actor: admin(), Config: cfg})
	if err != nil || !offered.Has("mcp_docs_echo") {
		b.Fatalf("offer: %v", err)
	}

	b.Run("Gate", func(b *testing.B) {
		ctx := mcp.WithCallBudget(b.Context(), mcp.NewCallBudget(1<<30))
		runtime.GC()
		for b.Loop() {
			res := g.gate.Invoke(ctx, gate.InvokeParams{
				Name: "mcp_docs_echo", Args: []byte(args), Call: tool.Call{Actor: admin()},
				Config: cfg, Offered: offered,
			})
			if res.IsError || res.Content != "hello" {
				b.Fatalf("result %+v", res)
			}
		}
	})

	newClient := func() *sdk.Client {
		return sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, &sdk.ClientOptions{Capabilities: &sdk.ClientCapabilities{}})
	}
	transport := func(hc *http.Client) *sdk.StreamableClientTransport {
		return &sdk.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}
	}
	call := func(ctx context.Context, b *testing.B, cs *sdk.ClientSession) {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}})
		if err != nil || len(res.Content) != 1 {
			b.Fatalf("call: %+v, %v", res, err)
		}
	}

	b.Run("BareSDK", func(b *testing.B) {
		hc := &http.Client{Transport: &http.Transport{}}
		defer hc.CloseIdleConnections()
		cs, err := newClient().Connect(b.Context(), transport(hc), nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		runtime.GC()
		for b.Loop() {
			call(b.Context(), b, cs)
		}
	})

	b.Run("HandshakePerCall", func(b *testing.B) {
		hc := &http.Client{Transport: &http.Transport{}}
		defer hc.CloseIdleConnections()
		c := newClient()
		runtime.GC()
		for b.Loop() {
			cs, err := c.Connect(b.Context(), transport(hc), nil)
			if err != nil {
				b.Fatal(err)
			}
			call(b.Context(), b, cs)
			_ = cs.Close()
		}
	})
}

// BenchmarkOfferWithCatalogue is a turn's offer (gate.Offer for an admin,
// the overrides and the enforcement setting loaded) over a registry whose
// only provider is the MCP catalogue: one enabled server with six
// imported tools, unchanged between offers, on SQLite and PostgreSQL.
func BenchmarkOfferWithCatalogue(b *testing.B) {
	for _, db := range []struct {
		name string
		dsn  func(b *testing.B) string
	}{
		{"sqlite", func(b *testing.B) string { return "sqlite:" + filepath.Join(b.TempDir(), "t3agent.db") }},
		{"postgres", func(b *testing.B) string { return dbtest.Postgres(b) }},
	} {
		b.Run(db.name, func(b *testing.B) {
			srv := startSDKServer(b, serverKinds[3], false)
			p := newProcess(b, db.dsn(b), slog.New(slog.DiscardHandler))
			if _, err := p.svc.Add(b.Context(), mcp.AddParams{Identifier: "docs", URL: srv.URL, DataClass: tool.EditorContent, Enabled: true, By: "admin"}); err != nil {
				b.Fatal(err)
			}
			if _, err := p.svc.Import(b.Context(), mcp.ImportParams{Server: "docs", Registry: p.reg}); err != nil {
				b.Fatal(err)
			}
			// Each tool enabled by its own override, as installations do.
			for _, e := range p.reg.List(b.Context()) {
				if _, err := p.gate.Availability().SetTool(b.Context(), gate.SetToolParams{Name: e.Spec.Name, Enabled: true, By: "admin"}); err != nil {
					b.Fatal(err)
				}
			}
			params := gate.OfferParams{Actor: admin(), Config: gate.Config{Name: "bench", TrustZone: tool.ZoneLocal}}
			for b.Loop() {
				o, err := p.gate.Offer(b.Context(), params)
				if err != nil || o.Len() != 6 {
					b.Fatalf("offer of %d tools: %v", o.Len(), err)
				}
			}
		})
	}
}
