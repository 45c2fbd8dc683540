package tca

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// cacheDirs are where TYPO3 keeps cache "core" code files, relative to
// the project root: composer mode (<project>/var), then legacy mode
// (<public>/typo3temp/var) with the public dir below or at the root.
var cacheDirs = []string{
	"var/cache/code/core",
	"public/typo3temp/var/cache/code/core",
	"typo3temp/var/cache/code/core",
}

// FindCacheFile returns the base TCA cache file under projectRoot. The
// file name carries a hash of version, path and package set, so several
// may be left over; the newest one (by modification time) is the current
// one. It returns an error wrapping fs.ErrNotExist when there is none.
func FindCacheFile(projectRoot string) (string, error) {
	var best string
	var bestInfo fs.FileInfo
	for _, dir := range cacheDirs {
		matches, err := filepath.Glob(filepath.Join(projectRoot, dir, "tca_base_*.php"))
		if err != nil {
			return "", err // only for a malformed pattern, i.e. a bad root
		}
		for _, m := range matches {
			info, err := os.Stat(m)
			if err != nil || !info.Mode().IsRegular() {
				continue // removed meanwhile, or not a file
			}
			// Ties go to the later name so the choice is stable.
			if bestInfo == nil || info.ModTime().After(bestInfo.ModTime()) ||
				(info.ModTime().Equal(bestInfo.ModTime()) && m > best) {
				best, bestInfo = m, info
			}
		}
	}
	if best == "" {
		return "", fmt.Errorf("no TCA cache file (tca_base_*.php) under %s: %w", projectRoot, fs.ErrNotExist)
	}
	return best, nil
}

// LoadCacheFile reads a base TCA cache file written by TYPO3's TcaFactory:
// a PHP file returning var_export(['tca' => $tca]).
func LoadCacheFile(path string) (*TCA, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	v, err := ParsePHPReturn(src)
	if err != nil {
		var se *SyntaxError
		if errors.As(err, &se) {
			se.File = path
		}
		return nil, err
	}
	root, _ := v.(*Array)
	tables, ok := root.Get("tca")
	if !ok {
		return nil, fmt.Errorf("%s: the returned array has no 'tca' entry; not a base TCA cache file", path)
	}
	ta, ok := tables.(*Array)
	if !ok {
		return nil, fmt.Errorf("%s: 'tca' is %s, not an array", path, kind(tables))
	}
	t, err := FromArray(ta, path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// LoadJSON reads an operator's JSON export of the TCA: one object mapping
// table name to that table's TCA array, e.g. json_encode($GLOBALS['TCA']).
func LoadJSON(r io.Reader) (*TCA, error) {
	v, err := DecodeJSON(r)
	if err != nil {
		return nil, err
	}
	a, ok := v.(*Array)
	if !ok {
		return nil, fmt.Errorf("TCA JSON must be an object of tables, not %s", kind(v))
	}
	return FromArray(a, "json")
}

// LoadParams names the places Load looks at. Empty fields are skipped.
type LoadParams struct {
	ProjectRoot string // TYPO3 project root (composer root or legacy web root)
	JSONPath    string // operator-provided JSON export
}

// Load returns the most authoritative TCA available: the project's own TCA
// cache file, else the operator's JSON export, else the bundled core TCA.
// A source that is present but unreadable is an error rather than a reason
// to fall back, so a broken cache never silently degrades answers.
func Load(p LoadParams) (*TCA, error) {
	if p.ProjectRoot != "" {
		// A root that is not there is a configuration mistake; a root
		// without a cache file (flushed caches) is normal and falls back.
		if info, err := os.Stat(p.ProjectRoot); err != nil {
			return nil, fmt.Errorf("TYPO3 project root: %w", err)
		} else if !info.IsDir() {
			return nil, fmt.Errorf("TYPO3 project root %s is not a directory", p.ProjectRoot)
		}
		path, err := FindCacheFile(p.ProjectRoot)
		switch {
		case err == nil:
			return LoadCacheFile(path)
		case !errors.Is(err, fs.ErrNotExist):
			return nil, err
		}
	}
	if p.JSONPath != "" {
		f, err := os.Open(p.JSONPath)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		t, err := LoadJSON(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.JSONPath, err)
		}
		t.Source = p.JSONPath
		return t, nil
	}
	return Bundled(), nil
}
