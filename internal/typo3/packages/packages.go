// Package packages lists the TYPO3 extensions an installation has, with
// version and description, from the files TYPO3 itself reads: Composer's
// vendor/composer/installed.json in composer mode (extension key from
// extra.typo3/cms.extension-key, or derived from the package name the way
// TYPO3 does), else typo3conf/PackageStates.php in classic mode (version
// and title from each extension's ext_emconf.php, read as text, never
// run). Package order is kept: TYPO3's load order depends on it.
package packages

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/t3agent/t3agent/internal/typo3/phparray"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

// Package is one installed TYPO3 extension (or framework package).
type Package struct {
	Key         string // extension key
	Name        string // composer name, "" in classic mode
	Version     string
	Description string
	Type        string // typo3-cms-extension, typo3-cms-framework, …
}

// List is what Read found and where.
type List struct {
	// Source is the project-relative file read.
	Source   string
	Packages []Package
	// Others counts the non-TYPO3 composer packages.
	Others int
}

// Size limits of the files read.
const (
	maxManifest = 32 << 20
	maxEmconf   = 64 << 10
)

// ErrNone means neither file exists.
var ErrNone = errors.New("neither vendor/composer/installed.json nor typo3conf/PackageStates.php exists")

// Read lists the extensions of the installation under root.
func Read(root string) (*List, error) {
	vendor := "vendor"
	if b, err := readLimited(filepath.Join(root, "composer.json"), 1<<20); err == nil {
		var c struct {
			Config struct {
				VendorDir string `json:"vendor-dir"`
			} `json:"config"`
		}
		if json.Unmarshal(b, &c) == nil && c.Config.VendorDir != "" && filepath.IsLocal(c.Config.VendorDir) {
			vendor = c.Config.VendorDir
		}
	}
	rel := filepath.ToSlash(filepath.Join(vendor, "composer", "installed.json"))
	b, err := readLimited(filepath.Join(root, filepath.FromSlash(rel)), maxManifest)
	if err == nil {
		l, err := ParseInstalled(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rel, err)
		}
		l.Source = rel
		return l, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, rel := range []string{"typo3conf/PackageStates.php", "public/typo3conf/PackageStates.php"} {
		b, err := readLimited(filepath.Join(root, filepath.FromSlash(rel)), maxManifest)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		l, err := ParsePackageStates(b, filepath.Dir(filepath.Dir(filepath.Join(root, filepath.FromSlash(rel)))))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rel, err)
		}
		l.Source = rel
		return l, nil
	}
	return nil, ErrNone
}

type composerPackage struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Type        string `json:"type"`
	Description string `json:"description"`
	Extra       struct {
		TYPO3 struct {
			ExtensionKey string `json:"extension-key"`
		} `json:"typo3/cms"`
	} `json:"extra"`
}

// ParseInstalled reads Composer 2 (object) or Composer 1 (list)
// installed.json.
func ParseInstalled(b []byte) (*List, error) {
	var pkgs []composerPackage
	var v2 struct {
		Packages []composerPackage `json:"packages"`
	}
	if err := json.Unmarshal(b, &v2); err == nil && v2.Packages != nil {
		pkgs = v2.Packages
	} else if err := json.Unmarshal(b, &pkgs); err != nil {
		return nil, errors.New("it is neither Composer 2 nor Composer 1 installed.json")
	}
	l := &List{}
	for _, p := range pkgs {
		key := p.Extra.TYPO3.ExtensionKey
		if key == "" && (p.Type == "typo3-cms-extension" || p.Type == "typo3-cms-framework") {
			if _, name, ok := strings.Cut(p.Name, "/"); ok {
				key = strings.ReplaceAll(strings.TrimPrefix(name, "cms-"), "-", "_")
			}
		}
		if key == "" {
			l.Others++
			continue
		}
		l.Packages = append(l.Packages, Package{Key: key, Name: p.Name, Version: p.Version, Description: p.Description, Type: p.Type})
	}
	return l, nil
}

// ParsePackageStates reads PackageStates.php (a PHP array literal,
// version 5: packages => key => [packagePath => …]); base is the folder
// package paths are relative to.
func ParsePackageStates(b []byte, base string) (*List, error) {
	v, err := phparray.Parse(b)
	if err != nil {
		return nil, err
	}
	arr, _ := v.(*tca.Array)
	pkgs := arr.Array("packages")
	if pkgs == nil {
		return nil, errors.New("it has no packages array")
	}
	l := &List{}
	for i, k := range pkgs.Keys {
		p := Package{Key: k.String(), Type: "typo3-cms-extension"}
		entry, _ := pkgs.Values[i].(*tca.Array)
		path, _ := entry.Get("packagePath")
		if s, ok := path.(string); ok && base != "" && filepath.IsLocal(filepath.FromSlash(strings.TrimSuffix(s, "/"))) {
			if b, err := readLimited(filepath.Join(base, filepath.FromSlash(s), "ext_emconf.php"), maxEmconf); err == nil {
				p.Version = emconfValue(b, "version")
				p.Description = emconfValue(b, "title")
			}
			if strings.Contains(s, "sysext/") {
				p.Type = "typo3-cms-framework"
			}
		}
		l.Packages = append(l.Packages, p)
	}
	return l, nil
}

// emconfValue finds 'name' => 'value' in an ext_emconf.php text.
func emconfValue(b []byte, name string) string {
	re := regexp.MustCompile(`['"]` + regexp.QuoteMeta(name) + `['"]\s*=>\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")`)
	m := re.FindSubmatch(b)
	if m == nil {
		return ""
	}
	if len(m[1]) > 0 {
		return strings.ReplaceAll(string(m[1]), `\'`, `'`)
	}
	return string(m[2])
}

func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", filepath.Base(path))
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", filepath.Base(path), limit)
	}
	return os.ReadFile(path)
}
