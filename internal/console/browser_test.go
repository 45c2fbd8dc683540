package console_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/chat/chattest"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/tool"
)

// The browser tests drive a real Chromium against a real t3agent server
// (API and console) on the demo site, with a real chat worker, the
// scripted provider and the real MCP server of the chat fixture.

// TestBrowserLogin: the admin and the editor log in to the dashboard with
// the navigation of their role; a wrong password and a disabled account
// get the one sentence that does not tell which usernames exist; logout
// returns to the login.
func TestBrowserLogin(t *testing.T) {
	t.Parallel()
	e := setup(t, options{})

	for _, tc := range []struct{ user, role string }{{"admin", "administrator"}, {"editor", "editor"}} {
		tb := e.open()
		tb.login(tc.user)
		if got := tb.text("#current-user"); got != tc.user+" · "+tc.role {
			t.Errorf("%s: the header shows %q", tc.user, got)
		}
		if got := tb.text("h1"); got != "Dashboard" {
			t.Errorf("%s: the start page after login is %q, want the dashboard", tc.user, got)
		}
		tb.accessible("the dashboard of " + tc.user)
		if got := tb.text("nav"); !strings.Contains(got, "Chat") || !strings.Contains(got, "Inbox") || !strings.Contains(got, "Runs") {
			t.Errorf("%s: the navigation is %q", tc.user, got)
		}
		tb.do("log out", chromedp.Click(chromedp.CSS("#logout")), visible("#login-submit"))
		// After logout, a page asks for the login again.
		tb.do("a page after logout", chromedp.Navigate(e.url+"/runs"), visible("#login-submit"))
	}

	const refused = "Wrong username or password, or the account is disabled."
	for _, tc := range []struct{ name, user, password string }{
		{"wrong password", "editor", "not-the-password"},
		{"disabled user", "former", e.f.Demo.Password(t, "former")},
		{"unknown user", "nobody", "whatever"},
	} {
		tb := e.open()
		tb.loginWith(tc.user, tc.password)
		tb.do(tc.name, visible("#login-error"))
		if got := tb.text("#login-error"); got != refused {
			t.Errorf("%s: the login says %q, want %q", tc.name, got, refused)
		}
		tb.accessible("the login after " + tc.name)
		// The username stays in the form; the password does not.
		if v, _ := chromedp.Run(tb.ctx, chromedp.Value(chromedp.CSS("#username"))); v != tc.user {
			t.Errorf("%s: the username field holds %q", tc.name, v)
		}
	}
}

// approvalRounds: the model looks a note up (a read, no approval), then
// asks to publish one (a write, approval bound), then answers.
func approvalRounds(answer string) []llmtest.Round {
	return []llmtest.Round{
		{Text: "Let me look the note up first.", ToolCalls: []llm.ToolCall{llmtest.Call("call-1", chattest.ReadTool, `{"title":"pumps"}`)}},
		{Text: "I will publish the note for you.", ToolCalls: []llm.ToolCall{llmtest.Call("call-2", chattest.WriteTool, `{"text":"hello"}`)}},
		llmtest.Text(answer),
	}
}

// startApproval logs the editor in, starts a conversation and sends the
// prompt; the page follows the turn to the approval card by itself.
func startApproval(t *testing.T, e *env) *tab {
	tb := e.open()
	tb.login("editor")
	tb.startChat("Publish a note saying hello")
	// The card arrives over the stream, without a reload.
	tb.waitText("#conv", "Approve this change?")
	tb.settled("awaiting_approval")
	if got := tb.text("#messages"); !strings.Contains(got, "Publish a note saying hello") || !strings.Contains(got, "I will publish the note for you.") {
		t.Errorf("the messages before the card: %q", got)
	}
	// The read ran already: a step with the tool, its arguments and result.
	steps := tb.text("#steps")
	if !strings.Contains(steps, chattest.ReadTool) || !strings.Contains(steps, "done") {
		t.Errorf("the tool steps: %q", steps)
	}
	card := tb.text("#card")
	for _, want := range []string{chattest.WriteTool, "editorContent", "writes (not repeatable)", "Digest of this turn"} {
		if !strings.Contains(card, want) {
			t.Errorf("the approval card lacks %q: %q", want, card)
		}
	}
	if tb.text("#card-digest") == "" {
		t.Error("the card quotes no digest")
	}
	if n := e.f.WriteCalls(); n != 0 {
		t.Fatalf("the write ran before anyone approved it: %d calls", n)
	}
	tb.snap("approval-card")
	tb.accessible("the chat with the approval card")
	return tb
}

