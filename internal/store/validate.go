package store

import (
	"strings"
	"unicode/utf8"
)

// checkText refuses what one driver would keep and another would not:
// PostgreSQL text holds neither NUL bytes nor invalid UTF-8.
func checkText(what, v string, max int) error {
	switch {
	case len(v) > max:
		return invalid("%s is %d bytes long, more than the %d allowed", what, len(v), max)
	case !utf8.ValidString(v):
		return invalid("%s is not valid UTF-8", what)
	case strings.IndexByte(v, 0) >= 0:
		return invalid("%s contains a NUL byte", what)
	}
	return nil
}

// checkName is checkText for identifiers, which must also be non-empty.
func checkName(what, v string) error {
	if v == "" {
		return invalid("%s must not be empty", what)
	}
	return checkText(what, v, MaxNameLen)
}
