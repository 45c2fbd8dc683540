package store

import (
	"context"
	"time"
)

// MCPServerState persists what t3agent as an MCP server keeps: the record of
// every call through its MCP facade, and the state of its OAuth 2.1
// authorization server (clients, authorization requests, grants,
// tokens). Codes and refresh tokens are only ever stored as SHA-256
// hashes; no argument or result of a call is stored.
type MCPServerState interface {
	// RecordMCPCall appends one facade call and returns it as stored.
	RecordMCPCall(ctx context.Context, p RecordMCPCallParams) (MCPCall, error)
	// MCPCalls lists facade calls newest first; never nil.
	MCPCalls(ctx context.Context, p ListMCPCallsParams) ([]MCPCall, error)

	// PutOAuthClient creates or replaces a client and returns it as stored.
	PutOAuthClient(ctx context.Context, c OAuthClient) (OAuthClient, error)
	// OAuthClient returns one client; ErrNotFound.
	OAuthClient(ctx context.Context, clientID string) (OAuthClient, error)

	// CreateOAuthRequest stores an authorization request; a taken id is
	// ErrConflict.
	CreateOAuthRequest(ctx context.Context, r OAuthRequest) error
	// OAuthRequest returns a request that has not expired; ErrNotFound.
	OAuthRequest(ctx context.Context, id string) (OAuthRequest, error)
	// AuthenticateOAuthRequest records who logged in for a request that is
	// not done yet, with the hash of the consent form's secret; ErrNotFound.
	AuthenticateOAuthRequest(ctx context.Context, p AuthenticateOAuthRequestParams) error
	// CompleteOAuthRequest marks the request allowed by the person who
	// logged in for it, if consentHash matches; ErrNotFound otherwise.
	CompleteOAuthRequest(ctx context.Context, id, consentHash string) error
	// SetOAuthRequestCode stores the hash of the request's code, once, on a
	// done request; ErrConflict when it has one.
	SetOAuthRequestCode(ctx context.Context, id, codeHash string) error
	// OAuthRequestByCode returns the done request whose code hashes to
	// codeHash and has not expired; ErrNotFound.
	OAuthRequestByCode(ctx context.Context, codeHash string) (OAuthRequest, error)
	// DeleteOAuthRequest removes a request; no error when absent.
	DeleteOAuthRequest(ctx context.Context, id string) error

	// CreateOAuthGrant stores a grant; a taken id is ErrConflict.
	CreateOAuthGrant(ctx context.Context, g OAuthGrant) (OAuthGrant, error)
	// OAuthGrant returns one grant, revoked or not; ErrNotFound.
	OAuthGrant(ctx context.Context, id string) (OAuthGrant, error)
	// OAuthGrants lists grants newest first, of one user when
	// p.Username is set, without revoked ones unless p.Revoked; never nil.
	OAuthGrants(ctx context.Context, p ListOAuthGrantsParams) ([]OAuthGrant, error)
	// RevokeOAuthGrant revokes a grant and so every token of it;
	// ErrNotFound when there is no such grant not yet revoked.
	RevokeOAuthGrant(ctx context.Context, id string) error
	// TouchOAuthGrant records a use of the grant (the store's clock).
	TouchOAuthGrant(ctx context.Context, id string) error

	// CreateOAuthToken stores a token of a grant; a taken id is ErrConflict.
	CreateOAuthToken(ctx context.Context, t OAuthToken) error
	// OAuthToken returns a token with its grant; ErrNotFound.
	OAuthToken(ctx context.Context, id string) (OAuthToken, OAuthGrant, error)
	// UseOAuthRefreshToken marks a refresh token rotated, once: a token
	// already used, revoked or expired is ErrConflict (a replay).
	UseOAuthRefreshToken(ctx context.Context, id string) error
	// RevokeOAuthToken revokes one token; no error when absent.
	RevokeOAuthToken(ctx context.Context, id string) error
	// DeleteExpiredOAuth removes expired requests and tokens (and grants
	// revoked before cutoff); it returns how many rows went.
	DeleteExpiredOAuth(ctx context.Context, cutoff time.Time) (int, error)
}

// MCPCall is one call through the MCP facade as stored.
type MCPCall struct {
	ID int64
	RecordMCPCallParams
	CreatedAt time.Time
}

// RecordMCPCallParams are the parameters of RecordMCPCall.
type RecordMCPCallParams struct {
	ActorUsername string
	ActorUID      int64
	// Client is the MCP host's client name; Credential the service token
	// or OAuth grant it used.
	Client        string
	Credential    string
	Configuration string
	// Method is the MCP method (tools/call, tools/list).
	Method string
	Tool   string
	// Decision is what the facade decided (allowed, denied, approval,
	// input_required, rate_limited); Outcome how the call ended.
	Decision string
	Outcome  string
	RunID    string
	Duration time.Duration
}

// ListMCPCallsParams filter MCPCalls. Limit 0 means DefaultRunLimit.
type ListMCPCallsParams struct {
	ActorUsername string
	Limit         int
}

// OAuth client kinds.
const (
	OAuthClientRegistered = "registered"        // RFC 7591
	OAuthClientDocument   = "metadata_document" // a Client ID Metadata Document
)

// OAuthClient is an OAuth client of t3agent's authorization server. All
// are public clients (PKCE, no secret).
type OAuthClient struct {
	ClientID     string
	Name         string
	RedirectURIs []string
	Kind         string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// OAuthRequest is an authorization request between /authorize and the
// redemption of its code.
type OAuthRequest struct {
	ID                  string
	ClientID            string
	RedirectURI         string
	State               string
	Nonce               string
	Scopes              []string
	Resource            string
	CodeChallenge       string
	CodeChallengeMethod string
	ResponseMode        string
	// Username is who logged in for it ("" until then).
	Username    string
	ConsentHash string
	Done        bool
	AuthTime    time.Time
	CreatedAt   time.Time
	ExpiresAt   time.Time
}

// AuthenticateOAuthRequestParams are the parameters of
// AuthenticateOAuthRequest.
type AuthenticateOAuthRequestParams struct {
	ID          string
	Username    string
	ConsentHash string
}

// OAuthGrant is a person's consent for one client on one resource.
type OAuthGrant struct {
	ID         string
	Username   string
	UserUID    int64
	ClientID   string
	ClientName string
	Resource   string
	Scopes     []string
	CreatedAt  time.Time
	LastUsedAt time.Time // zero: never
	RevokedAt  time.Time // zero: live
}

// ListOAuthGrantsParams filter OAuthGrants.
type ListOAuthGrantsParams struct {
	Username string
	Revoked  bool
}

// OAuth token kinds.
const (
	OAuthAccessToken  = "access"
	OAuthRefreshToken = "refresh"
)

// OAuthToken is an access or refresh token of a grant.
type OAuthToken struct {
	ID        string
	GrantID   string
	Kind      string
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    time.Time // a rotated refresh token
	RevokedAt time.Time
}
