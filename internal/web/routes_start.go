package web

import (
	"errors"
	"net/http"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/agentconfig"
)

// startJSON is the body of POST /api/v1/runs.
type startJSON struct {
	// Task or Configuration: what the run starts from.
	Task          string `json:"task"`
	Configuration string `json:"configuration"`
	// Input is the prompt, or what a task's template takes.
	Input string `json:"input"`
	// Tools narrows the offered tools (a request, never a grant).
	Tools     []string `json:"tools"`
	MaxRounds int      `json:"maxRounds"`
	// Wait runs it in the request and answers its result; DryRun answers
	// what it would offer and send, calling no provider. Neither: the run
	// is queued for a worker.
	Wait   bool `json:"wait"`
	DryRun bool `json:"dryRun"`
}

// runStart answers POST /api/v1/runs: 202 with the queued run, 200 with
// the result of a run carried out in the request (wait), or 200 with a
// dry run. The run acts as the caller, through the gate, like every
// other run.
func (s *Server) runStart(w http.ResponseWriter, r *http.Request, c *caller) {
	ops := s.ops()
	if ops.Starter == nil || ops.Configs == nil {
		s.fail(w, r, unavailable("Starting runs is"))
		return
	}
	var body startJSON
	if err := decode(r, &body, false); err != nil {
		s.fail(w, r, err)
		return
	}
	if body.Wait && body.DryRun {
		s.fail(w, r, badRequest("A run is either a dry run or waited for, not both."))
		return
	}
	source := "api"
	if c.session == nil {
		source = "token"
	}
	req, err := agent.BuildRequest(r.Context(), ops.Configs, agent.StartParams{
		Task: body.Task, Configuration: body.Configuration, Input: body.Input, Tools: body.Tools, MaxRounds: body.MaxRounds,
		Actor: c.user, Caller: agent.Caller{Source: source, Operation: "run"},
	})
	if err != nil {
		s.fail(w, r, startRefusal(err))
		return
	}
	ctx := r.Context()
	switch {
	case body.DryRun:
		dr, err := ops.Starter.DryRun(ctx, req)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"dryRun": dr})
	case body.Wait:
		writeJSON(w, http.StatusOK, resultOf(ops.Starter.Run(ctx, req)))
	default:
		id, err := ops.Starter.Enqueue(ctx, req)
		if err != nil {
			s.fail(w, r, startRefusal(err))
			return
		}
		w.Header().Set("Location", apiPrefix+"/runs/"+id)
		// A token with agent:run alone may not read runs: it gets the id.
		it, err := s.api.Runtime.Pending(ctx, c.user, c.access, id)
		if err != nil {
			writeJSON(w, http.StatusAccepted, map[string]any{"run": map[string]string{"id": id, "status": "queued"}})
			return
		}
		writeJSON(w, http.StatusAccepted, map[string]any{"run": runOf(it.Run)})
	}
}

// startRefusal maps what keeps a run from starting to the API's answer.
func startRefusal(err error) error {
	switch {
	case errors.Is(err, agent.ErrStartRequest):
		return badRequest(err.Error())
	case errors.Is(err, agentconfig.ErrNotFound), errors.Is(err, agentconfig.ErrInactive):
		return apiErr(http.StatusNotFound, "configurationNotFound", err)
	case errors.Is(err, agent.ErrNoQueue):
		return apiErr(http.StatusServiceUnavailable, "queueUnavailable", err)
	}
	return err
}
