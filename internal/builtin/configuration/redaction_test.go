package configuration_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// plantedConstants has a credential-like key for every word of the
// redaction rule, a nested one, URLs with user:pass@, a bare token and a
// password that are secrets by their values, and harmless keys: flags and
// a split token whose names hold credential words. Every secret starts
// with PLANTED-, so one search finds any leak.
const plantedConstants = `
matrix {
    publicName = Nordlicht public name
    password = PLANTED-c-password-1
    dbPasswd = PLANTED-c-passwd-2
    smtpPwd = PLANTED-c-pwd-3
    clientSecret = PLANTED-c-secret-4
    authToken = PLANTED-c-token-5
    credentials {
        user = PLANTED-c-credential-user-6
        pass = PLANTED-c-credential-pass-7
    }
    apikey = PLANTED-c-apikey-8
    maps_api_key = PLANTED-c-api_key-9
    s3AccessKey = PLANTED-c-accesskey-10
    access_key = PLANTED-c-access_key-11
    encryptionKey = PLANTED-c-encryptionkey-12
    encryption_key = PLANTED-c-encryption_key-13
    licenseKey = PLANTED-c-licensekey-14
    privateKey = PLANTED-c-privatekey-15
    private_key = PLANTED-c-private_key-16
    authorization = Bearer PLANTED-c-authorization-17
    hashSalt = PLANTED-c-salt-18
    dsn = mysql://dbuser:PLANTED-c-dsnpass-19@db.example/typo3
    mailer = smtp://mailer:PLANTED-c-urlpass-20@mail.example:587
    deep.er.nested.apiToken = PLANTED-c-nested-21
    token = PLANTED-c-bare-token-29
    ftpPassword = PLANTED-WORD
    showForgotPassword = 0
    passwordMinLength = 8
    split.token = pagets__
}`

// plantedSetup carries constants into setup values and a condition, where
// the key rule alone would not catch them.
const plantedSetup = `
lib.matrix = TEXT
lib.matrix {
    value = {$matrix.apikey}
    wrap = <a href="https://u:PLANTED-s-urlpass-22@cdn.example/">|</a>
    substituted = {$matrix.credentials.pass}
    stdWrap.dataWrap = {$matrix.authToken}|
    settings.secretKey = PLANTED-s-secret-23
    settings.oauth.clientSecret.value = PLANTED-s-secret-24
    settings.mailer = {$matrix.mailer}
    settings.name = {$matrix.publicName}
}
[request.getHeaders()['x-token'] == '{$matrix.authToken}']
    lib.matrix.header = 1
[END]`

const plantedTSconfig = `
tx_matrix {
    apiToken = PLANTED-t-token-25
    endpoint = ftp://ftpuser:PLANTED-t-urlpass-26@files.example/
    credential.password.hint = PLANTED-t-nested-27
    service.privateKey = PLANTED-t-privatekey-28
    label = Visible label
}`

// demoSecrets are the credential-like constants the demo itself ships.
var demoSecrets = []string{"Xq7-demo-preview", "nlp-demo-7f3c1e9a04b2d86e"}

