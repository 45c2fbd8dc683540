package console

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/tool"
)

// admin refuses a page to everyone but TYPO3 admins.
func (c *Console) admin(h func(q *req) error) func(q *req) error {
	return func(q *req) error {
		if !q.isAdmin() {
			return &pageError{http.StatusForbidden, "error.adminOnly"}
		}
		return h(q)
	}
}

// toolRow is one tool as the tools page lists it.
type toolRow struct {
	Name      string
	Group     string
	DataClass tool.DataClass
	Effect    tool.Effect
	Remote    bool
	Enabled   bool
	Allowed   bool
	Reason    gate.Reason
}

// toolsList lists every registered tool with the gate's decision for
// this admin on a local provider (the default of `t3agent tools
// explain`), and whether it is switched on.
func (c *Console) toolsList(q *req) error {
	if c.p.Gate == nil {
		return notFound()
	}
	ctx := q.r.Context()
	ds, err := c.p.Gate.Explain(ctx, gate.ExplainParams{Actor: q.user(), Config: gate.Config{Name: "console", TrustZone: tool.ZoneLocal}})
	if err != nil {
		return err
	}
	rows := make([]toolRow, 0, len(ds))
	for _, d := range ds {
		row := toolRow{Name: d.Tool, DataClass: d.DataClass, Allowed: d.Allowed, Reason: d.Reason, Enabled: d.Reason != gate.ReasonToolDisabled}
		if e, ok := c.p.Gate.Registry().Get(ctx, d.Tool); ok {
			row.Group, row.Effect, row.Remote = e.Spec.Group, e.Spec.Effect, e.Spec.Remote
		}
		rows = append(rows, row)
	}
	c.render(q, http.StatusOK, "tools.html", &pageData{Title: q.t("tools.title"), Data: rows})
	return nil
}

// toolToggle switches one tool on or off for every configuration (an
// override of its default), as `t3agent tools enable|disable` does.
func (c *Console) toolToggle(q *req) error {
	if c.p.Gate == nil {
		return notFound()
	}
	on, err := strconv.ParseBool(q.r.PostForm.Get("enabled"))
	if err != nil {
		return &pageError{http.StatusBadRequest, "error.form"}
	}
	_, err = c.p.Gate.Availability().SetTool(q.r.Context(), gate.SetToolParams{Name: q.r.PathValue("name"), Enabled: on, By: q.user().Username})
	if errors.Is(err, gate.ErrUnknownTool) {
		return &pageError{http.StatusNotFound, "error.toolNotFound"}
	}
	if err != nil {
		return err
	}
	c.redirect(q, "/tools#tool-"+q.r.PathValue("name"))
	return nil
}
