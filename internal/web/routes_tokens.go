package web

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/t3agent/t3agent/internal/servicetoken"
	"github.com/t3agent/t3agent/internal/store"
)

// tokensList answers GET /api/v1/tokens: every service token, never a
// secret or hash (admins only).
func (s *Server) tokensList(w http.ResponseWriter, r *http.Request, c *caller) {
	svc, err := s.tokenService(c)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	toks, err := svc.List(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := make([]tokenJSON, len(toks))
	now := s.api.Now()
	for i, t := range toks {
		out[i] = tokenOf(t, now)
	}
	writeJSON(w, http.StatusOK, map[string]any{"tokens": out})
}

// tokenJSON is a token with its state.
type tokenJSON struct {
	servicetoken.View
	State servicetoken.State `json:"state"`
}

func tokenOf(t store.ServiceToken, now time.Time) tokenJSON {
	v := servicetoken.ViewOf(t)
	return tokenJSON{View: v, State: v.State(now)}
}

func (s *Server) tokenService(c *caller) (*servicetoken.Service, error) {
	if err := requireAdmin(c); err != nil {
		return nil, err
	}
	if s.ops().Tokens == nil {
		return nil, unavailable("Service tokens are")
	}
	return s.ops().Tokens, nil
}

// tokenCreateJSON is the body of POST /api/v1/tokens.
type tokenCreateJSON struct {
	Name   string        `json:"name"`
	User   string        `json:"user"`
	Scopes []store.Scope `json:"scopes"`
	// ExpiresInDays is the lifetime in days; 0 never expires.
	ExpiresInDays int `json:"expiresInDays"`
}

// maxTokenDays bounds a token's lifetime in days (ten years).
const maxTokenDays = 3650

// tokenCreate answers POST /api/v1/tokens: 201 with the token and its
// secret, which is never shown again (admins only).
func (s *Server) tokenCreate(w http.ResponseWriter, r *http.Request, c *caller) {
	svc, err := s.tokenService(c)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var body tokenCreateJSON
	if err := decode(r, &body, false); err != nil {
		s.fail(w, r, err)
		return
	}
	if body.ExpiresInDays < 0 || body.ExpiresInDays > maxTokenDays {
		s.fail(w, r, badRequest(fmt.Sprintf("The field expiresInDays must be a whole number from 0 (never expires) to %d.", maxTokenDays)))
		return
	}
	created, err := svc.Create(r.Context(), servicetoken.CreateParams{
		Name: body.Name, Username: body.User, Scopes: body.Scopes,
		Expires: time.Duration(body.ExpiresInDays) * 24 * time.Hour, Creator: c.user,
	})
	if err != nil {
		s.fail(w, r, tokenRefusal(err))
		return
	}
	s.p.Logger.Info("service token created", "token", created.Token.Name, "user", created.Token.Username, "by", c.user.Username)
	writeJSON(w, http.StatusCreated, struct {
		tokenJSON
		Secret string `json:"secret"`
	}{tokenOf(created.Token, s.api.Now()), created.Secret})
}

// tokenRefusal maps a refusal of the token service to the API's: a taken
// name is 409, another refused field 400 with its sentence.
func tokenRefusal(err error) error {
	var fe *servicetoken.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	field := map[string]string{"name": "name", "user": "user", "scopes": "scopes", "expires": "expiresInDays", "creator": "user"}[fe.Field]
	if fe.Conflict {
		return &apiError{status: http.StatusConflict, code: "tokenNameTaken", msg: "The field name: " + fe.Msg + ".", cause: err}
	}
	if fe.Field == "creator" {
		return apiErr(http.StatusForbidden, "adminRequired", err)
	}
	return &apiError{status: http.StatusBadRequest, code: "badRequest", msg: "The field " + field + ": " + fe.Msg + ".", cause: err}
}

// tokenRevoke answers DELETE /api/v1/tokens/{name}: requests with the
// token are refused from then on (admins only).
func (s *Server) tokenRevoke(w http.ResponseWriter, r *http.Request, c *caller) {
	svc, err := s.tokenService(c)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	name := r.PathValue("name")
	err = svc.Revoke(r.Context(), name)
	if errors.Is(err, servicetoken.ErrNotFound) {
		s.fail(w, r, apiErr(http.StatusNotFound, "tokenNotFound", err))
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.p.Logger.Info("service token revoked", "token", name, "by", c.user.Username)
	w.WriteHeader(http.StatusNoContent)
}

// grantJSON is an OAuth grant of an MCP host.
type grantJSON struct {
	ID         string     `json:"id"`
	Username   string     `json:"username"`
	Client     string     `json:"client"`
	ClientID   string     `json:"clientId"`
	Resource   string     `json:"resource"`
	CreatedAt  time.Time  `json:"createdAt"`
	LastUsedAt *time.Time `json:"lastUsedAt"`
	RevokedAt  *time.Time `json:"revokedAt"`
}

func grantOf(g store.OAuthGrant) grantJSON {
	v := grantJSON{ID: g.ID, Username: g.Username, Client: g.ClientName, ClientID: g.ClientID, Resource: g.Resource, CreatedAt: g.CreatedAt}
	if !g.LastUsedAt.IsZero() {
		v.LastUsedAt = &g.LastUsedAt
	}
	if !g.RevokedAt.IsZero() {
		v.RevokedAt = &g.RevokedAt
	}
	return v
}

// grantsList answers GET /api/v1/grants: the live OAuth grants the
// person gave MCP hosts; an admin sees everyone's (?user= narrows).
func (s *Server) grantsList(w http.ResponseWriter, r *http.Request, c *caller) {
	gs := s.ops().Grants
	if gs == nil {
		s.fail(w, r, unavailable("OAuth grants are"))
		return
	}
	p := store.ListOAuthGrantsParams{Username: c.user.Username}
	if c.user.Admin {
		p.Username = r.URL.Query().Get("user")
	}
	list, err := gs.OAuthGrants(r.Context(), p)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := make([]grantJSON, len(list))
	for i, g := range list {
		out[i] = grantOf(g)
	}
	writeJSON(w, http.StatusOK, map[string]any{"grants": out})
}

// grantRevoke answers POST /api/v1/grants/{id}/revoke: the grant's
// tokens are refused from then on. A person revokes their own grants, an
// admin anyone's; another's grant is 404, as if it did not exist.
func (s *Server) grantRevoke(w http.ResponseWriter, r *http.Request, c *caller) {
	gs := s.ops().Grants
	if gs == nil {
		s.fail(w, r, unavailable("OAuth grants are"))
		return
	}
	id := r.PathValue("id")
	g, err := gs.OAuthGrant(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) || err == nil && (!g.RevokedAt.IsZero() || !c.user.Admin && g.Username != c.user.Username) {
		s.fail(w, r, apiErr(http.StatusNotFound, "grantNotFound", err))
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if err := gs.RevokeOAuthGrant(r.Context(), id); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			err = apiErr(http.StatusNotFound, "grantNotFound", err)
		}
		s.fail(w, r, err)
		return
	}
	s.p.Logger.Info("OAuth grant revoked", "grant", id, "user", g.Username, "by", c.user.Username)
	w.WriteHeader(http.StatusNoContent)
}
