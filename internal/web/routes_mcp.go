package web

import (
	"errors"
	"net/http"

	"github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
)

func (s *Server) mcpRoutes() []route {
	return []route{
		{"GET /api/v1/mcp/servers", anyone, adminScope, s.adminOnly(s.mcpList)},
		{"POST /api/v1/mcp/servers", anyone, adminScope, s.adminOnly(s.mcpAdd)},
		{"GET /api/v1/mcp/servers/{name}", anyone, adminScope, s.adminOnly(s.mcpShow)},
		{"PATCH /api/v1/mcp/servers/{name}", anyone, adminScope, s.adminOnly(s.mcpUpdate)},
		{"DELETE /api/v1/mcp/servers/{name}", anyone, adminScope, s.adminOnly(s.mcpRemove)},
		{"POST /api/v1/mcp/servers/{name}/import", anyone, adminScope, s.adminOnly(s.mcpImport)},
		{"POST /api/v1/mcp/servers/{name}/ping", anyone, adminScope, s.adminOnly(s.mcpPing)},
		{"POST /api/v1/mcp/servers/{name}/enable", anyone, adminScope, s.adminOnly(s.mcpToggle(true))},
		{"POST /api/v1/mcp/servers/{name}/disable", anyone, adminScope, s.adminOnly(s.mcpToggle(false))},
		{"PUT /api/v1/mcp/tools/{name}/effect", anyone, adminScope, s.adminOnly(s.mcpToolEffect)},
	}
}

// mcpService is the MCP client, or a 404 when the server has none.
func (s *Server) mcpService(w http.ResponseWriter, r *http.Request) *mcp.Service {
	if s.api.MCP == nil {
		s.fail(w, r, apiErr(http.StatusNotFound, "notFound", errors.New("no MCP client")))
	}
	return s.api.MCP
}

// mcpErr names a missing or taken server for the client.
func mcpErr(err error) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return apiErr(http.StatusNotFound, "mcpServerNotFound", err)
	case errors.Is(err, store.ErrExists):
		return apiErr(http.StatusConflict, "mcpServerExists", err)
	}
	return err
}

// mcpServerJSON is a server as the API shows it: never its credential,
// its URL with query values hidden, and how many of its tools the
// server no longer lists.
type mcpServerJSON struct {
	mcp.Server
	OrphanedTools int `json:"orphanedTools"`
}

func serverJSON(sv mcp.Server, tools []mcp.CatalogueTool) mcpServerJSON {
	sv.URL = mcp.DisplayURL(sv.URL)
	out := mcpServerJSON{Server: sv}
	for _, t := range tools {
		if t.Orphaned {
			out.OrphanedTools++
		}
	}
	return out
}

func (s *Server) mcpList(w http.ResponseWriter, r *http.Request, _ *caller) {
	svc := s.mcpService(w, r)
	if svc == nil {
		return
	}
	servers, err := svc.Servers(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := make([]mcpServerJSON, 0, len(servers))
	for _, sv := range servers {
		tools, err := svc.Tools(r.Context(), sv.Identifier)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			s.fail(w, r, err)
			return
		}
		out = append(out, serverJSON(sv, tools))
	}
	writeJSON(w, http.StatusOK, map[string]any{"servers": out})
}

// mcpToolJSON is a catalogue tool with whether the gate's availability
// lets it be offered (the server's "allowed tools").
type mcpToolJSON struct {
	mcp.CatalogueTool
	Enabled bool `json:"enabled"`
}

