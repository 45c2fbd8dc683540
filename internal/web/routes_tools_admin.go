package web

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/playground"
)

func (s *Server) toolAdminRoutes() []route {
	return []route{
		{"POST /api/v1/tools/{name}/call", anyone, adminScope, s.adminOnly(s.toolCall)},
		{"POST /api/v1/tools/{name}/enable", anyone, adminScope, s.adminOnly(s.toolToggle(true))},
		{"POST /api/v1/tools/{name}/disable", anyone, adminScope, s.adminOnly(s.toolToggle(false))},
		{"POST /api/v1/tools/groups/{name}/enable", anyone, adminScope, s.adminOnly(s.groupToggle(true))},
		{"POST /api/v1/tools/groups/{name}/disable", anyone, adminScope, s.adminOnly(s.groupToggle(false))},
	}
}

// toolCallBody is the body of POST /api/v1/tools/{name}/call.
type toolCallBody struct {
	Arguments json.RawMessage `json:"arguments"`
	// ConfirmWrite must be true to call a tool that writes or needs
	// approval: the call runs at once, without the approval a run's call
	// waits for.
	ConfirmWrite bool `json:"confirmWrite"`
}

// toolCall calls one tool through the gate as the caller (the tool
// playground): the gate decides for the caller under the configuration
// of the query (as the other tool routes), validates the arguments and
// bounds the result. A denied call answers 200 with the gate's neutral
// error result and the decision, as a model would see it.
func (s *Server) toolCall(w http.ResponseWriter, r *http.Request, c *caller) {
	name := r.PathValue("name")
	var body toolCallBody
	if err := decode(r, &body, true); err != nil {
		s.fail(w, r, err)
		return
	}
	if _, ok := s.api.Gate.Registry().Get(r.Context(), name); !ok {
		s.fail(w, r, apiErr(http.StatusNotFound, "toolNotFound", nil))
		return
	}
	cfg, err := s.gateConfig(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out, err := playground.Call(r.Context(), s.api.Gate, playground.Params{
		Name: name, Args: body.Arguments, Actor: c.user, Config: cfg, Source: "api", ConfirmWrite: body.ConfirmWrite,
	})
	if errors.Is(err, playground.ErrConfirmWrite) {
		err = badRequest("This tool writes or needs approval, and a playground call runs at once; set confirmWrite to true to call it.")
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"tool": name, "decision": s.toolOf(r, out.Decision, false).Decision, "result": out.Result, "durationNs": out.Duration,
	})
}

// toolToggle switches one tool on or off for every configuration, as
// `t3agent tools enable|disable NAME` does.
func (s *Server) toolToggle(on bool) func(w http.ResponseWriter, r *http.Request, c *caller) {
	return func(w http.ResponseWriter, r *http.Request, c *caller) {
		name := r.PathValue("name")
		_, err := s.api.Gate.Availability().SetTool(r.Context(), gate.SetToolParams{Name: name, Enabled: on, By: c.user.Username})
		if errors.Is(err, gate.ErrUnknownTool) {
			err = apiErr(http.StatusNotFound, "toolNotFound", err)
		}
		if err != nil {
			s.fail(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"tool": name, "enabled": on})
	}
}

// groupToggle switches a whole tool group on or off, as `t3agent tools
// enable|disable --group GROUP` does.
func (s *Server) groupToggle(on bool) func(w http.ResponseWriter, r *http.Request, c *caller) {
	return func(w http.ResponseWriter, r *http.Request, c *caller) {
		group := r.PathValue("name")
		_, err := s.api.Gate.Availability().SetGroup(r.Context(), gate.SetGroupParams{Group: group, Enabled: on, By: c.user.Username})
		if errors.Is(err, gate.ErrUnknownGroup) {
			err = apiErr(http.StatusNotFound, "toolGroupNotFound", err)
		}
		if err != nil {
			s.fail(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"group": group, "enabled": on})
	}
}
