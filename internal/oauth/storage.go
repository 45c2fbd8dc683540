package oauth

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/t3agent/t3agent/internal/store"
)

// storage is the op.Storage over t3agent's store. Requests, codes,
// grants and tokens live in the store, so every process sharing it
// serves the same authorization server.
type storage struct {
	s *Server
}

var _ op.Storage = storage{}

func hashOf(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

func randomID() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// ---- authorization requests ----

// authRequest is a stored request as op sees it.
type authRequest struct{ r store.OAuthRequest }

func (a *authRequest) GetID() string          { return a.r.ID }
func (a *authRequest) GetACR() string         { return "" }
func (a *authRequest) GetAMR() []string       { return []string{"pwd"} }
func (a *authRequest) GetAudience() []string  { return []string{a.r.ClientID} }
func (a *authRequest) GetAuthTime() time.Time { return a.r.AuthTime }
func (a *authRequest) GetClientID() string    { return a.r.ClientID }
func (a *authRequest) GetCodeChallenge() *oidc.CodeChallenge {
	if a.r.CodeChallenge == "" {
		return nil
	}
	return &oidc.CodeChallenge{Challenge: a.r.CodeChallenge, Method: oidc.CodeChallengeMethod(a.r.CodeChallengeMethod)}
}
func (a *authRequest) GetNonce() string                   { return a.r.Nonce }
func (a *authRequest) GetRedirectURI() string             { return a.r.RedirectURI }
func (a *authRequest) GetResponseType() oidc.ResponseType { return oidc.ResponseTypeCode }
func (a *authRequest) GetResponseMode() oidc.ResponseMode { return oidc.ResponseMode(a.r.ResponseMode) }
func (a *authRequest) GetScopes() []string                { return a.r.Scopes }
func (a *authRequest) GetState() string                   { return a.r.State }
func (a *authRequest) GetSubject() string                 { return a.r.Username }
func (a *authRequest) Done() bool                         { return a.r.Done }

type resourceKey struct{}

// CreateAuthRequest keeps a request that op validated against its
// client, with t3agent's own rules: the code flow with PKCE S256 only,
// and the resource (RFC 8707) the authorize handler checked.
func (st storage) CreateAuthRequest(ctx context.Context, req *oidc.AuthRequest, _ string) (op.AuthRequest, error) {
	if req.ResponseType != oidc.ResponseTypeCode {
		return nil, oidc.ErrInvalidRequest().WithDescription("Only the authorization code flow (response_type code) is supported.")
	}
	if req.CodeChallenge == "" || req.CodeChallengeMethod != oidc.CodeChallengeMethodS256 {
		return nil, oidc.ErrInvalidRequest().WithDescription("PKCE with code_challenge_method S256 is required.")
	}
	resource, _ := ctx.Value(resourceKey{}).(string)
	if resource == "" {
		return nil, oidc.ErrInvalidRequest().WithDescription("The resource is missing.")
	}
	scopes := []string{ScopeMCP, oidc.ScopeOfflineAccess}
	r := store.OAuthRequest{
		ID: randomID(), ClientID: req.ClientID, RedirectURI: req.RedirectURI, State: req.State, Nonce: req.Nonce,
		Scopes: scopes, Resource: resource, CodeChallenge: req.CodeChallenge, CodeChallengeMethod: string(req.CodeChallengeMethod),
		ResponseMode: string(req.ResponseMode), ExpiresAt: st.s.now().Add(st.s.p.RequestTTL),
	}
	if err := st.s.p.Store.CreateOAuthRequest(ctx, r); err != nil {
		return nil, err
	}
	return &authRequest{r: r}, nil
}

func (st storage) AuthRequestByID(ctx context.Context, id string) (op.AuthRequest, error) {
	r, err := st.s.p.Store.OAuthRequest(ctx, id)
	if err != nil {
		return nil, err
	}
	return &authRequest{r: r}, nil
}

// AuthRequestByCode finds the request of a code that has not expired
// (the store's clock decides).
func (st storage) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	r, err := st.s.p.Store.OAuthRequestByCode(ctx, hashOf(code))
	if err != nil {
		return nil, err
	}
	return &authRequest{r: r}, nil
}

