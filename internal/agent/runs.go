package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/typo3"
)

// Cancel cancels a run that has not ended and reports whether this call
// won: of concurrent cancels, and against a run that ends meanwhile, only
// one transition happens. A running loop stops at its next step boundary.
// A service token needs agent:cancel.
func (rt *Runtime) Cancel(ctx context.Context, actor *typo3.BackendUser, access Access, id string) (bool, error) {
	if _, err := rt.readable(ctx, actor, access, id, store.ScopeAgentCancel); err != nil {
		return false, err
	}
	if _, err := rt.st.CancelRun(ctx, id); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// Status is the run's row; the suspended state is never part of it. A
// service token needs agent:read.
func (rt *Runtime) Status(ctx context.Context, actor *typo3.BackendUser, access Access, id string) (store.Run, error) {
	return rt.readable(ctx, actor, access, id, store.ScopeAgentRead)
}

// Events lists the run's events with seq > after, in seq order; after -1
// lists from the start. One page of at most store.DefaultRunEventLimit.
// A service token needs agent:read.
func (rt *Runtime) Events(ctx context.Context, actor *typo3.BackendUser, access Access, id string, after int64) ([]store.RunEvent, error) {
	if _, err := rt.readable(ctx, actor, access, id, store.ScopeAgentRead); err != nil {
		return nil, err
	}
	return rt.st.RunEvents(ctx, store.ListRunEventsParams{RunID: id, FromSeq: max(after+1, 0)})
}

// RunsPage is one page of Runs.
type RunsPage struct {
	Runs []store.Run
	// Next is the id to pass as Before for the next page; "" when this
	// page was the last.
	Next string
}

// Runs lists the runs the actor sees, newest first, under the rule of
// Status (see Access): every owner's for an admin or a token with
// ScopeAdmin, the actor's own otherwise — naming another owner is then
// refused. A service token needs agent:read.
func (rt *Runtime) Runs(ctx context.Context, actor *typo3.BackendUser, access Access, p store.ListRunsParams) (RunsPage, error) {
	if actor == nil || !access.permits(store.ScopeAgentRead) {
		return RunsPage{}, ErrAccessDenied
	}
	if !seesEveryOwner(actor, access) {
		if p.OwnerUsername != "" && p.OwnerUsername != actor.Username {
			return RunsPage{}, ErrAccessDenied
		}
		p.OwnerUsername = actor.Username
	}
	rows, err := rt.st.Runs(ctx, p)
	if err != nil {
		return RunsPage{}, err
	}
	limit := p.Limit
	if limit == 0 {
		limit = store.DefaultRunLimit
	}
	page := RunsPage{Runs: make([]store.Run, 0, len(rows))}
	if len(rows) > 0 && len(rows) == limit {
		page.Next = rows[len(rows)-1].ID
	}
	for _, row := range rows {
		if mayActOnRun(actor, access, row, store.ScopeAgentRead) {
			page.Runs = append(page.Runs, row)
		}
	}
	return page, nil
}

// Answer is the answer a completed run kept (Request.KeepAnswer), and
// false when it kept none (not completed, or not asked to). It is read
// under the rule of Status; a service token needs agent:read.
func (rt *Runtime) Answer(ctx context.Context, actor *typo3.BackendUser, access Access, id string) (Answer, bool, error) {
	if _, err := rt.readable(ctx, actor, access, id, store.ScopeAgentRead); err != nil {
		return Answer{}, false, err
	}
	raw, err := rt.st.RunAnswer(ctx, id)
	if err != nil || raw == "" {
		return Answer{}, false, err
	}
	var a Answer
	if err := json.Unmarshal([]byte(raw), &a); err != nil {
		return Answer{}, false, fmt.Errorf("agent: the answer of run %s is not readable: %w", id, err)
	}
	return a, true, nil
}

// InboxItem is a waiting run the actor may decide, with its pending turn.
type InboxItem struct {
	Run    store.Run       `json:"run"`
	Calls  []llm.ToolCall  `json:"calls,omitempty"`
	Digest string          `json:"digest"`
	Input  string          `json:"inputTool,omitempty"`
	Schema json.RawMessage `json:"inputSchema,omitempty"`
	// Message and URL are the question an MCP server asked while the
	// input call ran (remote text), and in URL mode the page to open.
	Message string `json:"inputMessage,omitempty"`
	URL     string `json:"inputUrl,omitempty"`
	// Previews are the tools' previews of the calls, taken at suspend.
	Previews []CallPreview `json:"previews,omitempty"`
	// Unreadable is set when the sealed state does not open; such a run
	// can only be cancelled.
	Unreadable bool `json:"unreadable,omitempty"`
	// Rights say what the reader may decide on the turn (a run waiting
	// for approval; otherwise Reason is run_not_waiting).
	Rights Rights `json:"rights"`
}

// pendingScopes are the scopes that let a service token read pending
// turns: reading, or deciding, which needs to see what it decides.
func pendingScopes() []store.Scope {
	return []store.Scope{store.ScopeAgentRead, store.ScopeAgentApprove}
}

// Inbox lists the waiting runs the actor may decide, newest first, each
// with its pending calls and digest: every waiting run for an admin (a
// service token: with ScopeAdmin, or acting as an admin), the actor's
// own otherwise. A service token needs agent:read or agent:approve.
func (rt *Runtime) Inbox(ctx context.Context, actor *typo3.BackendUser, access Access) ([]InboxItem, error) {
	if actor == nil || !access.permits(pendingScopes()...) {
		return nil, ErrAccessDenied
	}
	every := seesEveryOwner(actor, access)
	out := []InboxItem{}
	for _, status := range []store.RunStatus{store.RunWaitingForApproval, store.RunWaitingForInput} {
		p := store.ListRunsParams{Status: status, Limit: store.MaxRunLimit}
		if !every {
			p.OwnerUsername = actor.Username
		}
		rows, err := rt.st.Runs(ctx, p)
		if err != nil {
			return nil, err
		}
		for _, row := range rows {
			if !mayActOnRun(actor, access, row, pendingScopes()...) {
				continue
			}
			out = append(out, rt.pendingItem(ctx, actor, access, row))
		}
	}
	return out, nil
}

// Pending is the pending turn of one run, as an inbox item: the calls,
// digest, input tool and schema, previews, or Unreadable when the sealed
// state does not open. A run that is not waiting (or has no state any
// more) returns the item with only Run set. It is read under the rule of
// the inbox: an admin or the owner, or a service token with agent:read or
// agent:approve.
func (rt *Runtime) Pending(ctx context.Context, actor *typo3.BackendUser, access Access, id string) (InboxItem, error) {
	row, err := rt.readable(ctx, actor, access, id, pendingScopes()...)
	if err != nil {
		return InboxItem{}, err
	}
	return rt.pendingItem(ctx, actor, access, row), nil
}

// pendingItem opens the pending turn of a waiting run, with what the
// reader may decide on it.
func (rt *Runtime) pendingItem(ctx context.Context, actor *typo3.BackendUser, access Access, row store.Run) InboxItem {
	it := InboxItem{Run: row}
	waiting := row.Status == store.RunWaitingForApproval || row.Status == store.RunWaitingForInput
	if !waiting || !row.HasSuspendedState {
		it.Rights = rt.rights(ctx, actor, access, row, nil)
		return it
	}
	it.Digest = row.TurnDigest
	if rt.keyring == nil {
		it.Unreadable = true
		it.Rights = Rights{Reason: RefusedStateUnavailable}
		return it
	}
	st, err := rt.openState(ctx, row.ID, "", row.Status == store.RunWaitingForInput)
	var re *RefusedError
	switch {
	case errors.As(err, &re) && re.Code == RefusedNotWaiting:
		// Decided meanwhile: the state is gone, so is the turn.
		it.Digest = ""
		it.Rights = Rights{Reason: RefusedNotWaiting}
	case err != nil:
		it.Unreadable = true
		it.Rights = Rights{Reason: RefusedCorruptState}
	default:
		it.Calls, it.Input, it.Schema, it.Previews = st.Pending, st.InputTool, st.InputSchema, st.Previews
		it.Digest = digestOf(st.Pending, st.InputTool, st.InputSchema, st.Asked)
		if st.Asked != nil {
			it.Message, it.URL = st.Asked.Message, st.Asked.URL
		}
		it.Rights = rt.rights(ctx, actor, access, row, &st)
	}
	return it
}
