package tca

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// exportPHP writes a generic value the way PHP's var_export does, so tests
// can round-trip values and check the parser against the real fixture byte
// for byte.
func exportPHP(v any) string {
	var b strings.Builder
	writePHP(&b, v, 0)
	return b.String()
}

func writePHP(b *strings.Builder, v any, indent int) {
	switch x := v.(type) {
	case nil:
		b.WriteString("NULL")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int64:
		if x == math.MinInt64 {
			b.WriteString("-9223372036854775807-1")
		} else {
			b.WriteString(strconv.FormatInt(x, 10))
		}
	case float64:
		b.WriteString(phpFloat(x))
	case string:
		b.WriteString(phpQuote(x))
	case *Array:
		pad := strings.Repeat(" ", indent)
		b.WriteString("array (\n")
		for i, k := range x.Keys {
			b.WriteString(pad + "  ")
			if k.IsInt {
				b.WriteString(strconv.FormatInt(k.Int, 10))
			} else {
				b.WriteString(phpQuote(k.Str))
			}
			b.WriteString(" => ")
			if _, nested := x.Values[i].(*Array); nested {
				b.WriteString("\n" + pad + "  ")
			}
			writePHP(b, x.Values[i], indent+2)
			b.WriteString(",\n")
		}
		b.WriteString(pad + ")")
	default:
		panic(fmt.Sprintf("exportPHP: unexpected %T", v))
	}
}

func phpQuote(s string) string {
	s = strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s)
	return "'" + strings.ReplaceAll(s, "\x00", `' . "\0" . '`) + "'"
}

func phpFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "INF"
	case math.IsInf(f, -1):
		return "-INF"
	case math.IsNaN(f):
		return "NAN"
	}
	e := strconv.FormatFloat(f, 'E', -1, 64)
	mant, exp, _ := strings.Cut(e, "E")
	n, _ := strconv.Atoi(exp)
	if n < -4 || n >= 15 {
		if !strings.Contains(mant, ".") {
			mant += ".0"
		}
		sign := "+"
		if n < 0 {
			sign, n = "-", -n
		}
		return mant + "E" + sign + strconv.Itoa(n)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// sameValue is reflect.DeepEqual for generic values, except that NaN
// equals NaN and a float's sign of zero counts.
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && (math.Float64bits(x) == math.Float64bits(y) || (math.IsNaN(x) && math.IsNaN(y)))
	case *Array:
		y, ok := b.(*Array)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for i := range x.Keys {
			if x.Keys[i] != y.Keys[i] || !sameValue(x.Values[i], y.Values[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// firstDiff names the first place two generic values differ, for failure
// messages on large trees.
func firstDiff(a, b any, path string) string {
	x, xok := a.(*Array)
	y, yok := b.(*Array)
	if !xok || !yok {
		if !sameValue(a, b) {
			return fmt.Sprintf("%s: %#v (%T) != %#v (%T)", path, a, a, b, b)
		}
		return ""
	}
	for i := 0; i < x.Len() && i < y.Len(); i++ {
		if x.Keys[i] != y.Keys[i] {
			return fmt.Sprintf("%s: key #%d is %q vs %q", path, i, x.Keys[i], y.Keys[i])
		}
		if d := firstDiff(x.Values[i], y.Values[i], path+"/"+x.Keys[i].String()); d != "" {
			return d
		}
	}
	if x.Len() != y.Len() {
		return fmt.Sprintf("%s: %d entries vs %d", path, x.Len(), y.Len())
	}
	return ""
}
