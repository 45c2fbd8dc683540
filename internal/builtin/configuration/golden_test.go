package configuration_test

import (
	"strings"
	"testing"
)

// goldenCall is one representative call and the file its answer is kept in.
type goldenCall struct {
	name string
	tool string
	args map[string]any
}

func runGolden(t *testing.T, f *fixture, calls []goldenCall) {
	t.Helper()
	for _, c := range calls {
		got := f.ok(c.tool, c.args)
		if strings.Contains(got, f.site.Root) {
			t.Errorf("%s shows the installation path:\n%s", c.name, got)
		}
		golden(t, c.name, got)
	}
}

func TestGoldenDemo(t *testing.T) {
	t.Parallel()
	runGolden(t, demoFixture(t), []goldenCall{
		{"demo_typoscript_1", "get_typoscript", args("pageUid", 1)},
		{"demo_typoscript_1_page.10", "get_typoscript", args("pageUid", 1, "path", "page.10")},
		// Below Internal pricing (9): [9 in tree.rootLineIds] of the
		// products template applies.
		{"demo_typoscript_10_page.meta", "get_typoscript", args("pageUid", 10, "path", "page.meta")},
		{"demo_typoscript_21_config", "get_typoscript", args("pageUid", 21, "path", "config")},
		{"demo_constants_6", "get_typoscript", args("pageUid", 6, "type", "constants")},
		{"demo_constants_6_site", "get_typoscript", args("pageUid", 6, "type", "constants", "path", "site")},
		{"demo_tsconfig_6", "get_tsconfig", args("pageUid", 6)},
		{"demo_tsconfig_10_TCEMAIN.permissions", "get_tsconfig", args("pageUid", 10, "path", "TCEMAIN.permissions")},
		{"demo_check_6", "check_typoscript", args("pageUid", 6)},
	})
}

func TestGoldenIntroduction(t *testing.T) {
	t.Parallel()
	runGolden(t, introFixture(t), []goldenCall{
		{"intro_typoscript_1", "get_typoscript", args("pageUid", 1)},
		{"intro_typoscript_1_page.10", "get_typoscript", args("pageUid", 1, "path", "page.10")},
		{"intro_constants_1_page.theme", "get_typoscript", args("pageUid", 1, "type", "constants", "path", "page.theme")},
		// Page 75 lies below the extension template on page 68, whose
		// [tree.level === 2] block applies there.
		{"intro_typoscript_75_lib.dynamicContent", "get_typoscript", args("pageUid", 75, "path", "lib.dynamicContent")},
		{"intro_constants_6_page.theme.navigation", "get_typoscript", args("pageUid", 6, "type", "constants", "path", "page.theme.navigation")},
		{"intro_tsconfig_1", "get_tsconfig", args("pageUid", 1)},
		{"intro_tsconfig_75_TCEFORM.tt_content.layout", "get_tsconfig", args("pageUid", 75, "path", "TCEFORM.tt_content.layout")},
		{"intro_check_1", "check_typoscript", args("pageUid", 1)},
		{"intro_check_75", "check_typoscript", args("pageUid", 75)},
	})
}
