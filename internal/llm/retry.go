package llm

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// Retry defaults and bounds, from the runtime reference.
const (
	DefaultMaxRetries    = 3
	MaxMaxRetries        = 10
	DefaultBaseDelay     = 100 * time.Millisecond
	DefaultMaxDelay      = 30 * time.Second
	DefaultMaxRetryAfter = 30 * time.Second
)

// SleepFunc waits d or until ctx ends, returning ctx.Err() in that case.
// Tests pass one that records d and returns at once.
type SleepFunc func(ctx context.Context, d time.Duration) error

// RealSleep is the SleepFunc used when none is given.
func RealSleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// RetryParams configures NewRetry.
type RetryParams struct {
	// MaxRetries is how many attempts may follow the first, clamped to
	// 0..MaxMaxRetries. The zero value means no retries: configuration
	// supplies DefaultMaxRetries.
	MaxRetries int
	// BaseDelay and MaxDelay shape the backoff BaseDelay·2^n ≤ MaxDelay;
	// zero means DefaultBaseDelay and DefaultMaxDelay.
	BaseDelay, MaxDelay time.Duration
	// MaxRetryAfter is the longest Retry-After a 429 may ask for and still
	// be waited out in place; zero means DefaultMaxRetryAfter.
	MaxRetryAfter time.Duration
	// Sleep waits between attempts; nil means RealSleep.
	Sleep SleepFunc
	// Logger receives one record per retry; nil logs nothing.
	Logger *slog.Logger
}

// Retry is a Provider decorator that repeats failed attempts in place.
//
// Policy: connection errors (except our own timeouts: the attempt already
// waited its whole budget) and 5xx are retried with exponential backoff,
// BaseDelay·2^n capped at MaxDelay, no jitter, so attempt counts and
// waits are exact. A 429 is retried in place too, after exactly its
// Retry-After when it gives one (or the backoff when it does not), unless
// the hint exceeds MaxRetryAfter: then it fails at once as rateLimit with
// RetryAfter set, so a Fallback moves on instead of stalling the run.
// Nothing else is retried. A stream that has already delivered text is
// never retried, so no fragment is delivered twice.
//
// A Retry is safe for concurrent use; it keeps no per-call state.
type Retry struct {
	inner  Provider
	params RetryParams
}

// NewRetry wraps p.
func NewRetry(p Provider, params RetryParams) *Retry {
	params.MaxRetries = min(max(params.MaxRetries, 0), MaxMaxRetries)
	if params.BaseDelay <= 0 {
		params.BaseDelay = DefaultBaseDelay
	}
	if params.MaxDelay <= 0 {
		params.MaxDelay = DefaultMaxDelay
	}
	if params.MaxRetryAfter <= 0 {
		params.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if params.Sleep == nil {
		params.Sleep = RealSleep
	}
	return &Retry{inner: p, params: params}
}

// Backoff is the wait before retry n (0-based): base·2^n, at most limit.
func Backoff(n int, base, limit time.Duration) time.Duration {
	d := base
	for range n {
		d *= 2
		if d >= limit {
			return limit
		}
	}
	return min(d, limit)
}

// Name is the wrapped provider's name.
func (r *Retry) Name() string { return r.inner.Name() }

// Chat implements Provider.
func (r *Retry) Chat(ctx context.Context, req Request) (Response, error) {
	return r.do(ctx, req, nil)
}

// ChatStream implements Streamer.
func (r *Retry) ChatStream(ctx context.Context, req Request, onDelta func(string)) (Response, error) {
	if onDelta == nil {
		onDelta = func(string) {}
	}
	return r.do(ctx, req, onDelta)
}

func (r *Retry) do(ctx context.Context, req Request, onDelta func(string)) (Response, error) {
	attempts := 0
	for n := 0; ; n++ {
		var resp Response
		var err error
		emitted := false
		if onDelta == nil {
			resp, err = r.inner.Chat(ctx, req)
		} else {
			resp, err = Stream(ctx, r.inner, req, func(s string) { emitted = true; onDelta(s) })
		}
		if err == nil {
			resp.Attempts = attempts + max(resp.Attempts, 1)
			return resp, nil
		}
		e := AsError(r.inner.Name(), err)
		attempts += max(e.Attempts, 1)
		e.Attempts = attempts
		if n >= r.params.MaxRetries || emitted || ctx.Err() != nil {
			return Response{}, e
		}
		delay, ok := r.delay(n, e)
		if !ok {
			return Response{}, e
		}
		if r.params.Logger != nil {
			r.params.Logger.LogAttrs(ctx, slog.LevelWarn, "llm: retrying provider call",
				slog.String("provider", e.Provider), slog.String("class", string(e.Class)),
				slog.Int("status", e.Status), slog.Int("attempt", attempts),
				slog.Duration("delay", delay), slog.String("error", e.Message))
		}
		if serr := r.params.Sleep(ctx, delay); serr != nil {
			return Response{}, &Error{Provider: e.Provider, Class: FailCanceled, Message: "canceled while waiting to retry", Attempts: attempts, Cause: serr}
		}
	}
}

// delay decides whether e is retried in place and after how long.
func (r *Retry) delay(n int, e *Error) (time.Duration, bool) {
	switch e.Class {
	case FailServerError:
		return Backoff(n, r.params.BaseDelay, r.params.MaxDelay), true
	case FailConnection:
		return Backoff(n, r.params.BaseDelay, r.params.MaxDelay), !e.Timeout
	case FailRateLimit:
		if e.RetryAfter > r.params.MaxRetryAfter {
			return 0, false
		}
		if e.RetryAfter > 0 {
			return e.RetryAfter, true
		}
		return Backoff(n, r.params.BaseDelay, r.params.MaxDelay), true
	}
	return 0, false
}

// AsError returns err as an *Error, classifying a foreign error as
// canceled when it is a context error and unknown otherwise.
func AsError(provider string, err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		c := *e
		return &c
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &Error{Provider: provider, Class: FailCanceled, Message: err.Error(), Attempts: 1, Cause: err}
	}
	return &Error{Provider: provider, Class: FailUnknown, Message: "provider failed", Attempts: 1, Cause: err}
}
