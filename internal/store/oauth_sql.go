package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// MaxOAuthValueLen bounds the longer OAuth texts (redirect URIs, state,
// scopes, resource), in bytes.
const MaxOAuthValueLen = 4096

// MaxRedirectURIs bounds the redirect URIs of one client.
const MaxRedirectURIs = 20

// ---- facade calls ----

const mcpCallColumns = `id, actor_username, actor_uid, client, credential, configuration, method, tool, decision, outcome, run_id, duration_us, created_at`

func scanMCPCall(sc rowScanner) (MCPCall, error) {
	var c MCPCall
	var us int64
	err := sc.Scan(&c.ID, &c.ActorUsername, &c.ActorUID, &c.Client, &c.Credential, &c.Configuration, &c.Method, &c.Tool,
		&c.Decision, &c.Outcome, &c.RunID, &us, timeScanner{&c.CreatedAt})
	c.Duration = time.Duration(us) * time.Microsecond
	return c, err
}

func (s *sqlStore) RecordMCPCall(ctx context.Context, p RecordMCPCallParams) (MCPCall, error) {
	for _, f := range []struct{ what, v string }{
		{"MCP call actor", p.ActorUsername}, {"MCP call client", p.Client}, {"MCP call credential", p.Credential},
		{"MCP call configuration", p.Configuration}, {"MCP call tool", p.Tool}, {"MCP call run id", p.RunID},
	} {
		if err := checkText(f.what, f.v, MaxNameLen); err != nil {
			return MCPCall{}, err
		}
	}
	for _, f := range []struct{ what, v string }{{"MCP call method", p.Method}, {"MCP call decision", p.Decision}, {"MCP call outcome", p.Outcome}} {
		if err := checkName(f.what, f.v); err != nil {
			return MCPCall{}, err
		}
	}
	if p.ActorUID < 0 || p.Duration < 0 {
		return MCPCall{}, invalid("an MCP call's actor uid and duration must not be negative")
	}
	c, err := scanMCPCall(s.w.QueryRowContext(ctx, `
		INSERT INTO mcp_calls (actor_username, actor_uid, client, credential, configuration, method, tool, decision, outcome, run_id, duration_us, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
		RETURNING `+mcpCallColumns,
		p.ActorUsername, p.ActorUID, p.Client, p.Credential, p.Configuration, p.Method, p.Tool, p.Decision, p.Outcome, p.RunID,
		p.Duration.Microseconds(), s.stamp()))
	if err != nil {
		return MCPCall{}, fmt.Errorf("store: cannot record an MCP call of %q: %w", p.Tool, err)
	}
	return c, nil
}

func (s *sqlStore) MCPCalls(ctx context.Context, p ListMCPCallsParams) ([]MCPCall, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = DefaultRunLimit
	}
	if limit > MaxRunLimit {
		return nil, invalid("a page of MCP calls holds at most %d", MaxRunLimit)
	}
	if p.ActorUsername != "" {
		return queryAll(ctx, s.r, "list MCP calls", "an MCP call", scanMCPCall,
			`SELECT `+mcpCallColumns+` FROM mcp_calls WHERE actor_username = $1 ORDER BY id DESC LIMIT $2`, p.ActorUsername, limit)
	}
	return queryAll(ctx, s.r, "list MCP calls", "an MCP call", scanMCPCall,
		`SELECT `+mcpCallColumns+` FROM mcp_calls ORDER BY id DESC LIMIT $1`, limit)
}

// ---- clients ----

