package structure

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typoscript/template"
)

type resolveURL struct{ env }

func (t *resolveURL) Spec() tool.Spec {
	return spec("resolve_url", tool.GroupStructure,
		"Which TYPO3 page a frontend URL shows: the site (from config/sites), the language (by its base, such as "+
			"/de/), and the page whose slug matches the rest of the path, with the default-language page and its "+
			"translation. `url` is an http(s) URL or a path such as /de/products, which is resolved against the "+
			"main site (the one with the lowest root page). Query parameters are listed as arguments; when the site has route enhancers and part of the "+
			"path is not a page slug, the arguments are reported as unavailable (TYPO3 computes them at runtime).",
		`{"type":"object","properties":{`+
			`"url":{"type":"string","minLength":1,"maxLength":2048,"description":"A frontend URL or path, e.g. https://www.example.com/de/products."}`+
			`},"required":["url"],"additionalProperties":false}`)
}

func (t *resolveURL) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	if call.Actor == nil {
		return denyUser(), nil
	}
	raw, err := stringArg(args, "url")
	if err != nil {
		return tool.Errorf("%v.", err), nil
	}
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err != nil || raw == "" {
		return tool.Errorf("url is not a URL or path."), nil
	}
	pathOnly := u.Scheme == "" && u.Host == ""
	switch {
	case pathOnly && !strings.HasPrefix(u.Path, "/"):
		return tool.Errorf("url must be an http(s) URL or a path starting with /."), nil
	case !pathOnly && u.Scheme != "http" && u.Scheme != "https":
		return tool.Errorf("url must use http or https."), nil
	case !pathOnly && u.Host == "":
		return tool.Errorf("url has no host."), nil
	case u.User != nil:
		return tool.Errorf("url must not contain user information."), nil
	}
	if t.site == nil || t.site.Root == "" {
		return tool.Errorf("No TYPO3 project root is configured, so there is no site configuration."), nil
	}
	sites, err := template.LoadSites(t.site.Root)
	if err != nil {
		return tool.Errorf("The site configuration (config/sites) cannot be read."), nil
	}
	if len(sites) == 0 {
		return tool.Errorf("The installation has no site configuration (config/sites/*/config.yaml)."), nil
	}
	bases := siteBases(sites)
	best := -1
	reqPath := slashed(u.EscapedPath())
	if p, err := url.PathUnescape(u.EscapedPath()); err == nil {
		reqPath = slashed(p)
	}
	for i, b := range bases {
		if !pathOnly && b.host != "" && b.host != strings.ToLower(u.Host) {
			continue
		}
		if !strings.HasPrefix(reqPath, b.path) {
			continue
		}
		// The longest base wins; at equal length a base with a host over
		// one without, and for a path without a host the site of the
		// lower root page (the installation's main site comes first,
		// whatever its folder is called).
		if best < 0 || len(b.path) > len(bases[best].path) ||
			len(b.path) == len(bases[best].path) && bases[best].host == "" && b.host != "" ||
			pathOnly && len(b.path) == len(bases[best].path) && b.site.RootPageID < bases[best].site.RootPageID {
			best = i
		}
	}
	if best < 0 {
		return tool.Errorf("No site of this installation answers %s.", quoteArg(raw)), nil
	}
	b := bases[best]
	rest := strings.Trim(strings.TrimPrefix(reqPath, b.path), "/")
	enhancers := hasRouteEnhancers(b.site)

	var found *slugPage
	var remainder string
	for cand := rest; ; {
		p, err := t.pageBySlug(ctx, b.site.RootPageID, "/"+cand, b.language)
		if err != nil {
			return tool.Result{}, err
		}
		if p != nil {
			found = p
			remainder = strings.TrimPrefix(strings.TrimPrefix(rest, cand), "/")
			break
		}
		if !enhancers || cand == "" {
			break
		}
		// A route enhancer's arguments follow a page's slug; on the root
		// page only a PageType suffix (such as "sitemap.xml") is taken
		// as one, or every unknown path would resolve to the home page.
		i := strings.LastIndexByte(cand, '/')
		if i < 0 {
			if strings.Contains(rest, "/") || !pageTypeSuffix(b.site, rest) {
				break
			}
			cand = ""
		} else {
			cand = cand[:i]
		}
	}
	if found == nil {
		return tool.Errorf("%s", readpolicy.DeniedPage), nil
	}
	if !call.Actor.Admin {
		ok, err := readpolicy.NewRowFilter(t.site, t.policy, call.Actor).PageVisible(ctx, found.defaultUID)
		if err != nil {
			return tool.Result{}, err
		}
		if !ok || !call.Actor.CanAccessLanguage(int(b.language)) {
			return tool.Errorf("%s", readpolicy.DeniedPage), nil
		}
	}

	var out strings.Builder
	fmt.Fprintf(&out, "Site: %s (root page %d, base %s)\n", clean(b.site.Identifier, 64), b.site.RootPageID, clean(baseShown(b.site.Base), 200))
	fmt.Fprintf(&out, "Language: %d %s (base %s)\n", b.language, clean(b.title, 64), clean(b.langBase, 200))
	if b.language == 0 || found.uid == found.defaultUID {
		fmt.Fprintf(&out, "Page: [%d] %s (slug %s)", found.uid, clean(found.title, 120), clean(found.slug, 200))
	} else {
		title, err := t.pageTitle(ctx, found.defaultUID)
		if err != nil {
			return tool.Result{}, err
		}
		fmt.Fprintf(&out, "Page: [%d] %s, translation [%d] %s (slug %s)", found.defaultUID, clean(title, 120), found.uid,
			clean(found.title, 120), clean(found.slug, 200))
	}
	if found.hidden {
		out.WriteString(" [hidden]")
	}
	out.WriteString("\n")
	switch {
	case remainder != "":
		fmt.Fprintf(&out, "Arguments: unavailable (the site has route enhancers; TYPO3 resolves the rest of the path %s at runtime)",
			quoteArg("/"+remainder))
	default:
		argsJSON := "{}"
		if q := u.Query(); len(q) > 0 {
			if js, err := json.Marshal(q); err == nil {
				argsJSON = clean(string(js), 300)
			}
		}
		out.WriteString("Arguments: " + argsJSON)
		if enhancers && len(u.Query()) > 0 {
			out.WriteString(" (query only; route enhancers may map them to other arguments)")
		}
	}
	return tool.Text(out.String()), nil
}

