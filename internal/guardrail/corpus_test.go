package guardrail_test

import (
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/guardrail"
)

// redactionCorpus are credential assignments in the shapes tool results
// carry them: anywhere in a line, after a tool collapsed line breaks to
// spaces, inside JSON strings (with escaped line breaks and quotes), as
// YAML, .env, INI, TypoScript and PHP, in URLs and headers. gone must not
// survive; keep is context that must.
var redactionCorpus = []struct {
	name, in   string
	gone, keep []string
}{
	{"search excerpt, lines collapsed",
		"  match(constants): …ite.analytics { enable = 1 siteId = 42 apiKey = nlp-demo-7f3c1e9a04b2d86e } page.logo { file = EXT:site_demo/Resources…",
		[]string{"nlp-demo-7f3c1e9a04b2d86e"}, []string{"enable = 1 siteId = 42 apiKey = ", " } page.logo { file = EXT:site_demo/Resources…"}},
	{"read_records value, lines collapsed",
		"  constants: site { company = Nordlicht } site.analytics.apiKey = 9Qm2Lp7Rt4Vw page.logo.alt = Logo",
		[]string{"9Qm2Lp7Rt4Vw"}, []string{"site.analytics.apiKey = ", " page.logo.alt = Logo"}},
	{"TypoScript line", "plugin.tx_news.settings.apiKey = abc\nplugin.tx_news.settings.limit = 10\n",
		[]string{"= abc\n"}, []string{"plugin.tx_news.settings.limit = 10"}},
	{"TypoScript block, collapsed", "plugin.tx_maps { settings { mapsApiKey = 7Fq2kLm9Xz zoom = 12 } }",
		[]string{"7Fq2kLm9Xz"}, []string{"zoom = 12 } }"}},
	{"TypoScript client secret", "config.tx_sso.clientSecret = 0b5e2c5ef1c44d6a9d1e",
		[]string{"0b5e2c5ef1c44d6a9d1e"}, []string{"config.tx_sso.clientSecret = "}},
	{"TypoScript token with a secret value", "lib.form.token = a9F3kLm2Qx7", []string{"a9F3kLm2Qx7"}, []string{"lib.form.token = "}},
	{"JSON string with escaped line breaks", `{"constants":"site.analytics {\n  apiKey = nlp-demo-7f3c1e9a04b2d86e\n}"}`,
		[]string{"nlp-demo-7f3c1e9a04b2d86e"}, []string{`\n}"}`}},
	{"JSON object", `{"apiKey":"a8f5f167f44f4964e6c998dee827110c","limit":3}`,
		[]string{"a8f5f167f44f4964e6c998dee827110c"}, []string{`"limit":3}`}},
	{"JSON in a JSON string", `{"body":"{\"password\":\"Tr0ub4dor&3\",\"user\":\"typo3\"}"}`,
		[]string{"Tr0ub4dor&3"}, []string{`\"user\":\"typo3\"`}},
	{"JSON client secret", `{"client_secret": "GOCSPX-abc123def456"}`, []string{"GOCSPX-abc123def456"}, []string{`{"client_secret": "`}},
	{"JSON env line", `{"env":"APP_ENV=prod\nDB_PASSWORD=swordfish\nDEBUG=0"}`, []string{"swordfish"}, []string{`APP_ENV=prod\n`, `\nDEBUG=0"}`}},
	{"YAML line", "smtp:\n  password: Sup3rS3cret\n  host: mail\n", []string{"Sup3rS3cret"}, []string{"host: mail"}},
	{"YAML quoted", "maps:\n  api_key: \"9f8e7d6c5b4a\"\n", []string{"9f8e7d6c5b4a"}, []string{"api_key: \""}},
	{"YAML flow mapping, collapsed", "mailer: { transport: smtp, password: Sup3rS3cret9, port: 587 }",
		[]string{"Sup3rS3cret9"}, []string{"port: 587 }"}},
	{"YAML mid-line after collapsing", "settings: smtp_host: mail.example smtp_password: Kx9-sm7p-2025 smtp_port: 25",
		[]string{"Kx9-sm7p-2025"}, []string{"smtp_port: 25"}},
	{"env line", "APP_ENV=prod\nDB_PASSWORD=hunter22\n", []string{"hunter22"}, []string{"APP_ENV=prod\n"}},
	{"env line, a plain word", "SMTP_PASSWORD=swordfish\nSMTP_USER=mailer", []string{"swordfish"}, []string{"SMTP_USER=mailer"}},
	{"env mid-line", "run with DB_PASSWORD=hunter22 APP_ENV=prod", []string{"hunter22"}, []string{" APP_ENV=prod"}},
	{"env export quoted", "export API_TOKEN='x y z'\n", []string{"x y z"}, []string{"export API_TOKEN='"}},
	{"env without separators", "APIKEY=Zx81Qm2Lp9", []string{"Zx81Qm2Lp9"}, []string{"APIKEY="}},
	{"INI", "[mail]\nsmtp_password = p4ssw0rd!\nsmtp_port = 25\n", []string{"p4ssw0rd!"}, []string{"smtp_port = 25"}},
	{"several on one line", "user=typo3 password=hunter22 host=db", []string{"hunter22"}, []string{"user=typo3 ", " host=db"}},
	{"keyword arguments", `connect(password="hunter22", user="typo3")`, []string{"hunter22"}, []string{`user="typo3")`}},
	{"attribute", `<connection password="s3cr3t-value" host="db"/>`, []string{"s3cr3t-value"}, []string{`host="db"/>`}},
	{"colon-equals", "secret := s3cr3tV4lue", []string{"s3cr3tV4lue"}, []string{"secret := "}},
	{"header", "X-Auth-Token: 4f9a1c0e7b2d\nAccept: */*", []string{"4f9a1c0e7b2d"}, []string{"Accept: */*"}},
	{"salt", "hashSalt = 5f4dcc3b5aa765d61d8327deb882cf99", []string{"5f4dcc3b5aa765d61d8327deb882cf99"}, []string{"hashSalt = "}},
	{"upper-case name mid-line", "the old PASSWORD: Xq7-demo-preview was rotated", []string{"Xq7-demo-preview"}, []string{" was rotated"}},
	{"PDO DSN", "'dsn' => 'pgsql:host=db;dbname=typo3;password=hunter22'", []string{"hunter22"}, []string{"'dsn' => '"}},
	{"PHP array", "'password' => 'Tr0ub4dor&3',", []string{"Tr0ub4dor&3"}, []string{"'password' => '"}},
	{"PHP array, double quotes", `"encryptionKey" => "a3f9c2e7b1d4e5f6",`, []string{"a3f9c2e7b1d4e5f6"}, []string{`"encryptionKey" => "`}},
	{"PHP settings, collapsed",
		"'DB' => [ 'Connections' => [ 'Default' => [ 'password' => 'dbpass42', 'user' => 'typo3' ] ] ]",
		[]string{"dbpass42"}, []string{"'user' => 'typo3' ]"}},
	{"URL password", "dsn mysql://typo3:hunter2@db:3306/typo3", []string{"hunter2"}, []string{"mysql://typo3:", "@db:3306/typo3"}},
	{"URL password, collapsed constants",
		"… the frontend never links to it. stagingUrl = https://preview:Xq7-demo-preview@staging.nordlicht-pumps.example/ …",
		[]string{"Xq7-demo-preview"}, []string{"@staging.nordlicht-pumps.example/ …"}},
	{"bearer header", "curl -H 'Authorization: Bearer abcDEF123456ghiJKL789'", []string{"abcDEF123456ghiJKL789"}, []string{"Authorization: Bearer "}},
	{"bearer in prose", "send the bearer 0123456789abcdefXYZ token", []string{"0123456789abcdefXYZ"}, []string{"bearer "}},
	{"sk- key in JSON", `{"note":"use ` + openAIKey + ` here"}`, []string{openAIKey}, []string{" here\"}"}},
	{"sk- key in TypoScript", "settings.openai = " + legacyOpenAI, []string{legacyOpenAI}, []string{"settings.openai = "}},
	{"query parameter", "https://api.example.com/v1?api_key=abc123&page=2", []string{"abc123"}, []string{"&page=2"}},
	{"credentials name", "smtpCredentials = mailer:Zq4-77-lp", []string{"Zq4-77-lp"}, []string{"smtpCredentials = "}},
}

