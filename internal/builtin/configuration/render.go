package configuration

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/t3agent/t3agent/internal/guardrail/credential"
	"github.com/t3agent/t3agent/internal/typoscript"
)

// Output limits. maxLines is SPEC §4's cap for a subtree; the others keep
// one answer readable and well below the gate's content cap.
const (
	maxLines = 300 // body lines of a subtree
	// maxBodyBytes keeps the body below the gate's 50 000-byte content
	// cap, so the sections after it (conditions, notes) survive.
	maxBodyBytes  = 40000
	maxValueRunes = 500 // one value on one line
	maxExprRunes  = 200 // one condition as listed
	maxNameRunes  = 160 // an include or template name
	maxListed     = 20  // conditions, getEnv places, notes
	maxSources    = 8   // provenance entries of a subtree
	maxFindings   = 50  // check_typoscript (builtin-tools.md)
	// minSecretRunes is the shortest redacted value that is also scrubbed
	// from other values; shorter ones ("0", "1", "md5") are flags, not
	// secrets, and scrubbing them would garble every answer.
	minSecretRunes = 6
)

const redacted = "[redacted]"

// below is the credential rule that applies to a key's value: the
// strongest of its own name and the names above it (under), so that the
// values below a credential name (credentials.user) are judged as its
// own. The rule is package credential's, shared with secret redaction
// and typoscript.RedactValue.
func below(under credential.Strength, name string) credential.Strength {
	return max(under, credential.Name(name))
}

// splitPath cuts a dotted object path like the engine does: "\." is a
// literal dot, empty segments are dropped.
func splitPath(path string) []string {
	var segs []string
	var cur strings.Builder
	for i := 0; i < len(path); i++ {
		switch {
		case path[i] == '\\' && i+1 < len(path) && path[i+1] == '.':
			cur.WriteByte('.')
			i++
		case path[i] == '.':
			if cur.Len() > 0 {
				segs = append(segs, cur.String())
			}
			cur.Reset()
		default:
			cur.WriteByte(path[i])
		}
	}
	if cur.Len() > 0 {
		segs = append(segs, cur.String())
	}
	return segs
}

// joinPath writes segments back as a dotted path.
func joinPath(segs []string) string {
	esc := make([]string, len(segs))
	for i, s := range segs {
		esc[i] = strings.ReplaceAll(s, ".", `\.`)
	}
	return strings.Join(esc, ".")
}

// redactor hides credentials in everything an answer shows.
type redactor struct {
	// secrets are redacted values long enough to be scrubbed wherever
	// they reappear, longest first so overlapping ones go whole.
	secrets []string
	// root is the project root, trimmed from absolute include names.
	root string
}

// newRedactor collects the values the credential rule hides in the given
// constants trees. Only constants are collected: they are what
// substitution carries into other values.
func newRedactor(root string, trees ...*typoscript.Node) *redactor {
	seen := map[string]bool{}
	var walk func(n *typoscript.Node, under credential.Strength)
	walk = func(n *typoscript.Node, under credential.Strength) {
		for _, c := range n.Children() {
			s := below(under, c.Name)
			if c.HasValue && s.Hides(c.Value) {
				if v := strings.TrimSpace(c.Value); utf8.RuneCountInString(v) >= minSecretRunes {
					seen[v] = true
				}
			}
			walk(c, s)
		}
	}
	for _, t := range trees {
		if t != nil {
			walk(t, credential.None)
		}
	}
	r := &redactor{root: root}
	for s := range seen {
		r.secrets = append(r.secrets, s)
	}
	sort.Slice(r.secrets, func(i, j int) bool {
		if len(r.secrets[i]) != len(r.secrets[j]) {
			return len(r.secrets[i]) > len(r.secrets[j])
		}
		return r.secrets[i] < r.secrets[j]
	})
	return r
}

// text redacts URL passwords and scrubs known secrets from any text.
func (r *redactor) text(s string) string {
	s = typoscript.RedactValue("", s)
	for _, sec := range r.secrets {
		if strings.Contains(s, sec) {
			s = strings.ReplaceAll(s, sec, redacted)
		}
	}
	return s
}

// value is one shown value: redacted, on one line, cut.
func (r *redactor) value(v string) string {
	return cut(oneLine(r.text(v)), maxValueRunes)
}

// name makes an include or template name fit one line; absolute paths
// inside the installation are shown relative to it.
func (r *redactor) name(s string) string {
	if r.root != "" && filepath.IsAbs(s) {
		if rel, err := filepath.Rel(r.root, s); err == nil && !strings.HasPrefix(rel, "..") {
			s = filepath.ToSlash(rel)
		}
	}
	return cut(oneLine(s), maxNameRunes)
}

// oneLine makes line breaks and other control characters visible, so a
// value can never start a line of its own in the answer.
func oneLine(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) && r != '\t' || unicode.Is(unicode.Cf, r) }) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteByte('\t')
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			q := strconv.QuoteRuneToASCII(r) // '\x1b', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// cut shortens s to limit runes, saying how much was left out.
func cut(s string, limit int) string {
	n := utf8.RuneCountInString(s)
	if n <= limit {
		return s
	}
	i := 0
	for k := range s {
		if i == limit {
			return s[:k] + fmt.Sprintf("… (%d more characters)", n-limit)
		}
		i++
	}
	return s
}

