package typoscript_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/dbtest"
)

// sharedPaths resolves EXT:bootstrap_package to the shared copy of
// bootstrap_package and EXT:<core ext> to testdata/typo3/core-extensions:
// a real resolver over real folders.
type sharedPaths struct{ dirs map[string]string }

func (p sharedPaths) Path(ref string) (string, error) {
	rest, ok := strings.CutPrefix(ref, "EXT:")
	if !ok {
		return "", fmt.Errorf("%q is not an EXT: reference", ref)
	}
	key, rel, _ := strings.Cut(rest, "/")
	dir, ok := p.dirs[key]
	if !ok {
		return "", fmt.Errorf("extension %q is not installed", key)
	}
	return filepath.Join(dir, filepath.FromSlash(rel)), nil
}

func newSharedPaths(t testing.TB) (sharedPaths, string) {
	t.Helper()
	shared := dbtest.TYPO3Material(t)
	p := sharedPaths{dirs: map[string]string{"bootstrap_package": filepath.Join(shared, "bootstrap_package")}}
	ents, err := os.ReadDir(filepath.Join(shared, "core-extensions"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		p.dirs[e.Name()] = filepath.Join(shared, "core-extensions", e.Name())
	}
	return p, shared
}
