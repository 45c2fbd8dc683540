package mcpserver

import (
	"sync"
	"time"
)

// limiter counts calls per key in fixed windows. It is safe for
// concurrent use; its memory is bounded by dropping ended windows, then
// any, when maxKeys is reached.
type limiter struct {
	now    func() time.Time
	max    int // < 0: no limit
	window time.Duration

	mu   sync.Mutex
	hits map[string]*window
}

type window struct {
	start time.Time
	n     int
}

const maxKeys = 100_000

func newLimiter(now func() time.Time, limit int, per time.Duration) *limiter {
	return &limiter{now: now, max: limit, window: per, hits: map[string]*window{}}
}

// take counts one call for key, or refuses it with the time until its
// window ends.
func (l *limiter) take(key string) (time.Duration, bool) {
	if l.max < 0 {
		return 0, true
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.hits[key]
	if w != nil && now.Sub(w.start) >= l.window {
		w = nil
	}
	if w == nil {
		if len(l.hits) >= maxKeys {
			l.prune(now)
		}
		w = &window{start: now}
		l.hits[key] = w
	}
	if w.n >= l.max {
		return w.start.Add(l.window).Sub(now), false
	}
	w.n++
	return 0, true
}

func (l *limiter) prune(now time.Time) {
	for k, w := range l.hits {
		if now.Sub(w.start) >= l.window {
			delete(l.hits, k)
		}
	}
	for k := range l.hits {
		if len(l.hits) < maxKeys/2 {
			break
		}
		delete(l.hits, k)
	}
}
