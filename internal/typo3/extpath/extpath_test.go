package extpath_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/demo/demotest"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/extpath"
)

// write creates a file (and its folders) below dir.
func write(t *testing.T, dir, rel, content string) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestValidKey(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]bool{
		"core": true, "bootstrap_package": true, "site_demo": true, "t3agent": true, "seo": true,
		"": false, "a": false, "Core": false, "1abc": false, "_abc": false, "abc_": false,
		"my-ext": false, "ext.key": false, "a/b": false, "..": false, "ab c": false,
		strings.Repeat("a", 60): true, strings.Repeat("a", 61): false, "über": false,
	} {
		if got := extpath.ValidKey(key); got != want {
			t.Errorf("ValidKey(%q) = %v, want %v", key, got, want)
		}
	}
}

// TestSplitTraversal is the traversal matrix: every reference that could
// leave an extension, or is not one, is refused with ErrInvalidReference.
func TestSplitTraversal(t *testing.T) {
	t.Parallel()
	bad := []string{
		"", "site_demo/x", "ext:site_demo/x", "FILE:EXT:site_demo/x", "/etc/passwd", "EXT:",
		"EXT:/etc/passwd", "EXT:../etc/passwd", "EXT:..", "EXT:site_demo/..", "EXT:site_demo/../x",
		"EXT:site_demo/a/../../b", "EXT:site_demo/a/..", "EXT:site_demo//etc/passwd",
		"EXT:site_demo/a\\..\\..\\b", "EXT:site_demo/a\x00b", "EXT:Site_Demo/x", "EXT:1site/x",
		"EXT:site-demo/x", "EXT:site_/x", "EXT:site demo/x", "EXT:site_demo/../../../../etc/passwd",
	}
	for _, ref := range bad {
		if _, _, err := extpath.Split(ref); !errors.Is(err, extpath.ErrInvalidReference) {
			t.Errorf("Split(%q) error = %v, want ErrInvalidReference", ref, err)
		}
	}
	good := map[string][2]string{
		"EXT:site_demo":  {"site_demo", ""},
		"EXT:site_demo/": {"site_demo", ""},
		"EXT:site_demo/Resources/Private/Templates/":   {"site_demo", "Resources/Private/Templates/"},
		"EXT:bootstrap_package/Configuration/a..b.xml": {"bootstrap_package", "Configuration/a..b.xml"},
	}
	for ref, want := range good {
		key, rel, err := extpath.Split(ref)
		if err != nil || key != want[0] || rel != want[1] {
			t.Errorf("Split(%q) = %q, %q, %v; want %q, %q", ref, key, rel, err, want[0], want[1])
		}
	}
}

// installation builds a composer-mode project exercising every source:
// installed.json with relative, absolute, symlinked and derived-key
// packages, a library, packages/*, typo3conf/ext and typo3/sysext.
func installation(t *testing.T) (root, outside string) {
	t.Helper()
	root = t.TempDir()
	outside = t.TempDir()
	write(t, root, "composer.json", `{"name":"acme/site","config":{"vendor-dir":"libs"},"extra":{"typo3/cms":{"web-dir":"web"}}}`)
	write(t, root, "libs/acme/shop/ext_emconf.php", "<?php")
	write(t, outside, "abs_ext/Resources/Private/Templates/Show.html", "<p>outside</p>")
	write(t, root, "packages/site_pkg/composer.json", `{"name":"acme/site-pkg","type":"typo3-cms-extension","extra":{"typo3/cms":{"extension-key":"site_pkg"}}}`)
	write(t, root, "packages/site_pkg/Resources/Private/Templates/Page.html", "page")
	if err := os.MkdirAll(filepath.Join(root, "libs", "acme"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "..", "packages", "site_pkg"), filepath.Join(root, "libs", "acme", "site-pkg")); err != nil {
		t.Fatal(err)
	}
	write(t, root, "libs/typo3/cms-fluid-styled-content/Resources/Private/Templates/Text.html", "text")
	write(t, root, "libs/composer/installed.json", `{"packages":[
		{"name":"acme/shop","type":"typo3-cms-extension","extra":{"typo3/cms":{"extension-key":"shop"}},"install-path":"../acme/shop"},
		{"name":"acme/site-pkg","type":"typo3-cms-extension","extra":{"typo3/cms":{"extension-key":"site_pkg"}},"install-path":"../acme/site-pkg"},
		{"name":"acme/abs","type":"typo3-cms-extension","extra":{"typo3/cms":{"extension-key":"abs_ext"}},"install-path":"`+filepath.ToSlash(filepath.Join(outside, "abs_ext"))+`"},
		{"name":"typo3/cms-fluid-styled-content","type":"typo3-cms-framework","install-path":"../typo3/cms-fluid-styled-content"},
		{"name":"acme/broken","type":"typo3-cms-extension","extra":{"typo3/cms":{"extension-key":"Bad-Key"}},"install-path":"../acme/broken"},
		{"name":"doctrine/dbal","type":"library","install-path":"../doctrine/dbal"}
	]}`)
	// Classic-mode folders: shop there must lose to the composer package.
	write(t, root, "web/typo3conf/ext/shop/ext_emconf.php", "<?php // shadowed")
	write(t, root, "web/typo3conf/ext/legacy_ext/ext_emconf.php", "<?php")
	write(t, root, "typo3/sysext/core/ext_emconf.php", "<?php")
	write(t, root, "web/typo3conf/ext/not-a-key/ext_emconf.php", "<?php")
	return root, outside
}

