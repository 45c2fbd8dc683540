package typoscript

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/t3agent/t3agent/internal/guardrail/credential"
)

// RenderParams configures Render and RenderFlat.
type RenderParams struct {
	// Path is a dotted object path ("\." for a literal dot); empty renders
	// the top level.
	Path string
	// MaxLines caps the output (default Limits.MaxOutputLines).
	MaxLines int
	// Redact hides credential-like values (see RedactValue).
	Redact bool
}

// Rendered is text output with what was left out.
type Rendered struct {
	Text string
	// Found is false when Path does not exist.
	Found bool
	// Omitted counts lines cut by MaxLines.
	Omitted int
}

type lineWriter struct {
	b       strings.Builder
	max     int
	n       int
	omitted int
}

func (w *lineWriter) line(s string) {
	if w.n >= w.max {
		w.omitted++
		return
	}
	w.b.WriteString(s)
	w.b.WriteByte('\n')
	w.n++
}

func (w *lineWriter) done(found bool) Rendered {
	if w.omitted > 0 {
		w.b.WriteString("… " + strconv.Itoa(w.omitted) + " more lines\n")
	}
	return Rendered{Text: w.b.String(), Found: found, Omitted: w.omitted}
}

// Render shows a tree the way get_typoscript and get_tsconfig answer:
// without a path one line per top-level key ("key = value" or "key (+N
// children)"); with a path the node's value and its whole subtree,
// indented two spaces per level. Values are on one line (line breaks shown
// as \n) and references as "=< target".
func Render(root *Node, p RenderParams) Rendered {
	w := &lineWriter{max: p.MaxLines}
	if w.max <= 0 {
		w.max = DefaultLimits().MaxOutputLines
	}
	if p.Path == "" {
		for _, c := range root.Children() {
			s := escapeName(c.Name) + nodeValue(c, p.Redact, credential.None)
			if k := len(c.Children()); k > 0 {
				s += " (+" + strconv.Itoa(k) + " children)"
			}
			w.line(s)
		}
		return w.done(true)
	}
	n := root.LookupDotted(p.Path)
	if n == nil {
		return w.done(false)
	}
	w.line(p.Path + nodeValue(n, p.Redact, credential.None))
	// Below a credential name its rule applies to every value.
	var walk func(n *Node, depth int, under credential.Strength)
	walk = func(n *Node, depth int, under credential.Strength) {
		for _, c := range n.Children() {
			w.line(strings.Repeat("  ", depth) + escapeName(c.Name) + nodeValue(c, p.Redact, under))
			walk(c, depth+1, max(under, credential.Name(c.Name)))
		}
	}
	walk(n, 1, credential.Name(n.Name))
	return w.done(true)
}

// nodeValue is " = v" or " =< target"; when redact, a credential's value
// (by its name or the name of a key above it, see RedactValue) is
// " = [redacted]".
func nodeValue(n *Node, redact bool, under credential.Strength) string {
	switch {
	case n.IsRef:
		return " =< " + n.Ref
	case n.HasValue:
		v := n.Value
		if redact {
			v = redactValue(max(under, credential.Name(n.Name)), v)
		}
		return " = " + oneLine(v)
	}
	return ""
}

func oneLine(v string) string {
	if !strings.ContainsAny(v, "\r\n") {
		return v
	}
	return strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(v)
}

// RenderFlat lists flat entries ("a.b = v") whose key starts with
// p.Path, the form get_typoscript uses for constants.
func RenderFlat(kv []KV, p RenderParams) Rendered {
	w := &lineWriter{max: p.MaxLines}
	if w.max <= 0 {
		w.max = DefaultLimits().MaxOutputLines
	}
	found := p.Path == ""
	for _, e := range kv {
		if p.Path != "" && e.Key != p.Path && !strings.HasPrefix(e.Key, p.Path+".") {
			continue
		}
		found = true
		v := e.Value
		if p.Redact {
			// Every segment counts: below a credential name its rule
			// applies, as in Render.
			s := credential.None
			for seg := range strings.SplitSeq(e.Key, ".") {
				s = max(s, credential.Name(seg))
			}
			v = redactValue(s, v)
		}
		w.line(e.Key + " = " + oneLine(v))
	}
	return w.done(found)
}

var urlPassword = regexp.MustCompile(`(?i)(\b[a-z][a-z0-9+.\-]*://[^:/?#\s@]*):[^@/?#\s]+@`)

// RedactValue hides the value of a credential as "[redacted]": key (its
// last segment) names a credential and value is one, by the rule of
// package credential that secret redaction shares, so a flag such as
// showForgotPassword = 0 or a split token such as pagets__ stays visible.
// In any other value the password of user:pass@ URLs becomes ***.
func RedactValue(key, value string) string { return redactValue(credential.Name(key), value) }

func redactValue(s credential.Strength, value string) string {
	if s.Hides(value) {
		return "[redacted]"
	}
	return urlPassword.ReplaceAllString(value, "$1:***@")
}
