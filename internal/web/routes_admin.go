package web

import (
	"errors"
	"net/http"

	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/store"
)

// adminScope is what a service token needs for the admin routes (tool
// availability and calls, MCP servers, the agent configuration); the
// person, or the token's user, must also be a TYPO3 admin.
var adminScope = []store.Scope{store.ScopeAdmin}

// adminOnly lets only TYPO3 admins through: a person who is one, or a
// token with the admin scope acting as one.
func (s *Server) adminOnly(h func(w http.ResponseWriter, r *http.Request, c *caller)) func(w http.ResponseWriter, r *http.Request, c *caller) {
	return func(w http.ResponseWriter, r *http.Request, c *caller) {
		if c == nil || c.user == nil || !c.user.Admin {
			s.fail(w, r, apiErr(http.StatusForbidden, "adminRequired", nil))
			return
		}
		h(w, r, c)
	}
}

// classifyAdmin classifies the errors of the admin services: the MCP
// client's refusals and failures (whose sentences are public-safe: the
// causes are only logged) and the agent configuration's.
func classifyAdmin(err error) (int, errorBody, bool) {
	var me *mcp.Error
	var ve *agentconfig.ValidationError
	switch {
	case errors.As(err, &me) && me.Kind == mcp.KindInvalidRequest:
		return http.StatusBadRequest, errorBody{"badRequest", sentenceOf(me.Error())}, true
	case errors.As(err, &me):
		return http.StatusBadGateway, errorBody{"mcpFailed", sentenceOf(me.Error())}, true
	case errors.As(err, &ve):
		return http.StatusUnprocessableEntity, errorBody{"invalidConfiguration", ve.Error()}, true
	case errors.Is(err, agentconfig.ErrStale):
		return http.StatusConflict, errorBody{"previewStale", message("previewStale")}, true
	}
	return 0, errorBody{}, false
}

// sentenceOf makes a message one sentence: a capital first letter and a
// full stop.
func sentenceOf(s string) string {
	if s == "" {
		return s
	}
	b := []byte(s)
	if b[0] >= 'a' && b[0] <= 'z' {
		b[0] -= 'a' - 'A'
	}
	if c := b[len(b)-1]; c != '.' && c != '!' && c != '?' {
		b = append(b, '.')
	}
	return string(b)
}
