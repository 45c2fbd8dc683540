package typoscript

import "strings"

// LineKind is the kind of one logical TypoScript line, as TYPO3's
// LosslessTokenizer classifies it.
type LineKind uint8

const (
	LineEmpty         LineKind = iota // whitespace only
	LineComment                       // #, // or /* … */
	LineCondition                     // [expression]
	LineElse                          // [ELSE]
	LineConditionStop                 // [END] or [GLOBAL]
	LineBlockOpen                     // path {
	LineBlockClose                    // }
	LineAssign                        // path = value, path ( … )
	LineCopy                          // path < source
	LineReference                     // path =< source
	LineUnset                         // path >
	LineFunction                      // path := modifier(argument)
	LineImport                        // @import '…'
	LineImportOld                     // <INCLUDE_TYPOSCRIPT: …>
	LineInvalid                       // anything TYPO3 treats as broken
)

var lineKindNames = [...]string{
	LineEmpty: "empty", LineComment: "comment", LineCondition: "condition", LineElse: "else",
	LineConditionStop: "condition-stop", LineBlockOpen: "block-open", LineBlockClose: "block-close",
	LineAssign: "assign", LineCopy: "copy", LineReference: "reference", LineUnset: "unset",
	LineFunction: "function", LineImport: "import", LineImportOld: "import-old", LineInvalid: "invalid",
}

func (k LineKind) String() string {
	if int(k) < len(lineKindNames) {
		return lineKindNames[k]
	}
	return "unknown"
}

// Line is one logical line. A multi-line value or comment spans several
// physical lines; Num is the first of them (1-based).
type Line struct {
	Kind LineKind
	Num  int
	// Path is the object path left of the operator (escaped dots resolved).
	Path []string
	// Source is the right side of < and =<; Relative when it began with ".".
	Source   []string
	Relative bool
	// Value is the raw value of =, ( ), the argument of :=, the condition
	// body, the @import path or the INCLUDE_TYPOSCRIPT attributes.
	Value string
	// Func is the modifier name of :=; HasArg is false for "fn()".
	Func   string
	HasArg bool
	// Problem names why a line is LineInvalid (never the line's text).
	Problem string
}

// Problems of invalid lines.
const (
	ProblemNoOperator      = "no operator after the object path"
	ProblemUnknownOperator = "unexpected character after the object path"
	ProblemEmptyPath       = "empty object path"
	ProblemTrailingComment = "comment after the object path"
	ProblemEmptySource     = "nothing to copy or reference"
	ProblemEmptyCondition  = "empty condition"
	ProblemUnclosedCond    = "condition without closing bracket"
	ProblemBadImport       = "@import without a quoted path"
	ProblemBadImportOld    = "INCLUDE_TYPOSCRIPT without closing bracket"
	ProblemUnclosedValue   = "multi-line value without closing parenthesis"
	ProblemEmptyValue      = "empty multi-line value"
	ProblemBadFunction     = "malformed modifier"
	ProblemValueTooLarge   = "value larger than the limit"
	ProblemSourceTooLarge  = "source larger than the limit"
	ProblemUnclosedComment = "multi-line comment without end"
	ProblemPathTooDeep     = "object path deeper than the limit"
	ProblemTooManyLines    = "more lines than the limit; the rest is ignored"
)

// isSpace is PCRE's \s without the u flag, which TYPO3 uses to skip blanks.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func trimLeftSpace(s string) string {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return s[i:]
}

// lexer walks a source line by line without splitting it up front, so a
// huge source costs no more than one pass.
type lexer struct {
	src   string
	pos   int // start of the next physical line
	num   int // number of the line last read
	lim   Limits
	lines []Line
}

// next returns the next physical line without its line break (trailing
// carriage returns removed like PHP's rtrim), whether it ended with "\r\n",
// and false at the end of the source.
func (lx *lexer) next() (line string, crlf bool, ok bool) {
	if lx.pos > len(lx.src) {
		return "", false, false
	}
	rest := lx.src[lx.pos:]
	end := strings.IndexByte(rest, '\n')
	if end < 0 {
		lx.pos = len(lx.src) + 1
		line = rest
		lx.num++
		if line == "" {
			// TYPO3 makes no line of an empty last line.
			return "", false, false
		}
	} else {
		lx.pos += end + 1
		line = rest[:end]
		lx.num++
	}
	crlf = strings.HasSuffix(line, "\r")
	return strings.TrimRight(line, "\r"), crlf, true
}

