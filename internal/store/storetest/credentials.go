package storetest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/store"
)

// ---- service tokens and browser sessions ----

// testCredentials runs every credential test; Run lists it as one entry.
func testCredentials(t *testing.T, h harness) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, h harness)
	}{
		{"TokenRoundTrip", testTokenRoundTrip},
		{"TokenNameTaken", testTokenNameTaken},
		{"TokenRevokeAndTouch", testTokenRevokeTouch},
		{"TokenInvalid", testTokenInvalid},
		{"Sessions", testWebSessions},
		{"SessionExpiry", testWebSessionExpiry},
		{"SessionInvalid", testWebSessionInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, h)
		})
	}
}

// hashOf is what the API stores for a secret.
func hashOf(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

func newToken(name string) store.CreateServiceTokenParams {
	return store.CreateServiceTokenParams{
		Name: name, Username: "ci-bot", Scopes: []store.Scope{store.ScopeAgentRun, store.ScopeAgentRead},
		SecretHash: hashOf("secret-" + name), CreatedBy: "admin",
	}
}

func createToken(t *testing.T, st store.Store, p store.CreateServiceTokenParams) store.ServiceToken {
	t.Helper()
	tok, err := st.CreateServiceToken(t.Context(), p)
	if err != nil {
		t.Fatalf("CreateServiceToken %s: %v", p.Name, err)
	}
	return tok
}

func tokenByHash(t *testing.T, st store.Store, hash string) store.ServiceToken {
	t.Helper()
	tok, err := st.ServiceTokenByHash(t.Context(), hash)
	if err != nil {
		t.Fatalf("ServiceTokenByHash: %v", err)
	}
	return tok
}

func sameToken(a, b store.ServiceToken) bool {
	return a.ID == b.ID && a.Name == b.Name && a.Username == b.Username && slices.Equal(a.Scopes, b.Scopes) &&
		a.SecretHash == b.SecretHash && a.CreatedBy == b.CreatedBy && a.CreatedAt.Equal(b.CreatedAt) &&
		a.ExpiresAt.Equal(b.ExpiresAt) && a.LastUsedAt.Equal(b.LastUsedAt) && a.Revoked == b.Revoked
}

func testTokenRoundTrip(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	if list, err := f.st.ServiceTokens(ctx); err != nil || list == nil || len(list) != 0 {
		t.Fatalf("ServiceTokens on an empty store = %v, %v; want []", list, err)
	}
	p := newToken("deploy")
	p.ExpiresAt = f.clock.Now().Add(90 * 24 * time.Hour)
	tok := createToken(t, f.st, p)
	if tok.ID <= 0 || tok.Name != "deploy" || tok.Username != "ci-bot" || tok.SecretHash != p.SecretHash || tok.CreatedBy != "admin" ||
		tok.Revoked || !tok.LastUsedAt.IsZero() || !slices.Equal(tok.Scopes, p.Scopes) {
		t.Errorf("created = %+v", tok)
	}
	checkTime(t, "CreatedAt", tok.CreatedAt, f.clock.Stamp())
	checkTime(t, "ExpiresAt", tok.ExpiresAt, f.clock.Stamp().Add(90*24*time.Hour))
	if got := tokenByHash(t, f.st, p.SecretHash); !sameToken(got, tok) {
		t.Errorf("by hash = %+v, want %+v", got, tok)
	}
	if _, err := f.st.ServiceTokenByHash(ctx, hashOf("unknown")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown hash: %v, want ErrNotFound", err)
	}

	// Without an expiry, every scope; listed by name, bytewise.
	all := newToken("Zeta")
	all.Scopes = store.Scopes()
	zeta := createToken(t, f.st, all)
	if !zeta.ExpiresAt.IsZero() || !slices.Equal(zeta.Scopes, store.Scopes()) {
		t.Errorf("token without expiry = %+v", zeta)
	}
	createToken(t, f.st, newToken("alpha"))
	createToken(t, f.st, newToken("ä-umlaut"))
	list, err := f.st.ServiceTokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tk := range list {
		names = append(names, tk.Name)
	}
	if want := []string{"Zeta", "alpha", "deploy", "ä-umlaut"}; !slices.Equal(names, want) {
		t.Errorf("names = %q, want %q", names, want)
	}
	if !sameToken(list[2], tok) {
		t.Errorf("listed %+v, want %+v", list[2], tok)
	}
}

func testTokenNameTaken(t *testing.T, h harness) {
	f := h.setup(t)
	first := createToken(t, f.st, newToken("deploy"))
	again := newToken("deploy")
	again.SecretHash = hashOf("another secret")
	again.Username = "someone-else"
	_, err := f.st.CreateServiceToken(t.Context(), again)
	if !errors.Is(err, store.ErrConflict) || !errors.Is(err, store.ErrExists) {
		t.Fatalf("taken name: %v, want ErrConflict", err)
	}
	if !strings.Contains(err.Error(), `"deploy"`) {
		t.Errorf("error %q does not name the token", err)
	}
	// The first stays as it was, and the second secret opens nothing.
	if got := tokenByHash(t, f.st, first.SecretHash); !sameToken(got, first) {
		t.Errorf("first token = %+v, want %+v", got, first)
	}
	if _, err := f.st.ServiceTokenByHash(t.Context(), again.SecretHash); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the refused token's hash: %v, want ErrNotFound", err)
	}
	// Several at once: exactly one wins.
	err = runAll(6, func(i int) error {
		p := newToken("race")
		p.SecretHash = hashOf(strings.Repeat("s", i+1))
		_, err := f.st.CreateServiceToken(t.Context(), p)
		return err
	})
	var lost int
	for _, e := range unwrapJoined(err) {
		if !errors.Is(e, store.ErrConflict) {
			t.Errorf("a losing create: %v, want ErrConflict", e)
		}
		lost++
	}
	if lost != 5 {
		t.Errorf("%d creates lost, want 5", lost)
	}
}

