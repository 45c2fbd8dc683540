package configuration

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/t3agent/t3agent/internal/builtin/introspect"
	"github.com/t3agent/t3agent/internal/guardrail/credential"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/extpath"
	"github.com/t3agent/t3agent/internal/typo3/siteconfig"
)

// SiteConfigTools returns get_site_config over site. It is registered
// apart from Tools because it reads the site configuration files, not
// TypoScript, and is classed secretAdjacent (site configurations carry
// API keys and %env()% credentials).
func SiteConfigTools(site *typo3.Site) []tool.Tool { return []tool.Tool{&getSiteConfig{site: site}} }

// Limits of get_site_config.
const (
	siteConfigLines = 200
	siteValueChars  = 120
)

type getSiteConfig struct{ site *typo3.Site }

func (t *getSiteConfig) Spec() tool.Spec {
	return introspect.Spec("get_site_config", tool.GroupConfiguration, tool.SecretAdjacent, true,
		"The TYPO3 site configurations (config/sites/<identifier>/config.yaml). Without identifier: one line per "+
			"site, `- identifier (base B, root page R, N languages)`. With identifier: the resolved base (the first "+
			"baseVariant whose condition holds, conditions decided with TYPO3_CONTEXT from the site's .env or "+
			"t3agent's environment), each language with its resolved base, then the whole configuration as flat "+
			"`a.b.c: value` lines (at most 200, values cut at 120 characters) with imports merged and %env(NAME)% "+
			"replaced from the project's .env (names that cannot be resolved are listed). Credentials (keys such "+
			"as password, apiKey, secret, token, and everything below them) show as [redacted]. Use it to answer "+
			"which domains, languages, error handling or route enhancers a site has.",
		`{"type":"object","properties":{`+
			`"identifier":{"type":"string","maxLength":100,"pattern":"^[A-Za-z0-9_.-]*$","description":"Site identifier (folder name below config/sites)."}`+
			`},"additionalProperties":false}`)
}

func (t *getSiteConfig) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	if res, ok := introspect.Authorize(call); !ok {
		return res, nil
	}
	id, err := introspect.String(args, "identifier")
	if err != nil {
		return tool.Errorf("%s.", err.Error()), nil
	}
	if t.site == nil || t.site.Root == "" {
		return tool.Errorf("The TYPO3 installation folder is not configured for this site, so its site configurations cannot be read."), nil
	}
	root := t.site.Root
	m, _ := extpath.Resolve(root)
	sites, err := siteconfig.Load(siteconfig.Params{Root: root, Extensions: m, Env: siteconfig.EnvLookup(root)})
	if err != nil {
		return tool.Result{}, fmt.Errorf("read site configurations: %w", err)
	}
	if len(sites) == 0 {
		return tool.Text("The installation has no site configuration (config/sites/*/config.yaml)."), nil
	}
	out := introspect.NewOutput(siteConfigLines + 40)
	if id == "" {
		out.Line("%d site configurations:", len(sites))
		for _, s := range sites {
			if s.Err != nil {
				out.Line("- %s (cannot be read: %s)", s.Identifier, introspect.Cut(introspect.Text(s.Err.Error()), 200))
				continue
			}
			out.Line("- %s (base %s, root page %d, %d languages)", s.Identifier, introspect.Cut(introspect.Text(s.Base), siteValueChars), s.RootPageID, len(s.Languages))
		}
		return tool.Text(out.String()), nil
	}
	var s *siteconfig.Site
	var ids []string
	for _, c := range sites {
		ids = append(ids, c.Identifier)
		if c.Identifier == id {
			s = c
		}
	}
	if s == nil {
		return tool.Errorf("No site configuration %q; the sites are: %s.", id, strings.Join(ids, ", ")), nil
	}
	if s.Err != nil {
		return tool.Errorf("The site configuration %s cannot be read: %s.", s.File, introspect.Cut(introspect.Text(s.Err.Error()), 300)), nil
	}
	out.Line("Site %s (%s), root page %d", s.Identifier, s.File, s.RootPageID)
	out.Line("Base: %s (from %s)", introspect.Cut(introspect.Text(s.Base), siteValueChars), s.BaseFrom)
	for _, l := range s.Languages {
		state := ""
		if !l.Enabled {
			state = ", disabled"
		}
		out.Line("Language %d %s (%s): %s%s", l.ID, l.Title, l.Locale, introspect.Cut(introspect.Text(l.Base), siteValueChars), state)
	}
	if len(s.Unresolved) > 0 {
		out.Line("Unresolved %%env()%% variables (not in the site's .env or t3agent's environment): %s", strings.Join(s.Unresolved, ", "))
	}
	for _, n := range s.Notes {
		out.Line("Note: %s", introspect.Cut(n, 300))
	}
	out.Line("Configuration:")
	var flat []string
	flatten("", s.Config, false, &flat)
	for _, l := range flat {
		if !out.Line("%s", l) {
			break
		}
	}
	return tool.Text(out.String()), nil
}

// flatten writes v as "a.b: value" lines in key order; hidden marks a
// subtree below a credential name.
func flatten(prefix string, v any, hidden bool, out *[]string) {
	if len(*out) > siteConfigLines+1 {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			flatten(join(prefix, k), x[k], hidden || subtreeHidden(k, x[k]), out)
		}
		if len(x) == 0 {
			*out = append(*out, prefix+": {}")
		}
	case []any:
		for i, c := range x {
			flatten(join(prefix, strconv.Itoa(i)), c, hidden, out)
		}
		if len(x) == 0 {
			*out = append(*out, prefix+": []")
		}
	default:
		s := scalar(x)
		key := prefix[strings.LastIndexByte(prefix, '.')+1:]
		switch {
		case hidden && !credential.Inert(s):
			s = introspect.Redacted
		default:
			s = introspect.Value(key, s)
		}
		*out = append(*out, prefix+": "+introspect.Cut(s, siteValueChars))
	}
}

// subtreeHidden: a Strong credential name hides everything below it.
func subtreeHidden(key string, v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return credential.Name(key) == credential.Strong
	}
	return false
}

func join(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

func scalar(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v)
}
