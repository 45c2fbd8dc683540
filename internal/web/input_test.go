package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/t3agent/t3agent/internal/chat/chattest"
	"github.com/t3agent/t3agent/internal/demo"
	"github.com/t3agent/t3agent/internal/demo/demotest"
	"github.com/t3agent/t3agent/internal/oauth"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

// TestInputText: text no database column holds (NUL, bytes that are not
// UTF-8) in a path, a query parameter or a JSON body is a 400 with one
// sentence at the API boundary, on every route, whatever store is
// behind it; a body that only spells a backslash and "u0000" is text
// like any other.
func TestInputText(t *testing.T) {
	t.Parallel()
	for _, pg := range []bool{false, true} {
		name := "sqlite"
		if pg {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := setup(t, envOptions{chat: chattest.Options{Postgres: pg}})
			editor, anon := e.login("editor"), e.anonymous()
			reader := e.token("reader", "editor", store.ScopeAgentRead, store.ScopeAgentApprove)
			conv := editor.create()
			bad := func(msg string) []string { return []string{errBody("badRequest"), `"message":"` + msg + `"`} }
			path := bad("The path must be UTF-8 text without NUL characters.")
			body := bad("Text in the request body must not contain NUL characters.")
			check(t, []call{
				{"NUL in a run id", editor, "GET", "/api/v1/runs/a%00b", nil, nil, 400, path, nil},
				{"NUL in a run id, token", reader, "GET", "/api/v1/runs/a%00b/events", nil, nil, 400, path, nil},
				{"not UTF-8 in a run id", reader, "POST", "/api/v1/runs/%ff/approve", map[string]string{"digest": "d"}, nil, 400, path, nil},
				{"NUL in a tool name", reader, "GET", "/api/v1/tools/a%00b/explain", nil, nil, 400, path, nil},
				{"NUL in the owner", editor, "GET", "/api/v1/runs?owner=a%00b", nil, nil, 400, bad("The query parameter owner must be UTF-8 text without NUL characters."), nil},
				{"not UTF-8 in the owner", reader, "GET", "/api/v1/runs?owner=%C0", nil, nil, 400, bad("The query parameter owner must be UTF-8 text without NUL characters."), nil},
				{"NUL in a configuration", reader, "GET", "/api/v1/tools?configuration=%00", nil, nil, 400, nil, nil},
				{"malformed query", editor, "GET", "/api/v1/runs?owner=%zz", nil, nil, 400, bad("The query string is malformed."), nil},
				{"NUL in a public route's query", anon, "GET", "/api/v1/labels?lang=%00", nil, nil, 400, nil, nil},
				{"NUL in a message", editor, "POST", conv + "/messages", `{"content":"a\u0000b"}`, nil, 400, body, nil},
				{"NUL in a title", editor, "PATCH", conv, `{"title":"a\u0000b"}`, nil, 400, body, nil},
				{"NUL in a field name", editor, "PATCH", conv, `{"ti\u0000tle":"x"}`, nil, 400, nil, nil},
				{"NUL in an input value", editor, "POST", conv + "/input", `{"digest":"d","data":{"choice":"\u0000"}}`, nil, 400, body, nil},
				{"not UTF-8 in a message", editor, "POST", conv + "/messages", "{\"content\":\"a\xffb\"}", nil, 400, bad("The request body must be UTF-8 text."), nil},
				{"NUL in a login", anon, "POST", "/api/v1/login", `{"username":"a\u0000b","password":"x"}`, nil, 400, body, nil},
				{"a spelled escape is text", editor, "PATCH", conv, `{"title":"a\\u0000b"}`, nil, 200, []string{`"title":"a\\u0000b"`}, nil},
			})
		})
	}
}

