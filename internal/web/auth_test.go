package web

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/t3agent/t3agent/internal/chat/chattest"
	"github.com/t3agent/t3agent/internal/dbtest"
	"github.com/t3agent/t3agent/internal/store"
)

// TestAuthMatrix: who may reach which route with which credentials, and
// what each refusal answers. Sessions need the CSRF token on unsafe
// methods; tokens need the route's scope and never reach the chat; a
// token's user is loaded afresh, so a disabled user's token is refused.
func TestAuthMatrix(t *testing.T) {
	t.Parallel()
	e := setup(t, envOptions{})
	ctx := context.Background()
	anon := e.anonymous()
	editor := e.login("editor")
	noCSRF := *editor
	noCSRF.csrf = ""
	wrongCSRF := *editor
	wrongCSRF.csrf = "not-the-token"
	reader := e.token("reader", "editor", store.ScopeAgentRead)
	approver := e.token("approver", "editor", store.ScopeAgentApprove)
	canceller := e.token("canceller", "editor", store.ScopeAgentCancel)
	root := e.token("root", "admin", store.ScopeAdmin)
	former := e.token("former", "former", store.ScopeAgentRead)
	revoked := e.token("revoked", "editor", store.ScopeAgentRead)
	if err := e.f.Store.RevokeServiceToken(ctx, "revoked"); err != nil {
		t.Fatal(err)
	}
	expired := e.anonymous()
	expired.bearer = "t3a_expired-secret"
	if _, err := e.f.Store.CreateServiceToken(ctx, store.CreateServiceTokenParams{Name: "expired", Username: "editor",
		Scopes: []store.Scope{store.ScopeAgentRead}, SecretHash: HashSecret(expired.bearer), CreatedBy: "admin",
		ExpiresAt: chattest.Start.Add(-time.Minute)}); err != nil {
		t.Fatal(err)
	}
	unknown := e.anonymous()
	unknown.bearer = "t3a_nobody-knows-this"
	forged := e.anonymous()
	u, _ := http.NewRequest("GET", e.ts.URL, nil)
	forged.hc.Jar.SetCookies(u.URL, []*http.Cookie{{Name: SessionCookie, Value: "forged-session-secret"}})
	// A session cookie and a bearer token: the token decides.
	both := *editor
	both.bearer = reader.bearer

	check(t, []call{
		{"no credentials", anon, "GET", "/api/v1/me", nil, nil, 401, []string{errBody("unauthorized"), `"message":"Log in first."`}, nil},
		{"no credentials on the chat", anon, "GET", "/api/v1/chat/conversations", nil, nil, 401, []string{errBody("unauthorized")}, nil},
		{"no credentials on a decision", anon, "POST", "/api/v1/runs/r-1/approve", map[string]string{"digest": "d"}, nil, 401, []string{errBody("unauthorized")}, nil},
		{"no credentials on the tools", anon, "GET", "/api/v1/tools", nil, nil, 401, []string{errBody("unauthorized")}, nil},
		{"no credentials on logout", anon, "POST", "/api/v1/logout", nil, nil, 401, []string{errBody("unauthorized")}, nil},
		{"session", editor, "GET", "/api/v1/me", nil, nil, 200, []string{`"auth":"session"`, `"username":"editor"`, `"csrfToken":"` + editor.csrf}, nil},
		{"token", reader, "GET", "/api/v1/me", nil, nil, 200, []string{`"auth":"token"`, `"token":"reader"`, `"scopes":["agent:read"]`}, []string{"csrfToken"}},
		{"token and cookie", &both, "GET", "/api/v1/me", nil, nil, 200, []string{`"auth":"token"`}, nil},
		{"malformed header", anon, "GET", "/api/v1/me", nil, []string{"Authorization", "Basic ZWRpdG9yOng="}, 401, []string{errBody("invalidToken")}, nil},
		{"unknown token", unknown, "GET", "/api/v1/me", nil, nil, 401, []string{errBody("invalidToken")}, nil},
		{"revoked token", revoked, "GET", "/api/v1/runs", nil, nil, 401, []string{errBody("invalidToken")}, nil},
		{"expired token", expired, "GET", "/api/v1/runs", nil, nil, 401, []string{errBody("invalidToken")}, nil},
		{"token of a disabled user", former, "GET", "/api/v1/runs", nil, nil, 401, []string{errBody("invalidToken")}, nil},
		{"forged cookie", forged, "GET", "/api/v1/me", nil, nil, 401, []string{errBody("unauthorized")}, nil},

		{"unsafe without CSRF", &noCSRF, "POST", "/api/v1/chat/conversations", nil, nil, 403, []string{errBody("csrfFailed")}, nil},
		{"unsafe with a wrong CSRF", &wrongCSRF, "POST", "/api/v1/chat/conversations", nil, nil, 403, []string{errBody("csrfFailed")}, nil},
		{"unsafe with CSRF", editor, "POST", "/api/v1/chat/conversations", nil, nil, 201, []string{`"status":"idle"`}, nil},
		{"safe without CSRF", &noCSRF, "GET", "/api/v1/chat/conversations", nil, nil, 200, []string{`"conversations":[{`}, nil},
		{"run cancel without CSRF", &noCSRF, "POST", "/api/v1/runs/r-1/cancel", nil, nil, 403, []string{errBody("csrfFailed")}, nil},

		{"token on the chat", root, "GET", "/api/v1/chat/conversations", nil, nil, 403, []string{errBody("sessionRequired")}, nil},
		{"token on logout", reader, "POST", "/api/v1/logout", nil, nil, 403, []string{errBody("sessionRequired")}, nil},
		{"read token reads runs", reader, "GET", "/api/v1/runs", nil, nil, 200, []string{`"runs":[]`}, nil},
		{"read token reads tools", reader, "GET", "/api/v1/tools", nil, nil, 200, []string{`"tools":[`}, nil},
		{"read token may not cancel", reader, "POST", "/api/v1/runs/r-1/cancel", nil, nil, 403, []string{errBody("insufficientScope"), `"message":"The access token does not allow this."`}, nil},
		{"read token may not approve", reader, "POST", "/api/v1/runs/r-1/approve", map[string]string{"digest": "d"}, nil, 403, []string{errBody("insufficientScope")}, nil},
		{"approve token may not list runs", approver, "GET", "/api/v1/runs", nil, nil, 403, []string{errBody("insufficientScope")}, nil},
		{"approve token reads the inbox", approver, "GET", "/api/v1/inbox", nil, nil, 200, []string{`"items":[]`}, nil},
		{"cancel token may not read tools", canceller, "GET", "/api/v1/tools", nil, nil, 403, []string{errBody("insufficientScope")}, nil},
		// Tokens need no CSRF token: no browser sends them by itself.
		{"cancel token cancels", canceller, "POST", "/api/v1/runs/r-1/cancel", nil, nil, 404, []string{errBody("runNotFound")}, nil},
		{"admin scope implies all", root, "GET", "/api/v1/inbox", nil, nil, 200, nil, nil},

		{"logout without CSRF", &noCSRF, "POST", "/api/v1/logout", nil, nil, 403, []string{errBody("csrfFailed")}, nil},
		{"logout", editor, "POST", "/api/v1/logout", nil, nil, 204, nil, nil},
		{"after logout", editor, "GET", "/api/v1/me", nil, nil, 401, []string{errBody("unauthorized")}, nil},
		{"public labels", anon, "GET", "/api/v1/labels", nil, nil, 200, []string{`"lang":"en"`}, nil},
		{"public document", anon, "GET", "/api/v1/openapi.json", nil, nil, 200, []string{`"openapi": "3.1.0"`}, nil},
	})

	// The token's use is recorded, with the injected clock.
	tok, err := e.f.Store.ServiceTokenByHash(ctx, HashSecret(reader.bearer))
	if err != nil || !tok.LastUsedAt.Equal(chattest.Start) {
		t.Errorf("reader's last use = %v, %v; want %v", tok.LastUsedAt, err, chattest.Start)
	}
	// A refused bearer leaks nothing of why into the body.
	res := former.do("GET", "/api/v1/runs", nil)
	if strings.Contains(res.body, "former") || strings.Contains(res.body, "cannot act") {
		t.Errorf("refusal leaks the cause: %s", res.body)
	}
}

