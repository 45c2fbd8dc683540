package content

import (
	"slices"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

// clip is cut(readpolicy.Collapse(s), n) without reading more of s than it needs:
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
		return cut(readpolicy.FlexText(c.s), readValueRunes)
	}
	return clip(c.s, readValueRunes)
}
