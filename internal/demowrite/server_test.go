package demowrite_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/t3agent/t3agent/internal/demowrite"
)

// TestOAuthProtection: /mcp is an OAuth-protected resource. Without a
// token, with a token of another authorization server, a token bound to
// another resource or a revoked one, the answer is 401 with the RFC 9728
// challenge; the metadata names this server's authorization server; a
// token from the real flow lists the tools. No token reaches the log.
func TestOAuthProtection(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	base := f.srv.URL()
	good := f.login(t, f.srv, "admin", "")
	other := f.start(t, "another-authorization-server")
	foreign := f.login(t, other, "admin", "")
	elsewhere := f.login(t, f.srv, "admin", base+"/mcp/elsewhere")
	rt := f.loginToken(t, f.srv, "admin", "")
	revoked := rt.Access
	resp, err := http.PostForm(base+"/oauth/revoke", url.Values{"token": {revoked}, "client_id": {rt.ClientID}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("revoke: %d", resp.StatusCode)
	}

	challenge := `Bearer resource_metadata="` + base + `/.well-known/oauth-protected-resource/mcp"`
	for _, c := range []struct {
		name, header string
		ok           bool
	}{
		{"no token", "", false},
		{"not bearer", "Basic YWRtaW46YWRtaW4=", false},
		{"garbage", "Bearer t3o_garbage", false},
		{"another authorization server", "Bearer " + foreign, false},
		{"another resource (audience)", "Bearer " + elsewhere, false},
		{"revoked", "Bearer " + revoked, false},
		{"the real flow's token", "Bearer " + good, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
			if c.header != "" {
				req.Header.Set("Authorization", c.header)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if c.ok {
				if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), demowrite.ToolUpdatePageMetadata) {
					t.Errorf("status %d: %s", resp.StatusCode, body)
				}
				return
			}
			if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != challenge {
				t.Errorf("status %d, WWW-Authenticate %q, want 401 with %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), challenge)
			}
		})
	}

	var md oauthex.ProtectedResourceMetadata
	getJSON(t, base+"/.well-known/oauth-protected-resource/mcp", &md)
	if md.Resource != base+"/mcp" || !slices.Equal(md.AuthorizationServers, []string{base}) {
		t.Errorf("resource metadata = %+v", md)
	}
	var as oauthex.AuthServerMeta
	getJSON(t, base+"/.well-known/oauth-authorization-server", &as)
	if as.Issuer != base || !slices.Contains(as.CodeChallengeMethodsSupported, "S256") || as.RegistrationEndpoint != base+"/oauth/register" {
		t.Errorf("authorization server metadata = %+v", as)
	}
	for _, tok := range []string{good, foreign, elsewhere, revoked} {
		if strings.Contains(f.log.String(), tok) {
			t.Fatal("a token is in the server's log")
		}
	}
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", u, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

var secretField = regexp.MustCompile(`name="secret" value="([^"]+)"`)

// TestSDKClientDiscoversTheLogin: the Go SDK's own OAuth client finds the
// authorization server from the 401 challenge, registers, runs the code
// flow with PKCE through the consent page and then calls a tool, which
// acts as the person who consented.
func TestSDKClientDiscoversTheLogin(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	base := f.srv.URL()
	const redirect = "http://127.0.0.1:33418/callback"
	browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	step := func(method, target string, form url.Values) *http.Response {
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, _ := http.NewRequest(method, target, body)
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := browser.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName: "Claude Code", RedirectURIs: []string{redirect}, GrantTypes: []string{"authorization_code", "refresh_token"},
			TokenEndpointAuthMethod: "none",
		}},
		RedirectURL: redirect,
		AuthorizationCodeFetcher: func(_ context.Context, a *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			resp := step(http.MethodGet, a.URL, nil)
			loc, _ := url.Parse(resp.Header.Get("Location"))
			id := loc.Query().Get("id")
			page := step(http.MethodPost, base+"/oauth/consent", url.Values{"id": {id}, "action": {"login"}, "username": {"editor"}, "password": {password(t, "editor")}})
			html, _ := io.ReadAll(page.Body)
			m := secretField.FindSubmatch(html)
			if m == nil || !strings.Contains(string(html), demowrite.ToolCreateContentDraft) {
				t.Fatalf("consent login: %d: %s", page.StatusCode, html)
			}
			resp = step(http.MethodPost, base+"/oauth/consent", url.Values{"id": {id}, "action": {"allow"}, "secret": {string(m[1])}})
			resp = step(http.MethodGet, base+resp.Header.Get("Location"), nil)
			back, _ := url.Parse(resp.Header.Get("Location"))
			q := back.Query()
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp", OAuthHandler: h, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("connect with OAuth: %v", err)
	}
	defer cs.Close()
	res := call(t, cs, demowrite.ToolCreateContentDraft, map[string]any{"pid": 6, "header": "Draft by the editor"})
	if res.IsError {
		t.Fatalf("create as editor: %s", text(res))
	}
	if got := f.str(t, `SELECT u.username FROM sys_history h JOIN be_users u ON u.uid = h.userid WHERE h.tablename = 'tt_content' ORDER BY h.uid DESC LIMIT 1`); got != "editor" {
		t.Errorf("the write was recorded for %q, want editor", got)
	}
}

// TestToolsAreAnnotated: every tool says it writes, whether it destroys
// and whether it is idempotent, and has a closed input schema.
func TestToolsAreAnnotated(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cs := mustConnect(t, f.srv, f.login(t, f.srv, "admin", ""))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]bool{ // destructive, idempotent
		demowrite.ToolUpdatePageMetadata: {true, true},
		demowrite.ToolCreateContentDraft: {false, false},
		demowrite.ToolSetFileAlternative: {true, true},
	}
	if len(res.Tools) != len(want) {
		t.Fatalf("%d tools", len(res.Tools))
	}
	for _, tl := range res.Tools {
		w, ok := want[tl.Name]
		a := tl.Annotations
		if !ok || a == nil || a.ReadOnlyHint || a.DestructiveHint == nil || *a.DestructiveHint != w[0] || a.IdempotentHint != w[1] || a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("%s: annotations %+v", tl.Name, a)
		}
		s, _ := json.Marshal(tl.InputSchema)
		if !strings.Contains(string(s), `"additionalProperties":false`) {
			t.Errorf("%s: schema %s", tl.Name, s)
		}
	}
}

// TestStartOnLoopbackOnly: the server refuses to listen elsewhere.
func TestStartOnLoopbackOnly(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0", "localhost:0"} {
		srv, err := demowrite.New(context.Background(), demowrite.Params{Demo: f.demo, Site: f.site, Store: f.store, Key: [32]byte{1}, Addr: addr})
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("Start on %s: %v", addr, err)
		}
		srv.Stop()
	}
	if _, err := demowrite.New(context.Background(), demowrite.Params{Site: f.site, Store: f.store, Key: [32]byte{1}}); err == nil {
		t.Error("New without a demo succeeded")
	}
}
