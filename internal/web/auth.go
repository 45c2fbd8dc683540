package web

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/servicetoken"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/typo3"
)

// SessionCookie is the name of the login cookie. Its value is a random
// secret; the store keeps only its SHA-256.
const SessionCookie = "t3agent_session"

// CSRFHeader carries the session's CSRF token on every unsafe request
// made with the cookie.
const CSRFHeader = "X-CSRF-Token"

// maxBearerLen bounds a bearer token before it is hashed.
const maxBearerLen = 512

// touchEvery limits how often a token's last use is written.
const touchEvery = time.Minute

// errNoSession marks a session cookie that names no live session; the
// cookie is then expired in the answer.
var errNoSession = errors.New("no such session")

// HashSecret is the SHA-256 (hex) under which a session secret or a
// service token is stored and looked up.
func HashSecret(secret string) string { return servicetoken.Hash(secret) }

// randomSecret is 32 random bytes, base64url.
func randomSecret() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// authenticate finds the caller of a request: a bearer token when an
// Authorization header is present, else the session cookie.
func (s *Server) authenticate(r *http.Request) (*caller, error) {
	if h := r.Header.Get("Authorization"); h != "" {
		return s.bearer(r, h)
	}
	ck, err := r.Cookie(SessionCookie)
	if err != nil || ck.Value == "" {
		return nil, apiErr(http.StatusUnauthorized, "unauthorized", nil)
	}
	return s.sessionCaller(r.Context(), HashSecret(ck.Value))
}

// recheck authenticates a caller again, as a long request (a stream)
// does while it runs: the session or token must still be live and its
// user still able to act. It returns the caller with the user loaded
// afresh.
func (s *Server) recheck(ctx context.Context, c *caller) (*caller, error) {
	if c.session != nil {
		return s.sessionCaller(ctx, c.session.IDHash)
	}
	return s.tokenCaller(ctx, c.tokenHash)
}

// bearer authenticates a service token. Unknown, revoked and expired
// tokens, and tokens whose backend user cannot act, are all 401
// invalidToken; the log says which.
func (s *Server) bearer(r *http.Request, header string) (*caller, error) {
	scheme, tok, ok := strings.Cut(header, " ")
	tok = strings.TrimSpace(tok)
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" || len(tok) > maxBearerLen {
		return nil, apiErr(http.StatusUnauthorized, "invalidToken", errors.New("malformed Authorization header"))
	}
	return s.tokenCaller(r.Context(), HashSecret(tok))
}

// tokenCaller authenticates the service token stored under hash.
func (s *Server) tokenCaller(ctx context.Context, hash string) (*caller, error) {
	t, err := s.api.Credentials.ServiceTokenByHash(ctx, hash)
	if errors.Is(err, store.ErrNotFound) {
		return nil, apiErr(http.StatusUnauthorized, "invalidToken", errors.New("unknown token"))
	}
	if err != nil {
		return nil, fmt.Errorf("look up service token: %w", err)
	}
	now := s.api.Now()
	switch {
	case t.Revoked:
		return nil, apiErr(http.StatusUnauthorized, "invalidToken", fmt.Errorf("token %s is revoked", t.Name))
	case !t.ExpiresAt.IsZero() && !now.Before(t.ExpiresAt):
		return nil, apiErr(http.StatusUnauthorized, "invalidToken", fmt.Errorf("token %s expired at %s", t.Name, t.ExpiresAt))
	}
	u, err := s.api.Site.BackendUserByName(ctx, t.Username)
	if errors.Is(err, typo3.ErrUserCannotAct) {
		return nil, apiErr(http.StatusUnauthorized, "invalidToken", fmt.Errorf("token %s acts as %s, who cannot act: %w", t.Name, t.Username, err))
	}
	if err != nil {
		return nil, fmt.Errorf("load the backend user of token %s: %w", t.Name, err)
	}
	if t.LastUsedAt.IsZero() || now.Sub(t.LastUsedAt) >= touchEvery {
		if err := s.api.Credentials.TouchServiceToken(ctx, t.ID, now); err != nil {
			s.p.Logger.Warn("recording a service token's use", "token", t.Name, "err", err)
		}
	}
	return &caller{user: u, access: agent.Access{Token: t.Name, Scopes: t.Scopes}, tokenHash: hash}, nil
}

// sessionCaller authenticates the session stored under hash and loads
// its user afresh. The session of a user who cannot act any more is
// deleted, and its streams end.
func (s *Server) sessionCaller(ctx context.Context, hash string) (*caller, error) {
	sess, err := s.api.Credentials.WebSession(ctx, hash)
	if errors.Is(err, store.ErrNotFound) || err == nil && !s.api.Now().Before(sess.ExpiresAt) {
		return nil, apiErr(http.StatusUnauthorized, "unauthorized", errNoSession)
	}
	if err != nil {
		return nil, fmt.Errorf("look up session: %w", err)
	}
	u, err := s.api.Site.BackendUserByName(ctx, sess.Username)
	if errors.Is(err, typo3.ErrUserCannotAct) {
		s.endSession(ctx, hash)
		return nil, apiErr(http.StatusUnauthorized, "unauthorized", fmt.Errorf("%s cannot act any more: %w", sess.Username, errNoSession))
	}
	if err != nil {
		return nil, fmt.Errorf("load the backend user of a session: %w", err)
	}
	return &caller{user: u, session: &sess}, nil
}

