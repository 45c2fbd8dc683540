package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
)

func nest(depth int) string {
	// depth levels of objects: the root, then properties→p→… alternating.
	s := `{"type":"string"}`
	for i := 1; i < depth; i++ {
		if i%2 == 1 {
			s = `{"p":` + s + `}`
		} else {
			s = `{"type":"object","properties":` + s + `}`
		}
	}
	return s
}

func TestNormalizeSchema(t *testing.T) {
	t.Parallel()
	big := `{"type":"object","description":"` + strings.Repeat("d", mcp.MaxSchemaBytes) + `"}`
	for _, c := range []struct {
		name, in, want, refused string
	}{
		{"minimal", `{"type":"object"}`, `{"type":"object"}`, ""},
		{"kept keys only", `{"$schema":"http://json-schema.org/draft-07/schema#","title":"T","type":"object","properties":{"q":{"type":"string","minLength":1}},"required":["q"],"additionalProperties":false,"examples":[1]}`,
			`{"additionalProperties":false,"properties":{"q":{"minLength":1,"type":"string"}},"required":["q"],"type":"object"}`, ""},
		{"combinators", `{"type":"object","anyOf":[{"required":["a"]},{"required":["b"]}],"not":{"required":["c"]}}`,
			`{"anyOf":[{"required":["a"]},{"required":["b"]}],"not":{"required":["c"]},"type":"object"}`, ""},
		{"big numbers kept", `{"type":"object","properties":{"n":{"type":"integer","maximum":9007199254740993}}}`,
			`{"properties":{"n":{"maximum":9007199254740993,"type":"integer"}},"type":"object"}`, ""},
		{"twelve levels", `{"type":"object","properties":` + nest(10) + `}`, "", ""},
		{"array", `{"type":"array"}`, "", `"type": "object"`},
		{"type union", `{"type":["object","null"]}`, "", `"type": "object"`},
		{"no type", `{"properties":{}}`, "", `"type": "object"`},
		{"not an object", `[{"type":"object"}]`, "", "not a JSON object"},
		{"not json", `{"type":`, "", "not valid JSON"},
		{"two values", `{"type":"object"} {}`, "", "not one JSON value"},
		{"bad utf8", "{\"type\":\"object\",\"description\":\"\xff\"}", "", "not valid UTF-8"},
		{"$ref top", `{"type":"object","$ref":"#/x"}`, "", `"$ref"`},
		{"$defs top", `{"type":"object","$defs":{}}`, "", `"$defs"`},
		{"definitions", `{"type":"object","definitions":{}}`, "", `"definitions"`},
		{"if then else", `{"type":"object","if":{},"then":{}}`, "", `"if"`},
		{"patternProperties", `{"type":"object","patternProperties":{"^x":{}}}`, "", `"patternProperties"`},
		{"unevaluated", `{"type":"object","unevaluatedProperties":false}`, "", `"unevaluatedProperties"`},
		{"nested $ref", `{"type":"object","properties":{"a":{"$ref":"http://evil/x"}}}`, "", `"$ref"`},
		{"ref in anyOf", `{"type":"object","anyOf":[{"$ref":"#"}]}`, "", `"$ref"`},
		{"forbidden property name", `{"type":"object","properties":{"if":{"type":"string"}}}`, "", `"if"`},
		{"description not string", `{"type":"object","description":5}`, "", "description"},
		{"additionalProperties schema", `{"type":"object","additionalProperties":{"type":"string"}}`, "", "additionalProperties"},
		{"properties not object", `{"type":"object","properties":[]}`, "", "properties that are not an object"},
		{"property not object", `{"type":"object","properties":{"a":true}}`, "", `property "a"`},
		{"required not array", `{"type":"object","required":"a"}`, "", "required list"},
		{"required not strings", `{"type":"object","required":[1]}`, "", "required entry"},
		{"thirteen levels", `{"type":"object","properties":` + nest(12) + `}`, "", "deeper than 12"},
		{"too big", big, "", "more than the 16384"},
	} {
		got, err := mcp.NormalizeSchema([]byte(c.in))
		switch {
		case c.refused != "":
			if err == nil || !strings.Contains(err.Error(), c.refused) {
				t.Errorf("%s: NormalizeSchema = %s, %v; want refused: %s", c.name, got, err, c.refused)
			}
		case err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want != "" && string(got) != c.want:
			t.Errorf("%s: NormalizeSchema = %s\nwant %s", c.name, got, c.want)
		}
	}
}

