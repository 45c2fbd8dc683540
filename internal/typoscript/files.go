package typoscript

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// ExtensionPaths maps "EXT:key/…" references to filesystem paths; an
// unknown or invalid extension is an error. internal/typo3/extpath's Map
// satisfies it.
type ExtensionPaths interface {
	Path(extPath string) (string, error)
}

// errNotResolvable marks a reference TYPO3's getFileAbsFileName would turn
// into "" (unknown extension, invalid path): imports of it end silently.
var errNotResolvable = errors.New("reference cannot be resolved")

// files reads include sources. Extension files are opened through os.Root
// on the extension directory and other files through os.Root on the
// project root, so no reference (nor a symlink) leads outside them.
//
// With a FileCache, a file or listing read before is served from it once
// the same absolute path stats (one os.Stat, once per build) to the same
// size and modification time; anything else still goes through os.Root,
// and only what os.Root read is stored.
type files struct {
	paths   ExtensionPaths
	loaded  func(key string) bool // nil: every extension paths resolves
	project string                // absolute references must lie below it
	public  string                // directory plain relative references resolve against
	roots   map[string]*os.Root

	cache *FileCache
	// stats holds this build's os.Stat of every absolute path it looked
	// at (ok false: missing), so a build sees one version of each file.
	stats map[string]statResult
}

type statResult struct {
	st stamp
	ok bool
}

func newFiles(paths ExtensionPaths, projectRoot, publicDir string, cache *FileCache) *files {
	f := &files{paths: paths, roots: map[string]*os.Root{}, cache: cache, stats: map[string]statResult{}}
	if projectRoot != "" {
		f.project = filepath.Clean(projectRoot)
	}
	if publicDir != "" {
		f.public = filepath.Clean(publicDir)
	} else if f.project != "" {
		f.public = filepath.Join(f.project, "public")
	}
	return f
}

func (f *files) close() {
	for _, r := range f.roots {
		if r != nil {
			_ = r.Close()
		}
	}
}

// root opens (once) the os.Root for dir; nil when dir is not a directory.
func (f *files) root(dir string) *os.Root {
	if r, ok := f.roots[dir]; ok {
		return r
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		r = nil
	}
	f.roots[dir] = r
	return r
}

// locate maps a reference to (root directory, relative slash path). ref is
// "EXT:key/path", an absolute path, or a path relative to the public
// directory.
func (f *files) locate(ref string) (string, string, error) {
	if rest, ok := strings.CutPrefix(ref, "EXT:"); ok {
		key, rel, _ := strings.Cut(rest, "/")
		if f.paths == nil || key == "" || (f.loaded != nil && !f.loaded(key)) {
			// TYPO3 resolves EXT: paths of active extensions only.
			return "", "", errNotResolvable
		}
		dir, err := f.paths.Path("EXT:" + key)
		if err != nil {
			return "", "", errNotResolvable
		}
		return dir, cleanRel(rel), nil
	}
	if ref == "" || strings.ContainsRune(ref, 0) {
		return "", "", errNotResolvable
	}
	if filepath.IsAbs(ref) {
		// Absolute paths (site configuration files) are followed only
		// below the project root.
		if f.project == "" {
			return "", "", errNotResolvable
		}
		rel, err := filepath.Rel(f.project, filepath.Clean(ref))
		if err != nil || !filepath.IsLocal(rel) {
			return "", "", errNotResolvable
		}
		return f.project, filepath.ToSlash(rel), nil
	}
	if f.public == "" {
		return "", "", errNotResolvable
	}
	return f.public, cleanRel(ref), nil
}

// cleanRel normalises a relative slash path; ".." stays in so os.Root
// refuses it.
func cleanRel(rel string) string {
	rel = strings.Trim(rel, "/")
	if rel == "" {
		return "."
	}
	return path.Clean(rel)
}

func (f *files) stat(ref string) (fs.FileInfo, error) {
	dir, rel, err := f.locate(ref)
	if err != nil {
		return nil, err
	}
	r := f.root(dir)
	if r == nil {
		return nil, fs.ErrNotExist
	}
	return r.Stat(rel)
}

// Cache keys: a file's and a listing's absolute path, apart.
const (
	fileKeyPrefix = "f:"
	dirKeyPrefix  = "d:"
)

// cacheKey returns ref's absolute path for the cache, or "" when there is
// no cache or ref is not a plain path below its directory (os.Root alone
// decides those).
func (f *files) cacheKey(ref string) string {
	if f.cache == nil {
		return ""
	}
	dir, rel, err := f.locate(ref)
	if err != nil || (rel != "." && !filepath.IsLocal(filepath.FromSlash(rel))) {
		return ""
	}
	return filepath.Join(dir, filepath.FromSlash(rel))
}

// statAbs stats abs once per build; ok is false when it does not exist
// (or cannot be seen, which os.Root could not either).
func (f *files) statAbs(abs string) statResult {
	if s, ok := f.stats[abs]; ok {
		return s
	}
	var s statResult
	if fi, err := os.Stat(abs); err == nil {
		s = statResult{st: stampOf(fi), ok: true}
	}
	f.stats[abs] = s
	return s
}

