package mcp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/t3agent/t3agent/internal/tool"
)

// Fixed sentences of mapped results.
const (
	remoteErrorPrefix = "The remote tool reported an error: "
	noErrorDetail     = "no detail given."
	noTextContent     = "The remote tool returned no textual content."
	inputRequired     = "The remote tool asked for more input, which t3agent does not provide; the call did not complete."
)

// MapResult turns a tools/call answer into the result the model reads
// (SPEC §3): text blocks joined with line breaks; other blocks counted
// and announced at the start, since the model cannot see them; the
// structured content as JSON text when there is no text block; isError
// kept as an error result with the remote text after a fixed prefix.
// Remote text is control-stripped. A nil answer is an error result.
func MapResult(r *sdk.CallToolResult) tool.Result {
	if r == nil {
		return tool.Result{Content: remoteErrorPrefix + noErrorDetail, IsError: true}
	}
	if r.NeedsInput() {
		return tool.Result{Content: inputRequired, IsError: true}
	}
	var texts []string
	dropped := map[string]int{}
	n := 0
	for _, c := range r.Content {
		switch b := c.(type) {
		case *sdk.TextContent:
			texts = append(texts, cleanText(b.Text))
			continue
		case *sdk.ImageContent:
			dropped["image"]++
		case *sdk.AudioContent:
			dropped["audio"]++
		case *sdk.ResourceLink:
			dropped["resource_link"]++
		case *sdk.EmbeddedResource:
			dropped["resource"]++
		default:
			dropped["other"]++
		}
		n++
	}
	text := strings.Join(texts, "\n")
	if len(texts) == 0 && r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil && string(b) != "null" {
			text = cleanText(string(b))
		}
	}
	var note string
	if n > 0 {
		kinds := make([]string, 0, len(dropped))
		for k := range dropped {
			kinds = append(kinds, k)
		}
		slices.Sort(kinds)
		note = fmt.Sprintf("[t3agent reads text only and left out %d non-text content block(s): %s.]\n", n, strings.Join(kinds, ", "))
	}
	switch {
	case r.IsError && text == "":
		return tool.Result{Content: note + remoteErrorPrefix + noErrorDetail, IsError: true}
	case r.IsError:
		return tool.Result{Content: note + remoteErrorPrefix + text, IsError: true}
	case text == "":
		return tool.Result{Content: note + noTextContent}
	}
	return tool.Result{Content: note + text}
}
