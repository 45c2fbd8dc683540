// Package introspect holds what the admin-only introspection tools
// (groups code, system and configuration's get_site_config) share: their
// own admin check behind the gate's, argument reading, redaction of every
// text they return, and bounded output.
//
// Redaction uses t3agent's one credential rule: a value shown under a
// name is hidden when package credential says the name holds a credential
// and the value is one; free text (log messages, source lines, response
// bodies) goes through the mandatory secret redaction
// (guardrail.RedactSecrets: assignments to credential names, user:pass@
// in URLs, Bearer and vendor token shapes, private keys).
package introspect

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/t3agent/t3agent/internal/guardrail"
	"github.com/t3agent/t3agent/internal/guardrail/credential"
	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/tool"
)

// Denied is the neutral refusal of a non-admin who reached a tool whose
// gate registration lost its admin-only flag.
const Denied = "Not found or not permitted."

// MaxBytes caps every answer (the reference's 50 kB).
const MaxBytes = 50000

// Authorize is the tools' own admin check: no user gets
// readpolicy.DeniedUser, a non-admin Denied.
func Authorize(call tool.Call) (tool.Result, bool) {
	switch {
	case call.Actor == nil:
		return tool.Errorf("%s", readpolicy.DeniedUser), false
	case !call.Actor.Admin:
		return tool.Errorf("%s", Denied), false
	}
	return tool.Result{}, true
}

// Int reads an optional whole number, def when absent, and refuses one
// outside [lo, hi] with a sentence.
func Int(args map[string]any, name string, def, lo, hi int64) (int64, error) {
	v, ok := args[name]
	if !ok || v == nil {
		return def, nil
	}
	var n int64
	bad := fmt.Errorf("%s must be a whole number from %d to %d", name, lo, hi)
	switch x := v.(type) {
	case json.Number:
		i, err := strconv.ParseInt(string(x), 10, 64)
		if err != nil {
			f, err := x.Float64()
			if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
				return 0, bad
			}
			i = int64(f)
		}
		n = i
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
			return 0, bad
		}
		n = int64(x)
	case int:
		n = int64(x)
	case int64:
		n = x
	default:
		return 0, bad
	}
	if n < lo || n > hi {
		return 0, bad
	}
	return n, nil
}

// String reads an optional string ("" when absent), trimmed.
func String(args map[string]any, name string) (string, error) {
	switch v := args[name].(type) {
	case nil:
		return "", nil
	case string:
		return strings.TrimSpace(v), nil
	}
	return "", fmt.Errorf("%s must be a string", name)
}

// Bool reads an optional boolean (false when absent).
func Bool(args map[string]any, name string) (bool, error) {
	switch v := args[name].(type) {
	case nil:
		return false, nil
	case bool:
		return v, nil
	}
	return false, fmt.Errorf("%s must be true or false", name)
}

// Text redacts free text.
func Text(s string) string {
	out, _ := guardrail.RedactSecrets(s)
	return out
}

// Redacted is what a hidden value shows.
const Redacted = "[redacted]"

// Value returns value as shown under name: Redacted when the name holds
// a credential and the value is one, else the redacted text.
func Value(name, value string) string {
	if credential.Name(name).Hides(value) {
		return Redacted
	}
	return Text(value)
}

// Cut shortens s to at most n characters, marking the cut with "…", and
// folds line breaks into spaces.
func Cut(s string, n int) string {
	s = strings.Join(strings.Fields(strings.ReplaceAll(strings.ToValidUTF8(s, "?"), "\x00", "")), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// Date prints t in UTC as the reference does (Y-m-d H:i).
func Date(t time.Time) string { return t.UTC().Format("2006-01-02 15:04") + " UTC" }

// Unix prints a UNIX timestamp with Date, or "never" for 0.
func Unix(ts int64) string {
	if ts <= 0 {
		return "never"
	}
	return Date(time.Unix(ts, 0))
}

// Output builds an answer of at most maxLines lines and MaxBytes bytes;
// what does not fit is counted and announced at the end.
type Output struct {
	b        strings.Builder
	lines    int
	maxLines int
	cut      int
}

// NewOutput returns an output of at most maxLines lines.
func NewOutput(maxLines int) *Output { return &Output{maxLines: maxLines} }

// Line adds one line; it reports false once the answer is full.
func (o *Output) Line(format string, args ...any) bool {
	s := format
	if len(args) > 0 {
		s = fmt.Sprintf(format, args...)
	}
	if o.lines >= o.maxLines || o.b.Len()+len(s)+1 > MaxBytes-200 {
		o.cut++
		return false
	}
	if o.lines > 0 {
		o.b.WriteByte('\n')
	}
	o.b.WriteString(s)
	o.lines++
	return true
}

// Full reports whether no further line fits.
func (o *Output) Full() bool { return o.lines >= o.maxLines || o.b.Len() > MaxBytes-400 }

// String returns the answer with the cut announced.
func (o *Output) String() string {
	if o.cut > 0 {
		return o.b.String() + fmt.Sprintf("\n… %d more lines not shown (answer capped).", o.cut)
	}
	return o.b.String()
}

// Spec fills the fields the introspection tools share: read-only,
// admin-only, the given group, class and default.
func Spec(name, group string, class tool.DataClass, enabled bool, description, schema string) tool.Spec {
	return tool.Spec{
		Name:             name,
		Description:      description,
		InputSchema:      json.RawMessage(schema),
		Group:            group,
		Effect:           tool.ReadOnly,
		DataClass:        class,
		AdminOnly:        true,
		EnabledByDefault: enabled,
	}
}
