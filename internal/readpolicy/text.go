package readpolicy

import (
	"encoding/xml"
	"errors"
	"html"
	"io"
	"strings"
	"unicode"
)

// The readable text of a stored value: what the record tools show and
// search, and what the site index keeps.

// Collapse turns every run of whitespace into one space and trims.
func Collapse(s string) string {
	return strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
}

// StripTags removes markup (tags become spaces, entities are decoded) and
// collapses whitespace, so rich text reads as a sentence.
func StripTags(s string) string {
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

// FlexText renders a FlexForm value (T3FlexForms XML) as "field: value"
// pairs joined by "; ", leaving out every field whose name, or any dotted
// part of it, looks like a credential: a plugin setting called apiKey or
// settings.token must not reach the model through the XML that holds it.
// XML that does not parse is withheld entirely.
func FlexText(raw string) string {
	if strings.TrimSpace(raw) == "" {
		return ""
	}
	dec := xml.NewDecoder(strings.NewReader(raw))
	dec.Strict = false
	var (
		fields  []string // field index attributes on the path
		inValue bool
		value   strings.Builder
		out     []string
	)
	for {
		tok, err := dec.Token()
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return "[FlexForm value not readable]"
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "field":
				fields = append(fields, attr(t, "index"))
			case "value":
				inValue = true
				value.Reset()
			}
		case xml.CharData:
			if inValue {
				value.Write(t)
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "field":
				if len(fields) > 0 {
					fields = fields[:len(fields)-1]
				}
			case "value":
				inValue = false
				v := StripTags(value.String())
				if v != "" && len(fields) > 0 && !credentialPath(fields) {
					out = append(out, fields[len(fields)-1]+": "+v)
				}
			}
		}
	}
	return strings.Join(out, "; ")
}

func attr(e xml.StartElement, name string) string {
	for _, a := range e.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// credentialPath reports whether any field on the path, or any dotted
// part of one, is credential-like.
func credentialPath(fields []string) bool {
	for _, f := range fields {
		if IsCredentialColumn(f) {
			return true
		}
		for part := range strings.SplitSeq(f, ".") {
			if IsCredentialColumn(part) {
				return true
			}
		}
	}
	return false
}
