package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// OAuth flows t3agent uses as a client of an MCP server.
const (
	MCPOAuthAuthorizationCode = "authorization_code"
	MCPOAuthClientCredentials = "client_credentials"
)

// Statuses of an MCP server's OAuth grant.
const (
	MCPOAuthNeedsLogin = "needs_login"
	MCPOAuthConnected  = "connected"
)

// MCPOAuth persists how t3agent authorizes itself to an MCP server with
// OAuth 2.1 and the grant it holds. Package mcpauth owns the rules; the
// store keeps the values as given (secrets arrive sealed).
type MCPOAuth interface {
	// PutMCPOAuth creates or replaces a server's OAuth record and returns
	// it as stored; ErrNotFound when there is no such server.
	PutMCPOAuth(ctx context.Context, r MCPOAuthRecord) (MCPOAuthRecord, error)
	// MCPOAuthRecord returns a server's record, or ErrNotFound.
	MCPOAuthRecord(ctx context.Context, server string) (MCPOAuthRecord, error)
	// MCPOAuthRecords lists every record, ordered by server; never nil.
	MCPOAuthRecords(ctx context.Context) ([]MCPOAuthRecord, error)
	// SetMCPOAuthGrant stores a server's grant (issuer, sealed token,
	// status) and leaves its configuration alone; ErrNotFound when the
	// server has no record.
	SetMCPOAuthGrant(ctx context.Context, p SetMCPOAuthGrantParams) (MCPOAuthRecord, error)
	// DeleteMCPOAuth removes a server's record; ErrNotFound when there
	// was none.
	DeleteMCPOAuth(ctx context.Context, server string) error
}

// MCPOAuthRecord is one server's OAuth configuration and grant.
type MCPOAuthRecord struct {
	Server string
	Flow   string // MCPOAuthAuthorizationCode or MCPOAuthClientCredentials
	// ClientID is a pre-registered client id or a Client ID Metadata
	// Document URL; "" means dynamic client registration.
	ClientID string
	// SealedClientSecret is the pre-registered client's secret, sealed;
	// "" means a public client.
	SealedClientSecret string `json:"-"`
	Scopes             string // space-separated; "" asks for what the server names
	RedirectURL        string
	Issuer             string // the authorization server the grant is bound to
	SealedToken        string `json:"-"` // "" means no grant
	Status             string // MCPOAuthNeedsLogin or MCPOAuthConnected
	StatusReason       string
	UpdatedAt          time.Time
}

// SetMCPOAuthGrantParams are the parameters of SetMCPOAuthGrant.
type SetMCPOAuthGrantParams struct {
	Server       string
	Issuer       string
	SealedToken  string
	Status       string
	StatusReason string
}

const mcpOAuthColumns = `server, flow, client_id, client_secret, scopes, redirect_url, issuer, token, status, status_reason, updated_at`

func scanMCPOAuth(r rowScanner) (MCPOAuthRecord, error) {
	var o MCPOAuthRecord
	err := r.Scan(&o.Server, &o.Flow, &o.ClientID, &o.SealedClientSecret, &o.Scopes, &o.RedirectURL, &o.Issuer,
		&o.SealedToken, &o.Status, &o.StatusReason, timeScanner{&o.UpdatedAt})
	return o, err
}

func checkMCPOAuthStatus(status string) error {
	if status != MCPOAuthNeedsLogin && status != MCPOAuthConnected {
		return invalid("MCP OAuth status %q is not needs_login or connected", status)
	}
	return nil
}

