package mcpserver_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/t3agent/t3agent/internal/chat/chattest"
	"github.com/t3agent/t3agent/internal/oauth"
	"github.com/t3agent/t3agent/internal/store"
)

const redirectURI = "http://127.0.0.1:33418/callback"

// browser follows no redirect by itself, so each step can be checked.
var browser = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

var secretField = regexp.MustCompile(`name="secret" value="([^"]+)"`)

// consent drives a person's browser from an authorization URL through
// the consent page as user (with the demo password) and allows; it
// returns the query of the redirect to the host.
func (e *env) consent(t *testing.T, authURL, user string) url.Values {
	t.Helper()
	resp := e.browse(t, http.MethodGet, authURL, nil)
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc, "/oauth/consent?id=") {
		t.Fatalf("authorize: %d to %q: %s", resp.StatusCode, loc, body(resp))
	}
	u, _ := url.Parse(loc)
	id := u.Query().Get("id")
	page := e.browse(t, http.MethodGet, e.ts.URL+loc, nil)
	if csp := page.Header.Get("Content-Security-Policy"); page.StatusCode != http.StatusOK || !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") {
		t.Fatalf("consent page: %d, CSP %q", page.StatusCode, csp)
	}
	page = e.browse(t, http.MethodPost, e.ts.URL+"/oauth/consent", url.Values{"id": {id}, "action": {"login"}, "username": {user}, "password": {e.f.Demo.Password(t, user)}})
	html := body(page)
	m := secretField.FindStringSubmatch(html)
	if page.StatusCode != http.StatusOK || m == nil || !strings.Contains(html, chattest.ReadTool) {
		t.Fatalf("login: %d: %s", page.StatusCode, html)
	}
	resp = e.browse(t, http.MethodPost, e.ts.URL+"/oauth/consent", url.Values{"id": {id}, "action": {"allow"}, "secret": {m[1]}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("allow: %d: %s", resp.StatusCode, body(resp))
	}
	resp = e.browse(t, http.MethodGet, e.ts.URL+resp.Header.Get("Location"), nil)
	back, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || err != nil || back.Scheme+"://"+back.Host+back.Path != redirectURI {
		t.Fatalf("callback: %d to %q: %s", resp.StatusCode, resp.Header.Get("Location"), body(resp))
	}
	return back.Query()
}

func (e *env) browse(t *testing.T, method, target string, form url.Values) *http.Response {
	t.Helper()
	var rd io.Reader
	if form != nil {
		rd = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, target, rd)
	if err != nil {
		t.Fatal(err)
	}
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

func body(resp *http.Response) string {
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestOAuthWithTheSDKClient: the Go SDK's own OAuth client finds
// t3agent's authorization server from the 401 challenge, registers
// dynamically, runs the code flow with PKCE through the consent page,
// checks iss (RFC 9207), and then lists and calls as the person who
// allowed it; the grant is listed for that person.
func TestOAuthWithTheSDKClient(t *testing.T) {
	t.Parallel()
	e := setup(t, envOptions{})
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName: "Claude Code", RedirectURIs: []string{redirectURI}, GrantTypes: []string{"authorization_code", "refresh_token"},
			TokenEndpointAuthMethod: "none",
		}},
		RedirectURL: redirectURI, RequestRefreshToken: true,
		AuthorizationCodeFetcher: func(_ context.Context, a *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			q := e.consent(t, a.URL, "editor")
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{modern, older} {
		c := mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
			Endpoint: e.ts.URL + "/mcp/" + chattest.Configuration, OAuthHandler: h, DisableStandaloneSSE: true,
		}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("%s: connect with OAuth: %v", version, err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		if got := toolNames(t, cs); !slices.Contains(got, chattest.ReadTool) {
			t.Errorf("%s: tools = %v", version, got)
		}
		if res := call(t, cs, chattest.ReadTool, map[string]any{"title": "Aqua"}); res.IsError || text(res) != "note Aqua: pumps are blue" {
			t.Errorf("%s: read = %q", version, text(res))
		}
	}
	grants, err := e.f.Store.OAuthGrants(context.Background(), store.ListOAuthGrantsParams{Username: "editor"})
	if err != nil || len(grants) != 1 || grants[0].ClientName != "Claude Code" || grants[0].Resource != e.ts.URL+"/mcp/"+chattest.Configuration {
		t.Errorf("grants = %+v, %v", grants, err)
	}
	calls, _ := e.f.Store.MCPCalls(context.Background(), store.ListMCPCallsParams{ActorUsername: "editor"})
	if len(calls) == 0 || calls[0].Client != "Claude Code" || !strings.HasPrefix(calls[0].Credential, "grant:") {
		t.Errorf("records = %+v", calls)
	}
}

// flow is a host's raw OAuth flow, step by step.
type flow struct {
	e        *env
	clientID string
	verifier string
	resource string
}

func (e *env) register(t *testing.T, name string) string {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"client_name": name, "redirect_uris": []string{redirectURI}, "token_endpoint_auth_method": "none"})
	resp, err := http.Post(e.ts.URL+"/oauth/register", "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		ClientID string `json:"client_id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusCreated || out.ClientID == "" {
		t.Fatalf("register: %d, %+v, %v", resp.StatusCode, out, err)
	}
	return out.ClientID
}

