package template

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/t3agent/t3agent/internal/typoscript"
)

// PageTSconfig resolves the Page TSconfig of a page like TYPO3's
// TsConfigTreeBuilder::getPagesTsConfigTree and PageTsConfigFactory:
// every active package's Configuration/page.tsconfig in load order; for a
// site providing TypoScript its sets' page.tsconfig and its own (and the
// rootline starts at that site); then per rootline page, root first, its
// tsconfig_includes and its TSconfig field. Site settings are the
// constants; conditions see the page, its rootline and its site. User
// TSconfig "page." overrides are not applied (there is no acting backend
// user here).
func (r *Resolver) PageTSconfig(ctx context.Context, pageUID int64) (*TSconfig, error) {
	full, err := r.src.Rootline(ctx, pageUID)
	if err != nil {
		return nil, err
	}
	if len(full) == 0 {
		return nil, ErrPageNotFound
	}
	site := siteForRootline(r.sites, full)
	rootline := full
	sets, notes, err := r.siteSets(site)
	if err != nil {
		return nil, err
	}
	b := r.builder(typoscript.TypeTSconfig)
	root := &typoscript.Include{Kind: typoscript.IncludeRoot, Name: "ROOT"}
	for _, ext := range r.extensions {
		for _, name := range []string{"page.tsconfig", "Page.tsconfig"} {
			ref := "EXT:" + ext + "/Configuration/" + name
			if !b.Exists(ref) {
				continue
			}
			if src, err := b.ReadFile(ref); err == nil && src != "" && src != "0" {
				inc := &typoscript.Include{Kind: typoscript.IncludeTsConfig, Name: "pagesTsConfig-package-" + ext, Path: ref}
				b.Parse(inc, src)
				root.Add(inc)
			}
			break
		}
	}
	if site != nil && site.IsTypoScriptRoot() {
		for i, p := range rootline {
			if p.UID == site.RootPageID {
				rootline = rootline[i:]
				break
			}
		}
		for _, set := range sets {
			ref := set.ref("page.tsconfig")
			if !b.Exists(ref) {
				continue
			}
			if src, err := b.ReadFile(ref); err == nil && src != "" {
				inc := &typoscript.Include{Kind: typoscript.IncludeTsConfig,
					Name: "pageTsConfig-set-" + strings.ReplaceAll(set.Name, "/", "-"), Path: ref}
				b.Parse(inc, src)
				root.Add(inc)
			}
		}
		own := filepath.Join(site.Dir, "page.tsconfig")
		src := ""
		if site.HasPageTS {
			src, _ = b.ReadFile(own)
		}
		inc := &typoscript.Include{Kind: typoscript.IncludeTsConfig, Name: "pageTsConfig-site-" + site.Identifier, Path: own}
		b.Parse(inc, src)
		root.Add(inc)
	}
	for _, p := range rootline {
		if p.UID == 0 {
			continue
		}
		uid := strconv.FormatInt(p.UID, 10)
		n := 0
		for ref := range strings.SplitSeq(p.Str("tsconfig_includes"), ",") {
			if ref = strings.TrimSpace(ref); ref == "" {
				continue
			}
			key := n
			n++
			if src := r.includeContent(b, ref); src != "" {
				inc := &typoscript.Include{Kind: typoscript.IncludeTsConfig,
					Name: "pagesTsConfig-page-" + uid + "-includes-" + strconv.Itoa(key)}
				b.Parse(inc, src)
				root.Add(inc)
			}
		}
		if ts := p.Str("TSconfig"); ts != "" && ts != "0" {
			inc := &typoscript.Include{Kind: typoscript.IncludeTsConfig, Name: "pagesTsConfig-page-" + uid + "-tsConfig"}
			b.Parse(inc, ts)
			root.Add(inc)
		}
	}
	settings := map[string]string{}
	if site != nil {
		settings = siteSettings(site, sets)
	}
	env := r.env(condContext{page: full[len(full)-1], full: full, local: full, site: site})
	t := built{root: root, b: b}.finish(typoscript.ASTParams{Eval: env, Constants: settings, Limits: r.limits})
	return &TSconfig{PageUID: full[len(full)-1].UID, Rootline: full, Site: site, Tree: t,
		Notes: append(r.notes(), notes...)}, nil
}

// includeContent reads a pages.tsconfig_includes entry: only EXT: files
// of active extensions, inside the extension (getContentOfTsconfigFile).
func (r *Resolver) includeContent(b *typoscript.Builder, ref string) string {
	rest, ok := strings.CutPrefix(ref, "EXT:")
	if !ok {
		return ""
	}
	key, file, _ := strings.Cut(rest, "/")
	if key == "" || file == "" || !r.isLoaded(key) {
		return ""
	}
	src, err := b.ReadFile(ref)
	if err != nil {
		return ""
	}
	return src
}

func (r *Resolver) isLoaded(key string) bool {
	for _, e := range r.extensions {
		if e == key {
			return true
		}
	}
	return false
}
