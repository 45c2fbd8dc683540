package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/chat"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/typo3"
)

// Site authenticates logins and loads the acting backend user afresh on
// every request, so a user disabled meanwhile stops acting at once;
// *typo3.Site implements it. It must be safe for concurrent use.
type Site interface {
	Authenticate(ctx context.Context, username, password string) (*typo3.BackendUser, error)
	BackendUserByName(ctx context.Context, username string) (*typo3.BackendUser, error)
}

// Runtime is what the API needs of the agent runtime; *agent.Runtime
// implements it. It decides who may see and act on which run. It must be
// safe for concurrent use.
type Runtime interface {
	Runs(ctx context.Context, actor *typo3.BackendUser, access agent.Access, p store.ListRunsParams) (agent.RunsPage, error)
	Events(ctx context.Context, actor *typo3.BackendUser, access agent.Access, id string, after int64) ([]store.RunEvent, error)
	Inbox(ctx context.Context, actor *typo3.BackendUser, access agent.Access) ([]agent.InboxItem, error)
	Pending(ctx context.Context, actor *typo3.BackendUser, access agent.Access, id string) (agent.InboxItem, error)
	Cancel(ctx context.Context, actor *typo3.BackendUser, access agent.Access, id string) (bool, error)
	Approve(ctx context.Context, p agent.ApproveParams) (agent.Result, error)
	SubmitInput(ctx context.Context, p agent.SubmitInputParams) (agent.Result, error)
}

// Configs resolves an agent configuration by identifier, for the tools
// routes' ?configuration=; *agentconfig.Service implements it. Safe for
// concurrent use.
type Configs interface {
	Resolve(ctx context.Context, identifier string) (*agentconfig.Resolved, error)
}

// API are the dependencies of the JSON API under /api/v1. Every field but
// the tunables is required, except Chat and Configs (see there).
type API struct {
	Site        Site
	Credentials store.Credentials
	Runtime     Runtime
	// Chat serves the chat routes; nil answers them 503 chatUnavailable.
	Chat Chat
	Gate *gate.Gate
	// Configs resolves ?configuration= on the tools routes; nil refuses it.
	Configs Configs
	// Ops serve usage, tokens, grants, settings and starting runs (ops.go).
	Ops *Ops
	// MCP manages the external MCP servers (routes_mcp.go); nil answers
	// those routes 404.
	MCP *mcp.Service
	// AgentConfig reads and applies the agent configuration
	// (routes_config.go); nil answers those routes 404.
	AgentConfig *agentconfig.Service

	// Now is the clock of sessions, tokens and the login limit; nil
	// means time.Now.
	Now func() time.Time
	// LoginFailures failed logins from one address for one username, and
	// LoginAddressFailures from one address for any, may follow each
	// other at once (defaults 5 and 20). After that each failure makes
	// the next attempt wait (429 with Retry-After): LoginDelay first,
	// twice as long after every further failure, at most LoginMaxDelay
	// (defaults 2 s and 15 min). A key is forgotten LoginForget after its
	// last attempt or wait (default 1 h, never less than LoginMaxDelay).
	// No limit spans addresses: guesses from elsewhere never lock a user
	// out.
	LoginFailures        int
	LoginAddressFailures int
	LoginDelay           time.Duration
	LoginMaxDelay        time.Duration
	LoginForget          time.Duration
	// TrustedProxies are the reverse proxies (load balancers) whose
	// X-Forwarded-For the login limit believes; without them every
	// client behind a proxy would share the proxy's address.
	TrustedProxies []netip.Prefix
	// SessionTTL is a login's lifetime (default 12 h).
	SessionTTL time.Duration
	// KeepAlive is the interval of a stream's keep-alive comment (default
	// 15 s); StreamPoll how often a stream re-reads its conversation, for
	// changes made by another process (default 2 s).
	KeepAlive  time.Duration
	StreamPoll time.Duration
	// StreamAuthCheck is how often a stream checks that its session or
	// token is still live and its user may still act (default 5 s); a
	// logout in this process ends its streams at once.
	StreamAuthCheck time.Duration
	// MaxBody bounds a request body (default 1 MiB).
	MaxBody int64
}

// Defaults of API.
const (
	DefaultLoginFailures        = 5
	DefaultLoginAddressFailures = 20
	DefaultLoginDelay           = 2 * time.Second
	DefaultLoginMaxDelay        = 15 * time.Minute
	DefaultLoginForget          = time.Hour
	DefaultSessionTTL           = 12 * time.Hour
	DefaultKeepAlive            = 15 * time.Second
	DefaultStreamPoll           = 2 * time.Second
	DefaultStreamAuthCheck      = 5 * time.Second
	DefaultMaxBody              = 1 << 20
)

