package storetest

import (
	"errors"
	"testing"

	"github.com/t3agent/t3agent/internal/store"
)

// ---- OAuth records of MCP servers ----

func mcpOAuthRecord(server string) store.MCPOAuthRecord {
	return store.MCPOAuthRecord{
		Server: server, Flow: store.MCPOAuthAuthorizationCode, ClientID: "https://t3agent.example/client.json",
		SealedClientSecret: "", Scopes: "mcp:read mcp:write", RedirectURL: "http://127.0.0.1:8080/oauth/mcp/callback",
		Status: store.MCPOAuthNeedsLogin,
	}
}

func testMCPOAuth(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	if _, err := f.st.PutMCPOAuth(ctx, mcpOAuthRecord("nowhere")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a record for a missing server: err = %v, want ErrNotFound", err)
	}
	createServer(t, f.st, mcpServer("docs"))
	r, err := f.st.PutMCPOAuth(ctx, mcpOAuthRecord("docs"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != store.MCPOAuthNeedsLogin || r.Scopes != "mcp:read mcp:write" || r.UpdatedAt.IsZero() {
		t.Errorf("stored record = %+v", r)
	}
	g, err := f.st.SetMCPOAuthGrant(ctx, store.SetMCPOAuthGrantParams{Server: "docs", Issuer: "https://as.example",
		SealedToken: "t3s1:abcd:token", Status: store.MCPOAuthConnected})
	if err != nil {
		t.Fatal(err)
	}
	if g.Issuer != "https://as.example" || g.SealedToken != "t3s1:abcd:token" || g.ClientID != r.ClientID || g.Status != store.MCPOAuthConnected {
		t.Errorf("after the grant = %+v", g)
	}
	// Replacing the configuration keeps nothing of the old record.
	cc := mcpOAuthRecord("docs")
	cc.Flow, cc.SealedClientSecret = store.MCPOAuthClientCredentials, "t3s1:abcd:secret"
	if r, err = f.st.PutMCPOAuth(ctx, cc); err != nil || r.SealedToken != "" || r.Flow != store.MCPOAuthClientCredentials {
		t.Errorf("replaced record = %+v, %v", r, err)
	}
	for name, bad := range map[string]store.MCPOAuthRecord{
		"flow":   {Server: "docs", Flow: "implicit", Status: store.MCPOAuthNeedsLogin},
		"status": {Server: "docs", Flow: store.MCPOAuthClientCredentials, Status: "fine"},
	} {
		if _, err := f.st.PutMCPOAuth(ctx, bad); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	if list, err := f.st.MCPOAuthRecords(ctx); err != nil || len(list) != 1 {
		t.Errorf("records = %v, %v", list, err)
	}
	// Removing the server removes its record.
	if err := f.st.DeleteMCPServer(ctx, "docs"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.MCPOAuthRecord(ctx, "docs"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("record after the server's removal: err = %v", err)
	}
	if _, err := f.st.SetMCPOAuthGrant(ctx, store.SetMCPOAuthGrantParams{Server: "docs", Status: store.MCPOAuthNeedsLogin}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("grant without record: err = %v", err)
	}
	if err := f.st.DeleteMCPOAuth(ctx, "docs"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("delete without record: err = %v", err)
	}
}