func (e *env) newFlow(t *testing.T, resourcePath string) *flow {
	return &flow{e: e, clientID: e.register(t, "Cursor"), verifier: randomString() + randomString(), resource: e.ts.URL + resourcePath}
}

func (f *flow) authURL(mut func(url.Values)) string {
	sum := sha256.Sum256([]byte(f.verifier))
	q := url.Values{
		"response_type": {"code"}, "client_id": {f.clientID}, "redirect_uri": {redirectURI}, "state": {"s1"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
		"resource": {f.resource}, "scope": {"mcp"},
	}
	if mut != nil {
		mut(q)
	}
	return f.e.ts.URL + "/authorize?" + q.Encode()
}

// code runs the consent as user and returns the code.
func (f *flow) code(t *testing.T, user string) string {
	t.Helper()
	q := f.e.consent(t, f.authURL(nil), user)
	if q.Get("state") != "s1" || q.Get("iss") != f.e.ts.URL || q.Get("code") == "" {
		t.Fatalf("authorization response = %v", q)
	}
	return q.Get("code")
}

type tokens struct {
	Access  string `json:"access_token"`
	Refresh string `json:"refresh_token"`
	Error   string `json:"error"`
	Status  int    `json:"-"`
}

func (f *flow) token(t *testing.T, form url.Values) tokens {
	t.Helper()
	form.Set("client_id", f.clientID)
	resp, err := http.PostForm(f.e.ts.URL+"/oauth/token", form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out tokens
	_ = json.NewDecoder(resp.Body).Decode(&out)
	out.Status = resp.StatusCode
	return out
}

func (f *flow) exchange(t *testing.T, code string) tokens {
	return f.token(t, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirectURI}, "code_verifier": {f.verifier}, "resource": {f.resource}})
}

// works reports whether an access token lists tools at path.
func (e *env) works(t *testing.T, path, token string) bool {
	t.Helper()
	cs, err := e.tryConnect(path, token, modern, nil)
	if err != nil {
		return false
	}
	_, err = cs.ListTools(context.Background(), nil)
	return err == nil
}

// TestOAuthTokens: a code is redeemed once for a short-lived access token
// bound to its resource and a rotating refresh token; a replayed refresh
// token is refused and revokes the grant; revocation works for both
// kinds; an expired code is refused.
func TestOAuthTokens(t *testing.T) {
	t.Parallel()
	for _, pg := range []bool{false, true} {
		t.Run(map[bool]string{false: "sqlite", true: "postgres"}[pg], func(t *testing.T) {
			t.Parallel()
			e := setup(t, envOptions{postgres: pg})
			path := "/mcp/" + chattest.Configuration
			f := e.newFlow(t, path)
			code := f.code(t, "editor")
			t1 := f.exchange(t, code)
			if t1.Status != http.StatusOK || !oauth.IsAccessToken(t1.Access) || t1.Refresh == "" {
				t.Fatalf("exchange = %+v", t1)
			}
			if again := f.exchange(t, code); again.Status != http.StatusBadRequest || again.Error != "invalid_grant" {
				t.Errorf("a code redeemed twice: %+v", again)
			}
			if !e.works(t, path, t1.Access) {
				t.Fatal("the access token does not work at its resource")
			}
			if e.works(t, "/mcp", t1.Access) || e.works(t, "/mcp/"+notesConfig, t1.Access) {
				t.Error("the access token works at another resource")
			}
			// Rotation: the new pair works, the old refresh token is refused,
			// and its replay revokes the grant.
			t2 := f.token(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {t1.Refresh}})
			if t2.Status != http.StatusOK || t2.Refresh == "" || t2.Refresh == t1.Refresh || !e.works(t, path, t2.Access) {
				t.Fatalf("refresh = %+v", t2)
			}
			if old := f.token(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {t1.Refresh}}); old.Status != http.StatusBadRequest || old.Error != "invalid_grant" {
				t.Errorf("the rotated refresh token = %+v", old)
			}
			if e.works(t, path, t2.Access) {
				t.Error("the grant of a replayed refresh token still works")
			}

			// Revocation (RFC 7009) of an access token, then of a refresh token.
			f = e.newFlow(t, path)
			t3 := f.exchange(t, f.code(t, "editor"))
			revoke := func(tok string) {
				resp, err := http.PostForm(e.ts.URL+"/oauth/revoke", url.Values{"token": {tok}, "client_id": {f.clientID}})
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Errorf("revoke: %d", resp.StatusCode)
				}
			}
			revoke(t3.Access)
			if e.works(t, path, t3.Access) {
				t.Error("a revoked access token works")
			}
			revoke(t3.Refresh)
			if r := f.token(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {t3.Refresh}}); r.Status != http.StatusBadRequest {
				t.Errorf("a revoked refresh token = %+v", r)
			}

			// A short-lived access token, and a code that expired.
			f = e.newFlow(t, path)
			t4 := f.exchange(t, f.code(t, "editor"))
			code = f.code(t, "editor")
			e.f.Clock.Advance(oauth.DefaultAccessTTL + time.Second)
			if e.works(t, path, t4.Access) {
				t.Error("an expired access token works")
			}
			if x := f.exchange(t, code); x.Status != http.StatusBadRequest || x.Error != "invalid_grant" {
				t.Errorf("an expired code = %+v", x)
			}
		})
	}
}

