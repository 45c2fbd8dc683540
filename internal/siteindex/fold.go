package siteindex

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// foldSpecial are letters that decomposition leaves alone but German and
// MySQL's unicode collations read as letter sequences.
var foldSpecial = map[rune]string{
	'ß': "ss", 'ẞ': "ss", 'æ': "ae", 'Æ': "ae", 'œ': "oe", 'Œ': "oe",
	'ø': "o", 'Ø': "o", 'đ': "d", 'Đ': "d", 'ł': "l", 'Ł': "l",
	'þ': "th", 'Þ': "th", 'ð': "d", 'Ð': "d", 'ı': "i",
}

// foldRune appends the folded form of r to b: lower case, diacritics
// removed (ä → a), ligatures and ß spelled out, format characters (soft
// hyphen, zero-width joiners) dropped. Folding is per rune, so it is a
// homomorphism over concatenation: a substring of the text folds to a
// substring of the folded text, which is what makes the index a sound
// candidate source for substring search.
func foldRune(b *strings.Builder, r rune) {
	if s, ok := foldSpecial[r]; ok {
		b.WriteString(s)
		return
	}
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		b.WriteRune(r)
		return
	}
	if unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Cf, r) {
		return
	}
	var buf [utf8.UTFMax]byte
	n := utf8.EncodeRune(buf[:], r)
	d := norm.NFKD.Bytes(buf[:n])
	for len(d) > 0 {
		c, w := utf8.DecodeRune(d)
		d = d[w:]
		if unicode.Is(unicode.Mn, c) || unicode.Is(unicode.Cf, c) {
			continue
		}
		if s, ok := foldSpecial[c]; ok {
			b.WriteString(s)
			continue
		}
		b.WriteRune(unicode.ToLower(c))
	}
}

// Fold returns s folded as the index folds text (see foldRune).
func Fold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		foldRune(&b, r)
	}
	return b.String()
}

// isTermRune reports whether r (already folded) belongs to a term:
// letters and digits; everything else separates terms.
func isTermRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// Long runs of letters (base64, hashes, run-together markup) are indexed
// as overlapping chunks of chunkBytes, each starting chunkStep after the
// last, so every stretch of at most maxPieceBytes lies whole inside one
// chunk: the index stays a superset for any query piece up to that size,
// and longer pieces are not narrowed by the index at all (see Pieces).
const (
	chunkBytes    = 1024
	chunkStep     = 700
	maxPieceBytes = 256
)

// Terms splits s into its folded terms, in order, duplicates kept.
func Terms(s string) []string {
	return appendTerms(nil, s)
}

func appendTerms(out []string, s string) []string {
	f := Fold(s)
	start := -1
	for i, r := range f {
		if isTermRune(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = appendChunks(out, f[start:i])
			start = -1
		}
	}
	if start >= 0 {
		out = appendChunks(out, f[start:])
	}
	return out
}

// appendChunks appends term t, or its overlapping chunks when it is long.
func appendChunks(out []string, t string) []string {
	if len(t) <= chunkBytes {
		return append(out, t)
	}
	for at := 0; ; {
		end := min(at+chunkBytes, len(t))
		for end < len(t) && !utf8.RuneStart(t[end]) {
			end--
		}
		out = append(out, t[at:end])
		if end == len(t) {
			return out
		}
		next := at + chunkStep
		for !utf8.RuneStart(t[next]) {
			next--
		}
		at = next
	}
}

// Pieces are the folded term runs of a substring query: the text matches
// the query only where each piece lies inside one of the text's terms
// (the first may be a term's tail, the last a term's head, the others
// whole terms). ok is false when the index cannot narrow the query: it
// has no letters or digits, or a piece is longer than maxPieceBytes.
func Pieces(q string) (pieces []string, ok bool) {
	f := Fold(q)
	start := -1
	flush := func(end int) {
		if start >= 0 {
			pieces = append(pieces, f[start:end])
			start = -1
		}
	}
	for i, r := range f {
		if isTermRune(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		flush(i)
	}
	flush(len(f))
	if len(pieces) == 0 {
		return nil, false
	}
	for _, p := range pieces {
		if len(p) > maxPieceBytes {
			return nil, false
		}
	}
	return pieces, true
}
