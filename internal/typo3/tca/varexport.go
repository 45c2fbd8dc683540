package tca

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SyntaxError reports malformed var_export input.
type SyntaxError struct {
	File      string // set by the file loaders
	Line, Col int    // 1-based; Col counts characters, not bytes
	Offset    int    // byte offset
	Msg       string
}

func (e *SyntaxError) Error() string {
	if e.File != "" {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("line %d:%d: %s", e.Line, e.Col, e.Msg)
}

// maxDepth bounds array nesting. TCA nests about a dozen levels; the bound
// keeps hostile input from exhausting the stack.
const maxDepth = 256

// ParseVarExport parses one PHP var_export literal (surrounding blanks
// allowed) into a generic value: nil, bool, int64, float64, string or
// *Array. Objects are refused: TCA never contains any.
func ParseVarExport(src []byte) (any, error) {
	p := parser{src: string(src)}
	p.skip()
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.skip()
	if p.pos < len(p.src) {
		return nil, p.errf(p.pos, "unexpected %s after the value", p.found(p.pos))
	}
	return v, nil
}

// ParsePHPReturn parses a PHP file of the form TYPO3's PhpFrontend writes:
// "<?php", "return <var_export literal>;", then only blanks and comments
// (TYPO3 appends a "#" line).
func ParsePHPReturn(src []byte) (any, error) {
	p := parser{src: string(src)}
	if !strings.HasPrefix(p.src, "<?php") {
		return nil, p.errf(0, "a PHP cache file must start with <?php")
	}
	p.pos = len("<?php")
	if p.pos < len(p.src) && !isSpace(p.src[p.pos]) {
		return nil, p.errf(p.pos, "expected a blank after <?php")
	}
	p.skip()
	if !p.word("return") {
		return nil, p.errf(p.pos, "expected return, found %s", p.found(p.pos))
	}
	p.skip()
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.skip()
	if p.pos >= len(p.src) || p.src[p.pos] != ';' {
		return nil, p.errf(p.pos, "expected ; after the returned value, found %s", p.found(p.pos))
	}
	p.pos++
	p.skip()
	if strings.HasPrefix(p.src[p.pos:], "?>") {
		// A closing tag followed by blanks only: anything else would be
		// output, which a cache file never has.
		p.pos += 2
		for p.pos < len(p.src) && isSpace(p.src[p.pos]) {
			p.pos++
		}
	}
	if p.pos < len(p.src) {
		return nil, p.errf(p.pos, "unexpected %s after the return statement", p.found(p.pos))
	}
	return v, nil
}

// parser works on one string copy of the input; parsed strings are
// slices of it, which saves an allocation per string (they make up most of
// the input anyway).
type parser struct {
	src   string
	pos   int
	depth int
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// skip passes blanks and PHP comments. var_export writes no comments, but
// the cache file ends with one and PHP would accept them anywhere.
func (p *parser) skip() {
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case isSpace(c):
			p.pos++
		case c == '#' || (c == '/' && strings.HasPrefix(p.src[p.pos:], "//")):
			nl := strings.IndexByte(p.src[p.pos:], '\n')
			if nl < 0 {
				p.pos = len(p.src)
				return
			}
			p.pos += nl + 1
		case c == '/' && strings.HasPrefix(p.src[p.pos:], "/*"):
			end := strings.Index(p.src[p.pos+2:], "*/")
			if end < 0 {
				// Leave it in place: the caller reports it as unexpected.
				return
			}
			p.pos += 2 + end + 2
		default:
			return
		}
	}
}

// word consumes the case-insensitive keyword w when it is not followed by
// an identifier character.
func (p *parser) word(w string) bool {
	end := p.pos + len(w)
	if end > len(p.src) || !strings.EqualFold(p.src[p.pos:end], w) {
		return false
	}
	if end < len(p.src) && isIdent(p.src[end]) {
		return false
	}
	p.pos = end
	return true
}

// constant consumes the case-sensitive constant name w (INF and NAN are
// case-sensitive in PHP, unlike true/false/null).
func (p *parser) constant(w string) bool {
	if !strings.HasPrefix(p.src[p.pos:], w) {
		return false
	}
	return p.word(w)
}

