// Package extpath maps TYPO3 extension keys to their directories in one
// installation and resolves "EXT:key/Some/File" references the way TYPO3's
// GeneralUtility::getFileAbsFileName does, minus everything that could leave
// the extension: ".." segments, absolute paths, invalid keys, and (for the
// file access helpers) symlinks pointing outside the extension directory.
//
// Where extensions are found, first match wins:
//
//  1. <vendor-dir>/composer/installed.json (composer mode; vendor-dir from
//     composer.json config.vendor-dir, default "vendor"), packages of type
//     typo3-cms-extension or typo3-cms-framework, or any package declaring
//     extra.typo3/cms.extension-key;
//  2. packages/<dir>/composer.json (local path packages, for a project whose
//     vendor folder is not installed);
//  3. typo3conf/ext/<key> (classic mode), under the root and under the web
//     dir (composer.json extra.typo3/cms.web-dir, default "public");
//  4. typo3/sysext/<key> (classic mode core extensions), likewise.
package extpath

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Errors of reference parsing and file access. Callers match them with
// errors.Is; the wrapped message names the offending part.
var (
	// ErrInvalidReference: not "EXT:key[/path]", a bad key, ".." or an
	// absolute path.
	ErrInvalidReference = errors.New("not a valid EXT: reference")
	// ErrUnknownExtension: a valid key that is not installed.
	ErrUnknownExtension = errors.New("extension is not installed")
	// ErrTooLarge: a file above the caller's size limit.
	ErrTooLarge = errors.New("file is too large")
)

// Source says where an extension was found.
type Source string

const (
	SourceComposer  Source = "composer"
	SourcePackages  Source = "packages"
	SourceTypo3conf Source = "typo3conf/ext"
	SourceSysext    Source = "typo3/sysext"
)

// Size caps for the JSON manifests read while resolving; installed.json of
// very large projects stays far below.
const (
	maxManifestBytes = 32 << 20
	maxComposerJSON  = 1 << 20
)

// Extension is one installed extension.
type Extension struct {
	Key string
	// Dir is the extension's directory (absolute, symlinks not resolved).
	Dir string
	// Package is the composer package name, when known.
	Package string
	Source  Source
}

// Map is the extension directory map of one installation. It is immutable
// and safe for concurrent use.
type Map struct {
	root string
	exts map[string]Extension
}

// ValidKey reports whether key is a TYPO3 extension key: lower-case
// letters, digits and underscores, starting with a letter, not ending with
// an underscore, at most 60 characters.
func ValidKey(key string) bool {
	if len(key) < 2 || len(key) > 60 {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case c >= 'a' && c <= 'z':
		case (c >= '0' && c <= '9' || c == '_') && i > 0:
		default:
			return false
		}
	}
	return key[len(key)-1] != '_'
}

// Split parses "EXT:key/relative/path" into the key and the slash-separated
// relative path ("" for the extension directory itself). It refuses
// invalid keys, backslashes, NUL bytes, absolute paths and any ".."
// segment, wrapping ErrInvalidReference.
func Split(ref string) (key, rel string, err error) {
	rest, ok := strings.CutPrefix(ref, "EXT:")
	if !ok {
		return "", "", fmt.Errorf("%w: it must start with \"EXT:\" and name an extension", ErrInvalidReference)
	}
	key, rel, _ = strings.Cut(rest, "/")
	if !ValidKey(key) {
		return "", "", fmt.Errorf("%w: %q is not a valid extension key", ErrInvalidReference, key)
	}
	if err := checkRel(rel); err != nil {
		return "", "", err
	}
	return key, rel, nil
}

// checkRel refuses what could leave the extension directory.
func checkRel(rel string) error {
	if strings.ContainsAny(rel, "\\\x00") {
		return fmt.Errorf("%w: the path contains a backslash or NUL byte", ErrInvalidReference)
	}
	if strings.HasPrefix(rel, "/") || filepath.IsAbs(rel) {
		return fmt.Errorf("%w: the path is absolute", ErrInvalidReference)
	}
	for seg := range strings.SplitSeq(rel, "/") {
		if seg == ".." {
			return fmt.Errorf("%w: the path contains \"..\"", ErrInvalidReference)
		}
	}
	return nil
}