// TestLoginTextOnPostgresSite: a username PostgreSQL refuses (NUL) never
// reaches the site database: the API answers 400, and the MCP consent
// page's login, which shares the check, fails it like a wrong password
// and counts it under the login limit.
func TestLoginTextOnPostgresSite(t *testing.T) {
	t.Parallel()
	site := demotest.NewWith(t, typo3.DialectPostgres, demo.InitParams{Pages: 25, Content: 6})
	tc, err := tca.Load(tca.LoadParams{ProjectRoot: site.Root})
	if err != nil {
		t.Fatal(err)
	}
	clock := chattest.NewClock(chattest.Start)
	s, err := typo3.NewSite(typo3.SiteParams{DB: site.Open(t), TCA: tc, Root: site.Root, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), "sqlite:"+t.TempDir()+"/t3agent.db", store.OpenParams{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	srv := New(Params{API: &API{Site: s, Credentials: st, Now: clock.Now, LoginFailures: 2}})
	login := func(body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", "/api/v1/login", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.RemoteAddr = "192.0.2.9:50000"
		rec := httptest.NewRecorder()
		hits.record(srv).ServeHTTP(rec, req)
		return rec
	}
	if rec := login(`{"username":"a\u0000b","password":"x"}`); rec.Code != 400 {
		t.Errorf("NUL username = %d %s", rec.Code, rec.Body)
	}
	if rec := login(`{"username":"admin","password":"` + site.Password(t, "admin") + `"}`); rec.Code != 200 {
		t.Fatalf("the site answers logins: %d %s", rec.Code, rec.Body)
	}
	req := httptest.NewRequest("POST", "/oauth/consent", nil)
	req.RemoteAddr = "192.0.2.9:50001"
	var le *oauth.LoginError
	for i, want := range []bool{false, false, true} {
		_, err := srv.consentLogin(req, "a\x00b", "x")
		if !errors.As(err, &le) || (le.RetryAfter > 0) != want {
			t.Fatalf("consent login %d with a NUL username: %v", i+1, err)
		}
	}
}

// apiFuzz serves the API over the chat fixture in-process, with three
// callers: nobody, the editor's session and an admin-scoped token.
type apiFuzz struct {
	h      http.Handler
	cookie *http.Cookie
	csrf   string
	token  string
	routes []route
}

func newAPIFuzz(tb testing.TB) *apiFuzz {
	f := chattest.New(tb, chattest.Options{AllowUnused: true})
	srv := New(Params{Logger: f.Logger, API: &API{
		Site: f.Site, Credentials: f.Store, Runtime: f.Runtime, Chat: f.Service,
		Gate: f.Gate, Configs: f.Tasks, Now: f.Clock.Now, Ops: fixtureOps(f),
	}})
	z := &apiFuzz{h: hits.record(srv), routes: srv.apiRoutes(), token: "t3a_fuzz-secret-0123456789"}
	if _, err := f.Store.CreateServiceToken(context.Background(), store.CreateServiceTokenParams{
		Name: "fuzz", Username: "admin", Scopes: []store.Scope{store.ScopeAdmin}, SecretHash: HashSecret(z.token), CreatedBy: "admin",
	}); err != nil {
		tb.Fatal(err)
	}
	b, _ := json.Marshal(map[string]string{"username": "editor", "password": f.Demo.Password(tb, "editor")})
	req := httptest.NewRequest("POST", "/api/v1/login", strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	z.h.ServeHTTP(rec, req)
	var out struct {
		CSRFToken string `json:"csrfToken"`
	}
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &out) != nil || len(rec.Result().Cookies()) != 1 {
		tb.Fatalf("login: %d %s", rec.Code, rec.Body)
	}
	z.cookie, z.csrf = rec.Result().Cookies()[0], out.CSRFToken
	// A conversation for the routes that take one.
	creq := httptest.NewRequest("POST", "/api/v1/chat/conversations", nil)
	z.auth(creq, 1)
	crec := httptest.NewRecorder()
	z.h.ServeHTTP(crec, creq)
	if crec.Code != 201 {
		tb.Fatalf("create: %d %s", crec.Code, crec.Body)
	}
	return z
}

func (z *apiFuzz) auth(req *http.Request, who uint8) {
	switch who % 3 {
	case 1:
		req.AddCookie(z.cookie)
		req.Header.Set(CSRFHeader, z.csrf)
	case 2:
		req.Header.Set("Authorization", "Bearer "+z.token)
	}
}

// request builds a request of route i: s fills every path parameter
// and the query parameters the routes read (escaped, so the handler gets
// the very bytes), body is the body as it is.
func (z *apiFuzz) request(i uint8, who uint8, s string, body []byte) *http.Request {
	rt := z.routes[int(i)%len(z.routes)]
	method, pattern, _ := strings.Cut(rt.pattern, " ")
	var p strings.Builder
	for {
		open := strings.IndexByte(pattern, '{')
		if open < 0 {
			p.WriteString(pattern)
			break
		}
		p.WriteString(pattern[:open])
		p.WriteString(url.PathEscape(s))
		pattern = pattern[strings.IndexByte(pattern, '}')+1:]
	}
	raw := url.QueryEscape(s)
	query := "owner=" + raw + "&status=" + raw + "&before=" + raw + "&limit=" + raw + "&after=" + raw +
		"&archived=" + raw + "&lang=" + raw + "&configuration=" + raw + "&" + raw
	req := httptest.NewRequest(method, p.String()+"?"+query, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	z.auth(req, who)
	return req
}

// cancelOnWrite cancels the request once a stream's first event is
// written, so a stream route answers and returns.
type cancelOnWrite struct {
	*httptest.ResponseRecorder
	cancel context.CancelFunc
	once   sync.Once
}

func (c *cancelOnWrite) Write(b []byte) (int, error) {
	c.once.Do(c.cancel)
	return c.ResponseRecorder.Write(b)
}

// FuzzAPI: no byte string in a path parameter, a query parameter or a
// body makes any API route answer 5xx, for any caller; every refusal is
// the JSON error body with a sentence.
func FuzzAPI(f *testing.F) {
	z := newAPIFuzz(f)
	for i := range z.routes {
		for _, s := range []string{"1", "a\x00b", "\xff\xfe", "", "%", "../..", strings.Repeat("9", 40)} {
			f.Add(uint8(i), uint8(i), s, []byte(`{"content":"`+s+`"}`))
		}
		f.Add(uint8(i), uint8(1), "1", []byte(`{"title":"a\u0000b","content":"x\u0000","digest":"\u0000","seq":1,"value":"\u0000"}`))
		f.Add(uint8(i), uint8(2), "r-1", []byte("\x00{}"))
	}
	f.Fuzz(func(t *testing.T, route, who uint8, s string, body []byte) {
		req := z.request(route, who, s, body)
		ctx, cancel := context.WithCancel(req.Context())
		defer cancel()
		rec := &cancelOnWrite{ResponseRecorder: httptest.NewRecorder(), cancel: cancel}
		z.h.ServeHTTP(rec, req.WithContext(ctx))
		if rec.Code >= 500 {
			t.Fatalf("%s %q = %d %s", req.Method, req.URL.String(), rec.Code, rec.Body)
		}
		if rec.Code >= 400 {
			var eb errorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &eb); err != nil || eb.Code == "" || !strings.HasSuffix(eb.Message, ".") {
				t.Fatalf("%s %q = %d with body %s", req.Method, req.URL.String(), rec.Code, rec.Body)
			}
		}
	})
}

// BenchmarkCheckBodyText: the body check's cost on a 64 KiB message, on
// the fast path (no escaped NUL anywhere) and when a spelled `\u0000`
// makes it walk every token.
func BenchmarkCheckBodyText(b *testing.B) {
	text := strings.Repeat("Die Pumpe fördert 40 m³/h. ", 64<<10/28)
	for _, c := range []struct{ name, body string }{
		{"plain", `{"content":"` + text + `"}`},
		{"spelled-escape", `{"content":"` + text + `\\u0000"}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			body := []byte(c.body)
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if err := checkBodyText(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// hasNUL decodes JSON text and reports whether any of its strings (names
// and values) holds a NUL: the slow, obvious check escapedNUL must agree
// with.
func hasNUL(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.ContainsRune(x, 0)
	case []any:
		return slices.ContainsFunc(x, hasNUL)
	case map[string]any:
		for k, y := range x {
			if strings.ContainsRune(k, 0) || hasNUL(y) {
				return true
			}
		}
	}
	return false
}

// FuzzEscapedNUL: on any valid JSON text, the byte scan finds a NUL
// exactly when decoding does.
func FuzzEscapedNUL(f *testing.F) {
	for _, s := range []string{`"\u0000"`, `"\\u0000"`, `"\\\u0000"`, `"\\\\u0000"`, `{"\u0000":1}`, `{"a":["x","y\u0000z"]}`,
		`"\u00000"`, `"\\"`, `[]`, `"\ud800\u0000"`, `"\u0001"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var v any
		if json.Unmarshal(b, &v) != nil {
			return
		}
		if got, want := escapedNUL(b), hasNUL(v); got != want {
			t.Fatalf("escapedNUL(%q) = %v, decoding says %v", b, got, want)
		}
	})
}
