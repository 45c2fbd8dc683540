package agent

import (
	"context"
	"errors"
	"slices"

	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/typo3"
)

// Access is how an actor reaches a run beyond being a backend user: the
// scopes of the service token acting, if a machine acts.
//
// A person (the zero Access) may act on a run when they are an admin or
// its owner. A service token may act on any run, whoever owns it, but
// only for the operations its scopes name, and its backend user's admin
// flag does not widen them:
//
//	Status, Events        agent:read
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

// mayActOnRun is the one authorisation rule of runs: a service token by
// any of the scopes, a person as an admin or the run's owner.
func mayActOnRun(actor *typo3.BackendUser, access Access, row store.Run, scopes ...store.Scope) bool {
	if access.Service() {
		return slices.ContainsFunc(scopes, access.Has)
	}
	return actor != nil && (actor.Admin || (actor.Username == row.OwnerUsername && actor.UID == row.OwnerUID))
}

// seesEveryRun reports whether actor's listings (the inbox) span every
// owner's runs rather than their own.
func seesEveryRun(actor *typo3.BackendUser, access Access, scopes ...store.Scope) bool {
	if access.Service() {
		return slices.ContainsFunc(scopes, access.Has)
	}
	return actor != nil && actor.Admin
}

// ErrAccessDenied is returned when the actor may not see or act on a run:
// a person must be an admin or the run's owner, a service token must hold
// the operation's scope.
var ErrAccessDenied = errors.New("agent: only an admin, the run's owner or a service token with the scope may act on this run")

// readable returns the run if the actor may act on it under one of the
// scopes.
func (rt *Runtime) readable(ctx context.Context, actor *typo3.BackendUser, access Access, id string, scopes ...store.Scope) (store.Run, error) {
	// What no run could allow is refused before the read, so a caller
	// without the right cannot tell which runs exist.
	if access.Service() && !slices.ContainsFunc(scopes, access.Has) || !access.Service() && actor == nil {
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
