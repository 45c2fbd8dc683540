package guardrail

import (
	"regexp"
	"slices"
	"strings"
)

// shape is one kind of sensitive text: a pattern, optionally a named
// group "secret" that is the part to replace (the rest of the match is
// context kept as it is, such as "Bearer " or "password="), and
// optionally a check that must pass (a checksum, a digit count).
//
// Tool results are up to 50 KB and every one is screened, so a shape
// avoids running its regexp over text that cannot match:
//   - needles (case-sensitive) and folded (against the lower-cased text)
//     are literals of which the text must hold one, or the shape is
//     skipped;
//   - a pattern that starts with a literal (sk-, -----BEGIN) lets the
//     regexp package jump between occurrences; wordStart does the work of a
//     leading \b, which would hide that literal;
//   - starts, for every other shape, lists where a match may begin (found
//     by a plain scan for a digit, an '@', a keyword); the pattern,
//     anchored with \A, is tried only there, on a window of the text;
//   - match, instead of a pattern, finds the parts to replace itself, as
//     [start, end) pairs in order.
type shape struct {
	kind      string
	re        *regexp.Regexp
	match     func(p *probe) [][]int
	check     func(s string) bool
	needles   []string
	folded    []string
	wordStart bool
	starts    func(p *probe) []int
	window    int
}

// marker is what replaces a redacted part.
func marker(kind string) string { return "[REDACTED:" + kind + "]" }

// markerPrefix starts every marker; a part that already holds one is not
// redacted again, so redaction keeps its first, most specific kind.
const markerPrefix = "[REDACTED:"

// maxPasses bounds the passes redact makes. A replacement can put a
// boundary where there was none, so a second pass may find more; a third
// almost never does.
const maxPasses = 4

// probe answers questions about one text, each once, since several shapes
// share needles and keywords: does it hold a literal, and where. Folded
// lookups use the text lowered to ASCII lower case (every needle is ASCII).
type probe struct {
	text, lower string
	hits        map[string][]int
}

func (p *probe) reset(text string) {
	if p.hits == nil || p.text != text {
		p.text, p.lower, p.hits = text, "", map[string][]int{}
	}
}

// find lists every offset of needle in the text (or the lowered text).
func (p *probe) find(needle string, folded bool) []int {
	key := needle
	if folded {
		key = "\x00" + needle
	}
	if v, ok := p.hits[key]; ok {
		return v
	}
	in := p.text
	if folded {
		if p.lower == "" {
			p.lower = asciiLower(p.text)
		}
		in = p.lower
	}
	out := []int{}
	for at := 0; ; {
		i := strings.Index(in[at:], needle)
		if i < 0 {
			break
		}
		out = append(out, at+i)
		at += i + 1
	}
	p.hits[key] = out
	return out
}

func (p *probe) contains(needle string, folded bool) bool { return len(p.find(needle, folded)) > 0 }

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// redact replaces every part of text that one of shapes matches, shape by
// shape in order, until a pass changes nothing.
func redact(text string, shapes []shape) (string, []Finding) {
	counts := map[string]int{}
	var order []string
	var pr probe
	for range maxPasses {
		changed := false
		for _, sh := range shapes {
			pr.reset(text)
			if !sh.mayMatch(&pr) {
				continue
			}
			var n int
			text, n = sh.replace(&pr)
			if n > 0 {
				changed = true
				if counts[sh.kind] == 0 {
					order = append(order, sh.kind)
				}
				counts[sh.kind] += n
			}
		}
		if !changed {
			break
		}
	}
	if len(order) == 0 {
		return text, nil
	}
	findings := make([]Finding, len(order))
	for i, k := range order {
		findings[i] = Finding{Kind: k, Count: counts[k]}
	}
	return text, findings
}

func (sh shape) mayMatch(p *probe) bool {
	if len(sh.needles) == 0 && len(sh.folded) == 0 {
		return true
	}
	for _, n := range sh.needles {
		if p.contains(n, false) {
			return true
		}
	}
	for _, n := range sh.folded {
		if p.contains(n, true) {
			return true
		}
	}
	return false
}

// matches returns the submatch indexes of every match, in order, without
// overlaps.
func (sh shape) matches(p *probe) [][]int {
	text := p.text
	if sh.match != nil {
		return sh.match(p)
	}
	if sh.starts == nil {
		all := sh.re.FindAllStringSubmatchIndex(text, -1)
		if !sh.wordStart {
			return all
		}
		out := all[:0]
		for _, m := range all {
			if m[0] == 0 || !isWordByte(text[m[0]-1]) {
				out = append(out, m)
			}
		}
		return out
	}
	var out [][]int
	end := 0
	for _, i := range sh.starts(p) {
		if i < end {
			continue
		}
		m := sh.re.FindStringSubmatchIndex(text[i:min(len(text), i+sh.window)])
		if m == nil {
			continue
		}
		for j := range m {
			if m[j] >= 0 {
				m[j] += i
			}
		}
		out = append(out, m)
		end = m[1]
	}
	return out
}

func (sh shape) replace(p *probe) (string, int) {
	text := p.text
	group := 0
	if sh.re != nil {
		group = sh.re.SubexpIndex("secret")
	}
	var b strings.Builder
	last, n := 0, 0
	for _, m := range sh.matches(p) {
		start, end := m[0], m[1]
		if group > 0 && m[2*group] >= 0 {
			start, end = m[2*group], m[2*group+1]
		}
		part := text[start:end]
		if part == "" || start < last || strings.Contains(part, markerPrefix) || (sh.check != nil && !sh.check(part)) {
			continue
		}
		b.WriteString(text[last:start])
		b.WriteString(marker(sh.kind))
		last = end
		n++
	}
	if n == 0 {
		return text, 0
	}
	b.WriteString(text[last:])
	return b.String(), n
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// keywordStarts returns a starts function: every occurrence of one of
// words (in the lowered text) mapped by back to where a match would begin;
// back returns -1 to drop an occurrence.
func keywordStarts(words []string, back func(text string, hit int) int) func(p *probe) []int {
	return func(p *probe) []int {
		var out []int
		for _, w := range words {
			for _, hit := range p.find(w, true) {
				if s := back(p.text, hit); s >= 0 {
					out = append(out, s)
				}
			}
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
}

// atWord keeps a hit that starts a word.
func atWord(text string, hit int) int {
	if hit > 0 && isWordByte(text[hit-1]) {
		return -1
	}
	return hit
}

// paramStart moves a hit back over a parameter name to the ?, & or ; in
// front of it.
func paramStart(text string, hit int) int {
	for i := hit - 1; i >= 0 && hit-i <= 40; i-- {
		switch c := text[i]; {
		case c == '?' || c == '&' || c == ';':
			return i
		case !isWordByte(c) && c != '-':
			return -1
		}
	}
	return -1
}