func (lx *lexer) add(l Line) { lx.lines = append(lx.lines, l) }

func (lx *lexer) invalid(num int, problem string) {
	lx.add(Line{Kind: LineInvalid, Num: num, Problem: problem})
}

// Tokenize splits TypoScript source into logical lines the way TYPO3 v13's
// LosslessTokenizer does. It never fails: broken lines become LineInvalid
// with a Problem, and a source above Limits.MaxSourceBytes becomes a single
// invalid line.
func Tokenize(src string, lim Limits) []Line {
	lim = lim.withDefaults()
	if len(src) > lim.MaxSourceBytes {
		return []Line{{Kind: LineInvalid, Num: 1, Problem: ProblemSourceTooLarge}}
	}
	// One allocation for the common case of one logical line per physical
	// line; capped, as a multi-line value may span many physical lines.
	lx := &lexer{src: src, lim: lim, lines: make([]Line, 0, min(strings.Count(src, "\n")+1, lim.MaxLines+1, 1<<12))}
	for {
		if len(lx.lines) >= lim.MaxLines {
			lx.invalid(lx.num+1, ProblemTooManyLines)
			break
		}
		raw, _, ok := lx.next()
		if !ok {
			break
		}
		lx.line(raw)
	}
	return lx.lines
}

func (lx *lexer) line(raw string) {
	num := lx.num
	s := trimLeftSpace(raw)
	switch {
	case s == "":
		lx.add(Line{Kind: LineEmpty, Num: num})
	case s[0] == '#' || strings.HasPrefix(s, "//"):
		lx.add(Line{Kind: LineComment, Num: num})
	case strings.HasPrefix(s, "/*"):
		if !lx.comment(s[2:]) {
			lx.invalid(num, ProblemUnclosedComment)
			return
		}
		lx.add(Line{Kind: LineComment, Num: num})
	case s[0] == '[':
		lx.condition(s, num)
	case s[0] == '}':
		lx.add(Line{Kind: LineBlockClose, Num: num})
	case strings.HasPrefix(s, "@import"):
		lx.importLine(s[len("@import"):], num)
	case strings.HasPrefix(s, "<INCLUDE_TYPOSCRIPT:"):
		body := s[len("<INCLUDE_TYPOSCRIPT:"):]
		end := strings.IndexByte(body, '>')
		if end < 0 {
			lx.invalid(num, ProblemBadImportOld)
			return
		}
		lx.add(Line{Kind: LineImportOld, Num: num, Value: body[:end]})
	default:
		lx.identifierLine(s, num)
	}
}

// comment consumes a /* comment whose text after "/*" starts with first. It
// ends on the first physical line ending with "*/" (TYPO3 does not look for
// "*/" inside a line). It reports false when the source ended first.
func (lx *lexer) comment(first string) bool {
	if strings.HasSuffix(first, "*/") {
		return true
	}
	for {
		raw, _, ok := lx.next()
		if !ok {
			return false
		}
		if strings.HasSuffix(raw, "*/") {
			return true
		}
	}
}

// condition handles a line starting with "[".
func (lx *lexer) condition(s string, num int) {
	upper := strings.ToUpper(s[:min(len(s), 8)])
	switch {
	case strings.HasPrefix(upper, "[ELSE]"):
		lx.add(Line{Kind: LineElse, Num: num})
		return
	case strings.HasPrefix(upper, "[END]"), strings.HasPrefix(upper, "[GLOBAL]"):
		lx.add(Line{Kind: LineConditionStop, Num: num})
		return
	}
	depth := 1
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				body := s[1:i]
				if body == "" {
					lx.invalid(num, ProblemEmptyCondition)
					return
				}
				lx.add(Line{Kind: LineCondition, Num: num, Value: body})
				return
			}
		}
	}
	lx.invalid(num, ProblemUnclosedCond)
}