func TestResolveSources(t *testing.T) {
	t.Parallel()
	root, outside := installation(t)
	m, err := extpath.Resolve(root)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		dir string
		src extpath.Source
	}{
		"shop":                 {filepath.Join(root, "libs", "acme", "shop"), extpath.SourceComposer},
		"site_pkg":             {filepath.Join(root, "libs", "acme", "site-pkg"), extpath.SourceComposer},
		"abs_ext":              {filepath.Join(outside, "abs_ext"), extpath.SourceComposer},
		"fluid_styled_content": {filepath.Join(root, "libs", "typo3", "cms-fluid-styled-content"), extpath.SourceComposer},
		"legacy_ext":           {filepath.Join(root, "web", "typo3conf", "ext", "legacy_ext"), extpath.SourceTypo3conf},
		"core":                 {filepath.Join(root, "typo3", "sysext", "core"), extpath.SourceSysext},
	}
	if got := strings.Join(m.Keys(), ","); got != "abs_ext,core,fluid_styled_content,legacy_ext,shop,site_pkg" {
		t.Errorf("keys = %s", got)
	}
	for key, w := range want {
		e, ok := m.Lookup(key)
		if !ok || e.Dir != w.dir || e.Source != w.src {
			t.Errorf("Lookup(%s) = %+v, %v; want dir %s source %s", key, e, ok, w.dir, w.src)
		}
	}
	// Through the symlinked composer path.
	b, err := m.ReadFile("EXT:site_pkg/Resources/Private/Templates/Page.html", 100)
	if err != nil || string(b) != "page" {
		t.Errorf("ReadFile through the vendor symlink = %q, %v", b, err)
	}
	p, err := m.Path("EXT:fluid_styled_content/Resources/Private/Templates/Text.html")
	if err != nil || p != filepath.Join(root, "libs", "typo3", "cms-fluid-styled-content", "Resources", "Private", "Templates", "Text.html") {
		t.Errorf("Path = %s, %v", p, err)
	}
	if _, err := m.Path("EXT:unknown_ext/x"); !errors.Is(err, extpath.ErrUnknownExtension) {
		t.Errorf("unknown extension: %v", err)
	}
	if _, err := m.Path("EXT:shop/../../etc/passwd"); !errors.Is(err, extpath.ErrInvalidReference) {
		t.Errorf("traversal through Path: %v", err)
	}
}

// TestPackagesFallback: without vendor/, packages/* still resolve.
func TestPackagesFallback(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write(t, root, "packages/my_site/composer.json", `{"name":"acme/my-site","type":"typo3-cms-extension"}`)
	write(t, root, "packages/broken/composer.json", `{not json`)
	write(t, root, "packages/lib/composer.json", `{"name":"acme/lib","type":"library"}`)
	m, err := extpath.Resolve(root)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(m.Keys(), ","); got != "my_site" {
		t.Errorf("keys = %q, want my_site (derived from acme/my-site)", got)
	}
	if e, _ := m.Lookup("my_site"); e.Source != extpath.SourcePackages {
		t.Errorf("source = %s", e.Source)
	}
}

