package typoscript

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// The condition language is a subset of Symfony ExpressionLanguage as
// TYPO3 uses it. Values are nil, bool, int64, float64, string, []any,
// map[string]any, *Object and Unknown. Unknown stands for something only a
// live request would know; it spreads through every operation except the
// short cuts of and/or, so "false and request.x" is still decided.

// Unknown is a value t3agent cannot know; Reason says what it needs.
type Unknown struct{ Reason string }

// Object is a value with properties and methods (TYPO3's tree, extension,
// … helpers).
type Object struct {
	Props   map[string]any
	Methods map[string]func(args []any) any
}

// Func is a function callable from conditions.
type Func func(args []any) any

// ExprEnv holds the variables and functions of a condition context. It
// implements Evaluator.
type ExprEnv struct {
	Vars   map[string]any
	Funcs  map[string]Func
	Limits Limits
}

// errExpr is a condition TYPO3 would reject at run time (unknown variable,
// wrong type): the condition is decided false, as TYPO3 logs and skips it.
type errExpr struct{ msg string }

func (e *errExpr) Error() string { return e.msg }

// errUnsupported is syntax this evaluator does not parse; the condition is
// undecided rather than wrongly false.
var errUnsupported = errors.New("expression syntax not supported")

// Evaluate decides expr.
func (env *ExprEnv) Evaluate(expr string) (v Verdict) {
	lim := env.Limits.withDefaults()
	if len(expr) > lim.MaxExprBytes {
		return Verdict{Reason: "condition longer than the limit"}
	}
	toks, err := lexExpr(expr)
	if err != nil {
		return Verdict{Reason: "condition not understood: " + err.Error()}
	}
	p := &exprParser{toks: toks, maxDepth: lim.MaxDepth}
	ast, err := p.parse()
	if err != nil {
		return Verdict{Reason: "condition not understood: " + err.Error()}
	}
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(*errExpr); ok {
				v = Verdict{Decided: true, Value: false, Reason: e.msg}
				return
			}
			panic(r)
		}
	}()
	val := env.eval(ast)
	if u, ok := val.(Unknown); ok {
		return Verdict{Reason: u.Reason}
	}
	return Verdict{Decided: true, Value: toBool(val)}
}

// ---- lexer ----

type tokKind uint8

const (
	tNum tokKind = iota
	tStr
	tName
	tOp
	tPunct
	tEnd
)

type token struct {
	kind tokKind
	s    string
	num  any // int64 or float64 for tNum
}

var wordOps = []string{"starts with", "ends with", "contains", "matches", "not in", "and", "or", "in", "not"}

var symOps = []string{"===", "!==", "**", "||", "&&", "==", "!=", ">=", "<=", "..", "<<", ">>", "??",
	"!", "%", "&", "*", "+", "-", "/", "<", ">", "^", "|", "~"}

func isNameStart(c byte) bool { return c == '_' || c >= 0x7f || (c|0x20) >= 'a' && (c|0x20) <= 'z' }
func isNameChar(c byte) bool  { return isNameStart(c) || c >= '0' && c <= '9' }