func (s *sqlStore) PutOAuthClient(ctx context.Context, c OAuthClient) (OAuthClient, error) {
	if err := checkText("OAuth client id", c.ClientID, MaxOAuthValueLen); err != nil || c.ClientID == "" {
		if err == nil {
			err = invalid("an OAuth client needs an id")
		}
		return OAuthClient{}, err
	}
	if err := checkText("OAuth client name", c.Name, MaxNameLen); err != nil {
		return OAuthClient{}, err
	}
	if c.Kind != OAuthClientRegistered && c.Kind != OAuthClientDocument {
		return OAuthClient{}, invalid("OAuth client kind %q is not %s or %s", c.Kind, OAuthClientRegistered, OAuthClientDocument)
	}
	if len(c.RedirectURIs) == 0 || len(c.RedirectURIs) > MaxRedirectURIs {
		return OAuthClient{}, invalid("an OAuth client needs 1 to %d redirect URIs", MaxRedirectURIs)
	}
	for _, u := range c.RedirectURIs {
		if err := checkName("redirect URI", u); err != nil {
			return OAuthClient{}, err
		}
	}
	uris, _ := json.Marshal(c.RedirectURIs)
	now := s.stamp()
	var out OAuthClient
	var raw string
	err := s.w.QueryRowContext(ctx, `
		INSERT INTO oauth_clients (client_id, name, redirect_uris, kind, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)
		ON CONFLICT (client_id) DO UPDATE SET name = excluded.name, redirect_uris = excluded.redirect_uris, kind = excluded.kind, updated_at = excluded.updated_at
		RETURNING client_id, name, redirect_uris, kind, created_at, updated_at`,
		c.ClientID, c.Name, string(uris), c.Kind, now).Scan(&out.ClientID, &out.Name, &raw, &out.Kind, timeScanner{&out.CreatedAt}, timeScanner{&out.UpdatedAt})
	if err != nil {
		return OAuthClient{}, fmt.Errorf("store: cannot store OAuth client %q: %w", c.ClientID, err)
	}
	if err := json.Unmarshal([]byte(raw), &out.RedirectURIs); err != nil {
		return OAuthClient{}, fmt.Errorf("store: OAuth client %q: %w", c.ClientID, err)
	}
	return out, nil
}

func (s *sqlStore) OAuthClient(ctx context.Context, clientID string) (OAuthClient, error) {
	var out OAuthClient
	var raw string
	err := s.r.QueryRowContext(ctx, `SELECT client_id, name, redirect_uris, kind, created_at, updated_at FROM oauth_clients WHERE client_id = $1`, clientID).
		Scan(&out.ClientID, &out.Name, &raw, &out.Kind, timeScanner{&out.CreatedAt}, timeScanner{&out.UpdatedAt})
	if errors.Is(err, sql.ErrNoRows) {
		return OAuthClient{}, notFound("OAuth client")
	}
	if err != nil {
		return OAuthClient{}, fmt.Errorf("store: cannot read an OAuth client: %w", err)
	}
	if err := json.Unmarshal([]byte(raw), &out.RedirectURIs); err != nil {
		return OAuthClient{}, fmt.Errorf("store: OAuth client %q: %w", clientID, err)
	}
	return out, nil
}

// ---- authorization requests ----

const oauthRequestColumns = `id, client_id, redirect_uri, state, nonce, scopes, resource, code_challenge, code_challenge_method,
	response_mode, username, consent_hash, done, auth_time, created_at, expires_at`

func scanOAuthRequest(sc rowScanner) (OAuthRequest, error) {
	var r OAuthRequest
	var scopes string
	err := sc.Scan(&r.ID, &r.ClientID, &r.RedirectURI, &r.State, &r.Nonce, &scopes, &r.Resource, &r.CodeChallenge,
		&r.CodeChallengeMethod, &r.ResponseMode, &r.Username, &r.ConsentHash, &r.Done, nullTimeScanner{&r.AuthTime},
		timeScanner{&r.CreatedAt}, timeScanner{&r.ExpiresAt})
	r.Scopes = splitScopes(scopes)
	return r, err
}

func splitScopes(s string) []string {
	out := []string{}
	for f := range strings.FieldsSeq(s) {
		out = append(out, f)
	}
	return out
}

func checkOAuthID(what, id string) error {
	if id == "" {
		return invalid("%s must not be empty", what)
	}
	return checkText(what, id, MaxNameLen)
}

