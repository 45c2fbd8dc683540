package web

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/t3agent/t3agent/internal/console"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/typo3"
)

// mountConsole serves the web console (package console) at "/" over the
// API's services; it needs the API.
func (s *Server) mountConsole() {
	a := s.api
	p := console.Params{
		Auth: consoleAuth{s}, Runtime: a.Runtime, Logger: s.p.Logger,
		SiteName: s.p.SiteName, Version: s.p.Version, Now: a.Now,
		StreamPath: apiPrefix + "/chat/conversations/%d/stream", Gate: a.Gate,
	}
	if a.Chat != nil {
		p.Chat = a.Chat
	}
	if o := a.Ops; o != nil {
		p.Ops = &console.Ops{Tokens: o.Tokens, Settings: o.Settings, Usage: o.Usage, Configs: o.Configs, Starter: o.Starter}
		if o.Grants != nil {
			p.Ops.Grants = o.Grants
		}
	}
	console.New(p).Register(s.handle)
}

// consoleAuth is the console's seam into sessions, logins and labels.
type consoleAuth struct{ s *Server }

func (a consoleAuth) Session(w http.ResponseWriter, r *http.Request) (*console.Session, error) {
	ck, err := r.Cookie(SessionCookie)
	if err != nil || ck.Value == "" {
		return nil, nil
	}
	c, err := a.s.sessionCaller(r.Context(), HashSecret(ck.Value))
	if errors.Is(err, errNoSession) {
		a.s.expireCookie(w, r)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &console.Session{User: c.user, CSRF: c.session.CSRFToken}, nil
}

func (a consoleAuth) Login(w http.ResponseWriter, r *http.Request, username, password string) (*typo3.BackendUser, time.Duration, error) {
	u, wait, err := a.s.checkLogin(r, username, password)
	if wait > 0 || err != nil {
		return nil, wait, err
	}
	if err := a.s.openSession(w, r, u); err != nil {
		return nil, 0, err
	}
	return u, 0, nil
}

// openSession opens a session for u and sets its cookie; the session the
// browser had is replaced, expired ones are swept.
func (s *Server) openSession(w http.ResponseWriter, r *http.Request, u *typo3.BackendUser) error {
	ctx := r.Context()
	secret, err := randomSecret()
	if err != nil {
		return err
	}
	csrf, err := randomSecret()
	if err != nil {
		return err
	}
	now := s.api.Now()
	sess := store.WebSession{IDHash: HashSecret(secret), Username: u.Username, CSRFToken: csrf, CreatedAt: now, ExpiresAt: now.Add(s.api.SessionTTL)}
	if err := s.api.Credentials.CreateWebSession(ctx, sess); err != nil {
		return fmt.Errorf("store session: %w", err)
	}
	if old, err := r.Cookie(SessionCookie); err == nil && old.Value != "" {
		if err := s.api.Credentials.DeleteWebSession(ctx, HashSecret(old.Value)); err != nil {
			s.p.Logger.Warn("deleting the replaced session", "err", err)
		}
	}
	if _, err := s.api.Credentials.DeleteExpiredWebSessions(ctx); err != nil {
		s.p.Logger.Warn("deleting expired sessions", "err", err)
	}
	http.SetCookie(w, s.sessionCookie(r, secret, int(s.api.SessionTTL/time.Second)))
	s.p.Logger.Info("login", "username", u.Username, "ip", s.clientIP(r), "via", "console")
	return nil
}

func (a consoleAuth) Logout(w http.ResponseWriter, r *http.Request) error {
	if ck, err := r.Cookie(SessionCookie); err == nil && ck.Value != "" {
		// The session's open streams end at once, as on the API's logout.
		a.s.sessions.end(HashSecret(ck.Value))
		if err := a.s.api.Credentials.DeleteWebSession(r.Context(), HashSecret(ck.Value)); err != nil {
			return fmt.Errorf("delete session: %w", err)
		}
	}
	a.s.expireCookie(w, r)
	return nil
}

func (consoleAuth) Label(lang, key string) (string, bool) {
	s, ok := labels[lang][key]
	return s, ok
}

// Explain is the API's classification of an error, its sentence in lang.
func (consoleAuth) Explain(lang string, err error) (int, string) {
	status, body := classify(err)
	if s, ok := labels[lang]["error."+body.Code]; ok && body.Code != "badRequest" {
		return status, s
	}
	return status, body.Message
}
