package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
)

// TestServerKinds imports from and calls real SDK servers of every kind
// (stateless and sessioned, JSON and event-stream answers, old and new
// revisions) through the registry and the gate.
func TestServerKinds(t *testing.T) {
	t.Parallel()
	for _, kind := range serverKinds {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			f := newFixture(t)
			srv := newSDKServer(t, kind)
			f.add(t, "docs", srv.URL)
			g := f.gated(t)

			ping, err := f.svc.Ping(ctx, "docs")
			if err != nil {
				t.Fatalf("Ping: %v", err)
			}
			wantVersion := "2026-07-28"
			if kind.versions != nil {
				wantVersion = kind.versions[0]
			}
			if ping.ProtocolVersion != wantVersion || ping.ServerName != "test-server" || ping.ServerVersion != "1.2.3" || ping.Latency <= 0 {
				t.Errorf("Ping = %+v, want version %s of test-server 1.2.3", ping, wantVersion)
			}

			res := f.importTools(t, g, "docs", "mcp_docs_echo", "mcp_docs_add", "mcp_docs_image", "mcp_docs_structured", "mcp_docs_fails")
			want := []string{"mcp_docs_add", "mcp_docs_delete_page", "mcp_docs_echo", "mcp_docs_fails", "mcp_docs_image", "mcp_docs_structured"}
			if !slices.Equal(res.Added, want) || res.Server.ImportStatus != store.MCPImportOK || res.Imported != 6 || len(res.Skipped) != 0 {
				t.Fatalf("Import = %+v", res)
			}
			initsBefore := srv.rec.count("initialize")

			for _, c := range []struct {
				tool, args, want string
				isError          bool
			}{
				{"mcp_docs_echo", `{"text":"grüß dich"}`, "grüß dich", false},
				{"mcp_docs_add", `{"a":2,"b":40}`, "sum=42", false},
				{"mcp_docs_image", `{}`, "[t3agent reads text only and left out 2 non-text content block(s): audio, image.]\nbefore\nafter", false},
				{"mcp_docs_structured", `{}`, `{"temperature":21,"unit":"C"}`, false},
				{"mcp_docs_fails", `{}`, "The remote tool reported an error: bad[31m input", true},
				// The gate validates against the imported schema first.
				{"mcp_docs_echo", `{"text":5}`, `invalid arguments for tool "mcp_docs_echo"`, true},
			} {
				got := g.invoke(ctx, c.tool, c.args)
				if got.IsError != c.isError || !strings.Contains(got.Content, c.want) {
					t.Errorf("%s %s = %+v, want isError=%v and %q", c.tool, c.args, got, c.isError, c.want)
				}
			}
			// Calls share one pooled session: no handshake after the import's.
			if n := srv.rec.count("initialize") - initsBefore; n > 1 {
				t.Errorf("%d handshakes for five calls, want at most 1 (a pooled session)", n)
			}
			if err := f.svc.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			after := f.server(t, "docs")
			if after.LastContact.IsZero() || after.LastLatency < 0 {
				t.Errorf("no contact recorded after successful calls: %+v", after)
			}
		})
	}
}

