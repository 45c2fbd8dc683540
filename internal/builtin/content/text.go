package content

import (
	"encoding/xml"
	"errors"
	"io"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/typo3/richtext"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

// clip is cut(richtext.Collapse(s), n) without reading more of s than it needs:
// a 300-character cell of a long body text costs 300 characters.
func clip(s string, n int) string {
	buf := make([]rune, 0, n+1)
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = len(buf) > 0
			continue
		}
		if space {
			buf = append(buf, ' ')
			space = false
		}
		buf = append(buf, r)
		if len(buf) > n {
			break
		}
	}
	if len(buf) > n {
		return string(buf[:n-1]) + "…"
	}
	return string(buf)
}

// cut shortens s to at most n runes, marking the cut with "…".
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// excerpt returns at most n runes of text around the first
// case-insensitive occurrence of q, with "…" where text was left out; the
// start of text when q does not occur.
func excerpt(text, q string, n int) string {
	r := []rune(text)
	if len(r) <= n {
		return text
	}
	at := max(indexFold(r, []rune(q)), 0)
	start := min(max(0, at-n/3), len(r)-n)
	end := start + n
	seg := slices.Clone(r[start:end])
	if start > 0 {
		seg[0] = '…'
	}
	if end < len(r) {
		seg[len(seg)-1] = '…'
	}
	return string(seg)
}

// indexFold finds needle in hay ignoring case, in runes; -1 if absent.
func indexFold(hay, needle []rune) int {
	if len(needle) == 0 {
		return 0
	}
	for i := 0; i+len(needle) <= len(hay); i++ {
		match := true
		for j, c := range needle {
			if unicode.ToLower(hay[i+j]) != unicode.ToLower(c) {
				match = false
				break
			}
		}
		if match {
			return i
		}
	}
	return -1
}

func containsFold(hay, needle string) bool {
	return indexFold([]rune(hay), []rune(needle)) >= 0
}

// flexText renders a FlexForm value (T3FlexForms XML) as "field: value"
// pairs joined by "; ", leaving out every field whose name, or any dotted
// part of it, looks like a credential: a plugin setting called apiKey or
// settings.token must not reach the model through the XML that holds it.
// XML that does not parse is withheld entirely.
func flexText(raw string) string {
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
				v := richtext.Plain(value.String())
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
		if readpolicy.IsCredentialColumn(f) {
			return true
		}
		for part := range strings.SplitSeq(f, ".") {
			if readpolicy.IsCredentialColumn(part) {
				return true
			}
		}
	}
	return false
}

// utcMinute prints a Unix time as the tools do: UTC to the minute.
func utcMinute(sec int64) string {
	return time.Unix(sec, 0).UTC().Format("2006-01-02 15:04")
}

// utcDay prints a Unix time as a UTC date.
func utcDay(sec int64) string {
	return time.Unix(sec, 0).UTC().Format("2006-01-02")
}

// displayValue is a selected value as read_records prints it: FlexForm
// XML as its readable fields, NULL as "NULL", anything else
// whitespace-collapsed; cut at 300 characters.
func displayValue(col *tca.Column, c cell) string {
	switch {
	case c.null:
		return "NULL"
	case col != nil && col.Config.Type == "flex":
		return cut(flexText(c.s), readValueRunes)
	}
	return clip(c.s, readValueRunes)
}
