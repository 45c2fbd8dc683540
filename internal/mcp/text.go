package mcp

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// cleanText makes remote text safe to show and to hand to a model as
// data: invalid UTF-8 becomes U+FFFD, CR LF and lone CR become LF, and
// every other control or formatting character is dropped except tab and
// line feed (bidirectional overrides included, so text cannot pretend to
// read differently than it does).
func cleanText(s string) string {
	if !needsCleaning(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r == '\r':
			b.WriteByte('\n')
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			// dropped
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func needsCleaning(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || (r < 0x20 && r != '\n' && r != '\t') || r == '\r' || (r >= 0x7f && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r))) {
			return true
		}
	}
	return false
}

// remoteText is cleanText on one line, cut to at most max runes with an
// ellipsis, for remote text quoted inside our own sentences.
func remoteText(s string, max int) string {
	s = strings.Join(strings.Fields(cleanText(s)), " ")
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max-1]) + "…"
}
