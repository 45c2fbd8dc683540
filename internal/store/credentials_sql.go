package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// takenError reports a unique name or hash already in use. It matches
// ErrConflict, as Credentials documents, and ErrExists, as the MCP
// records report the same situation.
type takenError struct{ what string }

func (e takenError) Error() string { return "store: " + e.what + " is already taken" }
func (e takenError) Is(target error) bool {
	return target == ErrConflict || target == ErrExists
}

// checkSHA256Hex refuses anything but 64 lowercase hex digits, so that a
// plaintext secret handed over by mistake is never stored.
func checkSHA256Hex(what, v string) error {
	if len(v) != 64 {
		return invalid("%s must be a hex SHA-256 (64 characters), not %d characters", what, len(v))
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return invalid("%s must be a lowercase hex SHA-256", what)
		}
	}
	return nil
}

func checkScopes(list []Scope) error {
	if len(list) == 0 {
		return invalid("a service token needs at least one scope")
	}
	seen := map[Scope]bool{}
	for _, sc := range list {
		if !sc.Valid() {
			return invalid("%q is not a scope", sc)
		}
		if seen[sc] {
			return invalid("scope %q is given twice", sc)
		}
		seen[sc] = true
	}
	return nil
}

func joinScopes(list []Scope) string {
	names := make([]string, len(list))
	for i, s := range list {
		names[i] = string(s)
	}
	return strings.Join(names, ",")
}

// scopesScanner reads the comma list back; never nil.
type scopesScanner struct{ s *[]Scope }

func (sc scopesScanner) Scan(src any) error {
	var v string
	switch t := src.(type) {
	case string:
		v = t
	case []byte:
		v = string(t)
	default:
		return fmt.Errorf("store: cannot read scopes from %T", src)
	}
	out := []Scope{}
	for part := range strings.SplitSeq(v, ",") {
		if part != "" {
			out = append(out, Scope(part))
		}
	}
	*sc.s = out
	return nil
}

// nullTime is t for a nullable column: the zero time is NULL.
func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Truncate(time.Microsecond)
}

const serviceTokenColumns = `id, name, username, scopes, secret_hash, created_by, created_at, expires_at, last_used_at, revoked`

func scanServiceToken(sc rowScanner) (ServiceToken, error) {
	var t ServiceToken
	err := sc.Scan(&t.ID, &t.Name, &t.Username, scopesScanner{&t.Scopes}, &t.SecretHash, &t.CreatedBy,
		timeScanner{&t.CreatedAt}, nullTimeScanner{&t.ExpiresAt}, nullTimeScanner{&t.LastUsedAt}, &t.Revoked)
	return t, err
}

func (s *sqlStore) CreateServiceToken(ctx context.Context, p CreateServiceTokenParams) (ServiceToken, error) {
	if err := checkName("service token name", p.Name); err != nil {
		return ServiceToken{}, err
	}
	if err := checkName("service token user", p.Username); err != nil {
		return ServiceToken{}, err
	}
	if err := checkName("actor (CreatedBy)", p.CreatedBy); err != nil {
		return ServiceToken{}, err
	}
	if err := checkScopes(p.Scopes); err != nil {
		return ServiceToken{}, err
	}
	if err := checkSHA256Hex("service token secret hash", p.SecretHash); err != nil {
		return ServiceToken{}, err
	}
	// Without a conflict target DO NOTHING covers both unique columns; the
	// hash colliding is as good as impossible, so a miss names the name.
	t, err := scanServiceToken(s.w.QueryRowContext(ctx, `
		INSERT INTO service_tokens (name, username, scopes, secret_hash, created_by, created_at, expires_at, last_used_at, revoked)
		VALUES ($1, $2, $3, $4, $5, $6, $7, NULL, $8)
		ON CONFLICT DO NOTHING
		RETURNING `+serviceTokenColumns,
		p.Name, p.Username, joinScopes(p.Scopes), p.SecretHash, p.CreatedBy, s.stamp(), nullTime(p.ExpiresAt), false))
	if errors.Is(err, sql.ErrNoRows) {
		return ServiceToken{}, takenError{what: fmt.Sprintf("service token name %q (or its secret)", p.Name)}
	}
	if err != nil {
		return ServiceToken{}, fmt.Errorf("store: cannot create service token %q: %w", p.Name, err)
	}
	return t, nil
}

func (s *sqlStore) ServiceTokenByHash(ctx context.Context, secretHash string) (ServiceToken, error) {
	if err := checkSHA256Hex("service token secret hash", secretHash); err != nil {
		return ServiceToken{}, err
	}
	t, err := scanServiceToken(s.r.QueryRowContext(ctx, `SELECT `+serviceTokenColumns+` FROM service_tokens WHERE secret_hash = $1`, secretHash))
	if errors.Is(err, sql.ErrNoRows) {
		// The hash is a credential's image; it is not repeated.
		return ServiceToken{}, notFound("service token with that secret")
	}
	if err != nil {
		return ServiceToken{}, fmt.Errorf("store: cannot read a service token: %w", err)
	}
	return t, nil
}

