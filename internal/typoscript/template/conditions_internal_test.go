package template

import "testing"

func TestConditionEnvironment(t *testing.T) {
	t.Parallel()
	page := func(uid, pid int64, f map[string]any) Page {
		if f == nil {
			f = map[string]any{}
		}
		f["uid"], f["pid"] = uid, pid
		return Page{UID: uid, PID: pid, Fields: f}
	}
	full := []Page{
		page(1, 0, map[string]any{"backend_layout_next_level": "pagets__default", "title": "Home"}),
		page(5, 1, map[string]any{"backend_layout_next_level": "pagets__product"}),
		page(9, 5, map[string]any{"backend_layout": "", "title": "Pricing", "layout": int64(0)}),
	}
	site := &Site{Identifier: "main", RootPageID: 1, Base: "https://example.org/",
		Config:    map[string]any{"websiteTitle": "Demo"},
		Languages: []map[string]any{{"languageId": 0, "locale": "en_GB.UTF-8", "title": "English", "flag": "gb"}}}
	r := &Resolver{extensions: []string{"core", "seo"}, branch: "13.4", conf: map[string]map[string]string{},
		overrides: map[string]map[string]string{"seo": {"on": "1", "off": "0"}}}
	env := r.env(condContext{page: full[2], full: full, local: full[1:], site: site, frontend: true})
	cases := map[string]struct{ value, decided bool }{
		"tree.level == 1":                                          {true, true},
		"tree.rootLineIds == [5, 9]":                               {true, true},
		"tree.rootLineParentIds == [5]":                            {true, true},
		"5 in tree.rootLineParentIds":                              {true, true},
		"tree.pagelayout == 'pagets__product'":                     {true, true},
		"tree.rootLine[0]['uid'] == 5":                             {true, true},
		"page['title'] == 'Pricing' && page['layout'] === 0":       {true, true},
		"traverse(page, 'title') == 'Pricing'":                     {true, true},
		"traverse(page, 'nope') === null":                          {true, true},
		"site('identifier') == 'main'":                             {true, true},
		"site('rootPageId') === 1":                                 {true, true},
		"site('base') == 'https://example.org/'":                   {true, true},
		"site('configuration')['websiteTitle'] == 'Demo'":          {true, true},
		"siteLanguage('locale') == 'en_GB.UTF-8'":                  {true, true},
		"siteLanguage('flagIdentifier') == 'gb'":                   {true, true},
		"siteLanguage('languageId') == 0":                          {true, true},
		"extension.isLoaded('seo') && !extension.isLoaded('news')": {true, true},
		"extensionConfiguration.isToggleEnabled('seo', 'on')":      {true, true},
		"extensionConfiguration.isToggleEnabled('seo', 'off')":     {false, true},
		"like(page['title'], 'Pri*')":                              {true, true},
		"compatVersion('12.4') && !compatVersion('14.0')":          {true, true},
		"typo3.branch == '13.4'":                                   {true, true},
		"typo3.version == '13.4.1'":                                {false, false},
		"request.getQueryParams()['id'] == 9":                      {false, false},
		"ip('127.0.0.1')":                                          {false, false},
		"date('j') == 1":                                           {false, false},
		"frontend.user.isLoggedIn":                                 {false, false},
		"applicationContext == 'Production'":                       {false, false},
	}
	for expr, want := range cases {
		if v := env.Evaluate(expr); v.Value != want.value || v.Decided != want.decided {
			t.Errorf("%s: got %+v, want %+v", expr, v, want)
		}
	}
	// Page TSconfig has no request, so no site language.
	ts := r.env(condContext{page: full[2], full: full, local: full, site: site})
	if v := ts.Evaluate("siteLanguage('locale') == 'en_GB.UTF-8'"); v.Decided {
		t.Errorf("site language decided for Page TSconfig: %+v", v)
	}
	if v := ts.Evaluate("tree.level == 2"); !v.Value {
		t.Errorf("Page TSconfig tree level: %+v", v)
	}
}

func TestPageLayout(t *testing.T) {
	t.Parallel()
	p := func(own, next string) Page {
		return Page{Fields: map[string]any{"backend_layout": own, "backend_layout_next_level": next}}
	}
	cases := []struct {
		line []Page // deepest first
		want string
	}{
		{[]Page{p("pagets__a", ""), p("", "pagets__b")}, "pagets__a"},
		{[]Page{p("", "pagets__x"), p("", ""), p("", "pagets__b")}, "pagets__b"},
		{[]Page{p("0", ""), p("", "-1"), p("", "pagets__b")}, "none"},
		{[]Page{p("-1", "")}, "none"},
		{[]Page{p("", "")}, "default"},
	}
	for i, c := range cases {
		if got := pageLayout(c.line[0], c.line); got != c.want {
			t.Errorf("case %d: %q, want %q", i, got, c.want)
		}
	}
}
