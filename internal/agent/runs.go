package agent

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/typo3"
)

// ErrAccessDenied is returned when the actor may not see or act on a run:
// only an admin or the run's owner may.
var ErrAccessDenied = errors.New("agent: only an admin or the run's owner may act on this run")

// readable returns the run if actor may act on it.
func (rt *Runtime) readable(ctx context.Context, actor *typo3.BackendUser, id string) (store.Run, error) {
	row, err := rt.st.Run(ctx, id)
	if err != nil {
		return store.Run{}, err
	}
	if !mayAct(actor, row) {
		return store.Run{}, ErrAccessDenied
	}
	return row, nil
}

// Cancel cancels a run that has not ended and reports whether this call
// won: of concurrent cancels, and against a run that ends meanwhile, only
// one transition happens. A running loop stops at its next step boundary.
func (rt *Runtime) Cancel(ctx context.Context, actor *typo3.BackendUser, id string) (bool, error) {
	if _, err := rt.readable(ctx, actor, id); err != nil {
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

// Status is the run's row; the suspended state is never part of it.
func (rt *Runtime) Status(ctx context.Context, actor *typo3.BackendUser, id string) (store.Run, error) {
	return rt.readable(ctx, actor, id)
}

// Events lists the run's events with seq > after, in seq order; after -1
// lists from the start. One page of at most store.DefaultRunEventLimit.
func (rt *Runtime) Events(ctx context.Context, actor *typo3.BackendUser, id string, after int64) ([]store.RunEvent, error) {
	if _, err := rt.readable(ctx, actor, id); err != nil {
		return nil, err
	}
	return rt.st.RunEvents(ctx, store.ListRunEventsParams{RunID: id, FromSeq: max(after+1, 0)})
}

// InboxItem is a waiting run the actor may decide, with its pending turn.
type InboxItem struct {
	Run    store.Run       `json:"run"`
	Calls  []llm.ToolCall  `json:"calls,omitempty"`
	Digest string          `json:"digest"`
	Input  string          `json:"inputTool,omitempty"`
	Schema json.RawMessage `json:"inputSchema,omitempty"`
	// Previews are the tools\' previews of the calls, taken at suspend.
	Previews []CallPreview `json:"previews,omitempty"`
	// Unreadable is set when the sealed state does not open; such a run
	// can only be cancelled.
	Unreadable bool `json:"unreadable,omitempty"`
}

// Inbox lists the waiting runs actor may decide (all for an admin, their
// own otherwise), newest first, each with its pending calls and digest.
func (rt *Runtime) Inbox(ctx context.Context, actor *typo3.BackendUser) ([]InboxItem, error) {
	if actor == nil {
		return nil, ErrAccessDenied
	}
	out := []InboxItem{}
	for _, status := range []store.RunStatus{store.RunWaitingForApproval, store.RunWaitingForInput} {
		p := store.ListRunsParams{Status: status, Limit: store.MaxRunLimit}
		if !actor.Admin {
			p.OwnerUsername = actor.Username
		}
		rows, err := rt.st.Runs(ctx, p)
		if err != nil {
			return nil, err
		}
		for _, row := range rows {
			if !mayAct(actor, row) {
				continue
			}
			it := InboxItem{Run: row, Digest: row.TurnDigest}
			if rt.keyring == nil {
				it.Unreadable = true
			} else if st, err := rt.openState(ctx, row.ID, "", status == store.RunWaitingForInput); err != nil {
				it.Unreadable = true
			} else {
				it.Calls, it.Input, it.Schema, it.Previews = st.Pending, st.InputTool, st.InputSchema, st.Previews
				it.Digest = digestOf(st.Pending, st.InputTool, st.InputSchema)
			}
			out = append(out, it)
		}
	}
	return out, nil
}
