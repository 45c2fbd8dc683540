// Package dotenv reads a TYPO3 project's .env file the way the common
// loaders (symfony/dotenv, vlucas/phpdotenv through helhum/dotenv-connector)
// read the plain cases: NAME=value lines, an optional "export ", single
// quotes (literal), double quotes (with \n, \" and \\ escapes), # comments
// outside quotes. Variable expansion (${OTHER}) is left as written.
package dotenv

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Var is one assignment, in file order.
type Var struct {
	Name, Value string
}

// maxBytes caps the file.
const maxBytes = 1 << 20

var nameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)

// Parse reads the assignments of a .env text. Lines that are not
// assignments are skipped; a later assignment of a name wins in Lookup.
func Parse(text string) []Var {
	var out []Var
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if line == "" || line[0] == '#' {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		name, rest, ok := strings.Cut(line, "=")
		name = strings.TrimSpace(name)
		if !ok || !nameRE.MatchString(name) {
			continue
		}
		rest = strings.TrimLeft(rest, " \t")
		var value string
		switch {
		case strings.HasPrefix(rest, "'") || strings.HasPrefix(rest, `"`):
			q := rest[0]
			body := rest[1:]
			// A quoted value may span lines.
			for !closes(body, q) && i+1 < len(lines) && len(body) < maxBytes {
				i++
				body += "\n" + lines[i]
			}
			value = unquote(body, q)
		default:
			if j := strings.Index(rest, " #"); j >= 0 {
				rest = rest[:j]
			}
			value = strings.TrimSpace(rest)
		}
		out = append(out, Var{Name: name, Value: value})
	}
	return out
}

// closes reports whether body (after the opening quote) holds the
// closing quote q.
func closes(body string, q byte) bool {
	for i := 0; i < len(body); i++ {
		if body[i] == '\\' && q == '"' {
			i++
			continue
		}
		if body[i] == q {
			return true
		}
	}
	return false
}

func unquote(body string, q byte) string {
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c == q {
			break
		}
		if c == '\\' && q == '"' && i+1 < len(body) {
			i++
			switch body[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(body[i])
			}
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// Read parses root/.env. A missing file is no variables and no error.
func Read(root string) ([]Var, bool, error) {
	if root == "" {
		return nil, false, nil
	}
	p := filepath.Join(root, ".env")
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxBytes {
		return nil, false, fmt.Errorf("%s is not a regular file of at most %d bytes", p, maxBytes)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, false, err
	}
	return Parse(string(b)), true, nil
}

// Lookup returns the last value of name in vars.
func Lookup(vars []Var, name string) (string, bool) {
	for i := len(vars) - 1; i >= 0; i-- {
		if vars[i].Name == name {
			return vars[i].Value, true
		}
	}
	return "", false
}
