package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"
)

// Limits of an imported input schema.
const (
	// MaxSchemaDepth is how deeply objects and arrays may nest; the
	// schema itself is level 1.
	MaxSchemaDepth = 12
	// MaxSchemaBytes caps the normalised schema as JSON.
	MaxSchemaBytes = 16 << 10
)

// forbiddenSchemaKeys are keywords that make a schema reach outside
// itself or that providers and our validator do not handle alike. A
// schema that has one anywhere, as a keyword or as a property name, is
// refused: rewriting it would change what the remote tool accepts.
var forbiddenSchemaKeys = []string{
	"$ref", "$dynamicRef", "$recursiveRef", "$defs", "definitions",
	"if", "then", "else", "patternProperties", "propertyNames",
	"dependentSchemas", "dependentRequired", "dependencies", "unevaluatedProperties", "unevaluatedItems",
}

// keptSchemaKeys are the top-level keywords a normalised schema keeps;
// others ($schema, title, examples…) are left out.
var keptSchemaKeys = []string{
	"type", "description", "properties", "required", "additionalProperties", "allOf", "anyOf", "oneOf", "not",
}

// SchemaError says why an input schema was refused.
type SchemaError struct{ Reason string }

func (e *SchemaError) Error() string { return "the input schema " + e.Reason }

func schemaErr(format string, args ...any) error {
	return &SchemaError{Reason: fmt.Sprintf(format, args...)}
}

// NormalizeSchema turns a remote tool's input schema (JSON) into the
// schema t3agent registers, or refuses it. It never repairs:
//
//  1. the schema must be a JSON object whose "type" is exactly "object";
//  2. no forbidden keyword ($ref, $defs, if/then/else, patternProperties…)
//     may appear at the top level;
//  3. only type, description, properties, required, additionalProperties,
//     allOf, anyOf, oneOf and not are kept;
//  4. description must be a string, additionalProperties a boolean,
//     properties an object of objects, required an array of strings;
//  5. nothing below may nest deeper than MaxSchemaDepth or use a
//     forbidden keyword, property names included;
//  6. the result must be valid UTF-8 and at most MaxSchemaBytes.
func NormalizeSchema(raw []byte) (json.RawMessage, error) {
	if !utf8.Valid(raw) {
		return nil, schemaErr("is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, schemaErr("is not valid JSON")
	}
	if dec.More() {
		return nil, schemaErr("is not one JSON value")
	}
	root, ok := v.(map[string]any)
	if !ok {
		return nil, schemaErr("is not a JSON object")
	}
	if t, ok := root["type"].(string); !ok || t != "object" {
		return nil, schemaErr(`must have "type": "object"`)
	}
	for _, k := range forbiddenSchemaKeys {
		if _, ok := root[k]; ok {
			return nil, schemaErr("uses the keyword %q, which t3agent does not accept", k)
		}
	}
	out := make(map[string]any, len(keptSchemaKeys))
	for _, k := range keptSchemaKeys {
		if val, ok := root[k]; ok {
			out[k] = val
		}
	}
	if d, ok := out["description"]; ok {
		if _, ok := d.(string); !ok {
			return nil, schemaErr("has a description that is not a string")
		}
	}
	if ap, ok := out["additionalProperties"]; ok {
		if _, ok := ap.(bool); !ok {
			return nil, schemaErr("has an additionalProperties that is not true or false")
		}
	}
	if p, ok := out["properties"]; ok {
		props, ok := p.(map[string]any)
		if !ok {
			return nil, schemaErr("has properties that are not an object")
		}
		for name, sub := range props {
			if _, ok := sub.(map[string]any); !ok {
				return nil, schemaErr("has property %q whose schema is not an object", remoteText(name, 64))
			}
		}
	}
	if r, ok := out["required"]; ok {
		list, ok := r.([]any)
		if !ok {
			return nil, schemaErr("has a required list that is not an array")
		}
		for _, x := range list {
			if _, ok := x.(string); !ok {
				return nil, schemaErr("has a required entry that is not a string")
			}
		}
	}
	if err := walkSchema(out, 1); err != nil {
		return nil, err
	}
	enc, err := json.Marshal(out)
	if err != nil {
		return nil, schemaErr("cannot be encoded as JSON")
	}
	if len(enc) > MaxSchemaBytes {
		return nil, schemaErr("is %d bytes, more than the %d allowed", len(enc), MaxSchemaBytes)
	}
	return enc, nil
}

// walkSchema checks nesting depth and forbidden keys below the root.
func walkSchema(v any, depth int) error {
	switch x := v.(type) {
	case map[string]any:
		if depth > MaxSchemaDepth {
			return schemaErr("nests deeper than %d levels", MaxSchemaDepth)
		}
		for k, sub := range x {
			if slices.Contains(forbiddenSchemaKeys, k) {
				return schemaErr("uses the keyword %q, which t3agent does not accept", k)
			}
			if err := walkSchema(sub, depth+1); err != nil {
				return err
			}
		}
	case []any:
		if depth > MaxSchemaDepth {
			return schemaErr("nests deeper than %d levels", MaxSchemaDepth)
		}
		for _, sub := range x {
			if err := walkSchema(sub, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}
