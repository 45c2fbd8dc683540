package demowrite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/mail"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Input limits, in characters: TYPO3's column sizes for the varchar
// fields, a generous bound for the text ones.
const (
	maxLine      = 255
	maxText      = 20000
	maxArguments = 64 << 10
)

// inputError is bad input: one sentence for the caller, returned as an
// error result, never as a protocol error.
type inputError struct{ msg string }

func (e *inputError) Error() string { return e.msg }

func badInput(format string, args ...any) error {
	return &inputError{msg: fmt.Sprintf(format, args...)}
}

// field describes one argument of a tool.
type field struct {
	name string
	kind fieldKind
	// required: the argument must be given.
	required bool
	// min and max bound an integer.
	min, max int64
	// max bounds a string, in characters; a line admits no line break.
	maxLen int
	// nonEmpty: a given string may not be blank.
	nonEmpty bool
	// enum lists the admitted values of a string.
	enum []string
	// email: a given, non-empty string must be a bare address.
	email bool
	// doc is the schema's description.
	doc string
}

type fieldKind int

const (
	kindInt fieldKind = iota
	kindLine
	kindText
)

// args are decoded, validated arguments: int64 or string by field.
type args map[string]any

func (a args) int(name string) int64 {
	v, _ := a[name].(int64)
	return v
}

func (a args) str(name string) (string, bool) {
	v, ok := a[name].(string)
	return v, ok
}

// parseArgs decodes raw tool arguments against fields: a JSON object of
// known fields only, each of its type and within its bounds. Its errors
// are *inputError, one sentence each.
func parseArgs(tool string, raw json.RawMessage, fields []field) (args, error) {
	if len(raw) > maxArguments {
		return nil, badInput("The arguments of %s are larger than %d KiB.", tool, maxArguments>>10)
	}
	var obj map[string]json.RawMessage
	if len(bytes.TrimSpace(raw)) == 0 {
		obj = map[string]json.RawMessage{}
	} else if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, badInput("The arguments of %s must be a JSON object.", tool)
	}
	var unknown []string
	for k := range obj {
		if !slices.ContainsFunc(fields, func(f field) bool { return f.name == k }) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, badInput("%s does not accept the argument %q; it accepts %s.", tool, clip(unknown[0]), names(fields))
	}
	out := args{}
	for _, f := range fields {
		v, ok := obj[f.name]
		if !ok || string(v) == "null" {
			if f.required {
				return nil, badInput("%s needs the argument %s.", tool, f.name)
			}
			continue
		}
		switch f.kind {
		case kindInt:
			var n float64
			if err := json.Unmarshal(v, &n); err != nil || n != math.Trunc(n) || math.Abs(n) > 1<<53 {
				return nil, badInput("The argument %s must be a whole number.", f.name)
			}
			if int64(n) < f.min || int64(n) > f.max {
				return nil, badInput("The argument %s must be between %d and %d.", f.name, f.min, f.max)
			}
			out[f.name] = int64(n)
		default:
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, badInput("The argument %s must be a string.", f.name)
			}
			if err := checkString(f, s); err != nil {
				return nil, err
			}
			out[f.name] = s
		}
	}
	return out, nil
}

func checkString(f field, s string) error {
	if !utf8.ValidString(s) {
		return badInput("The argument %s is not valid UTF-8.", f.name)
	}
	if n := utf8.RuneCountInString(s); n > f.maxLen {
		return badInput("The argument %s is %d characters long; at most %d are allowed.", f.name, n, f.maxLen)
	}
	for _, r := range s {
		if r == '\n' || r == '\t' || r == '\r' {
			if f.kind == kindLine {
				return badInput("The argument %s must be a single line.", f.name)
			}
			continue
		}
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069') {
			return badInput("The argument %s contains a control character.", f.name)
		}
	}
	if f.nonEmpty && strings.TrimSpace(s) == "" {
		return badInput("The argument %s may not be empty.", f.name)
	}
	if len(f.enum) > 0 && !slices.Contains(f.enum, s) {
		return badInput("The argument %s must be one of %s.", f.name, strings.Join(f.enum, ", "))
	}
	if f.email && s != "" {
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s || a.Name != "" {
			return badInput("The argument %s must be an e-mail address such as name@example.org.", f.name)
		}
	}
	return nil
}

func names(fields []field) string {
	var n []string
	for _, f := range fields {
		n = append(n, f.name)
	}
	return strings.Join(n, ", ")
}

// clip shortens a caller's text quoted in a message.
func clip(s string) string {
	if utf8.RuneCountInString(s) <= 40 {
		return s
	}
	return string([]rune(s)[:40]) + "…"
}

// schema is the JSON schema of fields, for tools/list.
func schema(fields []field) json.RawMessage {
	props := map[string]any{}
	var required []string
	for _, f := range fields {
		p := map[string]any{"description": f.doc}
		switch f.kind {
		case kindInt:
			p["type"], p["minimum"], p["maximum"] = "integer", f.min, f.max
		default:
			p["type"], p["maxLength"] = "string", f.maxLen
			if f.nonEmpty {
				p["minLength"] = 1
			}
			if len(f.enum) > 0 {
				p["enum"] = f.enum
			}
		}
		props[f.name] = p
		if f.required {
			required = append(required, f.name)
		}
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	b, _ := json.Marshal(s)
	return b
}
