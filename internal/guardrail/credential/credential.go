// Package credential is t3agent's one rule for "this name holds a
// credential and this is its value": the mandatory secret redaction
// (package guardrail) applies it to assignments anywhere in a text, the
// TypoScript tools (get_typoscript, get_tsconfig) to every key and value
// they show.
//
// The rule weighs the name and the value together. A name is judged by
// its last word (camelCase, snake_case, kebab-case and dotted paths are
// split), so showForgotPassword and dbPassword are credential names but
// passwordMinLength and exposeNonexistentUserInForgotPasswordDialog are
// not. A Strong name (password, secret, apiKey, …) holds a credential
// unless its value is Inert: empty, a flag (0, 1, true, off), a small
// number, a reference to somewhere else ({$constant}, ${ENV}, $variable,
// %env(…)%) or an earlier redaction. A Weak name (a bare token, as in
// stdWrap's split.token) holds one only when the value is Shaped like a
// secret: at least 6 characters mixing letters with digits, case or
// symbols, which a split token such as pagets__ is not.
//
// The package is a leaf (standard library only) so that the TypoScript
// engine, the tools and the guardrails can all import it. Everything is
// pure computation; it is safe for concurrent use.
package credential

import (
	"strings"
)

// Strength is how surely a name holds a credential.
type Strength uint8

const (
	// None: not a credential name.
	None Strength = iota
	// Weak: a credential only when the value is Shaped (a bare token).
	Weak
	// Strong: a credential unless the value is Inert.
	Strong
)

// strongSuffixes end a last word that names a credential, also when run
// together with a qualifier ("dbpassword", "apikey", "clientsecret").
var strongSuffixes = []string{"password", "passwd", "passphrase", "pwd", "secret", "apikey", "credential",
	"privatekey", "secretkey", "accesskey", "encryptionkey", "licensekey", "masterkey", "signingkey", "authorization"}

// strongWords are last words that name a credential only as a whole word
// ("pass" but not "bypass", "salt" but not "basalt").
var strongWords = []string{"pass", "passwords", "secrets", "credentials", "creds", "dsn", "salt"}

// keyQualifiers make a last word "key" a credential name (apiKey,
// private_key, APP_KEY); other keys (cacheKey, primaryKey) are not.
var keyQualifiers = []string{"api", "access", "private", "secret", "encryption", "license", "master", "signing",
	"app", "client", "auth", "hmac", "consumer", "shared", "account", "subscription"}

// tokenQualifiers make a token a Strong credential name (authToken,
// access_token, apitoken); any other token is Weak.
var tokenQualifiers = []string{"auth", "access", "api", "refresh", "bearer", "oauth", "secret", "private",
	"personal", "session", "id", "bot", "app", "client", "security", "deploy"}

// Name says how surely key names a credential. key may be a dotted path
// (its last segment counts) and may use any common case convention.
func Name(key string) Strength {
	if i := strings.LastIndexByte(key, '.'); i >= 0 {
		key = key[i+1:]
	}
	last, prev := lastWords(key)
	if last == "" {
		return None
	}
	for _, s := range strongSuffixes {
		if hasSuffixFold(last, s) {
			return Strong
		}
	}
	if oneOf(last, strongWords) {
		return Strong
	}
	if strings.EqualFold(last, "key") {
		if oneOf(prev, keyQualifiers) {
			return Strong
		}
		return None
	}
	if hasSuffixFold(last, "token") {
		q := last[:len(last)-len("token")]
		if q == "" {
			q = prev
		}
		if oneOf(q, tokenQualifiers) {
			return Strong
		}
		return Weak
	}
	return None
}

// hasSuffixFold is strings.HasSuffix ignoring ASCII case.
func hasSuffixFold(s, suffix string) bool {
	return len(s) >= len(suffix) && strings.EqualFold(s[len(s)-len(suffix):], suffix)
}

