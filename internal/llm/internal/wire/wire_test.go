package wire

import (
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSchema(t *testing.T) {
	cases := map[string]string{
		``:                                       `{"properties":{},"type":"object"}`,
		`not json`:                               `{"properties":{},"type":"object"}`,
		`{"type":"object","properties":[]}`:      `{"properties":{},"type":"object"}`,
		`{"type":"object","properties":null}`:    `{"properties":{},"type":"object"}`,
		`{"properties":{"a":{"type":"string"}}}`: `{"properties":{"a":{"type":"string"}},"type":"object"}`,
		`{"type":"object","properties":{},"required":["a"],"$defs":{}}`: `{"$defs":{},"properties":{},"required":["a"],"type":"object"}`,
	}
	cases[`{"type":"object","properties":[ ]}`] = `{"properties":{},"type":"object"}`
	cases[`[1,2]`] = `{"properties":{},"type":"object"}`
	cases[`{"properties":[{"a":1}]}`] = `{"properties":[{"a":1}],"type":"object"}`
	for in, want := range cases {
		got, err := json.Marshal(Schema(json.RawMessage(in)))
		if err != nil || string(got) != want {
			t.Errorf("Schema(%q) = %s (%v), want %s", in, got, err, want)
		}
		// RawSchema encodes to the same JSON, whitespace aside.
		got, err = json.Marshal(RawSchema(json.RawMessage(in)))
		if err != nil || string(got) != want {
			t.Errorf("RawSchema(%q) = %s (%v), want %s", in, got, err, want)
		}
	}
}

// FuzzRawSchema: for any input the raw form encodes to the same JSON as
// the decoded one.
func FuzzRawSchema(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"properties":[]}`, `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, `null`, `[]`, `{"properties":null}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		a, errA := json.Marshal(Schema(json.RawMessage(in)))
		b, errB := json.Marshal(RawSchema(json.RawMessage(in)))
		if errA != nil || errB != nil {
			t.Fatalf("encode: %v, %v", errA, errB)
		}
		if !utf8.Valid(b) {
			t.Fatalf("RawSchema(%q) encodes to invalid UTF-8: %q", in, b)
		}
		var va, vb any
		if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil || !reflect.DeepEqual(va, vb) {
			t.Fatalf("Schema(%q) = %s, RawSchema = %s", in, a, b)
		}
	})
}

func TestArgs(t *testing.T) {
	for in, want := range map[string]string{``: `{}`, `  `: `{}`, `{"a":1}`: `{"a":1}`, `{"a":`: `{"a":`} {
		if got := ArgsText(in); got != want {
			t.Errorf("ArgsText(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{``: `{}`, `{"a":`: `{}`, `[1]`: `{}`, `null`: `{}`, `{"a":1}`: `{"a":1}`} {
		got, _ := json.Marshal(ObjectArgs(in))
		if string(got) != want {
			t.Errorf("ObjectArgs(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestRedact(t *testing.T) {
	const key = "sk-a+b/c=d"
	got := Redact("key sk-a+b/c=d and escaped sk-a%2Bb%2Fc%3Dd, short ab", key, "ab", "")
	if got != "key [redacted] and escaped [redacted], short ab" {
		t.Errorf("Redact = %q", got)
	}
}

func TestCallID(t *testing.T) {
	if CallID("", 2) != "call_2" || CallID("x", 2) != "x" {
		t.Error("CallID")
	}
}
