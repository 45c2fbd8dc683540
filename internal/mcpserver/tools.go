package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/guardrail"
	mcpclient "github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/oauth"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

// The facade's own tools, to follow a call that waits for approval.
const (
	ToolRunStatus = "t3agent_run_status"
	ToolRunResult = "t3agent_run_result"
)

// dispatchTool is the one tool registered with the SDK server: every
// tools/call is routed to it with the tool asked for in the context, so
// that the SDK shapes the result (input_required included) as for any
// tool, while the list and the decision stay the gate's.
const dispatchTool = "t3agent_dispatch"

// Decisions recorded for a call.
const (
	DecisionAllowed       = "allowed"
	DecisionDenied        = "denied"
	DecisionApproval      = "approval"
	DecisionInputRequired = "input_required"
	DecisionRateLimited   = "rate_limited"
)

// modernVersion is the first protocol revision with input_required.
const modernVersion = "2026-07-28"

// inputRequestID keys the one input request of a call that needs input.
const inputRequestID = "input"

type callKey struct{}

// pendingCall is a tools/call on its way to the dispatcher.
type pendingCall struct {
	name string
	info *requestInfo
}

func (s *Server) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/list", "tools/call":
		default:
			return next(ctx, method, req)
		}
		info := infoOf(req)
		if info == nil {
			// RequireBearerToken lets nothing through without a token.
			return nil, errors.New("the request carries no verified credential")
		}
		if method == "tools/list" {
			if wait, ok := s.admit(info.principal); !ok {
				return nil, fmt.Errorf("too many requests; try again in %d s", int(wait.Seconds())+1)
			}
			return s.listTools(ctx, info)
		}
		cr, ok := req.(*mcp.CallToolRequest)
		if !ok || cr.Params == nil {
			return nil, errors.New("tools/call without parameters")
		}
		name := cr.Params.Name
		cr.Params.Name = dispatchTool
		defer func() { cr.Params.Name = name }()
		return next(context.WithValue(ctx, callKey{}, &pendingCall{name: name, info: info}), method, req)
	}
}

func infoOf(req mcp.Request) *requestInfo {
	extra := req.GetExtra()
	if extra == nil || extra.TokenInfo == nil {
		return nil
	}
	info, _ := extra.TokenInfo.Extra[extraKey].(*requestInfo)
	return info
}

// listTools is the gate's offer for the caller on the endpoint, sorted by
// name, with the run tools when runs can be followed.
func (s *Server) listTools(ctx context.Context, info *requestInfo) (*mcp.ListToolsResult, error) {
	offered, err := s.p.Gate.Offer(ctx, gate.OfferParams{Actor: info.principal.User, Config: info.endpoint.gateConfig()})
	if err != nil {
		s.log.ErrorContext(ctx, "MCP tools/list: the gate cannot offer", "error", err.Error())
		return nil, errors.New("the tools cannot be listed right now")
	}
	out := &mcp.ListToolsResult{Tools: []*mcp.Tool{}}
	for _, sp := range offered.Specs() {
		out.Tools = append(out.Tools, toolOf(sp))
	}
	if s.p.Runtime != nil {
		out.Tools = append(out.Tools, runTools()...)
	}
	sort.Slice(out.Tools, func(i, j int) bool { return out.Tools[i].Name < out.Tools[j].Name })
	return out, nil
}

func toolOf(sp tool.Spec) *mcp.Tool {
	readOnly := !sp.Effect.IsWrite()
	destructive := sp.Effect == tool.NonIdempotentWrite
	idempotent := sp.Effect.SafeToRetry()
	open := sp.Remote
	desc := sp.Description
	if sp.ApprovalBound() {
		desc += " (Through t3agent this call waits for a person's approval; the answer names the run to follow with " + ToolRunStatus + ".)"
	}
	return &mcp.Tool{
		Name: sp.Name, Description: desc, InputSchema: json.RawMessage(sp.InputSchema),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: readOnly, DestructiveHint: &destructive, IdempotentHint: idempotent, OpenWorldHint: &open},
	}
}

var runSchema = json.RawMessage(`{"type":"object","properties":{"run_id":{"type":"string","description":"The run id a call that waits for approval answered with."}},"required":["run_id"],"additionalProperties":false}`)

