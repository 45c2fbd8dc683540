package projectpath_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/t3agent/t3agent/internal/typo3/projectpath"
)

func TestResolve(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	outside := t.TempDir()
	for _, f := range []string{"packages/p/A.php", ".env", "config/system/settings.php", "var/log/typo3_x.log", "var/cache/c.php"} {
		p := filepath.Join(root, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "o.php"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"packages/p/out.php": filepath.Join(outside, "o.php"), "packages/p/env.php": "../../.env", "packages/p/in.php": "A.php"} {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(link))); err != nil {
			t.Fatal(err)
		}
	}
	g, err := projectpath.New(root)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]error{
		"packages/p/A.php": nil, "./packages/p/A.php": nil, "packages/p/in.php": nil, "var/log/typo3_x.log": nil, "packages": nil,
		"../x": projectpath.ErrInvalid, "/etc/passwd": projectpath.ErrInvalid, "packages/../.env": projectpath.ErrInvalid,
		"%2e%2e/x": projectpath.ErrInvalid, `a\b`: projectpath.ErrInvalid, "a//b": projectpath.ErrInvalid,
		".env": projectpath.ErrDenied, "config/system/settings.php": projectpath.ErrDenied, "var/cache/c.php": projectpath.ErrDenied,
		"packages/p/out.php": projectpath.ErrOutside, "packages/p/env.php": projectpath.ErrDenied,
		"packages/p/none.php": projectpath.ErrMissing, "x.PEM": projectpath.ErrDenied, "Credentials.txt": projectpath.ErrDenied,
	} {
		_, _, err := g.Resolve(path)
		if !errors.Is(err, want) && !(want == nil && err == nil) {
			t.Errorf("Resolve(%q) = %v, want %v", path, err, want)
		}
	}
	if p := projectpath.ServerPrefix(root, "/srv/www/site/packages/p/A.php"); p != "/srv/www/site/" {
		t.Errorf("ServerPrefix = %q", p)
	}
}
