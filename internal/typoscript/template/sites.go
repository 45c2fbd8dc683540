package template

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/t3agent/t3agent/internal/typoscript"
)

// maxYAMLBytes caps one site or set configuration file.
const maxYAMLBytes = 1 << 20

// Site is one config/sites/<identifier>/config.yaml.
type Site struct {
	Identifier string
	RootPageID int64
	Base       string
	// Config is the whole parsed config.yaml (site("configuration")).
	Config map[string]any
	// Languages are the configured languages in file order.
	Languages []map[string]any
	// Dependencies are the site sets the site uses.
	Dependencies []string
	// Dir is the site's configuration directory.
	Dir string
	// Settings are config/sites/<id>/settings.yaml, flattened.
	Settings map[string]string
	// HasSetup, HasConstants, HasPageTS say whether the site folder has
	// setup.typoscript, constants.typoscript, page.tsconfig.
	HasSetup, HasConstants, HasPageTS bool
}

// IsTypoScriptRoot is Site::isTypoScriptRoot: the site provides TypoScript
// through sets or its own files.
func (s *Site) IsTypoScriptRoot() bool {
	return len(s.Dependencies) > 0 || s.HasSetup || s.HasConstants
}

// DefaultLanguage returns the language with languageId 0 (or the first).
func (s *Site) DefaultLanguage() map[string]any {
	for _, l := range s.Languages {
		if id, ok := l["languageId"]; ok && fmt.Sprint(id) == "0" {
			return l
		}
	}
	if len(s.Languages) > 0 {
		return s.Languages[0]
	}
	return map[string]any{}
}

// LoadSites reads every config/sites/*/config.yaml below projectRoot. A
// missing sites folder yields no sites; an unparsable file is an error.
func LoadSites(projectRoot string) ([]*Site, error) {
	if projectRoot == "" {
		return nil, nil
	}
	base := filepath.Join(projectRoot, "config", "sites")
	ents, err := os.ReadDir(base)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*Site
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(base, e.Name())
		raw, err := readYAML(filepath.Join(dir, "config.yaml"))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("site %s: %w", e.Name(), err)
		}
		s := &Site{Identifier: e.Name(), Dir: dir, Config: raw}
		s.RootPageID = toInt64(raw["rootPageId"])
		s.Base, _ = raw["base"].(string)
		if langs, ok := raw["languages"].([]any); ok {
			for _, l := range langs {
				if m, ok := l.(map[string]any); ok {
					s.Languages = append(s.Languages, m)
				}
			}
		}
		s.Dependencies = stringList(raw["dependencies"])
		settings, err := readYAML(filepath.Join(dir, "settings.yaml"))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("site %s settings: %w", e.Name(), err)
		}
		s.Settings = map[string]string{}
		flattenSettings("", settings, s.Settings)
		s.HasSetup = fileExists(filepath.Join(dir, "setup.typoscript"))
		s.HasConstants = fileExists(filepath.Join(dir, "constants.typoscript"))
		s.HasPageTS = fileExists(filepath.Join(dir, "page.tsconfig"))
		out = append(out, s)
	}
	return out, nil
}

// siteForRootline is SiteFinder::getSiteByPageId: the deepest rootline page
// that is some site's root page.
func siteForRootline(sites []*Site, rootline []Page) *Site {
	for i := len(rootline) - 1; i >= 0; i-- {
		for _, s := range sites {
			if s.RootPageID == rootline[i].UID {
				return s
			}
		}
	}
	return nil
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

func readYAML(p string) (map[string]any, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxYAMLBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", p, maxYAMLBytes)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	return parseYAML(b)
}

func parseYAML(b []byte) (map[string]any, error) {
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

func toInt64(v any) int64 {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int64:
		return x
	case float64:
		return int64(x)
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	return 0
}

func stringList(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, e := range l {
		if s, ok := e.(string); ok && s != "" {
			out = append(out, s)
		}
	}
	return out
}

// flattenSettings flattens nested settings to dotted keys with PHP string
// casts of the values (true "1", false "").
func flattenSettings(prefix string, v any, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			key := k
			if prefix != "" {
				key = prefix + "." + k
			}
			flattenSettings(key, c, out)
		}
	case []any:
		for i, c := range x {
			flattenSettings(prefix+"."+strconv.Itoa(i), c, out)
		}
	default:
		if prefix != "" {
			out[prefix] = phpString(x)
		}
	}
}

