package mcp

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/t3agent/t3agent/internal/egress"
	"github.com/t3agent/t3agent/internal/secret"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tracing"
)

// DefaultTimeout is the deadline of one MCP operation, shared by all its
// HTTP requests (SPEC §3).
const DefaultTimeout = 20 * time.Second

// DefaultRecheck is how long a registered tool calls on its declaration
// without comparing it with the store (Params.Recheck).
const DefaultRecheck = time.Second

// resumeAttempts is how often a dropped answer stream is resumed without
// progress before the operation fails.
const resumeAttempts = 3

// Store is what the MCP client needs from the store.
type Store interface {
	store.MCPCatalogue
}

// Params configure New.
type Params struct {
	// Store holds the servers and the catalogue; required.
	Store Store
	// Keyring seals and opens credentials. Without one, servers without a
	// credential work and a credential can be neither stored nor used.
	Keyring *secret.Keyring
	// Logger receives failures (with causes, never credentials); nil
	// means slog.Default().
	Logger *slog.Logger
	// Timeout is the deadline of one operation; ≤ 0 means DefaultTimeout.
	Timeout time.Duration
	// AllowedHosts is the guard's optional allow-list (see egress.Guard).
	AllowedHosts []string
	// ClientVersion is reported to servers in the handshake.
	ClientVersion string
	// Recheck bounds how long a registered tool trusts the declaration it
	// last read: a change made through this Service is seen by the next
	// call, one made elsewhere (another process) by the first call after
	// Recheck. ≤ 0 means DefaultRecheck.
	Recheck time.Duration
	// TracerProvider makes a client span of every tools/call, and of its
	// HTTP requests, which carry the W3C trace context to the server; nil
	// makes none.
	TracerProvider trace.TracerProvider
	// OAuth authorizes the requests of servers that use OAuth 2.1 (package
	// mcpauth); nil means no server does.
	OAuth OAuthSource
}

// OAuthSource supplies the OAuth 2.1 handler of a server's requests. It
// must be safe for concurrent use.
type OAuthSource interface {
	// Handler returns the handler for the server's requests, or nil when
	// the server does not use OAuth. It returns the same handler while the
	// server's grant is unchanged, so a pooled session is kept, and a new
	// one after a new login, which replaces the session. An error that
	// wraps ErrNeedsLogin means a person must log in first.
	Handler(ctx context.Context, server string) (sdkauth.OAuthHandler, error)
}

// Service is t3agent's MCP client: it keeps the server records, imports
// catalogues, pings servers, runs remote calls and supplies the
// catalogue's tools to the registry (Provider).
//
// A Service is safe for concurrent use. It keeps one pooled session per
// server, keyed by the server's URL and credential and replaced when
// either changes; sessions are never shared between servers. Close ends
// the pooled sessions and must be called once the Service is done.
type Service struct {
	st        Store
	keys      *secret.Keyring
	log       *slog.Logger
	timeout   time.Duration
	guard     *egress.Guard
	transport *http.Transport
	version   string
	recheck   time.Duration
	pool      pool
	health    healthWriter
	changes   changes
	tracer    trace.Tracer
	oauth     OAuthSource
	// sendVia is what requests go through on their way to transport: the
	// tracing transport, or transport itself.
	sendVia http.RoundTripper
}

// New returns a Service.
func New(p Params) (*Service, error) {
	if p.Store == nil {
		return nil, errors.New("mcp: a store is required")
	}
	g, err := egress.NewGuard(egress.GuardParams{AllowedHosts: p.AllowedHosts, ListName: "MCP host allow-list"})
	if err != nil {
		return nil, err
	}
	s := &Service{st: p.Store, keys: p.Keyring, log: p.Logger, timeout: p.Timeout, guard: g, version: p.ClientVersion, oauth: p.OAuth}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.timeout <= 0 {
		s.timeout = DefaultTimeout
	}
	if s.version == "" {
		s.version = "dev"
	}
	s.recheck = p.Recheck
	if s.recheck <= 0 {
		s.recheck = DefaultRecheck
	}
	s.transport = newBaseTransport(g)
	s.tracer = tracing.Tracer(p.TracerProvider)
	s.sendVia = tracing.Transport(s.transport, p.TracerProvider)
	s.pool.svc = s
	s.health = healthWriter{st: p.Store, every: contactEvery, log: func(ctx context.Context, id string, err error) {
		s.log.WarnContext(ctx, "MCP contact not recorded", "server", id, "error", err.Error())
	}}
	return s, nil
}

