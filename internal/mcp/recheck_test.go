package mcp_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/tool"
)

// TestDeclarationChangedElsewhere: within a turn offered before a change
// made by another process (here a second Service on the same store), the
// turn's tool sees the change at its first call after its declaration is
// older than Params.Recheck; until then calls read nothing and go ahead
// on the declaration the offer was made with. (The next offer sees the
// change at once: TestRegistryFollowsAnotherProcess.)
func TestDeclarationChangedElsewhere(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		recheck time.Duration
		change  func(t *testing.T, other *mcp.Service)
		called  bool // whether the call after the change reaches the server
	}{
		{"disabled, checked at once", time.Nanosecond, func(t *testing.T, other *mcp.Service) {
			if _, err := other.SetEnabled(t.Context(), "docs", false, "admin"); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"tool redeclared, checked at once", time.Nanosecond, func(t *testing.T, other *mcp.Service) {
			if err := other.SetToolEffect(t.Context(), mcp.SetToolEffectParams{Name: "mcp_docs_echo", Effect: tool.NonIdempotentWrite}); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"removed, checked at once", time.Nanosecond, func(t *testing.T, other *mcp.Service) {
			if err := other.Remove(t.Context(), "docs"); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"described anew, checked at once", time.Nanosecond, func(t *testing.T, other *mcp.Service) {
			d := "Another description; the decision is the same."
			if _, err := other.Update(t.Context(), mcp.UpdateParams{Identifier: "docs", Description: &d, By: "admin"}); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"disabled, within Recheck", time.Hour, func(t *testing.T, other *mcp.Service) {
			if _, err := other.SetEnabled(t.Context(), "docs", false, "admin"); err != nil {
				t.Fatal(err)
			}
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			f := newFixture(t, func(p *mcp.Params) { p.Recheck = c.recheck })
			srv := newSDKServer(t, serverKinds[3])
			f.add(t, "docs", srv.URL, func(p *mcp.AddParams) { p.Effect = tool.ReadOnly })
			g := f.gated(t)
			f.importTools(t, g, "docs", "mcp_docs_echo")
			turn := g.offer(t)
			if res := g.invokeIn(ctx, turn, "mcp_docs_echo", `{"text":"before"}`); res.IsError || res.Content != "before" {
				t.Fatalf("call before the change: %+v", res)
			}
			c.change(t, newFixtureOn(t, f, f.keys))
			before := srv.rec.count("tools/call")
			res := g.invokeIn(ctx, turn, "mcp_docs_echo", `{"text":"after"}`)
			called := srv.rec.count("tools/call") > before
			if called != c.called {
				t.Fatalf("the server was asked: %v, want %v (result %+v)", called, c.called, res)
			}
			if !called && (!res.IsError || !strings.Contains(res.Content, "is not available")) {
				t.Errorf("refused call = %+v", res)
			}
			if called && (res.IsError || res.Content != "after") {
				t.Errorf("call = %+v", res)
			}
		})
	}
}

// TestConcurrentRechecks calls one tool of a turn from many goroutines,
// each call comparing its declaration with the store: all answer; once
// another Service disabled the server, none reaches it.
func TestConcurrentRechecks(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := newFixture(t, func(p *mcp.Params) { p.Recheck = time.Nanosecond })
	srv := newSDKServer(t, serverKinds[3])
	f.add(t, "docs", srv.URL)
	g := f.gated(t)
	f.importTools(t, g, "docs", "mcp_docs_echo")
	turn := g.offer(t)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 5 {
				if res := g.invokeIn(ctx, turn, "mcp_docs_echo", `{"text":"x"}`); res.IsError || res.Content != "x" {
					t.Errorf("concurrent call = %+v", res)
				}
			}
		})
	}
	wg.Wait()
	if _, err := newFixtureOn(t, f, f.keys).SetEnabled(ctx, "docs", false, "admin"); err != nil {
		t.Fatal(err)
	}
	before := srv.rec.count("tools/call")
	for range 8 {
		wg.Go(func() {
			if res := g.invokeIn(ctx, turn, "mcp_docs_echo", `{"text":"x"}`); !res.IsError {
				t.Errorf("a call after the server was disabled answered: %+v", res)
			}
		})
	}
	wg.Wait()
	if n := srv.rec.count("tools/call") - before; n != 0 {
		t.Errorf("%d calls reached the disabled server", n)
	}
}