func (s *sqlStore) ServiceTokens(ctx context.Context) ([]ServiceToken, error) {
	return queryAll(ctx, s.r, "list service tokens", "a service token", scanServiceToken,
		`SELECT `+serviceTokenColumns+` FROM service_tokens ORDER BY name`)
}

func (s *sqlStore) RevokeServiceToken(ctx context.Context, name string) error {
	if err := checkName("service token name", name); err != nil {
		return err
	}
	res, err := s.w.ExecContext(ctx, `UPDATE service_tokens SET revoked = $1 WHERE name = $2`, true, name)
	if err != nil {
		return fmt.Errorf("store: cannot revoke service token %q: %w", name, err)
	}
	return mustAffect(res, "service token %q", name)
}

func (s *sqlStore) TouchServiceToken(ctx context.Context, id int64, at time.Time) error {
	if id <= 0 {
		return invalid("a service token id is a positive number, not %d", id)
	}
	stamp := s.stamp()
	if !at.IsZero() {
		stamp = at.UTC().Truncate(time.Microsecond)
	}
	// Touches may arrive out of order; the latest use wins.
	res, err := s.w.ExecContext(ctx, `
		UPDATE service_tokens SET last_used_at = CASE WHEN last_used_at IS NULL OR last_used_at < $1 THEN $1 ELSE last_used_at END
		WHERE id = $2`, stamp, id)
	if err != nil {
		return fmt.Errorf("store: cannot record a use of service token %d: %w", id, err)
	}
	return mustAffect(res, "service token %d", id)
}

// ---- web sessions ----

func (s *sqlStore) CreateWebSession(ctx context.Context, ws WebSession) error {
	if err := checkSHA256Hex("web session id hash", ws.IDHash); err != nil {
		return err
	}
	if err := checkName("web session user", ws.Username); err != nil {
		return err
	}
	if err := checkName("CSRF token", ws.CSRFToken); err != nil {
		return err
	}
	created := s.stamp()
	if !ws.CreatedAt.IsZero() {
		created = ws.CreatedAt.UTC().Truncate(time.Microsecond)
	}
	if !ws.ExpiresAt.After(created) {
		return invalid("a web session must expire after it is created")
	}
	res, err := s.w.ExecContext(ctx, `
		INSERT INTO web_sessions (id_hash, username, csrf_token, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (id_hash) DO NOTHING`,
		ws.IDHash, ws.Username, ws.CSRFToken, created, ws.ExpiresAt.UTC().Truncate(time.Microsecond))
	if err != nil {
		return fmt.Errorf("store: cannot create a web session for %s: %w", ws.Username, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		if err != nil {
			return fmt.Errorf("store: cannot create a web session for %s: %w", ws.Username, err)
		}
		return takenError{what: "web session id"}
	}
	return nil
}

func (s *sqlStore) WebSession(ctx context.Context, idHash string) (WebSession, error) {
	if err := checkSHA256Hex("web session id hash", idHash); err != nil {
		return WebSession{}, err
	}
	var ws WebSession
	err := s.r.QueryRowContext(ctx, `
		SELECT id_hash, username, csrf_token, created_at, expires_at FROM web_sessions
		WHERE id_hash = $1 AND expires_at > $2`, idHash, cutoff(s.stamp())).
		Scan(&ws.IDHash, &ws.Username, &ws.CSRFToken, timeScanner{&ws.CreatedAt}, timeScanner{&ws.ExpiresAt})
	if errors.Is(err, sql.ErrNoRows) {
		return WebSession{}, notFound("web session")
	}
	if err != nil {
		return WebSession{}, fmt.Errorf("store: cannot read a web session: %w", err)
	}
	return ws, nil
}

func (s *sqlStore) DeleteWebSession(ctx context.Context, idHash string) error {
	if err := checkSHA256Hex("web session id hash", idHash); err != nil {
		return err
	}
	if _, err := s.w.ExecContext(ctx, `DELETE FROM web_sessions WHERE id_hash = $1`, idHash); err != nil {
		return fmt.Errorf("store: cannot delete a web session: %w", err)
	}
	return nil
}

func (s *sqlStore) DeleteExpiredWebSessions(ctx context.Context) (int, error) {
	res, err := s.w.ExecContext(ctx, `DELETE FROM web_sessions WHERE expires_at <= $1`, s.stamp())
	return affected(res, err, "delete expired web sessions")
}
