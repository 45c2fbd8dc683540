package web

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"
)

// The API checks its input once, at the boundary: every text that can
// reach a store or the site database (the path with its parameters,
// every query parameter, every string of a JSON body) must be UTF-8
// without NUL characters, which no database text column holds
// (PostgreSQL refuses them outright). Anything else is a 400 with one
// sentence, before a handler runs.

// validText reports whether s is UTF-8 without NUL characters.
func validText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// checkRequestText checks the path and the query of an API request.
func checkRequestText(r *http.Request) error {
	if !validText(r.URL.Path) {
		return badRequest("The path must be UTF-8 text without NUL characters.")
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return badRequest("The query string is malformed.")
	}
	for name, values := range q {
		if !validText(name) {
			return badRequest("Query parameter names must be UTF-8 text without NUL characters.")
		}
		for _, v := range values {
			if !validText(v) {
				return badRequest("The query parameter " + name + " must be UTF-8 text without NUL characters.")
			}
		}
	}
	return nil
}

// checkBodyText checks a JSON body that decodes: it must be UTF-8, and
// none of its strings (names and values, also inside fields kept as raw
// JSON) may hold a NUL character.
func checkBodyText(b []byte) error {
	if !utf8.Valid(b) {
		return badRequest("The request body must be UTF-8 text.")
	}
	if escapedNUL(b) {
		return badRequest("Text in the request body must not contain NUL characters.")
	}
	return nil
}

// escapedNUL reports whether valid JSON text b spells a NUL character,
// the escape \u0000 (a raw control character is no valid JSON). A
// backslash starts an escape when an even number of backslashes (escaped
// backslashes) precede it; outside strings valid JSON has none.
func escapedNUL(b []byte) bool {
	esc := []byte(`\u0000`)
	for i := 0; ; {
		j := bytes.Index(b[i:], esc)
		if j < 0 {
			return false
		}
		at := i + j
		n := 0
		for k := at - 1; k >= 0 && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return true
		}
		i = at + len(esc)
	}
}
