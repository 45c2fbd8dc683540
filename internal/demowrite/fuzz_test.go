package demowrite

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParseArgs: any arguments either decode to values of the declared
// kinds within their bounds, or fail with one sentence.
func FuzzParseArgs(f *testing.F) {
	for _, s := range []string{
		`{"uid":2,"title":"About"}`, `{}`, ``, `null`, `[]`, `{"uid":1e300}`, `{"uid":-0}`, `{"title":"\u202e"}`,
		`{"uid":2,"author_email":"a@b.c"}`, `{"pid":6,"header":"x","CType":"text","colPos":0}`, `{"uid":2,"uid":3}`,
		`{"file":1,"alternative":null}`, `{"uid":9007199254740993}`, `{"x":` + strings.Repeat("[", 1000),
	} {
		f.Add(s)
	}
	all := [][]field{pageFields, contentFields, fileFields}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, fields := range all {
			a, err := parseArgs("tool", []byte(raw), fields)
			if err != nil {
				var ie *inputError
				if !errors.As(err, &ie) || !strings.HasSuffix(err.Error(), ".") || strings.Contains(err.Error(), "\n") {
					t.Fatalf("error %q is not one sentence", err)
				}
				continue
			}
			for _, fd := range fields {
				v, ok := a[fd.name]
				if !ok {
					if fd.required {
						t.Fatalf("required %s missing", fd.name)
					}
					continue
				}
				switch fd.kind {
				case kindInt:
					n, isInt := v.(int64)
					if !isInt || n < fd.min || n > fd.max {
						t.Fatalf("%s = %v", fd.name, v)
					}
				default:
					s, isStr := v.(string)
					if !isStr || len([]rune(s)) > fd.maxLen || (fd.kind == kindLine && strings.ContainsAny(s, "\r\n")) {
						t.Fatalf("%s = %q", fd.name, v)
					}
				}
			}
		}
	})
}
