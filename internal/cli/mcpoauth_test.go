package cli_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestMCPOAuthCommands: an OAuth-configured server shows "needs login"
// until a login, its calls fail at once saying so, and the commands
// refuse bad input with one sentence; no client secret is ever printed.
func TestMCPOAuthCommands(t *testing.T) {
	t.Parallel()
	srv := newMCPServer(t)
	const clientSecret = "cs-Ue72-never-shown"
	c := &mcpCLI{t: t, work: demoDir(t), env: []string{"CLIENT_SECRET=" + clientSecret}}
	c.ok("mcp", "add", "docs", "--url", srv.URL, "--data-class", "editorContent", "--as", "admin")

	c.fails("needs --as ADMIN", "mcp", "oauth", "docs")
	c.fails(`the MCP server "docs" is not configured for OAuth`, "mcp", "login", "docs", "--as", "admin")
	c.fails("the OAuth redirect URL must be an absolute http(s) URL", "mcp", "oauth", "docs", "--redirect-url", "/callback", "--as", "admin")
	c.fails("the client credentials flow needs a client id", "mcp", "oauth", "docs", "--flow", "client_credentials", "--as", "admin")
	c.fails(`the OAuth flow "implicit"`, "mcp", "oauth", "docs", "--flow", "implicit", "--as", "admin")

	out := c.ok("mcp", "oauth", "docs", "--scope", "mcp:write", "--as", "admin")
	if !strings.Contains(out, "needs_login (no login yet)") || !strings.Contains(out, "mcp:write") {
		t.Errorf("mcp oauth printed:\n%s", out)
	}
	if out := c.ok("mcp", "list"); !strings.Contains(out, "oauth: needs login") {
		t.Errorf("mcp list does not show the needed login:\n%s", out)
	}
	var listed []struct {
		Identifier string `json:"identifier"`
		OAuth      *struct {
			Status string   `json:"status"`
			Scopes []string `json:"scopes"`
		} `json:"oauth"`
	}
	if err := json.Unmarshal([]byte(c.ok("mcp", "list", "--json")), &listed); err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1 || listed[0].OAuth == nil || listed[0].OAuth.Status != "needs_login" {
		t.Fatalf("mcp list --json = %+v", listed)
	}
	n := srv.requests()
	c.fails(`the MCP server "docs" needs login`, "mcp", "ping", "docs", "--as", "admin")
	if srv.requests() != n {
		t.Error("a server that needs login was contacted")
	}

	// Client credentials need no person: the server counts as connected.
	c.ok("mcp", "oauth", "docs", "--flow", "client_credentials", "--client-id", "t3agent", "--client-secret-env", "CLIENT_SECRET", "--as", "admin")
	if out := c.ok("mcp", "list"); strings.Contains(out, "needs login") || !strings.Contains(out, "oauth") {
		t.Errorf("mcp list after client credentials:\n%s", out)
	}
	if out := c.ok("mcp", "logout", "docs", "--as", "admin"); !strings.Contains(out, "needs_login (logged out)") {
		t.Errorf("mcp logout printed:\n%s", out)
	}
	c.ok("mcp", "oauth", "docs", "--remove", "--as", "admin")
	if out := c.ok("mcp", "list"); strings.Contains(out, "oauth") {
		t.Errorf("mcp list after --remove still shows OAuth:\n%s", out)
	}
	for _, s := range c.seen {
		if strings.Contains(s, clientSecret) {
			t.Fatalf("the client secret was printed: %s", s)
		}
	}
}
