package mcpauth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/t3agent/t3agent/internal/logtest"
	"github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/mcpauth"
	"github.com/t3agent/t3agent/internal/oauth"
	"github.com/t3agent/t3agent/internal/secret"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

const (
	redirectURL = "http://127.0.0.1:33418/callback"
	password    = "correct horse"
)

// tokenLog records every token and code the token endpoint hands out,
// so the test can look for them where they must not be.
type tokenLog struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen []string
}

func (l *tokenLog) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Path == "/oauth/token" && req.Body != nil {
		b, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(b))
		if q, err := url.ParseQuery(string(b)); err == nil {
			l.add(q.Get("code"), q.Get("refresh_token"))
		}
	}
	resp, err := l.next.RoundTrip(req)
	if err != nil || req.URL.Path != "/oauth/token" {
		return resp, err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body = io.NopCloser(bytes.NewReader(b))
	var tok struct {
		Access  string `json:"access_token"`
		Refresh string `json:"refresh_token"`
	}
	if json.Unmarshal(b, &tok) == nil {
		l.add(tok.Access, tok.Refresh)
	}
	return resp, nil
}

func (l *tokenLog) add(vs ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, v := range vs {
		if v != "" {
			l.seen = append(l.seen, v)
		}
	}
}

func (l *tokenLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.seen...)
}

// env is an MCP server (the official Go SDK's, over httptest) protected
// by the SDK's bearer middleware and t3agent's own authorization server
// (internal/oauth) on the same origin, and t3agent's MCP client with a
// Manager over a real SQLite store.
type env struct {
	ts     *httptest.Server
	asSt   store.Store
	st     store.Store
	svc    *mcp.Service
	mgr    *mcpauth.Manager
	logs   *logtest.Buffer
	tokens *tokenLog
	// stepUp, when set, is the scope tools/call needs beyond "mcp".
	stepUp string
}

type envOptions struct {
	stepUp string
}