func (s *sqlStore) PutMCPOAuth(ctx context.Context, r MCPOAuthRecord) (MCPOAuthRecord, error) {
	if err := checkName("MCP server identifier", r.Server); err != nil {
		return MCPOAuthRecord{}, err
	}
	if r.Flow != MCPOAuthAuthorizationCode && r.Flow != MCPOAuthClientCredentials {
		return MCPOAuthRecord{}, invalid("MCP OAuth flow %q is not authorization_code or client_credentials", r.Flow)
	}
	if err := checkMCPOAuthStatus(r.Status); err != nil {
		return MCPOAuthRecord{}, err
	}
	var out MCPOAuthRecord
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM mcp_servers WHERE identifier = $1`, r.Server).Scan(&one); errors.Is(err, sql.ErrNoRows) {
			return notFound("MCP server %q", r.Server)
		} else if err != nil {
			return fmt.Errorf("store: cannot read MCP server %q: %w", r.Server, err)
		}
		var err error
		out, err = scanMCPOAuth(tx.QueryRowContext(ctx, `
			INSERT INTO mcp_oauth (`+mcpOAuthColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
			ON CONFLICT (server) DO UPDATE SET flow = excluded.flow, client_id = excluded.client_id,
				client_secret = excluded.client_secret, scopes = excluded.scopes, redirect_url = excluded.redirect_url,
				issuer = excluded.issuer, token = excluded.token, status = excluded.status,
				status_reason = excluded.status_reason, updated_at = excluded.updated_at
			RETURNING `+mcpOAuthColumns,
			r.Server, r.Flow, r.ClientID, r.SealedClientSecret, r.Scopes, r.RedirectURL, r.Issuer, r.SealedToken,
			r.Status, r.StatusReason, s.stamp()))
		if err != nil {
			return fmt.Errorf("store: cannot save the OAuth record of MCP server %q: %w", r.Server, err)
		}
		return nil
	})
	return out, err
}

func (s *sqlStore) MCPOAuthRecord(ctx context.Context, server string) (MCPOAuthRecord, error) {
	if err := checkName("MCP server identifier", server); err != nil {
		return MCPOAuthRecord{}, err
	}
	o, err := scanMCPOAuth(s.r.QueryRowContext(ctx, `SELECT `+mcpOAuthColumns+` FROM mcp_oauth WHERE server = $1`, server))
	if errors.Is(err, sql.ErrNoRows) {
		return MCPOAuthRecord{}, notFound("OAuth record of MCP server %q", server)
	}
	if err != nil {
		return MCPOAuthRecord{}, fmt.Errorf("store: cannot read the OAuth record of MCP server %q: %w", server, err)
	}
	return o, nil
}

func (s *sqlStore) MCPOAuthRecords(ctx context.Context) ([]MCPOAuthRecord, error) {
	return queryAll(ctx, s.r, "list MCP OAuth records", "an MCP OAuth record", scanMCPOAuth,
		`SELECT `+mcpOAuthColumns+` FROM mcp_oauth ORDER BY server`)
}

func (s *sqlStore) SetMCPOAuthGrant(ctx context.Context, p SetMCPOAuthGrantParams) (MCPOAuthRecord, error) {
	if err := checkName("MCP server identifier", p.Server); err != nil {
		return MCPOAuthRecord{}, err
	}
	if err := checkMCPOAuthStatus(p.Status); err != nil {
		return MCPOAuthRecord{}, err
	}
	o, err := scanMCPOAuth(s.w.QueryRowContext(ctx, `
		UPDATE mcp_oauth SET issuer = $2, token = $3, status = $4, status_reason = $5, updated_at = $6
		WHERE server = $1 RETURNING `+mcpOAuthColumns,
		p.Server, p.Issuer, p.SealedToken, p.Status, p.StatusReason, s.stamp()))
	if errors.Is(err, sql.ErrNoRows) {
		return MCPOAuthRecord{}, notFound("OAuth record of MCP server %q", p.Server)
	}
	if err != nil {
		return MCPOAuthRecord{}, fmt.Errorf("store: cannot save the OAuth grant of MCP server %q: %w", p.Server, err)
	}
	return o, nil
}

func (s *sqlStore) DeleteMCPOAuth(ctx context.Context, server string) error {
	if err := checkName("MCP server identifier", server); err != nil {
		return err
	}
	res, err := s.w.ExecContext(ctx, `DELETE FROM mcp_oauth WHERE server = $1`, server)
	if err != nil {
		return fmt.Errorf("store: cannot delete the OAuth record of MCP server %q: %w", server, err)
	}
	return mustAffect(res, "OAuth record of MCP server %q", server)
}
