package typoscript_test

import (
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/typoscript"
)

// build parses src as one record field and builds its tree.
func build(t testing.TB, src string, p typoscript.ASTParams) *typoscript.AST {
	t.Helper()
	b := typoscript.NewBuilder(typoscript.BuildParams{Type: typoscript.TypeSetup, Limits: p.Limits})
	defer b.Close()
	inc := b.String(typoscript.IncludeSysTemplate, "test", "", src)
	return typoscript.BuildAST(inc, p)
}

// flat renders a tree as "key=value" lines; references as "key=<ref".
func flat(n *typoscript.Node) string {
	var b strings.Builder
	var walk func(prefix string, n *typoscript.Node)
	walk = func(prefix string, n *typoscript.Node) {
		for _, c := range n.Children() {
			key := prefix + c.Name
			switch {
			case c.IsRef:
				b.WriteString(key + "=<" + c.Ref + "\n")
			case c.HasValue:
				b.WriteString(key + "=" + c.Value + "\n")
			}
			walk(key+".", c)
		}
	}
	walk("", n)
	return b.String()
}

func TestOperators(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, src, want string }{
		{"assign and block", "a = 1\na {\n b = 2\n c.d = 3\n}\n", "a=1\na.b=2\na.c.d=3\n"},
		{"overwrite keeps position", "a = 1\nb = 2\na = 3", "a=3\nb=2\n"},
		{"unset", "a.b = 1\na.c = 2\na.b >\nx >", "a.c=2\n"},
		{"copy is deep and independent", "a.b = 1\nc < a\nc.b = 2", "a.b=1\nc.b=2\n"},
		{"copy replaces the target and moves it last", "c.x = 1\nd = 0\na = A\nc < a", "d=0\na=A\nc=A\n"},
		{"copy without source value keeps a truthy target value", "a.b = 1\nc = keep\nc.y = 2\nc < a", "a.b=1\nc=keep\nc.b=1\n"},
		{"copy without source value drops a target value 0", "a.b = 1\nc = 0\nc < a", "a.b=1\nc.b=1\n"},
		{"relative copy", "x {\n d.v = 1\n e < .d\n}", "x.d.v=1\nx.e.v=1\n"},
		{"copy of a missing source is a no-op", "a = 1\na < nothing", "a=1\n"},
		{"reference", "lib.x = TEXT\nt.e =< lib.x\nt.e.value = v", "lib.x=TEXT\nt.e=<lib.x\nt.e.value=v\n"},
		{"reference over an existing node keeps its children and moves last", "t.e.a = 1\nt.f = 2\nt.e =< lib.x",
			"t.f=2\nt.e=<lib.x\nt.e.a=1\n"},
		{"copy into a reference adds the children", "lib.c.k = v\nt.e =< lib.x\nt.e < lib.c", "lib.c.k=v\nt.e=<lib.x\nt.e.k=v\n"},
		// The condition is undecided (no evaluator); "a {" stays open only
		// in its own segment, so c lands at the top level.
		{"blocks never span conditions", "a {\n[foo]\nb = 1\n[END]\nc = 2\n}", "c=2\n"},
		{"extra closing braces are ignored", "}\n}\na = 1", "a=1\n"},
		{"escaped dot", `a\.b.c = 1`, "a.b.c=1\n"},
		{"modifiers", "a = 1,2\na := addToList(3)\nb := addToList(x)\nc = x,y,x\nc := uniqueList()\n" +
			"d = 10,9,1\nd := sortList(numeric,descending)\ne = Hello\ne := appendString( World)\n" +
			"e := replaceString(World|You)\nf = a,b,c\nf := removeFromList(b)\nf := reverseList()\n" +
			"g = abc\ng := removeString(b)\ng := prependString(>)\nh = b,a,10,9\nh := sortList()",
			"a=1,2,3\nb=x\nc=x,y\nd=10,9,1\ne=Hello You\nf=c,a\ng=>ac\nh=9,10,a,b\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := flat(build(t, c.src, typoscript.ASTParams{}).Root)
			if got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

func TestModifierFindings(t *testing.T) {
	t.Parallel()
	ast := build(t, "a = x\na := getEnv(HOME)\nb = 1,x\nb := sortList(numeric)\nc = v\nc := nope(1)", typoscript.ASTParams{})
	if got := flat(ast.Root); got != "a=x\nb=1,x\nc=v\n" {
		t.Errorf("values changed: %s", got)
	}
	kinds := map[string]int{}
	for _, f := range ast.Findings {
		kinds[f.Kind] = f.Line
	}
	if kinds[typoscript.KindGetEnv] != 2 || kinds[typoscript.KindModifier] != 6 {
		t.Errorf("findings %+v: want getEnv on line 2 and modifier problems", ast.Findings)
	}
}

func TestConstants(t *testing.T) {
	t.Parallel()
	consts := map[string]string{"a": "A", "b": "{$a}", "c.d": "CD", "e": ""}
	cases := []struct{ src, want string }{
		{"x = {$a}-{$c.d}", "A-CD"},
		{"x = {$b}", "{$a}"}, // a substituted value is not scanned again
		{"x = {$missing}", "{$missing}"},
		{"x = {$missing ?? $a}", "A"},
		{"x = {$missing ?? $other ?? $c.d}", "CD"},
		{"x = {$missing ?? $other}", "{$missing ?? $other}"},
		{"x = {$e}|", "|"},
		{"x = {$a", "{$a"},
		{"x = {$a{$a}}", "{$a{$a}}"},
		{"x (\n{$a}\n)", "A"},
		{"x = 1\nx := appendString({$a})", "1A"},
	}
	for _, c := range cases {
		ast := build(t, c.src, typoscript.ASTParams{Constants: consts})
		n := ast.Root.Child("x")
		if n == nil || n.Value != c.want {
			t.Errorf("%q: got %+v, want %q", c.src, n, c.want)
		}
	}
	// Without constants (the constants tree itself) nothing is replaced.
	if n := build(t, "x = {$a}", typoscript.ASTParams{}).Root.Child("x"); n.Value != "{$a}" {
		t.Errorf("constants tree substituted: %q", n.Value)
	}
}

// TestConstantCycles: constants referring to each other stay literal and
// cost nothing.
func TestConstantCycles(t *testing.T) {
	t.Parallel()
	consts := build(t, "a = {$b}\nb = {$a}\nc = {$c}", typoscript.ASTParams{}).Root.FlatMap()
	ast := build(t, "x = {$a}{$b}{$c}", typoscript.ASTParams{Constants: consts})
	if got := ast.Root.Child("x").Value; got != "{$b}{$a}{$c}" {
		t.Errorf("got %q", got)
	}
}

type fixedEval map[string]typoscript.Verdict

func (f fixedEval) Evaluate(expr string) typoscript.Verdict { return f[expr] }

func TestConditionsInTree(t *testing.T) {
	t.Parallel()
	src := "[yes]\na = 1\n[ELSE]\na = 2\n[END]\n[no]\nb = 1\n[else]\nb = 2\n[global]\n[{$c} == 1]\nc = 1\n[maybe]\nd = 1\n[else]\nd = 2\n[end]"
	eval := fixedEval{
		"yes":    {Value: true, Decided: true},
		"no":     {Value: false, Decided: true},
		"1 == 1": {Value: true, Decided: true},
		"maybe":  {Value: true, Decided: false, Reason: "needs the live request"},
	}
	ast := build(t, src, typoscript.ASTParams{Eval: eval, Constants: map[string]string{"c": "1"}})
	if got := flat(ast.Root); got != "a=1\nb=2\nc=1\nd=2\n" {
		t.Errorf("tree:\n%s", got)
	}
	var got []string
	for _, c := range ast.Conditions {
		got = append(got, c.Expr+"|"+map[bool]string{true: "else", false: "if"}[c.Else]+"|"+
			map[bool]string{true: "T", false: "F"}[c.Verdict]+map[bool]string{true: "d", false: "u"}[c.Decided])
	}
	want := "yes|if|Td yes|else|Fd no|if|Fd no|else|Td 1 == 1|if|Td maybe|if|Fu maybe|else|Tu"
	if strings.Join(got, " ") != want {
		t.Errorf("conditions %v\nwant %s", got, want)
	}
}

func TestClearResetsTheTree(t *testing.T) {
	t.Parallel()
	b := typoscript.NewBuilder(typoscript.BuildParams{})
	defer b.Close()
	root := &typoscript.Include{Kind: typoscript.IncludeRoot, Name: "ROOT"}
	root.Add(b.String(typoscript.IncludeSysTemplate, "one", "", "a = 1"))
	second := b.String(typoscript.IncludeSysTemplate, "two", "", "b = 2")
	second.Clear = true
	root.Add(second)
	root.Add(b.String(typoscript.IncludeSysTemplate, "three", "", "c = 3"))
	if got := flat(typoscript.BuildAST(root, typoscript.ASTParams{}).Root); got != "b=2\nc=3\n" {
		t.Errorf("got %s", got)
	}
}

func TestFlattenAndArray(t *testing.T) {
	t.Parallel()
	ast := build(t, "a = 1\na.b = 2\nk\\.x = 3\nr =< a\nr.z = 4", typoscript.ASTParams{})
	var keys []string
	for _, kv := range ast.Root.Flatten() {
		keys = append(keys, kv.Key+"="+kv.Value)
	}
	if got := strings.Join(keys, " "); got != `a=1 a.b=2 k\.x=3 r.z=4` {
		t.Errorf("flatten: %s", got)
	}
	arr := ast.Root.Array()
	if len(arr) != 5 || arr[3].Key != "r" || arr[3].Value != "< a" || arr[4].Key != "r." || arr[4].Children[0].Value != "4" {
		t.Errorf("array form: %+v", arr)
	}
	if n := ast.Root.LookupDotted(`k\.x`); n == nil || n.Value != "3" {
		t.Errorf("LookupDotted with escaped dot: %+v", n)
	}
}
