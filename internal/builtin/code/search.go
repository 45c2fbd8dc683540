package code

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/t3agent/t3agent/internal/builtin/introspect"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3/projectpath"
)

// Limits of search_code (the reference's).
const (
	maxFiles       = 20000
	searchBudget   = 5 * time.Second
	maxSearchBytes = 2 << 20
	maxLineChars   = 200
	batch          = 256
)

// codeExts are the file types searched.
var codeExts = map[string]bool{".php": true, ".html": true, ".typoscript": true, ".tsconfig": true, ".yaml": true,
	".yml": true, ".xml": true, ".xlf": true, ".json": true, ".md": true}

// skipDirs are never entered.
var skipDirs = map[string]bool{"vendor": true, "node_modules": true, "var": true}

type searchCode struct{ env }

func (t *searchCode) Spec() tool.Spec {
	return introspect.Spec("search_code", tool.GroupCode, tool.SourceCode, true,
		"Searches the TYPO3 project's own files (php, html, typoscript, tsconfig, yaml, yml, xml, xlf, json, md; "+
			"not vendor/, node_modules/, var/ or hidden folders) for a text and answers `path:line: text` per "+
			"matching line (at most 200 characters, credentials masked), sorted by path. pattern is literal and "+
			"case-insensitive unless regex is true; then it is an RE2 regular expression (no lookarounds or "+
			"backreferences; such patterns are refused with a sentence). path narrows the search to a folder or "+
			"file, e.g. packages/site_demo. max_results defaults to 30, at most 100. At most 20 000 files or 5 s "+
			"are searched; the answer says when that budget cut the search. Use it to find where a class, "+
			"TypoScript object, template or label is defined before reading it with read_source.",
		`{"type":"object","properties":{`+
			`"pattern":{"type":"string","minLength":1,"maxLength":200,"description":"Text or, with regex, RE2 expression to find."},`+
			`"regex":{"type":"boolean","default":false,"description":"Treat pattern as an RE2 regular expression (case-sensitive; use (?i) for case-insensitive)."},`+
			`"path":{"type":"string","maxLength":1024,"description":"Folder or file relative to the project root to search in."},`+
			`"max_results":{"type":"integer","minimum":1,"maximum":100,"default":30,"description":"How many matching lines to return."}`+
			`},"required":["pattern"],"additionalProperties":false}`)
}

// matcher finds matching lines in one file's content.
type matcher struct {
	re  *regexp.Regexp
	lit []byte // lower-case literal
}

func (m matcher) any(content []byte) bool {
	if m.re != nil {
		return m.re.Match(content)
	}
	return bytes.Contains(lowerASCII(content), m.lit)
}

func (m matcher) line(l []byte) bool {
	if m.re != nil {
		return m.re.Match(l)
	}
	return bytes.Contains(lowerASCII(l), m.lit)
}

func lowerASCII(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

// compilePattern builds the matcher or says why the pattern cannot run.
func compilePattern(pattern string, regex bool) (matcher, string) {
	if !regex {
		return matcher{lit: lowerASCII([]byte(pattern))}, ""
	}
	re, err := regexp.Compile(pattern)
	if err == nil {
		return matcher{re: re}, ""
	}
	msg := err.Error()
	for _, c := range []struct{ needle, what string }{
		{"(?=", "a lookahead (?=…)"}, {"(?!", "a negative lookahead (?!…)"}, {"(?<=", "a lookbehind (?<=…)"},
		{"(?<!", "a negative lookbehind (?<!…)"}, {"(?>", "an atomic group (?>…)"},
	} {
		if strings.Contains(pattern, c.needle) {
			return matcher{}, fmt.Sprintf("The pattern uses %s, which RE2 regular expressions cannot run; rewrite it without lookarounds.", c.what)
		}
	}
	switch {
	case regexp.MustCompile(`\\[1-9]`).MatchString(pattern) && strings.Contains(msg, "escape"):
		return matcher{}, "The pattern uses a backreference (\\1 …), which RE2 regular expressions cannot run; rewrite it without."
	case strings.Contains(msg, "nested repetition"):
		return matcher{}, "The pattern uses a possessive or nested quantifier (such as a++), which RE2 regular expressions cannot run; rewrite it without."
	}
	return matcher{}, "The pattern is not a valid RE2 regular expression: " + strings.TrimPrefix(msg, "error parsing regexp: ") + "."
}

type hit struct {
	line int
	text string
}

func (t *searchCode) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	if res, ok := introspect.Authorize(call); !ok {
		return res, nil
	}
	pattern, _ := args["pattern"].(string)
	if pattern == "" || len(pattern) > 200 {
		return tool.Errorf("pattern must be 1 to 200 characters."), nil
	}
	regex, err := introspect.Bool(args, "regex")
	if err != nil {
		return tool.Errorf("%s.", err.Error()), nil
	}
	sub, err := introspect.String(args, "path")
	if err != nil {
		return tool.Errorf("%s.", err.Error()), nil
	}
	limit, err := introspect.Int(args, "max_results", 30, 1, 100)
	if err != nil {
		return tool.Errorf("%s.", err.Error()), nil
	}
	m, why := compilePattern(pattern, regex)
	if why != "" {
		return tool.Errorf("%s", why), nil
	}
	g, ok := t.guard()
	if !ok {
		return tool.Errorf("%s", noRoot), nil
	}
	start, startRel := g.Root(), ""
	if sub != "" {
		start, startRel, err = g.Resolve(sub)
		if err != nil {
			return pathError(err), nil
		}
	}
	r := search(ctx, g, start, startRel, m, int(limit))
	if r.err != nil {
		return tool.Result{}, r.err
	}
	var b strings.Builder
	for _, h := range r.hits {
		b.WriteString(h)
		b.WriteByte('\n')
	}
	scope := "the project"
	if startRel != "" {
		scope = startRel
	}
	switch {
	case len(r.hits) == 0:
		fmt.Fprintf(&b, "No match in %s (%d files searched).", scope, r.files)
	case r.more:
		fmt.Fprintf(&b, "%d matching lines shown, more exist; narrow the search with path or a longer pattern (%d files searched).", len(r.hits), r.files)
	default:
		fmt.Fprintf(&b, "%d matching lines in %s (%d files searched).", len(r.hits), scope, r.files)
	}
	if r.budget != "" {
		fmt.Fprintf(&b, " The search stopped early: %s.", r.budget)
	}
	return tool.Text(b.String()), nil
}

