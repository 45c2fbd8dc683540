package typoscript

import (
	"strings"
)

// Verdict is the outcome of one condition. Decided is false when the
// expression needs something t3agent cannot know (a live request, the
// date, a logged-in user …); the condition then counts as false, like a
// failing expression in TYPO3, and Reason says why.
type Verdict struct {
	Value   bool
	Decided bool
	Reason  string
}

// Evaluator decides condition expressions.
type Evaluator interface {
	Evaluate(expr string) Verdict
}

// ConditionResult records one condition met while building a tree.
type ConditionResult struct {
	// Expr is the expression as evaluated (constants substituted).
	Expr string `json:"condition"`
	// Else marks the [ELSE] branch of Expr.
	Else    bool   `json:"else"`
	Verdict bool   `json:"verdict"`
	Decided bool   `json:"evaluated"`
	Reason  string `json:"reason,omitempty"`
	In      string `json:"in"`
	Line    int    `json:"line,omitempty"`
}

// ASTParams configures BuildAST.
type ASTParams struct {
	// Constants are the flat constants substituted into values, modifier
	// arguments and conditions; nil leaves {$…} alone (the constants tree
	// itself is built that way).
	Constants map[string]string
	// Eval decides conditions; nil makes every condition undecided (false).
	Eval   Evaluator
	Limits Limits
}

// AST is a built syntax tree with what building it met.
type AST struct {
	Root       *Node
	Conditions []ConditionResult
	// Findings are problems of evaluation: exceeded limits, unknown
	// modifiers, getEnv (not evaluated).
	Findings []Finding
	// Shown maps condition nodes to the expression as evaluated, for
	// Include.TreeString.
	Shown map[*Include]string
}

// BuildAST builds the syntax tree of an include tree like TYPO3's
// IncludeTreeAstBuilderVisitor with the verdict-aware traverser: nodes are
// visited depth first, a condition node's children only when it holds, a
// node's own lines after its children, and a template with "clear" starts
// a new tree.
func BuildAST(tree *Include, p ASTParams) *AST {
	b := &astBuilder{
		p:   p,
		lim: p.Limits.withDefaults(),
		ast: &AST{Root: &Node{}, Shown: map[*Include]string{}},
	}
	b.visit(tree)
	b.ast.Root.compactAll()
	return b.ast
}

type astBuilder struct {
	p     ASTParams
	lim   Limits
	ast   *AST
	nodes int
}

func (b *astBuilder) finding(inc *Include, line int, kind, detail string) {
	b.ast.Findings = append(b.ast.Findings, Finding{Include: inc.Name, Line: line, Kind: kind, Detail: detail})
}

func (b *astBuilder) visit(inc *Include) {
	if (inc.Kind == IncludeSysTemplate || inc.Kind == IncludeSiteTemplate) && inc.Clear {
		b.ast.Root = &Node{}
	}
	if inc.Kind.isCondition() {
		expr := inc.Cond
		if b.p.Constants != nil {
			if s, ok := substitute(expr, b.p.Constants, b.lim.MaxExprBytes); ok {
				expr = s
			}
		}
		b.ast.Shown[inc] = expr
		var v Verdict
		if b.p.Eval != nil {
			v = b.p.Eval.Evaluate(expr)
		} else {
			v = Verdict{Reason: "no evaluator"}
		}
		holds := v.Decided && v.Value
		isElse := inc.Kind == IncludeConditionElse
		if isElse {
			holds = !holds
		}
		b.ast.Conditions = append(b.ast.Conditions, ConditionResult{
			Expr: expr, Else: isElse, Verdict: holds, Decided: v.Decided, Reason: v.Reason, In: inc.Name, Line: inc.Line,
		})
		if !holds {
			return
		}
	}
	for _, c := range inc.Children {
		b.visit(c)
	}
	if !inc.Split {
		b.apply(inc)
	}
}

// frame is one open block: its node (nil inside a block that was refused)
// and the depth of that node.
type frame struct {
	node  *Node
	depth int
}

