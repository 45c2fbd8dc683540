// Package projectpath is the path guard of the tools that read an
// installation's own files (read_source, search_code, the source excerpts
// of get_last_exception): a project-relative path is accepted only when
// it names a file inside the project root, after every symlink is
// resolved, and neither the path asked for nor the file it leads to is one
// of the denied places where TYPO3 keeps credentials.
//
// Denied, whatever the caller: ".." and "." segments, absolute paths,
// backslashes, NUL and percent-encoded characters in the request; every
// hidden entry (.env, .git, .ddev, …); var/ except var/log; config/system;
// settings.php, additional.php, LocalConfiguration.php,
// AdditionalConfiguration.php and auth.json anywhere; key, certificate and
// keystore files (.key, .pem, .crt, .cer, .der, .p12, .pfx, .jks,
// .keystore); any path containing "credential". A Guard is immutable and
// safe for concurrent use.
package projectpath

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Errors a Resolve can give. The messages are safe to show; callers show
// one neutral sentence for ErrDenied and ErrOutside so that a refusal
// never confirms that a denied file exists.
var (
	ErrInvalid = errors.New("the path must be relative to the project root, without .., %-encoding, backslashes or NUL")
	ErrDenied  = errors.New("the path is in a place t3agent never reads")
	ErrOutside = errors.New("the path leads outside the project root")
	ErrMissing = errors.New("no such file")
)

// Guard checks paths below one project root.
type Guard struct {
	root string // absolute, symlinks resolved
}

// New returns a guard for root, which must be an existing directory.
func New(root string) (*Guard, error) {
	if root == "" {
		return nil, errors.New("no TYPO3 project root is configured")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("project root: %w", err)
	}
	return &Guard{root: real}, nil
}

// Root returns the project root with symlinks resolved.
func (g *Guard) Root() string { return g.root }

// Clean checks the shape of a requested path and returns it in slash
// form without a leading "./" ("" stands for the root itself).
func Clean(rel string) (string, error) {
	rel = strings.TrimSpace(rel)
	if strings.ContainsAny(rel, "\\\x00") || strings.Contains(rel, "%") || strings.HasPrefix(rel, "/") ||
		filepath.IsAbs(rel) || len(rel) > 1024 || (len(rel) >= 2 && rel[1] == ':') {
		return "", ErrInvalid
	}
	rel = strings.TrimPrefix(rel, "./")
	rel = strings.TrimSuffix(rel, "/")
	if rel == "" || rel == "." {
		return "", nil
	}
	for _, seg := range strings.Split(rel, "/") {
		if seg == ".." || seg == "." || seg == "" {
			return "", ErrInvalid
		}
	}
	return rel, nil
}

// Denied reports whether a clean project-relative path (slash form) is
// in a denied place.
func Denied(rel string) bool {
	if rel == "" {
		return false
	}
	lower := strings.ToLower(rel)
	segs := strings.Split(lower, "/")
	for _, s := range segs {
		if strings.HasPrefix(s, ".") {
			return true
		}
	}
	if strings.Contains(lower, "credential") {
		return true
	}
	if segs[0] == "var" && (len(segs) == 1 || segs[1] != "log") {
		// var itself may be listed (search_code skips it anyway); only
		// var/log is readable below it.
		return len(segs) > 1
	}
	if len(segs) >= 2 && segs[0] == "config" && segs[1] == "system" {
		return true
	}
	base := segs[len(segs)-1]
	switch base {
	case "settings.php", "additional.php", "localconfiguration.php", "additionalconfiguration.php", "auth.json":
		return true
	}
	switch path.Ext(base) {
	case ".key", ".pem", ".crt", ".cer", ".der", ".p12", ".pfx", ".jks", ".keystore":
		return true
	}
	return false
}

// Resolve checks rel and returns the real path of the file or directory
// it names and its project-relative slash form after symlinks.
func (g *Guard) Resolve(rel string) (real, realRel string, err error) {
	clean, err := Clean(rel)
	if err != nil {
		return "", "", err
	}
	if Denied(clean) {
		return "", "", ErrDenied
	}
	real, err = filepath.EvalSymlinks(filepath.Join(g.root, filepath.FromSlash(clean)))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", "", ErrMissing
		}
		return "", "", err
	}
	realRel, ok := g.Rel(real)
	if !ok {
		return "", "", ErrOutside
	}
	if Denied(realRel) {
		return "", "", ErrDenied
	}
	return real, realRel, nil
}

// Rel returns the project-relative slash form of an absolute path with
// symlinks resolved, and false when it is outside the root.
func (g *Guard) Rel(real string) (string, bool) {
	r, err := filepath.Rel(g.root, real)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) || filepath.IsAbs(r) {
		return "", false
	}
	if r == "." {
		return "", true
	}
	return filepath.ToSlash(r), true
}

// ServerPrefix finds the project folder of the TYPO3 server in one of its
// absolute paths (a log names files as the server sees them, and its
// project folder may lie elsewhere than root): the shortest prefix, ending
// in "/", whose remainder exists below root. It returns "" when none does.
func ServerPrefix(root, serverPath string) string {
	for i, n := 0, 0; i < len(serverPath) && n < 24; i++ {
		if serverPath[i] != '/' {
			continue
		}
		n++
		rest := serverPath[i+1:]
		if clean, err := Clean(rest); err != nil || clean == "" {
			continue
		}
		if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rest))); err == nil {
			return serverPath[:i+1]
		}
	}
	return ""
}
