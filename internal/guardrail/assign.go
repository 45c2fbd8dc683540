package guardrail

import (
	"slices"
	"strings"

	"github.com/t3agent/t3agent/internal/guardrail/credential"
)

// Bounds of one assignment: a name longer than maxName or a value longer
// than maxValue is not read as one.
const (
	maxName  = 128
	maxValue = 1024
)

// assignments finds the values assigned to credential names, wherever
// they stand: name, an operator (= => : :=), then a quoted or a bare
// value. Tools collapse line breaks and quote text as JSON, so nothing
// may depend on a line starting before the name.
//
// Whether the value is a secret follows package credential. A quoted
// value, or a bare one that is a line's whole value (NAME=value in .env,
// "password: x" in YAML, a TypoScript line), is the complete value: a
// Strong name hides it unless it is inert, a Weak one when it is shaped
// like a secret. A bare value in running text may be only the first word
// of a sentence ("Password: must be changed"), so it is hidden only when
// it is shaped like a secret.
//
// It returns the [start, end) of each secret value.
func assignments(p *probe) [][]int {
	text := p.text
	var hits []int
	for _, s := range credentialStems {
		hits = append(hits, p.find(s, true)...)
	}
	slices.Sort(hits)
	var out [][]int
	done := 0 // the end of the last name read
	for _, hit := range hits {
		if hit < done {
			continue
		}
		ns, ne := nameStart(text, hit, false), hit
		for ne < len(text) && ne-hit < maxName && isNameByte(text[ne]) {
			ne++
		}
		done = ne
		vs, ve, quoted, ok := assignedValue(text, ns, ne)
		if !ok {
			continue
		}
		value := text[vs:ve]
		strength := credential.Name(text[ns:ne])
		secret := false
		switch {
		case strength == credential.None:
		case quoted || wholeLine(text, ns, ve):
			secret = strength.Hides(value)
		default:
			secret = credential.Shaped(value)
		}
		if secret {
			out = append(out, []int{vs, ve})
			done = ve
		}
	}
	return out
}

// isNameByte is a byte of a name's last segment: TypoScript and dotted
// paths assign to the segment after the last dot.
func isNameByte(c byte) bool { return isWordByte(c) || c == '-' }

// nameStart moves back from i over a name (and its dotted path when
// dotted), at most maxName bytes. The n of an escaped line break (\n in
// text quoted as JSON) does not belong to the name after it.
func nameStart(text string, i int, dotted bool) int {
	start := i
	for start > 0 && i-start < maxName && (isNameByte(text[start-1]) || dotted && text[start-1] == '.') {
		start--
	}
	if start > 0 && start < i && text[start-1] == '\\' && strings.IndexByte("nrt", text[start]) >= 0 {
		start++
	}
	return start
}

// assignedValue reads what follows the name text[ns:ne]: the closing
// quote of a quoted name, an operator and the value. It returns the
// value's bounds without quotes.
func assignedValue(text string, ns, ne int) (vs, ve int, quoted, ok bool) {
	i := ne
	// "name", 'name' and \"name\" (JSON inside a JSON string).
	if ns > 0 && (text[ns-1] == '"' || text[ns-1] == '\'') {
		q := text[ns-1]
		switch {
		case ns > 1 && text[ns-2] == '\\' && strings.HasPrefix(text[i:], `\`+string(q)):
			i += 2
		case i < len(text) && text[i] == q:
			i++
		}
	}
	n := operator(text, skipBlanks(text, i))
	if n == 0 {
		return 0, 0, false, false
	}
	i = skipBlanks(text, skipBlanks(text, i)+n)
	if i >= len(text) {
		return 0, 0, false, false
	}
	// A quoted value ends at the same quote on the same line.
	for _, q := range []string{`\"`, `"`, `'`} {
		if !strings.HasPrefix(text[i:], q) {
			continue
		}
		start := i + len(q)
		rest := text[start:min(len(text), start+maxValue)]
		end := strings.Index(rest, q)
		// "a": "b": "c" — b is the next name, not a value.
		if end <= 0 || strings.ContainsAny(rest[:end], "\r\n") ||
			operator(text, skipBlanks(text, start+end+len(q))) > 0 && credential.Name(rest[:end]) != credential.None {
			return 0, 0, false, false
		}
		return start, start + end, true, true
	}
	// A bare value is one word; punctuation that ends a sentence or a
	// structure around it is not part of it.
	j := i
	for j < len(text) && j-i < maxValue && strings.IndexByte(" \t\r\n\v\f\"'`<>,;&\\", text[j]) < 0 {
		j++
	}
	if j == i {
		return 0, 0, false, false
	}
	// "password = apiKey = x", "pwd: apiKey: x": apiKey is the next
	// assignment's name.
	if name := strings.TrimSuffix(text[i:j], ":"); (len(name) < j-i || operator(text, skipBlanks(text, j)) > 0) &&
		credential.Name(name) != credential.None {
		return 0, 0, false, false
	}
	for j > i && trailing(text[i:j]) {
		j--
	}
	return i, j, false, true
}

// trailing reports whether the last byte of a bare value ends a sentence
// or closes a bracket the value did not open.
func trailing(v string) bool {
	switch v[len(v)-1] {
	case '.', ':':
		return true
	case ')':
		return strings.Count(v, "(") < strings.Count(v, ")")
	case ']':
		return strings.Count(v, "[") < strings.Count(v, "]")
	case '}':
		return strings.Count(v, "{") < strings.Count(v, "}")
	}
	return false
}

// operator returns the length of the assignment operator at text[i:]
// (=, =>, :, :=), 0 when there is none; ==, :: and :// are not.
func operator(text string, i int) int {
	switch {
	case strings.HasPrefix(text[i:], "=>"), strings.HasPrefix(text[i:], ":="):
		return 2
	case strings.HasPrefix(text[i:], "=="), strings.HasPrefix(text[i:], "::"), strings.HasPrefix(text[i:], ":/"):
		return 0
	case i < len(text) && (text[i] == '=' || text[i] == ':'):
		return 1
	}
	return 0
}

func skipBlanks(text string, i int) int {
	for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	return i
}

// wholeLine reports whether the assignment whose name segment starts at
// ns and whose value ends at ve is a line of its own: only blanks (and
// "export ") before the name's dotted path, only blanks after the value.
// A literal \n counts as a line break, for text quoted as JSON.
func wholeLine(text string, ns, ve int) bool {
	i := nameStart(text, ns, true)
	for i > 0 && (text[i-1] == ' ' || text[i-1] == '\t') {
		i--
	}
	if strings.HasSuffix(text[:i], "export ") {
		i -= len("export ")
		for i > 0 && (text[i-1] == ' ' || text[i-1] == '\t') {
			i--
		}
	}
	if i > 0 && text[i-1] != '\n' && !strings.HasSuffix(text[:i], `\n`) {
		return false
	}
	j := ve
	for j < len(text) && (text[j] == ' ' || text[j] == '\t' || text[j] == '\r') {
		j++
	}
	return j == len(text) || text[j] == '\n' || strings.HasPrefix(text[j:], `\n`) || strings.HasPrefix(text[j:], `\r`)
}
