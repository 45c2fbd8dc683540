package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/store"
)

// runJSON is a run as the API shows it; the suspended state and lease
// internals are never part of it.
type runJSON struct {
	ID                string    `json:"id"`
	Status            string    `json:"status"`
	Outcome           string    `json:"outcome,omitempty"`
	TerminationReason string    `json:"terminationReason,omitempty"`
	Owner             string    `json:"owner"`
	Configuration     string    `json:"configuration"`
	CallerSource      string    `json:"callerSource,omitempty"`
	CallerOperation   string    `json:"callerOperation,omitempty"`
	Rounds            int       `json:"rounds"`
	ToolCalls         int       `json:"toolCalls"`
	InputTokens       int64     `json:"inputTokens"`
	OutputTokens      int64     `json:"outputTokens"`
	Cost              string    `json:"cost"`
	Truncated         bool      `json:"truncated,omitempty"`
	Error             string    `json:"error,omitempty"`
	ErrorClass        string    `json:"errorClass,omitempty"`
	TurnDigest        string    `json:"turnDigest,omitempty"`
	RequeueCount      int       `json:"requeueCount,omitempty"`
	CreatedAt         time.Time `json:"createdAt"`
	UpdatedAt         time.Time `json:"updatedAt"`
	FinishedAt        time.Time `json:"finishedAt,omitzero"`
}

func runOf(r store.Run) runJSON {
	return runJSON{
		ID: r.ID, Status: string(r.Status), Outcome: r.Outcome, TerminationReason: r.TerminationReason,
		Owner: r.OwnerUsername, Configuration: r.Configuration, CallerSource: r.CallerSource, CallerOperation: r.CallerOperation,
		Rounds: r.Rounds, ToolCalls: r.ToolCalls, InputTokens: r.InputTokens, OutputTokens: r.OutputTokens,
		Cost: agent.CostString(agentconfig.USD(r.Cost), r.CostUnknown), Truncated: r.Truncated,
		Error: r.Error, ErrorClass: r.ErrorClass, TurnDigest: r.TurnDigest, RequeueCount: r.RequeueCount,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), FinishedAt: r.FinishedAt.UTC(),
	}
}

// callJSON is one pending tool call (a provider's opaque signature left out).
type callJSON struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// pendingJSON is the turn a waiting run waits on: the calls, their
// previews and the digest a decision must quote back; for input, the
// tool and the schema of the answer.
type pendingJSON struct {
	RunID       string              `json:"runId"`
	Digest      string              `json:"digest"`
	Calls       []callJSON          `json:"calls"`
	Previews    []agent.CallPreview `json:"previews"`
	InputTool   string              `json:"inputTool,omitempty"`
	InputSchema json.RawMessage     `json:"inputSchema,omitempty"`
	// InputMessage and InputURL are the question an MCP server asked
	// while the call ran, and in URL mode the page the person opens.
	InputMessage string `json:"inputMessage,omitempty"`
	InputURL     string `json:"inputUrl,omitempty"`
	// Unreadable: the saved turn does not open; the run can only be cancelled.
	Unreadable bool `json:"unreadable,omitempty"`
	// MayApprove and MayDeny say what the reader may decide on an
	// approval turn; DecideReason (a label code, error.<code>) why not
	// approve: selfApprovalDenied when a second person must approve,
	// approverNotPermitted when a token cannot release a write.
	MayApprove   bool   `json:"mayApprove"`
	MayDeny      bool   `json:"mayDeny"`
	DecideReason string `json:"decideReason,omitempty"`
}

