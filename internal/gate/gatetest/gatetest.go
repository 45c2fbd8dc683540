// Package gatetest gives tests the real thing: tools registered behind a
// real gate over a fresh SQLite store, and the backend users who call
// them. Tests call tools only through the gate, as the product does.
package gatetest

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

// New registers tools in a fresh registry behind a gate over a new SQLite
// store in a temp dir. logger nil discards the gate's log.
func New(t testing.TB, logger *slog.Logger, tools ...tool.Tool) *gate.Gate {
	t.Helper()
	st, err := store.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "t3agent.db"), store.OpenParams{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	reg, err := tool.NewRegistry(tools)
	if err != nil {
		t.Fatal(err)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	g, err := gate.New(gate.Params{Registry: reg, Store: st, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Actors loads the named backend users of site. A user who cannot act
// (disabled, deleted, expired) maps to nil, the way the product hands such
// a request to a tool: with no actor.
func Actors(t testing.TB, site *typo3.Site, usernames ...string) map[string]*typo3.BackendUser {
	t.Helper()
	out := make(map[string]*typo3.BackendUser, len(usernames))
	for _, name := range usernames {
		u, err := site.BackendUserByName(context.Background(), name)
		switch {
		case errors.Is(err, typo3.ErrUserCannotAct):
			out[name] = nil
		case err != nil:
			t.Fatalf("load backend user %s: %v", name, err)
		default:
			out[name] = u
		}
	}
	return out
}
