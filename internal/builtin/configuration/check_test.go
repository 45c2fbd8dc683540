package configuration_test

import (
	"fmt"
	"strings"
	"testing"
)

// The broken lines carry distinctive strings that must never be echoed.
const (
	brokenSetupMarker     = "PLANTED_BROKEN_SETUP_4711"
	brokenConstantsMarker = "PLANTED_BROKEN_CONSTANT_0815"
	brokenTSconfigMarker  = "PLANTED_BROKEN_TSCONFIG_2342"
)

func TestCheckTypoScript(t *testing.T) {
	t.Parallel()
	f := demoFixture(t)
	clean := f.ok("check_typoscript", args("pageUid", 6))
	if !strings.HasSuffix(clean, "\nNo findings: the constants and setup include trees parse cleanly.") {
		t.Errorf("clean demo:\n%s", clean)
	}

	setup := f.lineCount("sys_template", "config", 1) + 1
	f.appendField("sys_template", "config", 1, "lib.broken = TEXT\n"+
		brokenSetupMarker+" has no operator\n"+
		"lib.broken.value = fine\n"+
		"}")
	constants := f.lineCount("sys_template", "constants", 1) + 1
	f.appendField("sys_template", "constants", 1, "planted.block {\n"+
		"    "+brokenConstantsMarker+" ~ oops")
	tsconfig := f.lineCount("pages", "TSconfig", 1) + 1
	f.appendField("pages", "TSconfig", 1, brokenTSconfigMarker+" ~ oops")

	// Page 6 inherits the root template, so it inherits its errors.
	for _, uid := range []int{1, 6} {
		got := f.ok("check_typoscript", args("pageUid", uid))
		for _, want := range []string{
			"\n4 findings:\n",
			fmt.Sprintf("\n[constants] [sys_template:1] Nordlicht Pumps, line %d: line.invalid (", constants+1),
			fmt.Sprintf("\n[constants] [sys_template:1] Nordlicht Pumps, line %d: brace.missing", constants+1),
			fmt.Sprintf("\n[setup] [sys_template:1] Nordlicht Pumps, line %d: line.invalid (unexpected character after the object path)", setup+1),
			fmt.Sprintf("\n[setup] [sys_template:1] Nordlicht Pumps, line %d: brace.excess", setup+3),
		} {
			if !strings.Contains(got, want) {
				t.Errorf("page %d lacks %q:\n%s", uid, want, got)
			}
		}
		noEcho(t, "check_typoscript", got)
	}
	// The reading tools point to check_typoscript and list TSconfig's
	// own findings, without the lines either.
	ts := f.ok("get_typoscript", args("pageUid", 1, "path", "lib.broken"))
	if !strings.Contains(ts, "\nThe TypoScript of this page has 4 syntax findings; check_typoscript lists them.") ||
		!strings.Contains(ts, "lib.broken = TEXT\n  value = fine") {
		t.Errorf("get_typoscript on broken TypoScript:\n%s", ts)
	}
	noEcho(t, "get_typoscript", ts)
	noEcho(t, "get_typoscript constants", f.ok("get_typoscript", args("pageUid", 1, "type", "constants")))
	tc := f.ok("get_tsconfig", args("pageUid", 6))
	if !strings.Contains(tc, fmt.Sprintf("\n- pagesTsConfig-page-1-tsConfig, line %d: line.invalid (", tsconfig)) {
		t.Errorf("get_tsconfig findings:\n%s", tc)
	}
	noEcho(t, "get_tsconfig", tc)
}

// noEcho fails when an answer repeats any part of a broken line.
func noEcho(t *testing.T, what, out string) {
	t.Helper()
	for _, s := range []string{brokenSetupMarker, brokenConstantsMarker, brokenTSconfigMarker, "oops", "has no operator"} {
		if strings.Contains(out, s) {
			t.Errorf("%s echoes %q:\n%s", what, s, out)
		}
	}
}
