// Package servicetoken creates, lists and revokes the API's service
// tokens: the one implementation behind `t3agent token …`, the JSON API's
// /api/v1/tokens and the console's Tokens page.
//
// A token's secret is "t3a_" and 32 random bytes (base64url); only its
// SHA-256 is stored, and the secret is shown once, when it is created.
// 256 random bits need no salt or stretching, and a plain hash lets the
// API find the token by it (Hash).
package servicetoken

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/typo3"
)

// Prefix starts every secret, so that a leaked one is recognisable
// (secret scanners, logs).
const Prefix = "t3a_"

// Hash is the hex SHA-256 under which a secret is stored and looked up.
func Hash(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// NewSecret returns a fresh secret and its Hash.
func NewSecret() (secret, hash string, err error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", fmt.Errorf("cannot read random bytes for the token: %w", err)
	}
	secret = Prefix + base64.RawURLEncoding.EncodeToString(b[:])
	return secret, Hash(secret), nil
}

// namePattern keeps names printable in a table, a URL and a shell.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// FieldError is a refused field of a create: Field names it (name, user,
// scopes, expires, creator), Value is what was given, Msg says what is
// wrong in one sentence fragment. Callers phrase it for their surface
// (a flag, a JSON field, a form field).
type FieldError struct {
	Field, Value, Msg string
	// Conflict marks a name that is taken.
	Conflict bool
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// ErrNotFound is returned by Revoke for a name no token has.
var ErrNotFound = errors.New("no such service token")

// ScopeNames lists the scopes, comma-separated, for messages.
func ScopeNames() string {
	names := make([]string, 0, len(store.Scopes()))
	for _, s := range store.Scopes() {
		names = append(names, string(s))
	}
	return strings.Join(names, ", ")
}

// ParseScopes checks scope names against store.Scopes, drops blanks and
// repeats, and needs at least one.
func ParseScopes(values []string) ([]store.Scope, error) {
	valid := store.Scopes()
	var out []store.Scope
	for _, v := range values {
		s := store.Scope(strings.TrimSpace(v))
		if s == "" {
			continue
		}
		if !slices.Contains(valid, s) {
			return nil, &FieldError{Field: "scopes", Value: v, Msg: fmt.Sprintf("%q is not a scope; the scopes are %s", v, ScopeNames())}
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, &FieldError{Field: "scopes", Msg: "a token needs one or more of " + ScopeNames()}
	}
	return out, nil
}

// Users loads backend users; *typo3.Site implements it. Safe for
// concurrent use.
type Users interface {
	BackendUserByName(ctx context.Context, username string) (*typo3.BackendUser, error)
}

// Params configure a Service. Store and Users are required.
type Params struct {
	Store store.Credentials
	Users Users
	// Now is the clock of expiry; nil means time.Now.
	Now func() time.Time
}

// Service manages service tokens. It is safe for concurrent use.
type Service struct {
	st    store.Credentials
	users Users
	now   func() time.Time
}

// New builds a Service.
func New(p Params) *Service {
	if p.Now == nil {
		p.Now = time.Now
	}
	return &Service{st: p.Store, users: p.Users, now: p.Now}
}

// CreateParams describe a new token.
type CreateParams struct {
	Name string
	// Username is the backend user the token acts as.
	Username string
	Scopes   []store.Scope
	// Expires is the lifetime; 0 never expires.
	Expires time.Duration
	// Creator is the person creating the token, who must be a TYPO3
	// admin; nil records CreatedBy (the command line: "cli").
	Creator   *typo3.BackendUser
	CreatedBy string
}

// Created is a new token with its secret, which is never available again.
type Created struct {
	Token  store.ServiceToken
	Secret string
}

// Create checks the parameters (each refusal a *FieldError), makes a
// secret and stores the token under its hash.
func (s *Service) Create(ctx context.Context, p CreateParams) (Created, error) {
	if !namePattern.MatchString(p.Name) {
		msg := fmt.Sprintf("%q is not a token name (letters, digits, _ . -, at most 64)", p.Name)
		if p.Name == "" {
			msg = "a token needs a unique name"
		}
		return Created{}, &FieldError{Field: "name", Value: p.Name, Msg: msg}
	}
	if p.Username == "" {
		return Created{}, &FieldError{Field: "user", Msg: "a token needs the backend user it acts as"}
	}
	sc, err := ParseScopes(scopeStrings(p.Scopes))
	if err != nil {
		return Created{}, err
	}
	if p.Expires < 0 {
		return Created{}, &FieldError{Field: "expires", Msg: "the lifetime must not be negative (0 never expires)"}
	}
	createdBy := p.CreatedBy
	if p.Creator != nil {
		if !p.Creator.Admin {
			return Created{}, &FieldError{Field: "creator", Value: p.Creator.Username, Msg: "only TYPO3 admins create service tokens"}
		}
		createdBy = p.Creator.Username
	}
	if createdBy == "" {
		createdBy = "cli"
	}
	u, err := s.users.BackendUserByName(ctx, p.Username)
	if errors.Is(err, typo3.ErrUserCannotAct) {
		return Created{}, &FieldError{Field: "user", Value: p.Username, Msg: "this backend user cannot act (unknown, disabled, deleted or expired)"}
	}
	if err != nil {
		return Created{}, err
	}
	if slices.Contains(sc, store.ScopeAdmin) && !u.Admin {
		return Created{}, &FieldError{Field: "scopes", Value: string(store.ScopeAdmin), Msg: fmt.Sprintf("admin needs a TYPO3 admin as the token's user, and %s is not one", u.Username)}
	}
	secret, hash, err := NewSecret()
	if err != nil {
		return Created{}, err
	}
	cp := store.CreateServiceTokenParams{Name: p.Name, Username: u.Username, Scopes: sc, SecretHash: hash, CreatedBy: createdBy}
	if p.Expires > 0 {
		cp.ExpiresAt = s.now().Add(p.Expires).UTC()
	}
	tok, err := s.st.CreateServiceToken(ctx, cp)
	if errors.Is(err, store.ErrConflict) {
		return Created{}, &FieldError{Field: "name", Value: p.Name, Msg: fmt.Sprintf("a token named %s already exists; choose another name", p.Name), Conflict: true}
	}
	if err != nil {
		return Created{}, err
	}
	return Created{Token: tok, Secret: secret}, nil
}

func scopeStrings(s []store.Scope) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = string(x)
	}
	return out
}

