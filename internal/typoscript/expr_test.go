package typoscript_test

import (
	"testing"

	"github.com/t3agent/t3agent/internal/typoscript"
)

func testEnv() *typoscript.ExprEnv {
	return &typoscript.ExprEnv{
		Vars: map[string]any{
			"tree": &typoscript.Object{Props: map[string]any{
				"level":       int64(2),
				"rootLineIds": []any{int64(1), int64(5), int64(9)},
				"pagelayout":  "pagets__product",
			}},
			"page":    map[string]any{"uid": int64(9), "title": "Pricing", "layout": int64(0), "nav_title": ""},
			"request": typoscript.Unknown{Reason: "needs the live request"},
			"extension": &typoscript.Object{Methods: map[string]func([]any) any{
				"isLoaded": func(a []any) any { return len(a) == 1 && a[0] == "seo" },
			}},
		},
		Funcs: map[string]typoscript.Func{
			"site": func(a []any) any {
				if len(a) == 1 && a[0] == "identifier" {
					return "main"
				}
				return nil
			},
		},
	}
}

func TestEvaluate(t *testing.T) {
	t.Parallel()
	type want struct{ value, decided bool }
	T, F, U := want{true, true}, want{false, true}, want{false, false}
	cases := map[string]want{
		"tree.level == 2":                                   T,
		"tree.level === 2":                                  T,
		"tree.level === '2'":                                F,
		"tree.level == '2'":                                 T,
		"tree.level != 2":                                   F,
		"tree.level >= 1 && tree.level < 3":                 T,
		"tree.level in [1, 2]":                              T,
		"tree.level not in [1, 2]":                          F,
		"9 in tree.rootLineIds":                             T,
		"'9' in tree.rootLineIds":                           F, // in is strict (Symfony 7)
		"4 in tree.rootLineIds":                             F,
		"page['uid'] == 9 and page[\"title\"] == 'Pricing'": T,
		"page['nav_title'] == ''":                           T,
		"page['layout'] == 0 or false":                      T,
		"!extension.isLoaded('seo')":                        F,
		"not extension.isLoaded('form')":                    T,
		"extension.isLoaded('seo') == 1":                    T,
		"site('identifier') == 'main'":                      T,
		"site('nope') === null":                             T,
		"tree.pagelayout matches '/^pagets__/'":             T,
		"tree.pagelayout starts with 'pagets'":              T,
		"'a' ~ 'b' == 'ab'":                                 T,
		"1 + 2 * 3 == 7":                                    T,
		"2 ** 3 == 8":                                       T,
		"(1 < 2) ? 'x' : 'y'":                               T,
		"[1, 2] == [1, 2]":                                  T,
		"'abc' contains 'b'":                                T,
		"'10' == '1e1'":                                     T,
		"null == false":                                     T,
		"1 == 1.0":                                          T,
		"request.getQueryParams()['x'] == 1":                U,
		"request.getQueryParams()['x'] == 1 && 1 == 2":      F,
		"1 == 1 || request.x":                               T,
		"request.x || 1 == 2":                               U,
		"unknownFunction()":                                 U,
		"undefinedVariable == 1":                            F, // TYPO3 rejects it: false
		"tree.nope == 1":                                    F,
		"1 ==":                                              U, // not understood
		"'unterminated":                                     U,
		"tree.level === 2 and ":                             U,
	}
	env := testEnv()
	for expr, w := range cases {
		v := env.Evaluate(expr)
		if v.Value != w.value || v.Decided != w.decided {
			t.Errorf("%s: got %+v, want value %v decided %v", expr, v, w.value, w.decided)
		}
		if !v.Decided && v.Reason == "" {
			t.Errorf("%s: undecided without a reason", expr)
		}
	}
}

func TestEvaluateLimits(t *testing.T) {
	t.Parallel()
	env := testEnv()
	env.Limits = typoscript.Limits{MaxExprBytes: 64, MaxDepth: 16}
	long := "1 == 1" + string(make([]byte, 100))
	if v := env.Evaluate(long); v.Decided {
		t.Errorf("over-long expression decided: %+v", v)
	}
	deep := ""
	for range 40 {
		deep += "("
	}
	deep += "1"
	for range 40 {
		deep += ")"
	}
	env.Limits.MaxExprBytes = 1000
	if v := env.Evaluate(deep); v.Decided || v.Reason == "" {
		t.Errorf("deeply nested expression decided: %+v", v)
	}
	env.Limits.MaxDepth = 128
	if v := env.Evaluate(deep); !v.Decided || !v.Value {
		t.Errorf("nesting within the limit: %+v", v)
	}
}