// Close stores pending health records and ends every pooled session and
// idle connection. The Service must not be used afterwards.
func (s *Service) Close() error {
	err := s.Flush(context.Background())
	s.health.stop()
	s.pool.closeAll()
	s.transport.CloseIdleConnections()
	return err
}

// Flush stores the contact of every call made so far and waits until it
// is stored. Calls record their contact in the background, at most once
// a second per server, so a reader that must see it (a test, a
// shutdown) flushes first.
func (s *Service) Flush(ctx context.Context) error { return s.health.flush(ctx) }

// Timeout is the deadline of one operation.
func (s *Service) Timeout() time.Duration { return s.timeout }

// begin starts an operation: one deadline (the Service's timeout, or the
// caller's if that is sooner) for every request it makes.
func (s *Service) begin(ctx context.Context) (context.Context, *operation, time.Duration, context.CancelFunc) {
	return s.beginFor(ctx, s.timeout)
}

// beginFor is begin with another budget than the Service's timeout.
func (s *Service) beginFor(ctx context.Context, budget time.Duration) (context.Context, *operation, time.Duration, context.CancelFunc) {
	deadline := time.Now().Add(budget)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
		budget = max(time.Until(d).Round(time.Millisecond), 0)
	}
	op := &operation{deadline: deadline}
	ctx, cancel := context.WithDeadline(withOperation(ctx, op), deadline)
	return ctx, op, budget, cancel
}

// target is a server as one operation reaches it.
type target struct {
	id    string // server identifier, or the host of a URL diagnostic
	url   string
	auth  auth
	oauth sdkauth.OAuthHandler // nil unless the server uses OAuth
}

// targetOf checks a server's URL and opens its credential (or asks for
// its OAuth handler). Nothing is sent yet.
func (s *Service) targetOf(ctx context.Context, r store.MCPServer) (target, error) {
	if _, err := s.guard.CheckURL(r.URL); err != nil {
		return target{}, opError(r.Identifier, KindRefused, "the MCP server %q cannot be reached: %s", r.Identifier, err.Error())
	}
	t := target{id: r.Identifier, url: r.URL, auth: auth{kind: AuthKind(r.AuthKind), header: r.AuthHeader}}
	if s.oauth != nil {
		h, err := s.oauth.Handler(ctx, r.Identifier)
		if err != nil {
			if errors.Is(err, ErrNeedsLogin) {
				return target{}, classify(ctx, r.Identifier, &operation{}, s.timeout, err)
			}
			return target{}, opError(r.Identifier, KindCredential, "the OAuth grant of MCP server %q cannot be used", r.Identifier)
		}
		t.oauth = h
	}
	if r.SealedCredential == "" {
		if t.auth.kind != AuthNone {
			return target{}, opError(r.Identifier, KindCredential, "the MCP server %q has no credential stored for its %s auth", r.Identifier, r.AuthKind)
		}
		return t, nil
	}
	if s.keys == nil {
		return target{}, opError(r.Identifier, KindCredential, "the credential of MCP server %q cannot be opened: no master key is configured", r.Identifier)
	}
	plain, err := s.keys.Open(r.SealedCredential, sealedFor(r.Identifier))
	if err != nil {
		return target{}, opError(r.Identifier, KindCredential, "the credential of MCP server %q cannot be opened (wrong master key or corrupt value)", r.Identifier)
	}
	t.auth.secret = string(plain)
	return t, nil
}

// urlTarget is a target for a URL diagnostic: no record, no credential.
func (s *Service) urlTarget(raw string) (target, error) {
	u, err := s.guard.CheckURL(raw)
	if err != nil {
		return target{}, opError("url", KindRefused, "the MCP server URL is refused: %s", err.Error())
	}
	return target{id: u.Host, url: raw, auth: auth{kind: AuthNone}}, nil
}

// resolveCheck runs the guard's full check (with DNS) on a target before
// any request, and so before any credential is attached.
func (s *Service) resolveCheck(ctx context.Context, t target) error {
	u, err := url.Parse(t.url)
	if err != nil {
		return opError(t.id, KindRefused, "the MCP server %q cannot be reached: the URL cannot be parsed", t.id)
	}
	if err := s.guard.Check(ctx, u); err != nil {
		var ge *egress.GuardError
		if errors.As(err, &ge) {
			return opError(t.id, KindRefused, "the MCP server %q cannot be reached: %s", t.id, ge.Error())
		}
		if ctx.Err() != nil {
			return err
		}
		return opError(t.id, KindUnreachable, "the MCP server %q cannot be reached: %s", t.id, remoteText(err.Error(), 200))
	}
	return nil
}

