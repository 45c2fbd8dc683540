package mcpserver_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/chat/chattest"
	"github.com/t3agent/t3agent/internal/mcpserver"
	"github.com/t3agent/t3agent/internal/oauth"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/web"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Protocol revisions the tests speak.
const (
	modern = "2026-07-28"
	older  = "2025-06-18"
)

// Configurations the environment declares besides chattest's
// "chat-config" (trust zone local, require_second_approver).
const (
	// globalConfig sends tool output to an externalGlobal provider.
	globalConfig = "global-config"
	// notesConfig allows the MCP server's group only.
	notesConfig = "notes-only"
)

// env is t3agent served over real HTTP with the MCP facade and its OAuth
// server mounted, over chattest's real parts (store, demo site, gate,
// runtime, an MCP server with a read and a write tool).
type env struct {
	t      testing.TB
	f      *chattest.Fixture
	ts     *httptest.Server
	tokens map[string]string // service token secrets by name
}

type envOptions struct {
	postgres bool
	facade   func(*mcpserver.Params)
	oauth    func(*oauth.Params)
}

func setup(t testing.TB, o envOptions) *env {
	t.Helper()
	f := chattest.New(t, chattest.Options{Postgres: o.postgres, ConfigYAML: "require_second_approver: true"})
	e := &env{t: t, f: f, tokens: map[string]string{}}
	ctx := context.Background()
	doc, err := agentconfig.ParseDocument([]byte(`
providers:
  - identifier: global
    adapter: openai
    endpoint: ` + f.LLM.BaseURL() + `
    api_key: env:LLMTEST_KEY
    trust_zone: externalGlobal
models:
  - identifier: global-model
    provider: global
    model_id: global-large
    context_length: 128000
    max_output_tokens: 4096
configurations:
  - identifier: ` + globalConfig + `
    model: global-model
  - identifier: ` + notesConfig + `
    model: llmtest-model
    allowed_tool_groups: [mcp_notes]
`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Tasks.Apply(ctx, agentconfig.ApplyParams{Document: doc, By: "admin"}); err != nil {
		t.Fatal(err)
	}
	for name, tok := range map[string]struct {
		user   string
		scopes []store.Scope
	}{
		"editor-host": {"editor", []store.Scope{store.ScopeAgentRun, store.ScopeAgentRead}},
		"admin-host":  {"admin", []store.Scope{store.ScopeAgentRun, store.ScopeAgentRead}},
		"intern-host": {"intern", []store.Scope{store.ScopeAgentRun, store.ScopeAgentRead}},
		"read-only":   {"editor", []store.Scope{store.ScopeAgentRead}},
	} {
		secret := "t3a_" + randomString()
		if _, err := f.Store.CreateServiceToken(ctx, store.CreateServiceTokenParams{
			Name: name, Username: tok.user, Scopes: tok.scopes, SecretHash: web.HashSecret(secret), CreatedBy: "admin",
		}); err != nil {
			t.Fatal(err)
		}
		e.tokens[name] = secret
	}
	fp := mcpserver.Params{Gate: f.Gate, Runtime: f.Runtime, Configs: f.Tasks, Calls: f.Store, Version: "test"}
	if o.facade != nil {
		o.facade(&fp)
	}
	op := oauth.Params{Store: f.Store, Key: f.Keyring.Derive("oauth"), SiteName: "Nordlicht Pumps"}
	if o.oauth != nil {
		o.oauth(&op)
	}
	srv := web.New(web.Params{
		Logger: f.Logger, SiteName: "Nordlicht Pumps", Version: "test",
		API: &web.API{Site: f.Site, Credentials: f.Store, Runtime: f.Runtime, Chat: f.Service, Gate: f.Gate, Configs: f.Tasks, Now: f.Clock.Now},
		MCP: &web.MCPParams{Facade: fp, OAuth: &op},
	})
	e.ts = httptest.NewServer(srv.Handler())
	t.Cleanup(srv.CloseStreams)
	t.Cleanup(e.ts.Close)
	return e
}

func randomString() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// connect opens an SDK client session at path with token, speaking
// version.
func (e *env) connect(path, token, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	e.t.Helper()
	cs, err := e.tryConnect(path, token, version, opts)
	if err != nil {
		e.t.Fatalf("connect %s (%s): %v", path, version, err)
	}
	return cs
}

func (e *env) tryConnect(path, token, version string, opts *mcp.ClientOptions) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1.0"}, opts)
	tr := &mcp.StreamableClientTransport{Endpoint: e.ts.URL + path, HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}, DisableStandaloneSSE: true}
	cs, err := c.Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err == nil {
		e.t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	out := make([]string, len(res.Tools))
	for i, tl := range res.Tools {
		out[i] = tl.Name
	}
	return out
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
