package console_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/chat/chattest"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/servicetoken"
	"github.com/t3agent/t3agent/internal/settings"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/telemetry"
	"github.com/t3agent/t3agent/internal/web"
)

// setupOps is setup with the services of the Usage, Tokens and Settings
// pages and the run playground.
func setupOps(t *testing.T, rounds ...llmtest.Round) *env {
	t.Helper()
	return setup(t, options{rounds: rounds, chat: &chattest.Options{AllowUnused: true}, api: func(a *web.API) {
		// The fixture's services, as the API holds them.
		st := a.Credentials.(store.Store)
		cfgs := a.Configs.(*agentconfig.Service)
		a.Ops = &web.Ops{
			Tokens:   servicetoken.New(servicetoken.Params{Store: st, Users: a.Site, Now: a.Now}),
			Settings: settings.New(st),
			Usage:    telemetry.New(telemetry.Params{Store: st, Now: a.Now}),
			Grants:   st, Configs: cfgs, Starter: a.Runtime.(*agent.Runtime),
		}
	}})
}

// bothLanguages runs axe-core on the page at path in English and German.
func (tb *tab) bothLanguages(path, sel, page string) {
	tb.e.t.Helper()
	for _, lang := range []string{"en", "de"} {
		tb.do(page+" in "+lang, chromedp.Navigate(tb.e.url+path+sep(path)+"lang="+lang), visible(sel))
		tb.accessible(page + " (" + lang + ")")
	}
	tb.do("back to English", chromedp.Navigate(tb.e.url+path+sep(path)+"lang=en"), visible(sel))
}

func sep(path string) string {
	if strings.Contains(path, "?") {
		return "&"
	}
	return "?"
}

// TestBrowserUsage: an admin sees the run's cost and tokens per day,
// user, configuration, provider and model as charts with tables, and
// downloads the CSV.
func TestBrowserUsage(t *testing.T) {
	t.Parallel()
	e := setupOps(t, llmtest.Text("Counted."))
	if res := e.run("editor", "Count me"); res.RunID == "" {
		t.Fatalf("the run: %+v", res)
	}
	tb := e.open()
	tb.login("admin")
	tb.do("the usage page", chromedp.Navigate(e.url+"/usage?metric=tokens"), visible("#chart-user"))
	for sel, want := range map[string]string{"#chart-user": "editor", "#chart-configuration": chattest.Configuration,
		"#chart-model": "llmtest-model", "#chart-provider": "llmtest", "#budgets": "No budget"} {
		if got := tb.text(sel); !strings.Contains(got, want) {
			t.Errorf("%s shows %q, want %q in it", sel, got, want)
		}
	}
	title, err := chromedp.Run(tb.ctx, chromedp.Evaluate[string](`document.querySelector("#chart-user svg title").textContent`))
	if err != nil || !strings.Contains(title, "By user") {
		t.Errorf("the chart's title: %q %v", title, err)
	}
	csv, err := chromedp.Run(tb.ctx, chromedp.Evaluate[string](`fetch(document.getElementById("csv-user").href).then(r => r.text())`, chromedp.EvalAwaitPromise))
	if err != nil || !strings.HasPrefix(csv, "user,requests,errors,input_tokens,output_tokens,cost_usd,unpriced_requests\neditor,1,0,") {
		t.Errorf("the CSV: %q %v", csv, err)
	}
	tb.snap("usage")
	tb.bothLanguages("/usage", "#chart-day", "the usage page")
}