// pendingOf is the pending turn of an inbox item, nil when the run does
// not wait on one.
func pendingOf(it agent.InboxItem) *pendingJSON {
	if it.Digest == "" && !it.Unreadable && len(it.Calls) == 0 {
		return nil
	}
	p := &pendingJSON{RunID: it.Run.ID, Digest: it.Digest, Calls: make([]callJSON, len(it.Calls)),
		Previews: it.Previews, InputTool: it.Input, InputSchema: it.Schema, InputMessage: it.Message, InputURL: it.URL, Unreadable: it.Unreadable,
		MayApprove: it.Rights.MayApprove, MayDeny: it.Rights.MayDeny}
	if it.Rights.Reason != "" && !it.Rights.MayApprove && it.Input == "" {
		p.DecideReason = "decisionRefused"
		if m, ok := refusalCodes[it.Rights.Reason]; ok {
			p.DecideReason = m.code
		}
	}
	for i, c := range it.Calls {
		p.Calls[i] = callJSON{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
	}
	if p.Previews == nil {
		p.Previews = []agent.CallPreview{}
	}
	return p
}

type inboxItemJSON struct {
	Run     runJSON      `json:"run"`
	Pending *pendingJSON `json:"pending"`
}

func inboxItemOf(it agent.InboxItem) inboxItemJSON {
	return inboxItemJSON{Run: runOf(it.Run), Pending: pendingOf(it)}
}

// resultJSON is what a decision carried out in the request led to.
type resultJSON struct {
	RunID       string       `json:"runId"`
	Outcome     string       `json:"outcome"`
	Termination string       `json:"termination,omitempty"`
	Content     string       `json:"content,omitempty"`
	Error       string       `json:"error,omitempty"`
	Rounds      int          `json:"rounds"`
	ToolCalls   int          `json:"toolCalls"`
	Cost        string       `json:"cost"`
	Pending     *pendingJSON `json:"pending,omitempty"`
}

func resultOf(res agent.Result) resultJSON {
	out := resultJSON{RunID: res.RunID, Outcome: string(res.Outcome), Termination: string(res.Termination),
		Content: res.Content, Error: res.Error, Rounds: res.Rounds, ToolCalls: res.ToolCalls,
		Cost: agent.CostString(res.Cost, res.CostUnknown)}
	if p := res.Pending; p != nil {
		out.Pending = pendingOf(agent.InboxItem{Run: store.Run{ID: res.RunID}, Calls: p.Calls, Digest: p.Digest,
			Input: p.InputTool, Schema: p.InputSchema, Previews: p.Previews})
	}
	return out
}

type eventJSON struct {
	Seq        int64           `json:"seq"`
	Kind       string          `json:"kind"`
	Round      int             `json:"round"`
	DurationMs int64           `json:"durationMs"`
	Summary    string          `json:"summary"`
	Payload    json.RawMessage `json:"payload"`
	At         time.Time       `json:"at"`
}

// runErr names an unknown run for the client.
func runErr(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return apiErr(http.StatusNotFound, "runNotFound", err)
	}
	return err
}

// runID is the {id} of a run route.
func runID(r *http.Request) (string, error) {
	id := r.PathValue("id")
	if len(id) > 128 {
		return "", badRequest("The run id in the path is too long.")
	}
	return id, nil
}

// runsList lists runs newest first, those the caller sees (the
// runtime's rule: every owner's for an admin and a token with the admin
// scope, the caller's own otherwise).
func (s *Server) runsList(w http.ResponseWriter, r *http.Request, c *caller) {
	q := r.URL.Query()
	p := store.ListRunsParams{OwnerUsername: q.Get("owner"), Status: store.RunStatus(q.Get("status")), Before: q.Get("before")}
	if p.Status != "" && !p.Status.Valid() {
		s.fail(w, r, badRequest("The query parameter status must be one of queued, running, waiting_for_approval, waiting_for_input, completed, failed, cancelled."))
		return
	}
	limit, err := queryInt(r, "limit", store.DefaultRunLimit, 1, store.MaxRunLimit)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p.Limit = int(limit)
	page, err := s.api.Runtime.Runs(r.Context(), c.user, c.access, p)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := make([]runJSON, len(page.Runs))
	for i, row := range page.Runs {
		out[i] = runOf(row)
	}
	writeJSON(w, http.StatusOK, map[string]any{"runs": out, "next": page.Next})
}