// endSession deletes a session that must end and ends its streams in
// this process (streams elsewhere notice at their next check).
func (s *Server) endSession(ctx context.Context, hash string) {
	s.sessions.end(hash)
	if err := s.api.Credentials.DeleteWebSession(ctx, hash); err != nil {
		s.p.Logger.Warn("deleting a session", "err", err)
	}
}

func (s *Server) csrfOK(r *http.Request, sess *store.WebSession) bool {
	got := r.Header.Get(CSRFHeader)
	return got != "" && sess.CSRFToken != "" && subtle.ConstantTimeCompare([]byte(got), []byte(sess.CSRFToken)) == 1
}

// secureRequest reports whether the client reached us over TLS, directly
// or through a proxy that says so.
func secureRequest(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

func (s *Server) sessionCookie(r *http.Request, value string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name:     SessionCookie,
		Value:    value,
		Path:     "/",
		MaxAge:   maxAge,
		HttpOnly: true,
		Secure:   secureRequest(r),
		SameSite: http.SameSiteLaxMode,
	}
}

func (s *Server) expireCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, s.sessionCookie(r, "", -1))
}

// userJSON is a backend user as the API shows it.
type userJSON struct {
	UID      int64   `json:"uid"`
	Username string  `json:"username"`
	RealName string  `json:"realName,omitempty"`
	Email    string  `json:"email,omitempty"`
	Admin    bool    `json:"admin"`
	Groups   []int64 `json:"groups"`
}

func userOf(u *typo3.BackendUser) userJSON {
	g := u.GroupUIDs
	if g == nil {
		g = []int64{}
	}
	return userJSON{UID: u.UID, Username: u.Username, RealName: u.RealName, Email: u.Email, Admin: u.Admin, Groups: g}
}

type loginBody struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// login checks TYPO3 backend credentials and opens a session. It demands
// a JSON content type: a cross-site form cannot send one without a CORS
// preflight, which keeps other sites from logging a browser in.
func (s *Server) login(w http.ResponseWriter, r *http.Request, _ *caller) {
	if mt, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";"); strings.TrimSpace(strings.ToLower(mt)) != "application/json" {
		s.fail(w, r, apiErr(http.StatusUnsupportedMediaType, "unsupportedMediaType", nil))
		return
	}
	var body loginBody
	if err := decode(r, &body, false); err != nil {
		s.fail(w, r, err)
		return
	}
	if body.Username == "" || body.Password == "" {
		s.fail(w, r, badRequest("Give a username and a password."))
		return
	}
	ip := s.clientIP(r)
	u, wait, err := s.checkLogin(r, body.Username, body.Password)
	switch {
	case wait > 0:
		w.Header().Set("Retry-After", retryAfter(wait))
		s.fail(w, r, apiErr(http.StatusTooManyRequests, "rateLimited", fmt.Errorf("login of %q from %s", logName(body.Username), ip)))
		return
	case errors.Is(err, typo3.ErrAuthFailed):
		s.fail(w, r, apiErr(http.StatusUnauthorized, "invalidCredentials", err))
		return
	case errors.Is(err, typo3.ErrPasswordHashUnusable):
		s.fail(w, r, apiErr(http.StatusUnauthorized, "passwordHashUnusable", err))
		return
	case err != nil:
		s.fail(w, r, fmt.Errorf("authenticate %q: %w", logName(body.Username), err))
		return
	}
	ctx := r.Context()
	secret, err := randomSecret()
	if err != nil {
		s.fail(w, r, err)
		return
	}
	csrf, err := randomSecret()
	if err != nil {
		s.fail(w, r, err)
		return
	}
	now := s.api.Now()
	sess := store.WebSession{IDHash: HashSecret(secret), Username: u.Username, CSRFToken: csrf, CreatedAt: now, ExpiresAt: now.Add(s.api.SessionTTL)}
	if err := s.api.Credentials.CreateWebSession(ctx, sess); err != nil {
		s.fail(w, r, fmt.Errorf("store session: %w", err))
		return
	}
	// A login replaces the session the browser had.
	if old, err := r.Cookie(SessionCookie); err == nil && old.Value != "" {
		s.endSession(ctx, HashSecret(old.Value))
	}
	// Logins are what adds sessions, so they also sweep the expired ones:
	// no background sweeper is needed to keep the table small.
	if _, err := s.api.Credentials.DeleteExpiredWebSessions(ctx); err != nil {
		s.p.Logger.Warn("deleting expired sessions", "err", err)
	}
	http.SetCookie(w, s.sessionCookie(r, secret, int(s.api.SessionTTL/time.Second)))
	s.p.Logger.Info("login", "username", u.Username, "ip", ip)
	writeJSON(w, http.StatusOK, map[string]any{"user": userOf(u), "csrfToken": csrf, "expiresAt": sess.ExpiresAt.UTC()})
}

