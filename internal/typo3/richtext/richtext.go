// Package richtext turns the rich text TYPO3 stores (RTE HTML in bodytext,
// plain text with markup in other fields) into plain text for tool
// answers: tags become spaces, entities are decoded, whitespace collapses.
package richtext

import (
	"html"
	"strings"
	"unicode"
)

// Collapse turns every run of whitespace into one space and trims.
func Collapse(s string) string {
	return strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
}

// Plain removes markup (tags become spaces, entities are decoded) and
// collapses whitespace, so rich text reads as a sentence.
func Plain(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return Collapse(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	inTag := false
	for _, r := range s {
		switch {
		case r == '<':
			inTag = true
			b.WriteByte(' ')
		case r == '>' && inTag:
			inTag = false
		case !inTag:
			b.WriteRune(r)
		}
	}
	return Collapse(html.UnescapeString(b.String()))
}
