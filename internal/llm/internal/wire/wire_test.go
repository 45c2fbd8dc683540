package wire

import (
	"encoding/json"
	"testing"

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
	for in, want := range cases {
		got, err := json.Marshal(Schema(json.RawMessage(in)))
		if err != nil || string(got) != want {
			t.Errorf("Schema(%q) = %s (%v), want %s", in, got, err, want)
		}
	}
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