func (a *API) withDefaults() {
	if a.Now == nil {
		a.Now = time.Now
	}
	if a.LoginFailures <= 0 {
		a.LoginFailures = DefaultLoginFailures
	}
	if a.LoginAddressFailures <= 0 {
		a.LoginAddressFailures = DefaultLoginAddressFailures
	}
	if a.LoginDelay <= 0 {
		a.LoginDelay = DefaultLoginDelay
	}
	if a.LoginMaxDelay <= 0 {
		a.LoginMaxDelay = DefaultLoginMaxDelay
	}
	if a.LoginForget <= 0 {
		a.LoginForget = DefaultLoginForget
	}
	if a.SessionTTL <= 0 {
		a.SessionTTL = DefaultSessionTTL
	}
	if a.KeepAlive <= 0 {
		a.KeepAlive = DefaultKeepAlive
	}
	if a.StreamPoll <= 0 {
		a.StreamPoll = DefaultStreamPoll
	}
	if a.StreamAuthCheck <= 0 {
		a.StreamAuthCheck = DefaultStreamAuthCheck
	}
	if a.MaxBody <= 0 {
		a.MaxBody = DefaultMaxBody
	}
}

// who says which credentials a route takes.
type who int

const (
	// public routes take none.
	public who = iota
	// anyone logged in: a person's session, or a service token holding one
	// of the route's scopes.
	anyone
	// person routes take sessions only: the chat belongs to people.
	person
)

// route is one API route. The table of routes is what the server
// registers and what the OpenAPI document is checked against.
type route struct {
	pattern string // "METHOD /api/v1/…", as http.ServeMux takes it
	who     who
	// scopes: a service token needs one of them (ScopeAdmin implies all).
	// A person's rights are decided per run by the runtime.
	scopes []store.Scope
	h      func(w http.ResponseWriter, r *http.Request, c *caller)
}

// caller is who sends a request: the backend user, loaded afresh, and how
// they reached the API.
type caller struct {
	user *typo3.BackendUser
	// access is the service token acting; zero for a person.
	access agent.Access
	// session is the person's login; nil for a token.
	session *store.WebSession
	// tokenHash is the service token's hash, to check it again; empty
	// for a person.
	tokenHash string
}

const apiPrefix = "/api/v1"

func (s *Server) apiRoutes() []route {
	read := []store.Scope{store.ScopeAgentRead}
	base := []route{
		{"POST /api/v1/login", public, nil, s.login},
		{"POST /api/v1/logout", person, nil, s.logout},
		{"GET /api/v1/me", anyone, nil, s.me},
		{"GET /api/v1/labels", public, nil, s.labelsRoute},
		{"GET /api/v1/openapi.json", public, nil, s.openAPI},

		{"GET /api/v1/chat/status", person, nil, s.chatStatus},
		{"GET /api/v1/chat/conversations", person, nil, s.chatList},
		{"POST /api/v1/chat/conversations", person, nil, s.chatCreate},
		{"GET /api/v1/chat/conversations/{id}", person, nil, s.chatShow},
		{"PATCH /api/v1/chat/conversations/{id}", person, nil, s.chatRename},
		{"GET /api/v1/chat/conversations/{id}/messages", person, nil, s.chatMessages},
		{"POST /api/v1/chat/conversations/{id}/messages", person, nil, s.chatSend},
		{"PUT /api/v1/chat/conversations/{id}/messages/{seq}", person, nil, s.chatEdit},
		{"POST /api/v1/chat/conversations/{id}/retry", person, nil, s.chatRetry},
		{"POST /api/v1/chat/conversations/{id}/approve", person, nil, s.chatDecide(true)},
		{"POST /api/v1/chat/conversations/{id}/deny", person, nil, s.chatDecide(false)},
		{"POST /api/v1/chat/conversations/{id}/input", person, nil, s.chatInput},
		{"POST /api/v1/chat/conversations/{id}/archive", person, nil, s.chatArchive},
		{"POST /api/v1/chat/conversations/{id}/pin", person, nil, s.chatPin},
		{"GET /api/v1/chat/conversations/{id}/stream", person, nil, s.chatStream},

		{"GET /api/v1/runs", anyone, read, s.runsList},
		{"GET /api/v1/runs/{id}", anyone, read, s.runShow},
		{"GET /api/v1/runs/{id}/events", anyone, read, s.runEvents},
		{"POST /api/v1/runs/{id}/approve", anyone, []store.Scope{store.ScopeAgentApprove}, s.runDecide(true)},
		{"POST /api/v1/runs/{id}/deny", anyone, []store.Scope{store.ScopeAgentApprove}, s.runDecide(false)},
		{"POST /api/v1/runs/{id}/input", anyone, []store.Scope{store.ScopeAgentApprove}, s.runInput},
		{"POST /api/v1/runs/{id}/cancel", anyone, []store.Scope{store.ScopeAgentCancel}, s.runCancel},
		// A decider must see what it decides, so agent:approve reads the
		// inbox too (the runtime's rule).
		{"GET /api/v1/inbox", anyone, []store.Scope{store.ScopeAgentRead, store.ScopeAgentApprove}, s.inbox},

		{"GET /api/v1/tools", anyone, read, s.toolsList},
		{"GET /api/v1/tools/{name}/explain", anyone, read, s.toolExplain},
	}
	// The admin pages' API: tool availability and calls, MCP servers,
	// the agent configuration.
	return slices.Concat(base, s.opsRoutes(), s.toolAdminRoutes(), s.mcpRoutes(), s.configRoutes())
}

