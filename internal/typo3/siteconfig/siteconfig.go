// Package siteconfig reads a TYPO3 installation's site configurations
// (config/sites/<identifier>/config.yaml) the way TYPO3's YamlFileLoader
// and SiteConfiguration do, without PHP:
//
//   - imports: each "- resource: …" (relative to the importing file, or
//     EXT:key/…, "*" globs allowed) is read first, in order, and the file's
//     own keys replace what the imports set (array_replace_recursive);
//     imports nest up to maxDepth levels, relative ones must stay inside the
//     project root, EXT: ones inside their extension;
//   - %env(NAME)% placeholders anywhere in a string value are replaced
//     from the lookup the caller gives (the site's .env, then t3agent's own
//     environment); a name the lookup lacks is left as written and listed;
//   - baseVariants: the first variant whose condition holds gives the
//     base; conditions are TYPO3's expression language with
//     applicationContext (TYPO3_CONTEXT, default Production) and
//     getenv()/env(); a condition that cannot be decided does not match and
//     is listed;
//   - language bases are resolved against the site base.
//
// Files are capped in size and number; a broken site file makes that site
// carry an error, never the whole list fail.
package siteconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/t3agent/t3agent/internal/typo3/dotenv"
	"github.com/t3agent/t3agent/internal/typo3/extpath"
	"github.com/t3agent/t3agent/internal/typoscript"
)

// Limits of the loader.
const (
	maxFileBytes = 1 << 20
	maxDepth     = 8
	maxFiles     = 64
)

// Params configure Load.
type Params struct {
	// Root is the project root (required).
	Root string
	// Extensions resolves EXT: imports; nil refuses them.
	Extensions *extpath.Map
	// Env looks an environment variable up; nil means none is known.
	Env func(name string) (string, bool)
}

// Language is one configured language.
type Language struct {
	ID      int64
	Title   string
	Locale  string
	Base    string // resolved against the site base
	Enabled bool
}

// Site is one resolved site configuration.
type Site struct {
	Identifier string
	// File is the config.yaml path relative to the project root.
	File       string
	RootPageID int64
	// Base is the resolved base: the first matching base variant's, or
	// the site's own. BaseFrom says which.
	Base     string
	BaseFrom string
	// Bases are every base the configuration declares (site, variants,
	// absolute language bases), resolved, deduplicated.
	Bases     []string
	Languages []Language
	// Config is the merged configuration with placeholders replaced.
	Config map[string]any
	// Unresolved are %env()% names the lookup lacked; Notes say what
	// else could not be decided (conditions, skipped imports).
	Unresolved []string
	Notes      []string
	// Err is why the site could not be read; the other fields are empty.
	Err error
}

// Load reads every site below Root/config/sites, sorted by identifier.
func Load(p Params) ([]*Site, error) {
	if p.Root == "" {
		return nil, errors.New("no TYPO3 project root is configured")
	}
	base := filepath.Join(p.Root, "config", "sites")
	ents, err := os.ReadDir(base)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*Site
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		file := filepath.Join(base, e.Name(), "config.yaml")
		if _, err := os.Stat(file); err != nil {
			continue
		}
		out = append(out, loadSite(p, e.Name(), file))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Identifier < out[j].Identifier })
	return out, nil
}

func loadSite(p Params, id, file string) *Site {
	s := &Site{Identifier: id, File: filepath.ToSlash(filepath.Join("config", "sites", id, "config.yaml"))}
	l := &loader{p: p, site: s}
	cfg, err := l.file(file, 0)
	if err != nil {
		s.Err = err
		return s
	}
	Resolve(p, s, cfg)
	return s
}

