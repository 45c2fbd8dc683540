package guardrail_test

import (
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/guardrail"
)

// Test credentials are built from parts so that this file itself does
// not trip secret scanners.
var (
	openAIKey    = "sk-" + "proj-" + "Xy7Qm2Lp9Rt4Vw8Zb3Nc6Hd1Fg5Jk0Ae-T_uIoP"
	legacyOpenAI = "sk-" + "Ab3De5Gh7Jk9Mn2Pq4St6Vw8Yz0Bc1Ef3Hi5Kl7No9Qr2Tu4W"
	anthropicKey = "sk-" + "ant-api03-" + "Zq7vX2mN9pL4kR8sT1wY6uE3oI5aD0fG-hJ2"
	awsKeyID     = "AKIA" + "IOSFODNN7EXAMPLE"
	awsSecret    = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY"
	githubToken  = "ghp_" + "16C7e42F292c6912E7710c838347Ae178B4a"
	githubPAT    = "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"
	gitlabToken  = "glpat-" + "xYz12AbC34dEf56GhI78"
	slackToken   = "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
	slackHook    = "https://hooks.slack.com/services/" + "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"
	googleKey    = "AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"
	stripeKey    = "sk_" + "live_" + "4eC39HqLyjWDarjtT1zdp7dc"
	hfToken      = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz01234567"
	jwt          = "eyJ" + "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	pemKey       = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn\n/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB\n-----END RSA PRIVATE KEY-----"
)

func TestRedactSecretsTruePositives(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in string
		secret   string // must be gone
		kind     string
		keep     string // context that must stay
	}{
		{"openai project key", "key: " + openAIKey + " end", openAIKey, "openai_key", " end"},
		{"openai legacy key", "OPENAI=" + legacyOpenAI, legacyOpenAI, "openai_key", "OPENAI="},
		{"anthropic key", "use " + anthropicKey, anthropicKey, "anthropic_key", "use "},
		{"aws key id", "id " + awsKeyID + ".", awsKeyID, "aws_access_key", "."},
		{"aws secret", "aws_secret_access_key = " + awsSecret, awsSecret, "aws_secret_key", "aws_secret_access_key = "},
		{"github token", "token " + githubToken, githubToken, "github_token", ""},
		{"github fine-grained", githubPAT, githubPAT, "github_token", ""},
		{"gitlab token", "(" + gitlabToken + ")", gitlabToken, "gitlab_token", ")"},
		{"slack token", slackToken, slackToken, "slack_token", ""},
		{"slack webhook", "post to " + slackHook, slackHook, "slack_webhook", "post to "},
		{"google key", "maps?key=" + googleKey, googleKey, "google_api_key", "maps?key="},
		{"stripe key", stripeKey, stripeKey, "stripe_key", ""},
		{"hugging face", hfToken, hfToken, "huggingface_token", ""},
		{"jwt", "session=" + jwt + ";", jwt, "jwt", ";"},
		{"bearer", "curl -H 'Authorization: Bearer abcDEF123456ghiJKL789'", "abcDEF123456ghiJKL789", "authorization", "Authorization: Bearer "},
		{"bearer in prose", "send the bearer 0123456789abcdefXYZ token", "0123456789abcdefXYZ", "bearer_token", "bearer "},
		{"basic auth header", "Authorization: Basic dXNlcjpodW50ZXIy", "dXNlcjpodW50ZXIy", "authorization", "Basic "},
		{"json authorization", `{"Authorization": "Token 9f8e7d6c5b4a3210"}`, "9f8e7d6c5b4a3210", "authorization", `"}`},
		{"url password", "dsn mysql://typo3:hunter2@db:3306/typo3", "hunter2", "url_password", "mysql://typo3:"},
		{"url password https", "https://admin:s3cr%40t@example.com/x", "s3cr%40t", "url_password", "@example.com/x"},
		{"query api key", "https://api.example.com/v1?api_key=abc123&page=2", "abc123", "url_credential", "&page=2"},
		{"query token", "GET /feed?token=Zm9vYmFy#top", "Zm9vYmFy", "url_credential", "#top"},
		{"query signature", "s3?X-Amz-Signature=deadbeef01&X-Amz-Date=1", "deadbeef01", "url_credential", "&X-Amz-Date=1"},
		{"private key", "before\n" + pemKey + "\nafter", "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn", "private_key", "\nafter"},
		{"cut private key", "dump: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA", "b3BlbnNzaC1rZXktdjEAAAAA", "private_key", "dump: "},
		{"pgp private key", "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK-----", "lQOYBF", "private_key", ""},
		{"typo3 php settings", `'password' => 'Tr0ub4dor&3',`, "Tr0ub4dor&3", "password_assignment", `'password' => '`},
		{"typo3 encryption key", `'encryptionKey' => 'a3f9c2e7b1d4',`, "a3f9c2e7b1d4", "password_assignment", `'encryptionKey'`},
		{"json password", `{"db_password": "correct horse"}`, "correct horse", "password_assignment", `{"db_password": "`},
		{"env file", "APP_ENV=prod\nDB_PASSWORD=hunter22\nexport API_TOKEN='x y z'\n", "hunter22", "password_assignment", "APP_ENV=prod"},
		{"env file quoted", "export API_TOKEN='x y z'\n", "x y z", "password_assignment", "export API_TOKEN="},
		{"yaml", "database:\n  password: Sup3rS3cret\n  host: db\n", "Sup3rS3cret", "password_assignment", "host: db"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, findings := guardrail.RedactSecrets(c.in)
			if strings.Contains(out, c.secret) {
				t.Errorf("secret left in %q", out)
			}
			if !strings.Contains(out, "[REDACTED:"+c.kind+"]") {
				t.Errorf("out = %q, want a %s marker", out, c.kind)
			}
			if c.keep != "" && !strings.Contains(out, c.keep) {
				t.Errorf("out = %q lost the context %q", out, c.keep)
			}
			if len(findings) == 0 || findings[0].Kind != c.kind || findings[0].Count < 1 {
				t.Errorf("findings = %+v, want %s first", findings, c.kind)
			}
			for _, f := range findings {
				if strings.Contains(f.Kind, c.secret) {
					t.Error("a finding holds the secret")
				}
			}
		})
	}
}

