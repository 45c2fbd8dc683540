package web

import (
	"errors"
	"net/http"

	"github.com/t3agent/t3agent/internal/agentconfig"
)

func (s *Server) configRoutes() []route {
	return []route{
		{"GET /api/v1/configurations", anyone, adminScope, s.adminOnly(s.configList)},
		{"GET /api/v1/configurations/{name}", anyone, adminScope, s.adminOnly(s.configShow)},
		{"POST /api/v1/configurations/apply", anyone, adminScope, s.adminOnly(s.configApply)},
	}
}

// agentConfig is the configuration service, or a 404 when the server
// has none.
func (s *Server) agentConfig(w http.ResponseWriter, r *http.Request) *agentconfig.Service {
	if s.api.AgentConfig == nil {
		s.fail(w, r, apiErr(http.StatusNotFound, "notFound", errors.New("no agent configuration service")))
	}
	return s.api.AgentConfig
}

// configList is every provider (its key only as env:NAME, sealed or
// none), model, configuration, task and budget, as `t3agent config list
// --json` shows them.
func (s *Server) configList(w http.ResponseWriter, r *http.Request, _ *caller) {
	svc := s.agentConfig(w, r)
	if svc == nil {
		return
	}
	snap, err := svc.Snapshot(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, snap)
}

// configShow is one configuration as a run would use it: with its model,
// its provider and its fallback chain resolved; one that cannot be
// resolved is shown as stored, with the reason.
func (s *Server) configShow(w http.ResponseWriter, r *http.Request, _ *caller) {
	svc := s.agentConfig(w, r)
	if svc == nil {
		return
	}
	snap, err := svc.Snapshot(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	name := r.PathValue("name")
	c, ok := snap.Configuration(name)
	if !ok {
		s.fail(w, r, apiErr(http.StatusNotFound, "configurationNotFound", nil))
		return
	}
	res, rerr := snap.Resolve(name)
	if rerr != nil {
		writeJSON(w, http.StatusOK, map[string]any{"configuration": c, "usable": false, "error": sentenceOf(rerr.Error())})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"configuration": c, "usable": true, "resolved": res, "trustZone": res.TrustZone()})
}

// configApplyBody is the body of POST /api/v1/configurations/apply.
type configApplyBody struct {
	// Document is the YAML (or JSON) document `t3agent apply -f` takes.
	Document string `json:"document"`
	Prune    bool   `json:"prune"`
	// Preview checks and reports without writing; the answer's digest
	// confirms it.
	Preview bool `json:"preview"`
	// Expect is a preview's digest: the apply is refused (409
	// previewStale) when the document or the stored records changed
	// since that preview.
	Expect string `json:"expect"`
}

// configApply applies a document as `t3agent apply` does (the same
// Apply): records created or updated by identifier, the rest deleted
// only with prune; a document with any problem is refused whole (422
// with every problem). With preview nothing is written.
func (s *Server) configApply(w http.ResponseWriter, r *http.Request, c *caller) {
	svc := s.agentConfig(w, r)
	if svc == nil {
		return
	}
	var b configApplyBody
	if err := decode(r, &b, false); err != nil {
		s.fail(w, r, err)
		return
	}
	doc, err := agentconfig.ParseDocument([]byte(b.Document))
	if err != nil {
		s.fail(w, r, badRequest(sentenceOf(err.Error())))
		return
	}
	rep, err := svc.Apply(r.Context(), agentconfig.ApplyParams{Document: doc, Prune: b.Prune, DryRun: b.Preview, By: c.user.Username, Expect: b.Expect})
	var ve *agentconfig.ValidationError
	if errors.As(err, &ve) {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{
			"code": "invalidConfiguration", "message": message("invalidConfiguration"), "problems": ve.Problems,
		})
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}