// runShow is the run with the turn it waits on, if any.
func (s *Server) runShow(w http.ResponseWriter, r *http.Request, c *caller) {
	id, err := runID(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	it, err := s.api.Runtime.Pending(r.Context(), c.user, c.access, id)
	if err != nil {
		s.fail(w, r, runErr(err))
		return
	}
	writeJSON(w, http.StatusOK, inboxItemOf(it))
}

func (s *Server) runEvents(w http.ResponseWriter, r *http.Request, c *caller) {
	id, err := runID(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	after, err := queryInt(r, "after", -1, -1, 1<<53)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	evs, err := s.api.Runtime.Events(r.Context(), c.user, c.access, id, after)
	if err != nil {
		s.fail(w, r, runErr(err))
		return
	}
	out := make([]eventJSON, len(evs))
	for i, e := range evs {
		out[i] = eventOf(e)
	}
	writeJSON(w, http.StatusOK, map[string]any{"events": out})
}

func eventOf(e store.RunEvent) eventJSON {
	out := eventJSON{Seq: e.Seq, Kind: e.Kind, Round: e.Round, DurationMs: e.Duration.Milliseconds(),
		Summary: agent.Describe(e.Kind, e.Payload), Payload: e.Payload, At: e.CreatedAt.UTC()}
	if len(out.Payload) == 0 {
		out.Payload = json.RawMessage("{}")
	}
	return out
}

type decideBody struct {
	Digest string `json:"digest"`
	Reason string `json:"reason"`
}

type inputBody struct {
	Digest string          `json:"digest"`
	Data   json.RawMessage `json:"data"`
	// Action is accept (the default), decline or cancel; data is read
	// only to accept.
	Action string `json:"action"`
}

// runDecide approves or denies a waiting run. The turn runs in the
// request; the request's context is detached so a client that goes away
// cannot cancel a write half-way.
func (s *Server) runDecide(approve bool) func(http.ResponseWriter, *http.Request, *caller) {
	return func(w http.ResponseWriter, r *http.Request, c *caller) {
		id, err := runID(r)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		var body decideBody
		if err := decode(r, &body, false); err != nil {
			s.fail(w, r, err)
			return
		}
		res, err := s.api.Runtime.Approve(context.WithoutCancel(r.Context()), agent.ApproveParams{
			RunID: id, Approver: c.user, Access: c.access, Approved: approve, Digest: body.Digest, Reason: body.Reason,
		})
		if err != nil {
			s.fail(w, r, runErr(err))
			return
		}
		s.followChat(r)
		writeJSON(w, http.StatusOK, resultOf(res))
	}
}

func (s *Server) runInput(w http.ResponseWriter, r *http.Request, c *caller) {
	id, err := runID(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var body inputBody
	if err := decode(r, &body, false); err != nil {
		s.fail(w, r, err)
		return
	}
	switch body.Action {
	case "", "accept":
		if !isObject(body.Data) {
			s.fail(w, r, badRequest("The field data must be a JSON object."))
			return
		}
	case "decline", "cancel":
	default:
		s.fail(w, r, badRequest("The field action must be accept, decline or cancel."))
		return
	}
	res, err := s.api.Runtime.SubmitInput(context.WithoutCancel(r.Context()), agent.SubmitInputParams{
		RunID: id, Submitter: c.user, Access: c.access, Data: body.Data, Digest: body.Digest, Action: body.Action,
	})
	if err != nil {
		s.fail(w, r, runErr(err))
		return
	}
	s.followChat(r)
	writeJSON(w, http.StatusOK, resultOf(res))
}

// runCancel cancels a run that has not ended; a run that already ended is
// 409 runFinished.
func (s *Server) runCancel(w http.ResponseWriter, r *http.Request, c *caller) {
	id, err := runID(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	won, err := s.api.Runtime.Cancel(context.WithoutCancel(r.Context()), c.user, c.access, id)
	if err != nil {
		s.fail(w, r, runErr(err))
		return
	}
	if !won {
		s.fail(w, r, apiErr(http.StatusConflict, "runFinished", nil))
		return
	}
	s.followChat(r)
	writeJSON(w, http.StatusOK, map[string]any{"cancelled": true})
}

// followChat lets the chat follow a run this request decided, answered
// or cancelled, so that its conversation moves on now rather than at the
// next maintenance pass. A failure is logged: the pass repairs it.
func (s *Server) followChat(r *http.Request) {
	if s.api.Chat == nil {
		return
	}
	if _, err := s.api.Chat.Follow(context.WithoutCancel(r.Context())); err != nil {
		s.p.Logger.Warn("the chat could not follow a decided run", "path", r.URL.Path, "err", err)
	}
}

func (s *Server) inbox(w http.ResponseWriter, r *http.Request, c *caller) {
	items, err := s.api.Runtime.Inbox(r.Context(), c.user, c.access)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := make([]inboxItemJSON, len(items))
	for i, it := range items {
		out[i] = inboxItemOf(it)
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": out})
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return len(raw) > 0 && json.Unmarshal(raw, &m) == nil && m != nil
}
