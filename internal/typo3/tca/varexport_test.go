package tca

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/dbtest"
)

func fixturePath(t testing.TB) string {
	return filepath.Join(dbtest.TYPO3Material(t), "tca-cache-fixture", "var", "cache", "code", "core", "tca_base_0123456789abcdef.php")
}

func readFixture(t testing.TB) []byte {
	t.Helper()
	src, err := os.ReadFile(fixturePath(t))
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func arr(kv ...any) *Array {
	a := &Array{}
	for i := 0; i < len(kv); i += 2 {
		var k Key
		switch x := kv[i].(type) {
		case int:
			k = IntKey(int64(x))
		case string:
			k = Key{Str: x}
		}
		a.Keys = append(a.Keys, k)
		a.Values = append(a.Values, kv[i+1])
	}
	return a
}

func TestParseVarExportValues(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, src string
		want      any
	}{
		{"true", "true", true},
		{"keywords ignore case like PHP", "array ( 0 => TRUE, 1 => False, 2 => Null )", arr(0, true, 1, false, 2, nil)},
		{"NULL", "NULL", nil},
		{"negative int", "-42", int64(-42)},
		{"zero", "0", int64(0)},
		{"PHP_INT_MAX", "9223372036854775807", int64(math.MaxInt64)},
		{"PHP_INT_MIN as var_export writes it", "-9223372036854775807-1", int64(math.MinInt64)},
		{"int beyond int64 is a float, as in PHP", "9223372036854775808", float64(9223372036854775808)},
		{"float", "1.9047619047619047", 1.9047619047619047},
		{"integral float", "1.0", 1.0},
		{"exponent", "1.0E+25", 1e25},
		{"negative exponent", "-2.5E-7", -2.5e-7},
		{"INF", "INF", math.Inf(1)},
		{"-INF", "-INF", math.Inf(-1)},
		{"NAN", "NAN", math.NaN()},
		{"negative zero", "-0.0", math.Copysign(0, -1)},
		{"escapes", `'a\\b\'c'`, `a\b'c`},
		{"other backslashes stay literal", `'C:\n\x'`, `C:\n\x`},
		{"multi-line string", "'a\nb'", "a\nb"},
		{"NUL via concatenation", `'' . "\0" . 'x' . "\0" . ''`, "\x00x\x00"},
		{"UTF-8", "'Übersicht ✓'", "Übersicht ✓"},
		{"empty array", "array (\n)", &Array{}},
		{"var_export layout", "array (\n  'a' => \n  array (\n    0 => 'x',\n  ),\n  -3 => 1,\n)", arr("a", arr(0, "x"), -3, int64(1))},
		{"last comma optional", "array('a'=>1)", arr("a", int64(1))},
		{"numeric string keys become ints", "array ( '5' => 1, '05' => 2, '-7' => 3, '-0' => 4 )",
			arr(5, int64(1), "05", int64(2), -7, int64(3), "-0", int64(4))},
		{"repeated key overwrites in place", "array ( 'a' => 1, 'b' => 2, 'a' => 3 )", arr("a", int64(3), "b", int64(2))},
		{"comments are skipped", "array ( # one\n 'a' /* two */ => // three\n 1 )", arr("a", int64(1))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseVarExport([]byte(c.src))
			if err != nil {
				t.Fatalf("ParseVarExport(%q): %v", c.src, err)
			}
			if !sameValue(got, c.want) {
				t.Fatalf("ParseVarExport(%q) = %#v, want %#v", c.src, got, c.want)
			}
		})
	}
}