func isIdent(c byte) bool {
	return c == '_' || c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

func (p *parser) value() (any, error) {
	if p.pos >= len(p.src) {
		return nil, p.errf(p.pos, "expected a value, found end of input")
	}
	start := p.pos
	switch c := p.src[p.pos]; {
	case c == '\'' || c == '"':
		return p.stringExpr()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == '(':
		return nil, p.errf(start, "objects are not allowed in TCA, found a %s cast", p.found(start))
	case c == '\\':
		return nil, p.errf(start, "objects are not allowed in TCA, found class reference %s", p.found(start))
	case c == '[':
		return nil, p.errf(start, "unexpected [; var_export writes arrays as array ( … )")
	}
	switch {
	case p.word("array"):
		return p.array(start)
	case p.word("true"):
		return true, nil
	case p.word("false"):
		return false, nil
	case p.word("null"):
		return nil, nil
	case p.constant("INF"):
		return math.Inf(1), nil
	case p.constant("NAN"):
		return math.NaN(), nil
	}
	p.pos = start
	return nil, p.errf(start, "expected a value, found %s", p.found(start))
}

func (p *parser) array(start int) (any, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		return nil, p.errf(start, "arrays are nested deeper than %d levels", maxDepth)
	}
	p.skip()
	if p.pos >= len(p.src) || p.src[p.pos] != '(' {
		return nil, p.errf(p.pos, "expected ( after array, found %s", p.found(p.pos))
	}
	p.pos++
	b := builder{a: &Array{}}
	for {
		p.skip()
		if p.pos >= len(p.src) {
			return nil, p.errf(start, "array ( is never closed")
		}
		if p.src[p.pos] == ')' {
			p.pos++
			return b.a, nil
		}
		k, err := p.key()
		if err != nil {
			return nil, err
		}
		p.skip()
		if !strings.HasPrefix(p.src[p.pos:], "=>") {
			return nil, p.errf(p.pos, "expected => after the key, found %s", p.found(p.pos))
		}
		p.pos += 2
		p.skip()
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		b.set(k, v)
		p.skip()
		if p.pos < len(p.src) && p.src[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.src) && p.src[p.pos] == ')' {
			continue // PHP allows the last comma to be left out
		}
		if p.pos >= len(p.src) {
			return nil, p.errf(start, "array ( is never closed")
		}
		return nil, p.errf(p.pos, "expected , or ) after an array entry, found %s", p.found(p.pos))
	}
}

func (p *parser) key() (Key, error) {
	start := p.pos
	c := p.src[p.pos]
	switch {
	case c == '\'' || c == '"':
		s, err := p.stringExpr()
		if err != nil {
			return Key{}, err
		}
		return StrKey(s), nil
	case c == '-' || (c >= '0' && c <= '9'):
		end := p.pos
		if c == '-' {
			end++
		}
		digits := end
		for end < len(p.src) && p.src[end] >= '0' && p.src[end] <= '9' {
			end++
		}
		if end == digits || (end < len(p.src) && (p.src[end] == '.' || isIdent(p.src[end]))) {
			return Key{}, p.errf(start, "array keys must be quoted strings or integers, found %s", p.found(start))
		}
		i, err := strconv.ParseInt(p.src[start:end], 10, 64)
		if err != nil || (p.src[digits] == '0' && end-digits > 1) {
			return Key{}, p.errf(start, "integer key %s is out of range or not canonical", p.src[start:end])
		}
		p.pos = end
		return IntKey(i), nil
	}
	return Key{}, p.errf(start, "expected a quoted string or integer key, found %s", p.found(start))
}

// stringExpr reads a single-quoted string, or the concatenation var_export
// writes for strings with NUL bytes: 'a' . "\0" . 'b'.
func (p *parser) stringExpr() (string, error) {
	s, err := p.stringPart()
	if err != nil {
		return "", err
	}
	var sb strings.Builder // used only for concatenations, to stay linear
	for {
		save := p.pos
		p.skip()
		if p.pos >= len(p.src) || p.src[p.pos] != '.' {
			p.pos = save
			if sb.Len() > 0 {
				return sb.String(), nil
			}
			return s, nil
		}
		p.pos++
		p.skip()
		if p.pos >= len(p.src) || (p.src[p.pos] != '\'' && p.src[p.pos] != '"') {
			return "", p.errf(p.pos, "expected a string after the . operator, found %s", p.found(p.pos))
		}
		t, err := p.stringPart()
		if err != nil {
			return "", err
		}
		if sb.Len() == 0 {
			sb.WriteString(s)
		}
		sb.WriteString(t)
	}
}