// TestImportSkips: names that break the rule, collide with a builtin or
// repeat, and schemas the normaliser refuses are skipped and reported,
// never rewritten; the import is partial.
func TestImportSkips(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	long := strings.Repeat("x", 60)
	list := fmt.Sprintf(`{"tools":[
		{"name":"ok","inputSchema":{"type":"object"}},
		{"name":"has space","inputSchema":{"type":"object"}},
		{"name":"dot.name","inputSchema":{"type":"object"}},
		{"name":"%s","inputSchema":{"type":"object"}},
		{"name":"clash","inputSchema":{"type":"object"}},
		{"name":"ok","inputSchema":{"type":"object"}},
		{"name":"","inputSchema":{"type":"object"}},
		{"name":"refs","inputSchema":{"type":"object","properties":{"a":{"$ref":"#/x"}}}},
		{"name":"listy","inputSchema":{"type":"array"}}
	]}`, long)
	rs := newRawServer(t, "tools/list", func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
		writeJSON(w, id, list)
	})
	f := newFixture(t)
	f.add(t, "docs", rs.URL)
	builtin := builtinTool("mcp_docs_clash")
	g := f.gated(t, builtin)
	res := f.importTools(t, g, "docs")
	if res.Advertised != 9 || res.Imported != 1 || res.Added[0] != "mcp_docs_ok" || res.Server.ImportStatus != store.MCPImportPartial {
		t.Fatalf("Import = %+v", res)
	}
	joined := strings.Join(res.Skipped, "\n")
	for _, want := range []string{
		`has space: skipped, the local name "mcp_docs_has space" does not match`,
		`dot.name: skipped`,
		long + ": skipped",
		"clash: skipped, mcp_docs_clash is the name of a builtin tool",
		"ok: skipped, the server lists it twice",
		"tool 7: skipped, it has no name",
		`refs: skipped, the input schema uses the keyword "$ref"`,
		`listy: skipped, the input schema must have "type": "object"`,
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("skipped lines miss %q:\n%s", want, joined)
		}
	}
	if res.Server.ImportError != joined {
		t.Errorf("import error = %q, want the skipped lines", res.Server.ImportError)
	}
	rows, err := f.st.MCPTools(ctx, store.ListMCPToolsParams{IncludeOrphaned: true})
	if err != nil || len(rows) != 1 {
		t.Errorf("catalogue = %+v, %v; want only ok (nothing rewritten)", rows, err)
	}
	e, ok := g.reg.Get(ctx, "mcp_docs_clash")
	if !ok || !e.Builtin {
		t.Errorf("the builtin lost its name: %+v", e)
	}
}

type staticTool struct{ spec tool.Spec }

func (s staticTool) Spec() tool.Spec { return s.spec }
func (s staticTool) Execute(_ context.Context, _ tool.Call, _ map[string]any) (tool.Result, error) {
	return tool.Text("builtin"), nil
}

func builtinTool(name string) tool.Tool {
	return staticTool{tool.Spec{
		Name: name, Description: "A builtin.", InputSchema: json.RawMessage(`{"type":"object"}`),
		Group: tool.GroupContent, Effect: tool.ReadOnly, DataClass: tool.EditorContent, EnabledByDefault: true,
	}}
}

