package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"go.uber.org/goleak"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/chat"
	"github.com/t3agent/t3agent/internal/chat/chattest"
	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/web"
)

// browser is the one Chromium the package's browser tests share (each
// test opens its own browser context: cookies and storage apart); nil
// when Chromium is not installed outside CI.
var browser context.Context

// TestMain starts one headless Chromium for the package, runs the tests,
// and checks for leaked goroutines.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	path, err := chromiumPath()
	if err != nil {
		if os.Getenv("CI") == "true" {
			fmt.Fprintf(os.Stderr, "console: the browser tests need Chromium: %v\n", err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "console: %v; the browser tests skip\n", err)
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "t3agent-chromium-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(dir),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("lang", "en-US"), chromedp.WindowSize(1200, 900),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	b, cancelBrowser := chromedp.NewContext(alloc)
	if err := chromedp.Do(b); err != nil {
		cancelBrowser()
		cancelAlloc()
		fmt.Fprintf(os.Stderr, "console: Chromium does not start: %v\n", err)
		return 1
	}
	browser = b
	code := m.Run()
	browser = nil
	cancelBrowser()
	cancelAlloc()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	return code
}

// chromiumPath finds Debian's chromium (or $T3AGENT_CHROMIUM).
func chromiumPath() (string, error) {
	if p := os.Getenv("T3AGENT_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no chromium on PATH (apt-get install chromium)")
}

// env is a real t3agent server (API and console) over the chat fixture:
// the demo site, a real store, the gate, the runtime, the chat with a
// worker, the scripted provider and the real MCP server.
type env struct {
	t    *testing.T
	f    *chattest.Fixture
	url  string
	tabs int
}

type options struct {
	rounds []llmtest.Round
	chat   *chattest.Options
	// api changes the API before the server is built.
	api func(*web.API)
}

func setup(t *testing.T, o options) *env {
	t.Helper()
	co := chattest.Options{Rounds: o.rounds}
	if o.chat != nil {
		co = *o.chat
		co.Rounds = o.rounds
	}
	f := chattest.New(t, co)
	api := &web.API{
		Site: f.Site, Credentials: f.Store, Runtime: f.Runtime, Chat: f.Service,
		Gate: f.Gate, Configs: f.Tasks, Now: f.Clock.Now,
		// The streams re-read often, so a test never waits on the
		// default poll when a change comes from the worker.
		StreamPoll: 50 * time.Millisecond,
	}
	if o.api != nil {
		o.api(api)
	}
	srv := web.New(web.Params{Logger: f.Logger, SiteName: "Nordlicht Pumps", Version: "test", API: api, Console: true})
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.CloseStreams()
		ts.Close()
	})
	w, err := chat.NewWorker(chat.WorkerParams{Service: f.Service, Concurrency: 2, Poll: 10 * time.Millisecond, Logger: f.Logger})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.Start(ctx)
	t.Cleanup(func() {
		w.Stop()
		cancel()
	})
	return &env{t: t, f: f, url: ts.URL}
}

// run runs the fixture's configuration as user with prompt, outside the
// chat (as the command line does), and returns how it ended.
func (e *env) run(user, prompt string) agent.Result {
	e.t.Helper()
	ctx := context.Background()
	cfg, err := e.f.Tasks.Resolve(ctx, chattest.Configuration)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.f.Runtime.Run(ctx, agent.Request{Config: cfg, Actor: e.f.Users[user], Caller: agent.Caller{Source: "cli", Operation: "run"},
		Messages: []llm.Message{{Role: llm.RoleUser, Content: prompt}}})
}

// tab is one browser page in a browser context of its own.
type tab struct {
	e   *env
	ctx context.Context
	// n numbers the test's tabs, for the screenshots' names.
	n int
}

