package agent

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/t3agent/t3agent/internal/agentconfig"
)

// Describe says in one line what a stored event records, for timelines
// (the CLI's `runs show`, the run page). It reads only metadata, so it
// reads the same at every privacy level.
func Describe(kind string, payload json.RawMessage) string {
	switch EventKind(kind) {
	case EventContext:
		var p ContextPayload
		if json.Unmarshal(payload, &p) != nil {
			break
		}
		s := fmt.Sprintf("fit %d of %d messages: %d of %d tokens (%d left, calibration %.2f)",
			p.Sent, p.Messages, p.EstimatedTokens, p.Budget, p.Remaining, p.Calibration)
		if p.Pruned {
			s += fmt.Sprintf(", dropped %d turn(s)", p.DroppedTurns)
		}
		if p.CappedResults > 0 {
			s += fmt.Sprintf(", capped %d tool result(s)", p.CappedResults)
		}
		if p.Overflow {
			s += ", does not fit"
		}
		return s
	case EventRequest:
		var p RequestPayload
		if json.Unmarshal(payload, &p) != nil {
			break
		}
		s := fmt.Sprintf("%s via %s: %d messages, %d tool(s)", p.Model, p.Configuration, p.Messages, len(p.Tools))
		if p.Final {
			s += ", final call without tools"
		}
		return s
	case EventLLM:
		var p LLMPayload
		if json.Unmarshal(payload, &p) != nil {
			break
		}
		var b strings.Builder
		served := p.Model
		if p.Entry != "" {
			served += " (" + p.Entry + ")"
		}
		if p.ErrorClass != "" {
			fmt.Fprintf(&b, "failed: %s after %d attempt(s)", p.ErrorClass, p.Attempts)
		} else {
			fmt.Fprintf(&b, "%s answered %s: %d in / %d out tokens", served, p.FinishReason, p.Usage.InputTokens, p.Usage.OutputTokens)
			if p.Cost != nil {
				b.WriteString(", " + p.Cost.String())
			}
			if p.Attempts > 1 {
				fmt.Fprintf(&b, ", %d attempts", p.Attempts)
			}
		}
		for _, f := range p.FellBack {
			fmt.Fprintf(&b, "; passed over %s (%s)", f.Entry, f.Class)
		}
		if len(p.ToolCalls) > 0 {
			names := make([]string, len(p.ToolCalls))
			for i, c := range p.ToolCalls {
				names[i] = c.Name
			}
			fmt.Fprintf(&b, "; calls %s", strings.Join(names, ", "))
		}
		return b.String()
	case EventTool:
		var p ToolPayload
		if json.Unmarshal(payload, &p) != nil {
			break
		}
		state := "ok"
		if p.IsError {
			state = "error"
		}
		return fmt.Sprintf("%s [%s]: %s, %d bytes", p.Tool, p.CallID, state, p.Bytes)
	case EventGuardrail:
		var p GuardrailPayload
		if json.Unmarshal(payload, &p) != nil {
			break
		}
		s := fmt.Sprintf("%s: %s on %s", p.Guardrail, p.Verdict, p.Stage)
		if p.Reason != "" {
			s += " (" + p.Reason + ")"
		}
		return s
	case EventApproval:
		var p ApprovalPayload
		if json.Unmarshal(payload, &p) != nil {
			break
		}
		return fmt.Sprintf("waiting for approval of %s (digest %.12s…)", callNames(p.Pending), p.Digest)
	case EventInput:
		var p InputPayload
		if json.Unmarshal(payload, &p) != nil {
			break
		}
		return fmt.Sprintf("waiting for input to %s (digest %.12s…)", p.Tool, p.Digest)
	case EventDecision:
		var p DecisionPayload
		if json.Unmarshal(payload, &p) != nil {
			break
		}
		verb := "denied"
		if p.Approved {
			verb = "approved"
		}
		return verb + " by " + p.DecidedBy
	case EventInputSubmitted:
		var p InputSubmittedPayload
		if json.Unmarshal(payload, &p) != nil {
			break
		}
		return "input to " + p.Tool + " from " + p.SubmittedBy
	case EventRefused:
		var p RefusedPayload
		if json.Unmarshal(payload, &p) != nil {
			break
		}
		return fmt.Sprintf("decision by %s refused (%s); waiting again", p.By, p.Reason)
	case EventHostResult:
		var p HostResultPayload
		if json.Unmarshal(payload, &p) != nil {
			break
		}
		s := fmt.Sprintf("result of %s kept for the MCP host (%d bytes, sealed)", p.Tool, p.Bytes)
		if p.IsError {
			s += ", an error"
		}
		return s
	}
	return string(payload)
}

func callNames(refs []CallRef) string {
	names := make([]string, len(refs))
	for i, c := range refs {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

// CostString formats a cost for people: "$0.0012", or "unknown".
func CostString(cost agentconfig.USD, unknown bool) string {
	if unknown {
		return "unknown"
	}
	return cost.String()
}
