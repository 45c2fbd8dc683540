// Package middleware tells the PSR-15 middleware stack of a TYPO3
// installation (frontend or backend) from its files, without PHP.
//
// First choice is the stack TYPO3 itself resolved and cached:
// var/cache/code/core/middlewares_<stack>_<hash>.php, a var_export of
// name => class. TYPO3's MiddlewareDispatcher wraps the entries in order,
// so the cache holds them innermost first; Cached returns them in request
// order (outermost first). Without a cache, FromExtensions reads each
// extension's Configuration/RequestMiddlewares.php (the array literal, with
// Foo::class constants resolved through the file's use statements) and
// orders the entries by their before/after lists as TYPO3's
// DependencyOrderingService does, dropping disabled ones.
package middleware

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/t3agent/t3agent/internal/typo3/extpath"
	"github.com/t3agent/t3agent/internal/typo3/phparray"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

// Entry is one middleware.
type Entry struct {
	Name   string
	Target string
	// Extension is the key of the extension that registers it (fallback
	// only).
	Extension string
}

// maxFileBytes caps the files read.
const maxFileBytes = 4 << 20

// ErrNoCache means no cached stack exists.
var ErrNoCache = errors.New("no cached middleware stack")

// Cached returns the cached stack of stack ("frontend" or "backend") and
// the project-relative file read, newest cache file first.
func Cached(root, stack string) ([]Entry, string, error) {
	matches, _ := filepath.Glob(filepath.Join(root, "var", "cache", "code", "core", "middlewares_"+stack+"_*.php"))
	if len(matches) == 0 {
		return nil, "", ErrNoCache
	}
	sort.Slice(matches, func(i, j int) bool {
		a, _ := os.Stat(matches[i])
		b, _ := os.Stat(matches[j])
		if a != nil && b != nil && !a.ModTime().Equal(b.ModTime()) {
			return a.ModTime().After(b.ModTime())
		}
		return matches[i] < matches[j]
	})
	rel, _ := filepath.Rel(root, matches[0])
	b, err := readFile(matches[0])
	if err != nil {
		return nil, "", err
	}
	entries, err := ParseCache(b)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", filepath.ToSlash(rel), err)
	}
	return entries, filepath.ToSlash(rel), nil
}

// ParseCache reads a cache file's array and returns it in request order.
func ParseCache(b []byte) ([]Entry, error) {
	v, err := phparray.Parse(b)
	if err != nil {
		return nil, err
	}
	arr, ok := v.(*tca.Array)
	if !ok {
		return nil, errors.New("the cache file does not return an array")
	}
	out := make([]Entry, 0, arr.Len())
	for i := arr.Len() - 1; i >= 0; i-- {
		target, _ := arr.Values[i].(string)
		out = append(out, Entry{Name: arr.Keys[i].String(), Target: target})
	}
	return out, nil
}

// declared is one middleware as an extension declares it.
type declared struct {
	Entry
	before, after []string
	disabled      bool
}

// FromExtensions reads Configuration/RequestMiddlewares.php of each
// extension in exts (load order) and returns the ordered stack, with notes
// about files it could not read and dependency cycles.
func FromExtensions(m *extpath.Map, exts []string, stack string) ([]Entry, []string) {
	var all []*declared
	index := map[string]*declared{}
	var notes []string
	for _, ext := range exts {
		ref := "EXT:" + ext + "/Configuration/RequestMiddlewares.php"
		b, err := m.ReadFile(ref, maxFileBytes)
		if err != nil {
			continue
		}
		decls, err := parseDeclarations(b, stack)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s not read: %v", ref, err))
			continue
		}
		for _, d := range decls {
			d.Extension = ext
			if old, ok := index[d.Name]; ok {
				// A later extension overrides the entry, as array_replace_recursive does.
				old.Target = orDefault(d.Target, old.Target)
				old.before = append(old.before, d.before...)
				old.after = append(old.after, d.after...)
				old.disabled = d.disabled
				continue
			}
			index[d.Name] = d
			all = append(all, d)
		}
	}
	ordered, cyclic := order(all, index)
	if cyclic {
		notes = append(notes, "the before/after lists form a cycle; the entries in it are listed in declaration order")
	}
	var out []Entry
	for _, d := range ordered {
		if !d.disabled {
			out = append(out, d.Entry)
		}
	}
	return out, notes
}

