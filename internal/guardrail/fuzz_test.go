package guardrail_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/t3agent/t3agent/internal/guardrail"
)

// FuzzRedactors checks, for arbitrary text around a planted credential:
// the redactors never panic, keep valid UTF-8 valid, are idempotent, and
// the planted credential never survives.
func FuzzRedactors(f *testing.F) {
	for _, s := range []string{
		"", "plain text", "password: x", "-----BEGIN PRIVATE KEY-----", "?token=", "Bearer ",
		"https://u:p@h/", "mail a@b.example", "+49 221 1234567", "DE89 3704 0044 0532 0130 00",
		"4111 1111 1111 1111", "'password' => '", "[REDACTED:openai_key]", "\xff\xfe", "sk-ant-",
		"apiKey =", `{"password":`, `\"token\": \"`, "DB_PASSWORD=", "\\n", "password = x =", "split.token = pagets__",
	} {
		f.Add(s, s, uint8(0))
	}
	planted := []string{openAIKey, anthropicKey, awsKeyID, githubToken, googleKey, slackToken, jwt, stripeKey, hfToken,
		"apiKey = nlp-demo-7f3c1e9a04b2d86e", `"password": "Tr0ub4dor&3"`}
	f.Fuzz(func(t *testing.T, prefix, suffix string, which uint8) {
		secret := planted[int(which)%len(planted)]
		// Separated by spaces, as a credential stands in running text.
		in := prefix + " " + secret + " " + suffix
		for name, redact := range map[string]func(string) (string, []guardrail.Finding){
			"secrets": guardrail.RedactSecrets, "pii": guardrail.RedactPII,
		} {
			out, _ := redact(in)
			if utf8.ValidString(in) && !utf8.ValidString(out) {
				t.Fatalf("%s: valid UTF-8 in, invalid out: %q", name, out)
			}
			again, findings := redact(out)
			if again != out || findings != nil {
				t.Fatalf("%s is not idempotent:\n in  %q\n out %q\n again %q", name, in, out, again)
			}
		}
		out, _ := guardrail.RedactSecrets(in)
		if strings.Contains(out, secret) || strings.Contains(out, "nlp-demo-7f3") || strings.Contains(out, "Tr0ub4dor&3") {
			t.Fatalf("the planted credential survived: %q", out)
		}
	})
}
