package llm

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Breaker defaults, from the runtime reference.
const (
	DefaultBreakerThreshold = 5
	DefaultBreakerCooldown  = 30 * time.Second
)

// BreakerState is the circuit's state.
type BreakerState string

const (
	BreakerClosed   BreakerState = "closed"
	BreakerOpen     BreakerState = "open"
	BreakerHalfOpen BreakerState = "halfOpen"
)

// BreakerParams configures NewBreaker.
type BreakerParams struct {
	// Threshold is how many consecutive tripping failures open the
	// circuit; 0 means DefaultBreakerThreshold.
	Threshold int
	// Cooldown is how long the circuit stays open before one probe is let
	// through; 0 means DefaultBreakerCooldown.
	Cooldown time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// OnChange, when set, is told every transition (for logs and
	// metrics). It runs with the breaker's lock released.
	OnChange func(provider string, from, to BreakerState)
}

// Breaker is a circuit breaker around one provider. Build exactly one per
// provider endpoint and share it between every configuration and fallback
// entry that uses that endpoint: the point is to stop calling an endpoint
// that is down, whoever calls it.
//
// Closed, it counts consecutive failures whose class TripsCircuit (one
// per call: wrap it around Retry, so a call that exhausted its retries
// counts once); a success resets the count. At Threshold it opens: calls
// fail at once with FailCircuitOpen, making no network call. After
// Cooldown it is half-open: exactly one call goes through as a probe
// while the others still fail fast. A probe that succeeds, or that fails
// for a reason that proves the endpoint answers (auth, clientError, …),
// closes the circuit; a tripping failure opens it for another Cooldown; a
// canceled probe leaves it half-open for the next caller.
//
// A Breaker is safe for concurrent use.
type Breaker struct {
	inner  Provider
	params BreakerParams

	mu       sync.Mutex
	state    BreakerState
	failures int
	openedAt time.Time
	probing  bool
}

// NewBreaker wraps p.
func NewBreaker(p Provider, params BreakerParams) *Breaker {
	if params.Threshold <= 0 {
		params.Threshold = DefaultBreakerThreshold
	}
	if params.Cooldown <= 0 {
		params.Cooldown = DefaultBreakerCooldown
	}
	if params.Now == nil {
		params.Now = time.Now
	}
	return &Breaker{inner: p, params: params, state: BreakerClosed}
}

// Name is the wrapped provider's name.
func (b *Breaker) Name() string { return b.inner.Name() }

// State reports the current state, moving open to half-open when the
// cooldown has passed.
func (b *Breaker) State() BreakerState {
	b.mu.Lock()
	from := b.state
	b.advance()
	to := b.state
	b.mu.Unlock()
	b.notify(from, to)
	return to
}

// Chat implements Provider.
func (b *Breaker) Chat(ctx context.Context, req Request) (Response, error) {
	return b.call(ctx, func() (Response, error) { return b.inner.Chat(ctx, req) })
}

// ChatStream implements Streamer.
func (b *Breaker) ChatStream(ctx context.Context, req Request, onDelta func(string)) (Response, error) {
	return b.call(ctx, func() (Response, error) { return Stream(ctx, b.inner, req, onDelta) })
}

func (b *Breaker) call(ctx context.Context, fn func() (Response, error)) (Response, error) {
	if err := b.admit(); err != nil {
		return Response{}, err
	}
	resp, err := fn()
	b.record(ctx, err)
	return resp, err
}

// advance moves open to half-open once the cooldown is over. Caller holds mu.
func (b *Breaker) advance() {
	if b.state == BreakerOpen && !b.params.Now().Before(b.openedAt.Add(b.params.Cooldown)) {
		b.state = BreakerHalfOpen
		b.probing = false
	}
}

func (b *Breaker) admit() error {
	b.mu.Lock()
	from := b.state
	b.advance()
	var err error
	switch b.state {
	case BreakerOpen:
		wait := b.openedAt.Add(b.params.Cooldown).Sub(b.params.Now())
		err = b.openError(fmt.Sprintf("circuit open for another %s", wait.Round(time.Millisecond)))
	case BreakerHalfOpen:
		if b.probing {
			err = b.openError("circuit half-open, probe in flight")
		} else {
			b.probing = true
		}
	}
	to := b.state
	b.mu.Unlock()
	b.notify(from, to)
	return err
}

func (b *Breaker) openError(msg string) *Error {
	return &Error{Provider: b.inner.Name(), Class: FailCircuitOpen, Message: msg}
}

func (b *Breaker) record(ctx context.Context, err error) {
	class := FailureClass("")
	if err != nil {
		class = AsError(b.inner.Name(), err).Class
		if ctx.Err() != nil {
			class = FailCanceled
		}
	}
	b.mu.Lock()
	from := b.state
	switch {
	case class == FailCanceled:
		// Says nothing about the endpoint: release the probe slot only.
		if b.state == BreakerHalfOpen {
			b.probing = false
		}
	case class.TripsCircuit():
		b.failures++
		// A straggler admitted before the circuit opened does not extend it.
		if b.state == BreakerHalfOpen || (b.state == BreakerClosed && b.failures >= b.params.Threshold) {
			b.state = BreakerOpen
			b.openedAt = b.params.Now()
			b.probing = false
		}
	default:
		b.failures = 0
		if b.state == BreakerHalfOpen {
			b.state = BreakerClosed
			b.probing = false
		}
	}
	to := b.state
	b.mu.Unlock()
	b.notify(from, to)
}

func (b *Breaker) notify(from, to BreakerState) {
	if from != to && b.params.OnChange != nil {
		b.params.OnChange(b.inner.Name(), from, to)
	}
}

// Resilient stacks what one provider endpoint needs: a Breaker over a
// Retry over p. Build it once per endpoint and share it.
func Resilient(p Provider, retry RetryParams, breaker BreakerParams) *Breaker {
	return NewBreaker(NewRetry(p, retry), breaker)
}