// TestBrowserTokens: an admin creates a token whose secret is shown once
// and works on the API, then revokes it and the API refuses it.
func TestBrowserTokens(t *testing.T) {
	t.Parallel()
	e := setupOps(t)
	tb := e.open()
	tb.login("admin")
	tb.do("create a token",
		chromedp.Navigate(e.url+"/tokens"), visible("#token-form"),
		chromedp.SendKeys(chromedp.CSS("#token-name"), "ci"),
		chromedp.SendKeys(chromedp.CSS("#token-user"), "editor"),
		chromedp.Click(chromedp.CSS(`#scope-agent\:read`)),
		chromedp.Click(chromedp.CSS("#token-create")),
		visible("#token-created"),
	)
	secret, err := chromedp.Run(tb.ctx, chromedp.Value(chromedp.CSS("#token-secret")))
	if err != nil || !strings.HasPrefix(secret, servicetoken.Prefix) {
		t.Fatalf("the secret field holds %q (%v)", secret, err)
	}
	me := func() int {
		req, err := http.NewRequest("GET", e.url+"/api/v1/me", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+secret)
		res, err := httpClient(t).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if code := me(); code != 200 {
		t.Errorf("the new token gets %d from the API", code)
	}
	tb.accessible("the created token")
	tb.do("the list again", chromedp.Navigate(e.url+"/tokens"), visible("#token-ci"))
	if n, _ := chromedp.Run(tb.ctx, chromedp.Evaluate[int](`document.querySelectorAll("#token-secret").length`)); n != 0 {
		t.Error("the secret is shown a second time")
	}
	if got := tb.text("#token-ci .state"); got != "active" {
		t.Errorf("the token's state is %q", got)
	}
	tb.do("revoke", chromedp.Click(chromedp.CSS("#revoke-ci")), chromedp.WaitNotPresent(chromedp.CSS("#revoke-ci")))
	tb.waitText("#token-ci .state", "revoked")
	if code := me(); code != 401 {
		t.Errorf("the revoked token gets %d from the API, want 401", code)
	}
	tb.bothLanguages("/tokens", "#token-form", "the tokens page")
}

// TestBrowserSettings: an admin switches the enforcement mode; an editor
// is refused the admin pages and does not see them in the navigation.
func TestBrowserSettings(t *testing.T) {
	t.Parallel()
	e := setupOps(t)
	tb := e.open()
	tb.login("admin")
	if got := tb.text("nav"); !strings.Contains(got, "Usage") || !strings.Contains(got, "Tokens") || !strings.Contains(got, "Settings") {
		t.Errorf("the admin's navigation is %q", got)
	}
	tb.do("observe",
		chromedp.Navigate(e.url+"/settings"), visible("#settings-form"),
		chromedp.SetValue(chromedp.CSS(`#setting-tools\.data_class_enforcement`), "observe"),
		chromedp.Click(chromedp.CSS("#settings-save")), visible("#settings-saved"),
	)
	if v, err := e.f.Store.Setting(t.Context(), "tools.data_class_enforcement"); err != nil || v != "observe" {
		t.Errorf("the stored mode is %q (%v)", v, err)
	}
	tb.bothLanguages("/settings", "#settings-form", "the settings page")

	ed := e.open()
	ed.login("editor")
	if got := ed.text("nav"); strings.Contains(got, "Usage") || strings.Contains(got, "Tokens") || strings.Contains(got, "Settings") {
		t.Errorf("the editor's navigation is %q", got)
	}
	c := httpClient(t)
	for _, path := range []string{"/usage", "/usage.csv", "/tokens", "/settings"} {
		ed.do("an editor opens "+path, chromedp.Navigate(e.url+path), visible("h1"))
		if got := ed.text("main"); !strings.Contains(got, "administrator") {
			t.Errorf("%s for an editor shows %q", path, got)
		}
		// Without the session, the page asks for the login.
		res, err := c.Get(e.url + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusSeeOther {
			t.Errorf("%s without a login: %d", path, res.StatusCode)
		}
	}
}

// TestBrowserPlayground: an editor dry-runs a task (tools and prompt, no
// provider call), then starts it and lands on its timeline.
func TestBrowserPlayground(t *testing.T) {
	t.Parallel()
	e := setupOps(t)
	tb := e.open()
	tb.login("editor")
	tb.do("dry run",
		chromedp.Navigate(e.url+"/runs"), visible("#new-run"),
		chromedp.Click(chromedp.CSS("#new-run")), visible("#playground-form"),
		chromedp.SetValue(chromedp.CSS("#from"), "task:"+chattest.Task),
		chromedp.SendKeys(chromedp.CSS("#input"), "Check the pump pages."),
		chromedp.Click(chromedp.CSS("#dry-run")), visible("#dry-result"),
	)
	if got := tb.text("#dry-tools"); !strings.Contains(got, chattest.WriteTool) {
		t.Errorf("the offered tools: %q", got)
	}
	if got := tb.text("#dry-messages"); !strings.Contains(got, chattest.ConfigPrompt) || !strings.Contains(got, "Check the pump pages.") {
		t.Errorf("the assembled prompt: %q", got)
	}
	if n := len(e.f.LLM.Requests()); n != 0 {
		t.Errorf("the dry run called the provider %d times", n)
	}
	tb.accessible("the dry run")
	tb.do("start", chromedp.Click(chromedp.CSS("#start-run")), visible("#run-status"))
	if got := tb.text("#run-status"); got != "Queued" {
		t.Errorf("the started run is %q", got)
	}
	tb.bothLanguages("/runs/new", "#playground-form", "the playground")
}
