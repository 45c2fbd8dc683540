package console

import (
	"errors"
	"net/http"
	"strings"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/agentconfig"
)

type playgroundView struct {
	Tasks, Configurations []string
	// From is the chosen source, "task:ID" or "configuration:ID".
	From  string
	Input string
	Dry   *agent.DryRun
	Error string
}

// playgroundChoices fills the tasks and active configurations to start
// from.
func (c *Console) playgroundChoices(q *req, v *playgroundView) error {
	snap, err := c.ops().Configs.Snapshot(q.r.Context())
	if err != nil {
		return err
	}
	for _, t := range snap.Tasks {
		v.Tasks = append(v.Tasks, t.Identifier)
	}
	for _, cf := range snap.Configurations {
		if cf.Active {
			v.Configurations = append(v.Configurations, cf.Identifier)
		}
	}
	return nil
}

// playground is the form that starts a run from a task or a
// configuration, or dry-runs it.
func (c *Console) playground(q *req) error {
	ops := c.ops()
	if ops.Configs == nil || ops.Starter == nil {
		return notFound()
	}
	v := playgroundView{From: q.r.URL.Query().Get("from")}
	if err := c.playgroundChoices(q, &v); err != nil {
		return err
	}
	c.render(q, http.StatusOK, "playground.html", &pageData{Title: q.t("playground.title"), Data: v})
	return nil
}

// playgroundPost dry-runs (action=dry) or queues the run and opens its
// live timeline.
func (c *Console) playgroundPost(q *req) error {
	ops := c.ops()
	if ops.Configs == nil || ops.Starter == nil {
		return notFound()
	}
	f := q.r.PostForm
	v := playgroundView{From: f.Get("from"), Input: f.Get("input")}
	if err := c.playgroundChoices(q, &v); err != nil {
		return err
	}
	p := agent.StartParams{Input: v.Input, Actor: q.user(), Caller: agent.Caller{Source: "console", Operation: "playground"}}
	kind, id, _ := strings.Cut(v.From, ":")
	switch kind {
	case "task":
		p.Task = id
	case "configuration":
		p.Configuration = id
	}
	ctx := q.r.Context()
	status := http.StatusOK
	req, err := agent.BuildRequest(ctx, ops.Configs, p)
	if err == nil && f.Get("action") == "dry" {
		var dr agent.DryRun
		if dr, err = ops.Starter.DryRun(ctx, req); err == nil {
			v.Dry = &dr
		}
	} else if err == nil {
		var runID string
		if runID, err = ops.Starter.Enqueue(ctx, req); err == nil {
			c.redirect(q, "/runs/"+runID)
			return nil
		}
	}
	switch {
	case err == nil:
	case errors.Is(err, agent.ErrStartRequest):
		status, v.Error = http.StatusBadRequest, q.t("playground.badStart")
	case errors.Is(err, agentconfig.ErrNotFound), errors.Is(err, agentconfig.ErrInactive):
		status, v.Error = http.StatusNotFound, q.t("error.configurationNotFound")
	case errors.Is(err, agent.ErrNoQueue):
		status, v.Error = http.StatusServiceUnavailable, q.t("error.queueUnavailable")
	default:
		return err
	}
	c.render(q, status, "playground.html", &pageData{Title: q.t("playground.title"), Data: v})
	return nil
}
