package code_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/builtin/code"
	"github.com/t3agent/t3agent/internal/builtin/introspect/introspecttest"
	"github.com/t3agent/t3agent/internal/dbtest"
	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

func tools(site *typo3.Site) []tool.Tool { return code.Tools(site, readpolicy.New(site.TCA)) }

func demoFixture(t *testing.T) *introspecttest.Fixture {
	t.Helper()
	return introspecttest.Demo(t, typo3.DialectSQLite, tools)
}

func TestSpecs(t *testing.T) {
	t.Parallel()
	want := map[string]tool.DataClass{"get_last_exception": tool.SecretAdjacent, "read_source": tool.SourceCode, "search_code": tool.SourceCode}
	for _, tl := range code.Tools(nil, nil) {
		s := tl.Spec()
		if err := s.Validate(); err != nil {
			t.Error(err)
		}
		if s.Group != tool.GroupCode || !s.AdminOnly || !s.EnabledByDefault || s.Effect != tool.ReadOnly || s.DataClass != want[s.Name] {
			t.Errorf("%s: %+v", s.Name, s)
		}
		delete(want, s.Name)
	}
	if len(want) != 0 {
		t.Errorf("missing tools %v", want)
	}
}

func TestLastException(t *testing.T) {
	t.Parallel()
	f := demoFixture(t)
	got := f.OK("get_last_exception", nil)
	for _, w := range []string{
		"Error 0 of ", "[CRITICAL] TYPO3.CMS.Frontend.ContentObject.Exception.ProductionExceptionHandler",
		"Exception: UnexpectedValueException",
		"Message: The page teaser has no pages to show",
		"Thrown in: packages/site_demo/Classes/DataProcessing/TeaserPagesProcessor.php:40",
		"#0 packages/site_demo/Classes/DataProcessing/TeaserPagesProcessor.php(22): ",
		"#1 vendor/typo3/cms-frontend/Classes/ContentObject/ContentDataProcessor.php(77)",
		"Source of packages/site_demo/Classes/DataProcessing/TeaserPagesProcessor.php around line 40:",
		">   40 |             throw new \\UnexpectedValueException(",
		"Source of packages/site_demo/Classes/DataProcessing/TeaserPagesProcessor.php around line 22:",
		">   22 |         $uids = $this->pageUids(",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("newest exception lacks %q:\n%s", w, got)
		}
	}
	if strings.Contains(got, "Source of vendor/") {
		t.Errorf("vendor source was expanded:\n%s", got)
	}
	// The mail error carries the SMTP password in its message.
	mail := f.OK("get_last_exception", map[string]any{"search": "transportexception"})
	if !strings.Contains(mail, "Symfony\\Component\\Mailer\\Exception\\TransportException") || !strings.Contains(mail, "smtp://mailer:[REDACTED") {
		t.Errorf("mail error:\n%s", mail)
	}
	f.NoSecrets(t, "the mail error", mail)
	if !strings.Contains(mail, "Thrown in: vendor/symfony/mailer/Transport/Smtp/Stream/SocketStream.php:154") ||
		!strings.Contains(mail, "#0 vendor/symfony/mailer/Transport/Smtp/SmtpTransport.php(279)") || strings.Contains(mail, "/var/www/html") {
		t.Errorf("the mail error has no project frames, its paths should be project-relative:\n%s", mail)
	}
	older := f.OK("get_last_exception", map[string]any{"index": 1})
	if !strings.Contains(older, "Error 1 of ") || strings.Contains(older, "TeaserPagesProcessor.php:40") {
		t.Errorf("index 1:\n%s", older)
	}
	if got := f.OK("get_last_exception", map[string]any{"index": 49}); !strings.Contains(got, "there is no error at index 49") {
		t.Errorf("index 49: %s", got)
	}
	if got := f.OK("get_last_exception", map[string]any{"search": "no such words"}); !strings.Contains(got, `0 errors matching "no such words"`) {
		t.Errorf("search without match: %s", got)
	}
	if got := f.Refused("get_last_exception", map[string]any{"index": -1}); !strings.Contains(got, "index") {
		t.Errorf("bad index: %s", got)
	}
}

