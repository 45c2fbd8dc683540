package typoscript

import (
	"sort"
	"strconv"
	"strings"
)

// modGetEnv is the problem text modify returns for getEnv, which t3agent
// does not evaluate: the process environment of the TYPO3 server is not
// ours to read.
const modGetEnv = "getEnv"

// modify applies a ":=" modifier the way AbstractAstBuilder::
// evaluateValueModifier does. has says whether the node had a value (PHP
// null otherwise). problem is non-empty when the modifier was not applied.
func modify(fn, arg string, value string, has bool) (string, bool, string) {
	switch fn {
	case "prependString":
		return arg + value, true, ""
	case "appendString":
		return value + arg, true, ""
	case "removeString":
		if arg == "" {
			return value, true, ""
		}
		return strings.ReplaceAll(value, arg, ""), true, ""
	case "replaceString":
		from, to, _ := strings.Cut(arg, "|")
		if from == "" {
			return value, true, ""
		}
		return strings.ReplaceAll(value, from, to), true, ""
	case "addToList":
		if has {
			return value + "," + arg, true, ""
		}
		return arg, true, ""
	case "removeFromList":
		drop := map[string]bool{}
		for _, e := range trimExplode(arg) {
			drop[e] = true
		}
		var keep []string
		for _, e := range trimExplode(value) {
			if !drop[e] {
				keep = append(keep, e)
			}
		}
		return strings.Join(keep, ","), true, ""
	case "uniqueList":
		seen := map[string]bool{}
		var keep []string
		for _, e := range trimExplode(value) {
			if !seen[e] {
				seen[e] = true
				keep = append(keep, e)
			}
		}
		return strings.Join(keep, ","), true, ""
	case "reverseList":
		el := trimExplode(value)
		for i, j := 0, len(el)-1; i < j; i, j = i+1, j-1 {
			el[i], el[j] = el[j], el[i]
		}
		return strings.Join(el, ","), true, ""
	case "sortList":
		return sortList(value, arg)
	case "getEnv":
		return value, has, modGetEnv
	}
	return value, has, "unknown modifier; the value is kept"
}

// trimExplode is GeneralUtility::trimExplode(',', $s) without dropping
// empty elements.
func trimExplode(s string) []string {
	parts := strings.Split(s, ",")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return parts
}

// sortList sorts like PHP's sort(): SORT_NUMERIC with "numeric" (every
// element must then be numeric, else TYPO3 throws), otherwise PHP 8's
// regular comparison; "descending" reverses.
func sortList(value, arg string) (string, bool, string) {
	el := trimExplode(value)
	numeric, desc := false, false
	for _, a := range trimExplode(arg) {
		switch strings.ToLower(a) {
		case "numeric":
			numeric = true
		case "descending":
			desc = true
		}
	}
	if numeric {
		for _, e := range el {
			if _, ok := phpNumeric(e); !ok {
				return value, true, "sortList(numeric) on a list with a non-numeric element; TYPO3 fails here"
			}
		}
		sort.SliceStable(el, func(i, j int) bool {
			a, _ := phpNumeric(el[i])
			b, _ := phpNumeric(el[j])
			return a < b
		})
	} else {
		sort.SliceStable(el, func(i, j int) bool { return phpCompareStrings(el[i], el[j]) < 0 })
	}
	if desc {
		for i, j := 0, len(el)-1; i < j; i, j = i+1, j-1 {
			el[i], el[j] = el[j], el[i]
		}
	}
	return strings.Join(el, ","), true, ""
}

// phpNumeric is PHP 8's is_numeric for strings (leading whitespace and
// trailing whitespace allowed) with the number's value.
func phpNumeric(s string) (float64, bool) {
	t := strings.TrimLeft(s, " \t\n\r\v\f")
	t = strings.TrimRight(t, " \t\n\r\v\f")
	if t == "" || strings.ContainsAny(t, "_xXpP") || strings.EqualFold(t, "inf") || strings.EqualFold(t, "nan") ||
		strings.HasSuffix(strings.ToLower(t), "infinity") {
		return 0, false
	}
	if t[0] == '.' || t[len(t)-1] == '.' {
		if len(t) == 1 {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return 0, false
	}
	return f, true
}

// phpCompareStrings is PHP 8's comparison of two strings: numerically
// when both are numeric, else byte-wise.
func phpCompareStrings(a, b string) int {
	if x, ok := phpNumeric(a); ok {
		if y, ok := phpNumeric(b); ok {
			switch {
			case x < y:
				return -1
			case x > y:
				return 1
			}
			return 0
		}
	}
	return strings.Compare(a, b)
}