// Resolve fills s from an already merged configuration: placeholders,
// root page, base, variants and languages. It is exported for the fuzz
// test and for callers that hold a configuration in memory.
func Resolve(p Params, s *Site, cfg map[string]any) {
	unresolved := map[string]bool{}
	v := substitute(cfg, p.Env, unresolved, 0)
	s.Config, _ = v.(map[string]any)
	if s.Config == nil {
		s.Config = map[string]any{}
	}
	for n := range unresolved {
		s.Unresolved = append(s.Unresolved, n)
	}
	sort.Strings(s.Unresolved)
	s.RootPageID = toInt(s.Config["rootPageId"])
	s.Base, _ = s.Config["base"].(string)
	s.BaseFrom = "base"
	bases := []string{s.Base}
	env := exprEnv(p.Env)
	matched := false
	if vs, ok := s.Config["baseVariants"].([]any); ok {
		for i, vv := range vs {
			m, _ := vv.(map[string]any)
			b, _ := m["base"].(string)
			cond, _ := m["condition"].(string)
			if b == "" {
				continue
			}
			bases = append(bases, b)
			if matched || cond == "" {
				continue
			}
			verdict := env.Evaluate(cond)
			switch {
			case !verdict.Decided:
				s.Notes = append(s.Notes, fmt.Sprintf("baseVariants[%d] condition %q cannot be decided by t3agent (%s); taken as not matching", i, cond, verdict.Reason))
			case verdict.Value:
				s.Base, s.BaseFrom, matched = b, fmt.Sprintf("baseVariants[%d] (%s)", i, cond), true
			}
		}
	}
	if langs, ok := s.Config["languages"].([]any); ok {
		for _, lv := range langs {
			m, _ := lv.(map[string]any)
			if m == nil {
				continue
			}
			l := Language{ID: toInt(m["languageId"]), Enabled: m["enabled"] != false}
			l.Title, _ = m["title"].(string)
			l.Locale, _ = m["locale"].(string)
			lb, _ := m["base"].(string)
			l.Base = JoinBase(s.Base, lb)
			if strings.Contains(lb, "://") || strings.HasPrefix(lb, "//") {
				bases = append(bases, lb)
			}
			s.Languages = append(s.Languages, l)
		}
	}
	seen := map[string]bool{}
	for _, b := range bases {
		if b != "" && !seen[b] {
			seen[b] = true
			s.Bases = append(s.Bases, b)
		}
	}
}

// JoinBase resolves a language base against a site base as TYPO3 does:
// an absolute base (with scheme or //host) stands alone, a path is
// appended to the site base.
func JoinBase(site, lang string) string {
	if lang == "" {
		return site
	}
	if strings.Contains(lang, "://") || strings.HasPrefix(lang, "//") {
		return lang
	}
	return strings.TrimSuffix(site, "/") + "/" + strings.TrimPrefix(lang, "/")
}

// ApplicationContext is TYPO3_CONTEXT from env, or Production.
func ApplicationContext(env func(string) (string, bool)) string {
	if env != nil {
		if v, ok := env("TYPO3_CONTEXT"); ok && v != "" {
			return v
		}
	}
	return "Production"
}

func exprEnv(env func(string) (string, bool)) *typoscript.ExprEnv {
	get := func(args []any) any {
		if len(args) != 1 || env == nil {
			return false
		}
		name, _ := args[0].(string)
		if v, ok := env(name); ok {
			return v
		}
		return false
	}
	return &typoscript.ExprEnv{
		Vars: map[string]any{"applicationContext": ApplicationContext(env),
			"request": typoscript.Unknown{Reason: "it needs a live request"}},
		Funcs: map[string]typoscript.Func{"getenv": get, "env": get},
	}
}

var placeholder = regexp.MustCompile(`%env\(([A-Za-z_][A-Za-z0-9_]*)\)%`)

// substitute replaces %env(NAME)% in every string of v.
func substitute(v any, env func(string) (string, bool), unresolved map[string]bool, depth int) any {
	if depth > 64 {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, c := range x {
			out[k] = substitute(c, env, unresolved, depth+1)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = substitute(c, env, unresolved, depth+1)
		}
		return out
	case string:
		if !strings.Contains(x, "%env(") {
			return x
		}
		return placeholder.ReplaceAllStringFunc(x, func(m string) string {
			name := placeholder.FindStringSubmatch(m)[1]
			if env != nil {
				if val, ok := env(name); ok {
					return val
				}
			}
			unresolved[name] = true
			return m
		})
	}
	return v
}

// loader reads one site's file tree of imports.
type loader struct {
	p     Params
	site  *Site
	files int
}

func (l *loader) file(path string, depth int) (map[string]any, error) {
	l.files++
	if l.files > maxFiles {
		return nil, fmt.Errorf("more than %d files are imported", maxFiles)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxFileBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", l.rel(path), maxFileBytes)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cfg, err := ParseYAML(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.rel(path), err)
	}
	imports, _ := cfg["imports"].([]any)
	delete(cfg, "imports")
	if len(imports) == 0 {
		return cfg, nil
	}
	if depth >= maxDepth {
		l.site.Notes = append(l.site.Notes, fmt.Sprintf("imports of %s not read: nested deeper than %d", l.rel(path), maxDepth))
		return cfg, nil
	}
	merged := map[string]any{}
	for _, iv := range imports {
		m, _ := iv.(map[string]any)
		res, _ := m["resource"].(string)
		if res == "" {
			continue
		}
		paths, err := l.importPaths(filepath.Dir(path), res)
		if err != nil {
			l.site.Notes = append(l.site.Notes, fmt.Sprintf("import %q of %s skipped: %v", res, l.rel(path), err))
			continue
		}
		for _, ip := range paths {
			sub, err := l.file(ip, depth+1)
			if err != nil {
				return nil, err
			}
			merged = ReplaceRecursive(merged, sub)
		}
	}
	return ReplaceRecursive(merged, cfg), nil
}