func TestDefaultsAndDeclarations(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := newFixture(t)
	srv := newSDKServer(t, serverKinds[0])

	plain, err := f.svc.Add(ctx, mcp.AddParams{Identifier: "plain", URL: srv.URL, By: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	if plain.Effect != tool.NonIdempotentWrite || !plain.RequiresApproval || !plain.AdminOnly || plain.Enabled || !plain.Inert() || plain.Name != "plain" {
		t.Errorf("defaults = %+v; want non_idempotent_write, approval, admin-only, disabled, inert", plain)
	}

	f.add(t, "docs", srv.URL)
	no := false
	f.add(t, "reader", srv.URL, func(p *mcp.AddParams) {
		p.Effect, p.RequiresApproval, p.AdminOnly, p.DataClass = tool.ReadOnly, &no, &no, tool.PublicContent
	})
	g := f.gated(t)
	f.importTools(t, g, "docs")
	f.importTools(t, g, "reader")
	if err := f.svc.SetToolEffect(ctx, mcp.SetToolEffectParams{Name: "mcp_reader_delete_page", Effect: tool.NonIdempotentWrite}); err != nil {
		t.Fatal(err)
	}
	if err := g.reg.Refresh(ctx); err != nil {
		t.Fatal(err)
	}

	spec := func(name string) tool.Spec {
		e, ok := g.reg.Get(ctx, name)
		if !ok {
			t.Fatalf("%s is not registered", name)
		}
		return e.Spec
	}
	d := spec("mcp_docs_echo")
	if d.Effect != tool.NonIdempotentWrite || !d.RequiresApproval || !d.ApprovalBound() || !d.AdminOnly || !d.EnabledByDefault ||
		d.Group != "mcp_docs" || d.DataClass != tool.EditorContent || !d.Remote ||
		!strings.HasPrefix(d.Description, `[via the external MCP server "Server docs"] Echoes text.`) {
		t.Errorf("default spec = %+v", d)
	}
	// The readOnlyHint of echo does not lower the declared effect.
	r := spec("mcp_reader_echo")
	if r.Effect != tool.ReadOnly || r.RequiresApproval || r.ApprovalBound() || r.AdminOnly || r.DataClass != tool.PublicContent {
		t.Errorf("declared read-only spec = %+v", r)
	}
	if w := spec("mcp_reader_delete_page"); w.Effect != tool.NonIdempotentWrite || !w.ApprovalBound() {
		t.Errorf("per-tool override = %+v, want non_idempotent_write and approval-bound", w)
	}
	if _, ok := g.reg.Get(ctx, "mcp_plain_echo"); ok {
		t.Error("a disabled, inert server's tool is registered")
	}

	tools, err := f.svc.Tools(ctx, "docs")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(tools, func(c mcp.CatalogueTool) bool { return c.RemoteName == "echo" })
	if i < 0 || tools[i].Hints.ReadOnly == nil || !*tools[i].Hints.ReadOnly || tools[i].Effect != tool.NonIdempotentWrite {
		t.Errorf("catalogue echo = %+v, want the readOnlyHint shown and the effect unchanged", tools)
	}
}

func TestInertServerNeverOffered(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := newFixture(t)
	srv := newSDKServer(t, serverKinds[0])
	f.add(t, "inert", srv.URL, func(p *mcp.AddParams) { p.DataClass = 0 })
	f.add(t, "docs", srv.URL)
	g := f.gated(t)
	f.importTools(t, g, "inert")
	// Even an override that enables the tool (set straight in the store:
	// the gate refuses overrides for unregistered tools) offers nothing.
	if _, err := f.st.SetToolOverride(ctx, store.SetToolOverrideParams{Name: "mcp_inert_echo", Enabled: true, UpdatedBy: "admin"}); err != nil {
		t.Fatal(err)
	}
	f.importTools(t, g, "docs", "mcp_docs_echo")

	if _, err := f.st.SetSetting(ctx, store.SetSettingParams{Key: gate.EnforcementSetting, Value: string(gate.Observe)}); err != nil {
		t.Fatal(err)
	}
	offered, err := g.gate.Offer(ctx, gate.OfferParams{Actor: admin(), Config: gate.Config{TrustZone: tool.ZoneLocal}})
	if err != nil {
		t.Fatal(err)
	}
	if offered.Has("mcp_inert_echo") || !offered.Has("mcp_docs_echo") {
		t.Errorf("offered = %q; want the classified server's echo and nothing of the inert one", offered.Names())
	}
	d, err := g.gate.Decide(ctx, gate.DecideParams{Tool: "mcp_inert_echo", Actor: admin(), Config: gate.Config{TrustZone: tool.ZoneLocal}})
	if err != nil || d.Allowed || d.Reason != gate.ReasonNotRegistered {
		t.Errorf("Decide(inert) = %+v, %v; want not_registered", d, err)
	}
	before := srv.rec.count("tools/call")
	if res := g.invoke(ctx, "mcp_inert_echo", `{"text":"x"}`); !res.IsError || !strings.Contains(res.Content, "is not available") {
		t.Errorf("calling an inert server's tool = %+v", res)
	}
	if srv.rec.count("tools/call") != before {
		t.Error("the inert server was asked")
	}

	// Remote tools always face the trust zone, even when observing.
	d, err = g.gate.Decide(ctx, gate.DecideParams{Tool: "mcp_docs_echo", Actor: admin(), Config: gate.Config{TrustZone: tool.ZoneExternalGlobal}})
	if err != nil || !d.Allowed {
		t.Errorf("editorContent to externalGlobal = %+v, %v; want allowed", d, err)
	}
	turn := g.offer(t)
	class := tool.SystemDiagnostics
	if _, err := f.svc.Update(ctx, mcp.UpdateParams{Identifier: "docs", DataClass: &class, By: "admin"}); err != nil {
		t.Fatal(err)
	}
	// A turn offered before the change does not call on the old
	// declaration; the next decision sees the new one, without a refresh.
	if res := g.invokeIn(ctx, turn, "mcp_docs_echo", `{"text":"x"}`); !res.IsError || !strings.Contains(res.Content, "is not available") {
		t.Errorf("a call on the old declaration = %+v", res)
	}
	d, err = g.gate.Decide(ctx, gate.DecideParams{Tool: "mcp_docs_echo", Actor: admin(), Config: gate.Config{TrustZone: tool.ZoneExternalGlobal}})
	if err != nil || d.Allowed || d.Reason != gate.ReasonTrustZone || d.ObservedOnly {
		t.Errorf("systemDiagnostics to externalGlobal under observe = %+v, %v; want denied (remote tools always enforce)", d, err)
	}
	// Admin-only by default.
	d, err = g.gate.Decide(ctx, gate.DecideParams{Tool: "mcp_docs_echo", Actor: editor(), Config: gate.Config{TrustZone: tool.ZoneLocal}})
	if err != nil || d.Allowed || d.Reason != gate.ReasonRequiresAdmin {
		t.Errorf("an editor = %+v, %v; want requires_admin", d, err)
	}
	// Disabling the server unregisters its tools.
	if _, err := f.svc.SetEnabled(ctx, "docs", false, "admin"); err != nil {
		t.Fatal(err)
	}
	if err := g.reg.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := g.reg.Get(ctx, "mcp_docs_echo"); ok {
		t.Error("a disabled server's tool is still registered")
	}
}

func TestOrphanAndRestore(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := newFixture(t)
	srv := newSDKServer(t, serverKinds[1])
	f.add(t, "docs", srv.URL)
	g := f.gated(t)
	f.importTools(t, g, "docs", "mcp_docs_add")
	if res := g.invoke(ctx, "mcp_docs_add", `{"a":1,"b":2}`); res.IsError {
		t.Fatalf("add before: %+v", res)
	}

	srv.mcp.RemoveTools("add")
	res := f.importTools(t, g, "docs")
	if !slices.Equal(res.Orphaned, []string{"mcp_docs_add"}) || res.Imported != 5 {
		t.Fatalf("re-import without add = %+v", res)
	}
	if _, ok := g.reg.Get(ctx, "mcp_docs_add"); ok {
		t.Error("an orphaned tool is still registered after the import refreshed the registry")
	}
	if r := g.invoke(ctx, "mcp_docs_add", `{"a":1,"b":2}`); !r.IsError || !strings.Contains(r.Content, "not available") {
		t.Errorf("calling an orphaned tool = %+v", r)
	}

	srv.mcp.AddTool(&sdk.Tool{Name: "add", Description: "Adds, again.", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return textResult("back"), nil
		})
	res = f.importTools(t, g, "docs")
	if !slices.Equal(res.Restored, []string{"mcp_docs_add"}) {
		t.Fatalf("re-import with add = %+v", res)
	}
	// The availability override survived: the restored tool is callable.
	if r := g.invoke(ctx, "mcp_docs_add", `{}`); r.IsError || r.Content != "back" {
		t.Errorf("restored add = %+v", r)
	}
}

func TestPagingCaps(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	addTools := func(s *sdk.Server, from, to int) {
		for i := from; i < to; i++ {
			s.AddTool(&sdk.Tool{Name: fmt.Sprintf("t%03d", i), InputSchema: map[string]any{"type": "object"}},
				func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return textResult("x"), nil })
		}
	}
	t.Run("500 tools on 50 pages", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		srv := newSDKServer(t, serverKinds[0], func(o *sdk.ServerOptions) { o.PageSize = 10 })
		addTools(srv.mcp, 6, 500)
		f.add(t, "big", srv.URL)
		res, err := f.svc.Import(ctx, mcp.ImportParams{Server: "big"})
		if err != nil || res.Imported != 500 || res.Advertised != 500 {
			t.Fatalf("Import = %+v, %v; want all 500", res, err)
		}
		if n := srv.rec.count("tools/list"); n != 50 {
			t.Errorf("%d pages read, want 50", n)
		}
	})
	for _, c := range []struct {
		name     string
		pageSize int
		total    int
		want     string
	}{
		{"501 tools", 100, 501, "more than 500 tools"},
		{"51 pages", 1, 51, "more than 50 pages"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			srv := newSDKServer(t, serverKinds[0], func(o *sdk.ServerOptions) { o.PageSize = c.pageSize })
			f.add(t, "big", srv.URL)
			first, err := f.svc.Import(ctx, mcp.ImportParams{Server: "big"})
			if err != nil || first.Imported != 6 {
				t.Fatalf("first import = %+v, %v", first, err)
			}
			before := f.server(t, "big")
			addTools(srv.mcp, 6, c.total)
			_, err = f.svc.Import(ctx, mcp.ImportParams{Server: "big"})
			if mcp.KindOf(err) != mcp.KindTooManyTools || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Import = %v, want refused: %s", err, c.want)
			}
			after := f.server(t, "big")
			if after.ImportStatus != store.MCPImportError || after.ToolCount != 6 || !after.LastImport.Equal(before.LastImport) || !strings.Contains(after.ImportError, c.want) {
				t.Errorf("server after a refused import = %+v", after)
			}
			if !after.LastContact.Equal(before.LastContact) {
				t.Error("a refused import recorded a contact")
			}
			tools, err := f.st.MCPTools(ctx, store.ListMCPToolsParams{Server: "big", IncludeOrphaned: true})
			if err != nil || len(tools) != 6 || slices.ContainsFunc(tools, func(x store.MCPTool) bool { return x.Orphaned }) {
				t.Errorf("the refused import touched the catalogue: %d rows, %v", len(tools), err)
			}
		})
	}
}

