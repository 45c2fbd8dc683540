package storetest

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/store"
)

// ---- MCP servers and their catalogue ----

func mcpServer(id string) store.CreateMCPServerParams {
	return store.CreateMCPServerParams{
		Identifier:       id,
		Name:             "Docs server " + id,
		Description:      "Searches the handbook ✓",
		URL:              "https://mcp.example.com/" + id,
		AuthKind:         store.MCPAuthHeader,
		AuthHeader:       "X-Api-Key",
		SealedCredential: "t3s1:abcd:sealed-" + id,
		DataClass:        "editorContent",
		Effect:           store.MCPEffectNonIdempotentWrite,
		RequiresApproval: true,
		AdminOnly:        true,
		Enabled:          false,
		CreatedBy:        "admin",
	}
}

func createServer(t *testing.T, st store.Store, p store.CreateMCPServerParams) store.MCPServer {
	t.Helper()
	s, err := st.CreateMCPServer(t.Context(), p)
	if err != nil {
		t.Fatalf("CreateMCPServer %s: %v", p.Identifier, err)
	}
	return s
}

func mcpTool(server, remote string) store.MCPToolImport {
	return store.MCPToolImport{
		Name:        "mcp_" + server + "_" + remote,
		RemoteName:  remote,
		Title:       "Title of " + remote,
		Description: "Does " + remote + ".",
		InputSchema: `{"type":"object","properties":{"q":{"type":"string"}}}`,
		Annotations: `{"readOnlyHint":true}`,
	}
}

func applyImport(t *testing.T, st store.Store, p store.ApplyMCPImportParams) store.MCPImportResult {
	t.Helper()
	res, err := st.ApplyMCPImport(t.Context(), p)
	if err != nil {
		t.Fatalf("ApplyMCPImport %s: %v", p.Identifier, err)
	}
	return res
}

func toolNames(list []store.MCPTool) []string {
	out := make([]string, len(list))
	for i, x := range list {
		out[i] = x.Name
	}
	return out
}

func listTools(t *testing.T, st store.Store, p store.ListMCPToolsParams) []store.MCPTool {
	t.Helper()
	list, err := st.MCPTools(t.Context(), p)
	if err != nil {
		t.Fatalf("MCPTools %+v: %v", p, err)
	}
	return list
}

func testMCPServerRoundTrip(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	if list, err := f.st.MCPServers(ctx); err != nil || list == nil || len(list) != 0 {
		t.Fatalf("MCPServers on a new store = %#v, %v; want an empty non-nil slice", list, err)
	}
	p := mcpServer("docs")
	got := createServer(t, f.st, p)
	want := store.MCPServer{
		Identifier: p.Identifier, Name: p.Name, Description: p.Description, URL: p.URL,
		AuthKind: p.AuthKind, AuthHeader: p.AuthHeader, SealedCredential: p.SealedCredential,
		DataClass: p.DataClass, Effect: p.Effect, RequiresApproval: true, AdminOnly: true,
		ImportStatus: store.MCPImportNever, CreatedAt: f.clock.Stamp(), UpdatedAt: f.clock.Stamp(), UpdatedBy: "admin",
	}
	if !sameServer(got, want) {
		t.Errorf("CreateMCPServer = %+v\nwant %+v", got, want)
	}
	checkTime(t, "CreatedAt", got.CreatedAt, f.clock.Stamp())
	if !got.LastImport.IsZero() || !got.LastContact.IsZero() || got.LastLatency != 0 || got.ToolCount != 0 {
		t.Errorf("a new server claims history: %+v", got)
	}
	read, err := f.st.MCPServer(ctx, "docs")
	if err != nil || !sameServer(read, want) {
		t.Errorf("MCPServer = %+v, %v\nwant %+v", read, err, want)
	}
	if _, err := f.st.CreateMCPServer(ctx, p); !errors.Is(err, store.ErrExists) {
		t.Errorf("a second server %q: err = %v, want ErrExists", p.Identifier, err)
	}
	if _, err := f.st.MCPServer(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("MCPServer(nope): err = %v, want ErrNotFound", err)
	}
	for _, id := range []string{"zeta", "Alpha", "alpha_2"} {
		createServer(t, f.st, mcpServer(id))
	}
	list, err := f.st.MCPServers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range list {
		ids = append(ids, s.Identifier)
	}
	if want := []string{"Alpha", "alpha_2", "docs", "zeta"}; !slices.Equal(ids, want) {
		t.Errorf("MCPServers order = %q, want %q (bytewise)", ids, want)
	}
}