func runTools() []*mcp.Tool {
	return []*mcp.Tool{
		{Name: ToolRunStatus, Description: "Where a call that waits for approval stands: waiting_for_approval, running, completed, failed or cancelled.",
			InputSchema: runSchema, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}},
		{Name: ToolRunResult, Description: "The result of a call that waited for approval, once a person approved it and t3agent ran it.",
			InputSchema: runSchema, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}},
	}
}

// dispatch answers one tools/call (see dispatchTool).
func (s *Server) dispatch(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	pc, _ := ctx.Value(callKey{}).(*pendingCall)
	if pc == nil {
		return nil, errors.New("tools/call reached the dispatcher without a call")
	}
	start := s.now()
	rec := store.RecordMCPCallParams{
		Client: clientName(pc.info.principal, req), Credential: pc.info.principal.Credential,
		Configuration: pc.info.endpoint.name, Method: "tools/call", Tool: displayName(pc.name),
	}
	if u := pc.info.principal.User; u != nil {
		rec.ActorUsername, rec.ActorUID = u.Username, max(u.UID, 0)
	}
	res, decision, outcome, runID := s.call(ctx, pc, req)
	rec.Decision, rec.Outcome, rec.RunID, rec.Duration = decision, outcome, runID, s.now().Sub(start)
	if _, err := s.p.Calls.RecordMCPCall(context.WithoutCancel(ctx), rec); err != nil {
		s.log.ErrorContext(ctx, "cannot record an MCP facade call", "tool", rec.Tool, "error", err.Error())
	}
	return res, nil
}

func clientName(p *Principal, req *mcp.CallToolRequest) string {
	if p.Client != "" {
		return clip(p.Client)
	}
	if ci := req.ClientInfo(); ci != nil && ci.Name != "" {
		return clip(ci.Name)
	}
	return "unknown"
}

// call decides and runs one call; it returns the result, the decision,
// the outcome and the run of an approval-bound call.
func (s *Server) call(ctx context.Context, pc *pendingCall, req *mcp.CallToolRequest) (*mcp.CallToolResult, string, string, string) {
	p := pc.info.principal
	if wait, ok := s.admit(p); !ok {
		return errorResult(fmt.Sprintf("Error: too many calls; try again in %d s.", int(wait.Seconds())+1)), DecisionRateLimited, "rate_limited", ""
	}
	args := req.Params.Arguments
	switch pc.name {
	case ToolRunStatus, ToolRunResult:
		if s.p.Runtime == nil {
			break
		}
		res, outcome := s.runTool(ctx, pc, args)
		return res, DecisionAllowed, outcome, ""
	}
	e, found := s.p.Gate.Registry().Get(ctx, pc.name)
	switch {
	case found && e.Spec.ApprovalBound():
		return s.hostCall(ctx, pc, req)
	case found && e.Spec.InputRequest != nil:
		merged, res := s.typedInput(ctx, pc, req, e.Spec)
		if res != nil {
			return res, DecisionInputRequired, "input_required", ""
		}
		args = merged
	}
	// A host's call is one call: it may reach one remote server once.
	ctx = mcpclient.WithCallBudget(ctx, mcpclient.NewCallBudget(1))
	r := s.p.Gate.Invoke(ctx, gate.InvokeParams{
		Name: pc.name, Args: args, Config: pc.info.endpoint.gateConfig(),
		Call: tool.Call{Actor: p.User, CallID: "mcp"},
	})
	decision, outcome := DecisionAllowed, "ok"
	if r.IsError {
		outcome = "tool_error"
		if !found || strings.HasSuffix(r.Content, "is not available.") {
			decision, outcome = DecisionDenied, "denied"
		}
	}
	return textResult(r.Content, r.IsError), decision, outcome, ""
}

