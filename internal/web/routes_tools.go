package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/tool"
)

// toolJSON is a tool with the gate's decision for the caller.
type toolJSON struct {
	Name             string          `json:"name"`
	Description      string          `json:"description"`
	Group            string          `json:"group"`
	Effect           tool.Effect     `json:"effect"`
	DataClass        tool.DataClass  `json:"dataClass"`
	AdminOnly        bool            `json:"adminOnly"`
	RequiresApproval bool            `json:"requiresApproval"`
	RequiresInput    bool            `json:"requiresInput"`
	Remote           bool            `json:"remote"`
	InputSchema      json.RawMessage `json:"inputSchema,omitempty"`
	Decision         decisionJSON    `json:"decision"`
}

type decisionJSON struct {
	Allowed bool `json:"allowed"`
	// Reason is the first check that failed (gate.Reason); its text is
	// the label gate.<reason>.
	Reason       gate.Reason    `json:"reason,omitempty"`
	Zone         tool.TrustZone `json:"zone"`
	Ceiling      tool.DataClass `json:"ceiling"`
	ObservedOnly bool           `json:"observedOnly,omitempty"`
}

// gateConfig is the configuration the gate decides for: ?configuration=
// names an agent configuration (its groups and least trusted zone), else
// ?zone= (default local) and ?groups= (comma-separated, default all), as
// `t3agent tools explain` does.
func (s *Server) gateConfig(r *http.Request) (gate.Configuration, error) {
	q := r.URL.Query()
	if name := q.Get("configuration"); name != "" {
		if q.Has("zone") || q.Has("groups") {
			return nil, badRequest("A configuration already fixes the zone and the groups; leave out zone and groups.")
		}
		if s.api.Configs == nil {
			return nil, apiErr(http.StatusNotFound, "configurationNotFound", errors.New("no configuration source"))
		}
		res, err := s.api.Configs.Resolve(r.Context(), name)
		if errors.Is(err, agentconfig.ErrNotFound) || errors.Is(err, agentconfig.ErrInactive) {
			return nil, apiErr(http.StatusNotFound, "configurationNotFound", err)
		}
		if err != nil {
			return nil, fmt.Errorf("resolve configuration %q: %w", name, err)
		}
		return res, nil
	}
	zone := tool.ZoneLocal
	if q.Has("zone") {
		zone = tool.TrustZone(q.Get("zone"))
		if zone.Normalize() != zone {
			return nil, badRequest("The query parameter zone must be local, privateHosted, externalEu or externalGlobal.")
		}
	}
	var groups []string
	for g := range strings.SplitSeq(q.Get("groups"), ",") {
		if g = strings.TrimSpace(g); g != "" {
			groups = append(groups, g)
		}
	}
	return gate.Config{Name: "api", AllowedGroups: groups, TrustZone: zone}, nil
}

// explainFor runs the gate's readout for the caller; it records no
// governance events, as nothing was asked for.
func (s *Server) explainFor(r *http.Request, c *caller) ([]gate.Decision, error) {
	cfg, err := s.gateConfig(r)
	if err != nil {
		return nil, err
	}
	return s.api.Gate.Explain(r.Context(), gate.ExplainParams{Actor: c.user, Config: cfg})
}

func (s *Server) toolOf(r *http.Request, d gate.Decision, schema bool) toolJSON {
	var spec *tool.Spec
	if e, ok := s.api.Gate.Registry().Get(r.Context(), d.Tool); ok {
		spec = &e.Spec
	}
	return toolView(d, spec, schema)
}

// toolView is the tool a decision is about; spec is nil for a tool that
// is not registered (any more).
func toolView(d gate.Decision, spec *tool.Spec, schema bool) toolJSON {
	out := toolJSON{Name: d.Tool, DataClass: d.DataClass, Decision: decisionJSON{
		Allowed: d.Allowed, Reason: d.Reason, Zone: d.Zone, Ceiling: d.Ceiling, ObservedOnly: d.ObservedOnly,
	}}
	if sp := spec; sp != nil {
		out.Description, out.Group, out.Effect, out.AdminOnly = sp.Description, sp.Group, sp.Effect, sp.AdminOnly
		out.RequiresApproval, out.RequiresInput, out.Remote = sp.RequiresApproval, len(sp.InputRequest) > 0, sp.Remote
		if schema {
			out.InputSchema = sp.InputSchema
		}
	}
	return out
}

func (s *Server) toolsList(w http.ResponseWriter, r *http.Request, c *caller) {
	ds, err := s.explainFor(r, c)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := make([]toolJSON, len(ds))
	for i, d := range ds {
		out[i] = s.toolOf(r, d, false)
	}
	writeJSON(w, http.StatusOK, map[string]any{"tools": out})
}

// toolExplain is one tool's decision for the caller, with its schema.
func (s *Server) toolExplain(w http.ResponseWriter, r *http.Request, c *caller) {
	name := r.PathValue("name")
	if _, ok := s.api.Gate.Registry().Get(r.Context(), name); !ok {
		s.fail(w, r, apiErr(http.StatusNotFound, "toolNotFound", nil))
		return
	}
	ds, err := s.explainFor(r, c)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	for _, d := range ds {
		if d.Tool == name {
			writeJSON(w, http.StatusOK, s.toolOf(r, d, true))
			return
		}
	}
	// Unregistered between the two reads.
	s.fail(w, r, apiErr(http.StatusNotFound, "toolNotFound", nil))
}