// session is a client session with what its handlers know of the
// calls open on it.
type session struct {
	*sdk.ClientSession
	calls *calls
}

// connect opens a session with the handshake the SDK negotiates, under
// ctx's deadline. The client declares only what it implements:
// elicitation, in form and URL mode (see the package doc on questions);
// every other request of a server is refused at once (refuseUnsupported).
// A dropped answer stream is resumed (GET with Last-Event-ID, after the
// delay the server's retry field asks for) up to resumeAttempts times
// without progress, within the operation's deadline.
func (s *Service) connect(ctx context.Context, t target) (*session, error) {
	open := &calls{}
	client := sdk.NewClient(&sdk.Implementation{Name: "t3agent", Version: s.version}, &sdk.ClientOptions{
		Capabilities: &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{
			Form: &sdk.FormElicitationCapabilities{}, URL: &sdk.URLElicitationCapabilities{},
		}},
		ElicitationHandler: open.elicit,
		// input_required results come back to the caller, which asks a
		// person instead of answering at once.
		MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true},
		// The SDK's own logging stays off: its messages may quote remote
		// data; failures are reported by classify instead.
		Logger: slog.New(slog.DiscardHandler),
	})
	client.AddReceivingMiddleware(refuseUnsupported)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint:             t.url,
		HTTPClient:           s.httpClient(t.auth),
		OAuthHandler:         t.oauth,
		MaxRetries:           resumeAttempts,
		DisableStandaloneSSE: true,
		MaxEventSize:         MaxAnswerBytes,
	}, nil)
	if err != nil {
		return nil, err
	}
	return &session{ClientSession: cs, calls: open}, nil
}

// dial runs the guard's full check and then connects: a pooled session
// is opened only to a server whose addresses passed. Calls on it need no
// check of their own, since every new connection dials through the
// guard.
func (s *Service) dial(ctx context.Context, t target) (*session, error) {
	if err := s.resolveCheck(ctx, t); err != nil {
		return nil, err
	}
	return s.connect(ctx, t)
}

// changes tells registered tools that their server was changed through
// the Service since they last read it (remoteTool.declaration).
type changes struct {
	mu    sync.Mutex
	n     uint64                    // the epoch: one more for every change
	marks map[string]*atomic.Uint64 // per server: the epoch of its last change
}

func (c *changes) epoch() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// mark is the server's change epoch, shared by all its tools.
func (c *changes) mark(id string) *atomic.Uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.markLocked(id)
}

func (c *changes) markLocked(id string) *atomic.Uint64 {
	if c.marks == nil {
		c.marks = map[string]*atomic.Uint64{}
	}
	m := c.marks[id]
	if m == nil {
		m = new(atomic.Uint64)
		c.marks[id] = m
	}
	return m
}

// changed records a change of the server, after it was stored.
func (c *changes) changed(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	c.markLocked(id).Store(c.n)
}

// fail classifies err, logs it with its redacted cause and returns the
// public error.
func (s *Service) fail(ctx context.Context, what string, t target, op *operation, budget time.Duration, err error) *Error {
	e := classify(ctx, t.id, op, budget, err)
	s.log.WarnContext(ctx, "MCP "+what+" failed", "server", t.id, "kind", string(e.Kind), "error", e.Error(), "cause", redact(err, t.url))
	return e
}

// contact records a successful operation; a failure to record is logged
// only, since the operation itself succeeded.
func (s *Service) contact(ctx context.Context, id string, latency time.Duration) {
	if err := s.st.RecordMCPContact(context.WithoutCancel(ctx), store.RecordMCPContactParams{Identifier: id, Latency: latency}); err != nil {
		s.log.WarnContext(ctx, "MCP contact not recorded", "server", id, "error", err.Error())
	}
}

// PingResult is what a ping learned.
type PingResult struct {
	Server          string        `json:"server"`
	ProtocolVersion string        `json:"protocolVersion"`
	ServerName      string        `json:"serverName"`
	ServerVersion   string        `json:"serverVersion"`
	Latency         time.Duration `json:"latencyNs"`
}

// Ping performs the handshake with a configured server, without
// importing, and records the contact on success. It needs no data class.
func (s *Service) Ping(ctx context.Context, identifier string) (PingResult, error) {
	r, err := s.st.MCPServer(ctx, identifier)
	if err != nil {
		return PingResult{}, err
	}
	t, err := s.targetOf(ctx, r)
	if err != nil {
		return PingResult{}, err
	}
	res, err := s.ping(ctx, t)
	if err == nil {
		s.contact(ctx, identifier, res.Latency)
	}
	return res, err
}

