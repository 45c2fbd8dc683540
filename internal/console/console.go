// Package console is t3agent's web console: the server-rendered pages a
// TYPO3 backend user works with in a browser — login, dashboard, chat
// with approval cards and typed-input forms, the inbox of waiting runs,
// and the runs with their timelines.
//
// Pages are html/template, every asset is embedded, and htmx (vendored,
// pinned, with its SSE extension) only enhances them: every form posts
// and redirects without JavaScript. The pages call the same services as
// the JSON API (the chat service, the agent runtime, the run store); the
// sessions, logins and the labels of codes belong to the HTTP layer,
// which hands them in through Auth.
package console

import (
	"context"
	"crypto/subtle"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/chat"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/typo3"
)

// Session is a logged-in person.
type Session struct {
	User *typo3.BackendUser
	// CSRF is the session's token; every form posts it back.
	CSRF string
}

// Auth is the console's seam into the HTTP layer's sessions and logins.
// It must be safe for concurrent use.
type Auth interface {
	// Session is the person the request's cookie belongs to; nil, nil
	// when nobody is logged in (a dead cookie is expired on w).
	Session(w http.ResponseWriter, r *http.Request) (*Session, error)
	// Login checks TYPO3 backend credentials under the login limit and,
	// when they hold, opens a session (the cookie is set on w). A refused
	// attempt returns the wait; wrong credentials match
	// typo3.ErrAuthFailed, a refused stored hash
	// typo3.ErrPasswordHashUnusable.
	Login(w http.ResponseWriter, r *http.Request, username, password string) (*typo3.BackendUser, time.Duration, error)
	// Logout ends the request's session and expires its cookie.
	Logout(w http.ResponseWriter, r *http.Request) error
	// Label is the text of a code label (status.…, error.…, notice.…,
	// gate.…) in lang, the same texts the API serves.
	Label(lang, key string) (string, bool)
	// Explain turns an error of a service (a chat or runtime refusal, a
	// too large body) into the API's status and its sentence in lang;
	// anything else is a 500 with a neutral sentence.
	Explain(lang string, err error) (int, string)
}

// Chat is what the pages need of the chat; *chat.Service implements it.
type Chat interface {
	Availability(ctx context.Context, actor *typo3.BackendUser) (chat.Availability, error)
	Create(ctx context.Context, actor *typo3.BackendUser) (chat.View, error)
	List(ctx context.Context, actor *typo3.BackendUser, includeArchived bool) ([]chat.View, error)
	Messages(ctx context.Context, actor *typo3.BackendUser, id int64, after int) (chat.Page, error)
	Send(ctx context.Context, actor *typo3.BackendUser, p chat.SendParams) (chat.View, error)
	Retry(ctx context.Context, actor *typo3.BackendUser, id int64) (chat.View, error)
	Decide(ctx context.Context, actor *typo3.BackendUser, p chat.DecideParams) (chat.View, error)
	Input(ctx context.Context, actor *typo3.BackendUser, p chat.InputParams) (chat.View, error)
	Archive(ctx context.Context, actor *typo3.BackendUser, id int64) (chat.View, error)
}

// Runtime is what the pages need of the agent runtime; *agent.Runtime
// implements it. It decides who may see and act on which run.
type Runtime interface {
	Runs(ctx context.Context, actor *typo3.BackendUser, access agent.Access, p store.ListRunsParams) (agent.RunsPage, error)
	Events(ctx context.Context, actor *typo3.BackendUser, access agent.Access, id string, after int64) ([]store.RunEvent, error)
	Inbox(ctx context.Context, actor *typo3.BackendUser, access agent.Access) ([]agent.InboxItem, error)
	Pending(ctx context.Context, actor *typo3.BackendUser, access agent.Access, id string) (agent.InboxItem, error)
	Cancel(ctx context.Context, actor *typo3.BackendUser, access agent.Access, id string) (bool, error)
	Approve(ctx context.Context, p agent.ApproveParams) (agent.Result, error)
	SubmitInput(ctx context.Context, p agent.SubmitInputParams) (agent.Result, error)
}

