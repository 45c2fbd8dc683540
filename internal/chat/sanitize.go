package chat

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

var (
	bearerRE = regexp.MustCompile(`(?i)\bbearer\s+[^\s"',;]+`)
	// A key-like word (key, sk, api_key, token) joined by - or _ to at
	// least 8 more characters: sk-proj-…, api_key_…, token_….
	keyRE = regexp.MustCompile(`(?i)\b(?:api_key|key|sk|token)[-_][A-Za-z0-9_\-.]{8,}`)
	urlRE = regexp.MustCompile(`(?i)\b(?:https?|wss?|ftp)://[^\s"'<>]+`)
)

// Sanitize makes an error message safe to store and show: bearer tokens
// become "Bearer [REDACTED]", key-like tokens [REDACTED], URLs (which may
// carry credentials or internal hosts) [URL]; control characters become
// spaces; the result is cut to MaxErrorLen characters, ending in an
// ellipsis when cut. It is applied to every error before it is stored.
func Sanitize(msg string) string {
	msg = strings.ToValidUTF8(msg, "\uFFFD")
	msg = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029' ||
			(r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069') {
			return ' '
		}
		return r
	}, msg)
	msg = urlRE.ReplaceAllString(msg, "[URL]")
	msg = bearerRE.ReplaceAllString(msg, "Bearer [REDACTED]")
	msg = keyRE.ReplaceAllString(msg, "[REDACTED]")
	msg = strings.TrimSpace(msg)
	if utf8.RuneCountInString(msg) > MaxErrorLen {
		msg = string([]rune(msg)[:MaxErrorLen-1]) + "…"
	}
	return msg
}