// importPaths resolves one import resource to files inside the project
// root (or, for EXT:, inside the extension).
func (l *loader) importPaths(dir, res string) ([]string, error) {
	var pattern string
	switch {
	case strings.HasPrefix(res, "EXT:"):
		if l.p.Extensions == nil {
			return nil, errors.New("extensions are unknown")
		}
		p, err := l.p.Extensions.Path(res)
		if err != nil {
			return nil, err
		}
		pattern = p
	case filepath.IsAbs(res) || strings.Contains(res, "\x00"):
		return nil, errors.New("absolute paths are not followed")
	default:
		pattern = filepath.Join(dir, filepath.FromSlash(res))
	}
	matches, err := filepath.Glob(pattern)
	if err != nil {
		return nil, err
	}
	if len(matches) == 0 {
		return nil, errors.New("no such file")
	}
	sort.Strings(matches)
	root, err := filepath.EvalSymlinks(l.p.Root)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range matches {
		real, err := filepath.EvalSymlinks(m)
		if err != nil {
			return nil, err
		}
		if !strings.HasPrefix(res, "EXT:") && !inside(root, real) {
			return nil, errors.New("it leads outside the project root")
		}
		out = append(out, real)
	}
	return out, nil
}

func inside(root, p string) bool {
	r, err := filepath.Rel(root, p)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}

func (l *loader) rel(p string) string {
	if r, err := filepath.Rel(l.p.Root, p); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return filepath.Base(p)
}

// ParseYAML parses one configuration file into a string-keyed map.
func ParseYAML(b []byte) (map[string]any, error) {
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if v == nil {
		return map[string]any{}, nil
	}
	m, ok := normalise(v, 0).(map[string]any)
	if !ok {
		return nil, errors.New("the file is not a YAML mapping")
	}
	return m, nil
}

// normalise turns YAML's map[any]any-free output into string keys
// throughout (integer keys become their decimal form).
func normalise(v any, depth int) any {
	if depth > 64 {
		return nil
	}
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			x[k] = normalise(c, depth+1)
		}
		return x
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, c := range x {
			out[fmt.Sprint(k)] = normalise(c, depth+1)
		}
		return out
	case []any:
		for i, c := range x {
			x[i] = normalise(c, depth+1)
		}
		return x
	}
	return v
}

// ReplaceRecursive is PHP's array_replace_recursive for maps: b's keys
// replace a's, maps merge; lists are replaced by index, as PHP arrays are.
func ReplaceRecursive(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if bm, ok := v.(map[string]any); ok {
			if am, ok := out[k].(map[string]any); ok {
				out[k] = ReplaceRecursive(am, bm)
				continue
			}
		}
		if bl, ok := v.([]any); ok {
			if al, ok := out[k].([]any); ok {
				out[k] = replaceList(al, bl)
				continue
			}
		}
		out[k] = v
	}
	return out
}

func replaceList(a, b []any) []any {
	n := max(len(a), len(b))
	out := make([]any, n)
	copy(out, a)
	for i, v := range b {
		if bm, ok := v.(map[string]any); ok {
			if am, ok := out[i].(map[string]any); ok {
				out[i] = ReplaceRecursive(am, bm)
				continue
			}
		}
		out[i] = v
	}
	return out
}

func toInt(v any) int64 {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int64:
		return x
	case uint64:
		return int64(x)
	case float64:
		return int64(x)
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	return 0
}

// EnvLookup returns the lookup TYPO3's %env()% would see as far as
// t3agent can tell: the project's .env first (what helhum/dotenv-connector
// loads), then t3agent's own process environment. A broken .env is
// skipped.
func EnvLookup(root string) func(string) (string, bool) {
	vars, _, _ := dotenv.Read(root)
	return func(name string) (string, bool) {
		if v, ok := dotenv.Lookup(vars, name); ok {
			return v, true
		}
		return os.LookupEnv(name)
	}
}