// apply runs one unsplit node's lines against the tree, starting at the
// root: blocks never span nodes (AstBuilder::build per line stream).
func (b *astBuilder) apply(inc *Include) {
	stack := []frame{{node: b.ast.Root}}
	for _, l := range inc.Lines {
		cur := stack[len(stack)-1]
		switch l.Kind {
		case LineBlockOpen:
			if cur.node == nil {
				stack = append(stack, frame{})
				continue
			}
			if cur.depth+len(l.Path) > b.lim.MaxDepth {
				b.finding(inc, l.Num, KindLimit, "object path deeper than the limit")
				stack = append(stack, frame{})
				continue
			}
			n := b.getOrAdd(cur.node, l.Path)
			if n == nil {
				b.finding(inc, l.Num, KindLimit, "more nodes than the limit")
				stack = append(stack, frame{})
				continue
			}
			stack = append(stack, frame{node: n, depth: cur.depth + len(l.Path)})
		case LineBlockClose:
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
		case LineAssign, LineCopy, LineReference, LineUnset, LineFunction:
			if cur.node == nil {
				continue
			}
			if cur.depth+len(l.Path) > b.lim.MaxDepth {
				b.finding(inc, l.Num, KindLimit, "object path deeper than the limit")
				continue
			}
			b.operator(inc, l, cur)
		}
	}
}

func (b *astBuilder) operator(inc *Include, l Line, cur frame) {
	origin := Origin{Include: inc.Name, Line: l.Num}
	switch l.Kind {
	case LineAssign:
		n := b.getOrAdd(cur.node, l.Path)
		if n == nil {
			b.finding(inc, l.Num, KindLimit, "more nodes than the limit")
			return
		}
		n.Value, n.HasValue, n.Origin = b.value(inc, l.Num, l.Value), true, origin
	case LineUnset:
		node := cur.node
		for i, seg := range l.Path {
			next := node.Child(seg)
			if next == nil {
				return
			}
			if i == len(l.Path)-1 {
				node.remove(seg)
				return
			}
			node = next
		}
	case LineCopy:
		b.copyLine(inc, l, cur)
	case LineReference:
		b.reference(l, cur.node, origin)
	case LineFunction:
		n := b.getOrAdd(cur.node, l.Path)
		if n == nil {
			b.finding(inc, l.Num, KindLimit, "more nodes than the limit")
			return
		}
		arg := ""
		if l.HasArg {
			arg = b.value(inc, l.Num, l.Value)
		}
		v, has, problem := modify(l.Func, arg, n.Value, n.HasValue)
		switch problem {
		case "":
		case modGetEnv:
			b.finding(inc, l.Num, KindGetEnv, "getEnv is not evaluated; the value before it is kept")
		default:
			b.finding(inc, l.Num, KindModifier, problem)
		}
		if has && len(v) > b.lim.MaxValueBytes {
			b.finding(inc, l.Num, KindLimit, "value larger than the limit")
			return
		}
		if has != n.HasValue || v != n.Value {
			n.Value, n.HasValue, n.Origin = v, has, origin
		}
	}
}

// value substitutes constants into a value when constants are given.
func (b *astBuilder) value(inc *Include, line int, v string) string {
	if b.p.Constants == nil {
		return v
	}
	s, ok := substitute(v, b.p.Constants, b.lim.MaxValueBytes)
	if !ok {
		b.finding(inc, line, KindLimit, "value after constant substitution larger than the limit")
		return v
	}
	return s
}

// getOrAdd walks path below n, creating missing nodes; nil when the node
// limit is reached.
func (b *astBuilder) getOrAdd(n *Node, path []string) *Node {
	for _, seg := range path {
		c := n.Child(seg)
		if c == nil {
			if b.nodes >= b.lim.MaxNodes {
				return nil
			}
			b.nodes++
			c = &Node{Name: seg}
			n.set(c)
		}
		n = c
	}
	return n
}