// Resolve reads the installation under root and returns its extension map.
// A missing manifest is normal (classic mode); a manifest that exists but
// cannot be parsed is an error, because a silently partial map gives wrong
// answers.
func Resolve(root string) (*Map, error) {
	if root == "" {
		return nil, errors.New("extpath: no project root configured")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	if info, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("extpath: project root: %w", err)
	} else if !info.IsDir() {
		return nil, fmt.Errorf("extpath: project root %s is not a directory", abs)
	}
	m := &Map{root: abs, exts: map[string]Extension{}}
	proj, err := readComposer(filepath.Join(abs, "composer.json"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := m.addInstalled(proj.vendorDir()); err != nil {
		return nil, err
	}
	m.addPackages()
	for _, base := range []string{abs, filepath.Join(abs, proj.webDir())} {
		m.addDirs(filepath.Join(base, "typo3conf", "ext"), SourceTypo3conf)
		m.addDirs(filepath.Join(base, "typo3", "sysext"), SourceSysext)
	}
	return m, nil
}

// composerJSON holds the fields of a composer.json that matter here.
type composerJSON struct {
	Name   string `json:"name"`
	Type   string `json:"type"`
	Config struct {
		VendorDir string `json:"vendor-dir"`
	} `json:"config"`
	Extra struct {
		TYPO3 struct {
			ExtensionKey string `json:"extension-key"`
			WebDir       string `json:"web-dir"`
		} `json:"typo3/cms"`
	} `json:"extra"`
	InstallPath string `json:"install-path"`
}

func readComposer(path string) (composerJSON, error) {
	var c composerJSON
	b, err := readLimited(path, maxComposerJSON)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("extpath: %s: %w", path, err)
	}
	return c, nil
}

func (c composerJSON) vendorDir() string {
	if d := c.Config.VendorDir; d != "" {
		return d
	}
	return "vendor"
}

func (c composerJSON) webDir() string {
	if d := c.Extra.TYPO3.WebDir; d != "" && filepath.IsLocal(d) {
		return d
	}
	return "public"
}

// extensionKey returns the key a TYPO3 package declares, or derives it
// from the package name the way TYPO3 does for packages that predate the
// extra field ("typo3/cms-fluid-styled-content" → "fluid_styled_content",
// "vendor/my-ext" → "my_ext"). Non-TYPO3 packages yield "".
func (c composerJSON) extensionKey() string {
	if k := c.Extra.TYPO3.ExtensionKey; k != "" {
		return k
	}
	if c.Type != "typo3-cms-extension" && c.Type != "typo3-cms-framework" {
		return ""
	}
	_, name, ok := strings.Cut(c.Name, "/")
	if !ok {
		return ""
	}
	if strings.HasPrefix(c.Name, "typo3/cms-") {
		name = strings.TrimPrefix(name, "cms-")
	}
	return strings.ReplaceAll(name, "-", "_")
}

func (m *Map) add(e Extension) {
	if !ValidKey(e.Key) {
		return
	}
	if _, dup := m.exts[e.Key]; !dup {
		m.exts[e.Key] = e
	}
}

// addInstalled reads Composer's installed.json (Composer 2 object form or
// Composer 1 list form); install paths are relative to vendor/composer.
func (m *Map) addInstalled(vendorDir string) error {
	if !filepath.IsAbs(vendorDir) {
		vendorDir = filepath.Join(m.root, vendorDir)
	}
	composerDir := filepath.Join(vendorDir, "composer")
	manifest := filepath.Join(composerDir, "installed.json")
	b, err := readLimited(manifest, maxManifestBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var pkgs []composerJSON
	var v2 struct {
		Packages []composerJSON `json:"packages"`
	}
	if err := json.Unmarshal(b, &v2); err == nil && v2.Packages != nil {
		pkgs = v2.Packages
	} else if err := json.Unmarshal(b, &pkgs); err != nil {
		return fmt.Errorf("extpath: %s is neither Composer 2 nor Composer 1 installed.json: %w", manifest, err)
	}
	for _, p := range pkgs {
		key := p.extensionKey()
		if key == "" || p.InstallPath == "" {
			continue
		}
		dir := p.InstallPath
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(composerDir, filepath.FromSlash(dir))
		}
		m.add(Extension{Key: key, Dir: filepath.Clean(dir), Package: p.Name, Source: SourceComposer})
	}
	return nil
}

// addPackages reads packages/*/composer.json. A package whose composer.json
// is unreadable is skipped: these are a fallback for projects without
// vendor/, not the authoritative list.
func (m *Map) addPackages() {
	entries, err := os.ReadDir(filepath.Join(m.root, "packages"))
	if err != nil {
		return
	}
	for _, e := range entries {
		dir := filepath.Join(m.root, "packages", e.Name())
		c, err := readComposer(filepath.Join(dir, "composer.json"))
		if err != nil {
			continue
		}
		m.add(Extension{Key: c.extensionKey(), Dir: dir, Package: c.Name, Source: SourcePackages})
	}
}

// addDirs adds every directory below base named like an extension key.
func (m *Map) addDirs(base string, src Source) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range entries {
		dir := filepath.Join(base, e.Name())
		if info, err := os.Stat(dir); err == nil && info.IsDir() {
			m.add(Extension{Key: e.Name(), Dir: dir, Source: src})
		}
	}
}