// PingURL performs the handshake with a server that is not configured,
// without a credential. Nothing is recorded.
func (s *Service) PingURL(ctx context.Context, rawURL string) (PingResult, error) {
	t, err := s.urlTarget(rawURL)
	if err != nil {
		return PingResult{}, err
	}
	return s.ping(ctx, t)
}

func (s *Service) ping(ctx context.Context, t target) (PingResult, error) {
	ctx, op, budget, cancel := s.begin(ctx)
	defer cancel()
	if err := s.resolveCheck(ctx, t); err != nil {
		return PingResult{}, s.fail(ctx, "ping", t, op, budget, err)
	}
	start := time.Now()
	cs, err := s.connect(ctx, t)
	if err != nil {
		return PingResult{}, s.fail(ctx, "ping", t, op, budget, err)
	}
	latency := time.Since(start)
	defer cs.Close()
	return pingResult(t, cs.ClientSession, latency), nil
}

// pingResult is what the handshake of cs told about the server.
func pingResult(t target, cs *sdk.ClientSession, latency time.Duration) PingResult {
	res := PingResult{Server: t.id, Latency: latency}
	if init := cs.InitializeResult(); init != nil {
		res.ProtocolVersion = remoteText(init.ProtocolVersion, 100)
		if init.ServerInfo != nil {
			res.ServerName = remoteText(init.ServerInfo.Name, 100)
			res.ServerVersion = remoteText(init.ServerInfo.Version, 100)
		}
	}
	return res
}

// pool keeps one session per server identifier.
type pool struct {
	svc     *Service
	mu      sync.Mutex
	entries map[string]*pooled
}

// pooled is one server's session; ready closes once connecting ended
// (with session or err set).
type pooled struct {
	url     string
	auth    auth
	oauth   sdkauth.OAuthHandler
	ready   chan struct{}
	session *session
	err     error
}

// session returns the pooled session for t, connecting (under ctx's
// deadline) when there is none or when the server's URL or credential
// changed since it was opened. Callers that arrive while another
// connects wait for that connect; if it fails, they try once themselves.
func (p *pool) session(ctx context.Context, t target) (*session, error) {
	for attempt := 0; ; attempt++ {
		e, mine := p.entry(t)
		if mine {
			e.session, e.err = p.svc.dial(ctx, t)
			if e.err != nil {
				p.drop(t.id, e)
			}
			close(e.ready)
			return e.session, e.err
		}
		select {
		case <-e.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if e.err == nil {
			return e.session, nil
		}
		if attempt > 0 {
			return nil, e.err
		}
	}
}

// entry returns the server's entry, making one (mine) when there is none
// or the one there is stale; a stale entry is closed.
func (p *pool) entry(t target) (e *pooled, mine bool) {
	p.mu.Lock()
	if p.entries == nil {
		p.entries = map[string]*pooled{}
	}
	e = p.entries[t.id]
	var stale *pooled
	if e != nil && (e.url != t.url || e.auth != t.auth || e.oauth != t.oauth) {
		stale, e = e, nil
	}
	if e == nil {
		e, mine = &pooled{url: t.url, auth: t.auth, oauth: t.oauth, ready: make(chan struct{})}, true
		p.entries[t.id] = e
	}
	p.mu.Unlock()
	if stale != nil {
		stale.close()
	}
	return e, mine
}

// drop forgets e if it is still the server's entry.
func (p *pool) drop(id string, e *pooled) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.entries[id] == e {
		delete(p.entries, id)
	}
}

// invalidate drops and closes the server's session if it is still cs,
// after a failure that may have broken it.
func (p *pool) invalidate(id string, cs *session) {
	p.mu.Lock()
	e := p.entries[id]
	if e == nil || e.session != cs {
		p.mu.Unlock()
		return
	}
	delete(p.entries, id)
	p.mu.Unlock()
	e.close()
}

// retire drops and closes the server's session, whatever it is.
func (p *pool) retire(id string) {
	p.mu.Lock()
	e := p.entries[id]
	delete(p.entries, id)
	p.mu.Unlock()
	if e != nil {
		e.close()
	}
}

func (p *pool) closeAll() {
	p.mu.Lock()
	all := p.entries
	p.entries = nil
	p.mu.Unlock()
	for _, e := range all {
		e.close()
	}
}

// close ends the session once connecting finished.
func (e *pooled) close() {
	<-e.ready
	if e.session != nil {
		_ = e.session.Close()
	}
}
