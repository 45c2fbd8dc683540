package demowrite

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/t3agent/t3agent/internal/oauth"
)

// LoginParams configure Login.
type LoginParams struct {
	// URL is the write server's base URL (Server.URL); required.
	URL string
	// Username and Password are a backend login of the demo site.
	Username, Password string
	// Resource is the resource indicator; URL+"/mcp" by default.
	Resource string
	// ClientName is how the grant is listed; "t3agent demo" by default.
	ClientName string
	// HTTPClient reaches the server; it must not follow redirects itself
	// (each step is checked). Nil means such a client.
	HTTPClient *http.Client
}

// Token is what Login obtains.
type Token struct {
	// ClientID is the client Login registered.
	ClientID  string
	Access    string
	Refresh   string
	ExpiresAt time.Time
}

// loginStep bounds each request of Login.
const loginStep = 30 * time.Second

var consentSecret = regexp.MustCompile(`name="secret" value="([A-Za-z0-9_-]+)"`)

// Login obtains an access token for the write server's /mcp through its
// authorization server, the way an MCP host and a person's browser do it:
// dynamic client registration (RFC 7591), the authorization code flow
// with PKCE S256 and the resource indicator (RFC 8707), the consent page
// as Username, the iss check (RFC 9207) and the code exchange. The demo
// uses it for its own server, whose admin password it knows.
func Login(ctx context.Context, p LoginParams) (Token, error) {
	hc := p.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: loginStep, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if p.ClientName == "" {
		p.ClientName = "t3agent demo"
	}
	base := strings.TrimSuffix(p.URL, "/")
	// Never followed: Login reads the code from the redirect itself. Off
	// the server's own origin, so the authorization server adds iss.
	redirect := "http://127.0.0.1/t3agent-demo/callback"
	resource := p.Resource
	if resource == "" {
		resource = base + "/mcp"
	}
	fail := func(step string, err error) (Token, error) {
		return Token{}, fmt.Errorf("the demo's login to its write server failed at %s: %w", step, err)
	}

	reg, _ := json.Marshal(map[string]any{"client_name": p.ClientName, "redirect_uris": []string{redirect},
		"grant_types": []string{"authorization_code", "refresh_token"}, "token_endpoint_auth_method": "none"})
	var client struct {
		ClientID string `json:"client_id"`
	}
	resp, err := send(ctx, hc, http.MethodPost, base+"/oauth/register", "application/json", string(reg))
	if err == nil {
		err = decode(resp, http.StatusCreated, &client)
	}
	if err != nil {
		return fail("client registration", err)
	}

	verifier := randomString(48)
	sum := sha256.Sum256([]byte(verifier))
	state := randomString(16)
	q := url.Values{
		"response_type": {"code"}, "client_id": {client.ClientID}, "redirect_uri": {redirect}, "state": {state},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
		"resource": {resource}, "scope": {oauth.ScopeMCP},
	}
	resp, err = send(ctx, hc, http.MethodGet, base+"/authorize?"+q.Encode(), "", "")
	if err != nil {
		return fail("authorization", err)
	}
	consent, err := location(resp, http.StatusFound)
	if err != nil {
		return fail("authorization", err)
	}
	id := consent.Query().Get("id")
	resp, err = send(ctx, hc, http.MethodPost, base+"/oauth/consent", formType,
		url.Values{"id": {id}, "action": {"login"}, "username": {p.Username}, "password": {p.Password}}.Encode())
	if err != nil {
		return fail("the consent login", err)
	}
	page, err := readBody(resp, http.StatusOK)
	m := consentSecret.FindStringSubmatch(page)
	if err == nil && m == nil {
		err = errors.New("the consent page did not accept the login")
	}
	if err != nil {
		return fail("the consent login", err)
	}
	resp, err = send(ctx, hc, http.MethodPost, base+"/oauth/consent", formType, url.Values{"id": {id}, "action": {"allow"}, "secret": {m[1]}}.Encode())
	if err != nil {
		return fail("the consent", err)
	}
	cb, err := location(resp, http.StatusSeeOther)
	if err != nil {
		return fail("the consent", err)
	}
	resp, err = send(ctx, hc, http.MethodGet, base+cb.RequestURI(), "", "")
	if err != nil {
		return fail("the authorization response", err)
	}
	back, err := location(resp, http.StatusFound)
	if err != nil {
		return fail("the authorization response", err)
	}
	bq := back.Query()
	switch {
	case back.Scheme+"://"+back.Host+back.Path != redirect:
		return fail("the authorization response", errors.New("it went to another redirect URI"))
	case bq.Get("state") != state:
		return fail("the authorization response", errors.New("its state does not match"))
	case bq.Get("iss") != base:
		return fail("the authorization response", fmt.Errorf("its issuer %q is not %s", bq.Get("iss"), base))
	case bq.Get("code") == "":
		return fail("the authorization response", fmt.Errorf("it carries no code (%s)", bq.Get("error")))
	}

	resp, err = send(ctx, hc, http.MethodPost, base+"/oauth/token", formType, url.Values{
		"grant_type": {"authorization_code"}, "code": {bq.Get("code")}, "redirect_uri": {redirect},
		"code_verifier": {verifier}, "resource": {resource}, "client_id": {client.ClientID},
	}.Encode())
	var tok struct {
		Access    string `json:"access_token"`
		Refresh   string `json:"refresh_token"`
		ExpiresIn int64  `json:"expires_in"`
	}
	if err == nil {
		err = decode(resp, http.StatusOK, &tok)
	}
	if err == nil && tok.Access == "" {
		err = errors.New("the answer carries no access token")
	}
	if err != nil {
		return fail("the code exchange", err)
	}
	return Token{ClientID: client.ClientID, Access: tok.Access, Refresh: tok.Refresh, ExpiresAt: time.Now().Add(time.Duration(tok.ExpiresIn) * time.Second)}, nil
}

const formType = "application/x-www-form-urlencoded"

func send(ctx context.Context, hc *http.Client, method, target, contentType, body string) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(ctx, loginStep)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	// The body is read here, within the step's deadline.
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(strings.NewReader(string(b)))
	return resp, nil
}

func readBody(resp *http.Response, want int) (string, error) {
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		return "", fmt.Errorf("status %d", resp.StatusCode)
	}
	return string(b), nil
}

func decode(resp *http.Response, want int, v any) error {
	b, err := readBody(resp, want)
	if err != nil {
		return err
	}
	return json.Unmarshal([]byte(b), v)
}

func location(resp *http.Response, want int) (*url.URL, error) {
	if resp.StatusCode != want {
		return nil, fmt.Errorf("status %d instead of a redirect", resp.StatusCode)
	}
	return url.Parse(resp.Header.Get("Location"))
}

func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)[:n]
}