func TestRedaction(t *testing.T) {
	t.Parallel()
	f := demoFixture(t)
	f.appendField("sys_template", "constants", 1, plantedConstants)
	f.appendField("sys_template", "config", 1, plantedSetup)
	f.appendField("pages", "TSconfig", 1, plantedTSconfig)

	calls := []struct {
		tool string
		args map[string]any
	}{
		{"get_typoscript", args("pageUid", 1)},
		{"get_typoscript", args("pageUid", 1, "type", "constants")},
		{"get_typoscript", args("pageUid", 1, "type", "constants", "path", "matrix")},
		{"get_typoscript", args("pageUid", 1, "type", "constants", "path", "matrix.credentials")},
		{"get_typoscript", args("pageUid", 1, "type", "constants", "path", "matrix.credentials.user")},
		{"get_typoscript", args("pageUid", 1, "type", "constants", "path", "matrix.deep.er.nested.apiToken")},
		{"get_typoscript", args("pageUid", 6, "type", "constants", "path", "site")},
		{"get_typoscript", args("pageUid", 6, "type", "constants", "path", "matrix")},
		{"get_typoscript", args("pageUid", 1, "path", "lib.matrix")},
		{"get_typoscript", args("pageUid", 1, "path", "lib.matrix.settings.oauth.clientSecret.value")},
		{"get_typoscript", args("pageUid", 10, "path", "lib")},
		{"get_typoscript", args("pageUid", 1, "path", "page.10.settings")},
		{"get_tsconfig", args("pageUid", 1)},
		{"get_tsconfig", args("pageUid", 1, "path", "tx_matrix")},
		{"get_tsconfig", args("pageUid", 6, "path", "tx_matrix.credential")},
		{"get_tsconfig", args("pageUid", 6, "path", "tx_matrix.credential.password.hint")},
		{"check_typoscript", args("pageUid", 1)},
	}
	out := map[string]string{}
	for _, c := range calls {
		got := f.ok(c.tool, c.args)
		for _, secret := range append([]string{"PLANTED-"}, demoSecrets...) {
			if strings.Contains(got, secret) {
				t.Errorf("%s %v leaks %q:\n%s", c.tool, c.args, secret, got)
			}
		}
		out[c.tool+" "+argString(c.args)] = got
	}

	// Every credential word hides its value, at any depth and whatever
	// the path asked for; the harmless neighbour stays readable.
	constants := out["get_typoscript pageUid=1 path=matrix type=constants"]
	for _, key := range []string{"password", "dbPasswd", "smtpPwd", "clientSecret", "authToken", "credentials.user",
		"credentials.pass", "apikey", "maps_api_key", "s3AccessKey", "access_key", "encryptionKey", "encryption_key",
		"licenseKey", "privateKey", "private_key", "authorization", "hashSalt", "dsn", "deep.er.nested.apiToken",
		"token", "ftpPassword"} {
		if !strings.Contains(constants, "\nmatrix."+key+" = [redacted]\n") {
			t.Errorf("matrix.%s is not redacted:\n%s", key, constants)
		}
	}
	wantLines := map[string][]string{
		"get_typoscript pageUid=1 path=matrix type=constants": {
			"matrix.publicName = Nordlicht public name",
			"matrix.mailer = smtp://mailer:***@mail.example:587",
			// Not credentials: flags, a number and a split token, though
			// their names hold credential words.
			"matrix.showForgotPassword = 0",
			"matrix.passwordMinLength = 8",
			"matrix.split.token = pagets__",
		},
		"get_typoscript pageUid=1 path=matrix.credentials.user type=constants": {"matrix.credentials.user = [redacted]"},
		"get_typoscript pageUid=6 path=site type=constants": {
			"site.stagingUrl = https://preview:***@staging.nordlicht-pumps.example/",
			"site.analytics.apiKey = [redacted]",
		},
		"get_typoscript pageUid=1 path=lib.matrix": {
			"lib.matrix = TEXT",
			"  value = [redacted]",
			`  wrap = <a href="https://u:***@cdn.example/">|</a>`,
			"  substituted = [redacted]",
			"    dataWrap = [redacted]|",
			"    secretKey = [redacted]",
			"      value = [redacted]",
			"    mailer = smtp://mailer:***@mail.example:587",
			"    name = Nordlicht public name",
			// The condition is listed with the constant scrubbed.
			"- [request.getHeaders()['x-token'] == '[redacted]'] at [sys_template:1] Nordlicht Pumps:",
		},
		"get_typoscript pageUid=1 path=lib.matrix.settings.oauth.clientSecret.value": {
			"lib.matrix.settings.oauth.clientSecret.value = [redacted]",
		},
		"get_tsconfig pageUid=1 path=tx_matrix": {
			"  apiToken = [redacted]",
			"  endpoint = ftp://ftpuser:***@files.example/",
			"      hint = [redacted]",
			"    privateKey = [redacted]",
			"  label = Visible label",
		},
		"get_tsconfig pageUid=6 path=tx_matrix.credential.password.hint": {"tx_matrix.credential.password.hint = [redacted]"},
	}
	for call, lines := range wantLines {
		for _, l := range lines {
			if !strings.Contains(out[call], l) {
				t.Errorf("%s lacks %q:\n%s", call, l, out[call])
			}
		}
	}
}

// argString writes arguments in a fixed order, to key the outputs.
func argString(a map[string]any) string {
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%v", k, a[k]))
	}
	return strings.Join(parts, " ")
}