// registerAPI registers the API routes, each counted in the route
// metrics under its pattern, and a JSON fallback for unknown API paths.
func (s *Server) registerAPI() {
	s.api.withDefaults()
	s.limiter = newLoginLimiter(s.api.Now, limitParams{
		freeUser: s.api.LoginFailures, freeAddr: s.api.LoginAddressFailures,
		delay: s.api.LoginDelay, ceiling: s.api.LoginMaxDelay, forget: s.api.LoginForget,
	})
	for _, rt := range s.apiRoutes() {
		s.handle(rt.pattern, s.wrap(rt))
	}
	s.handle(apiPrefix+"/", s.apiFallback)
}

// wrap applies to one route what every API route does: no caching, a
// bounded body, the input check of the path and query (input.go), the
// caller's credentials, CSRF for sessions and the
// route's scopes for tokens.
func (s *Server) wrap(rt route) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		r.Body = http.MaxBytesReader(w, r.Body, s.api.MaxBody)
		if err := checkRequestText(r); err != nil {
			s.fail(w, r, err)
			return
		}
		if rt.who == public {
			rt.h(w, r, nil)
			return
		}
		c, err := s.authenticate(r)
		if err != nil {
			if errors.Is(err, errNoSession) {
				s.expireCookie(w, r)
			}
			s.fail(w, r, err)
			return
		}
		switch {
		case c.session == nil && rt.who == person:
			s.fail(w, r, apiErr(http.StatusForbidden, "sessionRequired", nil))
			return
		case c.session == nil && len(rt.scopes) > 0 && !slices.ContainsFunc(rt.scopes, c.access.Has):
			s.fail(w, r, apiErr(http.StatusForbidden, "insufficientScope", fmt.Errorf("token %s lacks %v", c.access.Token, rt.scopes)))
			return
		case c.session != nil && !safeMethod(r.Method) && !s.csrfOK(r, c.session):
			s.fail(w, r, apiErr(http.StatusForbidden, "csrfFailed", nil))
			return
		}
		rt.h(w, r, c)
	}
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// apiFallback answers unknown API paths in JSON: 405 with Allow when the
// path exists under other methods, else 404.
func (s *Server) apiFallback(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if m == r.Method {
			continue
		}
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "" && pattern != apiPrefix+"/" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		s.fail(w, r, apiErr(http.StatusMethodNotAllowed, "methodNotAllowed", nil))
		return
	}
	s.fail(w, r, apiErr(http.StatusNotFound, "notFound", nil))
}

// apiError is a refusal with a code for the client; cause goes only to
// the log.
type apiError struct {
	status int
	code   string
	// msg replaces the code's English label when the client needs the
	// detail (which parameter is wrong); it must be public-safe.
	msg   string
	cause error
}

func (e *apiError) Error() string {
	if e.cause != nil {
		return e.code + ": " + e.cause.Error()
	}
	return e.code
}

func (e *apiError) Unwrap() error { return e.cause }

func apiErr(status int, code string, cause error) *apiError {
	return &apiError{status: status, code: code, cause: cause}
}

// badRequest is a 400 whose message says, in one sentence, what is wrong.
func badRequest(msg string) *apiError {
	return &apiError{status: http.StatusBadRequest, code: "badRequest", msg: msg}
}

// errorBody is every error's JSON.
type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// refusalCodes map the runtime's refusals to API codes and statuses.
var refusalCodes = map[agent.RefusalCode]struct {
	status int
	code   string
}{
	agent.RefusedNotWaiting:           {http.StatusConflict, "runNotWaiting"},
	agent.RefusedAccessDenied:         {http.StatusForbidden, "runAccessDenied"},
	agent.RefusedConfigurationGone:    {http.StatusConflict, "configurationGone"},
	agent.RefusedOwnerCannotAct:       {http.StatusConflict, "ownerCannotAct"},
	agent.RefusedSelfApproval:         {http.StatusForbidden, "selfApprovalDenied"},
	agent.RefusedCorruptState:         {http.StatusConflict, "corruptSuspendedState"},
	agent.RefusedStateUnavailable:     {http.StatusConflict, "stateUnavailable"},
	agent.RefusedInvalidInput:         {http.StatusUnprocessableEntity, "invalidInput"},
	agent.RefusedAlreadyResuming:      {http.StatusConflict, "runAlreadyResuming"},
	agent.RefusedStaleTurn:            {http.StatusConflict, "staleTurn"},
	agent.RefusedApproverNotPermitted: {http.StatusForbidden, "approverNotPermitted"},
	agent.RefusedNotAuditable:         {http.StatusConflict, "approvalNotAuditable"},
	agent.RefusedToolUnavailable:      {http.StatusConflict, "toolUnavailable"},
}