func TestBudget(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := newFixture(t)
	srv := newSDKServer(t, serverKinds[0])
	f.add(t, "docs", srv.URL)
	g := f.gated(t)
	f.importTools(t, g, "docs", "mcp_docs_echo")

	// No budget: refused before the server is asked.
	if res := g.invokeBudget(ctx, "mcp_docs_echo", `{"text":"x"}`); !res.IsError || !strings.Contains(res.Content, "no remote-call budget") {
		t.Errorf("a call without a budget = %+v", res)
	}
	if n := srv.rec.count("tools/call"); n != 0 {
		t.Errorf("the server was asked %d times without a budget", n)
	}
	b := mcp.NewCallBudget(2)
	bctx := mcp.WithCallBudget(ctx, b)
	for i := range 3 {
		res := g.invokeBudget(bctx, "mcp_docs_echo", `{"text":"x"}`)
		if (i < 2) == res.IsError {
			t.Errorf("call %d = %+v", i+1, res)
		}
		if i == 2 && !strings.Contains(res.Content, "the server was not asked") {
			t.Errorf("third call = %+v, want the budget refusal", res)
		}
	}
	if n := srv.rec.count("tools/call"); n != 2 || b.Remaining() != 0 {
		t.Errorf("server asked %d times, %d left; want 2 and 0", n, b.Remaining())
	}
	// A call the gate refuses spends nothing.
	if _, err := g.gate.Availability().SetTool(ctx, gate.SetToolParams{Name: "mcp_docs_add", Enabled: false, By: "admin"}); err != nil {
		t.Fatal(err)
	}
	b = mcp.NewCallBudget(1)
	if res := g.invokeBudget(mcp.WithCallBudget(ctx, b), "mcp_docs_add", `{"a":1,"b":1}`); !res.IsError || b.Remaining() != 1 {
		t.Errorf("a disabled tool = %+v, budget %d; want refused and nothing spent", res, b.Remaining())
	}
}