func TestRepeatedKeysInLargeArray(t *testing.T) {
	t.Parallel()
	// Past indexThreshold entries the builder switches to a map; the
	// overwrite-in-place rule must hold on both sides of that switch.
	var b strings.Builder
	b.WriteString("array (")
	for i := range 3 * indexThreshold {
		b.WriteString("'k" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + "' => 0, ")
	}
	b.WriteString("'kaa' => 1, 'kba' => 2, ")
	b.WriteString(")")
	v, err := ParseVarExport([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	a := v.(*Array)
	if a.Len() != 3*indexThreshold {
		t.Fatalf("len = %d, want %d", a.Len(), 3*indexThreshold)
	}
	if got, _ := a.Get("kaa"); got != int64(1) || a.Keys[0].Str != "kaa" {
		t.Errorf("first key: %v = %v", a.Keys[0], got)
	}
	if got, _ := a.Get("kba"); got != int64(2) || a.Keys[1].Str != "kba" {
		t.Errorf("second key: %v = %v", a.Keys[1], got)
	}
}

func TestParseVarExportErrors(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("array(0=>", maxDepth+1) + "1" + strings.Repeat(")", maxDepth+1)
	cases := []struct {
		name, src  string
		line, col  int
		msgContain string
	}{
		{"empty input", "", 1, 1, "expected a value, found end of input"},
		{"unclosed array", "array (\n  'a' => 1,\n", 1, 1, "array ( is never closed"},
		{"missing arrow", "array (\n  'a' => 1,\n  'b' 2,\n)", 3, 7, `expected => after the key, found "2"`},
		{"unclosed string", "array (\n  'a => 1,\n)", 2, 3, "string is never closed"},
		{"float key", "array ( 1.5 => 1 )", 1, 9, "keys must be quoted strings or integers"},
		{"bare word key", "array ( a => 1 )", 1, 9, `expected a quoted string or integer key, found "a"`},
		{"missing value", "array ( 'a' => )", 1, 16, `expected a value, found ")"`},
		{"missing comma", "array ( 'a' => 1 'b' => 2 )", 1, 18, "expected , or ) after an array entry"},
		{"object cast", "array (\n  'o' => (object) array(\n  ),\n)", 2, 10, `objects are not allowed in TCA, found a "(object)" cast`},
		{"__set_state object", `\Foo\Bar::__set_state(array())`, 1, 1, `found class reference "\Foo\Bar::__set_state"`},
		{"enum case", "array ( 'e' => \\Foo\\Suit::Hearts )", 1, 16, `class reference "\Foo\Suit::Hearts"`},
		{"short array syntax", "[1, 2]", 1, 1, "var_export writes arrays as array ( … )"},
		{"octal-looking number", "array ( 'a' => 007 )", 1, 16, "leading zeros"},
		{"bad exponent", "array ( 'a' => 1e )", 1, 16, "malformed number"},
		{"number glued to word", "array ( 'a' => 12px )", 1, 16, "malformed number"},
		{"double-quoted string", `array ( 'a' => "x" )`, 1, 16, `double-quoted strings other than "\0"`},
		{"inf is case-sensitive", "array ( 'a' => inf )", 1, 16, `expected a value, found "inf"`},
		{"dangling concatenation", "'a' . 1", 1, 7, "expected a string after the . operator"},
		{"unclosed comment", "array ( 'a' => 1 /* note", 1, 18, "a /* comment that is never closed"},
		{"trailing text", "array ( ) extra", 1, 11, `unexpected "extra" after the value`},
		{"array without paren", "array 'a'", 1, 7, "expected ( after array"},
		{"column counts characters", "array ( 'äöü' => 1, 'x' y )", 1, 25, `expected => after the key, found "y"`},
		{"invalid byte", "array ( 'a' => \xff )", 1, 16, `found "\xff"`},
		{"too deep", deep, 1, 9*maxDepth + 1, "nested deeper than 256 levels"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			v, err := ParseVarExport([]byte(c.src))
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("got %#v, %v; want a *SyntaxError", v, err)
			}
			if se.Line != c.line || se.Col != c.col || !strings.Contains(se.Msg, c.msgContain) {
				t.Fatalf("error = %q (line %d col %d), want line %d col %d containing %q", err, se.Line, se.Col, c.line, c.col, c.msgContain)
			}
			if strings.Contains(se.Msg, "\n") || !strings.HasPrefix(err.Error(), "line ") {
				t.Fatalf("error %q is not one line with a position", err)
			}
		})
	}
}

