package mcp

import (
	"context"
	"sync"
	"time"

	"github.com/t3agent/t3agent/internal/store"
)

// healthWriter records the contact of successful remote calls off the
// call's path: a call leaves its latency here and returns; a goroutine,
// running only while there is something to write, stores the latest
// contact per server. Import and ping record theirs directly.
type healthWriter struct {
	st  Store
	log func(ctx context.Context, id string, err error)

	mu      sync.Mutex
	pending map[string]time.Duration
	idle    chan struct{} // closed when the running writer stops; nil when none runs
}

func (h *healthWriter) record(id string, latency time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.pending == nil {
		h.pending = map[string]time.Duration{}
	}
	h.pending[id] = latency
	if h.idle == nil {
		h.idle = make(chan struct{})
		go h.drain(h.idle)
	}
}

func (h *healthWriter) drain(idle chan struct{}) {
	for {
		h.mu.Lock()
		batch := h.pending
		h.pending = nil
		if len(batch) == 0 {
			h.idle = nil
			h.mu.Unlock()
			close(idle)
			return
		}
		h.mu.Unlock()
		for id, latency := range batch {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := h.st.RecordMCPContact(ctx, store.RecordMCPContactParams{Identifier: id, Latency: latency}); err != nil {
				h.log(ctx, id, err)
			}
			cancel()
		}
	}
}

// flush waits until every contact recorded so far is stored.
func (h *healthWriter) flush(ctx context.Context) error {
	h.mu.Lock()
	idle := h.idle
	h.mu.Unlock()
	if idle == nil {
		return nil
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