// Params configure a Console. Auth and Runtime are required; a nil
// Chat shows the chat as unavailable.
type Params struct {
	Auth     Auth
	Chat     Chat
	Runtime  Runtime
	Logger   *slog.Logger
	SiteName string
	Version  string
	// Now is the clock of "today" on the dashboard; nil means time.Now.
	Now func() time.Time
	// Gate serves the tools page and what the approval card says about
	// a call's tool; nil shows neither.
	Gate *gate.Gate
	// StreamPath is the event stream of a conversation, with %d for its
	// id (the API's stream); "" polls only.
	StreamPath string
	// Ops serve the Usage, Tokens and Settings pages and the run
	// playground (ops.go); nil hides them.
	Ops *Ops
}

// Console serves the pages. It is safe for concurrent use.
type Console struct {
	p     Params
	pages map[string]*template.Template
}

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// Assets are the embedded files served under /assets/.
func Assets() fs.FS {
	sub, err := fs.Sub(assetFS, "assets")
	if err != nil {
		panic(err)
	}
	return sub
}

// New builds a Console; it panics on a template that does not parse,
// which the package's tests rule out.
func New(p Params) *Console {
	if p.Logger == nil {
		p.Logger = slog.New(slog.DiscardHandler)
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	return &Console{p: p, pages: mustParse()}
}

// Handle registers one route; the HTTP layer passes its own, which
// counts requests in its metrics.
type Handle func(pattern string, h http.HandlerFunc)

// Register registers the console's routes: "/" and the pages below it.
func (c *Console) Register(handle Handle) {
	files := http.StripPrefix("/assets/", http.FileServerFS(Assets()))
	handle("GET /assets/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=86400")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		files.ServeHTTP(w, r)
	})
	handle("GET /{$}", c.page(c.home, false))
	handle("GET /login", c.page(c.loginForm, false))
	handle("POST /login", c.page(c.loginPost, false))
	handle("POST /logout", c.page(c.logoutPost, true))
	handle("GET /chat", c.page(c.chatIndex, true))
	handle("POST /chat", c.page(c.chatCreate, true))
	handle("GET /chat/{id}", c.page(c.chatShow, true))
	handle("GET /chat/{id}/part", c.page(c.chatPart, true))
	handle("POST /chat/{id}/send", c.page(c.chatSend, true))
	handle("POST /chat/{id}/retry", c.page(c.chatRetry, true))
	handle("POST /chat/{id}/decide", c.page(c.chatDecide, true))
	handle("POST /chat/{id}/input", c.page(c.chatInput, true))
	handle("POST /chat/{id}/archive", c.page(c.chatArchive, true))
	handle("GET /inbox", c.page(c.inbox, true))
	handle("POST /inbox/{id}/decide", c.page(c.inboxDecide, true))
	handle("POST /inbox/{id}/input", c.page(c.inboxInput, true))
	handle("GET /runs", c.page(c.runsList, true))
	handle("GET /runs/{id}", c.page(c.runShow, true))
	handle("POST /runs/{id}/cancel", c.page(c.runCancel, true))
	handle("GET /tools", c.page(c.admin(c.toolsList), true))
	handle("POST /tools/{name}", c.page(c.admin(c.toolToggle), true))
	c.registerOps(handle)
}

// req is one page request: who asks, in which language.
type req struct {
	w    http.ResponseWriter
	r    *http.Request
	sess *Session
	lang string
	// htmx is set when htmx sent the request and wants a fragment.
	htmx bool
	auth Auth
}

func (q *req) user() *typo3.BackendUser { return q.sess.User }

