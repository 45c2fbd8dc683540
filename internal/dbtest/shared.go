package dbtest

import (
	"os"
	"path/filepath"
	"testing"
)

// TYPO3Material returns the absolute path of the real TYPO3 material the
// tests run against (testdata/typo3 at the module root: core TCA, schema,
// password vectors, bootstrap_package, the introduction package, TYPO3's own
// TypoScript output). It is part of the repository; see its README for origin
// and licence.
func TYPO3Material(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, "testdata", "typo3")
			if _, err := os.Stat(p); err != nil {
				t.Fatalf("TYPO3 test material not found at %s: %v", p, err)
			}
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
