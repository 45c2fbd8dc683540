package tca

import (
	"math"
	"strconv"
)

// Key is a PHP array key: an integer or a string. PHP stores a string key
// that spells a canonical decimal integer ("7", "-3", not "07" or "+1") as
// that integer; StrKey applies the same rule so values from var_export and
// from JSON (where every key is a string) compare equal.
type Key struct {
	Str   string // the key when IsInt is false
	Int   int64  // the key when IsInt is true
	IsInt bool
}

// IntKey returns an integer key.
func IntKey(i int64) Key { return Key{Int: i, IsInt: true} }

// StrKey returns the key PHP would store for the string s.
func StrKey(s string) Key {
	if i, ok := canonicalInt(s); ok {
		return IntKey(i)
	}
	return Key{Str: s}
}

// String returns the key as PHP would print it in a string context.
func (k Key) String() string {
	if k.IsInt {
		return strconv.FormatInt(k.Int, 10)
	}
	return k.Str
}

// canonicalInt reports whether s is PHP's canonical spelling of an int
// (ZEND_HANDLE_NUMERIC_STR): optional '-', no leading zeros, no "-0",
// within int64.
func canonicalInt(s string) (int64, bool) {
	if s == "" || len(s) > 20 {
		return 0, false
	}
	d := s
	if d[0] == '-' {
		d = d[1:]
	}
	if d == "" || (d[0] == '0' && (len(d) > 1 || len(s) != len(d))) {
		return 0, false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return 0, false
		}
	}
	i, err := strconv.ParseInt(s, 10, 64)
	return i, err == nil
}

// Array is an ordered PHP array. Values are nil, bool, int64, float64,
// string or *Array. Keys are unique. The zero value is an empty array.
type Array struct {
	Keys   []Key
	Values []any
}

// Len returns the number of entries.
func (a *Array) Len() int {
	if a == nil {
		return 0
	}
	return len(a.Keys)
}

// Get returns the value stored under name (matched as StrKey(name) would
// store it, so Get("0") finds the integer key 0).
func (a *Array) Get(name string) (any, bool) {
	if a == nil {
		return nil, false
	}
	k := StrKey(name)
	for i := range a.Keys {
		if a.Keys[i] == k {
			return a.Values[i], true
		}
	}
	return nil, false
}

// Array returns the value under name if it is an array, else nil.
func (a *Array) Array(name string) *Array {
	v, _ := a.Get(name)
	sub, _ := v.(*Array)
	return sub
}

// IsList reports whether the keys are exactly 0, 1, 2, … in order, which
// is when PHP's json_encode writes a JSON list. The empty array is a list.
func (a *Array) IsList() bool {
	for i, k := range a.Keys {
		if !k.IsInt || k.Int != int64(i) {
			return false
		}
	}
	return true
}

// Plain converts a generic value to plain Go values: an *Array that IsList
// becomes []any (an empty one []any{}), any other *Array map[string]any
// with keys in their string form; scalars are returned unchanged.
func Plain(v any) any {
	a, ok := v.(*Array)
	if !ok {
		return v
	}
	if a.IsList() {
		out := make([]any, len(a.Values))
		for i, e := range a.Values {
			out[i] = Plain(e)
		}
		return out
	}
	return plainMap(a)
}

// plainMap is Plain for an array that must come out as a map even when its
// keys look like a list.
func plainMap(a *Array) map[string]any {
	out := make(map[string]any, a.Len())
	if a == nil {
		return out
	}
	for i, k := range a.Keys {
		out[k.String()] = Plain(a.Values[i])
	}
	return out
}

// builder appends entries with PHP's literal semantics: a repeated key
// overwrites the earlier value in place. Small arrays (most of TCA) are
// checked by scanning; an index map is built only when an array grows.
type builder struct {
	a   *Array
	idx map[Key]int
}

const indexThreshold = 16

func (b *builder) set(k Key, v any) {
	a := b.a
	if b.idx != nil {
		if i, ok := b.idx[k]; ok {
			a.Values[i] = v
			return
		}
		b.idx[k] = len(a.Keys)
	} else {
		for i := range a.Keys {
			if a.Keys[i] == k {
				a.Values[i] = v
				return
			}
		}
		if len(a.Keys) == indexThreshold {
			b.idx = make(map[Key]int, 2*indexThreshold)
			for i, k := range a.Keys {
				b.idx[k] = i
			}
			b.idx[k] = len(a.Keys)
		}
	}
	a.Keys = append(a.Keys, k)
	a.Values = append(a.Values, v)
}

// phpString converts a scalar as PHP's string cast does, closely enough for
// labels and item values (floats use the shortest exact form).
func phpString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		switch {
		case math.IsInf(x, 1):
			return "INF"
		case math.IsInf(x, -1):
			return "-INF"
		case math.IsNaN(x):
			return "NAN"
		}
		return strconv.FormatFloat(x, 'G', -1, 64)
	case bool:
		if x {
			return "1"
		}
		return ""
	}
	return ""
}

// truthy is PHP's boolean conversion.
func truthy(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case int64:
		return x != 0
	case float64:
		return x != 0
	case string:
		return x != "" && x != "0"
	case *Array:
		return x.Len() > 0
	}
	return false
}

// intOf is PHP's integer conversion for the values TCA uses (numeric
// strings with surrounding blanks, bools, floats).
func intOf(v any) int {
	switch x := v.(type) {
	case bool:
		if x {
			return 1
		}
	case int64:
		return int(x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0
		}
		return int(x)
	case string:
		s := x
		for len(s) > 0 && (s[0] == ' ' || s[0] == '\t' || s[0] == '\n') {
			s = s[1:]
		}
		end := 0
		if end < len(s) && (s[end] == '-' || s[end] == '+') {
			end++
		}
		for end < len(s) && s[end] >= '0' && s[end] <= '9' {
			end++
		}
		i, _ := strconv.Atoi(s[:end])
		return i
	}
	return 0
}