func lexExpr(s string) ([]token, error) {
	var out []token
	i := 0
	for i < len(s) {
		c := s[i]
		if isSpace(c) {
			i++
			continue
		}
		// Word operators need a blank or "(" before and after them.
		if prevOK := i == 0 || isSpace(s[i-1]) || s[i-1] == '('; prevOK {
			matched := false
			for _, w := range wordOps {
				if strings.HasPrefix(s[i:], w) {
					j := i + len(w)
					if j < len(s) && (isSpace(s[j]) || s[j] == '(') {
						out = append(out, token{kind: tOp, s: w})
						i = j
						matched = true
						break
					}
				}
			}
			if matched {
				continue
			}
		}
		switch {
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			j := i
			isFloat := false
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '_') {
				j++
			}
			if j+1 < len(s) && s[j] == '.' && s[j+1] != '.' {
				isFloat = true
				j++
				for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '_') {
					j++
				}
			}
			if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
				k := j + 1
				if k < len(s) && (s[k] == '+' || s[k] == '-') {
					k++
				}
				if k < len(s) && s[k] >= '0' && s[k] <= '9' {
					isFloat = true
					j = k
					for j < len(s) && s[j] >= '0' && s[j] <= '9' {
						j++
					}
				}
			}
			lit := strings.ReplaceAll(s[i:j], "_", "")
			if isFloat {
				f, err := strconv.ParseFloat(lit, 64)
				if err != nil {
					return nil, errUnsupported
				}
				out = append(out, token{kind: tNum, s: lit, num: f})
			} else {
				n, err := strconv.ParseInt(lit, 10, 64)
				if err != nil {
					f, ferr := strconv.ParseFloat(lit, 64)
					if ferr != nil {
						return nil, errUnsupported
					}
					out = append(out, token{kind: tNum, s: lit, num: f})
				} else {
					out = append(out, token{kind: tNum, s: lit, num: n})
				}
			}
			i = j
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(s) && s[j] != c {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return nil, errors.New("unterminated string")
			}
			out = append(out, token{kind: tStr, s: stripCSlashes(s[i+1 : j])})
			i = j + 1
		case isNameStart(c):
			j := i
			for j < len(s) && isNameChar(s[j]) {
				j++
			}
			out = append(out, token{kind: tName, s: s[i:j]})
			i = j
		case strings.HasPrefix(s[i:], "?."):
			out = append(out, token{kind: tPunct, s: "?."})
			i += 2
		case strings.IndexByte("()[]{}?:.,", c) >= 0 && !(c == '.' && strings.HasPrefix(s[i:], "..")):
			out = append(out, token{kind: tPunct, s: string(c)})
			i++
		default:
			matched := false
			for _, op := range symOps {
				if strings.HasPrefix(s[i:], op) {
					out = append(out, token{kind: tOp, s: op})
					i += len(op)
					matched = true
					break
				}
			}
			if !matched {
				return nil, fmt.Errorf("unexpected character %q", c)
			}
		}
	}
	return append(out, token{kind: tEnd}), nil
}

// stripCSlashes is PHP's stripcslashes for the escapes Symfony's lexer
// passes through it.
func stripCSlashes(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte('\a')
		case 'v':
			b.WriteByte('\v')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// ---- parser ----

type exprNode struct {
	op   string // "lit", "name", "unary", "binary", "ternary", "call", "method", "prop", "index", "list", "hash"
	s    string
	val  any
	args []*exprNode
}

type exprParser struct {
	toks     []token
	pos      int
	depth    int
	maxDepth int
}

// binPrec is Symfony ExpressionLanguage's binary operator precedence; ok
// is false for a token that is no binary operator.
func binPrec(op string) (int, bool) {
	switch op {
	case "??":
		return 5, true
	case "or", "||":
		return 10, true
	case "and", "&&":
		return 15, true
	case "|":
		return 16, true
	case "^":
		return 17, true
	case "&":
		return 18, true
	case "==", "===", "!=", "!==", "<", ">", ">=", "<=", "not in", "in", "matches", "contains", "starts with", "ends with":
		return 20, true
	case "..", "<<", ">>":
		return 25, true
	case "+", "-":
		return 30, true
	case "~":
		return 40, true
	case "*", "/", "%":
		return 60, true
	case "**":
		return 200, true
	}
	return 0, false
}

func (p *exprParser) peek() token { return p.toks[p.pos] }
func (p *exprParser) next() token {
	t := p.toks[p.pos]
	if t.kind != tEnd {
		p.pos++
	}
	return t
}

func (p *exprParser) expect(s string) error {
	if t := p.next(); t.kind != tPunct || t.s != s {
		return fmt.Errorf("expected %q", s)
	}
	return nil
}

func (p *exprParser) parse() (*exprNode, error) {
	n, err := p.expression(0)
	if err != nil {
		return nil, err
	}
	if p.peek().kind != tEnd {
		return nil, errors.New("unexpected text after the expression")
	}
	return n, nil
}

func (p *exprParser) enter() error {
	p.depth++
	if p.depth > p.maxDepth {
		return errors.New("expression nested deeper than the limit")
	}
	return nil
}

func (p *exprParser) expression(minPrec int) (*exprNode, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	left, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if t.kind != tOp {
			break
		}
		prec, ok := binPrec(t.s)
		if !ok || prec < minPrec {
			break
		}
		p.next()
		next := prec + 1
		if t.s == "**" || t.s == "??" {
			next = prec // right associative
		}
		right, err := p.expression(next)
		if err != nil {
			return nil, err
		}
		left = &exprNode{op: "binary", s: t.s, args: []*exprNode{left, right}}
	}
	if minPrec == 0 && p.peek().kind == tPunct && p.peek().s == "?" {
		p.next()
		if p.peek().kind == tPunct && p.peek().s == ":" {
			p.next()
			other, err := p.expression(0)
			if err != nil {
				return nil, err
			}
			return &exprNode{op: "ternary", args: []*exprNode{left, left, other}}, nil
		}
		yes, err := p.expression(0)
		if err != nil {
			return nil, err
		}
		no := &exprNode{op: "lit"}
		if p.peek().kind == tPunct && p.peek().s == ":" {
			p.next()
			if no, err = p.expression(0); err != nil {
				return nil, err
			}
		}
		return &exprNode{op: "ternary", args: []*exprNode{left, yes, no}}, nil
	}
	return left, nil
}