// page wraps a handler with what every page does: security headers, the
// session (required unless auth is false), the language, and for posts
// the origin and CSRF checks.
func (c *Console) page(h func(q *req) error, auth bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		setSecurityHeaders(w)
		q := &req{w: w, r: r, htmx: r.Header.Get("HX-Request") == "true", auth: c.p.Auth}
		var err error
		if q.sess, err = c.p.Auth.Session(w, r); err != nil {
			c.fail(q, err)
			return
		}
		q.lang = c.pickLang(w, r, q.sess)
		if r.Method == http.MethodPost {
			if !sameOrigin(r) {
				c.refuse(q, http.StatusForbidden, "error.csrf")
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, maxForm)
			if err := r.ParseForm(); err != nil {
				c.refuse(q, http.StatusBadRequest, "error.form")
				return
			}
		}
		if auth && q.sess == nil {
			if r.Method == http.MethodGet {
				c.redirect(q, "/login?next="+url.QueryEscape(r.URL.RequestURI()))
				return
			}
			c.refuse(q, http.StatusUnauthorized, "error.loginRequired")
			return
		}
		if q.sess != nil && r.Method == http.MethodPost && r.URL.Path != "/login" {
			got := r.PostForm.Get(csrfField)
			if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(q.sess.CSRF)) != 1 {
				c.refuse(q, http.StatusForbidden, "error.csrf")
				return
			}
		}
		if err := h(q); err != nil {
			c.fail(q, err)
		}
	}
}

// maxForm bounds a posted form.
const maxForm = 1 << 20

// csrfField is the form field that carries the session's CSRF token.
const csrfField = "csrf"

// setSecurityHeaders: a strict CSP without inline scripts or styles, no
// framing, no sniffing, no caching of personal pages.
func setSecurityHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}

// sameOrigin refuses a cross-site post: the browser says where the form
// came from (Sec-Fetch-Site, else Origin).
func sameOrigin(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "cross-site", "same-site":
		return false
	case "same-origin", "none":
		return true
	}
	o := r.Header.Get("Origin")
	if o == "" || o == "null" {
		return o == ""
	}
	u, err := url.Parse(o)
	return err == nil && u.Host == r.Host
}

// redirect answers a post with 303 (htmx follows with HX-Redirect when the
// target is another page).
func (c *Console) redirect(q *req, to string) {
	if q.htmx {
		q.w.Header().Set("HX-Redirect", to)
		q.w.WriteHeader(http.StatusNoContent)
		return
	}
	http.Redirect(q.w, q.r, to, http.StatusSeeOther)
}

// refuse answers a refusal as a page with one sentence.
func (c *Console) refuse(q *req, status int, key string) {
	c.showError(q, status, q.t(key))
}

// fail answers an error: the console's own refusals and the services'
// as their sentence, anything else as a neutral 500 with the cause in
// the log.
func (c *Console) fail(q *req, err error) {
	var pe *pageError
	var status int
	var msg string
	if errors.As(err, &pe) {
		status, msg = pe.status, q.t(pe.key)
	} else {
		status, msg = c.p.Auth.Explain(q.lang, err)
	}
	if status >= 500 {
		c.p.Logger.Error("console request failed", "method", q.r.Method, "path", q.r.URL.Path, "err", err)
	} else {
		c.p.Logger.Debug("console request refused", "method", q.r.Method, "path", q.r.URL.Path, "status", status, "err", err)
	}
	c.showError(q, status, msg)
}

// showError answers a refusal: a page, or for htmx the sentence in the
// page's flash area.
func (c *Console) showError(q *req, status int, msg string) {
	if q.htmx {
		q.w.Header().Set("HX-Retarget", "#flash")
		q.w.Header().Set("HX-Reswap", "innerHTML")
	}
	c.render(q, status, "error.html", &pageData{Title: q.t("error.title"), Message: msg})
}

// pageError is a refusal the console itself makes.
type pageError struct {
	status int
	key    string
}

func (e *pageError) Error() string { return e.key }

func notFound() error { return &pageError{http.StatusNotFound, "error.notFound"} }

// isAdmin reports whether the person may see the admin pages.
func (q *req) isAdmin() bool { return q.sess != nil && q.sess.User.Admin }

// safeNext keeps a post-login target on this site.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return "/"
	}
	return next
}