var secretField = regexp.MustCompile(`name="secret" value="([^"]+)"`)

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	ctx := t.Context()
	e := &env{logs: &logtest.Buffer{}, stepUp: o.stepUp}
	log := slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	open := func(name string) store.Store {
		st, err := store.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), name), store.OpenParams{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	e.asSt, e.st = open("as.db"), open("client.db")
	key, _ := secret.NewKey()
	keys, err := secret.NewKeyring(key)
	if err != nil {
		t.Fatal(err)
	}
	// Access tokens live 9s: the oauth2 package treats a token as due 10s
	// before it expires, so the client refreshes (and rotates the refresh
	// token) before every use, while each fresh token is still good at
	// the server when the request arrives.
	as, err := oauth.New(oauth.Params{
		Store: e.asSt, Key: keys.Derive("oauth"), SiteName: "Test", Logger: log,
		AccessTTL: 9 * time.Second,
		Login: func(_ *http.Request, user, pw string) (*typo3.BackendUser, error) {
			if user != "editor" || pw != password {
				return nil, &oauth.LoginError{}
			}
			return &typo3.BackendUser{UID: 7, Username: "editor"}, nil
		},
		Tools: func(context.Context, *typo3.BackendUser, string) ([]oauth.ConsentTool, error) {
			return []oauth.ConsentTool{{Name: "echo"}}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	server := sdk.NewServer(&sdk.Implementation{Name: "protected", Version: "1.0.0"}, nil)
	sdk.AddTool(server, &sdk.Tool{Name: "echo", Description: "Echoes."}, func(_ context.Context, _ *sdk.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Text}}}, nil, nil
	})
	mcpHandler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, &sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	mux := http.NewServeMux()
	for _, p := range as.Patterns() {
		mux.Handle(p, as.Handler())
	}
	var base string
	verify := func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		g, err := as.Verify(ctx, token, base+"/mcp")
		if err != nil {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{Scopes: g.Scopes, Expiration: time.Now().Add(time.Hour), UserID: g.Username}, nil
	}
	mux.Handle("/mcp", e.stepUpGate(func() string { return base }, auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: "", // set per request below
	})(mcpHandler)))
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
			Resource: base + "/mcp", AuthorizationServers: []string{base}, ScopesSupported: []string{oauth.ScopeMCP, "offline_access"},
		}).ServeHTTP(w, r)
	})
	e.ts = httptest.NewServer(mux)
	t.Cleanup(e.ts.Close)
	base = e.ts.URL

	client, err := mcp.NewHTTPClient(nil)
	if err != nil {
		t.Fatal(err)
	}
	e.tokens = &tokenLog{next: client.Transport}
	client.Transport = e.tokens
	e.mgr, err = mcpauth.New(mcpauth.Params{Store: e.st, Keyring: keys, HTTPClient: client, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	e.svc, err = mcp.New(mcp.Params{Store: e.st, Keyring: keys, Logger: log, ClientVersion: "test", OAuth: e.mgr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.svc.Close() })
	if _, err := e.svc.Add(ctx, mcp.AddParams{Identifier: "docs", URL: base + "/mcp", DataClass: tool.PublicContent, Enabled: true, By: "admin"}); err != nil {
		t.Fatal(err)
	}
	if err := e.mgr.Configure(ctx, mcpauth.ConfigureParams{Server: "docs", RedirectURL: redirectURL}); err != nil {
		t.Fatal(err)
	}
	return e
}

// stepUpGate answers tools/call with 403 insufficient_scope unless the
// token has e.stepUp, and adds the resource metadata URL to 401s.
func (e *env) stepUpGate(base func() string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		meta := base() + "/.well-known/oauth-protected-resource/mcp"
		if e.stepUp != "" && r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(b))
			var msg struct {
				Method string `json:"method"`
			}
			_ = json.Unmarshal(b, &msg)
			if msg.Method == "tools/call" && r.Header.Get("Authorization") != "" {
				w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="mcp `+e.stepUp+`", resource_metadata="`+meta+`"`)
				http.Error(w, "insufficient scope", http.StatusForbidden)
				return
			}
		}
		rec := &challenge{ResponseWriter: w, meta: meta}
		next.ServeHTTP(rec, r)
	})
}

// challenge adds resource_metadata to the middleware's 401 challenge.
type challenge struct {
	http.ResponseWriter
	meta string
}

func (c *challenge) WriteHeader(code int) {
	if code == http.StatusUnauthorized {
		c.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+c.meta+`"`)
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *challenge) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

var browser = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// person opens the authorization URL, logs in on the consent page and
// allows, like a person in a browser, and returns the redirect's query.
func (e *env) person(t *testing.T) auth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		step := func(method, target string, form url.Values) (*http.Response, string, error) {
			var rd io.Reader
			if form != nil {
				rd = strings.NewReader(form.Encode())
			}
			req, err := http.NewRequestWithContext(ctx, method, target, rd)
			if err != nil {
				return nil, "", err
			}
			if form != nil {
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			resp, err := browser.Do(req)
			if err != nil {
				return nil, "", err
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp, string(b), nil
		}
		resp, _, err := step(http.MethodGet, args.URL, nil)
		if err != nil {
			return nil, err
		}
		loc, _ := url.Parse(resp.Header.Get("Location"))
		if resp.StatusCode != http.StatusFound || loc == nil || loc.Path != "/oauth/consent" {
			return nil, errors.New("authorize did not lead to the consent page: " + resp.Status)
		}
		id := loc.Query().Get("id")
		_, page, err := step(http.MethodPost, e.ts.URL+"/oauth/consent", url.Values{"id": {id}, "action": {"login"}, "username": {"editor"}, "password": {password}})
		if err != nil {
			return nil, err
		}
		m := secretField.FindStringSubmatch(page)
		if m == nil {
			return nil, errors.New("the consent login failed")
		}
		resp, _, err = step(http.MethodPost, e.ts.URL+"/oauth/consent", url.Values{"id": {id}, "action": {"allow"}, "secret": {m[1]}})
		if err != nil {
			return nil, err
		}
		resp, _, err = step(http.MethodGet, e.ts.URL+resp.Header.Get("Location"), nil)
		if err != nil {
			return nil, err
		}
		back, err := url.Parse(resp.Header.Get("Location"))
		if err != nil || !strings.HasPrefix(back.String(), redirectURL) {
			return nil, errors.New("the authorization server did not redirect to the callback")
		}
		q := back.Query()
		return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
	}
}

func (e *env) login(ctx context.Context, fetch auth.AuthorizationCodeFetcher) (mcpauth.Status, error) {
	return e.mgr.Login(ctx, mcpauth.LoginParams{Server: "docs", Fetch: fetch, Connect: func(ctx context.Context, h auth.OAuthHandler) error {
		_, err := e.svc.Authorize(ctx, mcp.AuthorizeParams{Server: "docs", Handler: h, Timeout: 30 * time.Second})
		return err
	}})
}

func (e *env) call(ctx context.Context, text string) (tool.Result, error) {
	return e.svc.Call(ctx, mcp.CallParams{Server: "docs", Tool: "echo", Args: json.RawMessage(`{"text":"` + text + `"}`)})
}

func (e *env) record(t *testing.T) store.MCPOAuthRecord {
	t.Helper()
	r, err := e.st.MCPOAuthRecord(t.Context(), "docs")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestLoginCallRefreshRevoke: a person logs in once; calls work and
// refresh (rotating the refresh token, which is stored at once); after
// the authorization server revokes the grant, the server shows "needs
// login" and calls fail at once with that reason; no token or code ever
// reaches the log.
func TestLoginCallRefreshRevoke(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	ctx := t.Context()
	defer func() {
		if t.Failed() {
			t.Logf("log:\n%s", e.logs.String())
		}
	}()

	if _, err := e.svc.Import(ctx, mcp.ImportParams{Server: "docs"}); mcp.KindOf(err) != mcp.KindNeedsLogin {
		t.Fatalf("import before login: %v (kind %q), want needs_login", err, mcp.KindOf(err))
	}
	st, err := e.login(ctx, e.person(t))
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != mcpauth.StatusConnected || st.Issuer != e.ts.URL || !st.Refreshable {
		t.Fatalf("after login: %+v", st)
	}
	afterLogin := e.record(t).SealedToken
	if _, err := e.svc.Import(ctx, mcp.ImportParams{Server: "docs"}); err != nil {
		t.Fatal(err)
	}
	res, err := e.call(ctx, "hello")
	if err != nil || res.IsError || !strings.Contains(res.Content, "echo: hello") {
		t.Fatalf("call: %+v, %v", res, err)
	}
	if e.record(t).SealedToken == afterLogin {
		t.Error("the refreshed grant was not stored")
	}
	if !strings.Contains(e.logs.String(), "MCP OAuth token refreshed") {
		t.Error("no refresh was logged")
	}
	// A second call still works with the rotated refresh token.
	if res, err := e.call(ctx, "again"); err != nil || res.IsError {
		t.Fatalf("second call: %+v, %v", res, err)
	}

	grants, err := e.asSt.OAuthGrants(ctx, store.ListOAuthGrantsParams{Username: "editor"})
	if err != nil || len(grants) != 1 {
		t.Fatalf("grants at the authorization server: %v, %v", grants, err)
	}
	if err := e.asSt.RevokeOAuthGrant(ctx, grants[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.call(ctx, "revoked"); mcp.KindOf(err) != mcp.KindNeedsLogin {
		t.Fatalf("call after the revocation: %v (kind %q), want needs_login", err, mcp.KindOf(err))
	}
	if st, err := e.mgr.Status(ctx, "docs"); err != nil || st.Status != mcpauth.StatusNeedsLogin || st.Reason == "" {
		t.Fatalf("status after the revocation: %+v, %v", st, err)
	}
	// Now calls fail at once, without asking the server.
	before := len(e.tokens.all())
	if _, err := e.call(ctx, "still"); mcp.KindOf(err) != mcp.KindNeedsLogin || !strings.Contains(err.Error(), "t3agent mcp login docs") {
		t.Fatalf("call while needing login: %v", err)
	}
	if len(e.tokens.all()) != before {
		t.Error("a call while needing login went to the token endpoint")
	}
	// Logging in again mends it.
	if st, err := e.login(ctx, e.person(t)); err != nil || st.Status != mcpauth.StatusConnected {
		t.Fatalf("second login: %+v, %v", st, err)
	}
	if res, err := e.call(ctx, "back"); err != nil || res.IsError {
		t.Fatalf("call after the second login: %+v, %v", res, err)
	}

	secrets := e.tokens.all()
	if len(secrets) < 6 {
		t.Fatalf("only %d tokens and codes were seen", len(secrets))
	}
	logs := e.logs.String()
	for _, s := range secrets {
		if strings.Contains(logs, s) {
			t.Errorf("a token or code reached the log: %.12s…", s)
		}
	}
}

// TestWrongIssuerRefused: an authorization response naming another
// issuer (RFC 9207, a mix-up attack) is refused and no grant is stored;
// a grant moved to another issuer does not open.
func TestWrongIssuerRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	ctx := t.Context()
	person := e.person(t)
	mixUp := func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		res, err := person(ctx, args)
		if err == nil {
			res.Iss = "https://attacker.example"
		}
		return res, err
	}
	if _, err := e.login(ctx, mixUp); err == nil {
		t.Fatal("a login with the wrong issuer succeeded")
	}
	if r := e.record(t); r.SealedToken != "" || r.Status != mcpauth.StatusNeedsLogin {
		t.Fatalf("after the refused login: status %s, token stored %v", r.Status, r.SealedToken != "")
	}
	missing := func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		res, err := person(ctx, args)
		if err == nil {
			res.Iss = ""
		}
		return res, err
	}
	if _, err := e.login(ctx, missing); err == nil {
		t.Fatal("a login without iss succeeded though the server advertises it")
	}

	if _, err := e.login(ctx, person); err != nil {
		t.Fatal(err)
	}
	r := e.record(t)
	if _, err := e.st.SetMCPOAuthGrant(ctx, store.SetMCPOAuthGrantParams{Server: "docs", Issuer: "https://attacker.example", SealedToken: r.SealedToken, Status: store.MCPOAuthConnected}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Import(ctx, mcp.ImportParams{Server: "docs"}); mcp.KindOf(err) != mcp.KindCredential {
		t.Fatalf("a grant bound to another issuer: %v (kind %q), want credential", err, mcp.KindOf(err))
	}
}

// TestStepUpNeedsLogin: a 403 insufficient_scope makes the server need a
// login for the union of the scopes, and the call says so.
func TestStepUpNeedsLogin(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{stepUp: "admin"})
	ctx := t.Context()
	if _, err := e.login(ctx, e.person(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Import(ctx, mcp.ImportParams{Server: "docs"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.call(ctx, "x"); mcp.KindOf(err) != mcp.KindNeedsLogin {
		t.Fatalf("call needing more scope: %v (kind %q)", err, mcp.KindOf(err))
	}
	st, err := e.mgr.Status(ctx, "docs")
	if err != nil || st.Status != mcpauth.StatusNeedsLogin || !strings.Contains(st.Reason, "admin") {
		t.Fatalf("status: %+v, %v", st, err)
	}
	if got := strings.Join(st.Scopes, " "); !strings.Contains(got, "mcp") || !strings.Contains(got, "admin") {
		t.Errorf("the next login asks for %q, want the union with admin", got)
	}
}