// Root returns the project root the map was resolved from.
func (m *Map) Root() string { return m.root }

// Lookup returns the installed extension with key.
func (m *Map) Lookup(key string) (Extension, bool) {
	e, ok := m.exts[key]
	return e, ok
}

// Keys returns the installed extension keys, sorted.
func (m *Map) Keys() []string {
	keys := make([]string, 0, len(m.exts))
	for k := range m.exts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Path resolves "EXT:key/Some/File" to a filesystem path inside the
// extension's directory. It does not check that the file exists, and it
// cannot see symlinks; use Stat, Open or ReadFile to access the file.
func (m *Map) Path(ref string) (string, error) {
	e, rel, err := m.resolve(ref)
	if err != nil {
		return "", err
	}
	return filepath.Join(e.Dir, filepath.FromSlash(rel)), nil
}

func (m *Map) resolve(ref string) (Extension, string, error) {
	key, rel, err := Split(ref)
	if err != nil {
		return Extension{}, "", err
	}
	e, ok := m.exts[key]
	if !ok {
		return Extension{}, "", fmt.Errorf("EXT:%s: %w", key, ErrUnknownExtension)
	}
	return e, rel, nil
}

// rootRel turns a checked relative path into os.Root's form.
func rootRel(rel string) string {
	rel = strings.Trim(rel, "/")
	if rel == "" {
		return "."
	}
	return rel
}

// Stat stats the referenced file through os.Root on the extension
// directory, so a symlink that leads outside the extension is an error.
func (m *Map) Stat(ref string) (fs.FileInfo, error) {
	e, rel, err := m.resolve(ref)
	if err != nil {
		return nil, err
	}
	r, err := os.OpenRoot(e.Dir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.Stat(rootRel(rel))
}

// Open opens the referenced file for reading inside the extension
// directory (see Stat).
func (m *Map) Open(ref string) (*os.File, error) {
	e, rel, err := m.resolve(ref)
	if err != nil {
		return nil, err
	}
	r, err := os.OpenRoot(e.Dir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.Open(rootRel(rel))
}

// ReadFile reads the referenced regular file, refusing files larger than
// limit bytes with ErrTooLarge.
func (m *Map) ReadFile(ref string, limit int64) ([]byte, error) {
	f, err := m.Open(ref)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f, ref, limit)
}

func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f, path, limit)
}

func readAll(f *os.File, name string, limit int64) ([]byte, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: %w (limit %d bytes)", name, ErrTooLarge, limit)
	}
	return b, nil
}
