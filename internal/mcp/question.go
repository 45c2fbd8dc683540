//lint:file-ignore SA1019 sampling and roots are named here only to refuse them

package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/t3agent/t3agent/internal/tool"
)

// Elicitation policies of a diagnostic call (CallParams.Elicitation),
// which has no run to suspend and no person to ask.
const (
	// ElicitDecline answers every question of the server "decline".
	ElicitDecline = "decline"
	// ElicitDefaults accepts a form question with the defaults its schema
	// declares, and declines one whose required fields have none (and
	// every URL question).
	ElicitDefaults = "defaults"
)

// askVersion is the version of askState.
const askVersion = 1

// askState is a remote call's continuation while a person answers its
// question (tool.Question.State). It holds everything needed to make the
// call again after a restart: nothing of it lives in memory.
type askState struct {
	V int `json:"v"`
	// RequestState and Requests are the open input_required result of a
	// 2026-07-28 server: its opaque state and its questions by id, and
	// Responses the answers given to them so far.
	RequestState string                       `json:"requestState,omitempty"`
	Requests     map[string]*sdk.ElicitParams `json:"requests,omitempty"`
	Responses    map[string]*sdk.ElicitResult `json:"responses,omitempty"`
	// Armed are the answers to give at once when a stateful server asks
	// the same question (by questionKey) over elicitation/create.
	Armed map[string]*sdk.ElicitResult `json:"armed,omitempty"`
	// Asking is what the person is asked now: a key of Requests, or the
	// questionKey of an elicitation/create.
	Asking string `json:"asking"`
}

// questionKey identifies a question of a stateful server across the
// calls that ask it: its mode, message and schema. The URL is left out,
// since a server may mint a new one (with a new elicitation id) each time.
func questionKey(p *sdk.ElicitParams) string {
	schema, _ := json.Marshal(p.RequestedSchema)
	b, _ := json.Marshal([]string{"elicit", modeOf(p), p.Message, string(schema)})
	sum := sha256.Sum256(b)
	return "elicit:" + hex.EncodeToString(sum[:16])
}

func modeOf(p *sdk.ElicitParams) string {
	switch {
	case p.Mode != "":
		return p.Mode
	case p.URL != "":
		return "url"
	}
	return "form"
}

// openAnswer decodes the state handed back with an answer and records
// the answer where it belongs.
func openAnswer(server string, a *tool.Answer) (*askState, error) {
	st := &askState{}
	if err := json.Unmarshal(a.State, st); err != nil || st.V != askVersion || st.Asking == "" {
		return nil, opError(server, KindInvalidRequest, "the answer to the MCP server %q does not belong to a question it asked", server)
	}
	switch a.Action {
	case tool.AnswerAccept, tool.AnswerDecline, tool.AnswerCancel:
	default:
		return nil, opError(server, KindInvalidRequest, "the answer to the MCP server %q has no valid action", server)
	}
	res := &sdk.ElicitResult{Action: a.Action}
	if a.Action == tool.AnswerAccept {
		res.Content = a.Content
		if res.Content == nil {
			res.Content = map[string]any{}
		}
	}
	if _, ok := st.Requests[st.Asking]; ok {
		if st.Responses == nil {
			st.Responses = map[string]*sdk.ElicitResult{}
		}
		st.Responses[st.Asking] = res
	} else {
		if st.Armed == nil {
			st.Armed = map[string]*sdk.ElicitResult{}
		}
		st.Armed[st.Asking] = res
	}
	st.Asking = ""
	return st, nil
}

// nextOpen is the id of the first input_required question not answered
// yet, or "".
func (st *askState) nextOpen() string {
	for _, id := range slices.Sorted(maps.Keys(st.Requests)) {
		if _, ok := st.Responses[id]; !ok {
			return id
		}
	}
	return ""
}

// question is what the person is asked for the question st.Asking names.
func (st *askState) question(server string, p *sdk.ElicitParams) (tool.Result, error) {
	state, err := json.Marshal(st)
	if err != nil {
		return tool.Result{}, err
	}
	q := &tool.Question{Message: remoteText(p.Message, 2000), State: state}
	if modeOf(p) == "url" {
		q.URL = p.URL
		q.Schema = json.RawMessage(`{"type":"object","properties":{}}`)
	} else {
		schema, err := json.Marshal(p.RequestedSchema)
		if err != nil || !strings.HasPrefix(string(schema), "{") {
			return tool.Errorf("Error: the MCP server %q asked a question whose form cannot be read.", server), nil
		}
		q.Schema = schema
	}
	return tool.Result{
		Content:  fmt.Sprintf("Error: the MCP server %q asks a question a person must answer before the call can finish.", server),
		IsError:  true,
		Question: q,
	}, nil
}

