package console_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"fmt"
	"html"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/chat"
	"github.com/t3agent/t3agent/internal/chat/chattest"
	"github.com/t3agent/t3agent/internal/console"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/web"
)

// page is one answer to a request without JavaScript.
type page struct {
	code   int
	body   string
	header http.Header
}

func fetch(t *testing.T, c *http.Client, method, u string, form url.Values, headers ...string) page {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return page{resp.StatusCode, string(b), resp.Header}
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// TestFormsWithoutJavaScript: every step works as plain forms and
// redirects; the headers forbid framing and inline scripts; posts need
// the session's token and a same-origin form.
func TestFormsWithoutJavaScript(t *testing.T) {
	t.Parallel()
	e := setup(t, options{})
	c := httpClient(t)

	start := fetch(t, c, "GET", e.url+"/", nil)
	if start.code != 200 || !strings.Contains(start.body, `id="login-submit"`) {
		t.Fatalf("/ without a session: %d, want the login form:\n%s", start.code, start.body)
	}
	if strings.Contains(start.body, "erika.editor") || strings.Contains(start.body, ">former<") {
		t.Error("the start page lists backend users")
	}
	csp := start.header.Get("Content-Security-Policy")
	for _, want := range []string{"frame-ancestors 'none'", "script-src 'self'", "default-src 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("the CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("the CSP allows inline code: %q", csp)
	}
	if regexp.MustCompile(`<script(?:\s[^>]*)?>[^<]`).MatchString(start.body) || strings.Contains(start.body, " style=") {
		t.Error("the page has an inline script or style")
	}

	bad := fetch(t, c, "POST", e.url+"/login", url.Values{"username": {"editor"}, "password": {"wrong"}})
	if bad.code != http.StatusUnauthorized || !strings.Contains(bad.body, "Wrong username or password") {
		t.Errorf("a wrong password: %d", bad.code)
	}
	cross := fetch(t, c, "POST", e.url+"/login", url.Values{"username": {"editor"}, "password": {e.f.Demo.Password(t, "editor")}},
		"Origin", "https://evil.example")
	if cross.code != http.StatusForbidden {
		t.Errorf("a login posted from another site: %d, want 403", cross.code)
	}
	ok := fetch(t, c, "POST", e.url+"/login", url.Values{"username": {"editor"}, "password": {e.f.Demo.Password(t, "editor")}, "next": {"/chat"}})
	if ok.code != http.StatusSeeOther || ok.header.Get("Location") != "/chat" {
		t.Fatalf("the login: %d to %q", ok.code, ok.header.Get("Location"))
	}
	chatPage := fetch(t, c, "GET", e.url+"/chat", nil)
	m := csrfInput.FindStringSubmatch(chatPage.body)
	if chatPage.code != 200 || m == nil {
		t.Fatalf("the chat page: %d, no CSRF token", chatPage.code)
	}
	token := m[1]
	if got := fetch(t, c, "POST", e.url+"/chat", url.Values{}); got.code != http.StatusForbidden {
		t.Errorf("a post without the token: %d, want 403", got.code)
	}
	if got := fetch(t, c, "POST", e.url+"/chat", url.Values{"csrf": {"forged"}}); got.code != http.StatusForbidden {
		t.Errorf("a post with a forged token: %d, want 403", got.code)
	}
	created := fetch(t, c, "POST", e.url+"/chat", url.Values{"csrf": {token}})
	loc := created.header.Get("Location")
	if created.code != http.StatusSeeOther || !regexp.MustCompile(`^/chat/\d+$`).MatchString(loc) {
		t.Fatalf("creating a conversation: %d to %q", created.code, loc)
	}
	sent := fetch(t, c, "POST", e.url+loc+"/send", url.Values{"csrf": {token}, "content": {"   "}})
	if sent.code != http.StatusBadRequest || !strings.Contains(sent.body, "error-message") {
		t.Errorf("an empty message: %d, want 400 with the sentence", sent.code)
	}
	// Someone else's run is no page of the editor's.
	if got := fetch(t, c, "GET", e.url+"/runs/00000000-0000-0000-0000-000000000000", nil); got.code != http.StatusNotFound {
		t.Errorf("an unknown run: %d, want 404", got.code)
	}
	out := fetch(t, c, "POST", e.url+"/logout", url.Values{"csrf": {token}})
	if out.code != http.StatusSeeOther || out.header.Get("Location") != "/login" {
		t.Errorf("logout: %d to %q", out.code, out.header.Get("Location"))
	}
	if got := fetch(t, c, "GET", e.url+"/chat", nil); got.code != http.StatusSeeOther || !strings.HasPrefix(got.header.Get("Location"), "/login") {
		t.Errorf("the chat after logout: %d to %q", got.code, got.header.Get("Location"))
	}
}

// TestAssetsSize: the embedded assets, gzipped, stay under 150 KB.
func TestAssetsSize(t *testing.T) {
	t.Parallel()
	var total int
	err := fs.WalkDir(console.Assets(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(console.Assets(), path)
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write(b)
		_ = zw.Close()
		total += buf.Len()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if total > 150*1024 {
		t.Errorf("the assets are %d bytes gzipped, over 150 KB", total)
	}
	t.Logf("assets: %d bytes gzipped", total)
}

// TestLoginRateLimited: after the allowed failures the login says how
// long to wait, and a right password waits too.
func TestLoginRateLimited(t *testing.T) {
	t.Parallel()
	e := setup(t, options{api: func(a *web.API) { a.LoginFailures = 2 }})
	c := httpClient(t)
	for range 2 {
		if got := fetch(t, c, "POST", e.url+"/login", url.Values{"username": {"editor"}, "password": {"wrong"}}); got.code != http.StatusUnauthorized {
			t.Fatalf("a wrong password: %d", got.code)
		}
	}
	got := fetch(t, c, "POST", e.url+"/login", url.Values{"username": {"editor"}, "password": {e.f.Demo.Password(t, "editor")}})
	if got.code != http.StatusTooManyRequests || got.header.Get("Retry-After") == "" {
		t.Fatalf("the third attempt: %d, Retry-After %q", got.code, got.header.Get("Retry-After"))
	}
	if !regexp.MustCompile(`Too many failed logins\. Wait \d+ seconds, then try again\.`).MatchString(got.body) {
		t.Errorf("the wait is not said: %s", got.body)
	}
}

// TestNoProvider: without a chat task the dashboard and the chat say so
// plainly, with the commands that fix it.
func TestNoProvider(t *testing.T) {
	t.Parallel()
	e := setup(t, options{chat: &chattest.Options{Settings: &chat.Settings{}}})
	c := httpClient(t)
	if got := fetch(t, c, "POST", e.url+"/login", url.Values{"username": {"editor"}, "password": {e.f.Demo.Password(t, "editor")}}); got.code != http.StatusSeeOther {
		t.Fatalf("login: %d", got.code)
	}
	for _, path := range []string{"/", "/chat"} {
		got := fetch(t, c, "GET", e.url+path, nil)
		if got.code != 200 || !strings.Contains(got.body, `id="no-provider"`) || !strings.Contains(got.body, "t3agent apply -f agents.yaml") {
			t.Errorf("%s does not say that no provider is configured: %d", path, got.code)
		}
	}
}

// TestAdminPagesRefused: every admin page answers 403 to an editor.
func TestAdminPagesRefused(t *testing.T) {
	t.Parallel()
	e := setup(t, options{})
	c := httpClient(t)
	if got := fetch(t, c, "POST", e.url+"/login", url.Values{"username": {"editor"}, "password": {e.f.Demo.Password(t, "editor")}}); got.code != http.StatusSeeOther {
		t.Fatalf("login: %d", got.code)
	}
	token := csrfInput.FindStringSubmatch(fetch(t, c, "GET", e.url+"/", nil).body)[1]
	for _, tc := range []struct {
		method, path string
		form         url.Values
	}{
		{"GET", "/tools", nil},
		{"POST", "/tools/" + chattest.ReadTool, url.Values{"csrf": {token}, "enabled": {"false"}}},
	} {
		if got := fetch(t, c, tc.method, e.url+tc.path, tc.form); got.code != http.StatusForbidden {
			t.Errorf("%s %s as an editor: %d, want 403", tc.method, tc.path, got.code)
		}
	}
}

// TestUserLanguage: a backend user whose TYPO3 language is German gets
// the German console whatever the browser asks for, until switching.
func TestUserLanguage(t *testing.T) {
	t.Parallel()
	e := setup(t, options{})
	site, err := sql.Open("sqlite", strings.TrimPrefix(e.f.Demo.DSN, "sqlite:"))
	if err != nil {
		t.Fatal(err)
	}
	defer site.Close()
	if _, err := site.Exec(`UPDATE be_users SET lang = 'de' WHERE username = 'editor'`); err != nil {
		t.Fatal(err)
	}
	c := httpClient(t)
	en := []string{"Accept-Language", "en-US,en;q=0.9"}
	if got := fetch(t, c, "GET", e.url+"/login", nil, en...); !strings.Contains(got.body, "Log in to t3agent") {
		t.Errorf("the login page for an English browser is not English")
	}
	if got := fetch(t, c, "POST", e.url+"/login", url.Values{"username": {"editor"}, "password": {e.f.Demo.Password(t, "editor")}}, en...); got.code != http.StatusSeeOther {
		t.Fatalf("login: %d", got.code)
	}
	if got := fetch(t, c, "GET", e.url+"/", nil, en...); !strings.Contains(got.body, "<h1>Übersicht</h1>") {
		t.Errorf("the dashboard of a German backend user is not German")
	}
	if got := fetch(t, c, "GET", e.url+"/?lang=en", nil, en...); !strings.Contains(got.body, "<h1>Dashboard</h1>") {
		t.Errorf("switching to English does not hold")
	}
	if got := fetch(t, c, "GET", e.url+"/", nil, en...); !strings.Contains(got.body, "<h1>Dashboard</h1>") {
		t.Errorf("the switch is not kept")
	}
}

// TestRunsFilters: the configuration and source filters read past the
// store's page until the list's page is full, and page on from its last
// run.
func TestRunsFilters(t *testing.T) {
	t.Parallel()
	e := setup(t, options{})
	ctx := context.Background()
	editor := e.f.Users["editor"]
	// 1,200 runs from the command line, then 60 from the chat: the chat's
	// runs are the newest, the CLI's lie beyond the store's first page.
	for i := range 1260 {
		src := "cli"
		if i >= 1200 {
			src = "chat"
		}
		if _, err := e.f.Store.CreateRun(ctx, store.CreateRunParams{ID: benchRunID(i), OwnerUsername: editor.Username, OwnerUID: editor.UID,
			Configuration: chattest.Configuration, CallerSource: src, CallerOperation: "run", LeaseOwner: "t", Lease: time.Hour}); err != nil {
			t.Fatal(err)
		}
	}
	c := httpClient(t)
	if got := fetch(t, c, "POST", e.url+"/login", url.Values{"username": {"editor"}, "password": {e.f.Demo.Password(t, "editor")}}); got.code != http.StatusSeeOther {
		t.Fatalf("login: %d", got.code)
	}
	rows := regexp.MustCompile(`<tr><td><a href="/runs/([^"]+)">`)
	count := func(body, src string) (n int) {
		for _, m := range rows.FindAllStringSubmatch(body, -1) {
			n++
			var i int
			fmt.Sscanf(m[1][len(m[1])-12:], "%d", &i)
			if (i >= 1200) != (src == "chat") {
				t.Errorf("the %s filter lists run %d", src, i)
			}
		}
		return n
	}
	first := fetch(t, c, "GET", e.url+"/runs?source=cli", nil)
	if n := count(first.body, "cli"); n != 50 {
		t.Errorf("the first page of the cli runs has %d rows, want 50", n)
	}
	next := regexp.MustCompile(`href="/runs(\?[^"]+)" rel="next"`).FindStringSubmatch(first.body)
	if next == nil {
		t.Fatal("no next page")
	}
	second := fetch(t, c, "GET", e.url+"/runs"+html.UnescapeString(next[1]), nil)
	if n := count(second.body, "cli"); n != 50 {
		t.Errorf("the second page of the cli runs has %d rows, want 50", n)
	}
	if n := count(fetch(t, c, "GET", e.url+"/runs?source=chat&configuration="+chattest.Configuration, nil).body, "chat"); n != 50 {
		t.Errorf("the chat runs: %d rows, want 50", n)
	}
	if n := count(fetch(t, c, "GET", e.url+"/runs?configuration=nope", nil).body, ""); n != 0 {
		t.Errorf("an unknown configuration lists %d runs", n)
	}
}
