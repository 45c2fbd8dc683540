package console

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/t3agent/t3agent/internal/servicetoken"
	"github.com/t3agent/t3agent/internal/store"
)

type tokensView struct {
	Tokens []tokenRow
	Grants []store.OAuthGrant
	Scopes []store.Scope
	// Created is the token just created, with its secret: shown once.
	Created *servicetoken.Created
	// Form keeps what was typed after a refusal; Error says why.
	Form  tokenForm
	Error string
}

type tokenRow struct {
	servicetoken.View
	State servicetoken.State
}

type tokenForm struct {
	Name, User, Expires string
	Scopes              []string
}

// Has reports whether the form ticked scope s.
func (f tokenForm) Has(s store.Scope) bool {
	for _, x := range f.Scopes {
		if x == string(s) {
			return true
		}
	}
	return false
}

func (c *Console) tokensView(q *req) (tokensView, error) {
	ops := c.ops()
	ctx := q.r.Context()
	v := tokensView{Scopes: store.Scopes()}
	toks, err := ops.Tokens.List(ctx)
	if err != nil {
		return v, err
	}
	now := c.p.Now()
	for _, t := range toks {
		tv := servicetoken.ViewOf(t)
		v.Tokens = append(v.Tokens, tokenRow{View: tv, State: tv.State(now)})
	}
	if ops.Grants != nil {
		if v.Grants, err = ops.Grants.OAuthGrants(ctx, store.ListOAuthGrantsParams{}); err != nil {
			return v, err
		}
	}
	return v, nil
}

// tokensPage lists the service tokens and the OAuth grants, with the
// form that creates a token.
func (c *Console) tokensPage(q *req) error {
	if c.ops().Tokens == nil {
		return notFound()
	}
	v, err := c.tokensView(q)
	if err != nil {
		return err
	}
	v.Form.Expires = "90"
	c.render(q, http.StatusOK, "tokens.html", &pageData{Title: q.t("tokens.title"), Data: v})
	return nil
}

// tokenCreate creates a token and shows its secret on the answer itself,
// never after a redirect: it is not kept anywhere to be shown again.
func (c *Console) tokenCreate(q *req) error {
	ops := c.ops()
	if ops.Tokens == nil {
		return notFound()
	}
	f := q.r.PostForm
	form := tokenForm{Name: f.Get("name"), User: f.Get("user"), Expires: f.Get("expires"), Scopes: f["scopes"]}
	p := servicetoken.CreateParams{Name: form.Name, Username: form.User, Creator: q.user()}
	for _, s := range form.Scopes {
		p.Scopes = append(p.Scopes, store.Scope(s))
	}
	status := http.StatusCreated
	var msg string
	days, err := strconv.Atoi(form.Expires)
	if form.Expires == "" {
		days, err = 0, nil
	}
	var created servicetoken.Created
	if err != nil || days < 0 || days > 3650 {
		status, msg = http.StatusBadRequest, q.t("tokens.badExpires")
	} else {
		p.Expires = time.Duration(days) * 24 * time.Hour
		created, err = ops.Tokens.Create(q.r.Context(), p)
		var fe *servicetoken.FieldError
		switch {
		case errors.As(err, &fe):
			status, msg = http.StatusBadRequest, q.t("tokens.field."+fe.Field)+": "+fe.Msg
			if fe.Conflict {
				status = http.StatusConflict
			}
		case err != nil:
			return err
		}
	}
	v, err := c.tokensView(q)
	if err != nil {
		return err
	}
	if msg != "" {
		v.Form, v.Error = form, msg
	} else {
		v.Created = &created
		v.Form.Expires = "90"
		c.p.Logger.Info("service token created", "token", created.Token.Name, "user", created.Token.Username, "by", q.user().Username, "via", "console")
	}
	c.render(q, status, "tokens.html", &pageData{Title: q.t("tokens.title"), Data: v})
	return nil
}

// tokenRevoke revokes a token; the API refuses it from then on.
func (c *Console) tokenRevoke(q *req) error {
	ops := c.ops()
	if ops.Tokens == nil {
		return notFound()
	}
	name := q.r.PathValue("name")
	err := ops.Tokens.Revoke(q.r.Context(), name)
	if errors.Is(err, servicetoken.ErrNotFound) {
		return notFound()
	}
	if err != nil {
		return err
	}
	c.p.Logger.Info("service token revoked", "token", name, "by", q.user().Username, "via", "console")
	c.redirect(q, "/tokens#token-"+name)
	return nil
}

// grantRevoke revokes an MCP host's OAuth grant.
func (c *Console) grantRevoke(q *req) error {
	ops := c.ops()
	if ops.Grants == nil {
		return notFound()
	}
	err := ops.Grants.RevokeOAuthGrant(q.r.Context(), q.r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) {
		return notFound()
	}
	if err != nil {
		return err
	}
	c.redirect(q, "/tokens#grants")
	return nil
}

// LastUsed is when the token was last used, "–" for never.
func (r tokenRow) LastUsed() string {
	if r.LastUsedAt == nil {
		return "–"
	}
	return r.LastUsedAt.UTC().Format("2006-01-02 15:04:05")
}