func TestRedactSecretsFalsePositives(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"scikit-learn is imported as sk-learn-is-a-python-library-name",
		"the task-runner-and-scheduler-for-background-jobs",
		"AKIA is not a key on its own, nor AKIAshort",
		"Bearer of bad news",
		"the bearer shares",
		"Basic information about the site",
		"Password: must be changed every 90 days.",
		"Reset your password: click the link below",
		"token counts: 1234 input, 567 output",
		"https://example.com/page?id=42&lang=de",
		"https://www.typo3.org/ and ftp://mirror.example.org/pub",
		"user@example.com wrote on 2025-03-14",
		"-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkq\n-----END PUBLIC KEY-----",
		"-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIE\n-----END CERTIFICATE-----",
		`'host' => 'db.internal', 'port' => 3306`,
		"eyJ alone is not a JWT; nor is eyJhbGci.only",
		"Die Seite 12 hat die ID 4711 und den Schlüssel abc.",
		"",
	} {
		out, findings := guardrail.RedactSecrets(in)
		if out != in || findings != nil {
			t.Errorf("RedactSecrets(%q) = %q, %+v; want it unchanged", in, out, findings)
		}
	}
}

func TestRedactPII(t *testing.T) {
	t.Parallel()
	positives := []struct{ in, gone, kind string }{
		{"Write to anna.schmidt+news@nordlicht-pumpen.de today", "anna.schmidt+news@nordlicht-pumpen.de", "email"},
		{"Kontakt: info@example.co.uk.", "info@example.co.uk", "email"},
		{"IBAN DE89 3704 0044 0532 0130 00 bitte", "DE89 3704 0044 0532 0130 00", "iban"},
		{"IBAN: GB82WEST12345698765432", "GB82WEST12345698765432", "iban"},
		{"Card 4111 1111 1111 1111 exp 12/29", "4111 1111 1111 1111", "card_number"},
		{"Amex 3782-822463-10005 on file", "3782-822463-10005", "card_number"},
		{"mc:5555555555554444", "5555555555554444", "card_number"},
		{"Call +49 221 12345678 now", "+49 221 12345678", "phone"},
		{"Tel. 0049 (0)221-1234567", "0049 (0)221-1234567", "phone"},
		{"Telefon (0221) 123 456 7", "(0221) 123 456 7", "phone"},
		{"Fax 030/1234567.", "030/1234567", "phone"},
		{"Mobil 0170 1234567", "0170 1234567", "phone"},
		{"US +1 (415) 555-0132", "+1 (415) 555-0132", "phone"},
	}
	for _, c := range positives {
		out, findings := guardrail.RedactPII(c.in)
		if strings.Contains(out, c.gone) || !strings.Contains(out, "[REDACTED:"+c.kind+"]") {
			t.Errorf("RedactPII(%q) = %q, want %q redacted as %s", c.in, out, c.gone, c.kind)
		}
		if len(findings) != 1 || findings[0].Kind != c.kind || findings[0].Count != 1 {
			t.Errorf("RedactPII(%q) findings = %+v", c.in, findings)
		}
	}
	negatives := []string{
		"IBAN DE89370400440532013001 fails its check",           // mod-97 fails
		"IBAN GB82 WEST 1234 5698 7654 33 fails too",            // mod-97 fails
		"Order 4111 1111 1111 1112 was shipped",                 // Luhn fails
		"Ticket 1234 5678 9012 3456 is open",                    // no card network starts with 1
		"Released on 14.03.2025 and 2025-03-14 and 03/14/2025.", // dates
		"Version 0.12.3, build 20250314, uid 4711",
		"Timestamp 1710412013123 and 10.0.0.1",
		"Price 0,99 EUR; 012 is short",
		"user@localhost has no top-level domain",
		"the mail address is at the bottom",
	}
	for _, in := range negatives {
		if out, findings := guardrail.RedactPII(in); out != in || findings != nil {
			t.Errorf("RedactPII(%q) = %q, %+v; want it unchanged", in, out, findings)
		}
	}
}

func TestRedactionIsIdempotentAndCounts(t *testing.T) {
	t.Parallel()
	in := "a " + openAIKey + " b " + openAIKey + " c " + githubToken + " mail x@y.example"
	once, f1 := guardrail.RedactSecrets(in)
	twice, f2 := guardrail.RedactSecrets(once)
	if once != twice || f2 != nil {
		t.Errorf("second pass changed %q to %q (%+v)", once, twice, f2)
	}
	if len(f1) != 2 || f1[0] != (guardrail.Finding{Kind: "openai_key", Count: 2}) || f1[1].Kind != "github_token" {
		t.Errorf("findings = %+v", f1)
	}
	if !strings.Contains(once, "x@y.example") {
		t.Error("secret redaction touched an e-mail address")
	}
	p1, _ := guardrail.RedactPII(once)
	if p2, f := guardrail.RedactPII(p1); p2 != p1 || f != nil {
		t.Errorf("PII second pass changed %q to %q", p1, p2)
	}
}