// oneOf reports whether w is one of the lower-case words, ignoring case.
func oneOf(w string, words []string) bool {
	for _, x := range words {
		if strings.EqualFold(w, x) {
			return true
		}
	}
	return false
}

// lastWords returns the last two words of name: words are
// separated by '_', '-' and spaces, and start at an upper-case letter
// that follows a lower-case one or a digit ("apiKey", "s3Access") or that
// ends an upper-case run ("APIKey").
func lastWords(name string) (last, prev string) {
	start, ls, le, ps, pe := -1, 0, 0, 0, 0
	flush := func(end int) {
		if start >= 0 && end > start {
			ps, pe, ls, le = ls, le, start, end
		}
		start = -1
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '_' || c == '-' || c == ' ' {
			flush(i)
			continue
		}
		if start >= 0 && isUpper(c) && (!isUpper(name[i-1]) || i+1 < len(name) && isLower(name[i+1])) {
			flush(i)
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(name))
	return name[ls:le], name[ps:pe]
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// Hides reports whether value, the whole value of a name of strength s,
// is a credential.
func (s Strength) Hides(value string) bool {
	switch s {
	case Strong:
		return !Inert(value)
	case Weak:
		return Shaped(value)
	}
	return false
}

// flagWords are values that switch something, never a secret.
var flagWords = []string{"true", "false", "yes", "no", "on", "off", "null", "nil", "none", "enabled", "disabled",
	"enable", "disable"}

// Inert reports whether value cannot be a secret whatever its name:
// empty, a flag word, a number of at most 5 digits, a masked or redacted
// value, or a reference to a value kept elsewhere ({$constant},
// ${VARIABLE}, $variable, %env(NAME)%, getenv('NAME')).
func Inert(value string) bool {
	v := strings.TrimSpace(value)
	if v == "" {
		return true
	}
	for _, w := range flagWords {
		if strings.EqualFold(v, w) {
			return true
		}
	}
	if d := strings.TrimPrefix(v, "-"); len(d) <= 5 && allBytes(d, isDigit) {
		return true
	}
	switch {
	case strings.HasPrefix(v, "[REDACTED") || strings.EqualFold(v, "[redacted]"):
		return true
	case allBytes(v, func(c byte) bool { return c == '*' }),
		len(v) >= 3 && allBytes(v, func(c byte) bool { return c == 'x' || c == 'X' }):
		return true
	case (strings.HasPrefix(v, "{$") || strings.HasPrefix(v, "${")) && strings.HasSuffix(v, "}"):
		return true
	case strings.HasPrefix(v, "%env(") || strings.HasPrefix(v, "env(") || strings.HasPrefix(v, "getenv("):
		return true
	case v[0] == '$' && len(v) > 1 && allBytes(v[1:], func(c byte) bool { return c == '_' || isDigit(c) || isUpper(c) || isLower(c) }):
		return true
	}
	return false
}

// Shaped reports whether value looks like a secret on its own: not Inert,
// one word of at least 6 characters, and either all digits or mixing two
// of lower case, upper case (after the first character), digits and
// symbols other than _ - . / : (which identifiers, paths and URLs use).
// Words ("must", "click", "pagets__", "PasswordRecovery" aside) are not.
func Shaped(value string) bool {
	if len(value) < 6 || Inert(value) || strings.ContainsAny(value, " \t\r\n") {
		return false
	}
	if allBytes(value, isDigit) {
		return true
	}
	var lower, upper, digit, symbol bool
	for i := 0; i < len(value); i++ {
		switch c := value[i]; {
		case isLower(c) || c >= 0x80:
			lower = true
		case isUpper(c):
			upper = upper || i > 0
		case isDigit(c):
			digit = true
		case strings.IndexByte("_-./:", c) < 0:
			symbol = true
		}
	}
	n := 0
	for _, b := range []bool{lower, upper, digit, symbol} {
		if b {
			n++
		}
	}
	return n >= 2
}

func allBytes(s string, f func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !f(s[i]) {
			return false
		}
	}
	return true
}