// TestLogin: the answers of a login, the cookie's attributes, and that
// failures never say whether the user exists.
func TestLogin(t *testing.T) {
	t.Parallel()
	e := setup(t, envOptions{})
	anon := e.anonymous()
	pw := e.f.Demo.Password(t, "editor")
	login := func(user, pass string) map[string]string {
		return map[string]string{"username": user, "password": pass}
	}
	check(t, []call{
		{"missing password", anon, "POST", "/api/v1/login", map[string]string{"username": "editor"}, nil, 400, []string{errBody("badRequest"), "Give a username and a password."}, nil},
		{"not JSON", anon, "POST", "/api/v1/login", `{"username":`, nil, 400, []string{errBody("badRequest"), "not valid JSON"}, nil},
		{"unknown field", anon, "POST", "/api/v1/login", `{"username":"editor","password":"x","remember":true}`, nil, 400, []string{`unknown field \"remember\"`}, nil},
		{"wrong type", anon, "POST", "/api/v1/login", `{"username":"editor","password":5}`, nil, 400, []string{`The field \"password\" has the wrong type.`}, nil},
		{"a form post", anon, "POST", "/api/v1/login", "username=editor&password=x", []string{"Content-Type", "application/x-www-form-urlencoded"}, 415, []string{errBody("unsupportedMediaType")}, nil},
		{"no content type", anon, "POST", "/api/v1/login", `{"username":"editor","password":"x"}`, []string{"Content-Type", ""}, 415, []string{errBody("unsupportedMediaType")}, nil},
		{"too large", anon, "POST", "/api/v1/login", `{"username":"editor","password":"` + strings.Repeat("x", DefaultMaxBody) + `"}`, nil, 413, []string{errBody("bodyTooLarge")}, nil},
		{"disabled user, right password", anon, "POST", "/api/v1/login", login("former", e.f.Demo.Password(t, "former")), nil, 401, []string{errBody("invalidCredentials")}, nil},
		{"GET login", anon, "GET", "/api/v1/login", nil, nil, 405, []string{errBody("methodNotAllowed")}, nil},
	})
	wrong := anon.do("POST", "/api/v1/login", login("editor", "wrong"))
	nobody := anon.do("POST", "/api/v1/login", login("nobody-at-all", "wrong"))
	if wrong.code != 401 || nobody.code != 401 || wrong.body != nobody.body || !strings.Contains(wrong.body, errBody("invalidCredentials")) {
		t.Errorf("a wrong password and an unknown user must answer alike: %d %s / %d %s", wrong.code, wrong.body, nobody.code, nobody.body)
	}

	res := anon.do("POST", "/api/v1/login", login("editor", pw))
	if res.code != 200 || !strings.Contains(res.body, `"csrfToken":"`) || !strings.Contains(res.body, `"username":"editor"`) {
		t.Fatalf("login = %d %s", res.code, res.body)
	}
	ck := res.header.Get("Set-Cookie")
	for _, want := range []string{SessionCookie + "=", "Path=/", "Max-Age=43200", "HttpOnly", "SameSite=Lax"} {
		if !strings.Contains(ck, want) {
			t.Errorf("cookie %q lacks %s", ck, want)
		}
	}
	if strings.Contains(ck, "Secure") {
		t.Errorf("cookie over plain HTTP is Secure: %q", ck)
	}
	secure := e.anonymous().do("POST", "/api/v1/login", login("editor", pw), "X-Forwarded-Proto", "https")
	if !strings.Contains(secure.header.Get("Set-Cookie"), "Secure") {
		t.Errorf("cookie behind TLS is not Secure: %q", secure.header.Get("Set-Cookie"))
	}
	// The store keeps only hashes: the cookie's secret is not a session id.
	secret := strings.TrimPrefix(strings.SplitN(ck, ";", 2)[0], SessionCookie+"=")
	if _, err := e.f.Store.WebSession(context.Background(), secret); err == nil {
		t.Error("the cookie's secret is stored as it is")
	}
	if _, err := e.f.Store.WebSession(context.Background(), HashSecret(secret)); err != nil {
		t.Errorf("the session is not stored under the secret's hash: %v", err)
	}
}

