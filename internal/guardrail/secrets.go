package guardrail

import (
	"regexp"
	"strings"
	"unicode"
)

// secretShapes is t3agent's catalogue of credential shapes, most specific
// first: a key inside a URL or a header is reported by its vendor kind.
// Each entry keeps false positives low by anchoring on a vendor prefix, a
// header or parameter name, or an assignment to a credential-like name.
var secretShapes = []shape{
	// PEM and PGP private keys, whole; a block cut off before its END
	// line (a capped tool result) is redacted to the end of the text.
	{kind: "private_key", re: regexp.MustCompile(
		`-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|[\s\S]*)`)},
	// The password of scheme://user:password@host.
	{kind: "url_password", re: regexp.MustCompile(`://[^\s/@:]*:(?P<secret>[^\s/@]+)@`)},

	{kind: "anthropic_key", re: regexp.MustCompile(`sk-ant-[A-Za-z0-9_-]{20,}`), wordStart: true},
	{kind: "openai_key", re: regexp.MustCompile(`sk-[A-Za-z0-9_-]{20,}`), wordStart: true, check: hasLetterAndDigit},
	{kind: "stripe_key", re: regexp.MustCompile(`[rs]k_(?:live|test)_[A-Za-z0-9]{16,}`), wordStart: true,
		needles: []string{"_live_", "_test_"}},
	// The literal "A" in front lets the regexp jump to candidates.
	{kind: "aws_access_key", re: regexp.MustCompile(`A(?:KIA|SIA|BIA|CCA|GPA|IDA|ROA|IPA|NPA|NVA|PKA)[A-Z0-9]{16}\b`),
		wordStart: true},
	{kind: "aws_secret_key", re: regexp.MustCompile(
		`(?i)\Aaws_?secret_?access_?key["']?\s*[:=]\s*["']?(?P<secret>[A-Za-z0-9/+=]{40})`),
		starts: keywordStarts([]string{"aws"}, func(_ string, hit int) int { return hit }), window: 256},
	{kind: "github_token", re: regexp.MustCompile(`g(?:h[pousr]_[A-Za-z0-9]{36,}|ithub_pat_[A-Za-z0-9_]{22,})`),
		wordStart: true},
	{kind: "gitlab_token", re: regexp.MustCompile(`glpat-[A-Za-z0-9_-]{20,}`), wordStart: true},
	{kind: "slack_token", re: regexp.MustCompile(`xox[abposre]-[A-Za-z0-9-]{10,}`), wordStart: true},
	{kind: "slack_webhook", re: regexp.MustCompile(`https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+`)},
	{kind: "google_api_key", re: regexp.MustCompile(`AIza[0-9A-Za-z_-]{35}`), wordStart: true},
	{kind: "huggingface_token", re: regexp.MustCompile(`hf_[A-Za-z0-9]{30,}`), wordStart: true},
	{kind: "sendgrid_key", re: regexp.MustCompile(`SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}`), wordStart: true},
	{kind: "npm_token", re: regexp.MustCompile(`npm_[A-Za-z0-9]{36}`), wordStart: true},
	{kind: "jwt", re: regexp.MustCompile(`eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*`), wordStart: true},

	// A credential in a query string or form body: ?api_key=…&token=…
	{kind: "url_credential", re: regexp.MustCompile(
		`(?i)\A[?&;](?:api[_-]?key|apikey|access[_-]?token|refresh[_-]?token|id[_-]?token|auth[_-]?token|token|auth|` +
			`secret|client[_-]?secret|password|passwd|pwd|key|sig|signature|x-amz-signature|x-amz-credential|` +
			`x-amz-security-token|x-goog-signature|x-goog-credential)=(?P<secret>[^&\s#"'<>]+)`),
		starts: keywordStarts([]string{"="}, paramStart), window: 4096},
	// Authorization headers, in HTTP, JSON or log form.
	{kind: "authorization", re: regexp.MustCompile(
		`(?i)\A(?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:(?:basic|bearer|token|digest|negotiate|apikey)\s+)?(?P<secret>[^\s"',;]{8,})`),
		starts: keywordStarts([]string{"authorization"}, func(text string, hit int) int {
			if hit >= 6 && strings.EqualFold(text[hit-6:hit], "proxy-") {
				hit -= 6
			}
			return atWord(text, hit)
		}), window: 4096},
	{kind: "bearer_token", re: regexp.MustCompile(`(?i)\Abearer\s+(?P<secret>[A-Za-z0-9._~+/=-]{16,})`),
		starts: keywordStarts([]string{"bearer"}, atWord), window: 4096},

	// Assignments to credential names in every syntax, anywhere in a
	// line: PHP arrays, JSON (also inside a JSON string), .env, YAML, INI,
	// TypoScript, keyword arguments, attributes.
	{kind: "password_assignment", match: assignments, folded: credentialStems},
}

// credentialStems are lower-cased parts of every name credential.Name
// accepts; an assignment is looked for only around one of them.
var credentialStems = []string{"pass", "pwd", "secret", "token", "key", "cred", "salt", "dsn", "authorization"}

// hasLetterAndDigit keeps "sk-learn-is-a-python-library" from passing as
// a key: generated keys mix both.
func hasLetterAndDigit(s string) bool {
	return strings.IndexFunc(s, unicode.IsDigit) >= 0 && strings.IndexFunc(s, unicode.IsLetter) >= 0
}

// RedactSecrets replaces every credential t3agent recognises in text with
// a marker such as [REDACTED:openai_key] and reports what it found, by
// kind and count (never the values). It is idempotent: redacting its own
// output changes nothing.
func RedactSecrets(text string) (string, []Finding) { return redact(text, secretShapes) }