// hostCall keeps an approval-bound call as a run waiting for approval and
// answers at once with its id.
func (s *Server) hostCall(ctx context.Context, pc *pendingCall, req *mcp.CallToolRequest) (*mcp.CallToolResult, string, string, string) {
	if s.p.Runtime == nil || pc.info.endpoint.resolved == nil {
		msg := fmt.Sprintf("Error: tool %q waits for a person's approval, which needs an agent configuration: call it through /mcp/{configuration}.", pc.name)
		if s.p.Runtime == nil {
			msg = fmt.Sprintf("Error: tool %q waits for a person's approval, and this server keeps no runs (no master key).", pc.name)
		}
		// The gate still decides, so a refused tool is recorded as one.
		if d, err := s.p.Gate.Decide(ctx, gate.DecideParams{Tool: pc.name, Actor: pc.info.principal.User, Config: pc.info.endpoint.gateConfig()}); err != nil || !d.Allowed {
			return errorResult(fmt.Sprintf("Error: tool %q is not available.", displayName(pc.name))), DecisionDenied, "denied", ""
		}
		return errorResult(msg), DecisionApproval, "refused", ""
	}
	res := s.p.Runtime.SuspendHostCall(ctx, agent.HostCallParams{
		Config: pc.info.endpoint.resolved, Actor: pc.info.principal.User,
		Caller: agent.Caller{Source: "mcp", Operation: clientName(pc.info.principal, req)},
		Tool:   pc.name, Arguments: req.Params.Arguments,
	})
	switch res.Outcome {
	case agent.OutcomeAwaitingApproval:
		text := fmt.Sprintf("The call of %s waits for a person's approval as run %s; nothing ran yet. "+
			"Follow it with %s and fetch its result with %s once it is approved.", pc.name, res.RunID, ToolRunStatus, ToolRunResult)
		out := textResult(text, false)
		out.StructuredContent = map[string]any{"status": "waiting_for_approval", "runId": res.RunID, "digest": res.Pending.Digest}
		return out, DecisionApproval, "awaiting_approval", res.RunID
	default:
		if res.Termination == agent.TerminationPolicyDenied {
			return errorResult(fmt.Sprintf("Error: tool %q is not available.", displayName(pc.name))), DecisionDenied, "denied", res.RunID
		}
		return errorResult("Error: " + res.Error), DecisionApproval, "failed", res.RunID
	}
}

// typedInput handles a tool that needs a person's input: a modern host
// gets input_required with the schema, an older host that elicits an
// elicitation request (in its session), and the answer is laid over the
// arguments (the schema's keys only); any other host gets an error
// naming the fields. It returns the arguments to call with, or the
// result to answer.
func (s *Server) typedInput(_ context.Context, pc *pendingCall, req *mcp.CallToolRequest, sp tool.Spec) (json.RawMessage, *mcp.CallToolResult) {
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(sp.InputRequest, &schema)
	fields := make([]string, 0, len(schema.Properties))
	for k := range schema.Properties {
		fields = append(fields, k)
	}
	slices.Sort(fields)
	if !modern(req) && !elicits(req) {
		return nil, errorResult(fmt.Sprintf("Error: tool %q needs a person's input (%s) that this host cannot ask for; use a host that speaks MCP %s, or t3agent's chat.",
			pc.name, strings.Join(fields, ", "), modernVersion))
	}
	if er, ok := req.Params.InputResponses[inputRequestID].(*mcp.ElicitResult); ok {
		if er.Action != "accept" {
			return nil, errorResult(fmt.Sprintf("Error: the input for tool %q was declined.", pc.name))
		}
		args := map[string]any{}
		_ = json.Unmarshal(req.Params.Arguments, &args)
		if args == nil {
			args = map[string]any{}
		}
		for _, k := range fields {
			delete(args, k)
			if v, ok := er.Content[k]; ok {
				args[k] = v
			}
		}
		b, _ := json.Marshal(args)
		return b, nil
	}
	var requested map[string]any
	_ = json.Unmarshal(sp.InputRequest, &requested)
	return nil, &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{inputRequestID: &mcp.ElicitParams{
		Mode: "form", Message: fmt.Sprintf("Tool %s needs your input: %s.", pc.name, strings.Join(fields, ", ")), RequestedSchema: requested,
	}}}
}

func modern(req *mcp.CallToolRequest) bool { return req.ProtocolVersion() >= modernVersion }

// elicits reports whether an older host declared elicitation in its
// session: the SDK then asks it for the input requests a result names.
func elicits(req *mcp.CallToolRequest) bool {
	ip := req.Session.InitializeParams()
	return ip != nil && ip.Capabilities != nil && ip.Capabilities.Elicitation != nil
}