// lineWriter collects body lines up to a cap and counts the rest.
type lineWriter struct {
	b       strings.Builder
	n, max  int
	omitted int
	spent   bool // the byte budget ran out
}

// full reports whether no further line will be kept.
func (w *lineWriter) full() bool { return w.n >= w.max || w.spent }

// line adds s and reports whether it was kept.
func (w *lineWriter) line(s string) bool {
	if !w.full() && w.b.Len()+len(s)+1 > maxBodyBytes {
		w.spent = true
	}
	if w.full() {
		w.omitted++
		return false
	}
	w.b.WriteString(s)
	w.b.WriteByte('\n')
	w.n++
	return true
}

func (w *lineWriter) String() string {
	s := w.b.String()
	if w.omitted > 0 {
		s += fmt.Sprintf("… %d more lines not shown (an answer holds at most %d lines or %d kB); ask for a deeper path.\n",
			w.omitted, w.max, maxBodyBytes/1000)
	}
	return s
}

// sources summarises where the shown values were set.
type sources struct {
	order []string
	spans map[string]*span
}

type span struct{ first, last, n int }

func (s *sources) add(o typoscript.Origin) {
	if o.Include == "" {
		return
	}
	if s.spans == nil {
		s.spans = map[string]*span{}
	}
	sp, ok := s.spans[o.Include]
	if !ok {
		sp = &span{first: o.Line, last: o.Line}
		s.spans[o.Include] = sp
		s.order = append(s.order, o.Include)
	}
	sp.n++
	sp.first, sp.last = min(sp.first, o.Line), max(sp.last, o.Line)
}

// lines renders the summary, one source per line.
func (s *sources) lines(r *redactor) []string {
	var out []string
	for i, inc := range s.order {
		if i == maxSources {
			out = append(out, fmt.Sprintf("- … and %d more sources", len(s.order)-maxSources))
			break
		}
		sp := s.spans[inc]
		where := "line " + strconv.Itoa(sp.first)
		if sp.last != sp.first {
			where = fmt.Sprintf("lines %d–%d", sp.first, sp.last)
		}
		values := "1 value"
		if sp.n != 1 {
			values = strconv.Itoa(sp.n) + " values"
		}
		out = append(out, fmt.Sprintf("- %s, %s (%s)", r.name(inc), where, values))
	}
	return out
}

// origin is a value's "file:line" for inline provenance.
func origin(r *redactor, o typoscript.Origin) string {
	if o.Include == "" {
		return ""
	}
	s := r.name(o.Include)
	if o.Line > 0 {
		s += ":" + strconv.Itoa(o.Line)
	}
	return s
}

// view renders one tree for an answer.
type view struct {
	red *redactor
	w   lineWriter
	src sources
}

func newView(red *redactor) *view { return &view{red: red, w: lineWriter{max: maxLines}} }

// valuePart is " = v", " =< target", " = [redacted]" or nothing; s is
// the credential rule for n's value (see below).
func (v *view) valuePart(n *typoscript.Node, s credential.Strength) string {
	switch {
	case n.IsRef:
		return " =< " + cut(oneLine(n.Ref), maxValueRunes)
	case n.HasValue && s.Hides(n.Value):
		return " = " + redacted
	case n.HasValue:
		return " = " + v.red.value(n.Value)
	}
	return ""
}

// top lists the top-level keys: value, child count and where the value
// was set.
func (v *view) top(root *typoscript.Node) {
	for _, c := range root.Children() {
		s := c.Name
		if strings.Contains(s, ".") {
			s = strings.ReplaceAll(s, ".", `\.`)
		}
		s = oneLine(s) + v.valuePart(c, credential.Name(c.Name))
		var extra []string
		if k := len(c.Children()); k > 0 {
			extra = append(extra, fmt.Sprintf("+%d %s", k, plural(k, "child", "children")))
		}
		if (c.HasValue || c.IsRef) && origin(v.red, c.Origin) != "" {
			extra = append(extra, "set in "+origin(v.red, c.Origin))
		}
		if len(extra) > 0 {
			s += " (" + strings.Join(extra, "; ") + ")"
		}
		v.w.line(s)
	}
}

// lookup finds segs below root and the credential rule for its value
// (see below).
func lookup(root *typoscript.Node, segs []string) (*typoscript.Node, credential.Strength) {
	n, s := root, credential.None
	for _, seg := range segs {
		if n = n.Child(seg); n == nil {
			return nil, credential.None
		}
		s = below(s, seg)
	}
	return n, s
}