func (p *exprParser) unary() (*exprNode, error) {
	t := p.peek()
	if t.kind == tOp && (t.s == "not" || t.s == "!" || t.s == "-" || t.s == "+") {
		p.next()
		prec := 50
		if t.s == "-" || t.s == "+" {
			prec = 500
		}
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer func() { p.depth-- }()
		operand, err := p.expression(prec)
		if err != nil {
			return nil, err
		}
		return &exprNode{op: "unary", s: t.s, args: []*exprNode{operand}}, nil
	}
	prim, err := p.primary()
	if err != nil {
		return nil, err
	}
	return p.postfix(prim)
}

func (p *exprParser) primary() (*exprNode, error) {
	t := p.next()
	switch t.kind {
	case tNum:
		return &exprNode{op: "lit", val: t.num}, nil
	case tStr:
		return &exprNode{op: "lit", val: t.s}, nil
	case tName:
		switch strings.ToLower(t.s) {
		case "true":
			return &exprNode{op: "lit", val: true}, nil
		case "false":
			return &exprNode{op: "lit", val: false}, nil
		case "null":
			return &exprNode{op: "lit", val: nil}, nil
		}
		if p.peek().kind == tPunct && p.peek().s == "(" {
			args, err := p.arguments(")")
			if err != nil {
				return nil, err
			}
			return &exprNode{op: "call", s: t.s, args: args}, nil
		}
		return &exprNode{op: "name", s: t.s}, nil
	case tPunct:
		switch t.s {
		case "(":
			n, err := p.expression(0)
			if err != nil {
				return nil, err
			}
			return n, p.expect(")")
		case "[":
			p.pos--
			args, err := p.arguments("]")
			if err != nil {
				return nil, err
			}
			return &exprNode{op: "list", args: args}, nil
		case "{":
			return p.hash()
		}
	}
	return nil, errors.New("unexpected token")
}

// arguments parses "(a, b)" or "[a, b]" starting at the opening token.
func (p *exprParser) arguments(closer string) ([]*exprNode, error) {
	p.next()
	var args []*exprNode
	if p.peek().kind == tPunct && p.peek().s == closer {
		p.next()
		return args, nil
	}
	for {
		a, err := p.expression(0)
		if err != nil {
			return nil, err
		}
		args = append(args, a)
		t := p.next()
		if t.kind == tPunct && t.s == closer {
			return args, nil
		}
		if t.kind != tPunct || t.s != "," {
			return nil, fmt.Errorf("expected %q", closer)
		}
		if p.peek().kind == tPunct && p.peek().s == closer {
			p.next()
			return args, nil
		}
	}
}

func (p *exprParser) hash() (*exprNode, error) {
	n := &exprNode{op: "hash"}
	for {
		if p.peek().kind == tPunct && p.peek().s == "}" {
			p.next()
			return n, nil
		}
		kt := p.next()
		var key *exprNode
		switch kt.kind {
		case tStr, tName:
			key = &exprNode{op: "lit", val: kt.s}
		case tNum:
			key = &exprNode{op: "lit", val: kt.num}
		case tPunct:
			if kt.s != "(" {
				return nil, errors.New("bad hash key")
			}
			k, err := p.expression(0)
			if err != nil {
				return nil, err
			}
			if err := p.expect(")"); err != nil {
				return nil, err
			}
			key = k
		default:
			return nil, errors.New("bad hash key")
		}
		if err := p.expect(":"); err != nil {
			return nil, err
		}
		v, err := p.expression(0)
		if err != nil {
			return nil, err
		}
		n.args = append(n.args, key, v)
		if p.peek().kind == tPunct && p.peek().s == "," {
			p.next()
		}
	}
}

