package oauth

import (
	"crypto/subtle"
	"embed"
	"errors"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/t3agent/t3agent/internal/store"
)

// revokedKept is how long a revoked grant stays listed (`grants list
// --all`) before a sweep deletes it.
const revokedKept = 30 * 24 * time.Hour

//go:embed consent.html
var consentFS embed.FS

var consentTemplate = template.Must(template.ParseFS(consentFS, "consent.html"))

// consentView is what the consent page shows.
type consentView struct {
	SiteName string
	ID       string
	Client   string
	Redirect string
	Resource string
	// Error is a sentence for the person; Username refills the form.
	Error    string
	Username string
	// Secret, once the person logged in, binds the allow/deny form to
	// this login; Tools is what the host will get.
	Secret string
	User   string
	Tools  []ConsentTool
	Nonce  string
}

// consentPage is the login form of a waiting authorization request.
func (s *Server) consentPage(w http.ResponseWriter, r *http.Request) {
	if _, v, ok := s.consentRequest(w, r, r.URL.Query().Get("id")); ok {
		s.render(w, r, http.StatusOK, v)
	}
}

// consentRequest loads the request and the view's common part, or
// answers that it expired.
func (s *Server) consentRequest(w http.ResponseWriter, r *http.Request, id string) (store.OAuthRequest, consentView, bool) {
	v := consentView{SiteName: s.p.SiteName, ID: id}
	req, err := s.p.Store.OAuthRequest(r.Context(), id)
	if err != nil || req.Done {
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			s.log.ErrorContext(r.Context(), "cannot read an OAuth request", "error", err.Error())
		}
		v.ID, v.Error = "", "This authorization request has expired or was already answered. Start again from your MCP host."
		s.render(w, r, http.StatusBadRequest, v)
		return req, v, false
	}
	v.Client, v.Resource, v.Redirect = req.ClientID, req.Resource, req.RedirectURI
	if c, err := s.p.Store.OAuthClient(r.Context(), req.ClientID); err == nil {
		v.Client = c.Name
	}
	return req, v, true
}

// consentPost handles the three buttons: log in, allow, deny.
func (s *Server) consentPost(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "The form could not be read.", http.StatusBadRequest)
		return
	}
	req, v, ok := s.consentRequest(w, r, r.PostForm.Get("id"))
	if !ok {
		return
	}
	ctx := r.Context()
	switch r.PostForm.Get("action") {
	case "login":
		v.Username = r.PostForm.Get("username")
		u, err := s.p.Login(r, v.Username, r.PostForm.Get("password"))
		var le *LoginError
		switch {
		case errors.As(err, &le):
			v.Error = capitalize(le.Error()) + "."
			code := http.StatusUnauthorized
			if le.RetryAfter > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(le.RetryAfter.Seconds()))))
				code = http.StatusTooManyRequests
			}
			s.render(w, r, code, v)
			return
		case err != nil:
			s.log.ErrorContext(ctx, "consent login failed", "error", err.Error())
			v.Error = "The login could not be checked right now; try again."
			s.render(w, r, http.StatusServiceUnavailable, v)
			return
		}
		// Logins are what lead to new grants and tokens, so they also sweep
		// the expired rows: no background sweeper is needed.
		if _, err := s.p.Store.DeleteExpiredOAuth(ctx, s.now().Add(-revokedKept)); err != nil {
			s.log.WarnContext(ctx, "cannot delete expired OAuth rows", "error", err.Error())
		}
		secret := randomID()
		if err := s.p.Store.AuthenticateOAuthRequest(ctx, store.AuthenticateOAuthRequestParams{ID: req.ID, Username: u.Username, ConsentHash: hashOf(secret)}); err != nil {
			v.ID, v.Error = "", "This authorization request has expired or was already answered. Start again from your MCP host."
			s.render(w, r, http.StatusBadRequest, v)
			return
		}
		tools, err := s.p.Tools(ctx, u, req.Resource)
		if err != nil {
			s.log.ErrorContext(ctx, "cannot list the tools for consent", "error", err.Error())
			v.Error = "The tools could not be listed right now; try again."
			s.render(w, r, http.StatusServiceUnavailable, v)
			return
		}
		v.Secret, v.User, v.Tools = secret, u.Username, tools
		s.render(w, r, http.StatusOK, v)
	case "allow":
		if err := s.p.Store.CompleteOAuthRequest(ctx, req.ID, hashOf(r.PostForm.Get("secret"))); err != nil {
			v.Error = "Log in again to allow this host."
			s.render(w, r, http.StatusForbidden, v)
			return
		}
		http.Redirect(w, r, "/authorize/callback?id="+url.QueryEscape(req.ID), http.StatusSeeOther)
	case "deny":
		got := hashOf(r.PostForm.Get("secret"))
		if req.ConsentHash == "" || subtle.ConstantTimeCompare([]byte(got), []byte(req.ConsentHash)) != 1 {
			v.Error = "Log in again to answer this host."
			s.render(w, r, http.StatusForbidden, v)
			return
		}
		if err := s.p.Store.DeleteOAuthRequest(ctx, req.ID); err != nil {
			s.log.WarnContext(ctx, "cannot delete a denied OAuth request", "error", err.Error())
		}
		u, err := url.Parse(req.RedirectURI)
		if err != nil {
			http.Error(w, "The host's redirect URI is not usable.", http.StatusBadRequest)
			return
		}
		q := u.Query()
		q.Set("error", "access_denied")
		q.Set("error_description", "The person denied access.")
		if req.State != "" {
			q.Set("state", req.State)
		}
		q.Set("iss", BaseURL(r))
		u.RawQuery = q.Encode()
		http.Redirect(w, r, u.String(), http.StatusSeeOther)
	default:
		http.Error(w, "Unknown action.", http.StatusBadRequest)
	}
}

// render writes the page under a strict CSP: no script at all, the one
// style block by nonce, forms only to this server and, for the redirect
// that follows an answer, to the host's redirect URI.
func (s *Server) render(w http.ResponseWriter, r *http.Request, code int, v consentView) {
	v.Nonce = randomID()
	formAction := "'self'"
	if u, err := url.Parse(v.Redirect); err == nil && u.Scheme != "" {
		if u.Scheme == "http" || u.Scheme == "https" {
			formAction += " " + u.Scheme + "://" + u.Host
		} else {
			formAction += " " + u.Scheme + ":"
		}
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'nonce-"+v.Nonce+"'; form-action "+formAction+"; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	if err := consentTemplate.Execute(w, v); err != nil {
		s.log.ErrorContext(r.Context(), "rendering the consent page", "error", err.Error())
	}
}
