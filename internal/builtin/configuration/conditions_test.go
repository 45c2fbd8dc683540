package configuration_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestConditionsTakenAsFalse plants conditions that need a live request
// (with and without [ELSE]) next to ones t3agent decides, and a getEnv.
func TestConditionsTakenAsFalse(t *testing.T) {
	t.Parallel()
	f := demoFixture(t)
	first := f.lineCount("sys_template", "config", 1) + 1
	f.appendField("sys_template", "config", 1, `[request.getQueryParams()['preview'] == 1]
    lib.planted.mode = preview
[ELSE]
    lib.planted.mode = live
[END]
[ip("10.0.0.*")]
    lib.planted.office = 1
[END]
[tree.level == 0]
    lib.planted.home = 1
[END]
lib.planted.env = fallback
lib.planted.env := getEnv(T3AGENT_PLANTED)`)
	f.appendField("pages", "TSconfig", 1, `[siteLanguage("locale") == "de_DE.UTF-8"]
mod.planted.german = 1
[END]`)

	got := f.ok("get_typoscript", args("pageUid", 1, "path", "lib.planted"))
	for _, want := range []string{
		"lib.planted\n  mode = live\n  home = 1\n  env = fallback\n",
		fmt.Sprintf("- [request.getQueryParams()['preview'] == 1] at [sys_template:1] Nordlicht Pumps:%d, setup: needs the live request; its [ELSE] branch applied\n", first),
		fmt.Sprintf("- [ip(\"10.0.0.*\")] at [sys_template:1] Nordlicht Pumps:%d, setup: needs the live request\n", first+5),
		"- [applicationContext matches \"/^Development/\"] at EXT:site_demo/Configuration/TypoScript/Setup/Config.typoscript:18, setup: needs the application context of the running TYPO3",
		fmt.Sprintf("getEnv was not evaluated (the TYPO3 server's environment is not visible to t3agent; the value before it is kept):\n- [sys_template:1] Nordlicht Pumps:%d", first+12),
	} {
		if !strings.Contains(got, want) {
			t.Errorf("get_typoscript lacks %q:\n%s", want, got)
		}
	}
	// Decided conditions are not listed, whatever their verdict.
	for _, absent := range []string{"office", "tree.level"} {
		if strings.Contains(got, absent) {
			t.Errorf("get_typoscript shows %q:\n%s", absent, got)
		}
	}
	// Constants have no such conditions in the demo.
	if c := f.ok("get_typoscript", args("pageUid", 1, "type", "constants")); strings.Contains(c, "Conditions taken as false") {
		t.Errorf("constants list conditions:\n%s", c)
	}

	ts := f.ok("get_tsconfig", args("pageUid", 6, "path", "mod"))
	if !strings.Contains(ts, `- [siteLanguage("locale") == "de_DE.UTF-8"] at pagesTsConfig-page-1-tsConfig:`) ||
		!strings.Contains(ts, "the site language belongs to a frontend request") || strings.Contains(ts, "german") {
		t.Errorf("get_tsconfig conditions:\n%s", ts)
	}
}
