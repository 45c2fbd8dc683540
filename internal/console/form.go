package console

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// field is one input of a typed-input form, from a property of the
// question's JSON Schema.
type field struct {
	Name        string
	Label       string
	Description string
	// Kind is string, number, integer, boolean or enum.
	Kind     string
	Enum     []string
	Required bool
	Value    string
	// Error is the sentence key of a value that does not fit.
	Error string
}

// FormName is the form field that carries the property.
func (f field) FormName() string { return "f." + f.Name }

// ID is the element id of the input.
func (f field) ID() string { return "field-" + f.Name }

type schemaProp struct {
	Type        any    `json:"type"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Enum        []any  `json:"enum"`
	Order       *int   `json:"x-order"`
}

type objectSchema struct {
	Properties map[string]schemaProp `json:"properties"`
	Required   []string              `json:"required"`
}

// fieldsOf turns an object schema into form fields, in the order of
// "required" first, then by name (a JSON object has no order).
func fieldsOf(schema json.RawMessage) []field {
	var s objectSchema
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	req := map[string]int{}
	for i, n := range s.Required {
		req[n] = i + 1
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		ri, rj := req[names[i]], req[names[j]]
		switch {
		case ri > 0 && rj > 0:
			return ri < rj
		case ri > 0 || rj > 0:
			return ri > 0
		}
		return names[i] < names[j]
	})
	out := make([]field, 0, len(names))
	for _, n := range names {
		p := s.Properties[n]
		f := field{Name: n, Label: p.Title, Description: p.Description, Required: req[n] > 0, Kind: typeOf(p.Type)}
		if f.Label == "" {
			f.Label = n
		}
		if len(p.Enum) > 0 {
			f.Kind = "enum"
			for _, e := range p.Enum {
				f.Enum = append(f.Enum, fmt.Sprint(e))
			}
		}
		out = append(out, f)
	}
	return out
}

// typeOf is a schema type's form kind; a list of types takes its first
// non-null one.
func typeOf(t any) string {
	switch v := t.(type) {
	case string:
		switch v {
		case "number", "integer", "boolean":
			return v
		}
	case []any:
		for _, x := range v {
			if s, ok := x.(string); ok && s != "null" {
				return typeOf(s)
			}
		}
	}
	return "string"
}

// answerOf reads the posted form into the JSON object the question asks
// for. Fields that do not fit get their Error set and no answer is made.
func answerOf(schema json.RawMessage, form url.Values) ([]field, json.RawMessage, bool) {
	fields := fieldsOf(schema)
	out := map[string]any{}
	var enums map[string][]any
	var s objectSchema
	if json.Unmarshal(schema, &s) == nil {
		enums = map[string][]any{}
		for n, p := range s.Properties {
			enums[n] = p.Enum
		}
	}
	ok := true
	for i := range fields {
		f := &fields[i]
		raw := strings.TrimSpace(form.Get(f.FormName()))
		f.Value = raw
		if f.Kind == "boolean" {
			out[f.Name] = raw == "true" || raw == "on"
			continue
		}
		if raw == "" {
			if f.Required {
				f.Error, ok = "form.required", false
			}
			continue
		}
		switch f.Kind {
		case "number":
			n, err := strconv.ParseFloat(raw, 64)
			if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
				f.Error, ok = "form.number", false
				continue
			}
			out[f.Name] = n
		case "integer":
			n, err := strconv.ParseInt(raw, 10, 64)
			if err != nil {
				f.Error, ok = "form.integer", false
				continue
			}
			out[f.Name] = n
		case "enum":
			found := false
			for _, e := range enums[f.Name] {
				if fmt.Sprint(e) == raw {
					out[f.Name], found = e, true
					break
				}
			}
			if !found {
				f.Error, ok = "form.enum", false
			}
		default:
			out[f.Name] = raw
		}
	}
	if !ok {
		return fields, nil, false
	}
	b, err := json.Marshal(out)
	if err != nil {
		return fields, nil, false
	}
	return fields, b, true
}
