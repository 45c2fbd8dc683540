package mcp

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/t3agent/t3agent/internal/egress"
)

// MaxAnswerBytes caps the body of one HTTP answer (a JSON reply or a
// whole event stream).
const MaxAnswerBytes = 2 << 20

// closeTimeout bounds the DELETE that ends a session. It is cleanup after
// the operation, so it has its own short bound rather than the
// operation's deadline.
const closeTimeout = 2 * time.Second

var (
	errAnswerTooLarge = errors.New("the answer is larger than 2 MiB")
	errDeadlinePassed = errors.New("the operation's deadline has passed; nothing was sent")
)

// operation is one MCP operation (ping, import, call): its deadline,
// shared by every HTTP request it makes, and what the last answer looked
// like, so a failure can be explained without parsing SDK error strings.
// It travels in the context of every request of the operation.
type operation struct {
	deadline time.Time

	mu          sync.Mutex
	status      int    // of the last answer
	contentType string // media type of the last answer
	tooLarge    bool
	refused     error // a guard refusal
	requests    int
	late        int // requests refused because the deadline had passed
	// resumes counts the GETs with Last-Event-ID that resumed a dropped
	// answer stream, and resumeStatus is the last one's HTTP status (0:
	// no answer).
	resumes      int
	resumeStatus int
}

type operationKey struct{}

func withOperation(ctx context.Context, op *operation) context.Context {
	return context.WithValue(ctx, operationKey{}, op)
}

func operationFrom(ctx context.Context) *operation {
	op, _ := ctx.Value(operationKey{}).(*operation)
	return op
}

func (op *operation) answered(status int, contentType string) {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(contentType))
	}
	op.mu.Lock()
	defer op.mu.Unlock()
	op.status, op.contentType = status, mt
}

func (op *operation) resumed() (n, status int) {
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.resumes, op.resumeStatus
}

func (op *operation) snapshot() (status int, contentType string, tooLarge bool, refused error) {
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.status, op.contentType, op.tooLarge, op.refused
}

// httpClient builds the HTTP client one server's sessions use. Requests
// pass, outermost first: the operation's deadline and bookkeeping, the
// guard's URL check, the credential, then a transport that dials only
// through the guard. Redirects are never followed: the 3xx answer is
// returned as it is and fails the operation.
func (s *Service) httpClient(a auth) *http.Client {
	return &http.Client{
		Transport: &operationTransport{
			guard: s.guard,
			next:  &authTransport{auth: a, next: s.sendVia},
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// newBaseTransport is the connection pool shared by every server: it
// holds no credential (those are added per request), uses no proxy (a
// proxy would reach addresses the guard never saw) and dials through the
// guard.
func newBaseTransport(g *egress.Guard) *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           g.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

type operationTransport struct {
	guard *egress.Guard
	next  http.RoundTripper
}

func (t *operationTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	op := operationFrom(ctx)
	cancel := context.CancelFunc(func() {})
	switch {
	case req.Method == http.MethodDelete:
		ctx, cancel = context.WithTimeout(ctx, closeTimeout)
	case op != nil && !op.deadline.IsZero():
		// The SDK sends some requests (the cancellation notice after a
		// timeout) on a context without the deadline; the operation's
		// deadline binds them all the same.
		if time.Until(op.deadline) <= 0 {
			op.mu.Lock()
			op.late++
			op.mu.Unlock()
			closeBody(req)
			return nil, errDeadlinePassed
		}
		ctx, cancel = context.WithDeadline(ctx, op.deadline)
	}
	if _, err := t.guard.CheckURL(req.URL.String()); err != nil {
		cancel()
		closeBody(req)
		if op != nil {
			op.mu.Lock()
			op.refused = err
			op.mu.Unlock()
		}
		return nil, err
	}
	resuming := op != nil && req.Method == http.MethodGet && req.Header.Get("Last-Event-ID") != ""
	if resuming {
		op.mu.Lock()
		op.resumes++
		op.resumeStatus = 0
		op.mu.Unlock()
	}
	if op != nil && req.Method == http.MethodPost {
		// The last answer explains a failure; an earlier leg's (such as
		// the 400 a legacy server gives the discovery probe) must not.
		op.mu.Lock()
		op.requests++
		op.status, op.contentType = 0, ""
		op.mu.Unlock()
	}
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		var ge *egress.GuardError
		if op != nil && errors.As(err, &ge) {
			op.mu.Lock()
			op.refused = ge
			op.mu.Unlock()
		}
		return nil, err
	}
	if op != nil && req.Method == http.MethodPost {
		op.answered(resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resuming {
		op.mu.Lock()
		op.resumeStatus = resp.StatusCode
		op.mu.Unlock()
	}
	resp.Body = &cappedBody{rc: resp.Body, left: MaxAnswerBytes, op: op, cancel: cancel}
	return resp, nil
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// cappedBody fails a read once more than MaxAnswerBytes arrived, and ends
// the request's own deadline when closed.
type cappedBody struct {
	rc     io.ReadCloser
	left   int64
	op     *operation
	cancel context.CancelFunc
	once   sync.Once
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte past the cap tells "exactly 2 MiB" from "more".
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			if b.op != nil {
				b.op.mu.Lock()
				b.op.tooLarge = true
				b.op.mu.Unlock()
			}
			return 0, errAnswerTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *cappedBody) Close() error {
	err := b.rc.Close()
	b.once.Do(b.cancel)
	return err
}

// auth is how one server's credential is presented. Its String never
// shows the credential.
type auth struct {
	kind   AuthKind
	header string
	secret string
}

func (a auth) String() string { return "auth(" + string(a.kind) + ")" }

type authTransport struct {
	auth auth
	next http.RoundTripper
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.auth.secret == "" {
		return t.next.RoundTrip(req)
	}
	// A RoundTripper must not change the caller's request.
	r := req.Clone(req.Context())
	switch t.auth.kind {
	case AuthBearer:
		r.Header.Set("Authorization", "Bearer "+t.auth.secret)
	case AuthHeader:
		r.Header.Set(t.auth.header, t.auth.secret)
	}
	return t.next.RoundTrip(r)
}
