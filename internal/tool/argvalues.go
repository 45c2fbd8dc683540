package tool

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// ArgError is a refused argument. Its text is a whole sentence the model
// reads as the error result.
type ArgError string

func (e ArgError) Error() string { return string(e) }

// ArgString reads an optional string argument: "" and false when it is
// absent or null, an error sentence when it is something else.
func ArgString(args map[string]any, name string) (string, bool, error) {
	v, ok := args[name]
	if !ok || v == nil {
		return "", false, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", true, ArgError(fmt.Sprintf("Argument %s must be a string.", name))
	}
	return s, true, nil
}

// ArgInt reads an optional whole-number argument within [lo, hi], def when
// it is absent or null. Numbers arrive as json.Number from the gate's
// invoke seam and as float64 or int from other decoders; a fraction, a
// string or a value out of range is refused with a sentence, never
// guessed at.
func ArgInt(args map[string]any, name string, def, lo, hi int64) (int64, bool, error) {
	v, ok := args[name]
	if !ok || v == nil {
		return def, false, nil
	}
	n, ok := wholeNumber(v)
	if !ok {
		return 0, true, ArgError(fmt.Sprintf("Argument %s must be a whole number.", name))
	}
	if n < lo || n > hi {
		return 0, true, ArgError(fmt.Sprintf("Argument %s must be between %d and %d.", name, lo, hi))
	}
	return n, true, nil
}

func wholeNumber(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int64:
		return n, true
	case float64:
		if n != math.Trunc(n) || math.Abs(n) > 1<<53 {
			return 0, false
		}
		return int64(n), true
	case json.Number:
		if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			return i, true
		}
		f, err := n.Float64()
		if err != nil {
			return 0, false
		}
		return wholeNumber(f)
	}
	return 0, false
}

// Line makes a site-supplied string (a title, a file name, a column
// value) safe to put on one output line: control and format characters
// (bidi overrides, zero-width characters) are dropped, runs of blanks
// collapse to one space, and it is cut to limit runes with an ellipsis.
func Line(s string, limit int) string {
	var b strings.Builder
	space, n := false, 0
	for _, r := range s {
		if unicode.IsControl(r) || unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if unicode.Is(unicode.Cf, r) {
			continue
		}
		if space {
			b.WriteByte(' ')
			n++
			space = false
		}
		if n >= limit {
			b.WriteString("…")
			break
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}
