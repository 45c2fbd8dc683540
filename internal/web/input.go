package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
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
	if !bytes.Contains(b, []byte(`\u0000`)) {
		return nil // the only way a NUL gets into valid JSON text
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return badRequest("The request body is not valid JSON.")
		}
		if s, ok := tok.(string); ok && strings.ContainsRune(s, 0) {
			return badRequest("Text in the request body must not contain NUL characters.")
		}
	}
}
