// Package structure holds the builtin schema and resolution tools of
// ADR-045 and the page tree of ADR-038: get_full_tca, get_table_schema,
// get_flexform_schema, fluid_resolve, get_page_tree, get_tca (the TCA
// navigated by path), validate_tca, resolve_url (site base, language base
// and slug to a page; see sitebase.go) and read_fal_asset_meta (admins).
//
// Every tool is read-only and answers from the site's TCA, its page table
// and its files; none of them returns a record's content or a file's
// content. Table access goes through the read policy (readpolicy): the
// sensitive tables stay unreadable for everyone, non-admins see only their
// tables_select, and credential-like columns are named but never
// described. Denials use the policy's neutral sentences.
//
// get_page_tree lists a page exactly when the read policy's page decision
// (readpolicy.RowFilter.PageVisible) grants it, the decision
// get_page_content and the record tools ask too: for non-admins TYPO3's
// readPageAccess (the PAGE_SHOW bits and the user's web mounts) and the
// live site's visibility; admins also see hidden and timed pages, marked.
// The reference only applied the perms clause, which shows an editor
// pages outside their mounts. For the same reason an editor's tree at
// rootUid 0 starts at their web mounts, as TYPO3's page tree does.
//
// Titles and labels come from the TCA and, for LLL: references, from the
// extension's XLF file when the installation folder holds it; otherwise
// the label id stands in (see labels).
//
// The tools assume the gate's invoke seam has validated their arguments
// against their schemas; they still re-check everything they use, because
// a schema is no guarantee that a value is safe.
package structure

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/extpath"
)

// Tools returns the structure tools over site, authorising table access
// with policy.
func Tools(site *typo3.Site, policy *readpolicy.Policy) []tool.Tool {
	e := env{site: site, policy: policy}
	return []tool.Tool{
		&fullTCA{e},
		&tableSchema{e},
		&flexFormSchema{e},
		&fluidResolve{e},
		&pageTree{e},
		&getTCA{e},
		&validateTCA{e},
		&resolveURL{e},
		&falAssetMeta{e},
	}
}

// env is what every tool of the package shares.
type env struct {
	site   *typo3.Site
	policy *readpolicy.Policy
}

// extensions resolves the installation's extension map for one call, so
// an extension installed while t3agent runs is seen at the next call.
func (e env) extensions() (*extpath.Map, error) {
	if e.site == nil || e.site.Root == "" {
		return nil, errNoRoot
	}
	return extpath.Resolve(e.site.Root)
}

var errNoRoot = fmt.Errorf("no TYPO3 project root is configured")

// spec fills the fields all tools of the package share.
func spec(name, group, description, schema string) tool.Spec {
	return tool.Spec{
		Name:             name,
		Description:      description,
		InputSchema:      json.RawMessage(schema),
		Group:            group,
		Effect:           tool.ReadOnly,
		DataClass:        tool.InternalConfiguration,
		EnabledByDefault: true,
	}
}

// stringArg returns a string argument, "" when absent.
func stringArg(args map[string]any, name string) (string, error) {
	v, ok := args[name]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s must be a string", name)
	}
	return s, nil
}

// intArg returns an integer argument or def. Numbers arrive as
// json.Number from the invoke seam and as float64 or int from other
// decoders; fractions and values beyond int64 are refused.
func intArg(args map[string]any, name string, def int64) (int64, error) {
	v, ok := args[name]
	if !ok || v == nil {
		return def, nil
	}
	bad := fmt.Errorf("%s must be a whole number", name)
	switch n := v.(type) {
	case json.Number:
		i, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil {
			f, ferr := n.Float64()
			if ferr != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
				return 0, bad
			}
			return int64(f), nil
		}
		return i, nil
	case float64:
		if n != math.Trunc(n) || math.Abs(n) > 1<<53 {
			return 0, bad
		}
		return int64(n), nil
	case int:
		return int64(n), nil
	case int64:
		return n, nil
	}
	return 0, bad
}

// stringsArg returns a list-of-strings argument.
func stringsArg(args map[string]any, name string) ([]string, error) {
	v, ok := args[name]
	if !ok || v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		if ss, ok := v.([]string); ok {
			return ss, nil
		}
		return nil, fmt.Errorf("%s must be a list of strings", name)
	}
	out := make([]string, 0, len(list))
	for _, item := range list {
		s, ok := item.(string)
		if !ok {
			return nil, fmt.Errorf("%s must be a list of strings", name)
		}
		out = append(out, s)
	}
	return out, nil
}

// clean makes a site-supplied string (a title, a label) safe to put on one
// output line (tool.Line).
func clean(s string, limit int) string { return tool.Line(s, limit) }

// quoteArg echoes a model-supplied value in an answer, bounded and with
// control characters made visible.
func quoteArg(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return strconv.Quote(s)
}

// denyUser is the answer when no backend user acts.
func denyUser() tool.Result { return tool.Errorf("%s", readpolicy.DeniedUser) }

// denyTable is the neutral table denial.
func denyTable() tool.Result { return tool.Errorf("%s", readpolicy.DeniedTable) }