// planted adds the path-guard traps to the demo root: a symlink out of
// the root, a symlink to .env, a symlinked folder leading outside, and a
// file outside the root holding a marker.
func planted(t *testing.T, f *introspecttest.Fixture) (marker string) {
	t.Helper()
	outside := t.TempDir()
	marker = "OUTSIDE-THE-ROOT-4711"
	if err := os.WriteFile(filepath.Join(outside, "secret.php"), []byte("<?php // "+marker+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(f.Site.Root, "packages", "site_demo")
	for link, target := range map[string]string{
		"escape.php":      filepath.Join(outside, "secret.php"),
		"env.php":         filepath.Join("..", "..", ".env"),
		"settings.php.md": filepath.Join("..", "..", "config", "system", "settings.php"),
		"Outside":         outside,
	} {
		if err := os.Symlink(target, filepath.Join(pkg, link)); err != nil {
			t.Fatal(err)
		}
	}
	return marker
}

// traversals are the path-guard cases every path argument must refuse.
func traversals() []string {
	return []string{
		"../etc/passwd", "../../../../../../etc/passwd", "/etc/passwd", "packages/../.env", "packages/site_demo/../../.env",
		"%2e%2e/%2e%2e/etc/passwd", "packages%2f..%2f.env", "..%2Fetc", `packages\..\.env`, "./../x", "C:/Windows/win.ini",
		".env", ".git/config", "config/system/settings.php", "config/system/additional.php", "public/typo3conf/LocalConfiguration.php",
		"var/cache/code/core", "var/lock", "auth.json", "packages/site_demo/private.key", "packages/site_demo/cert.pem",
		"packages/site_demo/credentials.yaml",
		"packages/site_demo/escape.php", "packages/site_demo/env.php", "packages/site_demo/settings.php.md",
		"packages/site_demo/Outside/secret.php", "packages/site_demo/Outside",
		"packages/site_demo/x\x00.php",
	}
}

func TestReadSource(t *testing.T) {
	t.Parallel()
	f := demoFixture(t)
	marker := planted(t, f)
	got := f.OK("read_source", map[string]any{"path": "packages/site_demo/Classes/ViewHelpers/PageTitleViewHelper.php", "from_line": 36, "lines": 3})
	want := "packages/site_demo/Classes/ViewHelpers/PageTitleViewHelper.php, lines 36-38 of 40:\n" +
		"    36 |         // Old code path for requests without page information.\n" +
		"    37 |         $page = $GLOBALS['TSFE']->page ?? [];\n"
	if !strings.HasPrefix(got, want) {
		t.Errorf("read_source:\n%s\nwant prefix:\n%s", got, want)
	}
	// Through the composer symlink inside the root: allowed, shown by its real path.
	if got := f.OK("read_source", map[string]any{"path": "vendor/nordlicht/site-demo/composer.json", "lines": 2}); !strings.HasPrefix(got, "packages/site_demo/composer.json, lines 1-2") {
		t.Errorf("read through vendor symlink: %s", got)
	}
	// var/log is readable below var.
	if got := f.OK("read_source", map[string]any{"path": "var/log/typo3_" + demoHash(f) + ".log", "lines": 1}); !strings.Contains(got, "lines 1-1 of") {
		t.Errorf("var/log: %s", got)
	}
	secrets := f.Secrets()
	for _, p := range traversals() {
		r := f.Call("admin", "read_source", map[string]any{"path": p}, tool.ZoneLocal)
		if !r.IsError {
			t.Errorf("read_source %q was read:\n%s", p, r.Content)
			continue
		}
		if r.Content != "File not found or not permitted." && !strings.HasPrefix(r.Content, "path must be relative") {
			t.Errorf("read_source %q: %q, want the neutral sentence or the path rule", p, r.Content)
		}
		for _, s := range append(secrets, marker) {
			if strings.Contains(r.Content, s) {
				t.Errorf("read_source %q leaks %q", p, s)
			}
		}
	}
	if got := f.Refused("read_source", map[string]any{"path": "packages/site_demo"}); !strings.Contains(got, "is a folder") {
		t.Errorf("folder: %s", got)
	}
	if got := f.Refused("read_source", map[string]any{"path": "packages/site_demo/composer.json", "from_line": 9999}); !strings.Contains(got, "past its end") {
		t.Errorf("past the end: %s", got)
	}
	if got := f.Refused("read_source", map[string]any{"path": "packages/site_demo/composer.json", "lines": 201}); got == "" {
		t.Error("lines 201 accepted")
	}
}

func demoHash(f *introspecttest.Fixture) string {
	m, _ := filepath.Glob(filepath.Join(f.Site.Root, "var", "log", "typo3_deprecations_*.log"))
	if len(m) != 1 {
		f.T.Fatalf("deprecation logs: %v", m)
	}
	return strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m[0]), "typo3_deprecations_"), ".log")
}

