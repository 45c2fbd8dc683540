package sitesearch

import (
	"strings"
	"unicode"
)

// Excerpt returns at most n runes of text: the window holding the most
// occurrences of terms (compared without case), widened to word
// boundaries, with "…" where text was cut. Without any occurrence it is
// the start of text.
func Excerpt(text string, terms []string, n int) string {
	r := []rune(text)
	if len(r) <= n {
		return text
	}
	lower := []rune(strings.ToLower(text))
	if len(lower) != len(r) { // a case mapping changed the length: compare as is
		lower = r
	}
	var hits []int
	for _, t := range terms {
		tr := []rune(t)
		for i := 0; i+len(tr) <= len(lower); i++ {
			if string(lower[i:i+len(tr)]) == t {
				hits = append(hits, i)
				i += len(tr) - 1
			}
		}
	}
	best, bestCount := 0, 0
	for _, h := range hits {
		start := max(0, h-n/4)
		count := 0
		for _, o := range hits {
			if o >= start && o < start+n {
				count++
			}
		}
		if count > bestCount {
			best, bestCount = start, count
		}
	}
	start := min(best, len(r)-n)
	for start > 0 && start > best-20 && !unicode.IsSpace(r[start-1]) {
		start--
	}
	end := min(start+n, len(r))
	seg := strings.TrimSpace(string(r[start:end]))
	if start > 0 {
		seg = "…" + seg
	}
	if end < len(r) {
		seg += "…"
	}
	if sr := []rune(seg); len(sr) > n {
		seg = string(sr[:n-1]) + "…"
	}
	return seg
}
