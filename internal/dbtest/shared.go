package dbtest

import (
	"os"
	"path/filepath"
	"testing"
)

// SharedTYPO3 returns the absolute path of the real TYPO3 reference material
// (shared/typo3), which lies beside the repository checkout. Tests that read
// it fail when it is missing: CI always has it.
func SharedTYPO3(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, "..", "shared", "typo3")
			if _, err := os.Stat(p); err != nil {
				t.Fatalf("TYPO3 reference material not found at %s: %v", p, err)
			}
			return filepath.Clean(p)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