// result is what one search found.
type result struct {
	hits   []string
	files  int
	more   bool
	budget string
	err    error
}

// search walks start (a real path inside the guard's root) and returns
// the first limit matching lines in path order. Files are matched in
// parallel batches; the order of the answer does not depend on it.
func search(ctx context.Context, g *projectpath.Guard, start, startRel string, m matcher, limit int) result {
	deadline := time.Now().Add(searchBudget)
	var paths []string // project-relative
	var links []bool   // the entry is a symlink, to be resolved by the guard
	var res result
	fi, err := os.Stat(start)
	if err != nil {
		res.err = err
		return res
	}
	if !fi.IsDir() {
		paths, links = append(paths, startRel), append(links, true)
	} else {
		err = filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p == start {
					return err
				}
				return nil
			}
			name := d.Name()
			if p != start && strings.HasPrefix(name, ".") {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			rel, ok := g.Rel(p)
			if !ok {
				return fs.SkipDir
			}
			if d.IsDir() {
				if p != start && (skipDirs[name] || projectpath.Denied(rel)) {
					return fs.SkipDir
				}
				return nil
			}
			if !codeExts[strings.ToLower(filepath.Ext(name))] || projectpath.Denied(rel) {
				return nil
			}
			if len(paths) >= maxFiles {
				res.budget = fmt.Sprintf("more than %d files", maxFiles)
				return fs.SkipAll
			}
			paths, links = append(paths, rel), append(links, d.Type()&fs.ModeSymlink != 0)
			return nil
		})
		if err != nil {
			res.err = err
			return res
		}
	}
	workers := max(1, runtime.GOMAXPROCS(0))
	for lo := 0; lo < len(paths) && !res.more; lo += batch {
		if ctx.Err() != nil {
			res.err = ctx.Err()
			return res
		}
		if time.Now().After(deadline) {
			res.budget = fmt.Sprintf("the %s time budget was used up", searchBudget)
			break
		}
		hi := min(lo+batch, len(paths))
		found := make([][]hit, hi-lo)
		var wg sync.WaitGroup
		next := make(chan int)
		for range workers {
			wg.Go(func() {
				for i := range next {
					found[i-lo] = searchFile(g, paths[i], links[i], m, limit)
				}
			})
		}
		for i := lo; i < hi; i++ {
			next <- i
		}
		close(next)
		wg.Wait()
		res.files += hi - lo
		for i, hs := range found {
			for _, h := range hs {
				if len(res.hits) == limit {
					res.more = true
					break
				}
				res.hits = append(res.hits, fmt.Sprintf("%s:%d: %s", paths[lo+i], h.line, h.text))
			}
		}
	}
	return res
}

// searchFile returns up to limit matching lines of one file. A regular
// file found by the walk lies inside the root by construction and its
// path passed the denied check; a symlink (or a file named directly) is
// resolved by the guard, so one leading out of the root or to a denied
// file gives nothing. Large or binary files give nothing either.
func searchFile(g *projectpath.Guard, rel string, link bool, m matcher, limit int) []hit {
	real := filepath.Join(g.Root(), filepath.FromSlash(rel))
	if link {
		var err error
		if real, _, err = g.Resolve(rel); err != nil {
			return nil
		}
	}
	f, err := os.Open(real)
	if err != nil {
		return nil
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxSearchBytes {
		_ = f.Close()
		return nil
	}
	content := make([]byte, fi.Size())
	n, _ := io.ReadFull(f, content)
	_ = f.Close()
	content = content[:n]
	if bytes.IndexByte(content[:min(len(content), 8192)], 0) >= 0 || !m.any(content) {
		return nil
	}
	var out []hit
	for no := 1; len(content) > 0 && len(out) < limit; no++ {
		l := content
		if i := bytes.IndexByte(content, '\n'); i >= 0 {
			l, content = content[:i], content[i+1:]
		} else {
			content = nil
		}
		if m.line(l) {
			out = append(out, hit{no, introspect.Cut(introspect.Text(strings.TrimSpace(string(l))), maxLineChars)})
		}
	}
	return out
}
