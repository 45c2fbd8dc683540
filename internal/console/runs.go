package console

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/store"
)

// inbox lists every run waiting for this person's decision or answer,
// from the chat, the CLI, the API or the queue, each with its card.
func (c *Console) inbox(q *req) error {
	items, err := c.p.Runtime.Inbox(q.r.Context(), q.user(), agent.Access{})
	if err != nil {
		return err
	}
	cards := make([]*cardView, 0, len(items))
	for _, it := range items {
		cards = append(cards, c.cardOf(q.r.Context(), it, "/inbox/"+it.Run.ID, !it.Unreadable))
	}
	c.render(q, http.StatusOK, "inbox.html", &pageData{Title: q.t("inbox.title"), Data: cards})
	return nil
}

// inboxDecide approves or denies a waiting run as this person. The turn
// runs in the request, detached from it so a browser that goes away
// cannot cancel a write half-way; the runtime decides who may.
func (c *Console) inboxDecide(q *req) error {
	approve, err := decision(q)
	if err != nil {
		return err
	}
	id := q.r.PathValue("id")
	res, err := c.p.Runtime.Approve(context.WithoutCancel(q.r.Context()), agent.ApproveParams{
		RunID: id, Approver: q.user(), Approved: approve, Digest: q.r.PostForm.Get("digest"), Reason: q.r.PostForm.Get("reason"),
	})
	if err != nil {
		return err
	}
	c.redirect(q, "/runs/"+res.RunID)
	return nil
}

func (c *Console) inboxInput(q *req) error {
	id := q.r.PathValue("id")
	ctx := q.r.Context()
	it, err := c.p.Runtime.Pending(ctx, q.user(), agent.Access{}, id)
	if err != nil {
		return err
	}
	if it.Input == "" {
		return &pageError{http.StatusConflict, "error.runNotWaiting"}
	}
	action := q.r.PostForm.Get("action")
	var data json.RawMessage
	switch action {
	case "decline", "cancel":
	default:
		action = ""
		fields, answer, ok := answerOf(it.Schema, q.r.PostForm)
		if !ok {
			return c.inputRefused(q, "/inbox/"+id, it, fields, true)
		}
		data = answer
	}
	res, err := c.p.Runtime.SubmitInput(context.WithoutCancel(ctx), agent.SubmitInputParams{
		RunID: id, Submitter: q.user(), Data: data, Digest: q.r.PostForm.Get("digest"), Action: action,
	})
	if err != nil {
		return err
	}
	c.redirect(q, "/runs/"+res.RunID)
	return nil
}

type runsView struct {
	Runs []store.Run
	// Status, Owner (admins only), Configuration and Source are the
	// filters.
	Status        string
	Owner         string
	Configuration string
	Source        string
	Statuses      []store.RunStatus
	Admin         bool
	// Next pages on (the last run's id), "" at the end.
	Next string
}

// runsPage is the list's page size; runsScan bounds the runs read to
// fill a page when the configuration or source filter is set (the store
// filters by owner and status only).
const (
	runsPage = 50
	runsScan = 20 * store.MaxRunLimit
)

// runsList lists runs newest first: every owner's for an admin, a
// person's own otherwise, filtered by status, owner (admins),
// configuration and source.
func (c *Console) runsList(q *req) error {
	qs := q.r.URL.Query()
	v := runsView{Status: qs.Get("status"), Owner: qs.Get("owner"), Configuration: qs.Get("configuration"), Source: qs.Get("source"),
		Statuses: runStatuses, Admin: q.isAdmin()}
	p := store.ListRunsParams{Status: store.RunStatus(v.Status), Before: qs.Get("before"), Limit: runsPage}
	if p.Status != "" && !p.Status.Valid() {
		return &pageError{http.StatusBadRequest, "error.runStatus"}
	}
	if len(p.Before) > 128 || len(v.Owner) > 255 || len(v.Configuration) > 255 || len(v.Source) > 64 {
		return &pageError{http.StatusBadRequest, "error.form"}
	}
	// The runtime decides whose runs the user sees (its own unless an
	// admin); only an admin's owner filter is passed on.
	if q.isAdmin() {
		p.OwnerUsername = v.Owner
	} else {
		v.Owner = ""
	}
	narrowed := v.Configuration != "" || v.Source != ""
	if narrowed {
		p.Limit = store.MaxRunLimit
	}
	for scanned := 0; ; {
		page, err := c.p.Runtime.Runs(q.r.Context(), q.user(), agent.Access{}, p)
		if err != nil {
			return err
		}
		rows := page.Runs
		scanned += len(rows)
		for _, r := range rows {
			switch {
			case v.Configuration != "" && r.Configuration != v.Configuration:
			case v.Source != "" && r.CallerSource != v.Source:
			default:
				v.Runs = append(v.Runs, r)
			}
			if len(v.Runs) == runsPage {
				break
			}
		}
		if len(v.Runs) == runsPage {
			v.Next = v.Runs[runsPage-1].ID
			break
		}
		if page.Next == "" {
			break
		}
		p.Before = page.Next
		if !narrowed || scanned >= runsScan {
			// The page is short; the next one goes on from here.
			v.Next = p.Before
			break
		}
	}
	c.render(q, http.StatusOK, "runs.html", &pageData{Title: q.t("runs.title"), Data: &v})
	return nil
}