func (st storage) SaveAuthCode(ctx context.Context, id, code string) error {
	return st.s.p.Store.SetOAuthRequestCode(ctx, id, hashOf(code))
}

func (st storage) DeleteAuthRequest(ctx context.Context, id string) error {
	return st.s.p.Store.DeleteOAuthRequest(ctx, id)
}

// ---- tokens ----

// refreshRequest is a live refresh token of a grant, as op sees it.
type refreshRequest struct {
	tokenID string
	g       store.OAuthGrant
	scopes  []string
}

func (r *refreshRequest) GetAMR() []string             { return []string{"pwd"} }
func (r *refreshRequest) GetAudience() []string        { return []string{r.g.ClientID} }
func (r *refreshRequest) GetAuthTime() time.Time       { return r.g.CreatedAt }
func (r *refreshRequest) GetClientID() string          { return r.g.ClientID }
func (r *refreshRequest) GetScopes() []string          { return r.scopes }
func (r *refreshRequest) GetSubject() string           { return r.g.Username }
func (r *refreshRequest) SetCurrentScopes(sc []string) { r.scopes = sc }

// tokenResourceKey carries the resource a token request names, if any.
type tokenResourceKey struct{}

// checkResource refuses a token request whose resource parameter names
// another resource than the grant's (RFC 8707).
func checkResource(ctx context.Context, granted string) error {
	if asked, _ := ctx.Value(tokenResourceKey{}).(string); asked != "" && asked != granted {
		return oidc.ErrInvalidTarget().WithDescription("The resource does not match the one that was granted.")
	}
	return nil
}

func (st storage) CreateAccessToken(ctx context.Context, req op.TokenRequest) (string, time.Time, error) {
	g, err := st.grantOf(ctx, req)
	if err != nil {
		return "", time.Time{}, err
	}
	return st.newAccessToken(ctx, g.ID)
}

// newAccessToken stores an access token expiring AccessTTL from the
// server's clock. op turns the returned time into expires_in against the
// wall clock, so it gets the same lifetime from the wall clock.
func (st storage) newAccessToken(ctx context.Context, grantID string) (string, time.Time, error) {
	id := randomID()
	if err := st.s.p.Store.CreateOAuthToken(ctx, store.OAuthToken{
		ID: id, GrantID: grantID, Kind: store.OAuthAccessToken, ExpiresAt: st.s.now().Add(st.s.p.AccessTTL),
	}); err != nil {
		return "", time.Time{}, err
	}
	return id, time.Now().Add(st.s.p.AccessTTL), nil
}

// grantOf makes the grant of a redeemed code, or finds the grant of a
// refresh token after rotating it once.
func (st storage) grantOf(ctx context.Context, req op.TokenRequest) (store.OAuthGrant, error) {
	switch r := req.(type) {
	case *authRequest:
		if err := checkResource(ctx, r.r.Resource); err != nil {
			return store.OAuthGrant{}, err
		}
		c, err := st.s.p.Store.OAuthClient(ctx, r.r.ClientID)
		if err != nil {
			return store.OAuthGrant{}, err
		}
		return st.s.p.Store.CreateOAuthGrant(ctx, store.OAuthGrant{
			ID: randomID(), Username: r.r.Username, ClientID: r.r.ClientID, ClientName: c.Name,
			Resource: r.r.Resource, Scopes: []string{ScopeMCP},
		})
	case *refreshRequest:
		if err := checkResource(ctx, r.g.Resource); err != nil {
			return store.OAuthGrant{}, err
		}
		if err := st.s.p.Store.UseOAuthRefreshToken(ctx, r.tokenID); err != nil {
			if errors.Is(err, store.ErrConflict) {
				st.replayed(ctx, r.g.ID)
				return store.OAuthGrant{}, oidc.ErrInvalidGrant().WithDescription("The refresh token was already used.")
			}
			return store.OAuthGrant{}, err
		}
		return r.g, nil
	}
	return store.OAuthGrant{}, oidc.ErrUnsupportedGrantType()
}

