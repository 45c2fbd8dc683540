package chat_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/t3agent/t3agent/internal/chat"
)

func TestSanitize(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 600)
	cases := []struct{ in, want string }{
		{"plain failure", "plain failure"},
		{"Authorization: Bearer abc.def-123_x", "Authorization: Bearer [REDACTED]"},
		{"header bearer eyJhbGciOi.x.y rejected", "header Bearer [REDACTED] rejected"},
		{"invalid key sk-proj-AbCdEf0123456789", "invalid key [REDACTED]"},
		{"api_key_0123456789 refused", "[REDACTED] refused"},
		{"token-abcdefgh expired", "[REDACTED] expired"},
		{"key_12345678", "[REDACTED]"},
		{"token-abc is short", "token-abc is short"},
		{"monkey_business as usual", "monkey_business as usual"},
		{"POST https://user:pw@api.example.com/v1/chat?key=1 failed", "POST [URL] failed"},
		{"see http://10.0.0.5:8080/x, then wss://h/y", "see [URL] then [URL]"},
		{"line\nbreak\x1b[31m\u202eend", "line break [31m end"},
		{"  padded  ", "padded"},
		{long, strings.Repeat("a", chat.MaxErrorLen-1) + "…"},
		{strings.Repeat("ä", chat.MaxErrorLen), strings.Repeat("ä", chat.MaxErrorLen)},
		{"bad \xff byte", "bad \uFFFD byte"},
	}
	for _, tc := range cases {
		if got := chat.Sanitize(tc.in); got != tc.want {
			t.Errorf("Sanitize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzSanitize: the result is valid UTF-8, at most MaxErrorLen
// characters, free of control characters, stable under a second pass,
// and never carries a planted key.
func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"", "Bearer abc", "sk-0123456789", "https://a.b/c", strings.Repeat("x", 700), "\x00\xff", "token_", "api_key-123456789"} {
		f.Add(s, s)
	}
	const planted = "sk-Zq9Zq9Zq9Zq9Zq9"
	f.Fuzz(func(t *testing.T, prefix, suffix string) {
		for _, in := range []string{prefix, prefix + " " + planted + " " + suffix} {
			out := chat.Sanitize(in)
			if !utf8.ValidString(out) || utf8.RuneCountInString(out) > chat.MaxErrorLen {
				t.Fatalf("Sanitize(%q) = %q: invalid or too long", in, out)
			}
			for _, r := range out {
				if r < 0x20 || r == 0x7f {
					t.Fatalf("Sanitize(%q) = %q keeps a control character", in, out)
				}
			}
			if again := chat.Sanitize(out); again != out {
				t.Fatalf("Sanitize is not stable: %q → %q → %q", in, out, again)
			}
			if strings.Contains(out, "Zq9Zq9") {
				t.Fatalf("Sanitize(%q) = %q keeps the planted key", in, out)
			}
		}
	})
}
