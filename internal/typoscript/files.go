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
type files struct {
	paths   ExtensionPaths
	loaded  func(key string) bool // nil: every extension paths resolves
	project string                // absolute references must lie below it
	public  string                // directory plain relative references resolve against
	roots   map[string]*os.Root
}

func newFiles(paths ExtensionPaths, projectRoot, publicDir string) *files {
	f := &files{paths: paths, roots: map[string]*os.Root{}}
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

func (f *files) isFile(ref string) bool {
	fi, err := f.stat(ref)
	return err == nil && fi.Mode().IsRegular()
}

func (f *files) isDir(ref string) bool {
	fi, err := f.stat(ref)
	return err == nil && fi.IsDir()
}

// dirEntry is one name of a directory listing.
type dirEntry struct {
	name  string
	isDir bool
}

// list returns a directory's entries sorted by name, like PHP's scandir.
func (f *files) list(ref string) []dirEntry {
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
	ents, err := d.ReadDir(-1)
	if err != nil {
		return nil
	}
	out := make([]dirEntry, 0, len(ents))
	for _, e := range ents {
		isDir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			fi, err := r.Stat(path.Join(rel, e.Name()))
			isDir = err == nil && fi.IsDir()
		}
		out = append(out, dirEntry{name: e.Name(), isDir: isDir})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// read returns a regular file's content, refusing more than limit bytes.
func (f *files) read(ref string, limit int) (string, error) {
	dir, rel, err := f.locate(ref)
	if err != nil {
		return "", err
	}
	r := f.root(dir)
	if r == nil {
		return "", fs.ErrNotExist
	}
	fh, err := r.Open(rel)
	if err != nil {
		return "", err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(fh, int64(limit)+1))
	if err != nil {
		return "", err
	}
	if len(b) > limit {
		return "", errTooLarge
	}
	return string(b), nil
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