// baseShown is a site base for output, with credentials masked.
func baseShown(base string) string { return urlCredentials.ReplaceAllString(base, "$1:***@") }

// slugPage is the page a slug resolves to.
type slugPage struct {
	uid, defaultUID int64
	title, slug     string
	hidden          bool
}

// pageBySlug finds the live, not deleted page of language lang with slug
// whose default-language page lies below root.
func (t *resolveURL) pageBySlug(ctx context.Context, root int64, slug string, lang int64) (*slugPage, error) {
	db := t.site.DB
	tab := t.site.TCA.Table("pages")
	if tab == nil {
		return nil, nil
	}
	langField, parentField := tab.Ctrl.LanguageField, tab.Ctrl.TransOrigPointerField
	q := func(s string) string { return db.MustQuote(s) }
	a := db.NewArgs()
	cols := q("uid") + `, ` + q("title") + `, ` + q("slug") + `, ` + q("hidden")
	where := q("slug") + ` = ` + a.Add(slug)
	if langField != "" && parentField != "" {
		cols += `, ` + q(parentField)
		where += ` AND ` + q(langField) + ` = ` + a.Add(lang)
	} else {
		cols += `, 0`
		if lang != 0 {
			return nil, nil
		}
	}
	restrict, err := t.site.Restrict(a, "pages", "", typo3.RestrictDeleted|typo3.RestrictLiveWorkspace)
	if err != nil {
		return nil, err
	}
	if restrict != "" {
		where += ` AND ` + restrict
	}
	rows, err := db.SQL.QueryContext(ctx, `SELECT `+cols+` FROM `+q("pages")+` WHERE `+where+` ORDER BY `+q("uid")+` LIMIT 50`, a.Values()...)
	if err != nil {
		return nil, fmt.Errorf("read pages by slug: %w", err)
	}
	var cands []slugPage
	for rows.Next() {
		var p slugPage
		var title, s sql.NullString
		var hidden, parent sql.NullInt64
		if err := rows.Scan(&p.uid, &title, &s, &hidden, &parent); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read pages by slug: %w", err)
		}
		p.title, p.slug, p.hidden = title.String, s.String, hidden.Int64 != 0
		p.defaultUID = p.uid
		if lang != 0 && parent.Int64 > 0 {
			p.defaultUID = parent.Int64
		}
		cands = append(cands, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read pages by slug: %w", err)
	}
	for _, p := range cands {
		line, err := t.site.Rootline(ctx, p.defaultUID)
		if err != nil {
			continue // deleted or broken: not a page of the site
		}
		for _, r := range line {
			if r.UID == root {
				return &p, nil
			}
		}
	}
	return nil, nil
}

func (t *resolveURL) pageTitle(ctx context.Context, uid int64) (string, error) {
	p, err := t.site.Page(ctx, uid)
	if errors.Is(err, typo3.ErrPageNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return p.Title, nil
}
