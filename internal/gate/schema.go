package gate

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// schemaCache holds each tool's compiled input schema, keyed by tool name
// and checked against the schema's bytes: a tool whose schema changes
// (an MCP re-import) is compiled again, and the cache never holds more
// than one schema per name. Safe for concurrent use; two goroutines may
// compile the same schema at once, and either result is kept.
type schemaCache struct {
	m sync.Map // name → *compiledSchema
}

type compiledSchema struct {
	raw    []byte
	schema *jsonschema.Schema
	err    error
}

func (c *schemaCache) get(name string, raw []byte) (*jsonschema.Schema, error) {
	if v, ok := c.m.Load(name); ok {
		if cs := v.(*compiledSchema); bytes.Equal(cs.raw, raw) {
			return cs.schema, cs.err
		}
	}
	sch, err := compileSchema(raw)
	c.m.Store(name, &compiledSchema{raw: bytes.Clone(raw), schema: sch, err: err})
	return sch, err
}

// schemaURL names the one document each compiler holds.
const schemaURL = "t3agent:tool-input"

// refuseLoader refuses every $ref outside the schema itself: a tool's
// schema (from an MCP server, say) must never make us read a file or open
// a connection.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("the schema refers to %s; only references within the schema are allowed", url)
}

func compileSchema(raw []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("the input schema is not valid JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(refuseLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("the input schema cannot be loaded: %w", err)
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("the input schema does not compile: %s", oneLine(err.Error()))
	}
	return sch, nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// describeViolation turns a validation error into one sentence naming the
// first offending field and what is wrong with it, e.g.
// `field "limit": got string, want integer`.
func describeViolation(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return oneLine(err.Error())
	}
	leaf := firstLeaf(ve)
	where := strings.Join(leaf.InstanceLocation, ".")
	p := message.NewPrinter(language.English)
	switch k := leaf.ErrorKind.(type) {
	case *kind.Required:
		if where != "" {
			where += "."
		}
		if len(k.Missing) == 1 {
			return fmt.Sprintf("field %q is required", where+k.Missing[0])
		}
		quoted := make([]string, len(k.Missing))
		for i, m := range k.Missing {
			quoted[i] = fmt.Sprintf("%q", where+m)
		}
		return "fields " + strings.Join(quoted, ", ") + " are required"
	case *kind.AdditionalProperties:
		if where != "" {
			where += "."
		}
		quoted := make([]string, len(k.Properties))
		for i, m := range k.Properties {
			quoted[i] = fmt.Sprintf("%q", where+m)
		}
		if len(quoted) == 1 {
			return "field " + quoted[0] + " is not allowed"
		}
		return "fields " + strings.Join(quoted, ", ") + " are not allowed"
	}
	what := oneLine(leaf.ErrorKind.LocalizedString(p))
	if where == "" {
		return "the arguments: " + what
	}
	return fmt.Sprintf("field %q: %s", where, what)
}

// firstLeaf follows the first cause down to a concrete violation.
func firstLeaf(ve *jsonschema.ValidationError) *jsonschema.ValidationError {
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	return ve
}
