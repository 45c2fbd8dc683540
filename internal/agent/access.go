package agent

import (
	"context"
	"errors"
	"slices"

	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/typo3"
)

// Access is how an actor reaches a run beyond being a backend user: the
// scopes of the service token acting, if a machine acts.
//
// Who sees which runs is one rule, for persons and tokens alike: an
// admin sees every owner's runs, anyone else their own. A service token
// sees what its backend user may see — the token of an editor that
// editor's runs, the token of an admin every run — and only ScopeAdmin
// widens a token to every owner's runs. A token then acts only for the
// operations its scopes name (its user's admin flag grants it no scope):
//
//	Status, Events, Runs  agent:read
//	Inbox, Pending        agent:read or agent:approve (a decider sees what it decides)
//	Approve, SubmitInput  agent:approve
//	Cancel                agent:cancel
//
// ScopeAdmin implies every scope. Even with agent:approve a token cannot
// release a write: it may deny any turn and approve a turn without
// writes, and it never answers input (both refused
// approver_not_permitted).
type Access struct {
	// Token names the service token acting; "" for a person.
	Token  string
	Scopes []store.Scope
}

// Service reports whether a service token acts.
func (a Access) Service() bool { return a.Token != "" }

// Has reports whether the token holds s; ScopeAdmin implies every scope.
func (a Access) Has(s store.Scope) bool {
	return slices.Contains(a.Scopes, s) || slices.Contains(a.Scopes, store.ScopeAdmin)
}

// permits reports whether access may do an operation needing one of
// scopes at all: a person always, a token by one of the scopes.
func (a Access) permits(scopes ...store.Scope) bool {
	return !a.Service() || slices.ContainsFunc(scopes, a.Has)
}

// seesEveryOwner reports whether actor sees every owner's runs rather
// than their own: an admin, or a token with ScopeAdmin.
func seesEveryOwner(actor *typo3.BackendUser, access Access) bool {
	return actor != nil && (actor.Admin || access.Service() && slices.Contains(access.Scopes, store.ScopeAdmin))
}

// owns reports whether actor is the run's owner (uid and username, so a
// username reused by a later account does not inherit runs).
func owns(actor *typo3.BackendUser, row store.Run) bool {
	return actor != nil && actor.Username == row.OwnerUsername && actor.UID == row.OwnerUID
}

// mayActOnRun is the one authorisation rule of runs (see Access): the
// operation's scope for a token, and a run the actor sees.
func mayActOnRun(actor *typo3.BackendUser, access Access, row store.Run, scopes ...store.Scope) bool {
	return actor != nil && access.permits(scopes...) && (seesEveryOwner(actor, access) || owns(actor, row))
}

// ErrAccessDenied is returned when the actor may not see or act on a run:
// it must be an admin or the run's owner (a service token: its user's
// runs, every run with ScopeAdmin), and a token must hold the
// operation's scope.
var ErrAccessDenied = errors.New("agent: only an admin, the run's owner or a service token with the scope may act on this run")

// readable returns the run if the actor may act on it under one of the
// scopes.
func (rt *Runtime) readable(ctx context.Context, actor *typo3.BackendUser, access Access, id string, scopes ...store.Scope) (store.Run, error) {
	// What no run could allow is refused before the read, so a caller
	// without the right cannot tell which runs exist.
	if actor == nil || !access.permits(scopes...) {
		return store.Run{}, ErrAccessDenied
	}
	row, err := rt.st.Run(ctx, id)
	if err != nil {
		return store.Run{}, err
	}
	if !mayActOnRun(actor, access, row, scopes...) {
		return store.Run{}, ErrAccessDenied
	}
	return row, nil
}

// Rights say what an actor may decide on a run waiting for approval, so
// that a client offers only what Approve will accept. They are a
// readout: Approve checks again, and may still refuse what they allow
// (a stale digest, the approver's own gate for a call, a claim lost).
type Rights struct {
	MayApprove bool `json:"mayApprove"`
	MayDeny    bool `json:"mayDeny"`
	// Reason says why MayApprove is false: RefusedNotWaiting (no
	// approval is pending), RefusedAccessDenied (neither may: not an
	// admin or the owner, or a token without agent:approve or outside
	// its user's runs), RefusedConfigurationGone, RefusedSelfApproval
	// (four-eyes: the initiator may deny, a second person must approve)
	// or RefusedApproverNotPermitted (a service token cannot release a
	// write).
	Reason RefusalCode `json:"decideReason,omitempty"`
}

// fourEyes reports whether the configuration keeps actor from approving
// its own run: with require_second_approver the initiator may deny but
// never approve (admins not exempt); a service token is never the
// initiator.
func fourEyes(cfg *agentconfig.Resolved, actor *typo3.BackendUser, access Access, row store.Run) bool {
	return cfg.Configuration.RequireSecondApprover && !access.Service() && actor.Username == row.OwnerUsername
}

// Rights says what actor may decide on run id (see Rights). The run is
// read under the rule of Pending; a run the actor may not read is
// ErrAccessDenied, an unknown one store.ErrNotFound.
func (rt *Runtime) Rights(ctx context.Context, actor *typo3.BackendUser, access Access, id string) (Rights, error) {
	row, err := rt.readable(ctx, actor, access, id, pendingScopes()...)
	if err != nil {
		return Rights{}, err
	}
	return rt.rights(ctx, actor, access, row, nil), nil
}

// rights computes Rights on row; st is its opened state when the caller
// has it (nil opens it when a token's right depends on the calls).
func (rt *Runtime) rights(ctx context.Context, actor *typo3.BackendUser, access Access, row store.Run, st *suspendedState) Rights {
	if row.Status != store.RunWaitingForApproval || !row.HasSuspendedState {
		return Rights{Reason: RefusedNotWaiting}
	}
	if !mayActOnRun(actor, access, row, store.ScopeAgentApprove) {
		return Rights{Reason: RefusedAccessDenied}
	}
	if rt.configs == nil {
		return Rights{Reason: RefusedStateUnavailable}
	}
	cfg, err := rt.configs.Resolve(ctx, row.Configuration)
	if err != nil {
		return Rights{Reason: RefusedConfigurationGone}
	}
	if fourEyes(cfg, actor, access, row) {
		return Rights{MayDeny: true, Reason: RefusedSelfApproval}
	}
	if access.Service() {
		if st == nil && rt.keyring != nil {
			if opened, err := rt.openState(ctx, row.ID, "", false); err == nil {
				st = &opened
			}
		}
		if st == nil || rt.pendingWrites(ctx, st.Pending) {
			return Rights{MayDeny: true, Reason: RefusedApproverNotPermitted}
		}
	}
	return Rights{MayApprove: true, MayDeny: true}
}