func (s *sqlStore) CreateOAuthRequest(ctx context.Context, r OAuthRequest) error {
	if err := checkOAuthID("OAuth request id", r.ID); err != nil {
		return err
	}
	for _, f := range []struct{ what, v string }{
		{"client id", r.ClientID}, {"redirect URI", r.RedirectURI}, {"state", r.State}, {"nonce", r.Nonce},
		{"scopes", strings.Join(r.Scopes, " ")}, {"resource", r.Resource}, {"code challenge", r.CodeChallenge},
		{"code challenge method", r.CodeChallengeMethod}, {"response mode", r.ResponseMode},
	} {
		if err := checkText(f.what, f.v, MaxOAuthValueLen); err != nil {
			return err
		}
	}
	created := s.stamp()
	if !r.ExpiresAt.After(created) {
		return invalid("an OAuth request must expire after it is created")
	}
	res, err := s.w.ExecContext(ctx, `
		INSERT INTO oauth_requests (id, client_id, redirect_uri, state, nonce, scopes, resource, code_challenge, code_challenge_method,
			response_mode, username, consent_hash, done, code_hash, auth_time, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, '', '', $11, NULL, NULL, $12, $13)
		ON CONFLICT (id) DO NOTHING`,
		r.ID, r.ClientID, r.RedirectURI, r.State, r.Nonce, strings.Join(r.Scopes, " "), r.Resource, r.CodeChallenge,
		r.CodeChallengeMethod, r.ResponseMode, false, created, cutoff(r.ExpiresAt))
	if err != nil {
		return fmt.Errorf("store: cannot store an OAuth request: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return takenError{what: "OAuth request id"}
	}
	return nil
}

func (s *sqlStore) OAuthRequest(ctx context.Context, id string) (OAuthRequest, error) {
	r, err := scanOAuthRequest(s.r.QueryRowContext(ctx, `SELECT `+oauthRequestColumns+` FROM oauth_requests WHERE id = $1 AND expires_at > $2`, id, s.stamp()))
	if errors.Is(err, sql.ErrNoRows) {
		return OAuthRequest{}, notFound("OAuth request")
	}
	if err != nil {
		return OAuthRequest{}, fmt.Errorf("store: cannot read an OAuth request: %w", err)
	}
	return r, nil
}

func (s *sqlStore) AuthenticateOAuthRequest(ctx context.Context, p AuthenticateOAuthRequestParams) error {
	if err := checkName("OAuth request user", p.Username); err != nil {
		return err
	}
	if err := checkSHA256Hex("consent hash", p.ConsentHash); err != nil {
		return err
	}
	res, err := s.w.ExecContext(ctx, `UPDATE oauth_requests SET username = $1, consent_hash = $2 WHERE id = $3 AND done = $4 AND expires_at > $5`,
		p.Username, p.ConsentHash, p.ID, false, s.stamp())
	if err != nil {
		return fmt.Errorf("store: cannot record the login of an OAuth request: %w", err)
	}
	return mustAffect(res, "OAuth request waiting for a login")
}

func (s *sqlStore) CompleteOAuthRequest(ctx context.Context, id, consentHash string) error {
	if err := checkSHA256Hex("consent hash", consentHash); err != nil {
		return err
	}
	now := s.stamp()
	res, err := s.w.ExecContext(ctx, `UPDATE oauth_requests SET done = $1, auth_time = $2 WHERE id = $3 AND consent_hash = $4 AND username <> '' AND done = $5 AND expires_at > $2`,
		true, now, id, consentHash, false)
	if err != nil {
		return fmt.Errorf("store: cannot complete an OAuth request: %w", err)
	}
	return mustAffect(res, "OAuth request waiting for consent")
}

func (s *sqlStore) SetOAuthRequestCode(ctx context.Context, id, codeHash string) error {
	if err := checkSHA256Hex("code hash", codeHash); err != nil {
		return err
	}
	res, err := s.w.ExecContext(ctx, `UPDATE oauth_requests SET code_hash = $1 WHERE id = $2 AND done = $3 AND code_hash IS NULL`, codeHash, id, true)
	if err != nil {
		return fmt.Errorf("store: cannot store an OAuth code: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: OAuth request %s is not done or already has a code: %w", id, ErrConflict)
	}
	return nil
}

func (s *sqlStore) OAuthRequestByCode(ctx context.Context, codeHash string) (OAuthRequest, error) {
	if err := checkSHA256Hex("code hash", codeHash); err != nil {
		return OAuthRequest{}, err
	}
	r, err := scanOAuthRequest(s.r.QueryRowContext(ctx, `SELECT `+oauthRequestColumns+` FROM oauth_requests WHERE code_hash = $1 AND done = $2 AND expires_at > $3`,
		codeHash, true, s.stamp()))
	if errors.Is(err, sql.ErrNoRows) {
		return OAuthRequest{}, notFound("OAuth code")
	}
	if err != nil {
		return OAuthRequest{}, fmt.Errorf("store: cannot read an OAuth request by code: %w", err)
	}
	return r, nil
}

func (s *sqlStore) DeleteOAuthRequest(ctx context.Context, id string) error {
	if _, err := s.w.ExecContext(ctx, `DELETE FROM oauth_requests WHERE id = $1`, id); err != nil {
		return fmt.Errorf("store: cannot delete an OAuth request: %w", err)
	}
	return nil
}

// ---- grants ----

const oauthGrantColumns = `id, username, user_uid, client_id, client_name, resource, scopes, created_at, last_used_at, revoked_at`

func scanOAuthGrant(sc rowScanner) (OAuthGrant, error) {
	var g OAuthGrant
	var scopes string
	err := sc.Scan(&g.ID, &g.Username, &g.UserUID, &g.ClientID, &g.ClientName, &g.Resource, &scopes,
		timeScanner{&g.CreatedAt}, nullTimeScanner{&g.LastUsedAt}, nullTimeScanner{&g.RevokedAt})
	g.Scopes = splitScopes(scopes)
	return g, err
}

func (s *sqlStore) CreateOAuthGrant(ctx context.Context, g OAuthGrant) (OAuthGrant, error) {
	if err := checkOAuthID("OAuth grant id", g.ID); err != nil {
		return OAuthGrant{}, err
	}
	if err := checkName("OAuth grant user", g.Username); err != nil {
		return OAuthGrant{}, err
	}
	for _, f := range []struct{ what, v string }{{"client id", g.ClientID}, {"resource", g.Resource}, {"scopes", strings.Join(g.Scopes, " ")}} {
		if err := checkText(f.what, f.v, MaxOAuthValueLen); err != nil {
			return OAuthGrant{}, err
		}
	}
	if err := checkText("client name", g.ClientName, MaxNameLen); err != nil {
		return OAuthGrant{}, err
	}
	if g.UserUID < 0 {
		return OAuthGrant{}, invalid("an OAuth grant's user uid must not be negative")
	}
	out, err := scanOAuthGrant(s.w.QueryRowContext(ctx, `
		INSERT INTO oauth_grants (id, username, user_uid, client_id, client_name, resource, scopes, created_at, last_used_at, revoked_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL, NULL)
		ON CONFLICT (id) DO NOTHING
		RETURNING `+oauthGrantColumns,
		g.ID, g.Username, g.UserUID, g.ClientID, g.ClientName, g.Resource, strings.Join(g.Scopes, " "), s.stamp()))
	if errors.Is(err, sql.ErrNoRows) {
		return OAuthGrant{}, takenError{what: "OAuth grant id"}
	}
	if err != nil {
		return OAuthGrant{}, fmt.Errorf("store: cannot store an OAuth grant: %w", err)
	}
	return out, nil
}

func (s *sqlStore) OAuthGrant(ctx context.Context, id string) (OAuthGrant, error) {
	g, err := scanOAuthGrant(s.r.QueryRowContext(ctx, `SELECT `+oauthGrantColumns+` FROM oauth_grants WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return OAuthGrant{}, notFound("OAuth grant %q", id)
	}
	if err != nil {
		return OAuthGrant{}, fmt.Errorf("store: cannot read an OAuth grant: %w", err)
	}
	return g, nil
}

func (s *sqlStore) OAuthGrants(ctx context.Context, p ListOAuthGrantsParams) ([]OAuthGrant, error) {
	q := `SELECT ` + oauthGrantColumns + ` FROM oauth_grants WHERE ($1 = '' OR username = $1)`
	if !p.Revoked {
		q += ` AND revoked_at IS NULL`
	}
	return queryAll(ctx, s.r, "list OAuth grants", "an OAuth grant", scanOAuthGrant, q+` ORDER BY created_at DESC, id`, p.Username)
}

func (s *sqlStore) RevokeOAuthGrant(ctx context.Context, id string) error {
	res, err := s.w.ExecContext(ctx, `UPDATE oauth_grants SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL`, s.stamp(), id)
	if err != nil {
		return fmt.Errorf("store: cannot revoke OAuth grant %q: %w", id, err)
	}
	return mustAffect(res, "live OAuth grant %q", id)
}

func (s *sqlStore) TouchOAuthGrant(ctx context.Context, id string) error {
	now := s.stamp()
	res, err := s.w.ExecContext(ctx, `UPDATE oauth_grants SET last_used_at = $1 WHERE id = $2 AND (last_used_at IS NULL OR last_used_at < $1)`, now, id)
	if err != nil {
		return fmt.Errorf("store: cannot record a use of OAuth grant %q: %w", id, err)
	}
	_, err = res.RowsAffected()
	return err
}

// ---- tokens ----

func (s *sqlStore) CreateOAuthToken(ctx context.Context, t OAuthToken) error {
	if err := checkOAuthID("OAuth token id", t.ID); err != nil {
		return err
	}
	if t.Kind != OAuthAccessToken && t.Kind != OAuthRefreshToken {
		return invalid("OAuth token kind %q is not %s or %s", t.Kind, OAuthAccessToken, OAuthRefreshToken)
	}
	created := s.stamp()
	if !t.ExpiresAt.After(created) {
		return invalid("an OAuth token must expire after it is created")
	}
	res, err := s.w.ExecContext(ctx, `
		INSERT INTO oauth_tokens (id, grant_id, kind, created_at, expires_at, used_at, revoked_at)
		SELECT $1, id, $3, $4, $5, NULL, NULL FROM oauth_grants WHERE id = $2 AND revoked_at IS NULL
		ON CONFLICT (id) DO NOTHING`,
		t.ID, t.GrantID, t.Kind, created, cutoff(t.ExpiresAt))
	if err != nil {
		return fmt.Errorf("store: cannot store an OAuth token: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: OAuth token id taken or grant %q not live: %w", t.GrantID, ErrConflict)
	}
	return nil
}

func (s *sqlStore) OAuthToken(ctx context.Context, id string) (OAuthToken, OAuthGrant, error) {
	var t OAuthToken
	var g OAuthGrant
	var scopes string
	err := s.r.QueryRowContext(ctx, `
		SELECT t.id, t.grant_id, t.kind, t.created_at, t.expires_at, t.used_at, t.revoked_at,
			g.id, g.username, g.user_uid, g.client_id, g.client_name, g.resource, g.scopes, g.created_at, g.last_used_at, g.revoked_at
		FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id WHERE t.id = $1`, id).
		Scan(&t.ID, &t.GrantID, &t.Kind, timeScanner{&t.CreatedAt}, timeScanner{&t.ExpiresAt}, nullTimeScanner{&t.UsedAt}, nullTimeScanner{&t.RevokedAt},
			&g.ID, &g.Username, &g.UserUID, &g.ClientID, &g.ClientName, &g.Resource, &scopes,
			timeScanner{&g.CreatedAt}, nullTimeScanner{&g.LastUsedAt}, nullTimeScanner{&g.RevokedAt})
	if errors.Is(err, sql.ErrNoRows) {
		return OAuthToken{}, OAuthGrant{}, notFound("OAuth token")
	}
	if err != nil {
		return OAuthToken{}, OAuthGrant{}, fmt.Errorf("store: cannot read an OAuth token: %w", err)
	}
	g.Scopes = splitScopes(scopes)
	return t, g, nil
}

func (s *sqlStore) UseOAuthRefreshToken(ctx context.Context, id string) error {
	now := s.stamp()
	res, err := s.w.ExecContext(ctx, `
		UPDATE oauth_tokens SET used_at = $1
		WHERE id = $2 AND kind = $3 AND used_at IS NULL AND revoked_at IS NULL AND expires_at > $1`, now, id, OAuthRefreshToken)
	if err != nil {
		return fmt.Errorf("store: cannot rotate a refresh token: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: the refresh token was used, revoked or expired: %w", ErrConflict)
	}
	return nil
}

func (s *sqlStore) RevokeOAuthToken(ctx context.Context, id string) error {
	if _, err := s.w.ExecContext(ctx, `UPDATE oauth_tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL`, s.stamp(), id); err != nil {
		return fmt.Errorf("store: cannot revoke an OAuth token: %w", err)
	}
	return nil
}

func (s *sqlStore) DeleteExpiredOAuth(ctx context.Context, before time.Time) (int, error) {
	now := s.stamp()
	total := 0
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{`DELETE FROM oauth_requests WHERE expires_at <= $1`, []any{now}},
			{`DELETE FROM oauth_tokens WHERE expires_at <= $1`, []any{now}},
			{`DELETE FROM oauth_tokens WHERE grant_id IN (SELECT id FROM oauth_grants WHERE revoked_at IS NOT NULL AND revoked_at < $1)`, []any{cutoff(before)}},
			{`DELETE FROM oauth_grants WHERE revoked_at IS NOT NULL AND revoked_at < $1`, []any{cutoff(before)}},
		} {
			res, err := tx.ExecContext(ctx, q.sql, q.args...)
			n, err := affected(res, err, "delete expired OAuth rows")
			if err != nil {
				return err
			}
			total += n
		}
		return nil
	})
	return total, err
}