// TestSessionLifetime: a session ends after its lifetime (injected clock)
// and when its user can no longer act.
func TestSessionLifetime(t *testing.T) {
	t.Parallel()
	e := setup(t, envOptions{api: func(a *API) { a.SessionTTL = time.Hour }})
	c := e.login("editor")
	if res := c.do("GET", "/api/v1/me", nil); res.code != 200 {
		t.Fatalf("me = %d %s", res.code, res.body)
	}
	e.f.Clock.Advance(59 * time.Minute)
	if res := c.do("GET", "/api/v1/me", nil); res.code != 200 {
		t.Errorf("me before expiry = %d %s", res.code, res.body)
	}
	e.f.Clock.Advance(time.Minute)
	res := c.do("GET", "/api/v1/me", nil)
	if res.code != 401 || !strings.Contains(res.header.Get("Set-Cookie"), "Max-Age=0") {
		t.Errorf("me after expiry = %d %s, cookie %q", res.code, res.body, res.header.Get("Set-Cookie"))
	}
	// The next login sweeps the expired session away.
	e.login("admin")
	if n, err := e.f.Store.DeleteExpiredWebSessions(context.Background()); err != nil || n != 0 {
		t.Errorf("expired sessions left after a login: %d, %v", n, err)
	}
}

// TestLoginRateLimit: five failures per username or per address within
// the window answer 429 with Retry-After, even with the right password;
// the window ends with the injected clock. Successes do not count.
func TestLoginRateLimit(t *testing.T) {
	t.Parallel()
	e := setup(t, envOptions{})
	c := e.anonymous()
	pw := e.f.Demo.Password(t, "editor")
	login := func(user, pass string) response {
		return c.do("POST", "/api/v1/login", map[string]string{"username": user, "password": pass})
	}
	for range 3 {
		if res := login("editor", pw); res.code != 200 {
			t.Fatalf("right password = %d %s", res.code, res.body)
		}
	}
	// (The limiter folds case; TestLoginLimiterKeys checks it. A username
	// TYPO3 does not know would cost a slow timing-equaliser hash here.)
	for i := range 5 {
		if res := login("editor", "wrong"); res.code != 401 {
			t.Fatalf("failure %d = %d %s", i+1, res.code, res.body)
		}
	}
	res := login("editor", pw)
	if res.code != 429 || !strings.Contains(res.body, errBody("rateLimited")) || res.header.Get("Retry-After") != "300" {
		t.Fatalf("sixth attempt = %d %s, Retry-After %q", res.code, res.body, res.header.Get("Retry-After"))
	}
	// The address is also spent: another user from it waits too.
	if res := login("admin", e.f.Demo.Password(t, "admin")); res.code != 429 {
		t.Errorf("another user from the same address = %d %s", res.code, res.body)
	}
	e.f.Clock.Advance(4 * time.Minute)
	if res := login("editor", pw); res.code != 429 || res.header.Get("Retry-After") != "60" {
		t.Errorf("a minute before the window ends = %d, Retry-After %q", res.code, res.header.Get("Retry-After"))
	}
	e.f.Clock.Advance(time.Minute)
	if res := login("editor", pw); res.code != 200 {
		t.Errorf("after the window = %d %s", res.code, res.body)
	}
}

