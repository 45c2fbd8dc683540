package mcp

import (
	"context"
	"sync"
	"time"

	"github.com/t3agent/t3agent/internal/store"
)

// contactEvery is the shortest interval between two stored contacts of
// one server. A store write per call would cost more than the call's
// own work on a fast server; the price is freshness: the stored last
// contact may lag the latest by up to this long, and a process that dies
// loses at most this much (Close and Flush store what is pending).
const contactEvery = time.Second

// contact is one successful call: when it started and how long it took.
type contact struct {
	at      time.Time
	latency time.Duration
}

// healthWriter records the contact of successful remote calls off the
// call's path: a call leaves its contact here and returns. The latest
// contact per server is stored by a goroutine that runs only while there
// is something due, at most once per server every `every`; what is not
// due yet waits for a timer. Import and ping record theirs directly.
type healthWriter struct {
	st    Store
	log   func(ctx context.Context, id string, err error)
	every time.Duration

	mu      sync.Mutex
	pending map[string]contact   // the latest unstored contact per server
	stored  map[string]time.Time // when each server's contact was last written
	timer   *time.Timer          // armed for the earliest pending contact not yet due
	due     time.Time            // when timer fires
	armed   uint64               // counts armings, so a superseded timer is told apart
	busy    chan struct{}        // closed when the running write ends; nil when none runs
}

func (h *healthWriter) record(id string, latency time.Duration) {
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.pending == nil {
		h.pending = map[string]contact{}
	}
	h.pending[id] = contact{at: now, latency: latency}
	h.schedule(now)
}

// schedule starts a write when a pending contact is due, else arms the
// timer for the earliest one. h.mu is held. A running write schedules
// again when it ends.
func (h *healthWriter) schedule(now time.Time) {
	if h.busy != nil || len(h.pending) == 0 {
		return
	}
	var next time.Time
	for id := range h.pending {
		due := h.stored[id].Add(h.every)
		if !due.After(now) {
			h.busy = make(chan struct{})
			go h.write(h.busy, false)
			return
		}
		if next.IsZero() || due.Before(next) {
			next = due
		}
	}
	if h.timer != nil && !next.Before(h.due) {
		return
	}
	if h.timer != nil {
		h.timer.Stop()
	}
	h.armed++
	armed := h.armed
	h.due = next
	h.timer = time.AfterFunc(next.Sub(now), func() { h.wake(armed) })
}

func (h *healthWriter) wake(armed uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if armed == h.armed {
		h.timer = nil
	}
	h.schedule(time.Now())
}

// write stores the pending contacts that are due (all of them in the
// first round when all is set) until none is, then closes busy.
func (h *healthWriter) write(busy chan struct{}, all bool) {
	for round := 0; ; round++ {
		h.mu.Lock()
		now := time.Now()
		var batch map[string]contact
		for id, c := range h.pending {
			if (all && round == 0) || !h.stored[id].Add(h.every).After(now) {
				if batch == nil {
					batch = map[string]contact{}
				}
				batch[id] = c
				delete(h.pending, id)
			}
		}
		if len(batch) == 0 {
			h.busy = nil
			close(busy)
			h.schedule(now)
			h.mu.Unlock()
			return
		}
		h.mu.Unlock()
		for id, c := range batch {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := h.st.RecordMCPContact(ctx, store.RecordMCPContactParams{Identifier: id, Latency: c.latency, At: c.at}); err != nil {
				h.log(ctx, id, err)
			}
			cancel()
		}
		h.mu.Lock()
		if h.stored == nil {
			h.stored = map[string]time.Time{}
		}
		for id := range batch {
			h.stored[id] = now
		}
		h.mu.Unlock()
	}
}

// flush stores every contact recorded so far, due or not, and returns
// once it is stored.
func (h *healthWriter) flush(ctx context.Context) error {
	for {
		h.mu.Lock()
		busy := h.busy
		if busy == nil {
			if len(h.pending) == 0 {
				h.mu.Unlock()
				return nil
			}
			busy = make(chan struct{})
			h.busy = busy
			h.mu.Unlock()
			h.write(busy, true)
			return nil
		}
		h.mu.Unlock()
		select {
		case <-busy:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// stop disarms the timer; call it after the last flush.
func (h *healthWriter) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.timer != nil {
		h.timer.Stop()
		h.timer = nil
	}
}