// open opens a tab; it closes (after a screenshot when the test failed)
// when the test ends.
func (e *env) open() *tab {
	t := e.t
	t.Helper()
	if browser == nil {
		t.Skip("no Chromium")
	}
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	// A bound for a test that hangs, not a timing assertion: a loaded
	// machine under the race detector is slow.
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	e.tabs++
	tb := &tab{e: e, ctx: ctx, n: e.tabs}
	t.Cleanup(func() {
		if t.Failed() {
			tb.screenshot()
		}
		cancelTimeout()
		cancel()
	})
	return tb
}

// screenshot saves the page to testdata/failures/<test>.png.
func (tb *tab) screenshot() {
	t := tb.e.t
	ctx, cancel := context.WithTimeout(tb.ctx, 5*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Logf("no screenshot: %v", err)
		return
	}
	dir := filepath.Join("testdata", "failures")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Logf("no screenshot: %v", err)
		return
	}
	name := filepath.Join(dir, fmt.Sprintf("%s-%d.png", strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()), tb.n))
	if err := os.WriteFile(name, png, 0o644); err != nil {
		t.Logf("no screenshot: %v", err)
		return
	}
	t.Logf("screenshot of the failed page: %s", name)
}

// snap saves the page as name.png in $T3AGENT_SCREENSHOTS when that is
// set: the screenshots of the documentation come from the tests.
func (tb *tab) snap(name string) {
	dir := os.Getenv("T3AGENT_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(tb.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		tb.e.t.Logf("no screenshot %s: %v", name, err)
		return
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		tb.e.t.Logf("no screenshot %s: %v", name, err)
	}
}

// do runs actions, failing the test with the page's log tail.
func (tb *tab) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	tb.e.t.Helper()
	if err := chromedp.Do(tb.ctx, actions...); err != nil {
		tb.e.t.Fatalf("%s: %v\nlog tail:\n%s", what, err, logTail(tb.e.f))
	}
}

// text is the visible text of the first element sel matches, read in
// one step in the page: the live update may swap the element for a new
// one at any moment.
func (tb *tab) text(sel string) string {
	tb.e.t.Helper()
	s, err := chromedp.Run(tb.ctx, chromedp.Evaluate[*string](fmt.Sprintf(`(() => { const e = document.querySelector(%q); return e ? e.innerText : null; })()`, sel)))
	if err != nil {
		tb.e.t.Fatalf("text of %s: %v", sel, err)
	}
	if s == nil {
		tb.e.t.Fatalf("no element %s on the page", sel)
	}
	return strings.TrimSpace(*s)
}

// visible waits until sel is visible.
func visible(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.WaitVisible(chromedp.CSS(sel))
}

// login logs user in through the form with the demo password.
func (tb *tab) login(user string) {
	tb.e.t.Helper()
	tb.loginWith(user, tb.e.f.Demo.Password(tb.e.t, user))
	tb.do("after the login of "+user, visible("#current-user"))
}

func (tb *tab) loginWith(user, password string) {
	tb.e.t.Helper()
	tb.do("log in as "+user,
		chromedp.Navigate(tb.e.url+"/login"),
		visible("#username"),
		chromedp.SendKeys(chromedp.CSS("#username"), user),
		chromedp.SendKeys(chromedp.CSS("#password"), password),
		chromedp.Click(chromedp.CSS("#login-submit")),
	)
}

// startChat starts a conversation in the chat and sends the prompt.
func (tb *tab) startChat(prompt string) {
	tb.e.t.Helper()
	tb.do("start a conversation",
		chromedp.Navigate(tb.e.url+"/chat"),
		chromedp.Click(chromedp.CSS("#new-conversation")),
		visible("#send-form"),
		chromedp.SendKeys(chromedp.CSS("#content"), prompt),
		chromedp.Click(chromedp.CSS("#send")),
	)
}

