package credential_test

import (
	"testing"

	"github.com/t3agent/t3agent/internal/guardrail/credential"
)

func TestName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]credential.Strength{
		"password": credential.Strong, "dbPasswd": credential.Strong, "smtpPwd": credential.Strong,
		"clientSecret": credential.Strong, "authToken": credential.Strong, "credentials": credential.Strong,
		"pass": credential.Strong, "apikey": credential.Strong, "maps_api_key": credential.Strong,
		"s3AccessKey": credential.Strong, "access_key": credential.Strong, "encryptionKey": credential.Strong,
		"licenseKey": credential.Strong, "privateKey": credential.Strong, "PRIVATE_KEY": credential.Strong,
		"authorization": credential.Strong, "hashSalt": credential.Strong, "dsn": credential.Strong,
		"deep.er.nested.apiToken": credential.Strong, "APIKey": credential.Strong, "DB_PASSWORD": credential.Strong,
		"X-Auth-Token": credential.Strong, "secretKey": credential.Strong, "showForgotPassword": credential.Strong,
		"AWS_SECRET_ACCESS_KEY": credential.Strong, "dbpassword": credential.Strong, "APP_KEY": credential.Strong,
		"token": credential.Weak, "split.token": credential.Weak, "csrfToken": credential.Weak, "enableTokens": credential.None,
		"exposeNonexistentUserInForgotPasswordDialog": credential.None, "passwordMinLength": credential.None,
		"templateName": credential.None, "bypass": credential.None, "basalt": credential.None, "cacheKey": credential.None,
		"primaryKey": credential.None, "key": credential.None, "keyboard": credential.None, "passwords": credential.Strong,
		"": credential.None, "_": credential.None, "tokenizer": credential.None,
	} {
		if got := credential.Name(name); got != want {
			t.Errorf("Name(%q) = %d, want %d", name, got, want)
		}
	}
}

func TestValues(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"", " ", "0", "1", "-1", "42", "86400", "true", "Off", "null", "***", "xxxx",
		"[redacted]", "[REDACTED:openai_key]", "{$site.apiKey}", "${DB_PASSWORD}", "%env(DB_PASSWORD)%",
		"getenv('X')", "$password"} {
		if !credential.Inert(v) || credential.Shaped(v) || credential.Strong.Hides(v) || credential.Weak.Hides(v) {
			t.Errorf("%q: want inert", v)
		}
	}
	for _, v := range []string{"pagets__", "must", "click", "abc", "swordfish", "x y z", "pagets__default", "https://example.com/"} {
		if credential.Shaped(v) || credential.Weak.Hides(v) {
			t.Errorf("%q: want not shaped", v)
		}
		if !credential.Strong.Hides(v) {
			t.Errorf("%q: a strong name should hide it", v)
		}
	}
	for _, v := range []string{"nlp-demo-7f3c1e9a04b2d86e", "Xq7-demo-preview", "hunter22", "Sup3rS3cret", "Tr0ub4dor&3",
		"dXNlcjpodW50ZXIy", "123456", "PLANTED-c-token-5", "a3f9c2e7b1d4"} {
		if !credential.Shaped(v) || !credential.Weak.Hides(v) || !credential.Strong.Hides(v) {
			t.Errorf("%q: want shaped", v)
		}
	}
	for _, v := range []string{"nlp-demo-7f3c1e9a04b2d86e", "0"} {
		if credential.None.Hides(v) {
			t.Errorf("a harmless name hides %q", v)
		}
	}
}
