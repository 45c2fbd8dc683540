package mcp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/t3agent/t3agent/internal/egress"
)

// Kind classifies why an MCP operation failed.
type Kind string

const (
	KindRefused        Kind = "refused"          // the guard refused the URL or an address
	KindUnreachable    Kind = "unreachable"      // no connection could be made
	KindTimeout        Kind = "timeout"          // the operation's deadline passed
	KindHTTPStatus     Kind = "http_status"      // an answer with a status other than 2xx
	KindRedirect       Kind = "redirect"         // a 3xx answer; redirects are not followed
	KindUnauthorized   Kind = "unauthorized"     // 401 or 403
	KindRPCError       Kind = "rpc_error"        // a JSON-RPC error object
	KindContentType    Kind = "content_type"     // neither JSON nor an event stream
	KindTooLarge       Kind = "too_large"        // more than MaxAnswerBytes
	KindMalformed      Kind = "malformed"        // an answer that is not a usable MCP answer
	KindStreamLost     Kind = "stream_lost"      // the answer stream ended early and could not be resumed
	KindCredential     Kind = "credential"       // the stored credential cannot be opened
	KindBudget         Kind = "budget_exhausted" // no remote calls left in this run segment
	KindNotAvailable   Kind = "not_available"    // server missing, disabled, inert or changed
	KindTooManyTools   Kind = "too_many_tools"   // an import over the caps
	KindCanceled       Kind = "canceled"         // the caller's context ended
	KindNotImported    Kind = "not_imported"     // a tool the catalogue does not hold
	KindInvalidRequest Kind = "invalid_request"  // bad parameters from our own caller
	KindNeedsLogin     Kind = "needs_login"      // the server's OAuth grant is missing, revoked or expired
)

// Error is a failed MCP operation. Its message is one sentence safe to
// show to a person or a model: it names the server and what went wrong,
// quotes remote text only control-stripped and bounded, and never holds a
// credential, a header or the raw cause.
type Error struct {
	Server string // identifier, or the host for a URL-only diagnostic
	Kind   Kind
	msg    string
}

func (e *Error) Error() string { return e.msg }

func opError(server string, kind Kind, format string, args ...any) *Error {
	return &Error{Server: server, Kind: kind, msg: fmt.Sprintf(format, args...)}
}

// ErrNeedsLogin is wrapped by an OAuthSource's errors when a server's
// OAuth grant is missing, revoked or expired and only a person logging in
// again can mend it: the call fails at once with KindNeedsLogin.
var ErrNeedsLogin = errors.New("the OAuth grant needs a new login")

// KindOf returns the Kind of an *Error in err's chain, or "".
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}

// classify explains why an operation on server failed, from what its
// requests saw first and the SDK's error second. ctx is the operation's
// context (with its deadline).
func classify(ctx context.Context, server string, op *operation, timeout time.Duration, err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	who := fmt.Sprintf("the MCP server %q", server)
	if errors.Is(err, ErrNeedsLogin) {
		return opError(server, KindNeedsLogin, "%s needs login: its OAuth grant is missing, revoked or expired (t3agent mcp login %s)", who, server)
	}
	status, contentType, tooLarge, refused := op.snapshot()
	var ge *egress.GuardError
	switch {
	case refused != nil:
		return opError(server, KindRefused, "%s cannot be reached: %s", who, refused.Error())
	case errors.As(err, &ge):
		return opError(server, KindRefused, "%s cannot be reached: %s", who, ge.Error())
	case tooLarge || errors.Is(err, errAnswerTooLarge):
		return opError(server, KindTooLarge, "%s sent an answer larger than %d MiB", who, MaxAnswerBytes>>20)
	case status >= 300 && status < 400:
		return opError(server, KindRedirect, "%s answered with a redirect (HTTP %d); redirects are not followed", who, status)
	case status == 401 || status == 403:
		return opError(server, KindUnauthorized, "%s refused the request (HTTP %d); check its credential", who, status)
	case status >= 400 || (status > 0 && status < 200):
		return opError(server, KindHTTPStatus, "%s answered with HTTP status %d", who, status)
	}
	resumes, resumeStatus := op.resumed()
	switch {
	case errors.Is(err, errDeadlinePassed) || errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) ||
		// The requests' own timers (same deadline) may fire first.
		!op.deadline.IsZero() && !time.Now().Before(op.deadline):
		if resumes > 0 {
			return opError(server, KindTimeout, "%s dropped its answer stream and did not finish it within %s (%d resume attempt(s))", who, timeout, resumes)
		}
		return opError(server, KindTimeout, "%s did not answer within %s", who, timeout)
	case errors.Is(ctx.Err(), context.Canceled):
		return opError(server, KindCanceled, "the request to %s was canceled", who)
	}
	// Only an error object in a real answer is the server's: the SDK also
	// reports its own transport failures as JSON-RPC errors.
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) && status >= 200 && status < 300 {
		return opError(server, KindRPCError, "%s answered with JSON-RPC error %d: %s", who, rpc.Code, remoteText(rpc.Message, 200))
	}
	switch {
	case status >= 200 && contentType != "" && contentType != "application/json" && contentType != "text/event-stream":
		return opError(server, KindContentType, "%s answered with content type %s, not JSON or an event stream", who, remoteText(contentType, 100))
	}
	switch {
	case resumes > 0 && resumeStatus != 0 && (resumeStatus < 200 || resumeStatus > 299):
		return opError(server, KindStreamLost, "%s dropped its answer stream, and resuming it was refused with HTTP status %d", who, resumeStatus)
	case resumes > 0:
		return opError(server, KindStreamLost, "%s dropped its answer stream, and %d attempt(s) to resume it failed", who, resumes)
	case contentType == "text/event-stream" && strings.Contains(err.Error(), "terminated without response"):
		// The SDK's own error for a stream that ended without the answer
		// and without an event id to resume from.
		return opError(server, KindStreamLost, "%s ended its answer stream before the answer, with no event id to resume from", who)
	}
	var ue *egress.UnreachableError
	var ne net.Error
	if errors.As(err, &ue) || (status == 0 && errors.As(err, &ne)) {
		return opError(server, KindUnreachable, "%s cannot be reached", who)
	}
	if status == 0 {
		return opError(server, KindUnreachable, "%s cannot be reached", who)
	}
	return opError(server, KindMalformed, "%s sent an answer that is not a valid MCP answer", who)
}

// redact removes what must not reach a log from an SDK error: the URL
// (its query may hold a token) and line breaks.
func redact(err error, rawURL string) string {
	s := err.Error()
	if rawURL != "" {
		s = strings.ReplaceAll(s, rawURL, "<server url>")
	}
	return remoteText(s, 500)
}
