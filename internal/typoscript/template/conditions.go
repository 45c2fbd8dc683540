package template

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/t3agent/t3agent/internal/typoscript"
)

// condContext is what a page's conditions may look at.
type condContext struct {
	page  Page
	full  []Page // root first
	local []Page // root first: from the local root (root template or site) down
	site  *Site
	// frontend adds the default site language; Page TSconfig has none.
	frontend bool
}

const (
	needRequest = "needs the live request"
	needUser    = "needs a logged-in user"
	needContext = "needs the application context of the running TYPO3"
	needDate    = "needs the current date and time"
)

// env builds the condition variables and functions of TYPO3 v13's
// TypoScript condition providers, with request-bound parts Unknown.
func (r *Resolver) env(cc condContext) *typoscript.ExprEnv {
	rows := func(pages []Page) []any {
		out := make([]any, len(pages))
		for i, p := range pages {
			out[i] = pageMap(p)
		}
		return out
	}
	var ids, parents []any
	for i, p := range cc.local {
		ids = append(ids, p.UID)
		if i > 0 {
			parents = append(parents, p.PID)
		}
	}
	deepestFirst := slices.Clone(cc.full)
	slices.Reverse(deepestFirst)
	tree := &typoscript.Object{Props: map[string]any{
		"level":             int64(max(len(cc.local)-1, 0)),
		"rootLine":          rows(cc.local),
		"fullRootLine":      rows(cc.full),
		"rootLineIds":       ids,
		"rootLineParentIds": parents,
		"pagelayout":        pageLayout(cc.page, deepestFirst),
	}}
	version := r.version
	var ver any = unknown("needs the exact TYPO3 version")
	if version != "" {
		ver = version
	}
	vars := map[string]any{
		"tree": tree,
		"page": pageMap(cc.page),
		"typo3": &typoscript.Object{Props: map[string]any{
			"version": ver, "branch": r.branch, "devIpMask": unknown("needs the installation's devIPmask"),
		}},
		"extension": &typoscript.Object{Methods: map[string]func([]any) any{
			"isLoaded": func(a []any) any { return len(a) > 0 && slices.Contains(r.extensions, argString(a, 0)) },
		}},
		"extensionConfiguration": &typoscript.Object{Methods: map[string]func([]any) any{
			"isToggleEnabled": func(a []any) any {
				v, ok := r.extConf(argString(a, 0), argString(a, 1))
				if !ok {
					return false
				}
				return v != "" && v != "0"
			},
			"get": func(a []any) any {
				v, ok := r.extConf(argString(a, 0), argString(a, 1))
				if !ok {
					return nil
				}
				return v
			},
		}},
		"request":            unknown(needRequest),
		"frontend":           unknown(needUser),
		"backend":            unknown(needUser),
		"workspace":          unknown(needRequest),
		"applicationContext": unknown(needContext),
	}
	funcs := map[string]typoscript.Func{
		"ip":       func([]any) any { return unknown(needRequest) },
		"date":     func([]any) any { return unknown(needDate) },
		"feature":  func([]any) any { return unknown("needs the installation's feature toggles") },
		"getTSFE":  func([]any) any { return unknown(needRequest) },
		"like":     func(a []any) any { return like(argString(a, 0), argString(a, 1)) },
		"traverse": func(a []any) any { return traverse(a) },
		"compatVersion": func(a []any) any {
			return versionInt(r.branch) >= versionInt(argString(a, 0))
		},
		"site": func(a []any) any { return siteProperty(cc.site, argString(a, 0)) },
		"siteLanguage": func(a []any) any {
			if !cc.frontend {
				return unknown("the site language belongs to a frontend request")
			}
			if cc.site == nil {
				return nil
			}
			return languageProperty(cc.site.DefaultLanguage(), argString(a, 0))
		},
	}
	return &typoscript.ExprEnv{Vars: vars, Funcs: funcs, Limits: r.limits}
}

// unknown makes an Unknown condition value.
func unknown(reason string) typoscript.Unknown { return typoscript.Unknown{Reason: reason} }

