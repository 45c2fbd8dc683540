// Package content holds the builtin content tools: search_records,
// get_page_content, read_records and get_record_history. They read the
// TYPO3 site database through the read policy (package readpolicy) and
// nothing else: table and column names come from the TCA and the live
// schema, values are always bound, and every returned row passes the
// policy's row filter after the query.
//
// The tools assume the gate's invoke seam has validated their arguments
// against their schemas, and check them again anyway, since a tool must
// never trust its input.
package content

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/siteindex"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

// Tools returns the content tools reading site under policy, which must
// decide on the same TCA as site (readpolicy.New(site.TCA)).
func Tools(site *typo3.Site, policy *readpolicy.Policy) []tool.Tool {
	return ToolsWith(ToolsParams{Site: site, Policy: policy})
}

// ToolsParams configure ToolsWith.
type ToolsParams struct {
	Site   *typo3.Site        // required
	Policy *readpolicy.Policy // required, on the same TCA as Site
	// Index, when set, is search_records' candidate source while it is
	// fresh (see siteindex.Index.Snapshot); results stay those of a scan.
	Index *siteindex.Index
}

// ToolsWith returns the content tools of p.
func ToolsWith(p ToolsParams) []tool.Tool {
	b := base{site: p.Site, policy: p.Policy}
	return []tool.Tool{
		&searchRecords{base: b, index: p.Index},
		&getPageContent{b},
		&readRecords{b},
		&getRecordHistory{b},
	}
}

// base is what every content tool reads with.
type base struct {
	site   *typo3.Site
	policy *readpolicy.Policy
}

// spec fills in what the four tools share: read-only, group content,
// editor content, for every user, on by default.
func spec(name, description, schema string) tool.Spec {
	return tool.Spec{
		Name:             name,
		Description:      description,
		InputSchema:      json.RawMessage(schema),
		Group:            tool.GroupContent,
		Effect:           tool.ReadOnly,
		DataClass:        tool.EditorContent,
		EnabledByDefault: true,
	}
}

// badArg is an argument problem, told to the model in one sentence.
type badArg string

func (e badArg) Error() string { return string(e) }

func refuse(err error) tool.Result { return tool.Errorf("%s", err.Error()) }

// allowedArgs refuses any argument the schema does not declare, so a
// misspelt name is not silently ignored.
func allowedArgs(args map[string]any, names ...string) error {
	for k := range args {
		known := false
		for _, n := range names {
			if k == n {
				known = true
				break
			}
		}
		if !known {
			return badArg(fmt.Sprintf("Unknown argument %q; this tool takes %s.", k, strings.Join(names, ", ")))
		}
	}
	return nil
}

// intArg reads an optional integer argument within [lo, hi]. JSON numbers
// arrive as float64 (or json.Number); a fraction, a string or anything
// else is refused rather than guessed at.
func intArg(args map[string]any, name string, def, lo, hi int64) (int64, bool, error) {
	v, ok := args[name]
	if !ok || v == nil {
		return def, false, nil
	}
	n, ok := asInt(v)
	if !ok {
		return 0, true, badArg(fmt.Sprintf("Argument %s must be a whole number.", name))
	}
	if n < lo || n > hi {
		return 0, true, badArg(fmt.Sprintf("Argument %s must be between %d and %d.", name, lo, hi))
	}
	return n, true, nil
}

// asInt converts a decoded JSON number (or a Go integer) that is whole.
func asInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case float64:
		if n != math.Trunc(n) || math.IsInf(n, 0) || n > math.MaxInt64 || n < math.MinInt64 {
			return 0, false
		}
		return int64(n), true
	case json.Number:
		if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			return i, true
		}
		f, err := n.Float64()
		if err != nil {
			return 0, false
		}
		return asInt(f)
	}
	return 0, false
}

// stringArg reads an optional string argument.
func stringArg(args map[string]any, name string) (string, bool, error) {
	v, ok := args[name]
	if !ok || v == nil {
		return "", false, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", true, badArg(fmt.Sprintf("Argument %s must be a string.", name))
	}
	return s, true, nil
}

// tableArg reads a table name. Anything that cannot be a table name gets
// the same neutral answer as a table the user may not read.
func (b base) tableArg(args map[string]any, user *typo3.BackendUser, name string, required bool) (string, tool.Result, bool) {
	s, present, err := stringArg(args, name)
	if err != nil {
		return "", refuse(err), false
	}
	if !present {
		if required {
			return "", tool.Errorf("Argument %s is required.", name), false
		}
		return "", tool.Result{}, true
	}
	s = strings.TrimSpace(s)
	if !typo3.ValidIdent(s) || !b.policy.CanReadTable(user, s) {
		return "", tool.Errorf("%s", readpolicy.DeniedTable), false
	}
	return s, tool.Result{}, true
}
