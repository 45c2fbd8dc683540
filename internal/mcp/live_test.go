package mcp_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/t3agent/t3agent/internal/dbtest"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/logtest"
	"github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
)

// process is what one t3agent process wires over a shared store: its own
// store connection, MCP client, registry and gate.
type process struct {
	st  store.Store
	svc *mcp.Service
	gated
}

func newProcess(t testing.TB, dsn string, log *slog.Logger) *process {
	t.Helper()
	st, err := store.Open(t.Context(), dsn, store.OpenParams{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	svc, err := mcp.New(mcp.Params{Store: st, Logger: log, ClientVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	f := &fixture{st: st, svc: svc, log: log}
	return &process{st: st, svc: svc, gated: f.gated(t)}
}

// forStoreDSNs runs fn on a fresh SQLite file and a fresh PostgreSQL
// database.
func forStoreDSNs(t *testing.T, fn func(t *testing.T, dsn string)) {
	for _, db := range []struct {
		name string
		dsn  func(t *testing.T) string
	}{
		{"sqlite", func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "t3agent.db") }},
		{"postgres", func(t *testing.T) string { return dbtest.Postgres(t) }},
	} {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			fn(t, db.dsn(t))
		})
	}
}

// TestRegistryFollowsAnotherProcess: a serve-like process keeps its
// registry and gate while a CLI-like process on the same store adds,
// enables, redeclares, overrides, disables and removes an MCP server;
// every change counts from the serve's next offer, without a restart or
// a refresh, and calls on the new declaration go through.
func TestRegistryFollowsAnotherProcess(t *testing.T) {
	t.Parallel()
	forStoreDSNs(t, func(t *testing.T, dsn string) {
		ctx := t.Context()
		srv := newSDKServer(t, serverKinds[3])
		logs := &logtest.Buffer{}
		log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		serve, cli := newProcess(t, dsn, log), newProcess(t, dsn, log)

		// serve has loaded its tools: none of MCP yet.
		if names := serve.offer(t).Names(); len(names) != 0 {
			t.Fatalf("offered before any server: %q", names)
		}
		if _, err := cli.svc.Add(ctx, mcp.AddParams{Identifier: "docs", Name: "Docs", URL: srv.URL, DataClass: tool.EditorContent, By: "admin"}); err != nil {
			t.Fatal(err)
		}
		if _, err := cli.svc.Import(ctx, mcp.ImportParams{Server: "docs", Registry: cli.reg}); err != nil {
			t.Fatal(err)
		}
		if names := serve.offer(t).Names(); len(names) != 0 {
			t.Errorf("a disabled server's tools are offered: %q", names)
		}

		// mcp enable: its tools are usable as declared at once.
		if _, err := cli.svc.SetEnabled(ctx, "docs", true, "admin"); err != nil {
			t.Fatal(err)
		}
		turn := serve.offer(t)
		if !turn.Has("mcp_docs_echo") || !turn.Has("mcp_docs_add") {
			t.Fatalf("after mcp enable elsewhere the serve offers %q", turn.Names())
		}
		if e := specIn(turn, "mcp_docs_echo"); e.Effect != tool.NonIdempotentWrite || !e.RequiresApproval {
			t.Errorf("declared spec = %+v", e)
		}
		if res := serve.invokeIn(ctx, turn, "mcp_docs_echo", `{"text":"enabled"}`); res.IsError || res.Content != "enabled" {
			t.Errorf("call after mcp enable elsewhere = %+v", res)
		}

		// mcp set docs --effect read_only: the next turn has the new
		// declaration and its call goes through.
		ro := tool.ReadOnly
		if _, err := cli.svc.Update(ctx, mcp.UpdateParams{Identifier: "docs", Effect: &ro, By: "admin"}); err != nil {
			t.Fatal(err)
		}
		turn = serve.offer(t)
		if e := specIn(turn, "mcp_docs_echo"); e.Effect != tool.ReadOnly {
			t.Errorf("after mcp set --effect read_only elsewhere: %+v", e)
		}
		if res := serve.invokeIn(ctx, turn, "mcp_docs_echo", `{"text":"read-only"}`); res.IsError || res.Content != "read-only" {
			t.Errorf("call after the redeclaration elsewhere = %+v", res)
		}
		// Without an offer too (the playground, the CLI's tools call).
		if res := serve.invoke(ctx, "mcp_docs_echo", `{"text":"fresh"}`); res.IsError || res.Content != "fresh" {
			t.Errorf("fresh call after the redeclaration elsewhere = %+v", res)
		}

		// A per-tool effect override and a per-tool availability override.
		if err := cli.svc.SetToolEffect(ctx, mcp.SetToolEffectParams{Name: "mcp_docs_add", Effect: tool.IdempotentWrite}); err != nil {
			t.Fatal(err)
		}
		if _, err := cli.gate.Availability().SetTool(ctx, gate.SetToolParams{Name: "mcp_docs_echo", Enabled: false, By: "admin"}); err != nil {
			t.Fatal(err)
		}
		turn = serve.offer(t)
		if turn.Has("mcp_docs_echo") || specIn(turn, "mcp_docs_add").Effect != tool.IdempotentWrite {
			t.Errorf("after the tool overrides elsewhere: %q, add = %+v", turn.Names(), specIn(turn, "mcp_docs_add"))
		}

		// mcp disable, then mcp remove: gone from the next offer and
		// decision. (A turn offered before finds out at its tool's next
		// declaration check: TestDeclarationChangedElsewhere.)
		if _, err := cli.svc.SetEnabled(ctx, "docs", false, "admin"); err != nil {
			t.Fatal(err)
		}
		if names := serve.offer(t).Names(); len(names) != 0 {
			t.Errorf("after mcp disable elsewhere the serve offers %q", names)
		}
		if _, err := cli.svc.SetEnabled(ctx, "docs", true, "admin"); err != nil {
			t.Fatal(err)
		}
		if !serve.offer(t).Has("mcp_docs_add") {
			t.Error("after mcp enable again elsewhere the serve does not offer mcp_docs_add")
		}
		if err := cli.svc.Remove(ctx, "docs"); err != nil {
			t.Fatal(err)
		}
		d, err := serve.gate.Decide(ctx, gate.DecideParams{Tool: "mcp_docs_add", Actor: admin(), Config: gate.Config{TrustZone: tool.ZoneLocal}})
		if err != nil || d.Allowed || d.Reason != gate.ReasonNotRegistered {
			t.Errorf("Decide after mcp remove elsewhere = %+v, %v; want not_registered", d, err)
		}
		if names := serve.offer(t).Names(); len(names) != 0 {
			t.Errorf("after mcp remove elsewhere the serve offers %q", names)
		}
		if res := serve.invoke(ctx, "mcp_docs_add", `{"a":1,"b":2}`); !res.IsError || !strings.Contains(res.Content, "is not available") {
			t.Errorf("a fresh call of the removed tool = %+v", res)
		}
		if strings.Contains(logs.String(), "level=ERROR") {
			t.Errorf("errors logged:\n%s", logs.String())
		}
	})
}

