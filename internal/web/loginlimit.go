package web

import (
	"strings"
	"sync"
	"time"
)

// loginLimiter slows password guessing down. It keeps two kinds of key:
// a client address, and an address with a username. A key's first
// failures are free; from then on every failure makes the next attempt
// through that key wait, twice as long as the wait before, up to a
// ceiling. A key is forgotten after a quiet period. No key spans
// addresses, so nobody can lock an account out for others by guessing
// its password from elsewhere.
//
// An attempt counts from the moment it starts, so concurrent guesses
// cannot all slip under the limit; a login that succeeds gives its
// attempt back and clears its address-and-username key. It is safe for
// concurrent use.
type loginLimiter struct {
	now func() time.Time
	// freeUser and freeAddr are the attempts a key allows back to back.
	freeUser, freeAddr int
	// delay is the first wait, ceiling the longest; a key is forgotten
	// forget after its last attempt or wait ended.
	delay, ceiling, forget time.Duration

	mu   sync.Mutex
	keys map[limitKey]*limitState
}

// limitKey is an address (user empty) or an address and a username
// (case-folded, as TYPO3's login folds it).
type limitKey struct {
	addr, user string
	perUser    bool
}

type limitState struct {
	// attempts counts failures and attempts in flight.
	attempts int
	// last is when the last attempt started; until is when the next may.
	last, until time.Time
}

// maxLimiterKeys bounds the limiter's memory; forgotten keys are dropped
// first when it is reached.
const maxLimiterKeys = 100_000

// limitParams are the limiter's tunables (API.LoginFailures etc.).
type limitParams struct {
	freeUser, freeAddr     int
	delay, ceiling, forget time.Duration
}

func newLoginLimiter(now func() time.Time, p limitParams) *loginLimiter {
	return &loginLimiter{now: now, freeUser: p.freeUser, freeAddr: p.freeAddr, delay: p.delay, ceiling: p.ceiling,
		forget: max(p.forget, p.ceiling), keys: map[limitKey]*limitState{}}
}

// loginAttempt is one counted attempt.
type loginAttempt struct {
	l       *loginLimiter
	charges []charge
}

// charge is what an attempt did to one key, so that giving it back
// undoes exactly that.
type charge struct {
	key        limitKey
	st         *limitState
	prev, set  time.Time
	clearOnWin bool
}

// take counts an attempt from addr for username, or refuses it with the
// time until the key that waits longest allows the next one.
func (l *loginLimiter) take(addr, username string) (*loginAttempt, time.Duration) {
	keys := [2]limitKey{{addr: addr}, {addr: addr, user: strings.ToLower(strings.TrimSpace(username)), perUser: true}}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	var wait time.Duration
	for _, k := range keys {
		st := l.keys[k]
		if st == nil {
			continue
		}
		if l.forgotten(st, now) {
			delete(l.keys, k)
			continue
		}
		wait = max(wait, st.until.Sub(now))
	}
	if wait > 0 {
		return nil, wait
	}
	if len(l.keys)+len(keys) > maxLimiterKeys {
		l.prune(now)
	}
	a := &loginAttempt{l: l}
	for _, k := range keys {
		st := l.keys[k]
		if st == nil {
			st = &limitState{}
			l.keys[k] = st
		}
		free := l.freeAddr
		if k.perUser {
			free = l.freeUser
		}
		c := charge{key: k, st: st, prev: st.until, clearOnWin: k.perUser}
		st.attempts++
		st.last = now
		if st.attempts >= free {
			st.until = now.Add(l.wait(st.attempts - free))
		}
		c.set = st.until
		a.charges = append(a.charges, c)
	}
	return a, 0
}

// wait is the wait after the n-th failure past the free ones (from 0):
// delay·2ⁿ, at most the ceiling.
func (l *loginLimiter) wait(n int) time.Duration {
	d := l.delay
	for range n {
		if d >= l.ceiling {
			break
		}
		d *= 2
	}
	return min(d, l.ceiling)
}

// forgotten reports whether a key has been quiet long enough to start
// afresh.
func (l *loginLimiter) forgotten(st *limitState, now time.Time) bool {
	quiet := st.last
	if st.until.After(quiet) {
		quiet = st.until
	}
	return now.Sub(quiet) >= l.forget
}

// prune drops forgotten keys, and if that is not enough, arbitrary ones.
func (l *loginLimiter) prune(now time.Time) {
	for k, st := range l.keys {
		if l.forgotten(st, now) {
			delete(l.keys, k)
		}
	}
	for k := range l.keys {
		if len(l.keys) < maxLimiterKeys/2 {
			break
		}
		delete(l.keys, k)
	}
}

// refund gives the attempt back: a failure that was not the client's
// (the site database) does not count. It undoes this attempt alone.
func (a *loginAttempt) refund() { a.settle(false) }

// succeeded gives the attempt back and clears the address-and-username
// key: whoever knows the password may log in again at once. The
// address's own failures stay, so a client that owns one account cannot
// wipe the guesses it made at others by logging in.
func (a *loginAttempt) succeeded() { a.settle(true) }

func (a *loginAttempt) settle(won bool) {
	a.l.mu.Lock()
	defer a.l.mu.Unlock()
	for _, c := range a.charges {
		if won && c.clearOnWin {
			if a.l.keys[c.key] == c.st {
				delete(a.l.keys, c.key)
			}
			continue
		}
		if c.st.attempts > 0 {
			c.st.attempts--
		}
		if c.st.until.Equal(c.set) {
			c.st.until = c.prev
		}
	}
}