// waitText waits until the element sel shows text containing want: the
// page changes by itself (the stream), so the condition is polled in the
// browser, never slept on.
func (tb *tab) waitText(sel, want string) {
	tb.e.t.Helper()
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.innerText.includes(%q); })()`, sel, want)
	if err := tb.poll(js); err != nil {
		got, _ := chromedp.Run(tb.ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q)||{}).innerText||""`, sel)))
		tb.e.t.Fatalf("waiting for %q in %s: %v; it shows %q\nlog tail:\n%s", want, sel, err, got, logTail(tb.e.f))
	}
}

// poll waits until the expression is true in the page; a navigation
// meanwhile (a form posted, a redirect: the browser then answers that the
// page or its context is gone) starts the wait again on the new page,
// until the tab's deadline.
func (tb *tab) poll(js string) error {
	for {
		_, err := chromedp.Run(tb.ctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(20*time.Millisecond)))
		if err == nil || tb.ctx.Err() != nil {
			return err
		}
	}
}

// settled waits until the conversation shows status with no refresh of
// it in flight: a click on its card or form then lands on the element
// that stays.
func (tb *tab) settled(status string) {
	tb.e.t.Helper()
	js := fmt.Sprintf(`(() => { const c = document.getElementById("conv"); return !!c && c.dataset.status === %q && !c.classList.contains("htmx-request") && !document.querySelector(".htmx-request"); })()`, status)
	if err := tb.poll(js); err != nil {
		tb.e.t.Fatalf("waiting for the conversation to settle in %s: %v\nlog tail:\n%s", status, err, logTail(tb.e.f))
	}
}

// waitLoaded waits until the page at a URL holding query has loaded.
func (tb *tab) waitLoaded(query string) {
	tb.e.t.Helper()
	js := fmt.Sprintf(`location.search.includes(%q) && document.readyState === "complete"`, query)
	if err := tb.poll(js); err != nil {
		tb.e.t.Fatalf("waiting for the page with %s: %v", query, err)
	}
}

// logTail is the end of the fixture's log, for failure messages.
func logTail(f *chattest.Fixture) string {
	const n = 3000
	s := f.Logs.String()
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// httpClient is a browser without JavaScript: cookies, no redirects
// followed.
func httpClient(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// axeScript is axe-core (npm, pinned in .ci/run), read once.
var axeScript = sync.OnceValues(func() (string, error) {
	path := os.Getenv("T3AGENT_TEST_AXE")
	if path == "" {
		return "", nil
	}
	b, err := os.ReadFile(path)
	return string(b), err
})

// axeViolation is one rule axe-core found broken on a page.
type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target []string `json:"target"`
	} `json:"nodes"`
}

// accessible runs axe-core (WCAG 2 A and AA rules) on the current page and
// fails the test on every serious or critical violation. Without
// $T3AGENT_TEST_AXE it does nothing outside CI and fails on CI.
func (tb *tab) accessible(page string) {
	t := tb.e.t
	t.Helper()
	script, err := axeScript()
	if err != nil {
		t.Fatalf("axe-core: %v", err)
	}
	if script == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("T3AGENT_TEST_AXE is not set: .ci/run installs axe-core")
		}
		return
	}
	if _, err := chromedp.Run(tb.ctx, chromedp.Evaluate[bool](script+";true")); err != nil {
		t.Fatalf("inject axe-core on %s: %v", page, err)
	}
	raw, err := chromedp.Run(tb.ctx, chromedp.Evaluate[string](
		`axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}, resultTypes: ["violations"]})
		 .then(r => JSON.stringify(r.violations))`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("axe-core on %s: %v", page, err)
	}
	var vs []axeViolation
	if err := json.Unmarshal([]byte(raw), &vs); err != nil {
		t.Fatalf("axe-core on %s: %v", page, err)
	}
	for _, v := range vs {
		if v.Impact != "serious" && v.Impact != "critical" {
			continue
		}
		var where []string
		for _, n := range v.Nodes {
			where = append(where, strings.Join(n.Target, " "))
		}
		t.Errorf("%s: accessibility (%s) %s: %s at %s", page, v.Impact, v.ID, v.Help, strings.Join(where, ", "))
	}
}
