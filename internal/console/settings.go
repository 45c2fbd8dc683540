package console

import (
	"errors"
	"net/http"

	"github.com/t3agent/t3agent/internal/settings"
)

type settingsView struct {
	Settings []settings.Value
	Saved    bool
	Error    string
}

// settingsPage shows the settings with a form to change them.
func (c *Console) settingsPage(q *req) error {
	svc := c.ops().Settings
	if svc == nil {
		return notFound()
	}
	list, err := svc.List(q.r.Context())
	if err != nil {
		return err
	}
	v := settingsView{Settings: list, Saved: q.r.URL.Query().Get("saved") == "1"}
	c.render(q, http.StatusOK, "settings.html", &pageData{Title: q.t("settings.title"), Data: v})
	return nil
}

// settingsPost stores the posted settings (each checked; nothing is
// stored when one is refused).
func (c *Console) settingsPost(q *req) error {
	svc := c.ops().Settings
	if svc == nil {
		return notFound()
	}
	changes := map[string]string{}
	for _, d := range settings.Definitions() {
		if q.r.PostForm.Has(d.Key) {
			changes[d.Key] = q.r.PostForm.Get(d.Key)
		}
	}
	err := svc.Update(q.r.Context(), changes)
	var se *settings.Error
	if errors.As(err, &se) {
		list, lerr := svc.List(q.r.Context())
		if lerr != nil {
			return lerr
		}
		c.render(q, http.StatusBadRequest, "settings.html", &pageData{Title: q.t("settings.title"), Data: settingsView{Settings: list, Error: se.Msg}})
		return nil
	}
	if err != nil {
		return err
	}
	c.p.Logger.Info("settings changed", "by", q.user().Username, "settings", changes, "via", "console")
	c.redirect(q, "/settings?saved=1")
	return nil
}
