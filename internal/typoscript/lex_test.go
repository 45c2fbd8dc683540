package typoscript_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/typoscript"
)

// line is a compact expectation for one tokenized line.
type line struct {
	kind  typoscript.LineKind
	num   int
	path  string // dotted, segments joined with "|"
	src   string
	value string
}

func brief(ls []typoscript.Line) []line {
	out := make([]line, len(ls))
	for i, l := range ls {
		v := l.Value
		if l.Kind == typoscript.LineFunction {
			v = l.Func + "(" + l.Value + ")"
		}
		if l.Kind == typoscript.LineInvalid {
			v = l.Problem
		}
		src := strings.Join(l.Source, "|")
		if l.Relative {
			src = "." + src
		}
		out[i] = line{kind: l.Kind, num: l.Num, path: strings.Join(l.Path, "|"), src: src, value: v}
	}
	return out
}

func TestTokenize(t *testing.T) {
	t.Parallel()
	const (
		E   = typoscript.LineEmpty
		C   = typoscript.LineComment
		IF  = typoscript.LineCondition
		EL  = typoscript.LineElse
		END = typoscript.LineConditionStop
		BO  = typoscript.LineBlockOpen
		BC  = typoscript.LineBlockClose
		A   = typoscript.LineAssign
		CP  = typoscript.LineCopy
		REF = typoscript.LineReference
		U   = typoscript.LineUnset
		F   = typoscript.LineFunction
		IM  = typoscript.LineImport
		IO  = typoscript.LineImportOld
		BAD = typoscript.LineInvalid
	)
	cases := []struct {
		name string
		src  string
		want []line
	}{
		{"assignment keeps the rest of the line verbatim", "  page.10.value = Hello # not a comment  ",
			[]line{{A, 1, "page|10|value", "", "Hello # not a comment  "}}},
		{"empty value", "a.b =", []line{{A, 1, "a|b", "", ""}}},
		{"escaped dot and empty segments", `my\.key..x = 1`, []line{{A, 1, "my.key|x", "", "1"}}},
		{"comments", "# a\n// b\n/* c */\n  /* d\n e\n f */\ng = 1",
			[]line{{C, 1, "", "", ""}, {C, 2, "", "", ""}, {C, 3, "", "", ""}, {C, 4, "", "", ""}, {A, 7, "g", "", "1"}}},
		{"a multi-line comment ends only at a line ending with */", "/* a */ b\nc = 1\nd */",
			[]line{{C, 1, "", "", ""}}},
		{"blocks and trailing comments", "a {  # x\n  b = 1\n} // y\nc { }\nd {}",
			[]line{{BO, 1, "a", "", ""}, {A, 2, "b", "", "1"}, {BC, 3, "", "", ""}, {BO, 4, "c", "", ""},
				{BC, 4, "", "", ""}, {BO, 5, "d", "", ""}, {BC, 5, "", "", ""}}},
		{"operators", "a < b.c # copy\na < .rel\nb =< lib.x\nc >\nd := addToList(5,(6))",
			[]line{{CP, 1, "a", "b|c", ""}, {CP, 2, "a", ".rel", ""}, {REF, 3, "b", "lib|x", ""}, {U, 4, "c", "", ""},
				{F, 5, "d", "", "addToList(5,(6))"}}},
		{"assignment starting with < is a value", "a = <div>", []line{{A, 1, "a", "", "<div>"}}},
		{"conditions", "[tree.level == 1]\n[else]\n[END] x\n[global]\n[a[1] == 2] comment",
			[]line{{IF, 1, "", "", "tree.level == 1"}, {EL, 2, "", "", ""}, {END, 3, "", "", ""}, {END, 4, "", "", ""},
				{IF, 5, "", "", "a[1] == 2"}}},
		{"broken conditions", "[]\n[foo", []line{{BAD, 1, "", "", typoscript.ProblemEmptyCondition},
			{BAD, 2, "", "", typoscript.ProblemUnclosedCond}}},
		{"imports", "@import 'EXT:a/b.typoscript'\n@import \"./c\" # x\n@import 'open\n@import x",
			[]line{{IM, 1, "", "", "EXT:a/b.typoscript"}, {IM, 2, "", "", "./c"}, {IM, 3, "", "", "open"},
				{BAD, 4, "", "", typoscript.ProblemBadImport}}},
		{"legacy include", `<INCLUDE_TYPOSCRIPT: source="FILE:EXT:a/b.txt">`,
			[]line{{IO, 1, "", "", ` source="FILE:EXT:a/b.txt"`}}},
		{"multi-line value", "a (\n  line 1\n\n  line 2\n  )\nb = 2",
			[]line{{A, 1, "a", "", "  line 1\n\n  line 2"}, {A, 6, "b", "", "2"}}},
		{"multi-line value with text on the first line", "a ( x\ny\n)", []line{{A, 1, "a", "", " x\ny"}}},
		{"multi-line value on one line", "a (ab)\nb (a)", []line{{A, 1, "a", "", "ab"},
			{BAD, 2, "", "", typoscript.ProblemEmptyValue}}},
		{"multi-line value keeps CRLF", "a (\r\nx\r\ny\r\n)\r\n", []line{{A, 1, "a", "", "x\r\ny"}}},
		{"unclosed multi-line value", "a (\nb = 1", []line{{BAD, 1, "", "", typoscript.ProblemUnclosedValue}}},
		{"invalid lines", "foo\nfoo # c\nfoo bar = 1\nfoo :=\nfoo := x\nfoo <",
			[]line{{BAD, 1, "", "", typoscript.ProblemNoOperator}, {BAD, 2, "", "", typoscript.ProblemTrailingComment},
				{BAD, 3, "", "", typoscript.ProblemUnknownOperator}, {BAD, 4, "", "", typoscript.ProblemBadFunction},
				{BAD, 5, "", "", typoscript.ProblemBadFunction}, {BAD, 6, "", "", typoscript.ProblemEmptySource}}},
		{"empty lines count, an empty last line does not", "a = 1\n\n   \n", []line{{A, 1, "a", "", "1"}, {E, 2, "", "", ""}, {E, 3, "", "", ""}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := brief(typoscript.Tokenize(c.src, typoscript.Limits{}))
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("Tokenize(%q)\n got  %+v\n want %+v", c.src, got, c.want)
			}
		})
	}
}
