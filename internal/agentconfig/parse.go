package agentconfig

import (
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// sections are the document's top-level keys and the kind of their items.
var sections = map[string]string{
	"providers": KindProvider, "models": KindModel, "configurations": KindConfiguration,
	"tasks": KindTask, "budgets": KindBudget,
}

// locator is where a node of the document sits: an item (kind and index)
// and the key path within it; kind "" is the document's top level.
type locator struct {
	kind  string
	index int
	field string
}

// indexer walks a parsed document against the Document types.
type indexer struct {
	d        *Document
	at       map[int]locator // line → the deepest value on it
	problems []FieldError
}

// index records each item's line in d, reports every key the Document
// types do not have, and places each of yaml's type errors ("line N: …")
// on the field of line N. yaml.v3 reports an unknown key only by the
// type it is missing from; the walk knows the item and the path.
func index(root *yaml.Node, d *Document, typeErrors []string) []FieldError {
	ix := &indexer{d: d, at: map[int]locator{}}
	top := root
	if top.Kind == yaml.DocumentNode && len(top.Content) == 1 {
		top = top.Content[0]
	}
	ix.walk(top, reflect.TypeFor[Document](), locator{index: -1})
	for _, msg := range typeErrors {
		line, problem := 0, msg
		if m := linePrefix.FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1])
			problem = m[2]
		}
		loc, ok := ix.at[line]
		if !ok {
			loc = locator{index: -1}
		}
		ix.fail(loc, line, loc.field, typeProblem(problem))
	}
	return ix.problems
}

var linePrefix = regexp.MustCompile(`^line (\d+): (.*)$`)

// fail records a problem at loc; line is the node's, used when loc is the
// top level (items are named by their own line, as validation does).
func (ix *indexer) fail(loc locator, line int, field, problem string) {
	fe := FieldError{Kind: loc.kind, Line: line, Field: field, Problem: problem}
	if loc.kind != "" {
		fe.Identifier, fe.Line = ix.identifier(loc), ix.d.line(loc.kind, loc.index)
	}
	ix.problems = append(ix.problems, fe)
}

// identifier is the decoded identifier of the item at loc (a budget's
// user), "" when it could not be decoded.
func (ix *indexer) identifier(loc locator) string {
	i := loc.index
	switch d := ix.d; loc.kind {
	case KindProvider:
		if i < len(d.Providers) {
			return d.Providers[i].Identifier
		}
	case KindModel:
		if i < len(d.Models) {
			return d.Models[i].Identifier
		}
	case KindConfiguration:
		if i < len(d.Configurations) {
			return d.Configurations[i].Identifier
		}
	case KindTask:
		if i < len(d.Tasks) {
			return d.Tasks[i].Identifier
		}
	case KindBudget:
		if i < len(d.Budgets) {
			return d.Budgets[i].User
		}
	}
	return ""
}

func (ix *indexer) walk(n *yaml.Node, t reflect.Type, loc locator) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	ix.at[n.Line] = loc
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			field := joinField(loc.field, k.Value)
			ft, ok := fields[k.Value]
			if !ok {
				ix.fail(loc, k.Line, field, unknownKey(k.Value, fields))
				continue
			}
			if kind, ok := sections[k.Value]; ok && t == reflect.TypeFor[Document]() && v.Kind == yaml.SequenceNode {
				for j, item := range v.Content {
					ix.d.lines[kind] = append(ix.d.lines[kind], item.Line)
					ix.walk(item, ft.Elem(), locator{kind: kind, index: j})
				}
				continue
			}
			ix.walk(v, ft, locator{kind: loc.kind, index: loc.index, field: field})
		}
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		for j, item := range n.Content {
			ix.walk(item, t.Elem(), locator{kind: loc.kind, index: loc.index, field: fmt.Sprintf("%s[%d]", loc.field, j)})
		}
	case t.Kind() == reflect.Map && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			ix.walk(n.Content[i+1], t.Elem(), locator{kind: loc.kind, index: loc.index, field: joinField(loc.field, n.Content[i].Value)})
		}
	}
}

func joinField(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// yamlFields maps the yaml keys of a struct to their types, inline
// structs flattened.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if opts == "inline" {
			for k, v := range yamlFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f.Type
	}
	return out
}

// unknownKey says the key is unknown and names the known key it is
// closest to, when one is a typo away.
func unknownKey(key string, fields map[string]reflect.Type) string {
	best, bestDist := "", 3
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if d := editDistance(key, k); d < bestDist {
			best, bestDist = k, d
		}
	}
	if best != "" {
		return fmt.Sprintf("is not a known key; did you mean %s?", best)
	}
	return "is not a known key"
}

// editDistance is the Levenshtein distance of two short keys.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

var cannotUnmarshal = regexp.MustCompile("^cannot unmarshal !!(\\w+)(?: `(.*)`)? into (\\S+)$")

// typeProblem turns yaml's "cannot unmarshal !!str `three` into int" into
// "must be a whole number, not "three""; other messages stay as they are.
func typeProblem(msg string) string {
	m := cannotUnmarshal.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	var want string
	switch goType := m[3]; {
	case goType == "string":
		want = "text"
	case goType == "bool":
		want = "true or false"
	case strings.HasPrefix(goType, "int") || strings.HasPrefix(goType, "uint"):
		want = "a whole number"
	case strings.HasPrefix(goType, "float"):
		want = "a number"
	case strings.HasPrefix(goType, "[]"):
		want = "a list"
	case strings.HasPrefix(goType, "map["):
		want = "a map of names to values"
	default:
		want = "a map of keys"
	}
	got := map[string]string{"seq": "a list", "map": "a map", "null": "empty"}[m[1]]
	if got == "" {
		got = strconv.Quote(m[2])
	}
	return fmt.Sprintf("must be %s, not %s", want, got)
}
