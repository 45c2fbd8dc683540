package console

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
)

// cardView is the approval card or the typed-input form of a waiting
// run, rendered alike in the chat and the inbox.
type cardView struct {
	// Action is the form's target: …/decide or …/input is appended.
	Action string
	// Target is the element htmx swaps with the answer; "" posts plainly.
	Target string
	RunID  string
	Digest string
	// Input is set for a question; Fields is its form.
	Input  bool
	Tool   string
	Fields []field
	// Message and URL are an MCP server's own question (remote text) and,
	// in URL mode, the page the person opens.
	Message string
	URL     string
	// Dismissable offers decline and cancel for a server's question (the
	// inbox; the chat answers through its own recorded decision).
	Dismissable bool
	// FormError is the sentence of an answer that did not fit.
	FormError string
	Calls     []callView
	// Unreadable: the saved turn does not open; only cancelling helps.
	Unreadable bool
	// MayDecide: the reader may answer the question, or decide the card
	// at all; MayApprove and MayDeny say which buttons the card offers,
	// and DecideKey (a label) why approving is not among them.
	MayDecide  bool
	MayApprove bool
	MayDeny    bool
	DecideKey  string
	// Owner is who started the run (the inbox shows it).
	Owner string
	When  time.Time
	// Page gives the template its labels.
	Page *pageData
}

// WithCard hands a card the page's labels, for the card template.
func (d *pageData) WithCard(cv *cardView) *cardView {
	cv.Page = d
	return cv
}

// callView is one pending call with what the card says about it.
type callView struct {
	Tool      string
	Arguments string
	// Group, DataClass and Effect come from the tool's declaration; Known
	// is false for a tool no longer registered.
	Known     bool
	Group     string
	DataClass tool.DataClass
	Effect    tool.Effect
	Remote    bool
	Preview   []string
	// PreviewFailed: the tool could not say what the call would do.
	PreviewFailed bool
}

// cardOf builds the card of a pending turn.
func (c *Console) cardOf(ctx context.Context, it agent.InboxItem, action string, mayDecide bool) *cardView {
	cv := &cardView{Action: action, RunID: it.Run.ID, Digest: it.Digest, Unreadable: it.Unreadable,
		MayDecide: mayDecide, MayApprove: mayDecide, MayDeny: mayDecide, Owner: it.Run.OwnerUsername, When: it.Run.UpdatedAt}
	if it.Input != "" {
		cv.Input, cv.Tool = true, it.Input
		cv.Fields = fieldsOf(it.Schema)
		cv.Message, cv.URL = it.Message, it.URL
		cv.Dismissable = it.Message != "" && strings.HasPrefix(action, "/inbox/")
		return cv
	}
	previews := map[int]agent.CallPreview{}
	for _, p := range it.Previews {
		previews[p.Index] = p
	}
	for i, call := range it.Calls {
		v := callView{Tool: call.Name, Arguments: prettyJSON(call.Arguments)}
		if c.p.Gate != nil {
			if e, ok := c.p.Gate.Registry().Get(ctx, call.Name); ok {
				sp := e.Spec
				v.Known, v.Group, v.DataClass, v.Effect, v.Remote = true, sp.Group, sp.DataClass, sp.Effect, sp.Remote
			}
		}
		if p, ok := previews[i]; ok {
			v.Preview, v.PreviewFailed = p.Lines, p.Failed
		}
		cv.Calls = append(cv.Calls, v)
	}
	return cv
}

// prettyJSON indents a JSON text; anything else stays as it is.
func prettyJSON(s string) string {
	var buf bytes.Buffer
	if json.Indent(&buf, []byte(s), "", "  ") != nil {
		return s
	}
	return buf.String()
}

// step is one tool call of a run, as the chat and the timeline show it.
type step struct {
	Tool     string
	CallID   string
	Round    int
	Duration time.Duration
	IsError  bool
	Bytes    int
	// Arguments and Result are excerpts; empty when the run records
	// metadata only.
	Arguments string
	Result    string
}

// Took is the step's duration as the page shows it.
func (s step) Took() string { return took(s.Duration) }

// excerptLen bounds an argument or result excerpt.
const excerptLen = 600

func excerpt(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= excerptLen {
		return s
	}
	cut := excerptLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + " …"
}

// stepsOf are the tool calls among a run's events.
func stepsOf(evs []store.RunEvent) []step {
	var out []step
	for _, e := range evs {
		if e.Kind != string(agent.EventTool) {
			continue
		}
		var p agent.ToolPayload
		if json.Unmarshal(e.Payload, &p) != nil {
			continue
		}
		out = append(out, step{Tool: p.Tool, CallID: p.CallID, Round: e.Round, Duration: e.Duration, IsError: p.IsError,
			Bytes: p.Bytes, Arguments: excerpt(prettyJSON(p.ToolArguments)), Result: excerpt(p.ToolResult)})
	}
	return out
}