// TestRegistryLookupCost: an offer asks the catalogue's generation once
// and reads the catalogue only after it moved; an invoke within the offer
// reads nothing of it.
func TestRegistryLookupCost(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := newFixture(t)
	srv := newSDKServer(t, serverKinds[3])
	f.add(t, "docs", srv.URL)
	g := f.gated(t)
	f.importTools(t, g, "docs")
	counted := &countingCatalogue{Store: f.st}
	svc, err := mcp.New(mcp.Params{Store: counted, Logger: f.log, Recheck: 1 << 62})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	reg, err := tool.NewRegistry(nil, svc.Provider())
	if err != nil {
		t.Fatal(err)
	}
	gt, err := gate.New(gate.Params{Registry: reg, Store: f.st, Logger: f.log})
	if err != nil {
		t.Fatal(err)
	}
	h := gated{reg: reg, gate: gt}
	turn := h.offer(t)
	if !turn.Has("mcp_docs_echo") {
		t.Fatalf("offered %q", turn.Names())
	}
	counted.reset()
	for range 3 {
		h.offer(t)
	}
	if g, r := counted.counts(); g != 3 || r != 0 {
		t.Errorf("three offers of an unchanged catalogue: %d generation asks, %d catalogue reads; want 3 and 0", g, r)
	}
	counted.reset()
	if res := h.invokeIn(ctx, turn, "mcp_docs_echo", `{"text":"x"}`); res.IsError {
		t.Fatal(res.Content)
	}
	if g, r := counted.counts(); g != 0 || r != 0 {
		t.Errorf("a call within the offer: %d generation asks, %d catalogue reads; want none", g, r)
	}
	if err := f.svc.SetToolEffect(ctx, mcp.SetToolEffectParams{Name: "mcp_docs_echo", Effect: tool.ReadOnly}); err != nil {
		t.Fatal(err)
	}
	counted.reset()
	if e := specIn(h.offer(t), "mcp_docs_echo"); e.Effect != tool.ReadOnly {
		t.Errorf("after a change elsewhere: %+v", e)
	}
	if g, r := counted.counts(); g < 1 || r == 0 {
		t.Errorf("the offer after a change: %d generation asks, %d catalogue reads; want the catalogue read", g, r)
	}
}

func specIn(o *gate.Offered, name string) tool.Spec {
	i := slices.IndexFunc(o.Specs(), func(s tool.Spec) bool { return s.Name == name })
	if i < 0 {
		return tool.Spec{}
	}
	return o.Specs()[i]
}

// countingCatalogue is the real store, counting how often the catalogue's
// generation is asked and the catalogue itself read.
type countingCatalogue struct {
	store.Store
	gens, reads atomic.Int64
}

func (c *countingCatalogue) MCPCatalogueGeneration(ctx context.Context) (int64, error) {
	c.gens.Add(1)
	return c.Store.MCPCatalogueGeneration(ctx)
}

func (c *countingCatalogue) MCPServers(ctx context.Context) ([]store.MCPServer, error) {
	c.reads.Add(1)
	return c.Store.MCPServers(ctx)
}

func (c *countingCatalogue) MCPTools(ctx context.Context, p store.ListMCPToolsParams) ([]store.MCPTool, error) {
	c.reads.Add(1)
	return c.Store.MCPTools(ctx, p)
}

func (c *countingCatalogue) MCPToolWithServer(ctx context.Context, name string) (store.MCPTool, store.MCPServer, error) {
	c.reads.Add(1)
	return c.Store.MCPToolWithServer(ctx, name)
}

func (c *countingCatalogue) reset() { c.gens.Store(0); c.reads.Store(0) }

func (c *countingCatalogue) counts() (gens, reads int64) { return c.gens.Load(), c.reads.Load() }
