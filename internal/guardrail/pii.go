package guardrail

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// piiShapes finds personal data. Numbers are confirmed by their checksum
// (IBAN mod-97, card Luhn) or their digit count, so order numbers, dates
// and versions are left alone.
var piiShapes = []shape{
	{kind: "email", re: regexp.MustCompile(
		`(?i)\A[a-z0-9._%+-]+@[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*\.[a-z]{2,24}\b`),
		needles: []string{"@"}, starts: emailStarts, window: 320},
	// IBANs as printed (groups of four) or run together.
	{kind: "iban", re: regexp.MustCompile(`\A[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b`),
		check: validIBAN, starts: ibanStarts, window: 48},
	{kind: "card_number", re: regexp.MustCompile(`\A[0-9](?:[ -]?[0-9]){12,18}\b`),
		check: validCard, starts: numberStarts, window: 32},
	// +49 221 1234567, 0049 (0)221-1234567, (0221) 123 456, 030/1234567.
	{kind: "phone", re: regexp.MustCompile(
		`\A(?:(?:\+|00)[1-9][0-9 ./()-]{5,20}[0-9]|(?:\(0[0-9]{1,5}\)|0[0-9]{1,5})[ ./-]?[0-9][0-9 ./-]{3,14}[0-9])`),
		check: plausiblePhone, starts: numberStarts, window: 40},
}

// emailStarts lists where the local part before each '@' begins.
func emailStarts(p *probe) []int {
	text := p.text
	var out []int
	for at := strings.IndexByte(text, '@'); at >= 0; {
		i := at
		for i > 0 && isLocalByte(text[i-1]) {
			i--
		}
		if i < at && (len(out) == 0 || out[len(out)-1] < i) {
			out = append(out, i)
		}
		next := strings.IndexByte(text[at+1:], '@')
		if next < 0 {
			break
		}
		at += 1 + next
	}
	return out
}

func isLocalByte(c byte) bool { return isWordByte(c) || strings.IndexByte(".%+-", c) >= 0 }

// ibanStarts lists two capital letters and two digits at a word start.
func ibanStarts(p *probe) []int {
	text := p.text
	var out []int
	for i := 0; i+4 <= len(text); i++ {
		if isUpper(text[i]) && isUpper(text[i+1]) && isDigit(text[i+2]) && isDigit(text[i+3]) &&
			(i == 0 || !isWordByte(text[i-1])) {
			out = append(out, i)
		}
	}
	return out
}

// numberStarts lists where a number may begin: a digit, '+' or '(' that
// does not continue a word or a number.
func numberStarts(p *probe) []int {
	text := p.text
	var out []int
	for i := 0; i < len(text); i++ {
		c := text[i]
		if (isDigit(c) || c == '+' || c == '(') && (i == 0 || !isWordByte(text[i-1]) && text[i-1] != '+') {
			out = append(out, i)
		}
	}
	return out
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

// RedactPII replaces e-mail addresses, IBANs, card numbers and phone
// numbers in text with markers such as [REDACTED:email] and reports what
// it found, by kind and count. Like RedactSecrets it is idempotent.
func RedactPII(text string) (string, []Finding) { return redact(text, piiShapes) }

func digitsOf(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}

// validIBAN checks the length and the ISO 13616 mod-97 checksum.
func validIBAN(s string) bool {
	s = strings.ReplaceAll(s, " ", "")
	if len(s) < 15 || len(s) > 34 {
		return false
	}
	// Move the country and check digits to the end, read letters as
	// 10…35, and take the remainder digit by digit.
	rem := 0
	for _, r := range s[4:] + s[:4] {
		switch {
		case r >= '0' && r <= '9':
			rem = (rem*10 + int(r-'0')) % 97
		case r >= 'A' && r <= 'Z':
			rem = (rem*100 + int(r-'A'+10)) % 97
		default:
			return false
		}
	}
	return rem == 1
}

// validCard checks the length, a card network's leading digits, one kind
// of separator, and the Luhn checksum.
func validCard(s string) bool {
	if strings.Contains(s, " ") && strings.Contains(s, "-") {
		return false
	}
	// Printed cards group their digits 4-4-4-4(-3) or 4-6-5 / 4-6-4
	// (Amex, Diners); other groupings are account or order numbers.
	if groups := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '-' }); len(groups) > 1 {
		var lens []int
		for _, g := range groups {
			lens = append(lens, len(g))
		}
		if !slices.Equal(lens, []int{4, 4, 4, 4}) && !slices.Equal(lens, []int{4, 4, 4, 4, 3}) &&
			!slices.Equal(lens, []int{4, 6, 5}) && !slices.Equal(lens, []int{4, 6, 4}) {
			return false
		}
	}
	d := digitsOf(s)
	if len(d) < 13 || len(d) > 19 {
		return false
	}
	// Visa 4, Mastercard 2 and 5, Amex 34/37, Diners 30/36/38, Discover,
	// UnionPay and Maestro 6, JCB 35.
	switch d[0] {
	case '2', '4', '5', '6':
	case '3':
		if !strings.ContainsRune("04578", rune(d[1])) {
			return false
		}
	default:
		return false
	}
	sum := 0
	for i := range len(d) {
		n := int(d[len(d)-1-i] - '0')
		if i%2 == 1 {
			n *= 2
			if n > 9 {
				n -= 9
			}
		}
		sum += n
	}
	return sum%10 == 0
}

// datePattern matches 14.03.2025, 2025-03-14, 03/14/25: dates, not phones.
var datePattern = regexp.MustCompile(`^[0-9]{1,4}[./-][0-9]{1,2}[./-][0-9]{1,4}$`)

// plausiblePhone checks an E.164-sized digit count and refuses dates and
// runs of separators.
func plausiblePhone(s string) bool {
	d := digitsOf(s)
	if len(d) < 7 || len(d) > 15 {
		return false
	}
	if datePattern.MatchString(strings.TrimSpace(s)) {
		return false
	}
	prev := rune(0)
	for _, r := range s {
		sep := !unicode.IsDigit(r) && r != '+' && r != '(' && r != ')'
		if sep && prev != 0 && !unicode.IsDigit(prev) && prev != ')' {
			return false
		}
		prev = r
	}
	return true
}