// List lists every token by name, never nil.
func (s *Service) List(ctx context.Context) ([]store.ServiceToken, error) {
	return s.st.ServiceTokens(ctx)
}

// Revoke revokes the token named name; requests with it are refused from
// then on. ErrNotFound when no token has the name.
func (s *Service) Revoke(ctx context.Context, name string) error {
	err := s.st.RevokeServiceToken(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	return err
}

// State is a token's standing at now.
type State string

const (
	Active  State = "active"
	Revoked State = "revoked"
	Expired State = "expired"
)

// View is a token as every surface shows it: never its secret or hash.
type View struct {
	Name       string        `json:"name"`
	Username   string        `json:"username"`
	Scopes     []store.Scope `json:"scopes"`
	CreatedBy  string        `json:"createdBy"`
	CreatedAt  time.Time     `json:"createdAt"`
	ExpiresAt  *time.Time    `json:"expiresAt"`
	LastUsedAt *time.Time    `json:"lastUsedAt"`
	Revoked    bool          `json:"revoked"`
}

// ViewOf is the view of a stored token.
func ViewOf(t store.ServiceToken) View {
	v := View{Name: t.Name, Username: t.Username, Scopes: t.Scopes, CreatedBy: t.CreatedBy, CreatedAt: t.CreatedAt, Revoked: t.Revoked}
	if v.Scopes == nil {
		v.Scopes = []store.Scope{}
	}
	if !t.ExpiresAt.IsZero() {
		v.ExpiresAt = &t.ExpiresAt
	}
	if !t.LastUsedAt.IsZero() {
		v.LastUsedAt = &t.LastUsedAt
	}
	return v
}

// State is the view's standing at now.
func (v View) State(now time.Time) State {
	switch {
	case v.Revoked:
		return Revoked
	case v.ExpiresAt != nil && !v.ExpiresAt.After(now):
		return Expired
	}
	return Active
}

// ScopeList is the scopes comma-separated.
func (v View) ScopeList() string { return strings.Join(scopeStrings(v.Scopes), ",") }