// copyLine is "target < source" (AbstractAstBuilder::handleIdentifierCopyLine):
// a deep copy; when the source has no value an existing target keeps its
// value, and an existing reference target receives the source's children.
func (b *astBuilder) copyLine(inc *Include, l Line, cur frame) {
	src := b.ast.Root
	if l.Relative {
		src = cur.node
	}
	for _, seg := range l.Source {
		if src = src.Child(seg); src == nil {
			return
		}
	}
	size, height := measure(src)
	if cur.depth+len(l.Path)+height > b.lim.MaxDepth {
		b.finding(inc, l.Num, KindLimit, "copy would nest deeper than the limit")
		return
	}
	if b.nodes+size > b.lim.MaxNodes {
		b.finding(inc, l.Num, KindLimit, "more nodes than the limit")
		return
	}
	parent := b.getOrAdd(cur.node, l.Path[:len(l.Path)-1])
	if parent == nil {
		b.finding(inc, l.Num, KindLimit, "more nodes than the limit")
		return
	}
	name := l.Path[len(l.Path)-1]
	var existing *Node
	if !src.HasValue {
		existing = parent.Child(name)
	} else {
		parent.remove(name)
	}
	b.nodes += size
	var target *Node
	if existing != nil && existing.IsRef {
		target = existing
		for _, c := range src.Children() {
			target.set(c.clone())
		}
	} else {
		target = src.clone()
		target.Name = name
		parent.set(target)
	}
	// PHP keeps the old value only when it is truthy ("" and "0" are not).
	if !src.HasValue && existing != nil && existing.HasValue && existing.Value != "" && existing.Value != "0" {
		target.Value, target.HasValue = existing.Value, true
	}
}

// measure returns the size and height (levels below n) of n's subtree.
func measure(n *Node) (size, height int) {
	size = 1
	for _, c := range n.Children() {
		s, h := measure(c)
		size += s
		height = max(height, h+1)
	}
	return size, height
}

// reference is "target =< source" (handleIdentifierReferenceLine): the
// target becomes a reference node; an existing target's children move
// into it and the node moves to the end of its parent.
func (b *astBuilder) reference(l Line, n *Node, origin Origin) {
	ref := strings.Join(l.Source, ".")
	if l.Relative {
		ref = "." + ref
	}
	for i, seg := range l.Path {
		last := i == len(l.Path)-1
		found := n.Child(seg)
		switch {
		case found == nil && !last:
			if b.nodes >= b.lim.MaxNodes {
				return
			}
			b.nodes++
			found = &Node{Name: seg}
			n.set(found)
		case found == nil && last:
			b.nodes++
			n.set(&Node{Name: seg, Ref: ref, IsRef: true, Origin: origin})
			return
		case last:
			r := &Node{Name: seg, Ref: ref, IsRef: true, Origin: origin, children: found.Children()}
			if len(r.children) > indexThreshold {
				r.reindex()
			}
			n.remove(seg)
			n.set(r)
			return
		}
		n = found
	}
}

// substitute replaces {$name} and {$a ?? $b} in s with flat constants like
// TYPO3's ConstantAwareTokenStream: a constant ends at the first "}", an
// unknown one stays as written, and the result is not scanned again. ok is
// false when the result would exceed limit bytes.
func substitute(s string, constants map[string]string, limit int) (string, bool) {
	i := strings.Index(s, "{$")
	if i < 0 {
		return s, true
	}
	var out strings.Builder
	for i >= 0 {
		out.WriteString(s[:i])
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			out.WriteString(s[i:])
			s = ""
			break
		}
		token := s[i : i+2+end+1]
		if v, ok := lookupConstant(token[2:len(token)-1], constants); ok {
			out.WriteString(v)
		} else {
			out.WriteString(token)
		}
		if out.Len() > limit {
			return "", false
		}
		s = s[i+len(token):]
		i = strings.Index(s, "{$")
	}
	out.WriteString(s)
	if out.Len() > limit {
		return "", false
	}
	return out.String(), true
}

// lookupConstant resolves "name" or "a ?? $b ?? $c" (first defined wins).
func lookupConstant(name string, constants map[string]string) (string, bool) {
	if !strings.Contains(name, "??") {
		v, ok := constants[name]
		return v, ok
	}
	for i, part := range strings.Split(name, "??") {
		part = strings.TrimSpace(part)
		if i > 0 {
			var ok bool
			if part, ok = strings.CutPrefix(part, "$"); !ok {
				return "", false
			}
		}
		if v, ok := constants[part]; ok {
			return v, true
		}
	}
	return "", false
}

// SubstituteConstants is the substitution used for values, exported for
// callers that show conditions or values with constants resolved.
func SubstituteConstants(s string, constants map[string]string, lim Limits) (string, bool) {
	return substitute(s, constants, lim.withDefaults().MaxValueBytes)
}
