package web

import (
	"errors"
	"net/http"

	"github.com/t3agent/t3agent/internal/settings"
)

// settingsShow answers GET /api/v1/settings: every setting with its
// value, default and allowed values (admins only).
func (s *Server) settingsShow(w http.ResponseWriter, r *http.Request, c *caller) {
	svc, err := s.settingsService(c)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	list, err := svc.List(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"settings": list})
}

func (s *Server) settingsService(c *caller) (*settings.Service, error) {
	if err := requireAdmin(c); err != nil {
		return nil, err
	}
	if s.ops().Settings == nil {
		return nil, unavailable("Settings are")
	}
	return s.ops().Settings, nil
}

// settingsUpdate answers PUT /api/v1/settings with {"settings": {key:
// value}}: each value is checked, then all are stored; "" resets one to
// its default. It answers the settings as they now are (admins only).
func (s *Server) settingsUpdate(w http.ResponseWriter, r *http.Request, c *caller) {
	svc, err := s.settingsService(c)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var body struct {
		Settings map[string]string `json:"settings"`
	}
	if err := decode(r, &body, false); err != nil {
		s.fail(w, r, err)
		return
	}
	if len(body.Settings) == 0 {
		s.fail(w, r, badRequest("The field settings must name at least one setting."))
		return
	}
	if err := svc.Update(r.Context(), body.Settings); err != nil {
		var se *settings.Error
		if errors.As(err, &se) {
			err = badRequest(se.Msg)
		}
		s.fail(w, r, err)
		return
	}
	s.p.Logger.Info("settings changed", "by", c.user.Username, "settings", body.Settings)
	s.settingsShow(w, r, c)
}