func testTokenRevokeTouch(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	tok := createToken(t, f.st, newToken("deploy"))
	other := createToken(t, f.st, newToken("other"))

	// A use at an explicit time, then a late report of an earlier one.
	used := f.clock.Now().Add(time.Hour)
	if err := f.st.TouchServiceToken(ctx, tok.ID, used); err != nil {
		t.Fatal(err)
	}
	if err := f.st.TouchServiceToken(ctx, tok.ID, used.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	checkTime(t, "LastUsedAt", tokenByHash(t, f.st, tok.SecretHash).LastUsedAt, used.UTC().Truncate(time.Microsecond))
	// Zero means now, by the store's clock.
	if err := f.st.TouchServiceToken(ctx, other.ID, time.Time{}); err != nil {
		t.Fatal(err)
	}
	checkTime(t, "LastUsedAt (store clock)", tokenByHash(t, f.st, other.SecretHash).LastUsedAt, f.clock.Stamp())
	if err := f.st.TouchServiceToken(ctx, other.ID+1000, time.Time{}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("touch of an unknown token: %v, want ErrNotFound", err)
	}

	if err := f.st.RevokeServiceToken(ctx, "deploy"); err != nil {
		t.Fatal(err)
	}
	// Revoked tokens are still found, so the API can say why it refuses.
	got := tokenByHash(t, f.st, tok.SecretHash)
	if !got.Revoked {
		t.Errorf("revoked token = %+v", got)
	}
	if tokenByHash(t, f.st, other.SecretHash).Revoked {
		t.Error("revoking one token revoked another")
	}
	if err := f.st.RevokeServiceToken(ctx, "deploy"); err != nil {
		t.Errorf("second revoke: %v", err)
	}
	if err := f.st.RevokeServiceToken(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("revoke of an unknown token: %v, want ErrNotFound", err)
	}
}

func testTokenInvalid(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	create := func(mod func(p *store.CreateServiceTokenParams)) func() error {
		return func() error {
			p := newToken("t")
			mod(&p)
			_, err := f.st.CreateServiceToken(ctx, p)
			return err
		}
	}
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"no name", create(func(p *store.CreateServiceTokenParams) { p.Name = "" })},
		{"long name", create(func(p *store.CreateServiceTokenParams) { p.Name = strings.Repeat("n", store.MaxNameLen+1) })},
		{"no user", create(func(p *store.CreateServiceTokenParams) { p.Username = "" })},
		{"no creator", create(func(p *store.CreateServiceTokenParams) { p.CreatedBy = "" })},
		{"no scopes", create(func(p *store.CreateServiceTokenParams) { p.Scopes = nil })},
		{"unknown scope", create(func(p *store.CreateServiceTokenParams) { p.Scopes = []store.Scope{"agent:everything"} })},
		{"scope twice", create(func(p *store.CreateServiceTokenParams) {
			p.Scopes = []store.Scope{store.ScopeAdmin, store.ScopeAgentRead, store.ScopeAdmin}
		})},
		{"plaintext secret", create(func(p *store.CreateServiceTokenParams) { p.SecretHash = "t3a_0123456789abcdef" })},
		{"upper-case hash", create(func(p *store.CreateServiceTokenParams) { p.SecretHash = strings.ToUpper(hashOf("x")) })},
		{"no hash", create(func(p *store.CreateServiceTokenParams) { p.SecretHash = "" })},
		{"by hash: not a hash", func() error { _, err := f.st.ServiceTokenByHash(ctx, "secret"); return err }},
		{"revoke: no name", func() error { return f.st.RevokeServiceToken(ctx, "") }},
		{"touch: id 0", func() error { return f.st.TouchServiceToken(ctx, 0, time.Time{}) }},
	} {
		if err := tc.call(); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", tc.name, err)
		}
	}
	if list, err := f.st.ServiceTokens(ctx); err != nil || len(list) != 0 {
		t.Errorf("refused creates stored %v, %v", list, err)
	}
}

func newSession(f fixture, cookie string, ttl time.Duration) store.WebSession {
	return store.WebSession{IDHash: hashOf(cookie), Username: "editor", CSRFToken: "csrf-" + cookie, ExpiresAt: f.clock.Now().Add(ttl)}
}