func TestParsePHPReturn(t *testing.T) {
	t.Parallel()
	ok := []string{
		"<?php\nreturn array (\n  'tca' => 1,\n);\n#",
		"<?php return array('tca'=>1); // note\n",
		"<?php\r\nreturn array ( 'tca' => 1 ) ;\r\n# done\r\n?>\n",
	}
	for _, src := range ok {
		v, err := ParsePHPReturn([]byte(src))
		if err != nil {
			t.Errorf("ParsePHPReturn(%q): %v", src, err)
			continue
		}
		if got, _ := v.(*Array).Get("tca"); got != int64(1) {
			t.Errorf("ParsePHPReturn(%q) = %#v", src, v)
		}
	}
	bad := []struct{ src, msg string }{
		{"return array();", "must start with <?php"},
		{"<?phpreturn array();", "expected a blank after <?php"},
		{"<?php\necho 1;", `expected return, found "echo"`},
		{"<?php\nreturn array()\n#", "expected ; after the returned value, found end of input"},
		{"<?php\nreturn array();\n$x = 1;", `unexpected "$" after the return statement`},
		{"<?php\nreturn array();\n?>\n<html>", `unexpected "<" after the return statement`},
	}
	for _, c := range bad {
		_, err := ParsePHPReturn([]byte(c.src))
		var se *SyntaxError
		if !errors.As(err, &se) || !strings.Contains(se.Msg, c.msg) {
			t.Errorf("ParsePHPReturn(%q) error = %v, want %q", c.src, err, c.msg)
		}
	}
}

// TestFixtureRoundTripsByteForByte re-exports the parsed fixture with
// var_export's layout: any value the parser mangled (escapes, floats, key
// kinds, order) would show up as a byte difference.
func TestFixtureRoundTripsByteForByte(t *testing.T) {
	t.Parallel()
	src := readFixture(t)
	v, err := ParsePHPReturn(src)
	if err != nil {
		t.Fatal(err)
	}
	got := "<?php\nreturn " + exportPHP(v) + ";\n#"
	if got != string(src) {
		i := 0
		for i < len(got) && i < len(src) && got[i] == src[i] {
			i++
		}
		p := parser{src: string(src)}
		e := p.errf(i, "differs")
		t.Fatalf("re-export differs from the fixture at line %d:%d: %q vs %q", e.Line, e.Col, snippet(got, i), snippet(string(src), i))
	}
}

func snippet(s string, i int) string {
	end := min(i+40, len(s))
	return s[i:end]
}