// TestLoginLimiterKeys: the username window and the address window are
// separate; a refund never lowers a later window.
func TestLoginLimiterKeys(t *testing.T) {
	t.Parallel()
	clock := chattest.NewClock(chattest.Start)
	l := newLoginLimiter(clock.Now, 2, time.Minute)
	for range 2 {
		if a, _ := l.take("10.0.0.1", "editor"); a == nil {
			t.Fatal("refused under the limit")
		}
	}
	if a, wait := l.take("10.0.0.2", "EDITOR "); a != nil || wait != time.Minute {
		t.Errorf("the username's window: %v, %v", a, wait)
	}
	if a, wait := l.take("10.0.0.1", "admin"); a != nil || wait != time.Minute {
		t.Errorf("the address's window: %v, %v", a, wait)
	}
	a, _ := l.take("10.0.0.3", "intern")
	clock.Advance(time.Minute)
	b, _ := l.take("10.0.0.3", "intern")
	a.refund() // the old window's attempt
	if c, _ := l.take("10.0.0.3", "intern"); c == nil {
		t.Fatal("refused under the limit")
	}
	if d, _ := l.take("10.0.0.3", "intern"); d != nil {
		t.Error("a refund of an ended window lowered the new one")
	}
	b.refund()
	if d, _ := l.take("10.0.0.3", "intern"); d == nil {
		t.Error("a refund in the window did not give the attempt back")
	}
}