func testWebSessions(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	s := newSession(f, "cookie-1", time.Hour)
	if err := f.st.CreateWebSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	got, err := f.st.WebSession(ctx, s.IDHash)
	if err != nil {
		t.Fatal(err)
	}
	if got.IDHash != s.IDHash || got.Username != "editor" || got.CSRFToken != "csrf-cookie-1" {
		t.Errorf("session = %+v", got)
	}
	checkTime(t, "CreatedAt", got.CreatedAt, f.clock.Stamp())
	checkTime(t, "ExpiresAt", got.ExpiresAt, f.clock.Stamp().Add(time.Hour))
	// A given CreatedAt is kept.
	s2 := newSession(f, "cookie-2", time.Hour)
	s2.CreatedAt = f.clock.Now().Add(-time.Minute)
	if err := f.st.CreateWebSession(ctx, s2); err != nil {
		t.Fatal(err)
	}
	if got, err := f.st.WebSession(ctx, s2.IDHash); err != nil {
		t.Error(err)
	} else {
		checkTime(t, "given CreatedAt", got.CreatedAt, f.clock.Stamp().Add(-time.Minute))
	}
	dup := newSession(f, "cookie-1", 2*time.Hour)
	dup.Username = "admin"
	if err := f.st.CreateWebSession(ctx, dup); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a taken session id: %v, want ErrConflict", err)
	}
	if got, _ := f.st.WebSession(ctx, s.IDHash); got.Username != "editor" {
		t.Errorf("a refused create replaced the session: %+v", got)
	}
	if _, err := f.st.WebSession(ctx, hashOf("cookie-unknown")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown session: %v, want ErrNotFound", err)
	}
	// Logout; a second logout is no error.
	for range 2 {
		if err := f.st.DeleteWebSession(ctx, s.IDHash); err != nil {
			t.Errorf("DeleteWebSession: %v", err)
		}
	}
	if _, err := f.st.WebSession(ctx, s.IDHash); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("session after logout: %v, want ErrNotFound", err)
	}
	if _, err := f.st.WebSession(ctx, s2.IDHash); err != nil {
		t.Errorf("the other session after logout: %v", err)
	}
}

func testWebSessionExpiry(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	short := newSession(f, "short", time.Minute)
	long := newSession(f, "long", time.Hour)
	for _, s := range []store.WebSession{short, long} {
		if err := f.st.CreateWebSession(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := f.st.DeleteExpiredWebSessions(ctx); err != nil || n != 0 {
		t.Errorf("DeleteExpiredWebSessions before any expiry = %d, %v", n, err)
	}
	f.clock.Advance(time.Minute - time.Microsecond)
	if _, err := f.st.WebSession(ctx, short.IDHash); err != nil {
		t.Errorf("a microsecond before expiry: %v", err)
	}
	// At ExpiresAt the session is over.
	f.clock.Advance(time.Microsecond)
	if _, err := f.st.WebSession(ctx, short.IDHash); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("at expiry: %v, want ErrNotFound", err)
	}
	if _, err := f.st.WebSession(ctx, long.IDHash); err != nil {
		t.Errorf("the long session: %v", err)
	}
	if n, err := f.st.DeleteExpiredWebSessions(ctx); err != nil || n != 1 {
		t.Errorf("DeleteExpiredWebSessions = %d, %v; want 1", n, err)
	}
	if n := countRows(t, f.dsn, `SELECT COUNT(*) FROM web_sessions`); n != 1 {
		t.Errorf("%d sessions stored, want the long one only", n)
	}
	f.clock.Advance(time.Hour)
	if n, err := f.st.DeleteExpiredWebSessions(ctx); err != nil || n != 1 {
		t.Errorf("DeleteExpiredWebSessions later = %d, %v; want 1", n, err)
	}
}

func testWebSessionInvalid(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	create := func(mod func(s *store.WebSession)) func() error {
		return func() error {
			s := newSession(f, "c", time.Hour)
			mod(&s)
			return f.st.CreateWebSession(ctx, s)
		}
	}
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"plain cookie", create(func(s *store.WebSession) { s.IDHash = "cookie" })},
		{"no user", create(func(s *store.WebSession) { s.Username = "" })},
		{"no CSRF token", create(func(s *store.WebSession) { s.CSRFToken = "" })},
		{"no expiry", create(func(s *store.WebSession) { s.ExpiresAt = time.Time{} })},
		{"expired at creation", create(func(s *store.WebSession) { s.ExpiresAt = f.clock.Now().Add(-time.Second) })},
		{"get: not a hash", func() error { _, err := f.st.WebSession(ctx, "cookie"); return err }},
		{"delete: not a hash", func() error { return f.st.DeleteWebSession(ctx, "cookie") }},
	} {
		if err := tc.call(); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", tc.name, err)
		}
	}
	if n := countRows(t, f.dsn, `SELECT COUNT(*) FROM web_sessions`); n != 0 {
		t.Errorf("refused creates stored %d sessions", n)
	}
}
