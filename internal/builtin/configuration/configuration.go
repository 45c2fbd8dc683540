// Package configuration holds the builtin TypoScript tools of the
// configuration group: get_typoscript, get_tsconfig and check_typoscript.
//
// They answer from t3agent's own TypoScript engine (package typoscript and
// its resolver, typoscript/template) over the site database and the
// installation's files; no PHP runs. All three are read-only, admin-only
// (SPEC §4 rule 4) and classed internalConfiguration. The gate refuses
// non-admins before a call starts; each tool refuses them again itself, so
// a registration that lost its AdminOnly flag still leaks nothing.
//
// What the answers guarantee:
//
//   - Output caps: without a path only the top-level keys; with a path at
//     most maxLines lines, the cut marked. Single values are cut as well.
//   - Redaction: a credential is shown as [redacted], at any depth and
//     whatever the requested path. What is a credential is decided by
//     package credential, the rule secret redaction shares: the key's name
//     (or a name above it, as in credentials.user) names one — password,
//     secret, apiKey, privateKey, authToken, … — and the value is one, so
//     flags (showForgotPassword = 0) and a split token (token = pagets__)
//     stay readable. user:pass@ in URLs becomes :***@ in every value; and
//     the value of a redacted constant is scrubbed wherever it was
//     substituted into setup or a condition, because substitution would
//     otherwise carry it past the key-based rule.
//   - Honesty: conditions that need a live request (or anything else
//     t3agent cannot know) are listed as taken as false, getEnv is named as
//     not evaluated where it occurs, and the resolver's notes (extensions
//     whose global TypoScript is unknown, missing sets) are passed on.
//   - check_typoscript names include, line and kind, never the line's text.
//
// The resolver is built per call: the extension map and the site
// configuration are read fresh, so an extension or site change is seen at
// the next call. The one state the calls share is the parsed-file cache
// (typoscript.FileCache), which stats every file a call uses and reads
// again what changed on disk, so it changes no answer.
package configuration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/extpath"
	"github.com/t3agent/t3agent/internal/typoscript"
	"github.com/t3agent/t3agent/internal/typoscript/template"
)

// Tools returns the configuration tools over site. policy is accepted for
// the builtin groups' common signature; these tools read no records, and
// admins pass every table check anyway.
func Tools(site *typo3.Site, policy *readpolicy.Policy) []tool.Tool {
	e := env{site: site, files: typoscript.NewFileCache(typoscript.FileCacheParams{})}
	return []tool.Tool{&getTypoScript{e}, &getTSconfig{e}, &checkTypoScript{e}}
}

// env is what every tool of the package shares.
type env struct {
	site  *typo3.Site
	files *typoscript.FileCache
}

// pageUIDSchema is the pageUid property every tool takes.
const pageUIDSchema = `"pageUid":{"type":"integer","minimum":0,"maximum":2147483647,` +
	`"description":"uid of the page. A translated page resolves as its default-language page."}`

// pathSchema is the optional object path of the two reading tools.
const pathSchema = `"path":{"type":"string","minLength":1,"maxLength":256,"pattern":"^\\S+$",` +
	`"description":"Dotted object path of the subtree to show, e.g. page.10; write a literal dot inside a key as \\."}`

// spec fills the fields the tools share.
func spec(name, description, schema string) tool.Spec {
	return tool.Spec{
		Name:             name,
		Description:      description,
		InputSchema:      json.RawMessage(schema),
		Group:            tool.GroupConfiguration,
		Effect:           tool.ReadOnly,
		DataClass:        tool.InternalConfiguration,
		AdminOnly:        true,
		EnabledByDefault: true,
	}
}

// authorize is the tool's own admin check, behind the gate's: no user
// gets DeniedUser, a non-admin the neutral page denial.
func authorize(call tool.Call) (tool.Result, bool) {
	switch {
	case call.Actor == nil:
		return tool.Errorf("%s", readpolicy.DeniedUser), false
	case !call.Actor.Admin:
		return deniedPage(), false
	}
	return tool.Result{}, true
}

