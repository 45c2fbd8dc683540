package template_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/typo3/extpath"
	"github.com/t3agent/t3agent/internal/typoscript"
	"github.com/t3agent/t3agent/internal/typoscript/template"
)

// The installation's extension map is what production passes as Paths.
var _ typoscript.ExtensionPaths = (*extpath.Map)(nil)

// TestProfileMatchesTYPO3 checks the shipped global TypoScript against what
// TYPO3's ext_localconf.php files build (testdata/typo3/default-typoscript),
// byte for byte, for both reference profiles.
func TestProfileMatchesTYPO3(t *testing.T) {
	t.Parallel()
	_, shared := newSharedPaths(t)
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(shared, "default-typoscript", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	intro := template.NewProfile(introExtensions)
	if intro.SetupDefault != read("introduction.defaultTypoScript_setup.typoscript") {
		t.Error("introduction defaultTypoScript_setup differs from TYPO3's")
	}
	if intro.ConstantsDefault != read("introduction.defaultTypoScript_constants.typoscript") {
		t.Error("introduction defaultTypoScript_constants differs from TYPO3's")
	}
	core := template.NewProfile([]string{"core", "backend", "frontend", "fluid_styled_content"})
	if core.SetupDefault != read("core.defaultTypoScript_setup.typoscript") || core.ConstantsDefault != "" {
		t.Error("core profile differs from TYPO3's")
	}
	if !slices.Equal(intro.ContentRenderingTemplates, []string{"bootstrappackage/Configuration/TypoScript/",
		"bootstrappackage/Configuration/TypoScript/ContentElement/"}) {
		t.Errorf("content rendering templates %v", intro.ContentRenderingTemplates)
	}
	for _, sig := range []string{"tt_content.felogin_login =< lib.contentElement", "tt_content.form_formframework",
		"tt_content.indexedsearch_pi2", "pluginName = Pi2"} {
		if !strings.Contains(intro.ContentRenderingSetup, sig) {
			t.Errorf("plugin rendering lacks %q", sig)
		}
	}
	if strings.Count(intro.ContentRenderingSetup, "[GLOBAL]") != 3 {
		t.Error("each plugin registration starts with [GLOBAL]")
	}
	// bootstrap_package registers its form setup only next to EXT:form.
	noForm := template.NewProfile([]string{"core", "frontend", "bootstrap_package", "news"})
	if strings.Contains(noForm.SetupDefault, "module.tx_form") {
		t.Error("form setup without EXT:form")
	}
	if !slices.Equal(noForm.NotEvaluated, []string{"news"}) {
		t.Errorf("not evaluated: %v", noForm.NotEvaluated)
	}
}

func TestOrderExtensions(t *testing.T) {
	t.Parallel()
	keys := []string{"bootstrap_package", "backend", "seo", "core", "felogin", "extbase", "frontend", "my_site"}
	want := []string{"core", "backend", "frontend", "extbase", "seo", "felogin", "bootstrap_package", "my_site"}
	if got := template.OrderExtensions(keys); !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
