package web

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/chat"
	"github.com/t3agent/t3agent/internal/chat/chattest"
	"github.com/t3agent/t3agent/internal/store"
)

// e2ePoll is how often an idle worker slot looks for a queued turn in
// the end-to-end tests: short, so a flow does not wait on the default
// 200 ms between its steps.
const e2ePoll = 10 * time.Millisecond

// startWorker starts a real chat worker with n slots polling every poll
// on the fixture's service, as `serve` does; it stops (finishing the
// turns in flight) when the test ends, before the fixture closes.
func startWorker(tb testing.TB, f *chattest.Fixture, n int, poll time.Duration) {
	tb.Helper()
	w, err := chat.NewWorker(chat.WorkerParams{Service: f.Service, Concurrency: n, Poll: poll, Logger: f.Logger})
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.Start(ctx)
	tb.Cleanup(func() {
		w.Stop()
		cancel()
	})
}

// waitFor follows the conversation at path over its event stream until
// a view satisfies pred, and returns that view. Each call opens a stream
// of its own: the first event is the current view, so a state reached
// before the call is seen too. A conversation that fails instead, or a
// stream that ends (it lives at most 30 s), fails the test with the tail
// of the fixture's log.
func (c *client) waitFor(path, what string, pred func(viewEvent) bool) viewEvent {
	t := c.e.t
	t.Helper()
	s := c.stream(path + "/stream")
	defer s.resp.Body.Close()
	if s.resp.StatusCode != http.StatusOK {
		t.Fatalf("waiting for %s: the stream answered %d", what, s.resp.StatusCode)
	}
	var last viewEvent
	for {
		ev, data, err := s.next()
		if err != nil {
			t.Fatalf("waiting for %s: the stream ended (%v); last view %+v; log tail:\n%s", what, err, last, logTail(c.e.f))
		}
		if ev != "conversation" {
			t.Fatalf("waiting for %s: event %q %s", what, ev, data)
		}
		var v viewEvent
		if err := json.Unmarshal([]byte(data), &v); err != nil {
			t.Fatalf("waiting for %s: %v in %s", what, err, data)
		}
		if pred(v) {
			return v
		}
		if v.Status == store.ConversationFailed {
			t.Fatalf("waiting for %s: the conversation failed: %s %q; log tail:\n%s", what, v.ErrorCode, v.ErrorMessage, logTail(c.e.f))
		}
		last = v
	}
}

// statusIs is a waitFor predicate: the status, with the message count
// when count ≥ 0.
func statusIs(status store.ConversationStatus, count int) func(viewEvent) bool {
	return func(v viewEvent) bool {
		return v.Status == status && (count < 0 || v.TotalCount == count)
	}
}

// logTail is the end of the fixture's log, for failure messages.
func logTail(f *chattest.Fixture) string {
	const n = 4000
	s := f.Logs.String()
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// roles renders messages as role/content pairs with their markers, for
// comparisons and failure messages.
func roles(ms []messageJSON) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		s := string(m.Role) + ": " + m.Content
		if m.BesideToolCall {
			s += " [beside]"
		}
		if m.Notice != "" {
			s += " [" + m.Notice + "]"
		}
		out[i] = s
	}
	return out
}
