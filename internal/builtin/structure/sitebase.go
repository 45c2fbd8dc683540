package structure

import (
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"

	"github.com/t3agent/t3agent/internal/typoscript/template"
)

// This file is the minimum of site configuration resolve_url needs: every
// base a site answers on (its base and its baseVariants' bases, with
// %env()% placeholders from the process environment) joined with each
// enabled language's base, and whether the site has route enhancers.
// get_site_config owns the full reader (imports, redaction).

// siteBase is one (site, language) entry point.
type siteBase struct {
	site     *template.Site
	language int64
	title    string
	langBase string
	// host is "" for a base without one ("/"), which matches any host.
	host string
	// path has a leading and a trailing slash.
	path string
}

var envPlaceholder = regexp.MustCompile(`%env\(([A-Za-z_][A-Za-z0-9_]*)\)%`)

// resolveEnv replaces %env(NAME)% with the environment's value; ok is
// false when a variable is unset.
func resolveEnv(s string) (string, bool) {
	ok := true
	out := envPlaceholder.ReplaceAllStringFunc(s, func(m string) string {
		v, set := os.LookupEnv(envPlaceholder.FindStringSubmatch(m)[1])
		if !set {
			ok = false
		}
		return v
	})
	return out, ok
}

// siteBases lists every entry point of the sites, in site order, then the
// site's bases in the order base, baseVariants, then the languages in
// file order.
func siteBases(sites []*template.Site) []siteBase {
	var out []siteBase
	for _, s := range sites {
		bases := []string{s.Base}
		if vs, ok := s.Config["baseVariants"].([]any); ok {
			for _, v := range vs {
				if m, ok := v.(map[string]any); ok {
					if b, ok := m["base"].(string); ok {
						bases = append(bases, b)
					}
				}
			}
		}
		for _, raw := range bases {
			b, ok := resolveEnv(raw)
			if !ok || b == "" {
				continue
			}
			for _, l := range s.Languages {
				if en, ok := l["enabled"].(bool); ok && !en {
					continue
				}
				lb, _ := l["base"].(string)
				lb, ok := resolveEnv(lb)
				if !ok {
					continue
				}
				host, p, ok := joinBase(b, lb)
				if !ok {
					continue
				}
				title, _ := l["title"].(string)
				id := int64(0)
				fmt.Sscan(fmt.Sprint(l["languageId"]), &id)
				out = append(out, siteBase{site: s, language: id, title: title, langBase: lb, host: host, path: p})
			}
		}
	}
	return out
}

// joinBase combines a site base and a language base as TYPO3 does: an
// absolute language base stands alone, a relative one is appended to the
// site base's path.
func joinBase(site, lang string) (host, path string, ok bool) {
	su, err := parseBase(site, true)
	if err != nil {
		return "", "", false
	}
	lu, err := parseBase(lang, false)
	if err != nil {
		return "", "", false
	}
	if lu.Host != "" {
		return strings.ToLower(lu.Host), slashed(lu.Path), true
	}
	return strings.ToLower(su.Host), slashed(strings.TrimSuffix(slashed(su.Path), "/") + slashed(lu.Path)), true
}

// parseBase reads a base: a URL with a scheme, "//host/path", or a path.
// With bareHost (site bases), "www.example.com/" is a host: a first
// segment with a dot; a language base "de/" stays a path.
func parseBase(s string, bareHost bool) (*url.URL, error) {
	s = strings.TrimSpace(s)
	first, _, _ := strings.Cut(s, "/")
	if bareHost && s != "" && !strings.HasPrefix(s, "/") && !strings.Contains(s, "://") && strings.Contains(first, ".") {
		s = "//" + s
	}
	return url.Parse(s)
}

func slashed(p string) string {
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	if !strings.HasSuffix(p, "/") {
		p += "/"
	}
	return p
}

// hasRouteEnhancers reports whether the site configures any.
func hasRouteEnhancers(s *template.Site) bool {
	m, ok := s.Config["routeEnhancers"].(map[string]any)
	return ok && len(m) > 0
}

// pageTypeSuffix reports whether segment is a suffix one of the site's
// PageType enhancers maps (a key of its map, or its default suffix at the
// end of the segment).
func pageTypeSuffix(s *template.Site, segment string) bool {
	m, _ := s.Config["routeEnhancers"].(map[string]any)
	for _, e := range m {
		en, _ := e.(map[string]any)
		if en["type"] != "PageType" {
			continue
		}
		if mp, ok := en["map"].(map[string]any); ok {
			if _, ok := mp[segment]; ok {
				return true
			}
		}
		if def, _ := en["default"].(string); def != "" && strings.HasSuffix(segment, def) {
			return true
		}
	}
	return false
}
