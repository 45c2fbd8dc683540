package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/t3agent/t3agent/internal/chat/chattest"
	"github.com/t3agent/t3agent/internal/dbtest"
	"github.com/t3agent/t3agent/internal/oauth"
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
	if got := e.metric(`t3agent_login_failures_total{reason="disabled"}`); got != 1 {
		t.Errorf("logins of a disabled user counted %v, want 1", got)
	}
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

// loginFrom posts a login as a client at addr (the limiter keys on the
// peer's address, which a test over loopback cannot vary).
func (e *apiEnv) loginFrom(addr, user, pass string) *httptest.ResponseRecorder {
	e.t.Helper()
	b, _ := json.Marshal(map[string]string{"username": user, "password": pass})
	req := httptest.NewRequest("POST", "/api/v1/login", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.RemoteAddr = addr + ":40000"
	rec := httptest.NewRecorder()
	hits.record(e.srv).ServeHTTP(rec, req)
	return rec
}

// metric is the value of one sample line of /metrics, e.g.
// `t3agent_login_failures_total{reason="disabled"}`; -1 when absent.
func (e *apiEnv) metric(sample string) float64 {
	e.t.Helper()
	res := e.anonymous().do("GET", "/metrics", nil)
	for line := range strings.Lines(res.body) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), sample+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				e.t.Fatalf("metric %s: %v", sample, err)
			}
			return f
		}
	}
	return -1
}

// TestLoginRateLimit: failures slow down the next attempt per address
// and username, and per address, with growing waits (429 with
// Retry-After, even with the right password), on the injected clock.
// Guesses from one address never lock the user out at another; the
// right password after the wait logs in and clears the wait; the MCP
// consent page's login shares the limit. Refusals are logged and
// counted.
func TestLoginRateLimit(t *testing.T) {
	t.Parallel()
	e := setup(t, envOptions{api: func(a *API) {
		a.LoginFailures, a.LoginAddressFailures = 2, 3
		a.LoginDelay, a.LoginMaxDelay = 2*time.Second, 8*time.Second
	}})
	const attacker, office = "192.0.2.1", "198.51.100.7"
	pw := map[string]string{"editor": e.f.Demo.Password(t, "editor"), "admin": e.f.Demo.Password(t, "admin")}
	expect := func(what string, rec *httptest.ResponseRecorder, code int, retry string) {
		t.Helper()
		if rec.Code != code || rec.Header().Get("Retry-After") != retry {
			t.Fatalf("%s = %d Retry-After %q, want %d %q: %s", what, rec.Code, rec.Header().Get("Retry-After"), code, retry, rec.Body)
		}
		if code == 429 && !strings.Contains(rec.Body.String(), errBody("rateLimited")) {
			t.Fatalf("%s: %s", what, rec.Body)
		}
	}
	expect("first failure", e.loginFrom(attacker, "editor", "wrong"), 401, "")
	expect("second failure", e.loginFrom(attacker, "editor", "wrong"), 401, "")
	expect("the right password at once", e.loginFrom(attacker, "editor", pw["editor"]), 429, "2")
	expect("the editor elsewhere", e.loginFrom(office, "editor", pw["editor"]), 200, "")
	e.f.Clock.Advance(2 * time.Second)
	expect("the right password after the wait", e.loginFrom(attacker, "editor", pw["editor"]), 200, "")
	// The success cleared the address-and-username wait, not the
	// address's failures: one more failure at anyone spends the address.
	expect("a failure at the intern", e.loginFrom(attacker, "intern", "wrong"), 401, "")
	expect("another user from the address", e.loginFrom(attacker, "admin", pw["admin"]), 429, "2")
	consent := func(user, pass string) error {
		req := httptest.NewRequest("POST", "/oauth/consent", nil)
		req.RemoteAddr = attacker + ":40001"
		_, err := e.srv.consentLogin(req, user, pass)
		return err
	}
	var le *oauth.LoginError
	if err := consent("admin", pw["admin"]); !errors.As(err, &le) || le.RetryAfter != 2*time.Second {
		t.Fatalf("the consent page during the wait: %v", err)
	}
	e.f.Clock.Advance(2 * time.Second)
	if err := consent("admin", "wrong"); !errors.As(err, &le) || le.RetryAfter != 0 {
		t.Fatalf("a wrong password on the consent page: %v", err)
	}
	// The consent page's failure counted: the address's wait doubled.
	expect("after the consent page's failure", e.loginFrom(attacker, "admin", pw["admin"]), 429, "4")
	e.f.Clock.Advance(4 * time.Second)
	expect("the admin after the wait", e.loginFrom(attacker, "admin", pw["admin"]), 200, "")

	for sample, want := range map[string]float64{
		`t3agent_login_failures_total{reason="wrong_credentials"}`: 4,
		`t3agent_login_failures_total{reason="rate_limited"}`:      4,
		`t3agent_login_failures_total{reason="disabled"}`:          0,
		`t3agent_login_failures_total{reason="legacy_hash"}`:       0,
	} {
		if got := e.metric(sample); got != want {
			t.Errorf("%s = %v, want %v", sample, got, want)
		}
	}
	logs := e.f.Logs.String()
	if n := strings.Count(logs, "login refused: too many failed attempts"); n != 4 {
		t.Errorf("%d refusals logged, want 4:\n%s", n, logs)
	}
	if !strings.Contains(logs, "ip="+attacker) {
		t.Errorf("the refusals do not name the address:\n%s", logs)
	}
}