// cached returns the cached entry of abs under prefix that matches this
// build's stat of it; missing is true when abs does not exist at all.
func (f *files) cached(prefix, abs string) (e *cacheEntry, missing bool) {
	s := f.statAbs(abs)
	if !s.ok {
		return nil, true
	}
	return f.cache.get(prefix+abs, s.st), false
}

// known answers from the cache whether ref is a file (prefix
// fileKeyPrefix) or directory (dirKeyPrefix) when it can: decided is
// false when only os.Root can tell.
func (f *files) known(prefix, ref string) (is, decided bool) {
	abs := f.cacheKey(ref)
	if abs == "" {
		return false, false
	}
	e, missing := f.cached(prefix, abs)
	return e != nil, missing || e != nil
}

func (f *files) isFile(ref string) bool {
	if is, ok := f.known(fileKeyPrefix, ref); ok {
		return is
	}
	fi, err := f.stat(ref)
	return err == nil && fi.Mode().IsRegular()
}

func (f *files) isDir(ref string) bool {
	if is, ok := f.known(dirKeyPrefix, ref); ok {
		return is
	}
	fi, err := f.stat(ref)
	return err == nil && fi.IsDir()
}

// dirEntry is one name of a directory listing.
type dirEntry struct {
	name  string
	isDir bool
}

// list returns a directory's entries sorted by name, like PHP's scandir.
// A listing with a symlink in it is not cached: whether the link leads to
// a directory can change without the directory changing.
func (f *files) list(ref string) []dirEntry {
	abs := f.cacheKey(ref)
	if abs != "" {
		if e, missing := f.cached(dirKeyPrefix, abs); missing {
			return nil
		} else if e != nil {
			return e.ents
		}
	}
	dir, rel, err := f.locate(ref)
	if err != nil {
		return nil
	}
	r := f.root(dir)
	if r == nil {
		return nil
	}
	d, err := r.Open(rel)
	if err != nil {
		return nil
	}
	defer d.Close()
	dfi, err := d.Stat()
	if err != nil {
		return nil
	}
	ents, err := d.ReadDir(-1)
	if err != nil {
		return nil
	}
	out := make([]dirEntry, 0, len(ents))
	links := false
	for _, e := range ents {
		isDir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			links = true
			fi, err := r.Stat(path.Join(rel, e.Name()))
			isDir = err == nil && fi.IsDir()
		}
		out = append(out, dirEntry{name: e.Name(), isDir: isDir})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	if abs != "" && !links {
		st := stampOf(dfi)
		f.stats[abs] = statResult{st: st, ok: true}
		f.cache.put(&cacheEntry{key: dirKeyPrefix + abs, stamp: st, ents: out})
	}
	return out
}

// read returns a regular file's content, refusing more than limit bytes.
func (f *files) read(ref string, limit int) (string, error) {
	e, err := f.load(ref, limit)
	if err != nil {
		return "", err
	}
	return e.src, nil
}

// load returns a regular file as a cache entry: the cached one when this
// build's stat matches it, else read through os.Root (and stored when
// there is a cache). Content above limit bytes is refused.
func (f *files) load(ref string, limit int) (*cacheEntry, error) {
	abs := f.cacheKey(ref)
	if abs != "" {
		e, missing := f.cached(fileKeyPrefix, abs)
		if missing {
			return nil, fs.ErrNotExist
		}
		if e != nil {
			if len(e.src) > limit {
				return nil, errTooLarge
			}
			return e, nil
		}
	}
	dir, rel, err := f.locate(ref)
	if err != nil {
		return nil, err
	}
	r := f.root(dir)
	if r == nil {
		return nil, fs.ErrNotExist
	}
	fh, err := r.Open(rel)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(fh, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > limit {
		return nil, errTooLarge
	}
	e := &cacheEntry{stamp: stampOf(fi), src: string(b)}
	if abs != "" {
		// What was read is this build's version of the file.
		f.stats[abs] = statResult{st: e.stamp, ok: true}
		e.key = fileKeyPrefix + abs
		f.cache.put(e)
	}
	return e, nil
}

// keepLines stores the tokenization of e (made under lim with budget
// lines left) in the cache, as a new entry: stored entries never change.
func (f *files) keepLines(e *cacheEntry, lines []Line, lim Limits, budget int) {
	if e.key == "" || f.cache == nil {
		return
	}
	n := *e
	n.lines, n.tok, n.maxLines, n.cut = lines, tokenKeyOf(lim), budget, len(lines) >= budget
	f.cache.put(&n)
}

var errTooLarge = errors.New("file larger than the limit")

// deniedFile is TYPO3's FileNameValidator default: no PHP-executable or
// .htaccess files, whatever they are imported as.
var deniedFile = regexp.MustCompile(`(?i)\.(php[3-8]?|phpsh|phtml|pht|phar|shtml|cgi)(\..*)?$|^\.htaccess$`)

func validFileName(name string) bool {
	return !deniedFile.MatchString(path.Base(name))
}

// phpDirname is PHP's dirname() on a slash path ("." when there is no
// slash, "/" for a top-level file).
func phpDirname(p string) string {
	p = strings.TrimRight(p, "/")
	i := strings.LastIndexByte(p, '/')
	switch {
	case i < 0:
		return "."
	case i == 0:
		return "/"
	}
	return strings.TrimRight(p[:i], "/")
}
