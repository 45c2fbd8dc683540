package mcp

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/store"
)

// waitWrite waits for the running contact write, if any.
func waitWrite(h *healthWriter) {
	h.mu.Lock()
	busy := h.busy
	h.mu.Unlock()
	if busy != nil {
		<-busy
	}
}

// Contacts of one server are stored at most once per interval: the first
// at once, the rest coalesced into the latest, which Flush stores with the
// time it happened.
func TestContactsCoalesce(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st, err := store.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "t3agent.db"), store.OpenParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.CreateMCPServer(ctx, store.CreateMCPServerParams{
		Identifier: "docs", Name: "Docs", URL: "http://127.0.0.1:1/mcp", AuthKind: store.MCPAuthNone,
		Effect: store.MCPEffectReadOnly, CreatedBy: "admin",
	}); err != nil {
		t.Fatal(err)
	}
	stored := func() store.MCPServer {
		t.Helper()
		s, err := st.MCPServer(ctx, "docs")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	h := &healthWriter{st: st, every: time.Hour, log: func(_ context.Context, id string, err error) {
		t.Errorf("contact of %s not stored: %v", id, err)
	}}
	defer h.stop()

	h.record("docs", 7*time.Millisecond)
	waitWrite(h)
	if got := stored(); got.LastLatency != 7*time.Millisecond || got.LastContact.IsZero() {
		t.Fatalf("first contact: %v at %v; want 7ms stored at once", got.LastLatency, got.LastContact)
	}

	var before, after time.Time
	for i := 1; i <= 50; i++ {
		if i == 50 {
			before = time.Now()
		}
		h.record("docs", time.Duration(i)*time.Millisecond)
	}
	after = time.Now()
	h.mu.Lock()
	running, armed, due := h.busy != nil, h.timer != nil, h.due
	h.mu.Unlock()
	if running || !armed || time.Until(due) < 59*time.Minute {
		t.Errorf("after 50 more contacts: writing=%v, timer armed=%v for %v; want no write and a timer in about an hour", running, armed, time.Until(due))
	}
	if got := stored(); got.LastLatency != 7*time.Millisecond {
		t.Errorf("a contact was stored before its interval passed: %v", got.LastLatency)
	}

	// The interval passes (set back, rather than waited for) and the
	// timer fires: the latest contact is stored.
	h.mu.Lock()
	h.stored["docs"] = time.Now().Add(-2 * time.Hour)
	armedNow := h.armed
	h.mu.Unlock()
	h.wake(armedNow)
	waitWrite(h)
	if got := stored(); got.LastLatency != 50*time.Millisecond ||
		got.LastContact.Before(before.Truncate(time.Microsecond)) || got.LastContact.After(after) {
		t.Errorf("after the timer: %v at %v; want the latest (50ms) at the time of its call (%v … %v)", got.LastLatency, got.LastContact, before, after)
	}

	h.record("docs", 51*time.Millisecond)
	before = time.Now()
	h.record("docs", 52*time.Millisecond)
	after = time.Now()
	if err := h.flush(ctx); err != nil {
		t.Fatal(err)
	}
	got := stored()
	if got.LastLatency != 52*time.Millisecond {
		t.Errorf("after Flush: latency %v, want the latest (52ms)", got.LastLatency)
	}
	if got.LastContact.Before(before.Truncate(time.Microsecond)) || got.LastContact.After(after) {
		t.Errorf("after Flush: last contact %v, want the time of the call (%v … %v)", got.LastContact, before, after)
	}
	h.stop()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.timer != nil || len(h.pending) != 0 {
		t.Errorf("after stop: timer %v, pending %v", h.timer, h.pending)
	}
}