// TestLoginLimiter: the limiter's waits double from the first delay up
// to the ceiling, per address and username and per address; a key is
// forgotten after the quiet period; attempts in flight count, so
// concurrent guesses cannot slip under the limit; a refund undoes one
// attempt; a success clears only its address-and-username key.
func TestLoginLimiter(t *testing.T) {
	t.Parallel()
	clock := chattest.NewClock(chattest.Start)
	l := newLoginLimiter(clock.Now, limitParams{freeUser: 2, freeAddr: 100, delay: time.Second, ceiling: 8 * time.Second, forget: time.Hour})
	take := func(addr, user string, want time.Duration) *loginAttempt {
		t.Helper()
		a, wait := l.take(addr, user)
		if (a == nil) != (want > 0) || wait != want {
			t.Fatalf("take(%s, %s) = %v, %v; want wait %v", addr, user, a, wait, want)
		}
		return a
	}
	take("10.0.0.1", "editor", 0)
	take("10.0.0.1", "editor", 0)
	take("10.0.0.1", "editor", time.Second)
	take("10.0.0.1", " EDITOR", time.Second) // TYPO3 folds case
	take("10.0.0.2", "editor", 0)            // another address
	for _, wait := range []time.Duration{1, 2, 4, 8, 8} {
		clock.Advance(wait * time.Second)
		take("10.0.0.1", "editor", 0)
		next := min(2*wait, 8) * time.Second
		take("10.0.0.1", "editor", next)
	}
	// The wait is over, but until the quiet period ends the failures
	// are remembered; after it the key starts afresh.
	clock.Advance(8*time.Second + time.Hour - time.Nanosecond)
	take("10.0.0.1", "editor", 0)
	take("10.0.0.1", "editor", 8*time.Second)
	clock.Advance(8*time.Second + time.Hour)
	take("10.0.0.1", "editor", 0)
	take("10.0.0.1", "editor", 0)
	take("10.0.0.1", "editor", time.Second)

	// Refunds undo one attempt; a success keeps the address's count.
	a := take("10.0.0.3", "intern", 0)
	b := take("10.0.0.3", "intern", 0)
	take("10.0.0.3", "intern", time.Second)
	b.refund()
	take("10.0.0.3", "intern", 0).refund()
	a.succeeded()
	take("10.0.0.3", "intern", 0)
	take("10.0.0.3", "intern", 0)
	take("10.0.0.3", "intern", time.Second)

	addr := newLoginLimiter(clock.Now, limitParams{freeUser: 5, freeAddr: 2, delay: time.Second, ceiling: time.Minute, forget: time.Hour})
	addr.take("10.0.0.4", "a")
	if w, _ := addr.take("10.0.0.4", "b"); w == nil {
		t.Fatal("refused under the limit")
	} else {
		w.succeeded()
	}
	if w, wait := addr.take("10.0.0.4", "c"); w == nil || wait != 0 {
		t.Fatalf("the success gave its attempt back: %v, %v", w, wait)
	}
	if _, wait := addr.take("10.0.0.4", "d"); wait != time.Second {
		t.Errorf("the address's failures survived no success: wait %v", wait)
	}

	// Concurrent guesses: exactly the free ones get through.
	conc := newLoginLimiter(clock.Now, limitParams{freeUser: 3, freeAddr: 100, delay: time.Second, ceiling: time.Minute, forget: time.Hour})
	var wg sync.WaitGroup
	var passed atomic.Int32
	for range 50 {
		wg.Go(func() {
			if a, _ := conc.take("10.0.0.5", "admin"); a != nil {
				passed.Add(1)
			}
		})
	}
	wg.Wait()
	if passed.Load() != 3 {
		t.Errorf("%d concurrent guesses passed, want 3", passed.Load())
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
	db := e.siteDB()
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
	if got := e.metric(`t3agent_login_failures_total{reason="legacy_hash"}`); got != 1 {
		t.Errorf("legacy hash refusals counted %v, want 1", got)
	}
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

// TestClientIP: the login limit's address is the peer's unless the peer
// is a trusted proxy; then it is the last X-Forwarded-For hop that is no
// trusted proxy, so a client cannot pick its own address by sending the
// header, directly or through the proxy.
func TestClientIP(t *testing.T) {
	t.Parallel()
	trusted := New(Params{API: &API{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}}})
	none := New(Params{API: &API{}})
	for _, c := range []struct {
		what   string
		s      *Server
		peer   string
		xff    []string
		client string
	}{
		{"no proxies configured", none, "10.0.0.1:1", []string{"203.0.113.5"}, "10.0.0.1"},
		{"a client that sends the header", trusted, "198.51.100.1:1", []string{"203.0.113.5"}, "198.51.100.1"},
		{"through the proxy", trusted, "10.0.0.1:1", []string{"203.0.113.5"}, "203.0.113.5"},
		{"a forged hop before the real one", trusted, "10.0.0.1:1", []string{"6.6.6.6, 203.0.113.5"}, "203.0.113.5"},
		{"through two proxies", trusted, "10.0.0.1:1", []string{"203.0.113.5, 10.0.0.9"}, "203.0.113.5"},
		{"hops in several headers", trusted, "10.0.0.1:1", []string{"6.6.6.6", "203.0.113.5"}, "203.0.113.5"},
		{"the proxy sends none", trusted, "10.0.0.1:1", nil, "10.0.0.1"},
		{"garbage", trusted, "10.0.0.1:1", []string{"203.0.113.5, not-an-address"}, "10.0.0.1"},
		{"IPv6 proxy", trusted, "[fd00::1]:1", []string{"2001:db8::7"}, "2001:db8::7"},
		{"IPv4-mapped proxy", trusted, "[::ffff:10.0.0.1]:1", []string{"203.0.113.5"}, "203.0.113.5"},
	} {
		req := httptest.NewRequest("POST", "/api/v1/login", nil)
		req.RemoteAddr = c.peer
		for _, v := range c.xff {
			req.Header.Add("X-Forwarded-For", v)
		}
		if got := c.s.clientIP(req); got != c.client {
			t.Errorf("%s: %s, want %s", c.what, got, c.client)
		}
	}
}
