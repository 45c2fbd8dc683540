package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/t3agent/t3agent/internal/cli"
)

// mcpToken is the credential the tests store; it must never be shown.
const mcpToken = "tok-Zq81-never-shown-0xC0FFEE"

// mcpServer is a real MCP server built with the Go SDK (sessions, event
// stream answers) that keeps the Authorization header of every request.
type mcpServer struct {
	*httptest.Server
	mu   sync.Mutex
	auth []string
}

func newMCPServer(t *testing.T) *mcpServer {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "cli-test-server", Version: "4.5.6"}, nil)
	object := map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}, "required": []string{"text"}}
	s.AddTool(&sdk.Tool{Name: "echo", Description: "Echoes text.", InputSchema: object,
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var args struct{ Text string }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + args.Text}}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "shout", Description: "Shouts.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "HEY"}}}, nil
		})
	m := &mcpServer{}
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		m.auth = append(m.auth, r.Header.Get("Authorization"))
		m.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		m.Close()
		for ss := range s.Sessions() {
			_ = ss.Close()
		}
	})
	return m
}

// authSince returns the Authorization headers of the requests after the
// first n.
func (m *mcpServer) authSince(n int) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.auth[n:])
}

func (m *mcpServer) requests() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.auth)
}

// mcpCLI runs commands in one demo directory and keeps everything they
// printed or failed with, for the credential check.
type mcpCLI struct {
	t    *testing.T
	work string
	env  []string
	seen []string
}

func (c *mcpCLI) run(args ...string) (string, error) {
	c.t.Helper()
	out, errOut, err := run(c.t, context.Background(), c.work, c.env, args...)
	c.seen = append(c.seen, out, errOut)
	if err != nil {
		c.seen = append(c.seen, err.Error())
	}
	return out, err
}

// ok runs a command that must succeed and returns its output.
func (c *mcpCLI) ok(args ...string) string {
	c.t.Helper()
	out, err := c.run(args...)
	if err != nil {
		c.t.Fatalf("%v: %v\n%s", args, err, out)
	}
	return out
}

// fails runs a command that must fail with an error containing want.
func (c *mcpCLI) fails(want string, args ...string) {
	c.t.Helper()
	if out, err := c.run(args...); err == nil || !strings.Contains(err.Error(), want) {
		c.t.Errorf("%v: err = %v, want it to contain %q\n%s", args, err, want, out)
	}
}

func (c *mcpCLI) decisions() map[string]decisionRow {
	c.t.Helper()
	var rows []decisionRow
	if err := json.Unmarshal([]byte(c.ok("tools", "list", "--as", "admin", "--json")), &rows); err != nil {
		c.t.Fatal(err)
	}
	m := map[string]decisionRow{}
	for _, r := range rows {
		if strings.HasPrefix(r.Tool, "mcp_") {
			m[r.Tool] = r
		}
	}
	return m
}