func TestDiagnosticCall(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := newFixture(t)
	srv := newSDKServer(t, serverKinds[2])
	f.add(t, "docs", srv.URL, func(p *mcp.AddParams) { p.Enabled = false })
	if _, err := f.svc.Call(ctx, mcp.CallParams{Server: "docs", Tool: "echo", Args: json.RawMessage(`{"text":"hi"}`)}); mcp.KindOf(err) != mcp.KindNotImported {
		t.Errorf("a call before the import: err = %v, want not_imported", err)
	}
	if _, err := f.svc.Import(ctx, mcp.ImportParams{Server: "docs"}); err != nil {
		t.Fatal(err)
	}
	res, err := f.svc.Call(ctx, mcp.CallParams{Server: "docs", Tool: "echo", Args: json.RawMessage(`{"text":"hi"}`)})
	if err != nil || res.Content != "hi" {
		t.Errorf("Call(docs, echo) = %+v, %v", res, err)
	}
	if _, err := f.svc.Call(ctx, mcp.CallParams{Server: "docs", Tool: "nope"}); mcp.KindOf(err) != mcp.KindNotImported {
		t.Errorf("a tool the server does not advertise: err = %v", err)
	}
	res, err = f.svc.Call(ctx, mcp.CallParams{URL: srv.URL, Tool: "add", Args: json.RawMessage(`{"a":1,"b":2}`)})
	if err != nil || res.Content != "sum=3" {
		t.Errorf("Call(url, add) = %+v, %v", res, err)
	}
	res, err = f.svc.Call(ctx, mcp.CallParams{URL: srv.URL, Tool: "nope"})
	if err == nil && !res.IsError {
		t.Errorf("calling an unknown remote tool by URL = %+v; want an error", res)
	}
	if _, err := f.svc.Call(ctx, mcp.CallParams{URL: srv.URL, Tool: "add", Args: json.RawMessage(`[1]`)}); mcp.KindOf(err) != mcp.KindInvalidRequest {
		t.Errorf("array arguments: err = %v", err)
	}
	if _, err := f.svc.Call(ctx, mcp.CallParams{Server: "docs", URL: srv.URL, Tool: "add"}); mcp.KindOf(err) != mcp.KindInvalidRequest {
		t.Errorf("server and URL: err = %v", err)
	}
	if p, err := f.svc.PingURL(ctx, srv.URL); err != nil || p.ProtocolVersion != "2025-03-26" {
		t.Errorf("PingURL = %+v, %v", p, err)
	}
}

