package agent

import (
	"encoding/json"
	"testing"

	"github.com/t3agent/t3agent/internal/llm"
)

// TestSchemaTokensCountsTheEncoding: the counted length equals the
// encoded one for compact schemas and plain text, with and without
// parameters.
func TestSchemaTokensCountsTheEncoding(t *testing.T) {
	for _, tools := range [][]llm.ToolDef{
		{{Name: "a", Description: "One tool.", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}},
		{{Name: "get_page", Parameters: json.RawMessage(`{"type":"object","properties":{"uid":{"type":"integer"}},"required":["uid"]}`)},
			{Name: "search_records", Description: "Search the site's records by text."},
			{Name: "ß_ü", Description: "Ünïcödé is counted in bytes, as encoded."}},
	} {
		b, err := json.Marshal(tools)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := schemaTokens(tools), float64(len(b))/denseBytesPerToken; got != want {
			t.Errorf("schemaTokens = %v, want %v (%d bytes: %s)", got, want, len(b), b)
		}
	}
	if schemaTokens(nil) != 0 {
		t.Error("no tools cost tokens")
	}
}
