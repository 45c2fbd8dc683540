package tool_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/tool"
)

func TestArgInt(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		v     any
		want  int64
		given bool
		err   string
	}{
		{nil, 20, false, ""},
		{json.Number("7"), 7, true, ""},
		{json.Number("7.0"), 7, true, ""},
		{float64(50), 50, true, ""},
		{3, 3, true, ""},
		{json.Number("7.5"), 0, true, "whole number"},
		{"7", 0, true, "whole number"},
		{json.Number("51"), 0, true, "between 1 and 50"},
		{json.Number("0"), 0, true, "between 1 and 50"},
		{json.Number("1e300"), 0, true, "whole number"},
	} {
		args := map[string]any{}
		if c.v != nil {
			args["limit"] = c.v
		}
		got, given, err := tool.ArgInt(args, "limit", 20, 1, 50)
		var ae tool.ArgError
		switch {
		case c.err == "" && (err != nil || got != c.want || given != c.given):
			t.Errorf("%v: %d, %v, %v", c.v, got, given, err)
		case c.err != "" && (!errors.As(err, &ae) || !strings.Contains(err.Error(), c.err) || !strings.HasSuffix(err.Error(), ".")):
			t.Errorf("%v: error %v, want a sentence with %q", c.v, err, c.err)
		}
	}
	if s, given, err := tool.ArgString(map[string]any{"q": 5}, "q"); err == nil || !given || s != "" {
		t.Errorf("ArgString of a number: %q %v %v", s, given, err)
	}
}

func TestLine(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in    string
		limit int
		want  string
	}{
		{"  a\n\tb  ", 10, "a b"},
		{"x\u202eevil\u200by", 10, "xevily"},
		{"abcdef", 3, "abc…"},
		{"\x00\x1b[31mred", 10, "[31mred"},
	} {
		if got := tool.Line(c.in, c.limit); got != c.want {
			t.Errorf("Line(%q, %d) = %q, want %q", c.in, c.limit, got, c.want)
		}
	}
}
