package console

import (
	"errors"
	"math"
	"net/http"
	"strconv"

	"github.com/t3agent/t3agent/internal/typo3"
)

type loginView struct {
	Username string
	Next     string
	// Error is the sentence of a refused login.
	Error string
}

// home is the dashboard for a person logged in, else the login.
func (c *Console) home(q *req) error {
	if q.sess == nil {
		return c.loginForm(q)
	}
	return c.dashboard(q)
}

func (c *Console) loginForm(q *req) error {
	if q.sess != nil {
		c.redirect(q, safeNext(q.r.URL.Query().Get("next")))
		return nil
	}
	c.render(q, http.StatusOK, "login.html", &pageData{Title: q.t("login.title"),
		Data: loginView{Next: safeNext(q.r.URL.Query().Get("next"))}})
	return nil
}

// loginPost checks the credentials; a refusal renders the form again with
// one sentence: wrong credentials (or a disabled account: the site never
// tells which usernames exist), a stored hash t3agent refuses, or the
// wait after too many failures.
func (c *Console) loginPost(q *req) error {
	username, password := q.r.PostForm.Get("username"), q.r.PostForm.Get("password")
	v := loginView{Username: username, Next: safeNext(q.r.PostForm.Get("next"))}
	status := http.StatusOK
	switch {
	case username == "" || password == "":
		status, v.Error = http.StatusBadRequest, q.t("login.missing")
	default:
		_, wait, err := c.p.Auth.Login(q.w, q.r, username, password)
		switch {
		case wait > 0:
			secs := int(math.Ceil(wait.Seconds()))
			q.w.Header().Set("Retry-After", strconv.Itoa(secs))
			status, v.Error = http.StatusTooManyRequests, (&pageData{q: q}).Lf("login.rateLimited", secs)
		case errors.Is(err, typo3.ErrAuthFailed):
			status, v.Error = http.StatusUnauthorized, q.t("login.failed")
		case errors.Is(err, typo3.ErrPasswordHashUnusable):
			status, v.Error = http.StatusUnauthorized, q.t("login.hashUnusable")
		case err != nil:
			return err
		default:
			c.redirect(q, v.Next)
			return nil
		}
	}
	c.render(q, status, "login.html", &pageData{Title: q.t("login.title"), Data: v})
	return nil
}

func (c *Console) logoutPost(q *req) error {
	if err := c.p.Auth.Logout(q.w, q.r); err != nil {
		return err
	}
	c.redirect(q, "/login")
	return nil
}