func FuzzParseVarExport(f *testing.F) {
	seeds := []string{
		"array (\n  'a' => 1,\n  0 => \n  array (\n  ),\n)",
		`'it\'s a \\ backslash'`,
		`'' . "\0" . ''`,
		"-9223372036854775807-1",
		"array ( 'x' => -INF, 'y' => NAN, 'z' => 1.0E-5, 'w' => -0.0 )",
		"array ( '10' => true, 10 => false, '010' => NULL, )",
		"(object) array(\n)",
		"array ( /* c */ 'a' => 1 # d\n )",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	// Pieces of the real fixture: whole tables re-exported (valid input in
	// its true layout) and raw slices cut mid-structure (error paths).
	src := readFixture(f)
	if v, err := ParsePHPReturn(src); err == nil {
		tables := v.(*Array).Array("tca")
		for _, name := range []string{"backend_layout", "sys_filemounts", "fe_groups"} {
			f.Add([]byte(exportPHP(tables.Array(name))))
		}
		pi := tables.Array("tt_content").Array("columns").Array("pi_flexform")
		f.Add([]byte(exportPHP(pi)))
	}
	f.Add(src[len("<?php\nreturn "):4096])
	f.Add(src[len(src)-2048:])

	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ParseVarExport(data)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %v is %T, want *SyntaxError", err, err)
			}
			if se.Offset < 0 || se.Offset > len(data) || se.Line < 1 || se.Col < 1 || se.Msg == "" {
				t.Fatalf("bad error position: %+v", se)
			}
			return
		}
		again, err := ParseVarExport([]byte(exportPHP(v)))
		if err != nil {
			t.Fatalf("re-export of %#v does not parse: %v\n%s", v, err, exportPHP(v))
		}
		if !sameValue(v, again) {
			t.Fatalf("round trip changed the value: %s", firstDiff(v, again, ""))
		}
		// The same literal as a cache file must give the same value.
		file := append([]byte("<?php\nreturn "), data...)
		file = append(file, "\n;\n#"...) // the newline ends a trailing // comment
		fv, err := ParsePHPReturn(file)
		if err != nil {
			t.Fatalf("as a cache file: %v", err)
		}
		if !sameValue(v, fv) {
			t.Fatalf("cache-file parse differs: %s", firstDiff(v, fv, ""))
		}
	})
}

// TestLargeInputsStayLinear parses megabyte inputs built from the parser's
// costlier paths (escapes, NUL concatenation, many and repeated keys); a
// quadratic step would turn this from milliseconds into minutes.
func TestLargeInputsStayLinear(t *testing.T) {
	t.Parallel()
	const n = 200000
	v, err := ParseVarExport([]byte("''" + strings.Repeat(` . "\0"`, n)))
	if err != nil || len(v.(string)) != n || strings.Trim(v.(string), "\x00") != "" {
		t.Errorf("concatenation: %v", err)
	}
	v, err = ParseVarExport([]byte("'" + strings.Repeat(`\\\'`, n) + "'"))
	if err != nil || v.(string) != strings.Repeat(`\'`, n) {
		t.Errorf("escapes: %v", err)
	}
	v, err = ParseVarExport([]byte("array(" + strings.Repeat("0=>1,", n) + "1=>2)"))
	if err != nil || v.(*Array).Len() != 2 {
		t.Errorf("repeated keys: %v", err)
	}
	var b strings.Builder
	b.WriteString("array(")
	for i := range n {
		b.WriteString(strconv.Itoa(i) + "=>'v',")
	}
	b.WriteString(")")
	v, err = ParseVarExport([]byte(b.String()))
	if err != nil || v.(*Array).Len() != n || !v.(*Array).IsList() {
		t.Errorf("distinct keys: %v", err)
	}
}

// TestFuzzCorpusExpectations gives the named seed files a meaning beyond
// "does not crash": ok_* and real_* (cut from the fixture) must parse,
// bad_* must be refused. Files the fuzzer adds keep their hash names.
func TestFuzzCorpusExpectations(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzParseVarExport", "*"))
	if err != nil || len(files) < 10 {
		t.Fatalf("corpus: %d files, %v", len(files), err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		wantOK := strings.HasPrefix(name, "ok_") || strings.HasPrefix(name, "real_")
		if !wantOK && !strings.HasPrefix(name, "bad_") {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		body, found := strings.CutPrefix(string(raw), "go test fuzz v1\n[]byte(")
		body, found2 := strings.CutSuffix(strings.TrimSpace(body), ")")
		data, err := strconv.Unquote(body)
		if !found || !found2 || err != nil {
			t.Fatalf("%s: not a single []byte corpus entry", name)
		}
		v, err := ParseVarExport([]byte(data))
		if wantOK && err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if !wantOK && err == nil {
			t.Errorf("%s: parsed as %#v, want an error", name, v)
		}
		if strings.HasPrefix(name, "real_") {
			if _, ok := v.(*Array); !ok {
				t.Errorf("%s: not an array", name)
			}
		}
	}
}
