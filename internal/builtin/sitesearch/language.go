package sitesearch

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3/siteconfig"
)

func (v *view) siteByID(id string) *siteconfig.Site {
	for _, s := range v.sites {
		if s.Identifier == id {
			return s
		}
	}
	return nil
}

func (v *view) siteIDs() []string {
	var out []string
	for _, s := range v.sites {
		out = append(out, s.Identifier)
	}
	return out
}

// languages resolves the language argument against the enabled languages
// of the site siteID (every site when ""): a language id, or a code
// matched against each language's locale ("de" matches de_DE.UTF-8) and
// title. Absent, it is every enabled language.
func (v *view) languages(arg any, siteID string) ([]int, error) {
	set := map[int]bool{}
	var known []string
	var want *int64
	code := ""
	switch a := arg.(type) {
	case nil:
	case json.Number:
		n, err := strconv.ParseInt(string(a), 10, 64)
		if err != nil {
			return nil, tool.ArgError("Argument language must be a language id or code.")
		}
		want = &n
	case float64:
		n := int64(a)
		if float64(n) != a {
			return nil, tool.ArgError("Argument language must be a language id or code.")
		}
		want = &n
	case int:
		n := int64(a)
		want = &n
	case string:
		s := strings.TrimSpace(a)
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			want = &n
		} else {
			code = strings.ToLower(strings.ReplaceAll(s, "-", "_"))
		}
	default:
		return nil, tool.ArgError("Argument language must be a language id or code.")
	}
	for _, s := range v.sites {
		if siteID != "" && s.Identifier != siteID {
			continue
		}
		for _, l := range s.Languages {
			if !l.Enabled {
				continue
			}
			locale := strings.ToLower(strings.ReplaceAll(l.Locale, "-", "_"))
			known = append(known, fmt.Sprintf("%d (%s)", l.ID, l.Locale))
			switch {
			case want != nil && l.ID == *want,
				want == nil && code == "",
				code != "" && (locale == code || strings.HasPrefix(locale, code+"_") || strings.HasPrefix(locale, code+".") ||
					strings.EqualFold(l.Title, code)):
				set[int(l.ID)] = true
			}
		}
	}
	if len(set) == 0 {
		sort.Strings(known)
		return nil, tool.ArgError(fmt.Sprintf("The site has no enabled language %v; it has %s.", clipArg(fmt.Sprint(arg)), strings.Join(dedupe(known), ", ")))
	}
	out := make([]int, 0, len(set))
	for l := range set {
		out = append(out, l)
	}
	sort.Ints(out)
	return out, nil
}

func dedupe(s []string) []string {
	var out []string
	for i, x := range s {
		if i == 0 || s[i-1] != x {
			out = append(out, x)
		}
	}
	return out
}