func argString(a []any, i int) string {
	if i >= len(a) {
		return ""
	}
	switch v := a[i].(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case nil:
		return ""
	}
	return fmt.Sprint(a[i])
}

func pageMap(p Page) map[string]any {
	m := make(map[string]any, len(p.Fields))
	for k, v := range p.Fields {
		m[k] = v
	}
	return m
}

// pageLayout is PageLayoutResolver::getLayoutForPage: the page's own
// backend_layout, else the nearest backend_layout_next_level above it;
// "-1" means none; nothing set is "default". rootline is deepest first.
func pageLayout(page Page, rootline []Page) string {
	sel := page.Str("backend_layout")
	if sel == "-1" {
		return "none"
	}
	if sel == "" || sel == "0" {
		for i := 1; i < len(rootline); i++ {
			sel = rootline[i].Str("backend_layout_next_level")
			if sel == "-1" {
				sel = "none"
				break
			}
			if sel != "" && sel != "0" {
				break
			}
		}
	}
	if sel == "" || sel == "0" {
		sel = "default"
	}
	return sel
}

// siteProperty is the site("…") condition function: the Site getter of
// that name, null when there is none.
func siteProperty(s *Site, prop string) any {
	if s == nil {
		return nil
	}
	switch strings.TrimSpace(prop) {
	case "identifier":
		return s.Identifier
	case "rootPageId":
		return s.RootPageID
	case "base":
		return s.Base
	case "configuration":
		return plain(s.Config)
	case "languages":
		out := make([]any, len(s.Languages))
		for i, l := range s.Languages {
			out[i] = plain(l)
		}
		return out
	case "settings":
		m := map[string]any{}
		for k, v := range s.Settings {
			m[k] = v
		}
		return m
	}
	return nil
}

// languageProperty is siteLanguage("…") for the default language.
func languageProperty(l map[string]any, prop string) any {
	prop = strings.TrimSpace(prop)
	key := map[string]string{"flagIdentifier": "flag", "twoLetterIsoCode": "iso-639-1"}[prop]
	if key == "" {
		key = prop
	}
	if v, ok := l[key]; ok {
		return plain(v)
	}
	switch prop {
	case "languageId":
		return int64(0)
	case "typo3Language":
		return "default"
	case "navigationTitle":
		return plain(l["title"])
	}
	return nil
}

// plain converts YAML values to condition values (ints as int64).
func plain(v any) any {
	switch x := v.(type) {
	case int:
		return int64(x)
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, c := range x {
			m[k] = plain(c)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = plain(c)
		}
		return out
	}
	return v
}

// like is StringUtility::searchStringWildcard: "*" and "?" wildcards, or a
// regular expression when the pattern starts with "/".
func like(subject, pattern string) any {
	if strings.HasPrefix(pattern, "/") {
		re, err := regexp.Compile(strings.Trim(pattern, "/"))
		if err != nil {
			return unknown("regular expression not supported")
		}
		return re.MatchString(subject)
	}
	var b strings.Builder
	b.WriteString("^")
	for _, c := range pattern {
		switch c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return false
	}
	return re.MatchString(subject)
}

// traverse is ArrayUtility::getValueByPath with "/" separators; null when
// the path does not exist.
func traverse(a []any) any {
	if len(a) < 2 {
		return nil
	}
	cur := a[0]
	for seg := range strings.SplitSeq(argString(a, 1), "/") {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[seg]
			if !ok {
				return nil
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		case *typoscript.Object:
			v, ok := c.Props[seg]
			if !ok {
				return nil
			}
			cur = v
		default:
			return nil
		}
	}
	return cur
}

// versionInt is VersionNumberUtility::convertVersionNumberToInteger.
func versionInt(v string) int {
	parts := strings.SplitN(v, ".", 3)
	n := 0
	for i := 0; i < 3; i++ {
		x := 0
		if i < len(parts) {
			x, _ = strconv.Atoi(strings.TrimLeft(parts[i], "v"))
		}
		n = n*1000 + x
	}
	return n
}