// TestBrowserApprove: the card approved in the page → the write happens
// exactly once and the answer streams in.
func TestBrowserApprove(t *testing.T) {
	t.Parallel()
	const answer = "The note is published."
	e := setup(t, options{rounds: approvalRounds(answer)})
	tb := startApproval(t, e)
	// Waiting on the card the page does not poll: a change made elsewhere
	// (here a rename through the service) arrives over the event stream.
	loc, err := chromedp.Run(tb.ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	id, err := strconv.ParseInt(loc[strings.LastIndex(loc, "/")+1:], 10, 64)
	if err != nil {
		t.Fatalf("the conversation's URL %q: %v", loc, err)
	}
	if _, err := e.f.Service.Rename(context.Background(), e.f.Users["editor"], id, "Renamed elsewhere"); err != nil {
		t.Fatal(err)
	}
	tb.waitText("#conv-title", "Renamed elsewhere")
	tb.do("approve", chromedp.Click(chromedp.CSS("#approve")))
	tb.waitText("#messages", answer)
	tb.waitText("#conv-status", "Ready")
	if n := e.f.WriteCalls(); n != 1 {
		t.Errorf("the MCP server saw %d write calls, want exactly 1", n)
	}
	tb.snap("chat")
	if body := string(e.f.LLM.Request(2).Body); !strings.Contains(body, "published: hello") {
		t.Errorf("the model did not read the write's result: %s", body)
	}
}

// TestBrowserDeny: the card denied with a reason → no write, the reason
// shown as a notice, and the model's answer.
func TestBrowserDeny(t *testing.T) {
	t.Parallel()
	const answer = "Understood, I did not publish it."
	e := setup(t, options{rounds: approvalRounds(answer)})
	tb := startApproval(t, e)
	tb.do("deny", chromedp.SendKeys(chromedp.CSS("#reason"), "Not today"), chromedp.Click(chromedp.CSS("#deny")))
	tb.waitText("#messages", answer)
	if got := tb.text("#messages"); !strings.Contains(got, "Not today") {
		t.Errorf("the reason is not in the conversation: %q", got)
	}
	if n := e.f.WriteCalls(); n != 0 {
		t.Errorf("the MCP server saw %d write calls after a denial, want 0", n)
	}
}

// TestBrowserInput: the typed-input form is rendered from the schema (an
// enum as a select), an empty required answer is refused with a message
// in the form, a chosen one goes on to the tool and the answer.
func TestBrowserInput(t *testing.T) {
	t.Parallel()
	const answer = "I used variant b."
	e := setup(t, options{rounds: []llmtest.Round{
		{Text: "Two variants fit.", ToolCalls: []llm.ToolCall{llmtest.Call("call-1", chattest.InputTool, `{}`)}},
		llmtest.Text(answer),
	}})
	tb := e.open()
	tb.login("editor")
	tb.startChat("Pick a variant")
	tb.waitText("#conv", "The assistant asks you")
	tb.settled("awaiting_input")
	if got := tb.text("#messages"); !strings.Contains(got, "Which variant should I use?") {
		t.Errorf("the question is not in the conversation: %q", got)
	}
	tb.do("answer nothing", visible("#field-choice"), chromedp.Click(chromedp.CSS("#input-submit")), visible("#form-error"))
	if got := tb.text("#field-choice-err"); got != "This field is required." {
		t.Errorf("the empty answer says %q", got)
	}
	tb.accessible("the typed-input form with an error")
	tb.do("answer b", chromedp.SetValue(chromedp.CSS("#field-choice"), "b"), chromedp.Click(chromedp.CSS("#input-submit")))
	tb.waitText("#messages", answer)
	if body := string(e.f.LLM.Request(1).Body); !strings.Contains(body, "variant b chosen") {
		t.Errorf("the tool did not run with the answer: %s", body)
	}
}

// TestBrowserGerman: the language switch turns every label German and
// stays switched on the next pages; the login error is German too.
func TestBrowserGerman(t *testing.T) {
	t.Parallel()
	e := setup(t, options{})
	tb := e.open()
	tb.do("switch to German", chromedp.Navigate(e.url+"/login?lang=de"), visible("#login-submit"))
	if got := tb.text("h1"); got != "Bei t3agent anmelden" {
		t.Errorf("the German login heading is %q", got)
	}
	tb.accessible("the German login")
	tb.loginWith("editor", "wrong")
	tb.do("the German refusal", visible("#login-error"))
	if got := tb.text("#login-error"); got != "Benutzername oder Passwort ist falsch, oder das Konto ist deaktiviert." {
		t.Errorf("the German refusal is %q", got)
	}
	tb.login("editor")
	if got := tb.text("nav"); !strings.Contains(got, "Eingang") || !strings.Contains(got, "Läufe") {
		t.Errorf("the German navigation is %q", got)
	}
	tb.accessible("the German dashboard")
	tb.do("the German chat", chromedp.Navigate(e.url+"/chat"), visible("#new-conversation"))
	if got := tb.text("#new-conversation"); got != "Neue Unterhaltung" {
		t.Errorf("the German chat button is %q", got)
	}
	tb.accessible("the German chat")
	tb.do("the German runs", chromedp.Navigate(e.url+"/runs"), visible("h1"))
	tb.accessible("the German runs list")
	tb.do("the German inbox", chromedp.Navigate(e.url+"/inbox"), visible("#inbox-empty"))
	tb.accessible("the German inbox")
	tb.do("back to English", chromedp.Navigate(e.url+"/chat?lang=en"), visible("#new-conversation"))
	if got := tb.text("#new-conversation"); got != "New conversation" {
		t.Errorf("the English chat button is %q", got)
	}
}

// TestBrowserInboxAndRuns: the editor's waiting run is in the editor's
// inbox with the same card, approved there (the write happens once) and
// followed on its timeline; the editor's runs list shows only the
// editor's runs and no owner filter, another person's run is refused;
// the admin sees every run and filters by owner.
func TestBrowserInboxAndRuns(t *testing.T) {
	t.Parallel()
	const adminAnswer = "The admin's answer."
	e := setup(t, options{rounds: append([]llmtest.Round{llmtest.Text(adminAnswer)}, approvalRounds("The note is published.")...)})
	res := e.run("admin", "Hello")
	if res.Outcome != agent.OutcomeCompleted || res.Content != adminAnswer {
		t.Fatalf("the admin's run: %+v", res)
	}

	tb := startApproval(t, e)
	tb.do("the inbox", chromedp.Navigate(e.url+"/inbox"), visible("#inbox #approve"))
	if got := tb.text("#inbox"); !strings.Contains(got, chattest.WriteTool) {
		t.Errorf("the inbox card: %q", got)
	}
	tb.snap("inbox")
	tb.accessible("the inbox")
	tb.do("approve in the inbox", chromedp.Click(chromedp.CSS("#inbox #approve")), visible("#run-status"))
	tb.waitText("#run-status", "Completed")
	timeline := tb.text("#timeline")
	for _, want := range []string{"Stopped for approval", "Tool call", chattest.WriteTool, "Provider answer"} {
		if !strings.Contains(timeline, want) {
			t.Errorf("the timeline lacks %q: %q", want, timeline)
		}
	}
	tb.snap("run-timeline")
	tb.accessible("the run timeline")
	if n := e.f.WriteCalls(); n != 1 {
		t.Errorf("the MCP server saw %d write calls, want exactly 1", n)
	}
	tb.do("the editor's runs", chromedp.Navigate(e.url+"/runs"), visible("#runs"))
	if got := tb.text("#runs"); strings.Contains(got, res.RunID) || !strings.Contains(got, "editor") {
		t.Errorf("the editor's runs list: %q", got)
	}
	if n, _ := chromedp.Run(tb.ctx, chromedp.Evaluate[int](`document.querySelectorAll("#owner").length`)); n != 0 {
		t.Error("the editor's runs list offers the owner filter")
	}
	tb.accessible("the editor's runs list")
	tb.do("the admin's run", chromedp.Navigate(e.url+"/runs/"+res.RunID), visible("#error-message"))
	tb.accessible("the error page")

	admin := e.open()
	admin.login("admin")
	admin.do("every run", chromedp.Navigate(e.url+"/runs"), visible("#owner"))
	if got := admin.text("#runs"); !strings.Contains(got, res.RunID) || !strings.Contains(got, "editor") {
		t.Errorf("the admin's runs list: %q", got)
	}
	admin.accessible("the admin's runs list")
	admin.do("filter by owner", chromedp.SendKeys(chromedp.CSS("#owner"), "editor"), chromedp.Submit(chromedp.CSS("#owner")))
	admin.waitLoaded("owner=editor")
	if got := admin.text("#runs"); strings.Contains(got, res.RunID) {
		t.Errorf("the list filtered to the editor shows the admin's run: %q", got)
	}
	admin.do("the admin's run", chromedp.Navigate(e.url+"/runs/"+res.RunID), visible("#run-status"))
	if got := admin.text("#run-status"); got != "Completed" {
		t.Errorf("the admin's run status: %q", got)
	}
}

// TestBrowserTools: an admin switches a tool off on the tools page and the
// gate denies it from then on; an editor has no Tools link and is
// refused the page.
func TestBrowserTools(t *testing.T) {
	t.Parallel()
	e := setup(t, options{})
	admin := e.open()
	admin.login("admin")
	if got := admin.text("nav"); !strings.Contains(got, "Tools") {
		t.Errorf("the admin's navigation lacks Tools: %q", got)
	}
	row := "#tool-" + chattest.ReadTool
	admin.do("the tools page", chromedp.Navigate(e.url+"/tools"), visible(row))
	if got := admin.text(row); !strings.Contains(got, "allowed") || !strings.Contains(got, "Switch off") {
		t.Errorf("the read tool's row: %q", got)
	}
	admin.accessible("the tools page")
	admin.do("switch it off", chromedp.Click(chromedp.CSS(row+" button")))
	admin.waitText(row, "Switch on")
	decisions, err := e.f.Gate.Explain(context.Background(), gate.ExplainParams{Actor: e.f.Users["editor"], Config: gate.Config{Name: "t", TrustZone: tool.ZoneLocal}})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range decisions {
		if d.Tool == chattest.ReadTool && (d.Allowed || d.Reason != gate.ReasonToolDisabled) {
			t.Errorf("after switching it off the gate decides %+v", d)
		}
	}

	editor := e.open()
	editor.login("editor")
	if got := editor.text("nav"); strings.Contains(got, "Tools") {
		t.Errorf("the editor's navigation offers Tools: %q", got)
	}
	editor.do("the tools page as an editor", chromedp.Navigate(e.url+"/tools"), visible("#error-message"))
	if got := editor.text("#error-message"); got != "Only administrators may open this page." {
		t.Errorf("the editor is told %q", got)
	}
}

// TestBrowserFourEyes: under require_second_approver the editor who
// started the run is refused approving it from the inbox, with the
// sentence why; the admin approves it from the admin's inbox, which says
// who requested it, and the write happens once.
func TestBrowserFourEyes(t *testing.T) {
	t.Parallel()
	e := setup(t, options{rounds: approvalRounds("The note is published."), chat: &chattest.Options{ConfigYAML: "require_second_approver: true"}})
	editor := startApproval(t, e)
	// In the chat the initiator's card offers deny only, and says why.
	if n, _ := chromedp.Run(editor.ctx, chromedp.Evaluate[int](`document.querySelectorAll("#conv #approve").length`)); n != 0 {
		t.Error("the initiator's card offers Approve")
	}
	if got := editor.text("#decide-reason"); !strings.Contains(got, "second person") {
		t.Errorf("the card says %q about who may approve", got)
	}
	editor.do("the editor's inbox", chromedp.Navigate(e.url+"/inbox"), visible("#inbox #approve"))
	editor.do("approve one's own run", chromedp.Click(chromedp.CSS("#inbox #approve")), visible("#error-message"))
	if got := editor.text("#error-message"); got != "This configuration requires a second person to approve; you started the run." {
		t.Errorf("the editor's own approval is refused with %q", got)
	}
	if n := e.f.WriteCalls(); n != 0 {
		t.Fatalf("the initiator's approval wrote: %d calls", n)
	}

	admin := e.open()
	admin.login("admin")
	admin.do("the admin's inbox", chromedp.Navigate(e.url+"/inbox"), visible("#inbox #approve"))
	if got := admin.text("#inbox"); !strings.Contains(got, "Requested by editor.") {
		t.Errorf("the admin's inbox does not say who requested: %q", got)
	}
	admin.do("approve as the second person", chromedp.Click(chromedp.CSS("#inbox #approve")), visible("#run-status"))
	admin.waitText("#run-status", "Completed")
	if n := e.f.WriteCalls(); n != 1 {
		t.Errorf("the MCP server saw %d write calls, want exactly 1", n)
	}
	if got := admin.text("#timeline"); !strings.Contains(got, "approved by admin") {
		t.Errorf("the timeline does not say who approved: %q", got)
	}
}

// TestBrowserRetry: a turn the provider fails shows the failure as a
// sentence with Retry; Retry runs the turn again and the answer arrives.
func TestBrowserRetry(t *testing.T) {
	t.Parallel()
	const answer = "Here is the answer after all."
	e := setup(t, options{rounds: []llmtest.Round{{Status: 400, Message: "bad request from the scripted provider"}, llmtest.Text(answer)}})
	tb := e.open()
	tb.login("editor")
	tb.startChat("What is on the start page?")
	tb.waitText("#conv-status", "The last turn did not complete")
	tb.settled("failed")
	tb.do("the failure", visible("#conv-error"), visible("#retry"))
	if got := tb.text("#conv-error"); got == "" {
		t.Error("the failure has no sentence")
	}
	tb.accessible("the failed conversation")
	tb.do("retry", chromedp.Click(chromedp.CSS("#retry")))
	tb.waitText("#messages", answer)
	tb.waitText("#conv-status", "Ready")
}

// TestBrowserCancel: a waiting run is cancelled from its timeline; the
// write never happens.
func TestBrowserCancel(t *testing.T) {
	t.Parallel()
	e := setup(t, options{rounds: approvalRounds("unused"), chat: &chattest.Options{AllowUnused: true}})
	tb := startApproval(t, e)
	tb.do("the run's timeline", chromedp.Click(chromedp.CSS("#conv-status a")), visible("#cancel-run"))
	if got := tb.text("#run-status"); got != "Waiting for approval" {
		t.Errorf("the waiting run's status: %q", got)
	}
	tb.do("cancel", chromedp.Click(chromedp.CSS("#cancel-run")))
	tb.waitText("#run-status", "Cancelled")
	if n, _ := chromedp.Run(tb.ctx, chromedp.Evaluate[int](`document.querySelectorAll("#cancel-run, #approve").length`)); n != 0 {
		t.Error("a cancelled run still offers cancel or approve")
	}
	if n := e.f.WriteCalls(); n != 0 {
		t.Errorf("a cancelled run wrote: %d calls", n)
	}
}

// TestBrowserPhoneAndKeyboard: on a phone's viewport no page scrolls
// sideways (the runs table scrolls inside its box), and the first Tab
// reaches the skip link, which moves the focus to the content.
func TestBrowserPhoneAndKeyboard(t *testing.T) {
	t.Parallel()
	e := setup(t, options{rounds: approvalRounds("unused"), chat: &chattest.Options{AllowUnused: true}})
	tb := startApproval(t, e)
	tb.do("a phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateScale(3)))
	fits := `document.documentElement.scrollWidth <= window.innerWidth`
	for _, path := range []string{"/", "/chat", "/inbox", "/runs"} {
		tb.do("open "+path, chromedp.Navigate(e.url+path), visible("main"))
		if ok, err := chromedp.Run(tb.ctx, chromedp.Evaluate[bool](fits)); err != nil || !ok {
			w, _ := chromedp.Run(tb.ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
			t.Errorf("%s scrolls sideways on a phone: %d px wide (%v)", path, w, err)
		}
	}
	tb.snap("phone-runs")
	tb.do("keyboard", chromedp.Navigate(e.url+"/chat"), visible("main"), chromedp.KeyEvent("\t"))
	if got, _ := chromedp.Run(tb.ctx, chromedp.Evaluate[string](`document.activeElement.className`)); got != "skip" {
		t.Errorf("the first Tab reaches %q, want the skip link", got)
	}
	tb.do("skip", chromedp.KeyEvent("\r"))
	if got, _ := chromedp.Run(tb.ctx, chromedp.Evaluate[string](`document.activeElement.id`)); got != "main" {
		t.Errorf("the skip link moves the focus to %q, want main", got)
	}
}

// TestBrowserHandBack: an approval quoting another digest is handed back
// by the worker; the card stays, with the hand-back as a sentence in the
// reader's language, and no write happens.
func TestBrowserHandBack(t *testing.T) {
	t.Parallel()
	e := setup(t, options{rounds: approvalRounds("unused"), chat: &chattest.Options{AllowUnused: true}})
	tb := startApproval(t, e)
	stale := strings.Repeat("0", 64)
	tb.do("approve a stale card", chromedp.SetValue(chromedp.CSS(`#decide-form input[name="digest"]`), stale),
		chromedp.Click(chromedp.CSS("#approve")))
	tb.waitText("#conv-error", "The change you decided on is out of date. Review the current one.")
	tb.do("the card is back", visible("#approve"))
	tb.do("in German", chromedp.Navigate(tb.e.url+"/chat?lang=de"), chromedp.Click(chromedp.CSS("#conv-list a")), visible("#conv-error"))
	if got := tb.text("#conv-error"); got != "Die Änderung, über die Sie entschieden haben, ist veraltet. Prüfen Sie die aktuelle." {
		t.Errorf("the German hand-back reads %q", got)
	}
	tb.accessible("the German chat with a hand-back")
	if n := e.f.WriteCalls(); n != 0 {
		t.Errorf("a stale approval wrote: %d calls", n)
	}
}

// TestBrowserInboxInput: a run started outside the chat that asks for
// input is answered from the inbox through the form made from its
// schema, and goes on to its answer.
func TestBrowserInboxInput(t *testing.T) {
	t.Parallel()
	const answer = "Variant a it is."
	e := setup(t, options{rounds: []llmtest.Round{
		{ToolCalls: []llm.ToolCall{llmtest.Call("call-1", chattest.InputTool, `{}`)}},
		llmtest.Text(answer),
	}})
	res := e.run("editor", "Pick a variant")
	if res.Outcome != agent.OutcomeAwaitingInput {
		t.Fatalf("the run: %+v", res)
	}
	tb := e.open()
	tb.login("editor")
	tb.do("the inbox", chromedp.Navigate(e.url+"/inbox"), visible("#inbox #field-choice"))
	tb.accessible("the inbox with a question")
	tb.do("answer a", chromedp.SetValue(chromedp.CSS("#field-choice"), "a"), chromedp.Click(chromedp.CSS("#input-submit")), visible("#run-status"))
	tb.waitText("#run-status", "Completed")
	if got := tb.text("#timeline"); !strings.Contains(got, "Answer given") {
		t.Errorf("the timeline does not show the answer: %q", got)
	}
	if body := string(e.f.LLM.Request(1).Body); !strings.Contains(body, "variant a chosen") {
		t.Errorf("the tool did not run with the answer: %s", body)
	}
}
