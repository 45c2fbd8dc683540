package chattest

import (
	"sync"
	"testing"
	"time"
)

// Timers is an injected timer (chat.WorkerParams.After,
// chat.MaintainerParams.After, cli.Env.After): every wait is reported,
// and a wait of d ends only when the test fires d, so schedules run
// exactly when a test says and never by the clock.
type Timers struct {
	waits chan time.Duration
	mu    sync.Mutex
	chans map[time.Duration]chan time.Time
}

// NewTimers returns timers that never fire by themselves.
func NewTimers() *Timers {
	return &Timers{waits: make(chan time.Duration, 64), chans: map[time.Duration]chan time.Time{}}
}

// Ch is the channel every wait of d receives from; a send on it ends one
// such wait, and blocks until a wait takes it.
func (tm *Timers) Ch(d time.Duration) chan time.Time {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	c, ok := tm.chans[d]
	if !ok {
		c = make(chan time.Time)
		tm.chans[d] = c
	}
	return c
}

// After is the timer to inject.
func (tm *Timers) After(d time.Duration) <-chan time.Time {
	select {
	case tm.waits <- d:
	default:
	}
	return tm.Ch(d)
}

// Pass fires one wait of d and returns once the schedule waits for d
// again, that is once the work the first wait started (a maintenance
// pass) is over. The schedule runs its next round afterwards.
func (tm *Timers) Pass(d time.Duration) {
	tm.Ch(d) <- time.Time{}
	tm.Ch(d) <- time.Time{}
}

// WaitFor waits until a wait of d began, for at most a minute.
func (tm *Timers) WaitFor(t testing.TB, d time.Duration) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		select {
		case got := <-tm.waits:
			if got == d {
				return
			}
		case <-deadline:
			t.Fatalf("no wait of %s began", d)
		}
	}
}