// replayed revokes a grant whose rotated refresh token came back: one of
// the two holders is not its owner (OAuth 2.1 §4.3.1).
func (st storage) replayed(ctx context.Context, grantID string) {
	st.s.log.WarnContext(ctx, "a rotated refresh token was presented again; revoking its grant", "grant", grantID)
	if err := st.s.p.Store.RevokeOAuthGrant(ctx, grantID); err != nil && !errors.Is(err, store.ErrNotFound) {
		st.s.log.ErrorContext(ctx, "cannot revoke a replayed grant", "grant", grantID, "error", err.Error())
	}
}

func (st storage) CreateAccessAndRefreshTokens(ctx context.Context, req op.TokenRequest, _ string) (string, string, time.Time, error) {
	g, err := st.grantOf(ctx, req)
	if err != nil {
		return "", "", time.Time{}, err
	}
	id, exp, err := st.newAccessToken(ctx, g.ID)
	if err != nil {
		return "", "", time.Time{}, err
	}
	refresh := refreshPrefix + randomID()
	if err := st.s.p.Store.CreateOAuthToken(ctx, store.OAuthToken{
		ID: hashOf(refresh), GrantID: g.ID, Kind: store.OAuthRefreshToken, ExpiresAt: st.s.now().Add(st.s.p.RefreshTTL),
	}); err != nil {
		return "", "", time.Time{}, err
	}
	return id, refresh, exp, nil
}

// refreshPrefix marks t3agent's refresh tokens.
const refreshPrefix = "t3r_"

// liveToken reads a token that is of kind, not revoked, not expired, of
// a live grant.
func (st storage) liveToken(ctx context.Context, id, kind string) (store.OAuthToken, store.OAuthGrant, error) {
	t, g, err := st.s.p.Store.OAuthToken(ctx, id)
	if err != nil {
		return t, g, err
	}
	switch {
	case t.Kind != kind:
		return t, g, fmt.Errorf("oauth: not a %s token", kind)
	case !t.RevokedAt.IsZero() || !g.RevokedAt.IsZero():
		return t, g, errors.New("oauth: the token or its grant is revoked")
	case !st.s.now().Before(t.ExpiresAt):
		return t, g, errors.New("oauth: the token expired")
	}
	return t, g, nil
}

func (st storage) TokenRequestByRefreshToken(ctx context.Context, token string) (op.RefreshTokenRequest, error) {
	t, g, err := st.s.p.Store.OAuthToken(ctx, hashOf(token))
	if err != nil {
		return nil, err
	}
	if t.Kind == store.OAuthRefreshToken && !t.UsedAt.IsZero() {
		st.replayed(ctx, g.ID)
		return nil, errors.New("oauth: the refresh token was already used")
	}
	if _, _, err := st.liveToken(ctx, t.ID, store.OAuthRefreshToken); err != nil {
		return nil, err
	}
	return &refreshRequest{tokenID: t.ID, g: g, scopes: []string{ScopeMCP, oidc.ScopeOfflineAccess}}, nil
}

func (st storage) TerminateSession(context.Context, string, string) error { return nil }

// RevokeToken revokes an access token (tokenOrID is its id) or, for a
// refresh token (its id or its value), the whole grant: RFC 7009 §2.1
// asks that the access tokens of the grant go too.
func (st storage) RevokeToken(ctx context.Context, tokenOrID, _, clientID string) *oidc.Error {
	t, g, err := st.s.p.Store.OAuthToken(ctx, tokenOrID)
	if errors.Is(err, store.ErrNotFound) {
		t, g, err = st.s.p.Store.OAuthToken(ctx, hashOf(tokenOrID))
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil // RFC 7009: an unknown token is not an error.
	}
	if err != nil {
		return oidc.ErrServerError().WithParent(err)
	}
	if g.ClientID != clientID {
		return oidc.ErrInvalidClient().WithDescription("The token was not issued to this client.")
	}
	if t.Kind == store.OAuthRefreshToken {
		if err := st.s.p.Store.RevokeOAuthGrant(ctx, g.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return oidc.ErrServerError().WithParent(err)
		}
		return nil
	}
	if err := st.s.p.Store.RevokeOAuthToken(ctx, t.ID); err != nil {
		return oidc.ErrServerError().WithParent(err)
	}
	return nil
}

