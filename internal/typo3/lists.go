package typo3

import (
	"strconv"
	"strings"
)

// TYPO3 keeps most permission data in comma-separated text columns. These
// helpers read them the way its PHP utilities do.

// splitList splits a comma list, trimming items and dropping empty ones
// (GeneralUtility::trimExplode with removeEmptyValues).
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// uniqueList keeps the first occurrence of every item
// (StringUtility::uniqueList).
func uniqueList[T comparable](items []T) []T {
	seen := make(map[T]bool, len(items))
	out := make([]T, 0, len(items))
	for _, it := range items {
		if !seen[it] {
			seen[it] = true
			out = append(out, it)
		}
	}
	return out
}

// intList reads a comma list of integers like GeneralUtility::intExplode
// with removeEmptyValues: every non-empty item is cast as PHP's (int) does,
// so "12abc" is 12 and "abc" is 0.
func intList(s string) []int64 {
	var out []int64
	for _, p := range strings.Split(s, ",") {
		if strings.TrimSpace(p) == "" {
			continue
		}
		out = append(out, phpInt(p))
	}
	return out
}

// phpInt mimics PHP's (int) cast of a string: leading whitespace, an
// optional sign, then as many digits as there are.
func phpInt(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\r\v\f")
	end := 0
	if end < len(s) && (s[end] == '+' || s[end] == '-') {
		end++
	}
	start := end
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	if end == start {
		return 0
	}
	n, err := strconv.ParseInt(s[:end], 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// numericList keeps only the items that are plain integers, for lists
// whose members are compared as numbers (languages, doktypes); a stray
// word must not turn into a 0 that grants language 0 or doktype 0.
func numericList(items []string) []int {
	var out []int
	for _, it := range items {
		if n, err := strconv.Atoi(it); err == nil {
			out = append(out, n)
		}
	}
	return out
}