// sameServer compares servers, timestamps by instant.
func sameServer(a, b store.MCPServer) bool {
	ta := []time.Time{a.LastImport, a.LastContact, a.CreatedAt, a.UpdatedAt}
	tb := []time.Time{b.LastImport, b.LastContact, b.CreatedAt, b.UpdatedAt}
	for i := range ta {
		if !ta[i].Equal(tb[i]) {
			return false
		}
	}
	a.LastImport, a.LastContact, a.CreatedAt, a.UpdatedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	b.LastImport, b.LastContact, b.CreatedAt, b.UpdatedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	return a == b
}

func testMCPServerUpdate(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	before := createServer(t, f.st, mcpServer("docs"))
	f.clock.Advance(time.Minute)
	on, class, none := true, "", store.MCPAuthNone
	empty := ""
	got, err := f.st.UpdateMCPServer(ctx, store.UpdateMCPServerParams{
		Identifier: "docs", Enabled: &on, DataClass: &class, AuthKind: &none, SealedCredential: &empty, UpdatedBy: "other",
	})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Enabled || got.DataClass != "" || got.AuthKind != store.MCPAuthNone || got.SealedCredential != "" || got.UpdatedBy != "other" {
		t.Errorf("UpdateMCPServer did not apply the set fields: %+v", got)
	}
	if got.Name != before.Name || got.URL != before.URL || !got.RequiresApproval || got.Effect != before.Effect {
		t.Errorf("UpdateMCPServer changed fields it was not given: %+v", got)
	}
	checkTime(t, "UpdatedAt", got.UpdatedAt, f.clock.Stamp())
	checkTime(t, "CreatedAt", got.CreatedAt, before.CreatedAt)

	header := store.MCPAuthHeader
	blank := ""
	if _, err := f.st.UpdateMCPServer(ctx, store.UpdateMCPServerParams{Identifier: "docs", AuthKind: &header, AuthHeader: &blank, UpdatedBy: "a"}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("header auth without a header name: err = %v, want ErrInvalid", err)
	}
	if _, err := f.st.UpdateMCPServer(ctx, store.UpdateMCPServerParams{Identifier: "nope", Enabled: &on, UpdatedBy: "a"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("updating a missing server: err = %v, want ErrNotFound", err)
	}
	bad := "delete"
	if _, err := f.st.UpdateMCPServer(ctx, store.UpdateMCPServerParams{Identifier: "docs", Effect: &bad, UpdatedBy: "a"}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("effect %q: err = %v, want ErrInvalid", bad, err)
	}
	after, err := f.st.MCPServer(ctx, "docs")
	if err != nil || !sameServer(after, got) {
		t.Errorf("refused updates changed the row: %+v, %v", after, err)
	}
}

func testMCPServerInvalid(t *testing.T, h harness) {
	f := h.setup(t)
	for name, mut := range map[string]func(*store.CreateMCPServerParams){
		"no identifier": func(p *store.CreateMCPServerParams) { p.Identifier = "" },
		"no name":       func(p *store.CreateMCPServerParams) { p.Name = "" },
		"no url":        func(p *store.CreateMCPServerParams) { p.URL = "" },
		"long url":      func(p *store.CreateMCPServerParams) { p.URL = "https://x/" + strings.Repeat("a", store.MaxMCPURLLen) },
		"bad auth":      func(p *store.CreateMCPServerParams) { p.AuthKind = "basic" },
		"header without name": func(p *store.CreateMCPServerParams) {
			p.AuthKind, p.AuthHeader = store.MCPAuthHeader, ""
		},
		"no effect":   func(p *store.CreateMCPServerParams) { p.Effect = "" },
		"bad effect":  func(p *store.CreateMCPServerParams) { p.Effect = "write" },
		"bad utf8":    func(p *store.CreateMCPServerParams) { p.Description = "\xff" },
		"nul":         func(p *store.CreateMCPServerParams) { p.Name = "a\x00b" },
		"no creator":  func(p *store.CreateMCPServerParams) { p.CreatedBy = "" },
		"bad class":   func(p *store.CreateMCPServerParams) { p.DataClass = "\xfe" },
		"nul in cred": func(p *store.CreateMCPServerParams) { p.SealedCredential = "\x00" },
	} {
		p := mcpServer("docs")
		mut(&p)
		if _, err := f.st.CreateMCPServer(t.Context(), p); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	if list, err := f.st.MCPServers(t.Context()); err != nil || len(list) != 0 {
		t.Errorf("refused creates left %+v, %v", list, err)
	}
}

func testMCPContact(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	before := createServer(t, f.st, mcpServer("docs"))
	f.clock.Advance(time.Hour)
	if err := f.st.RecordMCPContact(ctx, store.RecordMCPContactParams{Identifier: "docs", Latency: 1234 * time.Microsecond}); err != nil {
		t.Fatal(err)
	}
	got, err := f.st.MCPServer(ctx, "docs")
	if err != nil {
		t.Fatal(err)
	}
	checkTime(t, "LastContact", got.LastContact, f.clock.Stamp())
	if got.LastLatency != time.Millisecond {
		t.Errorf("LastLatency = %v, want 1ms (stored in milliseconds)", got.LastLatency)
	}
	checkTime(t, "UpdatedAt after a contact", got.UpdatedAt, before.UpdatedAt)
	if got.ImportStatus != store.MCPImportNever {
		t.Errorf("a contact changed the import status to %q", got.ImportStatus)
	}
	// A contact stored later than it happened keeps its own time.
	at := f.clock.Stamp().Add(-90*time.Second + 500*time.Nanosecond).In(time.FixedZone("CET", 3600))
	if err := f.st.RecordMCPContact(ctx, store.RecordMCPContactParams{Identifier: "docs", Latency: 5 * time.Millisecond, At: at}); err != nil {
		t.Fatal(err)
	}
	if got, err = f.st.MCPServer(ctx, "docs"); err != nil {
		t.Fatal(err)
	}
	checkTime(t, "LastContact given At", got.LastContact, at.Truncate(time.Microsecond))
	if got.LastLatency != 5*time.Millisecond {
		t.Errorf("LastLatency = %v, want 5ms", got.LastLatency)
	}
	if err := f.st.RecordMCPContact(ctx, store.RecordMCPContactParams{Identifier: "nope"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("contact with a missing server: err = %v, want ErrNotFound", err)
	}
	if err := f.st.RecordMCPContact(ctx, store.RecordMCPContactParams{Identifier: "docs", Latency: -1}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("negative latency: err = %v, want ErrInvalid", err)
	}
}

func testMCPImportReconcile(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	createServer(t, f.st, mcpServer("docs"))
	a, b, c := mcpTool("docs", "alpha"), mcpTool("docs", "beta"), mcpTool("docs", "gamma")

	res := applyImport(t, f.st, store.ApplyMCPImportParams{Identifier: "docs", Tools: []store.MCPToolImport{b, a, c}})
	if !slices.Equal(res.Added, []string{a.Name, b.Name, c.Name}) || len(res.Updated)+len(res.Restored)+len(res.Orphaned) != 0 {
		t.Errorf("first import = %+v", res)
	}
	if res.Server.ImportStatus != store.MCPImportOK || res.Server.ToolCount != 3 || res.Server.ImportError != "" {
		t.Errorf("server after the first import = %+v", res.Server)
	}
	checkTime(t, "LastImport", res.Server.LastImport, f.clock.Stamp())
	if _, err := f.st.SetMCPToolEffect(ctx, store.SetMCPToolEffectParams{Name: b.Name, Effect: store.MCPEffectReadOnly}); err != nil {
		t.Fatal(err)
	}

	// beta vanishes, alpha changes its description.
	f.clock.Advance(time.Minute)
	a2 := a
	a2.Description = "Does alpha, better."
	res = applyImport(t, f.st, store.ApplyMCPImportParams{Identifier: "docs", Tools: []store.MCPToolImport{a2, c}, Skipped: []string{"delta: the input schema is not an object"}})
	if !slices.Equal(res.Updated, []string{a.Name, c.Name}) || !slices.Equal(res.Orphaned, []string{b.Name}) || len(res.Added) != 0 {
		t.Errorf("second import = %+v", res)
	}
	if res.Server.ImportStatus != store.MCPImportPartial || res.Server.ToolCount != 2 || !strings.Contains(res.Server.ImportError, "delta: the input schema") {
		t.Errorf("server after a partial import = %+v", res.Server)
	}
	if got := toolNames(listTools(t, f.st, store.ListMCPToolsParams{Server: "docs"})); !slices.Equal(got, []string{a.Name, c.Name}) {
		t.Errorf("live tools = %q, want alpha and gamma", got)
	}
	all := listTools(t, f.st, store.ListMCPToolsParams{Server: "docs", IncludeOrphaned: true})
	if got := toolNames(all); !slices.Equal(got, []string{a.Name, b.Name, c.Name}) || !all[1].Orphaned {
		t.Errorf("all tools = %+v, want beta orphaned and kept", all)
	}
	if all[0].Description != a2.Description {
		t.Errorf("alpha's description = %q, want the new one", all[0].Description)
	}
	checkTime(t, "alpha ImportedAt", all[0].ImportedAt, f.clock.Stamp())

	// A refused import changes nothing but the status.
	failed, err := f.st.RecordMCPImportFailure(ctx, store.RecordMCPImportFailureParams{Identifier: "docs", Error: "the server advertises 501 tools"})
	if err != nil {
		t.Fatal(err)
	}
	if failed.ImportStatus != store.MCPImportError || failed.ToolCount != 2 || failed.ImportError != "the server advertises 501 tools" {
		t.Errorf("server after a refused import = %+v", failed)
	}
	if got := listTools(t, f.st, store.ListMCPToolsParams{Server: "docs", IncludeOrphaned: true}); !slices.EqualFunc(got, all, func(x, y store.MCPTool) bool {
		return x.Name == y.Name && x.Orphaned == y.Orphaned && x.Description == y.Description
	}) {
		t.Errorf("a refused import touched the catalogue: %+v", got)
	}

	// beta returns and keeps its effect override.
	res = applyImport(t, f.st, store.ApplyMCPImportParams{Identifier: "docs", Tools: []store.MCPToolImport{a2, b, c}})
	if !slices.Equal(res.Restored, []string{b.Name}) || res.Server.ImportStatus != store.MCPImportOK || res.Server.ImportError != "" {
		t.Errorf("third import = %+v", res)
	}
	back, err := f.st.MCPTool(ctx, b.Name)
	if err != nil || back.Orphaned || back.Effect != store.MCPEffectReadOnly || back.Server != "docs" || back.RemoteName != "beta" {
		t.Errorf("restored beta = %+v, %v; want live with its read_only override", back, err)
	}

	// An empty import orphans everything.
	res = applyImport(t, f.st, store.ApplyMCPImportParams{Identifier: "docs"})
	if len(res.Orphaned) != 3 || res.Server.ToolCount != 0 {
		t.Errorf("empty import = %+v", res)
	}
	if _, err := f.st.ApplyMCPImport(ctx, store.ApplyMCPImportParams{Identifier: "nope"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("import into a missing server: err = %v, want ErrNotFound", err)
	}
	if _, err := f.st.ApplyMCPImport(ctx, store.ApplyMCPImportParams{Identifier: "docs", Tools: []store.MCPToolImport{a, a}}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("a tool given twice: err = %v, want ErrInvalid", err)
	}
	noSchema := a
	noSchema.InputSchema = ""
	if _, err := f.st.ApplyMCPImport(ctx, store.ApplyMCPImportParams{Identifier: "docs", Tools: []store.MCPToolImport{noSchema}}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("a tool without a schema: err = %v, want ErrInvalid", err)
	}
}

func testMCPImportConflict(t *testing.T, h harness) {
	f := h.setup(t)
	createServer(t, f.st, mcpServer("a_b"))
	createServer(t, f.st, mcpServer("a"))
	// mcp_a_b_c is the local name of a_b's "c" and of a's "b_c".
	first := mcpTool("a_b", "c")
	applyImport(t, f.st, store.ApplyMCPImportParams{Identifier: "a_b", Tools: []store.MCPToolImport{first}})
	second := store.MCPToolImport{Name: "mcp_a_b_c", RemoteName: "b_c", InputSchema: `{"type":"object"}`, Annotations: "{}"}
	other := mcpTool("a", "other")
	res := applyImport(t, f.st, store.ApplyMCPImportParams{Identifier: "a", Tools: []store.MCPToolImport{second, other}})
	if len(res.Conflicts) != 1 || res.Conflicts[0] != (store.MCPToolConflict{Name: "mcp_a_b_c", Server: "a_b"}) {
		t.Errorf("conflicts = %+v", res.Conflicts)
	}
	if res.Server.ImportStatus != store.MCPImportPartial || res.Server.ToolCount != 1 || !strings.Contains(res.Server.ImportError, `mcp_a_b_c: skipped, the name belongs to a tool of MCP server "a_b"`) {
		t.Errorf("server after a conflicting import = %+v", res.Server)
	}
	held, err := f.st.MCPTool(t.Context(), "mcp_a_b_c")
	if err != nil || held.Server != "a_b" || held.RemoteName != "c" {
		t.Errorf("the conflicting import took the name over: %+v, %v", held, err)
	}
}

func testMCPDelete(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	createServer(t, f.st, mcpServer("docs"))
	createServer(t, f.st, mcpServer("keep"))
	applyImport(t, f.st, store.ApplyMCPImportParams{Identifier: "docs", Tools: []store.MCPToolImport{mcpTool("docs", "x")}})
	applyImport(t, f.st, store.ApplyMCPImportParams{Identifier: "keep", Tools: []store.MCPToolImport{mcpTool("keep", "x")}})
	if err := f.st.DeleteMCPServer(ctx, "docs"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.MCPServer(ctx, "docs"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleted server still read: %v", err)
	}
	if got := toolNames(listTools(t, f.st, store.ListMCPToolsParams{IncludeOrphaned: true})); !slices.Equal(got, []string{"mcp_keep_x"}) {
		t.Errorf("tools after the delete = %q, want only the other server's", got)
	}
	if err := f.st.DeleteMCPServer(ctx, "docs"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second delete: err = %v, want ErrNotFound", err)
	}
}

func testMCPToolEffect(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	createServer(t, f.st, mcpServer("docs"))
	applyImport(t, f.st, store.ApplyMCPImportParams{Identifier: "docs", Tools: []store.MCPToolImport{mcpTool("docs", "x")}})
	got, err := f.st.SetMCPToolEffect(ctx, store.SetMCPToolEffectParams{Name: "mcp_docs_x", Effect: store.MCPEffectIdempotentWrite})
	if err != nil || got.Effect != store.MCPEffectIdempotentWrite {
		t.Errorf("SetMCPToolEffect = %+v, %v", got, err)
	}
	got, err = f.st.SetMCPToolEffect(ctx, store.SetMCPToolEffectParams{Name: "mcp_docs_x"})
	if err != nil || got.Effect != "" {
		t.Errorf("clearing the override = %+v, %v", got, err)
	}
	if _, err := f.st.SetMCPToolEffect(ctx, store.SetMCPToolEffectParams{Name: "mcp_docs_x", Effect: "destroy"}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("bad effect: err = %v, want ErrInvalid", err)
	}
	if _, err := f.st.SetMCPToolEffect(ctx, store.SetMCPToolEffectParams{Name: "nope"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("missing tool: err = %v, want ErrNotFound", err)
	}
	if _, err := f.st.MCPTool(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("MCPTool(nope): err = %v, want ErrNotFound", err)
	}
	tl, srv, err := f.st.MCPToolWithServer(ctx, "mcp_docs_x")
	want, _ := f.st.MCPServer(ctx, "docs")
	if err != nil || tl.Name != "mcp_docs_x" || tl.RemoteName != "x" || !sameServer(srv, want) {
		t.Errorf("MCPToolWithServer = %+v, %+v, %v; want the row and %+v", tl, srv, err, want)
	}
	if _, _, err := f.st.MCPToolWithServer(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("MCPToolWithServer(nope): err = %v, want ErrNotFound", err)
	}
}

func testMCPConcurrentImports(t *testing.T, h harness) {
	f := h.setup(t)
	createServer(t, f.st, mcpServer("docs"))
	const n = 8
	err := runAll(n, func(i int) error {
		tools := []store.MCPToolImport{mcpTool("docs", "shared")}
		if i%2 == 0 {
			tools = append(tools, mcpTool("docs", "even"))
		}
		_, err := f.st.ApplyMCPImport(t.Context(), store.ApplyMCPImportParams{Identifier: "docs", Tools: tools})
		return err
	})
	if err != nil {
		t.Fatalf("concurrent imports: %v", err)
	}
	srv, err := f.st.MCPServer(t.Context(), "docs")
	if err != nil {
		t.Fatal(err)
	}
	live := listTools(t, f.st, store.ListMCPToolsParams{Server: "docs"})
	if srv.ToolCount != len(live) {
		t.Errorf("tool count %d disagrees with %d live tools: imports interleaved", srv.ToolCount, len(live))
	}
}

// testMCPGeneration: every committed write to what the catalogue
// registers, t3agent's or an operator's own SQL, moves the generation on;
// reads, contacts, refused imports' notes and writes rolled back do not.
// (A create of a taken identifier may move it on PostgreSQL, whose
// statement trigger fires for the INSERT that changes nothing; a spare
// move only costs a reader one reload.)
func testMCPGeneration(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	current := func() int64 {
		t.Helper()
		g, err := f.st.MCPCatalogueGeneration(ctx)
		if err != nil {
			t.Fatalf("MCPCatalogueGeneration: %v", err)
		}
		return g
	}
	last := current()
	if again := current(); again != last {
		t.Fatalf("reading moved the generation: %d → %d", last, again)
	}
	on, class, effect := true, "publicContent", store.MCPEffectReadOnly
	db := rawDB(t, f.dsn)
	for _, c := range []struct {
		name  string
		do    func() error
		moves bool
		fails bool // the write is refused
	}{
		{"create a server", func() error { _, err := f.st.CreateMCPServer(ctx, mcpServer("docs")); return err }, true, false},
		{"read the servers", func() error { _, err := f.st.MCPServers(ctx); return err }, false, false},
		{"enable it", func() error {
			_, err := f.st.UpdateMCPServer(ctx, store.UpdateMCPServerParams{Identifier: "docs", Enabled: &on, UpdatedBy: "admin"})
			return err
		}, true, false},
		{"declare its class", func() error {
			_, err := f.st.UpdateMCPServer(ctx, store.UpdateMCPServerParams{Identifier: "docs", DataClass: &class, UpdatedBy: "admin"})
			return err
		}, true, false},
		{"update a missing server", func() error {
			_, err := f.st.UpdateMCPServer(ctx, store.UpdateMCPServerParams{Identifier: "nope", Enabled: &on, UpdatedBy: "admin"})
			return err
		}, false, true},
		{"record a contact", func() error {
			return f.st.RecordMCPContact(ctx, store.RecordMCPContactParams{Identifier: "docs", Latency: time.Millisecond})
		}, false, false},
		{"record a refused import", func() error {
			_, err := f.st.RecordMCPImportFailure(ctx, store.RecordMCPImportFailureParams{Identifier: "docs", Error: "HTTP 500"})
			return err
		}, false, false},
		{"import tools", func() error {
			_, err := f.st.ApplyMCPImport(ctx, store.ApplyMCPImportParams{Identifier: "docs", Tools: []store.MCPToolImport{mcpTool("docs", "a"), mcpTool("docs", "b")}})
			return err
		}, true, false},
		{"import into a missing server", func() error {
			_, err := f.st.ApplyMCPImport(ctx, store.ApplyMCPImportParams{Identifier: "nope", Tools: []store.MCPToolImport{mcpTool("nope", "a")}})
			return err
		}, false, true},
		{"override a tool's effect", func() error {
			_, err := f.st.SetMCPToolEffect(ctx, store.SetMCPToolEffectParams{Name: "mcp_docs_a", Effect: effect})
			return err
		}, true, false},
		{"operator's UPDATE of a server's effect", func() error {
			_, err := db.ExecContext(ctx, `UPDATE mcp_servers SET effect = 'idempotent_write' WHERE identifier = 'docs'`)
			return err
		}, true, false},
		{"operator's UPDATE of the health columns", func() error {
			_, err := db.ExecContext(ctx, `UPDATE mcp_servers SET last_latency_ms = 7 WHERE identifier = 'docs'`)
			return err
		}, false, false},
		{"operator's DELETE of a tool", func() error {
			_, err := db.ExecContext(ctx, `DELETE FROM mcp_tools WHERE name = 'mcp_docs_b'`)
			return err
		}, true, false},
		{"delete the server", func() error { return f.st.DeleteMCPServer(ctx, "docs") }, true, false},
	} {
		err := c.do()
		if (err != nil) != c.fails {
			t.Fatalf("%s: err = %v, want refused=%v", c.name, err, c.fails)
		}
		g := current()
		if moved := g > last; moved != c.moves {
			t.Errorf("%s: generation %d → %d, want moved=%v", c.name, last, g, c.moves)
		}
		last = g
	}
}

// testMCPGenerationConcurrent: imports and changes of one server from
// many goroutines all commit (on PostgreSQL they queue on the generation
// row instead of deadlocking on the server row), and the generation moved
// with every one of them.
func testMCPGenerationConcurrent(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	createServer(t, f.st, mcpServer("docs"))
	before, err := f.st.MCPCatalogueGeneration(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const n = 6
	errs := make(chan error, 2*n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, err := f.st.ApplyMCPImport(ctx, store.ApplyMCPImportParams{Identifier: "docs", Tools: []store.MCPToolImport{mcpTool("docs", "a")}})
			errs <- err
		})
		wg.Go(func() {
			enabled := i%2 == 0
			_, err := f.st.UpdateMCPServer(ctx, store.UpdateMCPServerParams{Identifier: "docs", Enabled: &enabled, UpdatedBy: "admin"})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent catalogue write: %v", err)
		}
	}
	after, err := f.st.MCPCatalogueGeneration(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after < before+2*n {
		t.Errorf("generation %d → %d after %d writes", before, after, 2*n)
	}
}