func TestServerValidation(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := newFixture(t)
	for name, p := range map[string]mcp.AddParams{
		"bad identifier":   {Identifier: "Docs", URL: "http://127.0.0.1:1/", By: "a"},
		"long identifier":  {Identifier: strings.Repeat("a", 33), URL: "http://127.0.0.1:1/", By: "a"},
		"userinfo":         {Identifier: "a", URL: "http://u:p@127.0.0.1:1/", By: "a"},
		"file url":         {Identifier: "a", URL: "file:///etc/passwd", By: "a"},
		"metadata":         {Identifier: "a", URL: "http://169.254.169.254/latest", By: "a"},
		"bearer no secret": {Identifier: "a", URL: "http://127.0.0.1:1/", Auth: mcp.AuthBearer, By: "a"},
		"secret no auth":   {Identifier: "a", URL: "http://127.0.0.1:1/", Credential: "s", By: "a"},
		"header no name":   {Identifier: "a", URL: "http://127.0.0.1:1/", Auth: mcp.AuthHeader, Credential: "s", By: "a"},
		"reserved header":  {Identifier: "a", URL: "http://127.0.0.1:1/", Auth: mcp.AuthHeader, AuthHeader: "Mcp-Session-Id", Credential: "s", By: "a"},
		"header injection": {Identifier: "a", URL: "http://127.0.0.1:1/", Auth: mcp.AuthBearer, Credential: "s\r\nX-Evil: 1", By: "a"},
		"bad effect":       {Identifier: "a", URL: "http://127.0.0.1:1/", Effect: "delete", By: "a"},
		"bad class":        {Identifier: "a", URL: "http://127.0.0.1:1/", DataClass: 9, By: "a"},
	} {
		if _, err := f.svc.Add(ctx, p); err == nil {
			t.Errorf("%s: Add succeeded", name)
		}
	}
	if list, _ := f.svc.Servers(ctx); len(list) != 0 {
		t.Errorf("refused adds stored %+v", list)
	}
	f.add(t, "docs", "http://127.0.0.1:1/")
	if _, err := f.svc.Add(ctx, mcp.AddParams{Identifier: "docs", URL: "http://127.0.0.1:1/", By: "a"}); !errors.Is(err, store.ErrExists) {
		t.Errorf("a second docs: err = %v, want ErrExists", err)
	}
	header := mcp.AuthHeader
	if _, err := f.svc.Update(ctx, mcp.UpdateParams{Identifier: "docs", Auth: &header, By: "a"}); err == nil {
		t.Error("switching to header auth without a credential succeeded")
	}
}
