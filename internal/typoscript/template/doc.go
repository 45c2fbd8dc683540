// Package template resolves the TypoScript of one page the way TYPO3 v13.4
// does: the frontend TypoScript (constants and setup) from the sys_template
// records along the rootline and the site, and the Page TSconfig.
//
// A tour:
//
//   - TemplateSource reads what resolution needs from the site database;
//     NewSiteSource implements it over typo3.Site with TYPO3's restrictions
//     (sys_template rows live and visible, one per page ordered by root
//     DESC, sorting ASC; rootline pages not deleted, hidden ones included).
//   - LoadSites reads config/sites/*/config.yaml (and settings.yaml); sets
//     come from the active extensions' Configuration/Sets/*/config.yaml and
//     are ordered dependencies first, each once.
//   - A Profile stands in for what the extensions' ext_localconf.php files
//     add to TYPO3_CONF_VARS at run time (defaultTypoScript_setup and
//     _constants, content rendering templates, the plugin rendering of
//     configurePlugin). t3agent ships the contributions of the core
//     extensions and bootstrap_package; other active extensions with an
//     ext_localconf.php are named in the answer's Notes.
//   - Resolver.Frontend builds the include trees like SysTemplateTreeBuilder:
//     a site providing TypoScript (sets or its own files) first as a root
//     template; then per row: global TypoScript when the row clears (the
//     first row clears if none does), site settings as constants, extension
//     statics, include_static_file (include_static_file.txt, <type>.typoscript
//     |.ts|.txt, the defaultContentRendering magic) around basedOn, and the
//     row's own constants or setup last. Conditions see the page (page["…"]),
//     the local rootline (tree.level, tree.rootLineIds, tree.rootLineParentIds),
//     the backend layout (tree.pagelayout), site("…"), siteLanguage("…") of
//     the default language, extension.isLoaded, extensionConfiguration with
//     ext_conf_template.txt defaults; request, user, date and application
//     context ones are undecided and taken as false.
//   - Resolver.PageTSconfig collects every active package's page.tsconfig,
//     the sets' and site's page.tsconfig when the site provides TypoScript,
//     then per rootline page tsconfig_includes and TSconfig, root first, with
//     site settings as constants.
//
// Both return a Tree per type: the include tree, the syntax tree with the
// conditions met, and check_typoscript's findings, so the tools on top only
// select and render. The introduction package's page 1 resolves exactly as
// TYPO3 resolves it (constants, setup, include trees, conditions and Page
// TSconfig; see the tests).
//
// What t3agent cannot know is said, not guessed: baseVariants of a site
// (the base is the configured one), the user TSconfig "page." overrides of
// an acting backend user, and the global TypoScript of unknown extensions.
package template