// importLine handles the text after "@import": a path in single or double
// quotes; the path ends at the next quote of either kind, or at the end of
// the line (TYPO3 accepts a missing closing quote).
func (lx *lexer) importLine(rest string, num int) {
	rest = trimLeftSpace(rest)
	if rest == "" || (rest[0] != '\'' && rest[0] != '"') {
		lx.invalid(num, ProblemBadImport)
		return
	}
	body := rest[1:]
	if end := strings.IndexAny(body, `'"`); end >= 0 {
		body = body[:end]
	}
	if body == "" {
		lx.invalid(num, ProblemBadImport)
		return
	}
	lx.add(Line{Kind: LineImport, Num: num, Value: body})
}

// parsePath reads an object path from s. Stop characters count only after
// the first character, "\." is a literal dot and empty segments vanish, as
// in LosslessTokenizer::parseIdentifierUntilStopChar. end is the index of
// the stop character, or -1 when the path ran to the end of s.
func parsePath(s string) (segs []string, end int) {
	start := 0       // start of the current segment in s
	var esc []byte   // the current segment when it has an escaped dot
	escaped := false // whether esc is in use
	flush := func(i int) {
		switch {
		case escaped:
			if len(esc) > 0 {
				segs = append(segs, string(esc))
			}
			esc, escaped = esc[:0], false
		case i > start:
			// Plain segments are substrings of s: no copy.
			segs = append(segs, s[start:i])
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		if i > 0 && (c == ' ' || c == '\t' || c == '=' || c == '<' || c == '>' || c == '{' || c == '(' ||
			(c == ':' && i+1 < len(s) && s[i+1] == '=')) {
			flush(i)
			return segs, i
		}
		switch {
		case c == '\\' && i+1 < len(s) && s[i+1] == '.':
			if !escaped {
				esc = append(esc[:0], s[start:i]...)
				escaped = true
			}
			esc = append(esc, '.')
			i += 2
		case c == '.':
			flush(i)
			i++
			start = i
		default:
			if escaped {
				esc = append(esc, c)
			}
			i++
		}
	}
	flush(len(s))
	return segs, -1
}

func (lx *lexer) identifierLine(s string, num int) {
	path, end := parsePath(s)
	if end < 0 {
		lx.invalid(num, ProblemNoOperator)
		return
	}
	if len(path) > lx.lim.MaxDepth {
		// Still consume a multi-line value so its body is not read as code.
		if r := trimLeftSpace(s[end:]); strings.HasPrefix(r, "(") && !strings.HasPrefix(r, "()") {
			lx.multiline(nil, r[1:], num)
			lx.lines = lx.lines[:len(lx.lines)-1]
		}
		lx.invalid(num, ProblemPathTooDeep)
		return
	}
	r := trimLeftSpace(s[end:])
	if r == "" {
		lx.invalid(num, ProblemNoOperator)
		return
	}
	if len(path) == 0 {
		lx.invalid(num, ProblemEmptyPath)
		return
	}
	switch {
	case strings.HasPrefix(r, "=<"):
		lx.sourceLine(LineReference, path, r[2:], num)
	case r[0] == '=':
		v := trimLeftSpace(r[1:])
		if len(v) > lx.lim.MaxValueBytes {
			lx.invalid(num, ProblemValueTooLarge)
			return
		}
		lx.add(Line{Kind: LineAssign, Num: num, Path: path, Value: v})
	case r[0] == '{':
		lx.add(Line{Kind: LineBlockOpen, Num: num, Path: path})
		if strings.HasPrefix(trimLeftSpace(r[1:]), "}") {
			lx.add(Line{Kind: LineBlockClose, Num: num})
		}
	case r[0] == '>':
		lx.add(Line{Kind: LineUnset, Num: num, Path: path})
	case r[0] == '<':
		lx.sourceLine(LineCopy, path, r[1:], num)
	case r[0] == '(':
		lx.multiline(path, r[1:], num)
	case strings.HasPrefix(r, ":="):
		lx.function(path, r[2:], num)
	case r[0] == '#' || strings.HasPrefix(r, "//"):
		lx.invalid(num, ProblemTrailingComment)
	case strings.HasPrefix(r, "/*"):
		lx.comment(r[2:])
		lx.invalid(num, ProblemTrailingComment)
	default:
		// TYPO3 silently drops such a line; it is broken, so report it.
		lx.invalid(num, ProblemUnknownOperator)
	}
}

// sourceLine handles the right side of < and =<: an optional leading "."
// for a path relative to the current block, then a path; anything after it
// is a comment.
func (lx *lexer) sourceLine(kind LineKind, path []string, r string, num int) {
	r = trimLeftSpace(r)
	rel := false
	if strings.HasPrefix(r, ".") {
		rel = true
		r = r[1:]
	}
	var src []string
	if r != "" && r[0] != '#' && !strings.HasPrefix(r, "//") && !strings.HasPrefix(r, "/*") {
		src, _ = parsePath(r)
	} else if strings.HasPrefix(r, "/*") {
		lx.comment(r[2:])
	}
	if len(src) == 0 {
		lx.invalid(num, ProblemEmptySource)
		return
	}
	if len(src) > lx.lim.MaxDepth {
		lx.invalid(num, ProblemPathTooDeep)
		return
	}
	lx.add(Line{Kind: kind, Num: num, Path: path, Source: src, Relative: rel})
}

// multiline reads "path ( … )". first is the text after "(" on the opening
// line. The value is the lines up to the one starting with ")" (after
// blanks), joined with their own line breaks; the opening line counts only
// when it has text. "(value)" on one line needs at least two characters,
// as in TYPO3.
func (lx *lexer) multiline(path []string, first string, num int) {
	if strings.HasPrefix(trimLeftSpace(first), ")") {
		lx.invalid(num, ProblemEmptyValue)
		return
	}
	if strings.HasSuffix(first, ")") {
		v := first[:len(first)-1]
		if len(v) > 1 {
			lx.add(Line{Kind: LineAssign, Num: num, Path: path, Value: v})
			return
		}
		lx.invalid(num, ProblemEmptyValue)
		return
	}
	var b strings.Builder
	tooLarge := false
	write := func(part string) {
		if tooLarge || part == "" {
			return
		}
		if b.Len()+len(part) > lx.lim.MaxValueBytes {
			tooLarge = true
			return
		}
		b.WriteString(part)
	}
	// The opening line's own break is known only from the source.
	openCRLF := lx.pos >= 2 && lx.pos <= len(lx.src) && lx.src[lx.pos-2] == '\r'
	if first != "" {
		write(first)
		write(lineBreak(openCRLF))
	}
	prevBreak := ""
	for k := 1; ; k++ {
		raw, crlf, ok := lx.next()
		if !ok {
			lx.invalid(num, ProblemUnclosedValue)
			return
		}
		if strings.HasPrefix(strings.TrimLeft(raw, " \t\n\r\x00\x0b"), ")") {
			break
		}
		// The break before a line is written when the line after the
		// opening one has been passed, so a first empty line adds nothing.
		if k >= 2 {
			write(prevBreak)
		}
		write(raw)
		prevBreak = lineBreak(crlf)
	}
	if tooLarge {
		lx.invalid(num, ProblemValueTooLarge)
		return
	}
	if b.Len() == 0 {
		lx.invalid(num, ProblemEmptyValue)
		return
	}
	lx.add(Line{Kind: LineAssign, Num: num, Path: path, Value: b.String()})
}

func lineBreak(crlf bool) string {
	if crlf {
		return "\r\n"
	}
	return "\n"
}

// function reads "name(argument)" after ":=". The argument may contain
// balanced parentheses; anything after the closing one is a comment.
func (lx *lexer) function(path []string, r string, num int) {
	r = trimLeftSpace(r)
	open := strings.IndexByte(r, '(')
	if open <= 0 {
		lx.invalid(num, ProblemBadFunction)
		return
	}
	name := r[:open]
	depth := 0
	for i := open + 1; i < len(r); i++ {
		switch r[i] {
		case '(':
			depth++
		case ')':
			if depth > 0 {
				depth--
				continue
			}
			arg := r[open+1 : i]
			if len(arg) > lx.lim.MaxValueBytes {
				lx.invalid(num, ProblemValueTooLarge)
				return
			}
			lx.add(Line{Kind: LineFunction, Num: num, Path: path, Func: name, Value: arg, HasArg: arg != ""})
			return
		}
	}
	lx.invalid(num, ProblemBadFunction)
}