// runTool answers t3agent_run_status and t3agent_run_result for a run the
// caller may read.
func (s *Server) runTool(ctx context.Context, pc *pendingCall, raw json.RawMessage) (*mcp.CallToolResult, string) {
	var in struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal(raw, &in); err != nil || in.RunID == "" || len(in.RunID) > 64 {
		return errorResult("Error: give run_id, the id a call that waits for approval answered with."), "invalid_arguments"
	}
	// A host follows its own user's runs, as that person would (an admin
	// any run); a service token's wider agent:read does not apply here.
	out, err := s.p.Runtime.HostResult(ctx, pc.info.principal.User, agent.Access{}, in.RunID)
	switch {
	case errors.Is(err, store.ErrNotFound), errors.Is(err, agent.ErrAccessDenied):
		return errorResult(fmt.Sprintf("Error: there is no run %s you may read.", displayName(in.RunID))), "denied"
	case err != nil:
		s.log.ErrorContext(ctx, "MCP run tool failed", "run_id", in.RunID, "error", err.Error())
		return errorResult("Error: the run cannot be read right now."), "failed"
	}
	status := map[string]any{"runId": out.Run.ID, "status": string(out.Run.Status), "done": out.Done}
	if out.Run.Error != "" {
		status["error"] = out.Run.Error
	}
	if pc.name == ToolRunStatus {
		text := fmt.Sprintf("Run %s is %s.", out.Run.ID, out.Run.Status)
		if out.Run.Error != "" {
			text += " " + out.Run.Error
		}
		r := textResult(text, false)
		r.StructuredContent = status
		return r, "ok"
	}
	if out.Result == nil {
		msg := fmt.Sprintf("Run %s has no result: it is %s.", out.Run.ID, out.Run.Status)
		if out.Run.Error != "" {
			msg += " " + out.Run.Error
		}
		r := textResult(msg, out.Done)
		r.StructuredContent = status
		return r, "no_result"
	}
	r := textResult(out.Result.Content, out.Result.IsError)
	return r, "ok"
}

// textResult is a result with one text block, its secrets redacted.
func textResult(content string, isError bool) *mcp.CallToolResult {
	text, _ := guardrail.RedactSecrets(content)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isError}
}

func errorResult(content string) *mcp.CallToolResult { return textResult(content, true) }

// admit takes one call from the caller's credential and user windows.
func (s *Server) admit(p *Principal) (time.Duration, bool) {
	if wait, ok := s.perCred.take(p.Credential); !ok {
		return wait, false
	}
	user := ""
	if p.User != nil {
		user = p.User.Username
	}
	return s.perUser.take("user:" + user)
}

// displayName bounds a host-chosen name before it is echoed or stored.
func displayName(name string) string {
	if len(name) > 64 || !tool.NamePattern.MatchString(name) {
		return clip(strings.ToValidUTF8(name, "?"))
	}
	return name
}

func clip(s string) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "?"), "\x00", "?")
	if len(s) <= 64 {
		return s
	}
	cut := 64
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// Offered lists what a host would get at resource (an endpoint URL) as
// user, for the consent page: the gate's offer, with the approval-bound
// tools marked.
func (s *Server) Offered(ctx context.Context, user *typo3.BackendUser, resource string) ([]oauth.ConsentTool, error) {
	u, err := url.Parse(resource)
	if err != nil {
		return nil, err
	}
	ep := endpoint{}
	if name, ok := strings.CutPrefix(u.Path, "/mcp/"); ok && name != "" {
		if s.p.Configs == nil {
			return nil, errors.New("mcpserver: no configurations are served")
		}
		res, err := s.p.Configs.Resolve(ctx, name)
		if err != nil {
			return nil, err
		}
		ep = endpoint{name: name, resolved: res}
	}
	offered, err := s.p.Gate.Offer(ctx, gate.OfferParams{Actor: user, Config: ep.gateConfig()})
	if err != nil {
		return nil, err
	}
	out := []oauth.ConsentTool{}
	for _, sp := range offered.Specs() {
		out = append(out, oauth.ConsentTool{Name: sp.Name, Approval: sp.ApprovalBound()})
	}
	return out, nil
}