func (p *exprParser) postfix(n *exprNode) (*exprNode, error) {
	for {
		t := p.peek()
		if t.kind != tPunct {
			return n, nil
		}
		switch t.s {
		case ".", "?.":
			p.next()
			name := p.next()
			if name.kind != tName {
				return nil, errors.New("expected a name after '.'")
			}
			if p.peek().kind == tPunct && p.peek().s == "(" {
				args, err := p.arguments(")")
				if err != nil {
					return nil, err
				}
				n = &exprNode{op: "method", s: name.s, args: append([]*exprNode{n}, args...)}
			} else {
				n = &exprNode{op: "prop", s: name.s, args: []*exprNode{n}}
			}
			if t.s == "?." {
				n.val = true // null-safe
			}
		case "[":
			p.next()
			idx, err := p.expression(0)
			if err != nil {
				return nil, err
			}
			if err := p.expect("]"); err != nil {
				return nil, err
			}
			n = &exprNode{op: "index", args: []*exprNode{n, idx}}
		default:
			return n, nil
		}
	}
}

// ---- evaluation ----

func fail(format string, a ...any) { panic(&errExpr{msg: fmt.Sprintf(format, a...)}) }

func (env *ExprEnv) eval(n *exprNode) any {
	switch n.op {
	case "lit":
		return n.val
	case "name":
		v, ok := env.Vars[n.s]
		if !ok {
			fail("variable %q is not defined", n.s)
		}
		return v
	case "list":
		out := make([]any, 0, len(n.args))
		for _, a := range n.args {
			out = append(out, env.eval(a))
		}
		return out
	case "hash":
		out := map[string]any{}
		for i := 0; i+1 < len(n.args); i += 2 {
			k := env.eval(n.args[i])
			if u, ok := k.(Unknown); ok {
				return u
			}
			out[toString(k)] = env.eval(n.args[i+1])
		}
		return out
	case "call":
		f, ok := env.Funcs[n.s]
		if !ok {
			return Unknown{Reason: "function " + n.s + "() is not supported"}
		}
		args := make([]any, len(n.args))
		for i, a := range n.args {
			args[i] = env.eval(a)
			if u, ok := args[i].(Unknown); ok {
				return u
			}
		}
		return f(args)
	case "prop", "method", "index":
		return env.access(n)
	case "unary":
		v := env.eval(n.args[0])
		if u, ok := v.(Unknown); ok {
			return u
		}
		switch n.s {
		case "not", "!":
			return !toBool(v)
		case "-":
			return arith("-", int64(0), v)
		}
		return toNumber(v)
	case "ternary":
		c := env.eval(n.args[0])
		if u, ok := c.(Unknown); ok {
			return u
		}
		if toBool(c) {
			if n.args[1] == n.args[0] {
				return c
			}
			return env.eval(n.args[1])
		}
		return env.eval(n.args[2])
	case "binary":
		return env.binary(n)
	}
	fail("unsupported expression")
	return nil
}

func (env *ExprEnv) access(n *exprNode) any {
	base := env.eval(n.args[0])
	if u, ok := base.(Unknown); ok {
		return u
	}
	nullSafe := n.val == true
	if base == nil && nullSafe {
		return nil
	}
	switch n.op {
	case "prop":
		switch b := base.(type) {
		case *Object:
			if v, ok := b.Props[n.s]; ok {
				return v
			}
		case map[string]any:
			if v, ok := b[n.s]; ok {
				return v
			}
		}
		fail("no property %q", n.s)
	case "method":
		if b, ok := base.(*Object); ok {
			if m, ok := b.Methods[n.s]; ok {
				args := make([]any, len(n.args)-1)
				for i, a := range n.args[1:] {
					args[i] = env.eval(a)
					if u, ok := args[i].(Unknown); ok {
						return u
					}
				}
				return m(args)
			}
			return Unknown{Reason: "method " + n.s + "() is not supported"}
		}
		fail("no method %q", n.s)
	case "index":
		idx := env.eval(n.args[1])
		if u, ok := idx.(Unknown); ok {
			return u
		}
		switch b := base.(type) {
		case map[string]any:
			return b[toString(idx)]
		case *Object:
			return b.Props[toString(idx)]
		case []any:
			if i, ok := idx.(int64); ok && i >= 0 && i < int64(len(b)) {
				return b[i]
			}
			if f, ok := phpNumeric(toString(idx)); ok && f == math.Trunc(f) && f >= 0 && int(f) < len(b) {
				return b[int(f)]
			}
			return nil
		}
		return nil
	}
	return nil
}

