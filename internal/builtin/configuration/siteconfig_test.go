package configuration_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/builtin/configuration"
	"github.com/t3agent/t3agent/internal/builtin/introspect/introspecttest"
	"github.com/t3agent/t3agent/internal/dbtest"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

func siteConfigTools(s *typo3.Site) []tool.Tool { return configuration.SiteConfigTools(s) }

func TestSiteConfigSpec(t *testing.T) {
	t.Parallel()
	s := configuration.SiteConfigTools(nil)[0].Spec()
	if err := s.Validate(); err != nil || s.Name != "get_site_config" || s.Group != tool.GroupConfiguration ||
		s.DataClass != tool.SecretAdjacent || !s.AdminOnly || !s.EnabledByDefault || s.Effect != tool.ReadOnly {
		t.Errorf("spec %+v (%v)", s, err)
	}
}

func TestSiteConfigDemo(t *testing.T) {
	t.Parallel()
	f := introspecttest.Demo(t, typo3.DialectSQLite, siteConfigTools)
	got := f.OK("get_site_config", nil)
	introspecttest.Has(t, "list", got, "2 site configurations:",
		"- campaign (base http://127.0.0.1:8080/seasonal-offer/, root page 12, 2 languages)",
		"- main (base http://127.0.0.1:8080/, root page 1, 2 languages)")
	got = f.OK("get_site_config", map[string]any{"identifier": "campaign"})
	introspecttest.Has(t, "campaign", got,
		"Site campaign (config/sites/campaign/config.yaml), root page 12",
		`Base: http://127.0.0.1:8080/seasonal-offer/ (from baseVariants[0] (applicationContext matches "#^Development#"))`,
		"Language 0 English (en_GB.UTF-8): http://127.0.0.1:8080/seasonal-offer/",
		"Language 1 Deutsch (de_DE.UTF-8): http://127.0.0.1:8080/seasonal-offer/de/",
		"base: https://season.nordlicht-pumps.example/",        // %env(CAMPAIGN_BASE)% from .env
		"errorHandling.0.errorContentSource: t3://page?uid=12", // from the EXT: import
		"settings.dealerMap.apiKey: [redacted]",                // from the relative import, %env()% resolved, then hidden
		"settings.dealerMap.defaultZoom: 7",
		"baseVariants.1.condition: applicationContext == \"Production/Staging\"")
	if strings.Contains(got, "imports") || strings.Contains(got, "%env(") {
		t.Errorf("imports or placeholders left:\n%s", got)
	}
	for _, s := range f.Secrets() {
		if strings.Contains(got, s) {
			t.Errorf("leaks %q", s)
		}
	}
	main := f.OK("get_site_config", map[string]any{"identifier": "main"})
	introspecttest.Has(t, "main", main, "Base: http://127.0.0.1:8080/ (from base)", "Language 1 Deutsch (de_DE.UTF-8): http://127.0.0.1:8080/de/",
		"routeEnhancers.PageTypeSuffix.map.sitemap.xml: 1533906435")
	if got := f.Refused("get_site_config", map[string]any{"identifier": "nope"}); got != "No site configuration \"nope\"; the sites are: campaign, main." {
		t.Errorf("unknown site: %s", got)
	}
	if got := f.Refused("get_site_config", map[string]any{"identifier": "../main"}); got == "" {
		t.Error("traversal accepted")
	}

	// Production: the main site's variant applies; an unresolved
	// variable is listed; a sensitive key hides its subtree.
	if err := os.WriteFile(filepath.Join(f.Site.Root, ".env"), []byte("TYPO3_CONTEXT=Production\nDEALER_MAP_API_KEY=AIzaSyTestKey0123456789abcdefghijklmno\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.Site.Root, "config", "sites", "campaign", "dealer-map.yaml"),
		[]byte("settings:\n  credentials:\n    user: dealer\n    pass: 'Pw9x!plain'\n  mail: 'smtp://u:Pw9xUrl@h/'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got = f.OK("get_site_config", map[string]any{"identifier": "main"})
	introspecttest.Has(t, "production", got, `Base: https://www.nordlicht-pumps.example/ (from baseVariants[0] (applicationContext == "Production"))`)
	got = f.OK("get_site_config", map[string]any{"identifier": "campaign"})
	introspecttest.Has(t, "campaign production", got, "Unresolved %env()% variables", "CAMPAIGN_BASE", "base: %env(CAMPAIGN_BASE)%",
		"settings.credentials.user: [redacted]", "settings.credentials.pass: [redacted]", "settings.mail: smtp://u:[REDACTED")
	if strings.Contains(got, "Pw9x") || strings.Contains(got, "dealer\n") {
		t.Errorf("credentials subtree leaks:\n%s", got)
	}
}

// TestSiteConfigIntroduction reads the introduction package's real site
// configuration.
func TestSiteConfigIntroduction(t *testing.T) {
	t.Parallel()
	d := introspecttest.Demo(t, typo3.DialectSQLite, func(*typo3.Site) []tool.Tool { return nil })
	root := t.TempDir()
	b, err := os.ReadFile(filepath.Join(dbtest.TYPO3Material(t), "introduction", "Initialisation", "Site", "introduction", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "config", "sites", "introduction")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	site, err := typo3.NewSite(typo3.SiteParams{DB: d.Site.DB, TCA: d.Site.TCA, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	f := introspecttest.Over(t, site, d.Demo, siteConfigTools)
	introspecttest.Has(t, "introduction list", f.OK("get_site_config", nil), "- introduction (base /, root page 1, 3 languages)")
	got := f.OK("get_site_config", map[string]any{"identifier": "introduction"})
	introspecttest.Has(t, "introduction", got, "Base: / (from base)", "Language 1 ", ": /de/", "Language 2 ", ": /da/", "languages.1.fallbacks: ")
}