// TestOAuthRefusals: the authorization server refuses what OAuth 2.1 and
// t3agent's rules refuse.
func TestOAuthRefusals(t *testing.T) {
	t.Parallel()
	e := setup(t, envOptions{})
	path := "/mcp/" + chattest.Configuration
	f := e.newFlow(t, path)

	for name, mut := range map[string]func(url.Values){
		"plain PKCE": func(q url.Values) { q.Set("code_challenge_method", "plain"); q.Set("code_challenge", f.verifier) },
		"no PKCE":    func(q url.Values) { q.Del("code_challenge"); q.Del("code_challenge_method") },
	} {
		resp := e.browse(t, http.MethodGet, f.authURL(mut), nil)
		back, _ := url.Parse(resp.Header.Get("Location"))
		if resp.StatusCode != http.StatusFound || back == nil || back.Query().Get("error") != "invalid_request" || back.Query().Get("iss") != e.ts.URL {
			t.Errorf("%s: %d to %q", name, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	resp := e.browse(t, http.MethodGet, f.authURL(func(q url.Values) { q.Set("redirect_uri", "http://127.0.0.1:33418/elsewhere") }), nil)
	if loc := resp.Header.Get("Location"); strings.Contains(loc, "elsewhere") || strings.Contains(loc, "/oauth/consent") {
		t.Errorf("a redirect URI that was not registered: %d to %q", resp.StatusCode, loc)
	}
	for _, res := range []string{"https://elsewhere.example/mcp", e.ts.URL + "/api/v1/runs"} {
		if resp := e.browse(t, http.MethodGet, f.authURL(func(q url.Values) { q.Set("resource", res) }), nil); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("resource %s: %d", res, resp.StatusCode)
		}
	}
	// A token request naming another resource than the grant's.
	if x := f.token(t, url.Values{"grant_type": {"authorization_code"}, "code": {f.code(t, "editor")}, "redirect_uri": {redirectURI},
		"code_verifier": {f.verifier}, "resource": {e.ts.URL + "/mcp"}}); x.Status != http.StatusBadRequest || x.Error != "invalid_target" {
		t.Errorf("another resource at the token endpoint = %+v", x)
	}
	// A wrong verifier.
	if x := f.token(t, url.Values{"grant_type": {"authorization_code"}, "code": {f.code(t, "editor")}, "redirect_uri": {redirectURI},
		"code_verifier": {strings.Repeat("a", 50)}}); x.Status != http.StatusBadRequest {
		t.Errorf("a wrong code verifier = %+v", x)
	}
	// Registration refuses what a public client may not be.
	for _, doc := range []string{
		`{"redirect_uris":["http://evil.example/cb"]}`,
		`{"redirect_uris":["javascript:alert(1)"]}`,
		`{"redirect_uris":["https://a.example/cb"],"token_endpoint_auth_method":"client_secret_basic"}`,
		`{"redirect_uris":[]}`,
		`not json`,
	} {
		resp, err := http.Post(e.ts.URL+"/oauth/register", "application/json", strings.NewReader(doc))
		if err != nil {
			t.Fatal(err)
		}
		b := body(resp)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(b, `"error":"invalid_`) {
			t.Errorf("register %s: %d %s", doc, resp.StatusCode, b)
		}
	}
	// A wrong password, then the login limit the API applies.
	resp = e.browse(t, http.MethodGet, f.authURL(nil), nil)
	cu, _ := url.Parse(resp.Header.Get("Location"))
	id := cu.Query().Get("id")
	if id == "" {
		t.Fatalf("authorize: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	codes := []int{}
	for range 6 {
		page := e.browse(t, http.MethodPost, e.ts.URL+"/oauth/consent", url.Values{"id": {id}, "action": {"login"}, "username": {"editor"}, "password": {"wrong"}})
		codes = append(codes, page.StatusCode)
	}
	if !slices.Equal(codes, []int{401, 401, 401, 401, 401, 429}) {
		t.Errorf("wrong passwords answered %v", codes)
	}
	// Allowing without the login's secret is refused.
	if page := e.browse(t, http.MethodPost, e.ts.URL+"/oauth/consent", url.Values{"id": {id}, "action": {"allow"}, "secret": {"guess"}}); page.StatusCode != http.StatusForbidden {
		t.Errorf("allow without the secret: %d", page.StatusCode)
	}
}

// TestOAuthDisabledUser: the tokens of a TYPO3 user who is disabled stop
// working at once.
func TestOAuthDisabledUser(t *testing.T) {
	t.Parallel()
	e := setup(t, envOptions{})
	path := "/mcp/" + chattest.Configuration
	f := e.newFlow(t, path)
	tok := f.exchange(t, f.code(t, "intern"))
	if !e.works(t, path, tok.Access) {
		t.Fatal("the intern's token does not work")
	}
	db, err := sql.Open("sqlite", strings.TrimPrefix(e.f.Demo.DSN, "sqlite:"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE be_users SET disable = 1 WHERE username = 'intern'`); err != nil {
		t.Fatal(err)
	}
	if e.works(t, path, tok.Access) {
		t.Error("a disabled user's token works")
	}
}

// TestOAuthClientMetadataDocument: a client whose id is the https URL of
// its metadata document is known by fetching it; one that names another
// client_id is refused.
func TestOAuthClientMetadataDocument(t *testing.T) {
	t.Parallel()
	doc := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		self := "https://" + r.Host + r.URL.Path
		if r.URL.Path == "/liar.json" {
			self = "https://" + r.Host + "/other.json"
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"client_id": self, "client_name": "VS Code", "redirect_uris": []string{redirectURI}})
	}))
	t.Cleanup(doc.Close)
	e := setup(t, envOptions{oauth: func(p *oauth.Params) { p.HTTPClient = doc.Client() }})
	f := &flow{e: e, clientID: doc.URL + "/client.json", verifier: randomString() + randomString(), resource: e.ts.URL + "/mcp"}
	tok := f.exchange(t, f.code(t, "editor"))
	if !e.works(t, "/mcp", tok.Access) {
		t.Fatalf("the metadata document client's token does not work: %+v", tok)
	}
	liar := &flow{e: e, clientID: doc.URL + "/liar.json", verifier: f.verifier, resource: f.resource}
	if resp := e.browse(t, http.MethodGet, liar.authURL(nil), nil); resp.StatusCode == http.StatusFound && strings.HasPrefix(resp.Header.Get("Location"), "/oauth/consent") {
		t.Error("a metadata document naming another client was accepted")
	}
	// Without the test's client, the document's loopback address is not
	// fetched at all (SSRF).
	e2 := setup(t, envOptions{})
	f2 := &flow{e: e2, clientID: doc.URL + "/client.json", verifier: f.verifier, resource: e2.ts.URL + "/mcp"}
	if resp := e2.browse(t, http.MethodGet, f2.authURL(nil), nil); resp.StatusCode == http.StatusFound && strings.HasPrefix(resp.Header.Get("Location"), "/oauth/consent") {
		t.Error("a metadata document on a loopback address was fetched")
	}
}

// TestAuthorizationServerMetadata: RFC 8414 metadata says what the
// server does: S256 only, public clients, iss in the response, both
// registration methods.
func TestAuthorizationServerMetadata(t *testing.T) {
	t.Parallel()
	e := setup(t, envOptions{})
	meta, err := oauthex.GetAuthServerMeta(context.Background(), e.ts.URL+"/.well-known/oauth-authorization-server", e.ts.URL, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Issuer != e.ts.URL || !slices.Equal(meta.CodeChallengeMethodsSupported, []string{"S256"}) || !meta.AuthorizationResponseIssParameterSupported ||
		!meta.ClientIDMetadataDocumentSupported || meta.RegistrationEndpoint == "" || !slices.Equal(meta.TokenEndpointAuthMethodsSupported, []string{"none"}) {
		t.Errorf("metadata = %+v", meta)
	}
}