func TestMCPCommands(t *testing.T) {
	t.Parallel()
	srv := newMCPServer(t)
	c := &mcpCLI{t: t, work: demoDir(t), env: []string{"MCP_TOKEN=" + mcpToken}}

	added := c.ok("mcp", "add", "docs", "--url", srv.URL, "--data-class", "editorContent", "--auth", "bearer",
		"--credential-env", "MCP_TOKEN", "--name", "Handbook", "--as", "admin", "--log-level", "debug")
	for _, want := range []string{`credential:\s+stored \(never shown\)`, `data class:\s+editorContent`, `effect:\s+non_idempotent_write`,
		`requires approval:\s+true`, `admin only:\s+true`, `enabled:\s+false`} {
		if !regexp.MustCompile(want).MatchString(added) {
			t.Errorf("mcp add printed no %s:\n%s", want, added)
		}
	}
	c.fails("already exists", "mcp", "add", "docs", "--url", srv.URL, "--as", "admin")
	c.fails("the environment has no NO_SUCH_VAR", "mcp", "add", "other", "--url", srv.URL, "--auth", "bearer", "--credential-env", "NO_SUCH_VAR", "--as", "admin")

	var listed []struct {
		Identifier    string `json:"identifier"`
		Enabled       bool   `json:"enabled"`
		HasCredential bool   `json:"hasCredential"`
		ImportStatus  string `json:"importStatus"`
	}
	if err := json.Unmarshal([]byte(c.ok("mcp", "list", "--json")), &listed); err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1 || listed[0].Identifier != "docs" || listed[0].Enabled || !listed[0].HasCredential || listed[0].ImportStatus != "never_imported" {
		t.Errorf("mcp list = %+v", listed)
	}

	// Ping and import use the stored credential.
	n := srv.requests()
	if out := c.ok("mcp", "ping", "docs", "--as", "admin"); !strings.Contains(out, "docs answered: cli-test-server 4.5.6, protocol 20") {
		t.Errorf("mcp ping docs = %q", out)
	}
	if out := c.ok("mcp", "import", "docs", "--as", "admin", "--log-level", "debug"); !strings.Contains(out, "docs: ok, 2 of 2 tools imported (2 added") {
		t.Errorf("mcp import = %q", out)
	}
	for i, a := range srv.authSince(n) {
		if a != "Bearer "+mcpToken {
			t.Errorf("request %d after ping carried Authorization %q, want the stored bearer token", i, a)
		}
	}
	show := c.ok("mcp", "show", "docs")
	for _, want := range []string{"mcp_docs_echo", "readOnly=true", "mcp_docs_shout", "editorContent", "last contact:"} {
		if !strings.Contains(show, want) {
			t.Errorf("mcp show printed no %q:\n%s", want, show)
		}
	}

	// Declarations: the server's effect and approval, one tool's effect.
	c.ok("mcp", "set", "docs", "--effect", "read_only", "--approval", "off", "--as", "admin")
	c.ok("mcp", "set", "docs", "--tool-effect", "mcp_docs_shout=idempotent_write", "--as", "admin")
	c.fails("--approval: say on or off", "mcp", "set", "docs", "--approval", "maybe", "--as", "admin")
	var shown struct {
		Server struct {
			Effect           string `json:"effect"`
			RequiresApproval bool   `json:"requiresApproval"`
		} `json:"server"`
		Tools []struct {
			Name           string `json:"name"`
			Effect         string `json:"effect"`
			EffectOverride string `json:"effectOverride"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(c.ok("mcp", "show", "docs", "--json")), &shown); err != nil {
		t.Fatal(err)
	}
	if shown.Server.Effect != "read_only" || shown.Server.RequiresApproval || len(shown.Tools) != 2 ||
		shown.Tools[0].Effect != "read_only" || shown.Tools[1].Effect != "idempotent_write" || shown.Tools[1].EffectOverride != "idempotent_write" {
		t.Errorf("mcp show --json after set = %+v", shown)
	}

	// The diagnostic call: a configured server (with its credential), or
	// a URL (without), given by flag or last.
	n = srv.requests()
	if out := c.ok("mcp", "call", "docs", "echo", "--args", `{"text":"configured"}`, "--as", "admin"); strings.TrimSpace(out) != "echo: configured" {
		t.Errorf("mcp call docs echo = %q", out)
	}
	if a := srv.authSince(n); !slices.Contains(a, "Bearer "+mcpToken) {
		t.Errorf("the configured call carried %q, want the bearer token", a)
	}
	n = srv.requests()
	if out := c.ok("mcp", "call", "--url", srv.URL, "echo", "--args", `{"text":"by flag"}`, "--as", "admin"); strings.TrimSpace(out) != "echo: by flag" {
		t.Errorf("mcp call --url URL echo = %q", out)
	}
	if out := c.ok("mcp", "call", "echo", srv.URL, "--args", `{"text":"url last"}`, "--as", "admin"); strings.TrimSpace(out) != "echo: url last" {
		t.Errorf("mcp call echo URL = %q", out)
	}
	if a := srv.authSince(n); slices.ContainsFunc(a, func(h string) bool { return h != "" }) {
		t.Errorf("a URL call carried a credential: %q", a)
	}
	c.fails("has no tool", "mcp", "call", "docs", "delete_everything", "--as", "admin")
	c.fails("give a configured MCP server and a tool", "mcp", "call", "docs", "--as", "admin")
	c.fails("one JSON object", "mcp", "call", "docs", "echo", "--args", `[1]`, "--as", "admin")
	if out := c.ok("mcp", "ping", srv.URL, "--as", "admin"); !strings.Contains(out, "answered: cli-test-server") {
		t.Errorf("mcp ping URL = %q", out)
	}

	// A disabled server's tools are not registered; enabled, they are
	// usable as declared, and mcp enable says so, or names exactly the
	// toggle that still keeps them off.
	if d := c.decisions(); len(d) != 0 {
		t.Errorf("tools of a disabled server are registered: %+v", d)
	}
	c.tools("tools call mcp_docs_echo before", "is not available", "tools", "call", "mcp_docs_echo", "--as", "admin", "--args", `{"text":"x"}`)
	if out := c.ok("mcp", "enable", "docs", "--as", "admin"); !strings.Contains(out, "The MCP server docs is enabled. Its 2 tool(s) are usable as declared (editorContent, read_only, approval for writes only, admins only).") {
		t.Errorf("mcp enable = %q", out)
	}
	d := c.decisions()
	if len(d) != 2 || !d["mcp_docs_echo"].Allowed || !d["mcp_docs_shout"].Allowed || d["mcp_docs_echo"].Group != "mcp_docs" {
		t.Errorf("after mcp enable: %+v; want both tools registered and allowed, in group mcp_docs", d)
	}
	c.ok("tools", "disable", "mcp_docs_shout", "--as", "admin")
	d = c.decisions()
	if !d["mcp_docs_echo"].Allowed || d["mcp_docs_shout"].Allowed || d["mcp_docs_shout"].Reason != "tool_disabled" {
		t.Errorf("after tools disable mcp_docs_shout: %+v", d)
	}
	for _, x := range []struct {
		set, unset []string
		want       string
	}{
		{nil, nil, "1 of its 2 tool(s) are usable as declared (editorContent, read_only, approval for writes only, admins only); disabled by their own override: mcp_docs_shout (t3agent tools enable NAME)."},
		{[]string{"tools", "disable", "--group", "mcp_docs"}, []string{"tools", "enable", "--group", "mcp_docs"},
			"Its tools are still off: its tool group mcp_docs is disabled (t3agent tools enable --group mcp_docs)."},
		{[]string{"mcp", "set", "docs", "--clear-data-class"}, []string{"mcp", "set", "docs", "--data-class", "editorContent"},
			"Its tools are still off: it has no data class (t3agent mcp set docs --data-class CLASS)."},
	} {
		if x.set != nil {
			c.ok(append(x.set, "--as", "admin")...)
		}
		if out := c.ok("mcp", "enable", "docs", "--as", "admin"); !strings.Contains(out, x.want) {
			t.Errorf("mcp enable after %v = %q, want %q", x.set, out, x.want)
		}
		if x.unset != nil {
			c.ok(append(x.unset, "--as", "admin")...)
		}
	}
	n = srv.requests()
	if out := c.ok("tools", "call", "mcp_docs_echo", "--as", "admin", "--args", `{"text":"through the gate"}`); strings.TrimSpace(out) != "echo: through the gate" {
		t.Errorf("tools call mcp_docs_echo = %q", out)
	}
	if a := srv.authSince(n); !slices.Contains(a, "Bearer "+mcpToken) {
		t.Errorf("the gated call carried %q, want the bearer token", a)
	}
	// The gate validates the arguments and decides for the actor: neither
	// call reaches the server.
	n = srv.requests()
	c.tools("tools call with bad arguments", "invalid arguments", "tools", "call", "mcp_docs_echo", "--as", "admin", "--args", `{"text":5}`)
	c.tools("tools call as the editor", "is not available", "tools", "call", "mcp_docs_echo", "--as", "editor", "--args", `{"text":"x"}`)
	c.tools("tools call of a disabled tool", "is not available", "tools", "call", "mcp_docs_shout", "--as", "admin")
	if srv.requests() != n {
		t.Errorf("%d requests reached the server for calls the gate refused", srv.requests()-n)
	}

	if out := c.ok("mcp", "disable", "docs", "--as", "admin"); !strings.Contains(out, "The MCP server docs is disabled.") {
		t.Errorf("mcp disable = %q", out)
	}
	if d := c.decisions(); len(d) != 0 {
		t.Errorf("after mcp disable: %+v", d)
	}
	c.tools("tools call after mcp disable", "is not available", "tools", "call", "mcp_docs_echo", "--as", "admin", "--args", `{"text":"x"}`)

	// A refused request names no credential either.
	locked := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	defer locked.Close()
	c.ok("mcp", "add", "locked", "--url", locked.URL, "--auth", "header", "--header-name", "X-Api-Key", "--credential-env", "MCP_TOKEN", "--as", "admin")
	if out, err := c.run("mcp", "import", "locked", "--as", "admin", "--log-level", "debug"); err == nil || !strings.Contains(out, "HTTP 401") {
		t.Errorf("import of the locked server: %v\n%s", err, out)
	}
	c.fails("HTTP 401", "mcp", "ping", "locked", "--as", "admin")
	if out := c.ok("mcp", "show", "locked"); !regexp.MustCompile(`import:\s+error`).MatchString(out) {
		t.Errorf("mcp show locked after the refused import:\n%s", out)
	}

	if out := c.ok("mcp", "remove", "docs", "--as", "admin"); !strings.Contains(out, "The MCP server docs is removed.") {
		t.Errorf("mcp remove = %q", out)
	}
	c.fails(`MCP server "docs"`, "mcp", "show", "docs")

	// The credential is in no output, no error and no byte of the store.
	for _, s := range c.seen {
		if strings.Contains(s, mcpToken) {
			t.Errorf("the credential leaked into: %.400s", s)
		}
	}
	files := 0
	err := filepath.WalkDir(filepath.Join(c.work, cli.DefaultDataDir), func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.Contains(e.Name(), "t3agent.db") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		if strings.Contains(string(b), mcpToken) {
			t.Errorf("the credential is stored in plain text in %s", path)
		}
		return nil
	})
	if err != nil || files == 0 {
		t.Errorf("the store files were not checked: %v (%d files)", err, files)
	}
}

// tools runs a `tools call` that must answer with an error result
// containing want.
func (c *mcpCLI) tools(what, want string, args ...string) {
	c.t.Helper()
	out, err := c.run(args...)
	if err == nil || !strings.Contains(out, want) {
		c.t.Errorf("%s: err = %v, output %q; want an error result containing %q", what, err, out, want)
	}
}

// TestMCPAdminOnly: every command that changes or contacts an MCP server
// needs a TYPO3 admin; an editor and a missing --as are refused before
// anything is stored or sent.
func TestMCPAdminOnly(t *testing.T) {
	t.Parallel()
	srv := newMCPServer(t)
	c := &mcpCLI{t: t, work: demoDir(t), env: []string{"MCP_TOKEN=" + mcpToken}}
	c.ok("mcp", "add", "docs", "--url", srv.URL, "--data-class", "publicContent", "--as", "admin")
	commands := [][]string{
		{"mcp", "add", "other", "--url", srv.URL, "--auth", "bearer", "--credential-env", "MCP_TOKEN"},
		{"mcp", "set", "docs", "--data-class", "secretAdjacent"},
		{"mcp", "import", "docs"},
		{"mcp", "import", "--all"},
		{"mcp", "ping", "docs"},
		{"mcp", "ping", "--url", srv.URL},
		{"mcp", "call", "docs", "echo"},
		{"mcp", "call", "--url", srv.URL, "echo"},
		{"mcp", "enable", "docs"},
		{"mcp", "disable", "docs"},
		{"mcp", "remove", "docs"},
	}
	n := srv.requests()
	for _, args := range commands {
		c.fails("--as editor: only TYPO3 admins manage MCP servers", append(slices.Clone(args), "--as", "editor")...)
		c.fails("needs --as ADMIN", args...)
	}
	if srv.requests() != n {
		t.Errorf("refused commands sent %d requests", srv.requests()-n)
	}
	var listed []struct {
		Identifier string `json:"identifier"`
		DataClass  string `json:"dataClass"`
		Enabled    bool   `json:"enabled"`
	}
	if err := json.Unmarshal([]byte(c.ok("mcp", "list", "--json")), &listed); err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1 || listed[0].DataClass != "publicContent" || listed[0].Enabled {
		t.Errorf("refused commands changed the servers: %+v", listed)
	}
	// Reading the list and one server needs no admin.
	if out := c.ok("mcp", "show", "docs", "--as", "editor"); !strings.Contains(out, "publicContent") {
		t.Errorf("mcp show as the editor:\n%s", out)
	}
}

// TestMCPConfiguration: the mcp.* keys reach the client; the allow-list
// refuses other hosts before anything is sent.
func TestMCPConfiguration(t *testing.T) {
	t.Parallel()
	srv := newMCPServer(t)
	work := demoDir(t)
	refused := &mcpCLI{t: t, work: work, env: []string{"T3AGENT_MCP_ALLOWED_HOSTS=mcp.example.com, 10.0.0.7:8080"}}
	refused.fails("not on the MCP host allow-list", "mcp", "ping", "--url", srv.URL, "--as", "admin")
	refused.fails("not on the MCP host allow-list", "mcp", "add", "docs", "--url", srv.URL, "--as", "admin")
	if srv.requests() != 0 {
		t.Errorf("a host off the allow-list was asked %d times", srv.requests())
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	allowed := &mcpCLI{t: t, work: work, env: []string{"T3AGENT_MCP_ALLOWED_HOSTS=mcp.example.com," + host}}
	if out := allowed.ok("mcp", "ping", "--url", srv.URL, "--as", "admin"); !strings.Contains(out, "answered") {
		t.Errorf("ping of an allowed host = %q", out)
	}
	bad := &mcpCLI{t: t, work: work, env: []string{"T3AGENT_MCP_OPERATION_TIMEOUT=0s"}}
	bad.fails("mcp.operation_timeout: must be a positive duration", "mcp", "list")
	bad = &mcpCLI{t: t, work: work, env: []string{fmt.Sprintf("T3AGENT_MCP_ALLOWED_HOSTS=%s/mcp", host)}}
	bad.fails("mcp.allowed_hosts:", "mcp", "list")
}
