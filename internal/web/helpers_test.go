package web

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/chat/chattest"
	"github.com/t3agent/t3agent/internal/store"
)

func slogDiscard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// routeHits records which API route answered which status in this test
// binary, so that TestMain can prove the scenario tests reach every
// route.
type routeHits struct {
	mu   sync.Mutex
	seen map[string]map[int]bool
}

// hits is the test binary's record; tests only add to it.
var hits = &routeHits{seen: map[string]map[int]bool{}}

func (h *routeHits) record(s *Server) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pattern := s.mux.Handler(r)
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		s.Handler().ServeHTTP(rec, r)
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.seen[pattern] == nil {
			h.seen[pattern] = map[int]bool{}
		}
		h.seen[pattern][rec.code] = true
	})
}

// missing lists the API routes no test reached, and the error statuses
// the API answers somewhere but no test saw on any route.
func (h *routeHits) missing() (routes []string, statuses []int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	seenStatus := map[int]bool{}
	for _, codes := range h.seen {
		for c := range codes {
			seenStatus[c] = true
		}
	}
	for _, rt := range New(Params{API: &API{}}).apiRoutes() {
		if len(h.seen[rt.pattern]) == 0 {
			routes = append(routes, rt.pattern)
		}
	}
	for _, c := range []int{400, 401, 403, 404, 409, 413, 422, 429} {
		if !seenStatus[c] {
			statuses = append(statuses, c)
		}
	}
	return routes, statuses
}

// apiEnv is the API over the whole chat fixture (real store, demo site,
// gate, runtime, chat, scripted provider, MCP server), served over real
// HTTP by httptest.
type apiEnv struct {
	t   *testing.T
	f   *chattest.Fixture
	srv *Server
	ts  *httptest.Server
}

// envOptions tune setup.
type envOptions struct {
	chat chattest.Options
	// api changes the API before the server is built.
	api func(*API)
}

// setup builds the fixture and serves the API; everything closes when
// the test ends.
func setup(t *testing.T, o envOptions) *apiEnv {
	t.Helper()
	return serve(t, chattest.New(t, o.chat), o.api)
}

// serve serves the API over fixture f; change may alter the API first.
func serve(t *testing.T, f *chattest.Fixture, change func(*API)) *apiEnv {
	t.Helper()
	api := &API{
		Site: f.Site, Credentials: f.Store, Runtime: f.Runtime, Chat: f.Service,
		Gate: f.Gate, Configs: f.Tasks, Now: f.Clock.Now,
	}
	if change != nil {
		change(api)
	}
	srv := New(Params{Logger: f.Logger, SiteName: "Nordlicht Pumps", Version: "test", API: api})
	ts := httptest.NewServer(hits.record(srv))
	t.Cleanup(ts.Close)
	return &apiEnv{t: t, f: f, srv: srv, ts: ts}
}

// siteDB opens the demo site's SQLite file for writing, beside
// t3agent's read-only connection, as TYPO3 would change it; it closes
// with the test.
func (e *apiEnv) siteDB() *sql.DB {
	e.t.Helper()
	db, err := sql.Open("sqlite", strings.TrimPrefix(e.f.Demo.DSN, "sqlite:"))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = db.Close() })
	return db
}

// client is one HTTP client: a browser with its cookie jar and CSRF
// token, or a machine with a bearer token.
type client struct {
	e *apiEnv
	// base is the server's URL.
	base   string
	hc     *http.Client
	csrf   string
	bearer string
}

func (e *apiEnv) anonymous() *client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		e.t.Fatal(err)
	}
	hc := &http.Client{Jar: jar, Timeout: time.Minute}
	e.t.Cleanup(hc.CloseIdleConnections)
	return &client{e: e, base: e.ts.URL, hc: hc}
}

// login logs user in with the demo password and keeps the CSRF token.
func (e *apiEnv) login(user string) *client {
	e.t.Helper()
	c := e.anonymous()
	res := c.do("POST", "/api/v1/login", map[string]string{"username": user, "password": e.f.Demo.Password(e.t, user)})
	if res.code != http.StatusOK {
		e.t.Fatalf("login %s: %d %s", user, res.code, res.body)
	}
	var out struct {
		CSRFToken string `json:"csrfToken"`
	}
	res.decode(e.t, &out)
	c.csrf = out.CSRFToken
	return c
}

// token stores a service token acting as user with scopes and returns a
// client that sends it.
func (e *apiEnv) token(name, user string, scopes ...store.Scope) *client {
	e.t.Helper()
	secret := "t3a_" + name + "-secret-0123456789"
	if _, err := e.f.Store.CreateServiceToken(context.Background(), store.CreateServiceTokenParams{
		Name: name, Username: user, Scopes: scopes, SecretHash: HashSecret(secret), CreatedBy: "admin",
	}); err != nil {
		e.t.Fatal(err)
	}
	c := e.anonymous()
	c.bearer = secret
	return c
}

// response is what a request got.
type response struct {
	code   int
	body   string
	header http.Header
}

func (r response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.body), v); err != nil {
		t.Fatalf("decode %q: %v", r.body, err)
	}
}

// do sends a request. body is JSON-encoded unless it is a string (sent as
// it is) or nil; the CSRF token and the bearer token go along when set.
func (c *client) do(method, path string, body any, headers ...string) response {
	c.e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			c.e.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.e.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.csrf != "" {
		req.Header.Set(CSRFHeader, c.csrf)
	}
	if c.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+c.bearer)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.e.t.Fatal(err)
	}
	return response{code: resp.StatusCode, body: string(b), header: resp.Header}
}

// call is one row of a scenario table: a request and what must come back.
type call struct {
	name   string
	c      *client
	method string
	path   string
	body   any
	// headers are name, value pairs; an empty value removes the header.
	headers []string
	code    int
	// want are fragments the body must contain; not those it must not.
	want []string
	not  []string
}

// check sends the rows in order (each may depend on the one before).
func check(t *testing.T, calls []call) {
	t.Helper()
	for _, cl := range calls {
		res := cl.c.do(cl.method, cl.path, cl.body, cl.headers...)
		if res.code != cl.code {
			t.Errorf("%s: %s %s = %d, want %d: %s", cl.name, cl.method, cl.path, res.code, cl.code, res.body)
			continue
		}
		for _, w := range cl.want {
			if !strings.Contains(res.body, w) {
				t.Errorf("%s: %s %s body lacks %q: %s", cl.name, cl.method, cl.path, w, res.body)
			}
		}
		for _, n := range cl.not {
			if strings.Contains(res.body, n) {
				t.Errorf("%s: %s %s body has %q: %s", cl.name, cl.method, cl.path, n, res.body)
			}
		}
	}
}

// errBody is the JSON fragment of an error code.
func errBody(code string) string { return `"code":"` + code + `"` }