// classify turns an error into the client's status and body. Anything
// unknown is a public-safe 500.
func classify(err error) (int, errorBody) {
	var ae *apiError
	var ce *chat.Error
	var re *agent.RefusedError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &ae):
		msg := ae.msg
		if msg == "" {
			msg = message(ae.code)
		}
		return ae.status, errorBody{ae.code, msg}
	case errors.As(err, &mbe):
		return http.StatusRequestEntityTooLarge, errorBody{"bodyTooLarge", message("bodyTooLarge")}
	case errors.As(err, &ce):
		status := ce.Status
		if status < 400 || status > 599 {
			status = http.StatusConflict
		}
		return status, errorBody{string(ce.Code), message(string(ce.Code))}
	case errors.As(err, &re):
		m, ok := refusalCodes[re.Code]
		if !ok {
			m.status, m.code = http.StatusConflict, "decisionRefused"
		}
		return m.status, errorBody{m.code, message(m.code)}
	case errors.Is(err, agent.ErrAccessDenied):
		return http.StatusForbidden, errorBody{"runAccessDenied", message("runAccessDenied")}
	}
	if status, body, ok := classifyAdmin(err); ok {
		return status, body
	}
	return http.StatusInternalServerError, errorBody{"internal", message("internal")}
}

// fail answers err as JSON; the cause goes to the log only (refusals at
// debug, failures at error).
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, body := classify(err)
	if status >= 500 {
		s.p.Logger.Error("api request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	} else {
		s.p.Logger.Debug("api request refused", "method", r.Method, "path", r.URL.Path, "status", status, "code", body.Code, "err", err)
	}
	writeJSON(w, status, body)
}

// jsonEncoder writes JSON as it is: the API answers JSON, never HTML,
// so escaping <, > and & would only garble content.
func jsonEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}

// writeJSON answers v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	if err := jsonEncoder(&buf).Encode(v); err != nil {
		// Our own values always encode; this is a programming error.
		status = http.StatusInternalServerError
		buf.Reset()
		_ = json.NewEncoder(&buf).Encode(errorBody{"internal", message("internal")})
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// decode reads a JSON object body into dst. It refuses a non-JSON content
// type, unknown fields and trailing data, each with one sentence; a body
// over the limit is 413. optional lets an empty body stand for {}.
func decode(r *http.Request, dst any, optional bool) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return apiErr(http.StatusUnsupportedMediaType, "unsupportedMediaType", nil)
		}
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return apiErr(http.StatusRequestEntityTooLarge, "bodyTooLarge", err)
		}
		return badRequest("The request body could not be read.")
	}
	if len(bytes.TrimSpace(b)) == 0 {
		if optional {
			return nil
		}
		return badRequest("The request body must be a JSON object.")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te) && te.Field != "":
			return badRequest(fmt.Sprintf("The field %q has the wrong type.", te.Field))
		case errors.As(err, &te):
			return badRequest("The request body must be a JSON object.")
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			return badRequest("The request body has an unknown field " + strings.TrimPrefix(err.Error(), "json: unknown field ") + ".")
		}
		return badRequest("The request body is not valid JSON.")
	}
	if dec.More() {
		return badRequest("The request body must hold one JSON object only.")
	}
	return checkBodyText(b)
}

// pathID parses the {id} of a conversation route.
func pathID(r *http.Request, name string) (int64, error) {
	v, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	if err != nil || v <= 0 {
		return 0, badRequest(fmt.Sprintf("The %s in the path must be a positive whole number.", name))
	}
	return v, nil
}

// queryInt parses an optional whole-number query parameter within
// [min, max]; def when absent.
func queryInt(r *http.Request, name string, def, lo, hi int64) (int64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, badRequest(fmt.Sprintf("The query parameter %s must be a whole number from %d to %d.", name, lo, hi))
	}
	return n, nil
}

// queryBool parses an optional true/false query parameter.
func queryBool(r *http.Request, name string) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, badRequest(fmt.Sprintf("The query parameter %s must be true or false.", name))
	}
	return b, nil
}