// timelineRow is one event of a run as the timeline shows it.
type timelineRow struct {
	Seq      int64
	Kind     string
	Round    int
	At       time.Time
	Duration time.Duration
	Summary  string
	// LLM: tokens and cost of a provider call.
	InTokens, OutTokens int64
	Cost                string
	// Tool: the call's step.
	Step *step
	// Approval and input: the digest the decision must quote.
	Digest string
}

type runView struct {
	Run      store.Run
	Cost     string
	Rows     []timelineRow
	Card     *cardView
	Live     bool
	Finished bool
}

func (c *Console) runShow(q *req) error {
	id := q.r.PathValue("id")
	if len(id) > 128 {
		return notFound()
	}
	ctx := q.r.Context()
	it, err := c.p.Runtime.Pending(ctx, q.user(), agent.Access{}, id)
	if err != nil {
		return runErr(err)
	}
	evs, err := c.p.Runtime.Events(ctx, q.user(), agent.Access{}, id, -1)
	if err != nil {
		return runErr(err)
	}
	r := it.Run
	v := &runView{Run: r, Cost: agent.CostString(agentconfig.USD(r.Cost), r.CostUnknown), Rows: timeline(evs),
		Live: r.Status == store.RunQueued || r.Status == store.RunRunning, Finished: !r.FinishedAt.IsZero()}
	if it.Digest != "" || it.Unreadable || len(it.Calls) > 0 {
		v.Card = c.cardOf(ctx, it, "/inbox/"+r.ID, !it.Unreadable)
	}
	c.render(q, http.StatusOK, "run.html", &pageData{Title: q.t("run.title") + " " + shortID(r.ID), Data: v})
	return nil
}

func (c *Console) runCancel(q *req) error {
	id := q.r.PathValue("id")
	won, err := c.p.Runtime.Cancel(context.WithoutCancel(q.r.Context()), q.user(), agent.Access{}, id)
	if err != nil {
		return runErr(err)
	}
	if !won {
		return &pageError{http.StatusConflict, "error.runFinished"}
	}
	c.redirect(q, "/runs/"+id)
	return nil
}

// runErr names an unknown run.
func runErr(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return &pageError{http.StatusNotFound, "error.runNotFound"}
	}
	return err
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// timeline turns a run's events into rows.
func timeline(evs []store.RunEvent) []timelineRow {
	out := make([]timelineRow, 0, len(evs))
	for _, e := range evs {
		row := timelineRow{Seq: e.Seq, Kind: e.Kind, Round: e.Round, At: e.CreatedAt, Duration: e.Duration,
			Summary: agent.Describe(e.Kind, e.Payload)}
		switch agent.EventKind(e.Kind) {
		case agent.EventLLM:
			var p agent.LLMPayload
			if json.Unmarshal(e.Payload, &p) == nil {
				row.InTokens, row.OutTokens = int64(p.Usage.InputTokens), int64(p.Usage.OutputTokens)
				if p.Cost != nil {
					row.Cost = agent.CostString(*p.Cost, false)
				}
			}
		case agent.EventTool:
			if s := stepsOf([]store.RunEvent{e}); len(s) == 1 {
				row.Step = &s[0]
			}
		case agent.EventApproval:
			var p agent.ApprovalPayload
			if json.Unmarshal(e.Payload, &p) == nil {
				row.Digest = p.Digest
			}
		case agent.EventInput:
			var p agent.InputPayload
			if json.Unmarshal(e.Payload, &p) == nil {
				row.Digest = p.Digest
			}
		}
		out = append(out, row)
	}
	return out
}

// Sources are the caller sources the filter suggests (the chat, the
// command line, the MCP server side).
func (v *runsView) Sources() []string { return []string{"chat", "cli", "mcp"} }

// Cursor is the query of the next page of the list.
func (v *runsView) Cursor() string {
	return "?" + url.Values{"status": {v.Status}, "owner": {v.Owner}, "configuration": {v.Configuration}, "source": {v.Source},
		"before": {v.Next}}.Encode()
}