func TestMapResult(t *testing.T) {
	t.Parallel()
	yes := true
	for _, c := range []struct {
		name    string
		in      *sdk.CallToolResult
		want    string
		isError bool
	}{
		{"nil", nil, "The remote tool reported an error: no detail given.", true},
		{"text joined", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "a"}, &sdk.TextContent{Text: "b"}}}, "a\nb", false},
		{"empty", &sdk.CallToolResult{}, "The remote tool returned no textual content.", false},
		{"error without text", &sdk.CallToolResult{IsError: true}, "The remote tool reported an error: no detail given.", true},
		{"error with text", &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "nope"}}}, "The remote tool reported an error: nope", true},
		{"control stripped", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "a\x00b\x1b[2Jc\r\nd\u202ee\u200bf\tg\x7f"}}}, "ab[2Jc\ndef\tg", false},
		{"invalid utf8", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "a\xffb"}}}, "a\uFFFDb", false},
		{"structured only", &sdk.CallToolResult{StructuredContent: map[string]any{"b": 2, "a": "x\x07"}}, `{"a":"x\u0007","b":2}`, false},
		{"structured ignored beside text", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "t"}}, StructuredContent: map[string]any{"a": 1}}, "t", false},
		{"non-text announced", &sdk.CallToolResult{Content: []sdk.Content{
			&sdk.ResourceLink{URI: "file:///x", Name: "x"}, &sdk.ImageContent{}, &sdk.ImageContent{}, &sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "x"}},
		}}, "[t3agent reads text only and left out 4 non-text content block(s): image, resource, resource_link.]\nThe remote tool returned no textual content.", false},
		{"error with image", &sdk.CallToolResult{IsError: yes, Content: []sdk.Content{&sdk.ImageContent{}, &sdk.TextContent{Text: "bad"}}},
			"[t3agent reads text only and left out 1 non-text content block(s): image.]\nThe remote tool reported an error: bad", true},
	} {
		got := mcp.MapResult(c.in)
		if got.Content != c.want || got.IsError != c.isError || got.Artifacts != nil {
			t.Errorf("%s: MapResult = %+v\nwant %q isError=%v", c.name, got, c.want, c.isError)
		}
	}
}

func FuzzNormalizeSchema(f *testing.F) {
	for _, s := range []string{
		`{"type":"object"}`,
		`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`,
		`{"type":"object","properties":{"a":{"$ref":"#"}}}`,
		`{"type":"object","anyOf":[{"properties":{"x":{"items":[{"if":{}}]}}}]}`,
		`[1,2]`, `{"type":"array"}`, `null`, `{"type":"object","description":"\u202e"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		out, err := mcp.NormalizeSchema(raw)
		if err != nil {
			if out != nil {
				t.Fatal("a refusal returned a schema")
			}
			return
		}
		if len(out) > mcp.MaxSchemaBytes || !utf8.Valid(out) {
			t.Fatalf("accepted schema of %d bytes or invalid UTF-8", len(out))
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil || m["type"] != "object" {
			t.Fatalf("accepted %s: not an object schema", out)
		}
		// Normalising is idempotent: an accepted schema is accepted as is.
		again, err := mcp.NormalizeSchema(out)
		if err != nil || string(again) != string(out) {
			t.Fatalf("normalising %s again gave %s, %v", out, again, err)
		}
		if err := (tool.Spec{Name: "x", Description: "d", InputSchema: out, Group: "g", Effect: tool.ReadOnly, DataClass: tool.PublicContent}).Validate(); err != nil {
			t.Fatalf("the registry refuses an accepted schema: %v", err)
		}
	})
}

// FuzzMapResult feeds arbitrary tools/call answers through the SDK's
// decoding and our mapping: no panic, and what reaches the model is
// valid UTF-8 without control characters other than tab and line feed.
func FuzzMapResult(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"hi"}]}`,
		`{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"},{"type":"text","text":"a\u001bb"}],"isError":true}`,
		`{"content":[],"structuredContent":{"a":[1,2,{"b":"\u0000"}]}}`,
		`{"content":[{"type":"resource","resource":{"uri":"x","text":"t"}}],"resultType":"input_required"}`,
		`{"content":null}`, `{}`, `[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var r sdk.CallToolResult
		if err := json.Unmarshal(raw, &r); err != nil {
			return
		}
		got := mcp.MapResult(&r)
		if !utf8.ValidString(got.Content) || got.Content == "" {
			t.Fatalf("MapResult gave %q", got.Content)
		}
		for _, c := range got.Content {
			if c != '\n' && c != '\t' && (unicode.IsControl(c) || unicode.Is(unicode.Cf, c)) {
				t.Fatalf("control character %U reached the model: %q", c, got.Content)
			}
		}
		if r.IsError && !got.IsError {
			t.Fatal("isError was lost")
		}
	})
}