func (env *ExprEnv) binary(n *exprNode) any {
	op := n.s
	left := env.eval(n.args[0])
	switch op {
	case "and", "&&":
		if _, ok := left.(Unknown); !ok && !toBool(left) {
			return false
		}
		right := env.eval(n.args[1])
		if _, ok := right.(Unknown); !ok && !toBool(right) {
			return false
		}
		if u, ok := left.(Unknown); ok {
			return u
		}
		if u, ok := right.(Unknown); ok {
			return u
		}
		return true
	case "or", "||":
		if _, ok := left.(Unknown); !ok && toBool(left) {
			return true
		}
		right := env.eval(n.args[1])
		if _, ok := right.(Unknown); !ok && toBool(right) {
			return true
		}
		if u, ok := left.(Unknown); ok {
			return u
		}
		if u, ok := right.(Unknown); ok {
			return u
		}
		return false
	case "??":
		if left != nil {
			return left
		}
		return env.eval(n.args[1])
	}
	if u, ok := left.(Unknown); ok {
		return u
	}
	right := env.eval(n.args[1])
	if u, ok := right.(Unknown); ok {
		return u
	}
	switch op {
	case "==":
		return looseEqual(left, right)
	case "!=":
		return !looseEqual(left, right)
	case "===":
		return strictEqual(left, right)
	case "!==":
		return !strictEqual(left, right)
	case "<":
		return compare(left, right) < 0
	case ">":
		return compare(left, right) > 0
	case "<=":
		return compare(left, right) <= 0
	case ">=":
		return compare(left, right) >= 0
	case "in", "not in":
		list, ok := right.([]any)
		if !ok {
			if m, isMap := right.(map[string]any); isMap {
				for _, v := range m {
					list = append(list, v)
				}
			} else {
				fail("right side of %q is not an array", op)
			}
		}
		found := false
		for _, e := range list {
			if strictEqual(left, e) {
				found = true
				break
			}
		}
		return found == (op == "in")
	case "matches":
		re, err := phpRegexp(toString(right))
		if err != nil {
			return Unknown{Reason: "regular expression not supported"}
		}
		return re.MatchString(toString(left))
	case "contains":
		return strings.Contains(toString(left), toString(right))
	case "starts with":
		return strings.HasPrefix(toString(left), toString(right))
	case "ends with":
		return strings.HasSuffix(toString(left), toString(right))
	case "~":
		return toString(left) + toString(right)
	case "..":
		a, b := toInt(left), toInt(right)
		if b-a > 10000 {
			fail("range too large")
		}
		var out []any
		for i := a; i <= b; i++ {
			out = append(out, i)
		}
		return out
	case "&":
		return toInt(left) & toInt(right)
	case "|":
		return toInt(left) | toInt(right)
	case "^":
		return toInt(left) ^ toInt(right)
	case "<<":
		return toInt(left) << (uint64(toInt(right)) & 63)
	case ">>":
		return toInt(left) >> (uint64(toInt(right)) & 63)
	}
	return arith(op, left, right)
}

// phpRegexp converts a PCRE pattern with delimiters ("/^Dev/i") to Go.
func phpRegexp(p string) (*regexp.Regexp, error) {
	if len(p) < 2 {
		return nil, errUnsupported
	}
	d := p[0]
	closer := d
	switch d {
	case '(':
		closer = ')'
	case '{':
		closer = '}'
	case '[':
		closer = ']'
	case '<':
		closer = '>'
	}
	end := strings.LastIndexByte(p, closer)
	if end <= 0 || isNameChar(d) || d == '\\' {
		return nil, errUnsupported
	}
	body, mods := p[1:end], p[end+1:]
	flags := ""
	for _, m := range mods {
		switch m {
		case 'i', 'm', 's':
			flags += string(m)
		case 'u', 'D':
		default:
			return nil, errUnsupported
		}
	}
	if flags != "" {
		body = "(?" + flags + ")" + body
	}
	return regexp.Compile(body)
}

// ---- PHP value semantics ----

func toBool(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case int64:
		return x != 0
	case float64:
		return x != 0
	case string:
		return x != "" && x != "0"
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}

func toString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case bool:
		if x {
			return "1"
		}
		return ""
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'G', 14, 64)
	case string:
		return x
	case []any, map[string]any:
		return "Array"
	}
	fail("value cannot be used as a string")
	return ""
}

// toNumber converts like PHP arithmetic: numeric strings to numbers,
// anything else to 0 (PHP 8 warns; TYPO3 conditions still go on).
func toNumber(v any) any {
	switch x := v.(type) {
	case int64, float64:
		return x
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	case nil:
		return int64(0)
	case string:
		if f, ok := phpNumeric(x); ok {
			if i, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64); err == nil {
				return i
			}
			return f
		}
		fail("non-numeric value in arithmetic")
	}
	fail("non-numeric value in arithmetic")
	return nil
}

