package template

import (
	"embed"
	"slices"
	"strings"
)

// TYPO3 fills TYPO3_CONF_VARS[FE] defaultTypoScript_* and the content
// rendering registry at run time from every extension's ext_localconf.php.
// t3agent runs no PHP, so it ships what the known extensions contribute
// (core v13.4 and bootstrap_package 15) and lists the other active
// extensions as not evaluated.

//go:embed defaults/*.typoscript
var defaultFiles embed.FS

func defaultSource(name string) string {
	b, err := defaultFiles.ReadFile("defaults/" + name)
	if err != nil {
		return ""
	}
	return string(b)
}

// contribution is what one extension's ext_localconf.php adds.
type contribution struct {
	// setup and constants are addTypoScriptSetup / addTypoScriptConstants
	// strings (embedded files, "" for none).
	setup, constants string
	// onlyWith names an extension that must be active for the setup to be
	// added (bootstrap_package registers form YAML only with EXT:form).
	onlyWith string
	// contentRendering are contentRenderingTemplates entries.
	contentRendering []string
	// plugins are configurePlugin(…, PLUGIN_TYPE_CONTENT_ELEMENT) calls:
	// extension name and plugin name.
	plugins [][2]string
}

// known returns what t3agent knows an extension contributes. Extensions
// known to contribute nothing return an empty contribution, so they are not
// reported as unevaluated.
func known(ext string) (contribution, bool) {
	switch ext {
	case "core", "backend", "fluid", "install", "filemetadata", "impexp", "rte_ckeditor":
		return contribution{}, true
	case "frontend":
		return contribution{setup: "frontend.setup.typoscript"}, true
	case "extbase":
		return contribution{setup: "extbase.setup.typoscript"}, true
	case "seo":
		return contribution{setup: "seo.setup.typoscript"}, true
	case "felogin":
		return contribution{setup: "felogin.setup.typoscript", constants: "felogin.constants.typoscript",
			plugins: [][2]string{{"Felogin", "Login"}}}, true
	case "form":
		return contribution{setup: "form.setup.typoscript", plugins: [][2]string{{"Form", "Formframework"}}}, true
	case "indexed_search":
		return contribution{plugins: [][2]string{{"IndexedSearch", "Pi2"}}}, true
	case "fluid_styled_content":
		return contribution{contentRendering: []string{"fluidstyledcontent/Configuration/TypoScript/"}}, true
	case "bootstrap_package":
		return contribution{setup: "bootstrap_package.setup.typoscript", onlyWith: "form",
			contentRendering: []string{"bootstrappackage/Configuration/TypoScript/",
				"bootstrappackage/Configuration/TypoScript/ContentElement/"}}, true
	}
	return contribution{}, false
}

// coreOrder is the load order of core extensions used by OrderExtensions,
// the order TYPO3's package manager gives them in the reference profiles.
func coreOrder() []string {
	return []string{"core", "backend", "frontend", "extbase", "fluid", "install", "fluid_styled_content",
		"seo", "felogin", "filemetadata", "form", "impexp", "indexed_search", "rte_ckeditor"}
}

// OrderExtensions returns keys in an approximation of TYPO3's package load
// order: known core extensions first in their dependency order, then the
// others as given. Callers with TYPO3's real order (PackageStates.php)
// should pass that instead.
func OrderExtensions(keys []string) []string {
	order := coreOrder()
	var core, rest []string
	for _, k := range keys {
		if slices.Contains(order, k) {
			core = append(core, k)
		} else {
			rest = append(rest, k)
		}
	}
	slices.SortStableFunc(core, func(a, b string) int {
		return slices.Index(order, a) - slices.Index(order, b)
	})
	return append(core, rest...)
}

// Profile is the global TypoScript of an installation: what TYPO3 builds
// from the ext_localconf.php files of its active extensions.
type Profile struct {
	// Extensions are the active extension keys in load order.
	Extensions []string
	// SetupDefault and ConstantsDefault are FE.defaultTypoScript_setup and
	// _constants, prepended where a template clears.
	SetupDefault, ConstantsDefault string
	// ContentRenderingTemplates is FE.contentRenderingTemplates.
	ContentRenderingTemplates []string
	// ContentRenderingSetup is FE.defaultTypoScript_setup.
	// ["defaultContentRendering"] (plugin rendering definitions).
	ContentRenderingSetup string
	// NotEvaluated lists active extensions whose ext_localconf.php is
	// unknown to t3agent: what they add globally is missing.
	NotEvaluated []string
}

// NewProfile composes the profile of the given active extensions (in load
// order).
func NewProfile(extensions []string) *Profile {
	p := &Profile{Extensions: slices.Clone(extensions)}
	active := func(k string) bool { return slices.Contains(extensions, k) }
	var setup, constants []string
	var rendering strings.Builder
	for _, ext := range extensions {
		c, ok := known(ext)
		if !ok {
			p.NotEvaluated = append(p.NotEvaluated, ext)
			continue
		}
		if c.setup != "" && (c.onlyWith == "" || active(c.onlyWith)) {
			setup = append(setup, defaultSource(c.setup))
		}
		if c.constants != "" {
			constants = append(constants, defaultSource(c.constants))
		}
		p.ContentRenderingTemplates = append(p.ContentRenderingTemplates, c.contentRendering...)
		for _, pl := range c.plugins {
			rendering.WriteString(pluginTypoScript(pl[0], pl[1]))
		}
	}
	p.SetupDefault = strings.Join(setup, "\n")
	p.ConstantsDefault = strings.Join(constants, "\n")
	p.ContentRenderingSetup = rendering.String()
	return p
}

// pluginTypoScript is what ExtensionUtility::configurePlugin registers
// through addTypoScript(…, 'defaultContentRendering') for a content
// element plugin: a [GLOBAL] header and a tt_content definition that
// references lib.contentElement.
func pluginTypoScript(extensionName, pluginName string) string {
	sig := strings.ToLower(extensionName + "_" + pluginName)
	return "\n\n[GLOBAL]\n" +
		"#############################################\n" +
		"## TypoScript added by extension \"" + extensionName + "\"\n" +
		"#############################################\n\n" +
		"\n# Setting " + extensionName + " plugin TypoScript\n" +
		"tt_content." + sig + " =< lib.contentElement\n" +
		"tt_content." + sig + " {\n" +
		"    templateName = Generic\n" +
		"    20 = EXTBASEPLUGIN\n" +
		"    20 {\n" +
		"        extensionName = " + extensionName + "\n" +
		"        pluginName = " + pluginName + "\n" +
		"    }\n" +
		"}"
}