func (s *Server) mcpShow(w http.ResponseWriter, r *http.Request, _ *caller) {
	svc := s.mcpService(w, r)
	if svc == nil {
		return
	}
	id := r.PathValue("name")
	sv, err := svc.Server(r.Context(), id)
	if err != nil {
		s.fail(w, r, mcpErr(err))
		return
	}
	tools, err := svc.Tools(r.Context(), id)
	if err != nil {
		s.fail(w, r, mcpErr(err))
		return
	}
	ov, err := s.api.Gate.Availability().Load(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	list := make([]mcpToolJSON, len(tools))
	for i, t := range tools {
		list[i] = mcpToolJSON{CatalogueTool: t, Enabled: ov.Enabled(tool.Spec{Name: t.Name, Group: mcp.Group(id), EnabledByDefault: true})}
	}
	writeJSON(w, http.StatusOK, map[string]any{"server": serverJSON(sv, tools), "tools": list})
}

// mcpServerBody is the body of POST (every field but identifier and url
// optional) and PATCH (no identifier) on the servers. The credential is
// written only: no answer ever holds it.
type mcpServerBody struct {
	Identifier  string  `json:"identifier"`
	Name        *string `json:"name"`
	Description *string `json:"description"`
	URL         *string `json:"url"`
	Auth        *string `json:"auth"`
	AuthHeader  *string `json:"authHeader"`
	Credential  *string `json:"credential"`
	// DataClass "" removes the class (the server becomes inert).
	DataClass        *string `json:"dataClass"`
	Effect           *string `json:"effect"`
	RequiresApproval *bool   `json:"requiresApproval"`
	AdminOnly        *bool   `json:"adminOnly"`
	Enabled          *bool   `json:"enabled"`
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func (b mcpServerBody) dataClass() (tool.DataClass, error) {
	if b.DataClass == nil || *b.DataClass == "" {
		return 0, nil
	}
	c, err := tool.ParseDataClass(*b.DataClass)
	if err != nil {
		return 0, badRequest("The field dataClass must be publicContent, editorContent, sourceCode, internalConfiguration, systemDiagnostics or secretAdjacent.")
	}
	return c, nil
}

// addParams is the body as the service's AddParams.
func (b mcpServerBody) addParams(by string) (mcp.AddParams, error) {
	class, err := b.dataClass()
	if err != nil {
		return mcp.AddParams{}, err
	}
	return mcp.AddParams{
		Identifier: b.Identifier, Name: str(b.Name), Description: str(b.Description), URL: str(b.URL),
		Auth: mcp.AuthKind(str(b.Auth)), AuthHeader: str(b.AuthHeader), Credential: str(b.Credential),
		DataClass: class, Effect: tool.Effect(str(b.Effect)), RequiresApproval: b.RequiresApproval,
		AdminOnly: b.AdminOnly, Enabled: b.Enabled != nil && *b.Enabled, By: by,
	}, nil
}

// updateParams is the body as the service's UpdateParams.
func (b mcpServerBody) updateParams(id, by string) (mcp.UpdateParams, error) {
	p := mcp.UpdateParams{
		Identifier: id, Name: b.Name, Description: b.Description, URL: b.URL, AuthHeader: b.AuthHeader,
		Credential: b.Credential, RequiresApproval: b.RequiresApproval, AdminOnly: b.AdminOnly, Enabled: b.Enabled, By: by,
	}
	if b.Auth != nil {
		k := mcp.AuthKind(*b.Auth)
		p.Auth = &k
	}
	if b.Effect != nil {
		e := tool.Effect(*b.Effect)
		p.Effect = &e
	}
	if b.DataClass != nil {
		if *b.DataClass == "" {
			p.ClearDataClass = true
		} else {
			c, err := b.dataClass()
			if err != nil {
				return p, err
			}
			p.DataClass = &c
		}
	}
	return p, nil
}

func (s *Server) mcpAdd(w http.ResponseWriter, r *http.Request, c *caller) {
	svc := s.mcpService(w, r)
	if svc == nil {
		return
	}
	var b mcpServerBody
	if err := decode(r, &b, false); err != nil {
		s.fail(w, r, err)
		return
	}
	p, err := b.addParams(c.user.Username)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	sv, err := svc.Add(r.Context(), p)
	if err != nil {
		s.fail(w, r, mcpErr(err))
		return
	}
	writeJSON(w, http.StatusCreated, serverJSON(sv, nil))
}

func (s *Server) mcpUpdate(w http.ResponseWriter, r *http.Request, c *caller) {
	svc := s.mcpService(w, r)
	if svc == nil {
		return
	}
	var b mcpServerBody
	if err := decode(r, &b, false); err != nil {
		s.fail(w, r, err)
		return
	}
	if b.Identifier != "" {
		s.fail(w, r, badRequest("A server's identifier cannot be changed; leave out identifier."))
		return
	}
	p, err := b.updateParams(r.PathValue("name"), c.user.Username)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	sv, err := svc.Update(r.Context(), p)
	if err != nil {
		s.fail(w, r, mcpErr(err))
		return
	}
	writeJSON(w, http.StatusOK, serverJSON(sv, nil))
}

func (s *Server) mcpRemove(w http.ResponseWriter, r *http.Request, _ *caller) {
	svc := s.mcpService(w, r)
	if svc == nil {
		return
	}
	if err := svc.Remove(r.Context(), r.PathValue("name")); err != nil {
		s.fail(w, r, mcpErr(err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// mcpImport imports the server's tools, or with {"preview": true} says
// what an import would change and writes nothing.
func (s *Server) mcpImport(w http.ResponseWriter, r *http.Request, _ *caller) {
	svc := s.mcpService(w, r)
	if svc == nil {
		return
	}
	var b struct {
		Preview bool `json:"preview"`
	}
	if err := decode(r, &b, true); err != nil {
		s.fail(w, r, err)
		return
	}
	p := mcp.ImportParams{Server: r.PathValue("name"), Registry: s.api.Gate.Registry()}
	var res mcp.ImportResult
	var err error
	if b.Preview {
		res, err = svc.PreviewImport(r.Context(), p)
	} else {
		res, err = svc.Import(r.Context(), p)
	}
	if err != nil {
		s.fail(w, r, mcpErr(err))
		return
	}
	res.Server.URL = mcp.DisplayURL(res.Server.URL)
	writeJSON(w, http.StatusOK, map[string]any{"preview": b.Preview, "import": res})
}

func (s *Server) mcpPing(w http.ResponseWriter, r *http.Request, _ *caller) {
	svc := s.mcpService(w, r)
	if svc == nil {
		return
	}
	res, err := svc.Ping(r.Context(), r.PathValue("name"))
	if err != nil {
		s.fail(w, r, mcpErr(err))
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (s *Server) mcpToggle(on bool) func(w http.ResponseWriter, r *http.Request, c *caller) {
	return func(w http.ResponseWriter, r *http.Request, c *caller) {
		svc := s.mcpService(w, r)
		if svc == nil {
			return
		}
		sv, err := svc.SetEnabled(r.Context(), r.PathValue("name"), on, c.user.Username)
		if err != nil {
			s.fail(w, r, mcpErr(err))
			return
		}
		writeJSON(w, http.StatusOK, serverJSON(sv, nil))
	}
}

// mcpToolEffect overrides one imported tool's effect; "" clears the
// override, so the server's effect applies again.
func (s *Server) mcpToolEffect(w http.ResponseWriter, r *http.Request, _ *caller) {
	svc := s.mcpService(w, r)
	if svc == nil {
		return
	}
	var b struct {
		Effect *string `json:"effect"`
	}
	if err := decode(r, &b, false); err != nil {
		s.fail(w, r, err)
		return
	}
	if b.Effect == nil {
		s.fail(w, r, badRequest("The field effect is required: read_only, idempotent_write, non_idempotent_write, or \"\" to clear the override."))
		return
	}
	name := r.PathValue("name")
	err := svc.SetToolEffect(r.Context(), mcp.SetToolEffectParams{Name: name, Effect: tool.Effect(*b.Effect)})
	if errors.Is(err, store.ErrNotFound) {
		err = apiErr(http.StatusNotFound, "toolNotFound", err)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"tool": name, "effect": *b.Effect})
}