func (st storage) GetRefreshTokenInfo(ctx context.Context, clientID, token string) (string, string, error) {
	t, g, err := st.s.p.Store.OAuthToken(ctx, hashOf(token))
	if err != nil || t.Kind != store.OAuthRefreshToken || g.ClientID != clientID {
		return "", "", op.ErrInvalidRefreshToken
	}
	return g.Username, t.ID, nil
}

// ---- keys: an Ed25519 key derived from the server's key signs the ID
// tokens op always issues beside the access token ----

type signingKey struct {
	id  string
	key ed25519.PrivateKey
}

func (k signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.EdDSA }
func (k signingKey) Key() any                                    { return k.key }
func (k signingKey) ID() string                                  { return k.id }

type publicKey struct{ k signingKey }

func (p publicKey) ID() string                         { return p.k.id }
func (p publicKey) Algorithm() jose.SignatureAlgorithm { return jose.EdDSA }
func (p publicKey) Use() string                        { return "sig" }
func (p publicKey) Key() any                           { return p.k.key.Public() }

func (st storage) SigningKey(context.Context) (op.SigningKey, error) { return st.s.sign, nil }
func (st storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.EdDSA}, nil
}
func (st storage) KeySet(context.Context) ([]op.Key, error) {
	return []op.Key{publicKey{st.s.sign}}, nil
}

// ---- clients ----

func (st storage) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := st.s.client(ctx, id)
	if err != nil {
		return nil, err
	}
	return &client{c: c, login: st.s.consentURL}, nil
}

func (st storage) AuthorizeClientIDSecret(context.Context, string, string) error {
	return errors.New("oauth: t3agent's clients are public; they authenticate with PKCE, not a secret")
}

func (st storage) SetUserinfoFromScopes(context.Context, *oidc.UserInfo, string, string, []string) error {
	return nil
}

func (st storage) SetUserinfoFromToken(_ context.Context, info *oidc.UserInfo, _, subject, _ string) error {
	info.Subject = subject
	return nil
}

func (st storage) SetIntrospectionFromToken(_ context.Context, resp *oidc.IntrospectionResponse, _, subject, clientID string) error {
	resp.Subject, resp.ClientID = subject, clientID
	return nil
}

func (st storage) GetPrivateClaimsFromScopes(context.Context, string, string, []string) (map[string]any, error) {
	return nil, nil
}

func (st storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errors.New("oauth: JWT client authentication is not supported")
}

func (st storage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errors.New("oauth: the JWT profile grant is not supported")
}

func (st storage) Health(ctx context.Context) error { return nil }

// client is a public, native client: PKCE, loopback redirects on any
// port (RFC 8252), private-use schemes and https.
type client struct {
	c     store.OAuthClient
	login func(string) string
}

func (c *client) GetID() string                       { return c.c.ClientID }
func (c *client) RedirectURIs() []string              { return slices.Clone(c.c.RedirectURIs) }
func (c *client) PostLogoutRedirectURIs() []string    { return nil }
func (c *client) ApplicationType() op.ApplicationType { return op.ApplicationTypeNative }
func (c *client) AuthMethod() oidc.AuthMethod         { return oidc.AuthMethodNone }
func (c *client) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}
func (c *client) LoginURL(id string) string            { return c.login(id) }
func (c *client) AccessTokenType() op.AccessTokenType  { return op.AccessTokenTypeBearer }
func (c *client) IDTokenLifetime() time.Duration       { return 5 * time.Minute }
func (c *client) DevMode() bool                        { return false }
func (c *client) IsScopeAllowed(scope string) bool     { return scope == ScopeMCP }
func (c *client) IDTokenUserinfoClaimsAssertion() bool { return false }
func (c *client) ClockSkew() time.Duration             { return 0 }
func (c *client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) GrantTypes() []oidc.GrantType {
	return []oidc.GrantType{oidc.GrantTypeCode, oidc.GrantTypeRefreshToken}
}