// harmlessCorpus mentions credentials in words, flags and settings that
// are not credentials; redaction must leave every one unchanged.
var harmlessCorpus = []string{
	"Password: must be changed every 90 days.",
	"Reset your password: click the link below",
	"Forgot your password? Use the form on the login page.",
	"the passwords field is never shown",
	"showForgotPassword = 1",
	"plugin.tx_felogin_login.settings.showForgotPassword = 0",
	"styles.content.loginform.exposeNonexistentUserInForgotPasswordDialog = 0",
	"page.10.templateName.cObject.split.token = pagets__",
	"split { token = pagets__ cObjNum = 1 1.current = 1 }",
	`{"token":"pagets__","cObjNum":"1"}`,
	"felogin.email.templateName = PasswordRecovery",
	"passwordMinLength = 8",
	"token counts: 1234 input, 567 output",
	"'password' => $password,",
	"password: ${DB_PASSWORD}",
	"apiKey = {$site.analytics.apiKey}",
	"'password' => getenv('TYPO3_DB_PASSWORD'),",
	"password = ",
	"api_key: true",
	"enableTokens = 1",
	"showPassword: false",
	"keyboard = qwertz",
	"primaryKey = uid, cacheKey: pages_42",
	"passThrough = 1 bypass = all",
	"TYPO3 hashes passwords with argon2id; the password hash is never shown.",
	"secret: [REDACTED:openai_key]",
	"The form has a password field: type=password, name=pass.",
}

func TestRedactionCorpus(t *testing.T) {
	t.Parallel()
	if n := len(redactionCorpus) + len(harmlessCorpus); n < 40 {
		t.Fatalf("the corpus has %d shapes, want at least 40", n)
	}
	for _, c := range redactionCorpus {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out, findings := guardrail.RedactSecrets(c.in)
			for _, g := range c.gone {
				if strings.Contains(out, g) {
					t.Errorf("%q survived:\n in  %s\n out %s", g, c.in, out)
				}
			}
			for _, k := range c.keep {
				if !strings.Contains(out, k) {
					t.Errorf("lost the context %q:\n in  %s\n out %s", k, c.in, out)
				}
			}
			if len(findings) == 0 || !strings.Contains(out, "[REDACTED:") {
				t.Errorf("no marker or finding: %q, %+v", out, findings)
			}
			if again, f := guardrail.RedactSecrets(out); again != out || f != nil {
				t.Errorf("not idempotent: %q → %q", out, again)
			}
		})
	}
	for _, in := range harmlessCorpus {
		if out, findings := guardrail.RedactSecrets(in); out != in || findings != nil {
			t.Errorf("RedactSecrets(%q) = %q, %+v; want it unchanged", in, out, findings)
		}
	}
}
