package demo

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// xmlNode is a minimal element tree for well-formedness checks.
type xmlNode struct {
	name     string
	attrs    map[string]string
	children []*xmlNode
}

func (n *xmlNode) find(path ...string) *xmlNode {
	cur := n
	for _, p := range path {
		var next *xmlNode
		for _, c := range cur.children {
			if c.name == p {
				next = c
				break
			}
		}
		if next == nil {
			return nil
		}
		cur = next
	}
	return cur
}

func parseXMLTree(s string) (*xmlNode, error) {
	dec := xml.NewDecoder(strings.NewReader(s))
	var root *xmlNode
	var stack []*xmlNode
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch el := tok.(type) {
		case xml.StartElement:
			n := &xmlNode{name: el.Name.Local, attrs: map[string]string{}}
			for _, a := range el.Attr {
				n.attrs[a.Name.Local] = a.Value
			}
			if len(stack) == 0 {
				if root != nil {
					return nil, errors.New("two root elements")
				}
				root = n
			} else {
				p := stack[len(stack)-1]
				p.children = append(p.children, n)
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
	if root == nil {
		return nil, errors.New("no root element")
	}
	return root, nil
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestProjectFiles checks the installation folder: every file a TYPO3
// reader looks at exists, parses, and refers to things that exist.
func TestProjectFiles(t *testing.T) {
	t.Parallel()
	res := initDemo(t, InitParams{})
	root := res.ProjectRoot
	pkg := filepath.Join(root, "packages", "site_demo")
	for _, rel := range []string{
		"composer.json", "config/sites/main/config.yaml", "config/system/settings.php", "public/index.php",
		"vendor/composer/installed.json",
		"packages/site_demo/composer.json",
		"packages/site_demo/Configuration/TypoScript/constants.typoscript",
		"packages/site_demo/Configuration/TypoScript/setup.typoscript",
		"packages/site_demo/Configuration/TypoScript/Setup/Page.typoscript",
		"packages/site_demo/Configuration/page.tsconfig",
		"packages/site_demo/Configuration/TsConfig/Page/Products.tsconfig",
		"packages/site_demo/Configuration/FlexForms/Teaser.xml",
		"packages/site_demo/Configuration/Sets/SiteDemo/config.yaml",
		"packages/site_demo/Resources/Private/Templates/Page/Default.html",
		"packages/site_demo/Resources/Private/Layouts/Page/Default.html",
		"packages/site_demo/Resources/Private/Partials/Page/Header.html",
		"vendor/nordlicht/site-demo/composer.json", // through the composer symlink
	} {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
			t.Errorf("missing %s: %v", rel, err)
		}
	}

	// Site configuration.
	var site struct {
		RootPageID int    `yaml:"rootPageId"`
		Base       string `yaml:"base"`
		Languages  []struct {
			LanguageID int    `yaml:"languageId"`
			Base       string `yaml:"base"`
			Locale     string `yaml:"locale"`
		} `yaml:"languages"`
	}
	if err := yaml.Unmarshal(readFile(t, filepath.Join(root, "config/sites/main/config.yaml")), &site); err != nil {
		t.Fatalf("site config: %v", err)
	}
	if site.RootPageID != 1 || site.Base == "" || len(site.Languages) != 2 ||
		site.Languages[0].LanguageID != 0 || site.Languages[1].LanguageID != 1 || site.Languages[1].Base != "/de/" {
		t.Errorf("site config: %+v", site)
	}

	// Every YAML, JSON, XML file parses.
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || e.Type()&fs.ModeSymlink != 0 {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		switch filepath.Ext(path) {
		case ".yaml":
			var v any
			if err := yaml.Unmarshal(b, &v); err != nil {
				t.Errorf("%s: %v", rel, err)
			}
		case ".json":
			if !json.Valid(b) {
				t.Errorf("%s is not valid JSON", rel)
			}
		case ".xml", ".xlf", ".svg":
			if _, err := parseXMLTree(string(b)); err != nil {
				t.Errorf("%s: %v", rel, err)
			}
		case ".typoscript", ".tsconfig":
			if err := checkBraces(string(b)); err != nil {
				t.Errorf("%s: %v", rel, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// FlexForm data structures: sheets (or ROOT) with typed fields.
	for _, name := range []string{"Teaser.xml", "DealerMap.xml"} {
		doc, err := parseXMLTree(string(readFile(t, filepath.Join(pkg, "Configuration", "FlexForms", name))))
		if err != nil {
			t.Fatal(err)
		}
		if doc.name != "T3DataStructure" {
			t.Errorf("%s: root %s", name, doc.name)
		}
		roots := []*xmlNode{doc.find("ROOT")}
		if sheets := doc.find("sheets"); sheets != nil {
			roots = roots[:0]
			for _, s := range sheets.children {
				roots = append(roots, s.find("ROOT"))
			}
		}
		for _, r := range roots {
			if r == nil || r.find("el") == nil || len(r.find("el").children) == 0 {
				t.Errorf("%s: a sheet without fields", name)
				continue
			}
			for _, f := range r.find("el").children {
				if f.find("config", "type") == nil && f.find("section") == nil {
					t.Errorf("%s: field %s has no config/type", name, f.name)
				}
			}
		}
	}

	// Composer's installed.json lists the core packages and the site
	// package, whose install path leads to the package.
	var installed struct {
		Packages []struct {
			Name        string `json:"name"`
			Type        string `json:"type"`
			InstallPath string `json:"install-path"`
			Extra       struct {
				TYPO3 struct {
					ExtensionKey string `json:"extension-key"`
				} `json:"typo3/cms"`
			} `json:"extra"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(root, "vendor/composer/installed.json")), &installed); err != nil {
		t.Fatal(err)
	}
	found := map[string]string{}
	for _, p := range installed.Packages {
		found[p.Name] = p.InstallPath
		if p.Name == "nordlicht/site-demo" {
			dir := filepath.Join(root, "vendor", "composer", filepath.FromSlash(p.InstallPath))
			var c struct {
				Extra struct {
					TYPO3 struct {
						ExtensionKey string `json:"extension-key"`
					} `json:"typo3/cms"`
				} `json:"extra"`
			}
			if err := json.Unmarshal(readFile(t, filepath.Join(dir, "composer.json")), &c); err != nil || c.Extra.TYPO3.ExtensionKey != "site_demo" {
				t.Errorf("site package at %s: extension key %q (%v)", dir, c.Extra.TYPO3.ExtensionKey, err)
			}
		}
	}
	for _, name := range []string{"typo3/cms-core", "typo3/cms-backend", "typo3/cms-frontend", "typo3/cms-fluid-styled-content", "typo3/cms-felogin", "nordlicht/site-demo"} {
		if found[name] == "" {
			t.Errorf("installed.json lacks %s or its install-path", name)
		}
	}

	// Fluid: layouts and partials named by templates exist.
	priv := filepath.Join(pkg, "Resources", "Private")
	layoutRe := regexp.MustCompile(`<f:layout name="([^"]+)"`)
	partialRe := regexp.MustCompile(`partial="([^"]+)"`)
	for _, area := range []string{"Page", "ContentElements"} {
		files, _ := filepath.Glob(filepath.Join(priv, "Templates", area, "*.html"))
		layouts, _ := filepath.Glob(filepath.Join(priv, "Layouts", area, "*.html"))
		partials, _ := filepath.Glob(filepath.Join(priv, "Partials", area, "*.html"))
		files = append(append(files, layouts...), partials...)
		if len(files) == 0 {
			t.Errorf("no Fluid files for %s", area)
		}
		for _, f := range files {
			src := string(readFile(t, f))
			for _, m := range layoutRe.FindAllStringSubmatch(src, -1) {
				if _, err := os.Stat(filepath.Join(priv, "Layouts", area, m[1]+".html")); err != nil {
					t.Errorf("%s: layout %s missing", f, m[1])
				}
			}
			for _, m := range partialRe.FindAllStringSubmatch(src, -1) {
				if _, err := os.Stat(filepath.Join(priv, "Partials", area, filepath.FromSlash(m[1])+".html")); err != nil {
					t.Errorf("%s: partial %s missing", f, m[1])
				}
			}
		}
	}

	// Logs: FileWriter lines, an exception with a stack trace, deprecations.
	logs, _ := filepath.Glob(filepath.Join(root, "var", "log", "typo3_*.log"))
	nameRe := regexp.MustCompile(`^typo3_(deprecations_)?[0-9a-f]{10}\.log$`)
	lineRe := regexp.MustCompile(`^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} \+0000 \[(DEBUG|INFO|NOTICE|WARNING|ERROR|CRITICAL|ALERT|EMERGENCY)\] request="[0-9a-f]{13}" component="[A-Za-z0-9.]+": .+$`)
	if len(logs) != 2 {
		t.Fatalf("log files: %v", logs)
	}
	var sawTrace, sawDeprecation bool
	for _, l := range logs {
		if !nameRe.MatchString(filepath.Base(l)) {
			t.Errorf("log file name %s", filepath.Base(l))
		}
		for i, line := range strings.Split(strings.TrimSuffix(string(readFile(t, l)), "\n"), "\n") {
			if !lineRe.MatchString(line) {
				t.Errorf("%s:%d is not a FileWriter line: %s", filepath.Base(l), i+1, line)
			}
			if _, data, ok := strings.Cut(line, "\": "); ok && strings.Contains(data, " - {") {
				var v map[string]any
				if err := json.Unmarshal([]byte(data[strings.Index(data, " - {")+3:]), &v); err != nil {
					t.Errorf("%s:%d: data is not JSON: %v", filepath.Base(l), i+1, err)
				}
				if ex, _ := v["exception"].(string); strings.Contains(ex, "\nStack trace:\n#0 ") {
					sawTrace = true
				}
			}
			sawDeprecation = sawDeprecation || strings.Contains(line, `component="TYPO3.CMS.deprecations"`)
		}
	}
	if !sawTrace || !sawDeprecation {
		t.Errorf("logs: exception with stack trace %v, deprecation %v", sawTrace, sawDeprecation)
	}

	// Credentials: private, one line per user with the password.
	st, err := os.Stat(res.CredentialsFile)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("credentials file mode %v", st.Mode().Perm())
	}
	creds := string(readFile(t, res.CredentialsFile))
	for _, u := range res.Users {
		if !strings.Contains(creds, u.Username+"\t"+u.Password+"\t") {
			t.Errorf("credentials file lacks %s", u.Username)
		}
	}
	settings := string(readFile(t, filepath.Join(root, "config/system/settings.php")))
	if !strings.Contains(settings, "'pdo_sqlite'") || !strings.Contains(settings, filepath.Join(res.Dir, SQLiteFile)) {
		t.Errorf("settings.php does not point at the demo database")
	}
	var m marker
	if err := json.Unmarshal(readFile(t, filepath.Join(res.Dir, MarkerFile)), &m); err != nil || m.Version != Version || m.Pages != DefaultPages {
		t.Errorf("demo.json: %+v (%v)", m, err)
	}
}