func deniedPage() tool.Result { return tool.Errorf("%s", readpolicy.DeniedPage) }

// pageArg reads pageUid, which the schema requires.
func pageArg(args map[string]any) (int64, bool) {
	uid, ok, err := intArg(args, "pageUid")
	return uid, ok && err == nil && uid >= 0
}

func badPage() tool.Result { return tool.Errorf("pageUid must be a page uid (0 or more).") }

// intArg reads a whole number; the gate decodes numbers as json.Number.
func intArg(args map[string]any, name string) (int64, bool, error) {
	v, ok := args[name]
	if !ok || v == nil {
		return 0, false, nil
	}
	bad := fmt.Errorf("%s must be a whole number", name)
	switch n := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			return i, true, nil
		}
		f, err := n.Float64()
		if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return 0, false, bad
		}
		return int64(f), true, nil
	case float64:
		if n != math.Trunc(n) || math.Abs(n) > 1<<53 {
			return 0, false, bad
		}
		return int64(n), true, nil
	case int:
		return int64(n), true, nil
	case int64:
		return n, true, nil
	}
	return 0, false, bad
}

// stringArg reads an optional string argument.
func stringArg(args map[string]any, name string) (string, bool) {
	switch v := args[name].(type) {
	case nil:
		return "", true
	case string:
		return v, true
	}
	return "", false
}

// errNoRoot says the installation folder is unknown; without it no file
// of an extension can be read.
var errNoRoot = errors.New("no TYPO3 project root is configured")

// resolver builds a resolver over the site database and the installation
// under site.Root, with the extensions installed there in TYPO3's load
// order as far as t3agent can tell it.
func (e env) resolver() (*template.Resolver, error) {
	if e.site == nil || e.site.Root == "" {
		return nil, errNoRoot
	}
	m, err := extpath.Resolve(e.site.Root)
	if err != nil {
		return nil, err
	}
	return template.New(template.Params{
		Source:      template.NewSiteSource(e.site),
		Paths:       m,
		Extensions:  template.OrderExtensions(m.Keys()),
		ProjectRoot: e.site.Root,
		Cache:       e.files,
	})
}

// checkPage refuses pages that do not exist, are deleted or exist only in
// a workspace, with the neutral sentence.
func (e env) checkPage(ctx context.Context, uid int64) (tool.Result, bool, error) {
	p, err := e.site.Page(ctx, uid)
	switch {
	case errors.Is(err, typo3.ErrPageNotFound):
		return deniedPage(), false, nil
	case err != nil:
		return tool.Result{}, false, err
	case p.T3verWSID != 0:
		return deniedPage(), false, nil
	}
	return tool.Result{}, true, nil
}

// open checks the page and builds a resolver. A non-nil result is the
// answer; an error means the runtime is broken.
func (e env) open(ctx context.Context, uid int64) (*template.Resolver, *tool.Result, error) {
	res, ok, err := e.checkPage(ctx, uid)
	if err != nil || !ok {
		return nil, &res, err
	}
	r, err := e.resolver()
	if errors.Is(err, errNoRoot) {
		res := tool.Errorf("The TYPO3 installation folder is not configured for this site, so its TypoScript files cannot be read.")
		return nil, &res, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("prepare the TypoScript resolver: %w", err)
	}
	return r, nil, nil
}

// resolveError turns what the resolver reports into an answer.
func resolveError(uid int64, err error) (tool.Result, error) {
	switch {
	case errors.Is(err, typo3.ErrPageNotFound):
		return deniedPage(), nil
	case errors.Is(err, template.ErrNoTemplate):
		return tool.Errorf("Page %d has no TypoScript: no sys_template record on its rootline and no site set or site TypoScript.", uid), nil
	case errors.Is(err, typo3.ErrBrokenRootline):
		return tool.Errorf("The page tree above page %d is broken (a pid loop or too deep), so its TypoScript cannot be resolved.", uid), nil
	}
	return tool.Result{}, fmt.Errorf("resolve TypoScript of page %d: %w", uid, err)
}