// TestSiteUserChanges: a right password stored as a legacy hash gets its
// own clear answer, never a login; a user disabled in TYPO3 during a
// session is logged out at the next request.
func TestSiteUserChanges(t *testing.T) {
	t.Parallel()
	e := setup(t, envOptions{})
	intern := e.login("intern")
	b, err := os.ReadFile(filepath.Join(dbtest.TYPO3Material(t), "password-hashes.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vec struct {
		Vectors []struct{ Class, Password, Hash string } `json:"vectors"`
	}
	if err := json.Unmarshal(b, &vec); err != nil {
		t.Fatal(err)
	}
	hash := ""
	for _, v := range vec.Vectors {
		if v.Class == "PhpassPasswordHash" && v.Password == "password" {
			hash = v.Hash
			break
		}
	}
	if hash == "" {
		t.Fatal("no phpass vector")
	}
	// The demo site is a SQLite file; the test writes it beside t3agent's
	// read-only connection.
	db, err := sql.Open("sqlite", strings.TrimPrefix(e.f.Demo.DSN, "sqlite:"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO be_users (uid, pid, username, password, usergroup, options) VALUES (700, 0, 'legacy', ?, '1', 3)`, hash); err != nil {
		t.Fatal(err)
	}
	c := e.anonymous()
	check(t, []call{
		{"legacy hash, right password", c, "POST", "/api/v1/login", map[string]string{"username": "legacy", "password": "password"}, nil, 401,
			[]string{errBody("passwordHashUnusable"), "Log in to the TYPO3 backend once"}, []string{"phpass"}},
		{"legacy hash, wrong password", c, "POST", "/api/v1/login", map[string]string{"username": "legacy", "password": "Password"}, nil, 401,
			[]string{errBody("invalidCredentials")}, nil},
		{"before disabling", intern, "GET", "/api/v1/me", nil, nil, 200, []string{`"username":"intern"`}, nil},
	})
	u, _ := url.Parse(e.ts.URL)
	cookies := intern.hc.Jar.Cookies(u)
	if len(cookies) != 1 {
		t.Fatalf("intern's cookies: %v", cookies)
	}
	if _, err := db.Exec(`UPDATE be_users SET disable = 1 WHERE username = 'intern'`); err != nil {
		t.Fatal(err)
	}
	check(t, []call{{"after disabling", intern, "GET", "/api/v1/me", nil, nil, 401, []string{errBody("unauthorized")}, nil}})
	if _, err := e.f.Store.WebSession(context.Background(), HashSecret(cookies[0].Value)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the session of a disabled user is kept: %v", err)
	}
}
