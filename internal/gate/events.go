package gate

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

// Governance event kinds.
const (
	// EventToolDenied records a tool the gate refused to offer or call.
	EventToolDenied = "tool_denied"
	// EventToolObserved records a tool allowed only because enforcement
	// is set to observe.
	EventToolObserved = "tool_observed"
	// EventWriteUnapproved records an approval-bound call that was refused
	// without running because its turn was resumed with input, never
	// approved (RecordUnapproved).
	EventWriteUnapproved = "write_unapproved"
)

// Stage is where the gate denied a tool, for metrics.
type Stage string

const (
	StageOffer  Stage = "offer"  // Offer left the tool out of a turn
	StageCall   Stage = "call"   // Invoke refused a call, or RecordUnapproved
	StageDecide Stage = "decide" // Decide answered a direct question
)

// Denial describes one denial for Params.OnDenied. It holds no arguments,
// no actor and no run: only what a metric may count.
type Denial struct {
	Tool   string
	Reason Reason
	Stage  Stage
}

// UnapprovedParams are the parameters of RecordUnapproved.
type UnapprovedParams struct {
	Tool   string
	Actor  *typo3.BackendUser // whom the run acts as
	Config Configuration
	RunID  string
}

// RecordUnapproved logs and stores a write_unapproved governance event:
// a call that needs approval came due in a turn that was answered with
// input and never approved, so the caller refused it unrun. (A turn is
// scanned for approval before input; this happens when a tool became
// approval-bound while the run waited.) A store error is returned for
// the caller to log; the call stays refused either way.
func (g *Gate) RecordUnapproved(ctx context.Context, p UnapprovedParams) error {
	s := scope{actor: p.Actor, cfg: configOf(p.Config), runID: p.RunID}
	d := Decision{Tool: p.Tool, Reason: ReasonWriteUnapproved, DataClass: tool.SecretAdjacent, Zone: s.cfg.TrustZone, Ceiling: s.cfg.TrustZone.Ceiling()}
	if e, ok := g.reg.Get(ctx, p.Tool); ok {
		d.DataClass = classOf(e.Spec)
	}
	ev := eventOf(EventWriteUnapproved, d, s)
	g.log.WarnContext(ctx, "approval-bound call refused: its turn was never approved", "tool", ev.Tool, "reason", ev.Reason,
		"actor", ev.ActorUsername, "actor_uid", ev.ActorUID, "configuration", ev.Configuration, "run_id", ev.RunID)
	g.deny(ctx, StageCall, d)
	if _, err := g.st.RecordGovernanceEvent(ctx, ev); err != nil {
		return fmt.Errorf("gate: cannot record write_unapproved for tool %q: %w", p.Tool, err)
	}
	return nil
}

// deny reports a denial to Params.OnDenied.
func (g *Gate) deny(ctx context.Context, stage Stage, d Decision) {
	if g.denied != nil {
		g.denied(ctx, Denial{Tool: d.Tool, Reason: d.Reason, Stage: stage})
	}
}

// record logs and stores a governance event for every denied or
// observed-only decision, in one transaction, and returns the decisions as
// they stand: if the events cannot be stored, observed-only decisions
// become denials, because observing without a record is not observing.
// Events carry who, what and why, never arguments; the store has no place
// for them.
func (g *Gate) record(ctx context.Context, stage Stage, s scope, ds []Decision) []Decision {
	var events []store.RecordGovernanceEventParams
	var denied []string
	for _, d := range ds {
		if d.Allowed && !d.ObservedOnly {
			continue
		}
		if !d.ObservedOnly {
			ev := eventOf(EventToolDenied, d, s)
			denied = append(denied, ev.Tool+": "+ev.Reason+" ("+ev.DataClass+")")
			events = append(events, ev)
			continue
		}
		ev := eventOf(EventToolObserved, d, s)
		g.log.WarnContext(ctx, "tool allowed only because enforcement is observe", "tool", ev.Tool, "reason", ev.Reason,
			"data_class", ev.DataClass, "zone", ev.Zone, "ceiling", ev.Ceiling, "actor", ev.ActorUsername,
			"actor_uid", ev.ActorUID, "configuration", ev.Configuration, "run_id", ev.RunID)
		events = append(events, ev)
	}
	if len(events) == 0 {
		return ds
	}
	defer func() {
		for _, d := range ds {
			if !d.Allowed {
				g.deny(ctx, stage, d)
			}
		}
	}()
	if len(denied) > 0 {
		// One line per decision batch: an offer denies the same tools to
		// the same user run after run; each denial is an event of its own.
		// Who, where and which run are the batch's, the same in every event.
		// Debug, not info: the events are the record, and at info this line
		// repeated the same denials for every run.
		ev := events[0]
		g.log.DebugContext(ctx, "tools denied", "tools", strings.Join(denied, "; "), "count", len(denied),
			"zone", ev.Zone, "ceiling", ev.Ceiling, "actor", ev.ActorUsername, "actor_uid", ev.ActorUID,
			"configuration", ev.Configuration, "run_id", ev.RunID)
	}
	if _, err := g.st.RecordGovernanceEvents(ctx, events); err != nil {
		g.log.ErrorContext(ctx, "cannot store governance events; observed-only tools are denied instead",
			"events", len(events), "run_id", s.runID, "error", err.Error())
		for i := range ds {
			if ds[i].ObservedOnly {
				ds[i].Allowed, ds[i].ObservedOnly = false, false
			}
		}
	}
	return ds
}

func eventOf(kind string, d Decision, s scope) store.RecordGovernanceEventParams {
	ev := store.RecordGovernanceEventParams{
		Kind:          kind,
		Tool:          storable(d.Tool),
		Reason:        string(d.Reason),
		Zone:          string(d.Zone),
		Ceiling:       d.Ceiling.String(),
		DataClass:     d.DataClass.String(),
		Configuration: storable(s.cfg.Name),
		RunID:         storable(s.runID),
	}
	if s.actor != nil {
		ev.ActorUsername = storable(s.actor.Username)
		ev.ActorUID = max(s.actor.UID, 0)
	}
	return ev
}

// storable fits text from outside (a tool name the model made up, say)
// into what the store accepts, so the event is never lost to it: valid
// UTF-8, no NUL, at most store.MaxNameLen bytes cut on a rune boundary.
func storable(s string) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
	return cutRunes(s, store.MaxNameLen)
}

// cutRunes returns the longest prefix of s of at most n bytes that does
// not split a rune. s must be valid UTF-8.
func cutRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