func (p *parser) stringPart() (string, error) {
	start := p.pos
	if p.src[p.pos] == '"' {
		if strings.HasPrefix(p.src[p.pos:], `"\0"`) {
			p.pos += 4
			return "\x00", nil
		}
		return "", p.errf(start, `double-quoted strings other than "\0" are not var_export output`)
	}
	i := p.pos + 1
	seg := i
	var buf []byte // only allocated when the string has escapes
	for {
		j := strings.IndexAny(p.src[i:], `'\`)
		if j < 0 {
			return "", p.errf(start, "string is never closed")
		}
		i += j
		if p.src[i] == '\'' {
			p.pos = i + 1
			if buf == nil {
				return p.src[seg:i], nil
			}
			return string(append(buf, p.src[seg:i]...)), nil
		}
		// PHP single-quoted strings know only \\ and \'; any other
		// backslash is literal.
		if i+1 < len(p.src) && (p.src[i+1] == '\\' || p.src[i+1] == '\'') {
			buf = append(buf, p.src[seg:i]...)
			buf = append(buf, p.src[i+1])
			i += 2
			seg = i
			continue
		}
		i++
	}
}

// number reads an int or float as var_export writes it: -?digits with an
// optional fraction and exponent, -INF, and PHP_INT_MIN's special form
// -9223372036854775807-1.
func (p *parser) number() (any, error) {
	start := p.pos
	i := p.pos
	neg := p.src[i] == '-'
	if neg {
		i++
		p.pos = i
		if p.constant("INF") {
			return math.Inf(-1), nil
		}
		if p.constant("NAN") {
			return math.NaN(), nil
		}
		p.pos = start
	}
	digits := i
	for i < len(p.src) && p.src[i] >= '0' && p.src[i] <= '9' {
		i++
	}
	if i == digits {
		return nil, p.errf(start, "expected a value, found %s", p.found(start))
	}
	if p.src[digits] == '0' && i-digits > 1 {
		return nil, p.errf(start, "numbers with leading zeros are not var_export output")
	}
	isFloat := false
	if i < len(p.src) && p.src[i] == '.' {
		isFloat = true
		i++
		f := i
		for i < len(p.src) && p.src[i] >= '0' && p.src[i] <= '9' {
			i++
		}
		if i == f {
			return nil, p.errf(start, "malformed number %s", p.found(start))
		}
	}
	if i < len(p.src) && (p.src[i] == 'e' || p.src[i] == 'E') {
		isFloat = true
		i++
		if i < len(p.src) && (p.src[i] == '+' || p.src[i] == '-') {
			i++
		}
		e := i
		for i < len(p.src) && p.src[i] >= '0' && p.src[i] <= '9' {
			i++
		}
		if i == e {
			return nil, p.errf(start, "malformed number %s", p.found(start))
		}
	}
	if i < len(p.src) && isIdent(p.src[i]) {
		return nil, p.errf(start, "malformed number %s", p.found(start))
	}
	text := p.src[start:i]
	p.pos = i
	if !isFloat {
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			if n == -math.MaxInt64 && strings.HasPrefix(p.src[i:], "-1") && (i+2 >= len(p.src) || !isIdent(p.src[i+2]) && p.src[i+2] != '.') {
				p.pos = i + 2
				return int64(math.MinInt64), nil
			}
			return n, nil
		}
		// Like PHP, an integer literal beyond int64 is a float.
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && !isRangeErr(err) {
		return nil, p.errf(start, "malformed number %s", text)
	}
	return f, nil
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// found describes the input at pos for an error message.
func (p *parser) found(pos int) string {
	if pos >= len(p.src) {
		return "end of input"
	}
	rest := p.src[pos:]
	if strings.HasPrefix(rest, "/*") {
		return "a /* comment that is never closed" // skip stops there
	}
	n := 0
	for n < len(rest) && n < 24 && isIdent(rest[n]) {
		n++
	}
	if n == 0 {
		r, size := utf8.DecodeRuneInString(rest)
		if r == utf8.RuneError && size <= 1 {
			return fmt.Sprintf("byte 0x%02x", rest[0])
		}
		n = size
		if rest[0] == '(' {
			// "(object)" reads better than "(".
			if end := strings.IndexByte(rest, ')'); end > 0 && end < 24 {
				n = end + 1
			}
		} else if rest[0] == '\\' {
			for n < len(rest) && n < 80 && (isIdent(rest[n]) || rest[n] == '\\' || rest[n] == ':') {
				n++
			}
		}
	}
	return quote(rest[:n])
}

// quote wraps s in double quotes, escaping only when s has bytes that
// would not print; a PHP class name keeps its single backslashes.
func quote(s string) string {
	if !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return `"` + s + `"`
}

func (p *parser) errf(pos int, format string, args ...any) *SyntaxError {
	if pos > len(p.src) {
		pos = len(p.src)
	}
	line := 1 + strings.Count(p.src[:pos], "\n")
	lineStart := strings.LastIndexByte(p.src[:pos], '\n') + 1
	return &SyntaxError{
		Line:   line,
		Col:    1 + utf8.RuneCountInString(p.src[lineStart:pos]),
		Offset: pos,
		Msg:    fmt.Sprintf(format, args...),
	}
}