func TestComposer1List(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write(t, root, "vendor/composer/installed.json", `[{"name":"acme/news","type":"typo3-cms-extension","extra":{"typo3/cms":{"extension-key":"news"}},"install-path":"../acme/news"}]`)
	m, err := extpath.Resolve(root)
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := m.Lookup("news"); !ok || e.Dir != filepath.Join(root, "vendor", "acme", "news") {
		t.Errorf("news = %+v, %v", e, ok)
	}
}

func TestResolveErrors(t *testing.T) {
	t.Parallel()
	if _, err := extpath.Resolve(""); err == nil {
		t.Error("empty root accepted")
	}
	if _, err := extpath.Resolve(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing root: %v", err)
	}
	file := write(t, t.TempDir(), "f", "x")
	if _, err := extpath.Resolve(file); err == nil {
		t.Error("a file accepted as root")
	}
	broken := t.TempDir()
	write(t, broken, "vendor/composer/installed.json", `{"packages": 42}`)
	if _, err := extpath.Resolve(broken); err == nil || !strings.Contains(err.Error(), "installed.json") {
		t.Errorf("malformed installed.json: %v", err)
	}
	badComposer := t.TempDir()
	write(t, badComposer, "composer.json", `{`)
	if _, err := extpath.Resolve(badComposer); err == nil {
		t.Error("malformed composer.json accepted")
	}
}

// TestSymlinkEscape: file access never follows a symlink out of the
// extension, while Path (lexical) still answers.
func TestSymlinkEscape(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	secret := write(t, t.TempDir(), "secret.txt", "top secret")
	write(t, root, "typo3conf/ext/shop/Resources/Private/Templates/Ok.html", "ok")
	link := filepath.Join(root, "typo3conf", "ext", "shop", "Resources", "Private", "Templates", "Evil.html")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(root, "typo3conf", "ext", "shop", "Resources", "Private", "Templates", "Alias.html")
	if err := os.Symlink("Ok.html", inside); err != nil {
		t.Fatal(err)
	}
	m, err := extpath.Resolve(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Stat("EXT:shop/Resources/Private/Templates/Evil.html"); err == nil {
		t.Error("Stat followed a symlink out of the extension")
	}
	if b, err := m.ReadFile("EXT:shop/Resources/Private/Templates/Evil.html", 1000); err == nil || strings.Contains(string(b), "secret") {
		t.Errorf("ReadFile followed a symlink out of the extension: %q, %v", b, err)
	}
	if b, err := m.ReadFile("EXT:shop/Resources/Private/Templates/Alias.html", 1000); err != nil || string(b) != "ok" {
		t.Errorf("symlink inside the extension: %q, %v", b, err)
	}
	if _, err := m.ReadFile("EXT:shop/Resources/Private/Templates/Ok.html", 1); !errors.Is(err, extpath.ErrTooLarge) {
		t.Errorf("size limit: %v", err)
	}
	if _, err := m.ReadFile("EXT:shop/Resources/Private/Templates", 1000); err == nil {
		t.Error("ReadFile of a directory succeeded")
	}
	if info, err := m.Stat("EXT:shop"); err != nil || !info.IsDir() {
		t.Errorf("Stat of the extension folder: %v, %v", info, err)
	}
}

// TestDemoInstallation resolves the demo's real installation folder: the
// site package through Composer's vendor symlink, the core packages that
// are listed but not shipped.
func TestDemoInstallation(t *testing.T) {
	t.Parallel()
	s := demotest.New(t, typo3.DialectSQLite)
	m, err := extpath.Resolve(s.Root)
	if err != nil {
		t.Fatal(err)
	}
	e, ok := m.Lookup("site_demo")
	if !ok || e.Package != "nordlicht/site-demo" || e.Dir != filepath.Join(s.Root, "vendor", "nordlicht", "site-demo") {
		t.Fatalf("site_demo = %+v, %v", e, ok)
	}
	b, err := m.ReadFile("EXT:site_demo/Configuration/FlexForms/Teaser.xml", 1<<20)
	if err != nil || !strings.Contains(string(b), "<T3DataStructure>") {
		t.Errorf("Teaser.xml: %v", err)
	}
	for _, key := range []string{"core", "backend", "frontend", "felogin", "fluid_styled_content", "extbase", "fluid", "install"} {
		if _, ok := m.Lookup(key); !ok {
			t.Errorf("core extension %s missing", key)
		}
	}
	if _, err := m.Stat("EXT:felogin/Configuration/FlexForms/Login.xml"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("felogin is listed but not shipped; Stat = %v", err)
	}
}
