package typoscript

import (
	"regexp"
	"strconv"
	"strings"
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
			s := escapeName(c.Name) + nodeValue(c, p.Redact, false)
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
	w.line(p.Path + nodeValue(n, p.Redact, false))
	// Below a credential-like key everything is hidden.
	var walk func(n *Node, depth int, hide bool)
	walk = func(n *Node, depth int, hide bool) {
		for _, c := range n.Children() {
			h := hide || (p.Redact && sensitiveKey(c.Name))
			w.line(strings.Repeat("  ", depth) + escapeName(c.Name) + nodeValue(c, p.Redact, h))
			walk(c, depth+1, h)
		}
	}
	walk(n, 1, p.Redact && sensitiveKey(n.Name))
	return w.done(true)
}

func nodeValue(n *Node, redact, hide bool) string {
	switch {
	case n.IsRef:
		return " =< " + n.Ref
	case n.HasValue && hide:
		return " = [redacted]"
	case n.HasValue:
		v := n.Value
		if redact {
			v = RedactValue(n.Name, v)
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
			last := e.Key
			if i := strings.LastIndexByte(last, '.'); i >= 0 {
				last = last[i+1:]
			}
			v = RedactValue(last, v)
		}
		w.line(e.Key + " = " + oneLine(v))
	}
	return w.done(found)
}

// sensitiveWords mark credential-like keys (builtin-tools.md: redaction).
var sensitiveWords = []string{"password", "passwd", "pwd", "secret", "token", "credential", "apikey", "api_key",
	"accesskey", "access_key", "encryptionkey", "encryption_key", "licensekey", "privatekey", "private_key",
	"authorization", "salt", "dsn"}

func sensitiveKey(key string) bool {
	k := strings.ToLower(key)
	for _, w := range sensitiveWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

var urlPassword = regexp.MustCompile(`(?i)(\b[a-z][a-z0-9+.\-]*://[^:/?#\s@]*):[^@/?#\s]+@`)

// RedactValue hides the value of a credential-like key (the key's last
// segment contains password, secret, token, apikey, …) and the password
// of user:pass@ URLs in any value.
func RedactValue(key, value string) string {
	if sensitiveKey(key) {
		return "[redacted]"
	}
	return urlPassword.ReplaceAllString(value, "$1:***@")
}