// subtree shows a node's value and its subtree, two spaces per level; s
// is the credential rule for n's value.
func (v *view) subtree(n *typoscript.Node, path string, s credential.Strength) {
	if v.w.line(path+v.valuePart(n, s)) && (n.HasValue || n.IsRef) {
		v.src.add(n.Origin)
	}
	var walk func(n *typoscript.Node, depth int, under credential.Strength)
	walk = func(n *typoscript.Node, depth int, under credential.Strength) {
		for _, c := range n.Children() {
			if v.w.full() {
				// Count what is left without rendering it.
				v.w.omitted += count(c)
				continue
			}
			cs := below(under, c.Name)
			name := c.Name
			if strings.Contains(name, ".") {
				name = strings.ReplaceAll(name, ".", `\.`)
			}
			if v.w.line(strings.Repeat("  ", depth)+oneLine(name)+v.valuePart(c, cs)) && (c.HasValue || c.IsRef) {
				v.src.add(c.Origin)
			}
			walk(c, depth+1, cs)
		}
	}
	walk(n, 1, s)
}

// deeper lists the paths of n's children that have children of their
// own, for a cut answer: the model can ask for one of them next.
func deeper(n *typoscript.Node, path string) []string {
	var out []string
	for _, c := range n.Children() {
		if len(c.Children()) > 0 {
			out = append(out, "- "+path+"."+oneLine(strings.ReplaceAll(c.Name, ".", `\.`)))
		}
	}
	return out
}

// flat shows every value at or below n as "full.path = value", the form
// constants are referenced in ({$full.path}).
func (v *view) flat(n *typoscript.Node, segs []string, s credential.Strength) {
	var walk func(n *typoscript.Node, key string, s credential.Strength)
	walk = func(n *typoscript.Node, key string, s credential.Strength) {
		if n.HasValue || n.IsRef {
			if v.w.line(oneLine(key) + v.valuePart(n, s)) {
				v.src.add(n.Origin)
			}
		}
		for _, c := range n.Children() {
			if v.w.full() {
				v.w.omitted += countValues(c)
				continue
			}
			walk(c, key+"."+strings.ReplaceAll(c.Name, ".", `\.`), below(s, c.Name))
		}
	}
	walk(n, joinPath(segs), s)
}

// count is the number of lines subtree rendering gives n and below.
func count(n *typoscript.Node) int {
	k := 1
	for _, c := range n.Children() {
		k += count(c)
	}
	return k
}

// countValues is the number of lines flat rendering gives n and below.
func countValues(n *typoscript.Node) int {
	k := 0
	if n.HasValue || n.IsRef {
		k = 1
	}
	for _, c := range n.Children() {
		k += countValues(c)
	}
	return k
}

// section appends a titled list, capped at maxListed entries.
func section(b *strings.Builder, title string, items []string) {
	if len(items) == 0 {
		return
	}
	b.WriteString("\n" + title + "\n")
	for i, it := range items {
		if i == maxListed {
			fmt.Fprintf(b, "- … and %d more\n", len(items)-maxListed)
			break
		}
		b.WriteString(it + "\n")
	}
}

// labelled is a tree's condition results with the name of the tree, for
// answers that cover constants and setup.
type labelled struct {
	label string
	conds []typoscript.ConditionResult
}

// undecided lists the conditions taken as false because t3agent cannot
// decide them (a live request, the date, a user, the application
// context …), each once, saying when its [ELSE] branch applied instead.
func undecided(r *redactor, trees ...labelled) []string {
	type item struct {
		text    string
		elseHit bool
	}
	var items []*item
	byKey := map[string]*item{}
	for _, t := range trees {
		for _, c := range t.conds {
			if c.Decided {
				continue
			}
			key := t.label + "\x00" + c.In + "\x00" + c.Expr
			if c.Else {
				if it, ok := byKey[key]; ok {
					it.elseHit = true
				}
				continue
			}
			if _, ok := byKey[key+"\x00"+strconv.Itoa(c.Line)]; ok {
				continue
			}
			where := r.name(c.In)
			if c.Line > 0 {
				where += ":" + strconv.Itoa(c.Line)
			}
			if t.label != "" {
				where += ", " + t.label
			}
			s := "- [" + cut(oneLine(r.text(c.Expr)), maxExprRunes) + "] at " + where
			if c.Reason != "" {
				s += ": " + cut(oneLine(r.text(c.Reason)), maxExprRunes)
			}
			it := &item{text: s}
			byKey[key] = it
			byKey[key+"\x00"+strconv.Itoa(c.Line)] = it
			items = append(items, it)
		}
	}
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.text
		if it.elseHit {
			out[i] += "; its [ELSE] branch applied"
		}
	}
	return out
}

// getEnvPlaces lists where a getEnv modifier was left unevaluated, and
// evaluationProblems the other problems met while building the tree.
func evaluationNotes(r *redactor, findings ...[]typoscript.Finding) (getEnv, other []string) {
	seen := map[string]bool{}
	for _, fs := range findings {
		for _, f := range fs {
			where := r.name(f.Include)
			if f.Line > 0 {
				where += ":" + strconv.Itoa(f.Line)
			}
			s := "- " + where
			if f.Kind != typoscript.KindGetEnv {
				s += ": " + f.Kind
				if f.Detail != "" {
					s += " (" + f.Detail + ")"
				}
			}
			if seen[s] {
				continue
			}
			seen[s] = true
			if f.Kind == typoscript.KindGetEnv {
				getEnv = append(getEnv, s)
			} else {
				other = append(other, s)
			}
		}
	}
	return getEnv, other
}