func phpString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case bool:
		if x {
			return "1"
		}
		return ""
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// Set is one site set: EXT:<key>/Configuration/Sets/<Dir>/.
type Set struct {
	Name                 string
	Ext, Dir             string // extension key and set folder name
	Dependencies         []string
	OptionalDependencies []string
	// Defaults are settings.definitions.yaml defaults; Settings the set's
	// settings.yaml, both flattened.
	Defaults, Settings map[string]string
}

// ref returns the EXT: reference of a file in the set folder.
func (s *Set) ref(file string) string {
	return "EXT:" + s.Ext + "/Configuration/Sets/" + s.Dir + "/" + file
}

// loadSets reads the sets of the active extensions.
func loadSets(paths typoscript.ExtensionPaths, exts []string) (map[string]*Set, error) {
	sets := map[string]*Set{}
	for _, ext := range exts {
		dir, err := paths.Path("EXT:" + ext + "/Configuration/Sets")
		if err != nil {
			continue
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			cfg, err := readYAML(filepath.Join(dir, e.Name(), "config.yaml"))
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("set EXT:%s/Configuration/Sets/%s: %w", ext, e.Name(), err)
			}
			name, _ := cfg["name"].(string)
			if name == "" {
				continue
			}
			s := &Set{Name: name, Ext: ext, Dir: e.Name(), Defaults: map[string]string{}, Settings: map[string]string{},
				Dependencies: stringList(cfg["dependencies"]), OptionalDependencies: stringList(cfg["optionalDependencies"])}
			if defs, err := readYAML(filepath.Join(dir, e.Name(), "settings.definitions.yaml")); err == nil {
				if m, ok := defs["settings"].(map[string]any); ok {
					for k, d := range m {
						if dm, ok := d.(map[string]any); ok {
							if v, ok := dm["default"]; ok {
								s.Defaults[k] = phpString(v)
							}
						}
					}
				}
			}
			if st, err := readYAML(filepath.Join(dir, e.Name(), "settings.yaml")); err == nil {
				flattenSettings("", st, s.Settings)
			}
			if _, dup := sets[name]; !dup {
				sets[name] = s
			}
		}
	}
	return sets, nil
}

// orderSets is SetRegistry::getSets: the named sets with their
// dependencies first, each once; optional dependencies only when present.
// Unknown names are returned as missing.
func orderSets(all map[string]*Set, names []string) (ordered []*Set, missing []string) {
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(name string, optional bool)
	visit = func(name string, optional bool) {
		s, ok := all[name]
		if !ok {
			if !optional {
				missing = append(missing, name)
			}
			return
		}
		if state[name] != 0 {
			return
		}
		state[name] = 1
		for _, d := range s.Dependencies {
			visit(d, false)
		}
		for _, d := range s.OptionalDependencies {
			visit(d, true)
		}
		state[name] = 2
		ordered = append(ordered, s)
	}
	for _, n := range names {
		visit(n, false)
	}
	sort.Strings(missing)
	return ordered, missing
}

// siteSettings layers set defaults, set settings and the site's settings.
func siteSettings(site *Site, sets []*Set) map[string]string {
	out := map[string]string{}
	for _, s := range sets {
		for k, v := range s.Defaults {
			out[k] = v
		}
	}
	for _, s := range sets {
		for k, v := range s.Settings {
			out[k] = v
		}
	}
	for k, v := range site.Settings {
		out[k] = v
	}
	return out
}

// settingsTypoScript renders settings as constants lines, sorted for a
// stable tree.
func settingsTypoScript(settings map[string]string) string {
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		v := settings[k]
		if strings.ContainsAny(v, "\r\n") {
			// A value with line breaks needs the multi-line form.
			b.WriteString(k + " (\n" + v + "\n)\n")
			continue
		}
		b.WriteString(k + " = " + v + "\n")
	}
	return b.String()
}
