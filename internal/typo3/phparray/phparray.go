// Package phparray reads the PHP files TYPO3 keeps plain arrays in —
// PackageStates.php, config/system/settings.php, the code cache's
// var_export files, an extension's RequestMiddlewares.php — without PHP:
// the first top-level "return <array>;" is parsed as a literal.
//
// Both array syntaxes are accepted ("array ( … )" as var_export writes it,
// "[ … ]" as ArrayUtility::arrayExport and people write it); comments,
// declare() and use statements before the return are skipped. Anything
// that is not a literal (a function call, a constant other than true,
// false, null, an object) is an error: nothing is ever run.
package phparray

import (
	"errors"
	"strconv"
	"strings"

	"github.com/t3agent/t3agent/internal/typo3/tca"
)

// maxBytes caps a file.
const maxBytes = 16 << 20

// Parse returns the value of the file's return statement (see
// tca.ParseVarExport for the value types).
func Parse(src []byte) (any, error) {
	if len(src) > maxBytes {
		return nil, errors.New("the PHP file is larger than 16 MB")
	}
	s := string(src)
	if !strings.HasPrefix(strings.TrimLeft(s, " \t\r\n\ufeff"), "<?php") {
		return nil, errors.New("a PHP array file must start with <?php")
	}
	s = strings.TrimLeft(s, " \t\r\n\ufeff")[len("<?php"):]
	body, err := normalise(s)
	if err != nil {
		return nil, err
	}
	return tca.ParsePHPReturn([]byte("<?php\n" + body))
}

// frame is one open bracket of normalise: an array gets implicit keys
// for its entries without "=>", as PHP numbers them.
type frame struct {
	array          bool
	entryStart     int
	keyed, nonEmpt bool
	next           int
}

// normalise drops comments, converts [ ] arrays to array ( ), numbers
// entries written without keys, and cuts everything before the first
// top-level return.
func normalise(s string) (string, error) {
	out := make([]byte, 0, len(s)+len(s)/4)
	returnAt := -1
	var stack []*frame
	top := func() *frame {
		if len(stack) == 0 {
			return nil
		}
		return stack[len(stack)-1]
	}
	finish := func(f *frame) {
		if f == nil || !f.array || !f.nonEmpt {
			return
		}
		if !f.keyed {
			key := []byte(strconv.Itoa(f.next) + " => ")
			out = append(out[:f.entryStart], append(key, out[f.entryStart:]...)...)
			f.next++
		}
	}
	open := func(array bool) {
		stack = append(stack, &frame{array: array, entryStart: len(out)})
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if f := top(); f != nil && f.array && c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != ',' && c != ')' && c != ']' {
			f.nonEmpt = true
		}
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(s) && s[j] != c {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return "", errors.New("a string is not closed")
			}
			out = append(out, s[i:j+1]...)
			i = j
		case c == '#' || c == '/' && i+1 < len(s) && s[i+1] == '/':
			for i < len(s) && s[i] != '\n' {
				i++
			}
			out = append(out, '\n')
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return "", errors.New("a comment is not closed")
			}
			i += end + 3
			out = append(out, ' ')
		case c == '[':
			out = append(out, "array ("...)
			open(true)
		case c == '(':
			word := strings.TrimRight(string(out), " \t\r\n")
			out = append(out, c)
			open(strings.HasSuffix(strings.ToLower(word), "array"))
		case c == ']' || c == ')':
			if len(stack) == 0 {
				return "", errors.New("a bracket is closed that was never opened")
			}
			finish(top())
			stack = stack[:len(stack)-1]
			out = append(out, ')')
		case c == ',' && top() != nil && top().array:
			f := top()
			finish(f)
			out = append(out, c)
			f.entryStart, f.keyed, f.nonEmpt = len(out), false, false
		case c == '=' && i+1 < len(s) && s[i+1] == '>' && top() != nil && top().array:
			top().keyed = true
			out = append(out, "=>"...)
			i++
		default:
			if returnAt < 0 && len(stack) == 0 && strings.HasPrefix(s[i:], "return") && (i == 0 || !isWord(s[i-1])) &&
				(i+6 < len(s) && !isWord(s[i+6])) {
				returnAt = len(out)
			}
			out = append(out, c)
		}
	}
	if returnAt < 0 {
		return "", errors.New("the PHP file has no return statement")
	}
	if len(stack) != 0 {
		return "", errors.New("a bracket is never closed")
	}
	return string(out[returnAt:]), nil
}

func isWord(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}
