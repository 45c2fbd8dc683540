package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/tool"
)

// Preview limits.
const (
	MaxPreviewLines    = 20
	MaxPreviewLineLen  = 500
	previewCallTimeout = 10 * time.Second
)

// Previewer is implemented by a tool that can say what a call would do
// before it runs: a few lines for the person who approves the turn.
type Previewer interface {
	Preview(ctx context.Context, call tool.Call, args map[string]any) ([]string, error)
}

// CallPreview is the preview of one pending call: a snapshot taken at
// suspend, as the run's actor, never a precondition.
type CallPreview struct {
	Index  int      `json:"index"`
	Tool   string   `json:"tool"`
	Lines  []string `json:"lines"`
	Failed bool     `json:"failed,omitempty"`
}

// previews asks every pending call's tool that can preview for its lines.
// A failing, panicking or empty preview becomes one failed line.
func (r *run) previews(ctx context.Context, calls []llm.ToolCall) []CallPreview {
	var out []CallPreview
	for i, c := range calls {
		if _, offered := r.specs[c.Name]; !offered {
			continue
		}
		e, ok := r.rt.gate.Registry().Get(ctx, c.Name)
		if !ok {
			continue
		}
		pv, ok := e.Tool.(Previewer)
		if !ok {
			continue
		}
		p := CallPreview{Index: i, Tool: bounded(c.Name)}
		lines, err := r.preview(ctx, pv, c)
		if err != nil || len(lines) == 0 {
			p.Failed, p.Lines = true, []string{"The preview could not be made."}
			if err != nil {
				r.rt.log.WarnContext(ctx, "tool preview failed", "run_id", r.id, "tool", c.Name, "error", err.Error())
			}
		} else {
			for _, l := range lines[:min(len(lines), MaxPreviewLines)] {
				p.Lines = append(p.Lines, cutUTF8(strings.ToValidUTF8(l, "\uFFFD"), MaxPreviewLineLen))
			}
		}
		out = append(out, p)
	}
	return out
}

func (r *run) preview(ctx context.Context, pv Previewer, c llm.ToolCall) (lines []string, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("preview panicked: %v", v)
		}
	}()
	args := map[string]any{}
	if strings.TrimSpace(c.Arguments) != "" {
		if err := json.Unmarshal([]byte(c.Arguments), &args); err != nil {
			return nil, fmt.Errorf("the arguments are not a JSON object")
		}
	}
	ctx, cancel := context.WithTimeout(ctx, previewCallTimeout)
	defer cancel()
	return pv.Preview(ctx, tool.Call{Actor: r.req.Actor, RunID: r.id, CallID: c.ID}, args)
}