func TestSearchCode(t *testing.T) {
	t.Parallel()
	f := demoFixture(t)
	marker := planted(t, f)
	got := f.OK("search_code", map[string]any{"pattern": "teaserpagesprocessor"})
	if !strings.Contains(got, "packages/site_demo/Classes/DataProcessing/TeaserPagesProcessor.php:14: final class TeaserPagesProcessor implements DataProcessorInterface") {
		t.Errorf("literal search:\n%s", got)
	}
	got = f.OK("search_code", map[string]any{"pattern": `throw new \\\w+Exception`, "regex": true, "path": "packages/site_demo"})
	if !strings.Contains(got, "TeaserPagesProcessor.php:40: throw new \\UnexpectedValueException(") || !strings.Contains(got, "1 matching lines in packages/site_demo") {
		t.Errorf("regex search:\n%s", got)
	}
	// Lookarounds, backreferences and possessive quantifiers are refused with a sentence.
	for pattern, want := range map[string]string{
		`foo(?=bar)`:  "lookahead",
		`(?<!x)foo`:   "negative lookbehind",
		`(a)\1`:       "backreference",
		`a++`:         "possessive",
		`[unclosed`:   "not a valid RE2 regular expression",
		`(?>atomic)x`: "atomic group",
	} {
		r := f.Call("admin", "search_code", map[string]any{"pattern": pattern, "regex": true}, tool.ZoneLocal)
		if !r.IsError || !strings.Contains(r.Content, want) || strings.Count(r.Content, "\n") > 0 {
			t.Errorf("pattern %q: %q, want one sentence naming %s", pattern, r.Content, want)
		}
	}
	// Nothing denied is searched: the .env values, settings.php (encryptionKey), the planted symlinks.
	for _, s := range append(f.Secrets(), marker, "encryptionKey", "installToolPassword") {
		got := f.OK("search_code", map[string]any{"pattern": s})
		if !strings.HasPrefix(got, "No match in the project") {
			t.Errorf("search for %q found something:\n%s", s, got)
		}
	}
	for _, p := range traversals() {
		r := f.Call("admin", "search_code", map[string]any{"pattern": "a", "path": p}, tool.ZoneLocal)
		if !r.IsError {
			t.Errorf("search_code in %q ran:\n%s", p, r.Content)
		}
	}
	// Credentials in searched files are masked.
	if err := os.WriteFile(filepath.Join(f.Site.Root, "packages", "site_demo", "Configuration", "mail.yaml"),
		[]byte("mail:\n  password: 'Zq8#secretPassw0rd'\n  url: 'smtp://u:Zq8pw1234@host'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got = f.OK("search_code", map[string]any{"pattern": "Zq8"})
	if strings.Contains(got, "secretPassw0rd") || strings.Contains(got, "Zq8pw1234") || !strings.Contains(got, "2 matching lines") {
		t.Errorf("credentials in matches:\n%s", got)
	}
	// max_results caps and says more exist.
	got = f.OK("search_code", map[string]any{"pattern": "<", "max_results": 3})
	if strings.Count(got, "\n") != 3 || !strings.Contains(got, "more exist") {
		t.Errorf("max_results 3:\n%s", got)
	}
}

// TestBootstrapPackage reads and searches the real bootstrap_package
// files of the test material as a project.
func TestBootstrapPackage(t *testing.T) {
	t.Parallel()
	d := introspecttest.Demo(t, typo3.DialectSQLite, func(*typo3.Site) []tool.Tool { return nil })
	site, err := typo3.NewSite(typo3.SiteParams{DB: d.Site.DB, TCA: d.Site.TCA, Root: filepath.Join(dbtest.TYPO3Material(t), "bootstrap_package")})
	if err != nil {
		t.Fatal(err)
	}
	f := introspecttest.Over(t, site, d.Demo, tools)
	got := f.OK("search_code", map[string]any{"pattern": "page.logo.file", "path": "Configuration/TypoScript"})
	if !strings.Contains(got, "Configuration/TypoScript/General/page.typoscript:199: normal = {$page.logo.file}") {
		t.Errorf("search in bootstrap_package:\n%s", got)
	}
	got = f.OK("read_source", map[string]any{"path": "Configuration/TypoScript/setup.typoscript", "lines": 5})
	if !strings.HasPrefix(got, "Configuration/TypoScript/setup.typoscript, lines 1-5 of ") {
		t.Errorf("read in bootstrap_package:\n%s", got)
	}
}