func orDefault(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// order is a stable topological sort: among the entries whose
// predecessors are placed, the earliest declared goes next.
func order(all []*declared, index map[string]*declared) ([]*declared, bool) {
	preds := map[*declared]map[*declared]bool{}
	for _, d := range all {
		preds[d] = map[*declared]bool{}
	}
	for _, d := range all {
		for _, b := range d.before {
			if o, ok := index[b]; ok && o != d {
				preds[o][d] = true
			}
		}
		for _, a := range d.after {
			if o, ok := index[a]; ok && o != d {
				preds[d][o] = true
			}
		}
	}
	placed := map[*declared]bool{}
	var out []*declared
	for len(out) < len(all) {
		progress := false
		for _, d := range all {
			if placed[d] {
				continue
			}
			ready := true
			for p := range preds[d] {
				if !placed[p] {
					ready = false
					break
				}
			}
			if ready {
				placed[d] = true
				out = append(out, d)
				progress = true
				break
			}
		}
		if !progress {
			for _, d := range all {
				if !placed[d] {
					placed[d] = true
					out = append(out, d)
				}
			}
			return out, true
		}
	}
	return out, false
}

var (
	useRE   = regexp.MustCompile(`(?m)^\s*use\s+\\?([A-Za-z0-9_\\]+)(?:\s+as\s+([A-Za-z0-9_]+))?\s*;`)
	classRE = regexp.MustCompile(`\\?([A-Za-z_][A-Za-z0-9_]*(?:\\[A-Za-z_][A-Za-z0-9_]*)*)::class`)
	retRE   = regexp.MustCompile(`(?m)^\s*return\s`)
)

// parseDeclarations reads one RequestMiddlewares.php and returns the
// entries of stack in file order.
func parseDeclarations(b []byte, stack string) ([]*declared, error) {
	src := string(b)
	uses := map[string]string{}
	for _, m := range useRE.FindAllStringSubmatch(src, -1) {
		alias := m[2]
		if alias == "" {
			alias = m[1][strings.LastIndex(m[1], `\`)+1:]
		}
		uses[alias] = m[1]
	}
	loc := retRE.FindStringIndex(src)
	if loc == nil {
		return nil, errors.New("no return statement")
	}
	body := classRE.ReplaceAllStringFunc(src[loc[0]:], func(s string) string {
		name := classRE.FindStringSubmatch(s)[1]
		if !strings.HasPrefix(s, `\`) {
			first, rest, _ := strings.Cut(name, `\`)
			if full, ok := uses[first]; ok {
				name = full
				if rest != "" {
					name += `\` + rest
				}
			}
		}
		return "'" + strings.ReplaceAll(name, `\`, `\\`) + "'"
	})
	v, err := phparray.Parse([]byte("<?php\n" + body))
	if err != nil {
		return nil, err
	}
	arr, _ := v.(*tca.Array)
	st := arr.Array(stack)
	var out []*declared
	for i, k := range st.Keys {
		e, _ := st.Values[i].(*tca.Array)
		d := &declared{Entry: Entry{Name: k.String()}}
		if t, ok := e.Get("target"); ok {
			d.Target, _ = t.(string)
		}
		d.before = stringList(e.Array("before"))
		d.after = stringList(e.Array("after"))
		if dis, ok := e.Get("disabled"); ok {
			d.disabled = dis == true
		}
		out = append(out, d)
	}
	return out, nil
}

func stringList(a *tca.Array) []string {
	var out []string
	for i := 0; i < a.Len(); i++ {
		if s, ok := a.Values[i].(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func readFile(p string) ([]byte, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxFileBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", filepath.Base(p), maxFileBytes)
	}
	return os.ReadFile(p)
}
