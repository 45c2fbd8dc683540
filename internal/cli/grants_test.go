package cli_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/store"
)

// TestMCPServerGrants: grants are listed per user and revoked by id; a
// revoked grant is gone from the list and refused a second time; the
// record of calls prints without arguments.
func TestMCPServerGrants(t *testing.T) {
	t.Parallel()
	work := demoDir(t)
	ctx := context.Background()
	st := demoStore(t, work, &chatClock{})
	for _, g := range []store.OAuthGrant{
		{ID: "g-editor", Username: "editor", ClientID: "t3c_a", ClientName: "Cursor", Resource: "http://127.0.0.1:8080/mcp"},
		{ID: "g-admin", Username: "admin", ClientID: "t3c_b", ClientName: "Claude Code", Resource: "http://127.0.0.1:8080/mcp/writer"},
	} {
		if _, err := st.CreateOAuthGrant(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.RecordMCPCall(ctx, store.RecordMCPCallParams{ActorUsername: "editor", Client: "Cursor", Method: "tools/call", Tool: "search_records", Decision: "allowed", Outcome: "ok"}); err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, ctx, work, nil, "mcp-server", "grants", "list", "--user", "editor")
	if err != nil || !strings.Contains(out, "g-editor") || !strings.Contains(out, "Cursor") || strings.Contains(out, "g-admin") {
		t.Fatalf("list --user editor: %v\n%s", err, out)
	}
	if _, _, err := run(t, ctx, work, nil, "mcp-server", "grants", "revoke", "g-editor"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, ctx, work, nil, "mcp-server", "grants", "revoke", "g-editor"); err == nil || !strings.Contains(err.Error(), "no live grant g-editor") {
		t.Errorf("revoked twice: %v", err)
	}
	out, _, err = run(t, ctx, work, nil, "mcp-server", "grants", "list", "--json")
	var views []struct {
		ID string `json:"id"`
	}
	if err != nil || json.Unmarshal([]byte(out), &views) != nil || len(views) != 1 || views[0].ID != "g-admin" {
		t.Errorf("list after revoke: %v\n%s", err, out)
	}
	out, _, err = run(t, ctx, work, nil, "mcp-server", "grants", "list", "--all")
	if err != nil || !strings.Contains(out, "g-editor") {
		t.Errorf("list --all: %v\n%s", err, out)
	}
	out, _, err = run(t, ctx, work, nil, "mcp-server", "calls", "--user", "editor")
	if err != nil || !strings.Contains(out, "search_records") || !strings.Contains(out, "allowed") {
		t.Errorf("calls: %v\n%s", err, out)
	}
}