// retryAfter is a wait as a Retry-After header value: whole seconds,
// rounded up.
func retryAfter(wait time.Duration) string {
	return strconv.Itoa(int(math.Ceil(wait.Seconds())))
}

// Reasons of t3agent_login_failures_total.
const (
	failWrongCredentials = "wrong_credentials"
	failDisabled         = "disabled"
	failLegacyHash       = "legacy_hash"
	failRateLimited      = "rate_limited"
)

// maxUsernameLen bounds a username as the limiter and the log keep it;
// TYPO3's usernames are at most 50 characters.
const maxUsernameLen = 255

// logName is a username as the limiter and the log keep it: at most
// maxUsernameLen bytes.
func logName(username string) string {
	if len(username) > maxUsernameLen {
		return username[:maxUsernameLen]
	}
	return username
}

// checkLogin checks TYPO3 backend credentials under the login limit (per
// client address, and per address and username): the API's login and
// the MCP consent page both log in through it. A refused attempt returns
// the wait; a failure that is not the client's (the site database) is
// given back. Every refusal is logged and counted by reason.
func (s *Server) checkLogin(r *http.Request, username, password string) (*typo3.BackendUser, time.Duration, error) {
	ip := s.clientIP(r)
	name := logName(username)
	attempt, wait := s.limiter.take(ip, name)
	if attempt == nil {
		s.loginFailures.WithLabelValues(failRateLimited).Inc()
		s.p.Logger.Warn("login refused: too many failed attempts", "username", name, "ip", ip, "retry_after", retryAfter(wait)+"s")
		return nil, wait, nil
	}
	// A username no backend user can have fails like a wrong one (the
	// site database would refuse a NUL outright), and counts.
	var u *typo3.BackendUser
	var err error
	if len(username) > maxUsernameLen || !validText(username) {
		err = typo3.ErrAuthFailed
	} else {
		u, err = s.api.Site.Authenticate(r.Context(), username, password)
	}
	var af *typo3.AuthFailure
	switch {
	case err == nil:
		attempt.succeeded()
		return u, 0, nil
	case errors.As(err, &af) && af.Inactive != "" && af.Inactive != typo3.ReasonUnknown:
		s.loginFailures.WithLabelValues(failDisabled).Inc()
		s.p.Logger.Info("login failed: the user cannot act", "username", name, "ip", ip, "reason", string(af.Inactive))
		return nil, 0, err
	case errors.Is(err, typo3.ErrAuthFailed):
		s.loginFailures.WithLabelValues(failWrongCredentials).Inc()
		s.p.Logger.Info("login failed", "username", name, "ip", ip)
		return nil, 0, err
	case errors.Is(err, typo3.ErrPasswordHashUnusable):
		s.loginFailures.WithLabelValues(failLegacyHash).Inc()
		s.p.Logger.Warn("login refused: unusable password hash", "username", name, "ip", ip, "err", err)
		return nil, 0, err
	}
	attempt.refund()
	return nil, 0, err
}

// logout deletes the session and ends its open streams at once.
func (s *Server) logout(w http.ResponseWriter, r *http.Request, c *caller) {
	s.sessions.end(c.session.IDHash)
	if err := s.api.Credentials.DeleteWebSession(r.Context(), c.session.IDHash); err != nil {
		s.fail(w, r, fmt.Errorf("delete session: %w", err))
		return
	}
	s.expireCookie(w, r)
	w.WriteHeader(http.StatusNoContent)
}

// me answers who is calling: the user, and the session's CSRF token (so a
// reloaded page can find it again) or the token's name and scopes.
func (s *Server) me(w http.ResponseWriter, _ *http.Request, c *caller) {
	out := map[string]any{"user": userOf(c.user)}
	if c.session != nil {
		out["auth"] = "session"
		out["csrfToken"] = c.session.CSRFToken
		out["expiresAt"] = c.session.ExpiresAt.UTC()
	} else {
		scopes := c.access.Scopes
		if scopes == nil {
			scopes = []store.Scope{}
		}
		out["auth"] = "token"
		out["token"] = c.access.Token
		out["scopes"] = scopes
	}
	writeJSON(w, http.StatusOK, out)
}

// clientIP is the address the login limit keys on: the peer's, or,
// when the peer is one of API.TrustedProxies, the last address in
// X-Forwarded-For that is not a trusted proxy. Without trusted proxies
// X-Forwarded-For is ignored: any client could send one to escape its
// limit.
func (s *Server) clientIP(r *http.Request) string {
	peer := r.RemoteAddr
	if host, _, err := net.SplitHostPort(peer); err == nil {
		peer = host
	}
	if len(s.api.TrustedProxies) == 0 || !s.trustedProxy(peer) {
		return peer
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop := strings.TrimSpace(hops[i])
		if _, err := netip.ParseAddr(hop); err != nil {
			// Not an address: no proxy of ours wrote it.
			return peer
		}
		if !s.trustedProxy(hop) {
			return hop
		}
	}
	return peer
}

func (s *Server) trustedProxy(addr string) bool {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return false
	}
	a = a.Unmap()
	for _, p := range s.api.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