// unsupportedInput says why an input_required result cannot be answered:
// it asks for something other than elicitation (sampling, roots).
func unsupportedInput(reqs sdk.InputRequestMap) string {
	for _, id := range slices.Sorted(maps.Keys(reqs)) {
		switch reqs[id].(type) {
		case *sdk.ElicitParams:
		case *sdk.CreateMessageParams, *sdk.CreateMessageWithToolsParams:
			return "sampling (an LLM completion), which t3agent does not offer to servers"
		case *sdk.ListRootsParams:
			return "its roots, which t3agent does not offer to servers"
		default:
			return "a kind of input t3agent does not know"
		}
	}
	return ""
}

// calls is what one session's handlers know of the calls open on it, so
// that an elicitation/create (which names no call) finds its call.
type calls struct {
	mu   sync.Mutex
	open map[*openCall]struct{}
}

// openCall is one tools/call in flight: the answers it may give at once,
// how it answers questions nobody armed, and the first such question.
type openCall struct {
	armed  map[string]*sdk.ElicitResult
	policy string // "" in a run: note the question, answer "cancel"
	mu     sync.Mutex
	asked  *sdk.ElicitParams
}

func (c *calls) enter(oc *openCall) func() {
	c.mu.Lock()
	if c.open == nil {
		c.open = map[*openCall]struct{}{}
	}
	c.open[oc] = struct{}{}
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		delete(c.open, oc)
		c.mu.Unlock()
	}
}

// elicit answers an elicitation/create at once: an armed answer, the
// diagnostic policy, or, in a run, "cancel" with the question noted, so
// that the run asks the person and makes the call again with the answer
// armed. It never waits for a person: the session's request must not
// outlive the operation, and the run must outlive the process.
func (c *calls) elicit(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	c.mu.Lock()
	var oc *openCall
	n := len(c.open)
	for o := range c.open {
		oc = o
	}
	c.mu.Unlock()
	if n != 1 {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
			Message: "t3agent answers a question only while exactly one of its calls is open on the session"}
	}
	return oc.answer(req.Params), nil
}

func (oc *openCall) answer(p *sdk.ElicitParams) *sdk.ElicitResult {
	if r, ok := oc.armed[questionKey(p)]; ok {
		return r
	}
	switch oc.policy {
	case ElicitDecline:
		return &sdk.ElicitResult{Action: tool.AnswerDecline}
	case ElicitDefaults:
		return acceptDefaults(p)
	}
	oc.mu.Lock()
	if oc.asked == nil {
		oc.asked = p
	}
	oc.mu.Unlock()
	return &sdk.ElicitResult{Action: tool.AnswerCancel}
}

func (oc *openCall) question() *sdk.ElicitParams {
	oc.mu.Lock()
	defer oc.mu.Unlock()
	return oc.asked
}

// acceptDefaults accepts a form question with its schema's defaults
// (SEP-1034), or declines when a required field has none.
func acceptDefaults(p *sdk.ElicitParams) *sdk.ElicitResult {
	if modeOf(p) != "form" {
		return &sdk.ElicitResult{Action: tool.AnswerDecline}
	}
	raw, _ := json.Marshal(p.RequestedSchema)
	var s struct {
		Properties map[string]struct {
			Default json.RawMessage `json:"default"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return &sdk.ElicitResult{Action: tool.AnswerDecline}
	}
	content := map[string]any{}
	for k, prop := range s.Properties {
		var v any
		if len(prop.Default) > 0 && json.Unmarshal(prop.Default, &v) == nil {
			content[k] = v
		}
	}
	for _, k := range s.Required {
		if _, ok := content[k]; !ok {
			return &sdk.ElicitResult{Action: tool.AnswerDecline}
		}
	}
	return &sdk.ElicitResult{Action: tool.AnswerAccept, Content: content}
}

// refuseUnsupported answers at once, with a JSON-RPC error, every
// request a server sends that t3agent does not implement (sampling,
// roots, anything unknown): nothing is left waiting. Notifications and
// the requests it implements pass.
func refuseUnsupported(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		switch {
		case method == "ping" || method == "elicitation/create" || strings.HasPrefix(method, "notifications/"):
			return next(ctx, method, req)
		case method == "sampling/createMessage":
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "t3agent does not support sampling: it offers no LLM completions to MCP servers"}
		case method == "roots/list":
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "t3agent does not support roots: it offers no file system roots to MCP servers"}
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "t3agent does not support " + remoteText(method, 80)}
	}
}