func toInt(v any) int64 {
	switch x := toNumber(v).(type) {
	case int64:
		return x
	case float64:
		return int64(x)
	}
	return 0
}

func toFloat(v any) float64 {
	switch x := toNumber(v).(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	}
	return 0
}

func arith(op string, l, r any) any {
	a, b := toNumber(l), toNumber(r)
	ai, aInt := a.(int64)
	bi, bInt := b.(int64)
	if aInt && bInt {
		switch op {
		case "+":
			if s := ai + bi; (s > ai) == (bi > 0) {
				return s
			}
		case "-":
			if s := ai - bi; (s < ai) == (bi > 0) {
				return s
			}
		case "*":
			if ai == 0 || bi == 0 {
				return int64(0)
			}
			if s := ai * bi; s/bi == ai {
				return s
			}
		case "%":
			if bi == 0 {
				fail("modulo by zero")
			}
			return ai % bi
		}
	}
	x, y := toFloat(a), toFloat(b)
	switch op {
	case "+":
		return x + y
	case "-":
		return x - y
	case "*":
		return x * y
	case "/":
		if y == 0 {
			fail("division by zero")
		}
		q := x / y
		if aInt && bInt && q == math.Trunc(q) {
			return int64(q)
		}
		return q
	case "%":
		if int64(y) == 0 {
			fail("modulo by zero")
		}
		return int64(x) % int64(y)
	case "**":
		return math.Pow(x, y)
	}
	fail("unsupported operator %q", op)
	return nil
}

func isNumber(v any) bool {
	switch v.(type) {
	case int64, float64:
		return true
	}
	return false
}

// looseEqual is PHP 8's ==.
func looseEqual(a, b any) bool {
	if a == nil && b == nil {
		return true
	}
	if ab, ok := a.(bool); ok {
		return ab == toBool(b)
	}
	if bb, ok := b.(bool); ok {
		return bb == toBool(a)
	}
	if a == nil {
		if s, ok := b.(string); ok {
			return s == ""
		}
		return !toBool(b)
	}
	if b == nil {
		return looseEqual(b, a)
	}
	switch x := a.(type) {
	case int64, float64:
		switch y := b.(type) {
		case int64, float64:
			return toFloat(x) == toFloat(y)
		case string:
			if f, ok := phpNumeric(y); ok {
				return toFloat(x) == f
			}
			return toString(x) == y
		}
	case string:
		switch y := b.(type) {
		case int64, float64:
			return looseEqual(y, x)
		case string:
			if f, ok := phpNumeric(x); ok {
				if g, ok := phpNumeric(y); ok {
					return f == g
				}
			}
			return x == y
		}
	case []any:
		if y, ok := b.([]any); ok && len(x) == len(y) {
			for i := range x {
				if !looseEqual(x[i], y[i]) {
					return false
				}
			}
			return true
		}
	case map[string]any:
		if y, ok := b.(map[string]any); ok && len(x) == len(y) {
			for k, v := range x {
				w, ok := y[k]
				if !ok || !looseEqual(v, w) {
					return false
				}
			}
			return true
		}
	}
	return false
}

// strictEqual is PHP's ===.
func strictEqual(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !strictEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if w, ok := y[k]; !ok || !strictEqual(v, w) {
				return false
			}
		}
		return true
	}
	return a == b
}

// compare is PHP 8's <=> for scalars.
func compare(a, b any) int {
	if _, ok := a.(bool); ok {
		return cmpBool(toBool(a), toBool(b))
	}
	if _, ok := b.(bool); ok {
		return cmpBool(toBool(a), toBool(b))
	}
	if a == nil || b == nil {
		if s, ok := a.(string); ok {
			return strings.Compare(s, "")
		}
		if s, ok := b.(string); ok {
			return strings.Compare("", s)
		}
		return cmpBool(toBool(a), toBool(b))
	}
	as, aStr := a.(string)
	bs, bStr := b.(string)
	switch {
	case aStr && bStr:
		return phpCompareStrings(as, bs)
	case isNumber(a) && isNumber(b):
		return cmpFloat(toFloat(a), toFloat(b))
	case isNumber(a) && bStr:
		if f, ok := phpNumeric(bs); ok {
			return cmpFloat(toFloat(a), f)
		}
		return strings.Compare(toString(a), bs)
	case aStr && isNumber(b):
		return -compare(b, a)
	}
	fail("values cannot be compared")
	return 0
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
