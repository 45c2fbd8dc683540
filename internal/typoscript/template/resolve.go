package template

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/t3agent/t3agent/internal/typoscript"
)

// Params configures New.
type Params struct {
	// Source reads pages and sys_template rows (required).
	Source TemplateSource
	// Paths resolves EXT: references (required).
	Paths typoscript.ExtensionPaths
	// Extensions are the active extension keys in TYPO3's load order
	// (see OrderExtensions); they decide extension.isLoaded, which
	// packages' page.tsconfig and statics apply, and the Profile.
	Extensions []string
	// ProjectRoot is the installation root (config/sites lives below it).
	ProjectRoot string
	// PublicDir is the web root for plain relative imports (default
	// ProjectRoot/public).
	PublicDir string
	// Sites overrides the sites read from ProjectRoot/config/sites.
	Sites []*Site
	// Profile overrides NewProfile(Extensions).
	Profile *Profile
	// ExtensionConfiguration overrides ext_conf_template.txt defaults per
	// extension and dotted path (settings.php EXTENSIONS).
	ExtensionConfiguration map[string]map[string]string
	// TYPO3Version is the exact core version when known ("13.4.34");
	// conditions on typo3.version are undecided without it.
	TYPO3Version string
	Limits       typoscript.Limits
	// Cache keeps the parsed TypoScript and TSconfig files between
	// resolutions (typoscript.FileCache); nil reads every file every time.
	// Share one per installation: it is safe for concurrent use, and a
	// file changed on disk is read again by the next resolution.
	Cache *typoscript.FileCache
}

// Resolver resolves frontend TypoScript and Page TSconfig of pages. It is
// safe for concurrent use.
type Resolver struct {
	src        TemplateSource
	paths      typoscript.ExtensionPaths
	extensions []string
	root       string
	public     string
	sites      []*Site
	profile    *Profile
	overrides  map[string]map[string]string
	version    string
	branch     string
	limits     typoscript.Limits
	cache      *typoscript.FileCache

	setsOnce sync.Once
	sets     map[string]*Set
	setsErr  error

	confMu sync.Mutex
	conf   map[string]map[string]string
}

// New checks p and prepares a Resolver; it reads the site configuration.
func New(p Params) (*Resolver, error) {
	if p.Source == nil {
		return nil, errors.New("template.New: no TemplateSource")
	}
	if p.Paths == nil {
		return nil, errors.New("template.New: no extension paths")
	}
	sites := p.Sites
	if sites == nil {
		var err error
		if sites, err = LoadSites(p.ProjectRoot); err != nil {
			return nil, err
		}
	}
	prof := p.Profile
	if prof == nil {
		prof = NewProfile(p.Extensions)
	}
	r := &Resolver{
		src: p.Source, paths: p.Paths, extensions: slices.Clone(p.Extensions), root: p.ProjectRoot,
		public: p.PublicDir, sites: sites, profile: prof, overrides: p.ExtensionConfiguration,
		version: p.TYPO3Version, branch: "13.4", limits: p.Limits, cache: p.Cache, conf: map[string]map[string]string{},
	}
	if v := p.TYPO3Version; v != "" {
		parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
		if len(parts) >= 2 {
			r.branch = parts[0] + "." + parts[1]
		}
	}
	return r, nil
}

// Tree is one resolved tree with everything met on the way.
type Tree struct {
	// Includes is the include tree (TYPO3's "Included TypoScript").
	Includes *typoscript.Include
	// AST is the syntax tree with the conditions met while building it.
	*typoscript.AST
	// Syntax are check_typoscript's findings: invalid lines, braces,
	// empty imports, cycles and exceeded limits.
	Syntax []typoscript.Finding
}

// IncludeTree renders the include tree with conditions as evaluated.
func (t *Tree) IncludeTree() string { return t.Includes.TreeString(t.Shown) }

// Frontend is the frontend TypoScript of one page.
type Frontend struct {
	PageUID  int64
	Rootline []Page
	Site     *Site
	// Templates are the sys_template rows used, root first.
	Templates []SysTemplate
	Constants Tree
	Setup     Tree
	// FlatConstants are the constants substituted into setup.
	FlatConstants map[string]string
	// Notes say what the answer cannot include (unevaluated extensions,
	// missing sets).
	Notes []string
}

// TSconfig is the Page TSconfig of one page.
type TSconfig struct {
	PageUID  int64
	Rootline []Page
	Site     *Site
	Tree
	Notes []string
}

func (r *Resolver) builder(typ typoscript.SourceType) *typoscript.Builder {
	p := typoscript.BuildParams{
		Type: typ, Paths: r.paths, ProjectRoot: r.root, PublicDir: r.public, Limits: r.limits,
		ContentRendering: r.profile.ContentRenderingTemplates,
		Loaded:           func(k string) bool { return slices.Contains(r.extensions, k) },
		Cache:            r.cache,
	}
	if typ == typoscript.TypeSetup {
		p.DefaultContentRendering = r.profile.ContentRenderingSetup
	}
	return typoscript.NewBuilder(p)
}

func (r *Resolver) loadedSets() (map[string]*Set, error) {
	r.setsOnce.Do(func() { r.sets, r.setsErr = loadSets(r.paths, r.extensions) })
	return r.sets, r.setsErr
}

// siteSets returns the ordered sets of a site and notes for missing ones.
func (r *Resolver) siteSets(site *Site) ([]*Set, []string, error) {
	if site == nil || len(site.Dependencies) == 0 {
		return nil, nil, nil
	}
	all, err := r.loadedSets()
	if err != nil {
		return nil, nil, err
	}
	sets, missing := orderSets(all, site.Dependencies)
	var notes []string
	for _, m := range missing {
		notes = append(notes, "site set "+m+" is not provided by any active extension")
	}
	return sets, notes, nil
}

// notes lists what the answer lacks: global TypoScript of active
// extensions whose ext_localconf.php t3agent cannot evaluate.
func (r *Resolver) notes() []string {
	var unknown []string
	for _, ext := range r.profile.NotEvaluated {
		if p, err := r.paths.Path("EXT:" + ext + "/ext_localconf.php"); err == nil {
			if _, err := os.Stat(p); err == nil {
				unknown = append(unknown, ext)
			}
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	return []string{"global TypoScript that ext_localconf.php of " + strings.Join(unknown, ", ") +
		" may add is not known to t3agent and is missing"}
}

// Frontend resolves the frontend TypoScript (constants and setup) of a
// page as TYPO3's frontend would for the default language, deciding
// conditions from the page and its site and taking request-bound ones as
// false. ErrNoTemplate means neither a sys_template row nor the site
// provides TypoScript.
func (r *Resolver) Frontend(ctx context.Context, pageUID int64) (*Frontend, error) {
	rootline, err := r.src.Rootline(ctx, pageUID)
	if err != nil {
		return nil, err
	}
	if len(rootline) == 0 {
		return nil, ErrPageNotFound
	}
	site := siteForRootline(r.sites, rootline)
	tsRoot := site != nil && site.IsTypoScriptRoot()
	if tsRoot {
		// The rootline starts at a site that provides TypoScript.
		for i, p := range rootline {
			if p.UID == site.RootPageID {
				rootline = rootline[i:]
				break
			}
		}
	}
	sets, notes, err := r.siteSets(site)
	if err != nil {
		return nil, err
	}
	var rows []SysTemplate
	local := 0
	for i, p := range rootline {
		ts, err := r.src.SysTemplates(ctx, p.UID)
		if err != nil {
			return nil, err
		}
		if len(ts) == 0 {
			continue
		}
		rows = append(rows, ts[0])
		if ts[0].Root {
			local = i
		}
	}
	if len(rows) == 0 && !tsRoot {
		return nil, ErrNoTemplate
	}
	f := &Frontend{PageUID: rootline[len(rootline)-1].UID, Rootline: rootline, Site: site, Templates: rows,
		Notes: append(r.notes(), notes...)}
	env := r.env(condContext{
		page: rootline[len(rootline)-1], full: rootline, local: rootline[local:], site: site, frontend: true,
	})
	var settings map[string]string
	if site != nil {
		settings = siteSettings(site, sets)
	}
	constants, err := r.templateTree(ctx, typoscript.TypeConstants, rows, site, tsRoot, sets, settings)
	if err != nil {
		return nil, err
	}
	f.Constants = constants.finish(typoscript.ASTParams{Eval: env, Limits: r.limits})
	f.FlatConstants = f.Constants.Root.FlatMap()
	setup, err := r.templateTree(ctx, typoscript.TypeSetup, rows, site, tsRoot, sets, settings)
	if err != nil {
		return nil, err
	}
	f.Setup = setup.finish(typoscript.ASTParams{Eval: env, Constants: f.FlatConstants, Limits: r.limits})
	return f, nil
}

// built is an include tree with the builder that read it.
type built struct {
	root *typoscript.Include
	b    *typoscript.Builder
}

func (t built) finish(p typoscript.ASTParams) Tree {
	defer t.b.Close()
	return Tree{Includes: t.root, AST: typoscript.BuildAST(t.root, p), Syntax: typoscript.Scan(t.root, t.b)}
}

// treeState is per-type state of SysTemplateTreeBuilder.
type treeState struct {
	r        *Resolver
	ctx      context.Context
	b        *typoscript.Builder
	typ      typoscript.SourceType
	site     *Site
	settings map[string]string
	included map[int64]bool
	depth    int
}

// templateTree is SysTemplateTreeBuilder::getTreeBySysTemplateRowsAndSite
// for one type: the site's TypoScript first when it has sets or files,
// then one node per sys_template row, root first.
func (r *Resolver) templateTree(ctx context.Context, typ typoscript.SourceType, rows []SysTemplate, site *Site,
	tsRoot bool, sets []*Set, settings map[string]string) (built, error) {
	b := r.builder(typ)
	root := &typoscript.Include{Kind: typoscript.IncludeRoot, Name: "ROOT"}
	st := &treeState{r: r, ctx: ctx, b: b, typ: typ, site: site, settings: settings, included: map[int64]bool{}}
	if tsRoot {
		root.Add(st.siteTemplate(sets))
	}
	bit := st.clearBit()
	if !tsRoot && len(rows) > 0 {
		// Like TYPO3: when no row clears this type, the first one does.
		cleared := false
		for _, row := range rows {
			if row.Clear&bit != 0 {
				cleared = true
			}
		}
		if !cleared {
			rows = slices.Clone(rows)
			rows[0].Clear |= bit
		}
	}
	for _, row := range rows {
		node := st.templateNode(row)
		if err := st.handleRow(node, row); err != nil {
			b.Close()
			return built{}, err
		}
		b.Parse(node, st.content(row))
		root.Add(node)
	}
	return built{root: root, b: b}, nil
}

func (st *treeState) clearBit() int {
	if st.typ == typoscript.TypeConstants {
		return 1
	}
	return 2
}

func (st *treeState) content(row SysTemplate) string {
	if st.typ == typoscript.TypeConstants {
		return row.Constants
	}
	return row.Config
}

func (st *treeState) templateNode(row SysTemplate) *typoscript.Include {
	return &typoscript.Include{Kind: typoscript.IncludeSysTemplate,
		Name:  "[sys_template:" + strconv.FormatInt(row.UID, 10) + "] " + row.Title,
		Clear: row.Clear&st.clearBit() != 0, Root: row.Root}
}

// handleRow is handleSysTemplateRecordInclude: global TypoScript when the
// row clears, extension statics, include_static_file around basedOn.
func (st *treeState) handleRow(node *typoscript.Include, row SysTemplate) error {
	st.included[row.UID] = true
	if row.Clear&st.clearBit() != 0 {
		st.defaults(node)
		if st.typ == typoscript.TypeConstants && len(st.settings) > 0 {
			node.Add(st.b.String(typoscript.IncludeSite, "Site constants settings of site "+st.site.Identifier, "",
				settingsTypoScript(st.settings)))
		}
	}
	if row.StaticFileMode == 3 && row.Root {
		st.extensionStatics(node)
	}
	if !row.IncludeStaticAfterBasedOn {
		st.statics(node, row.IncludeStaticFile)
	}
	if strings.TrimSpace(row.BasedOn) != "" {
		if err := st.basedOn(node, row.BasedOn); err != nil {
			return err
		}
	}
	if row.IncludeStaticAfterBasedOn {
		st.statics(node, row.IncludeStaticFile)
	}
	if row.StaticFileMode == 1 || (row.StaticFileMode == 0 && row.Root) {
		st.extensionStatics(node)
	}
	return nil
}

// defaults adds TYPO3_CONF_VARS[FE][defaultTypoScript_<type>].
func (st *treeState) defaults(node *typoscript.Include) {
	src := st.r.profile.SetupDefault
	if st.typ == typoscript.TypeConstants {
		src = st.r.profile.ConstantsDefault
	}
	if src == "" {
		return
	}
	node.Add(st.b.String(typoscript.IncludeDefaultTypoScript,
		"TYPO3_CONF_VARS['FE']['defaultTypoScript_"+st.typ.String()+"']", "", src))
}

// statics handles include_static_file (a CSV of EXT:ext/Path).
func (st *treeState) statics(node *typoscript.Include, csv string) {
	for entry := range strings.SplitSeq(csv, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		n := &typoscript.Include{Kind: typoscript.IncludeStaticFileDatabase, Name: entry}
		st.static(n, entry, 0)
		node.Add(n)
	}
}

// static is handleSingleIncludeStaticFile: the folder's
// include_static_file.txt (recursively), then <type>.typoscript|.ts|.txt,
// then the content rendering magic of that folder.
func (st *treeState) static(parent *typoscript.Include, entry string, depth int) {
	rest, ok := strings.CutPrefix(entry, "EXT:")
	if !ok {
		st.note(parent, "include_static_file entry does not start with EXT:")
		return
	}
	key, path := typoscript.SplitExtPath(rest)
	if key == "" || path == "" {
		st.note(parent, "include_static_file entry is not EXT:extension/Path")
		return
	}
	if !slices.Contains(st.r.extensions, key) {
		return
	}
	if depth > st.r.limits.WithDefaults().MaxIncludeDepth {
		st.note(parent, "include_static_file.txt nested deeper than the limit")
		return
	}
	seg := strings.TrimRight(path, " \t\n\r\x00\x0b") + "/"
	base := "EXT:" + key + "/" + seg
	if txt := base + "include_static_file.txt"; st.b.Exists(txt) {
		n := &typoscript.Include{Kind: typoscript.IncludeStaticFileFile, Name: txt, Path: entry}
		parent.Add(n)
		if content, err := st.b.ReadFile(txt); err == nil {
			seen := map[string]bool{}
			for e := range strings.SplitSeq(content, ",") {
				e = strings.TrimSpace(e)
				if e == "" || seen[e] {
					continue
				}
				seen[e] = true
				st.static(n, e, depth+1)
			}
		}
	}
	for _, ext := range []string{".typoscript", ".ts", ".txt"} {
		f := base + st.typ.String() + ext
		if inc, ok := st.b.File(typoscript.IncludeFile, f, f); ok {
			parent.Add(inc)
		}
	}
	lookup := strings.ReplaceAll(key, "_", "") + "/" + seg
	st.b.MagicContentRendering(parent, lookup, "TYPO3_CONF_VARS defaultContentRendering "+st.typ.String()+" for "+lookup)
}

// note records a finding on a node that cannot be built.
func (st *treeState) note(n *typoscript.Include, detail string) {
	st.b.AddFinding(n, 0, typoscript.KindStaticInvalid, detail)
}

// extensionStatics adds every active extension's
// ext_typoscript_<type>.typoscript.
func (st *treeState) extensionStatics(node *typoscript.Include) {
	for _, ext := range st.r.extensions {
		f := "EXT:" + ext + "/ext_typoscript_" + st.typ.String() + ".typoscript"
		if !st.b.Exists(f) {
			continue
		}
		st.b.MagicContentRendering(node, strings.ReplaceAll(ext, "_", ""),
			"TYPO3_CONF_VARS defaultContentRendering "+st.typ.String()+" for "+ext)
		if inc, ok := st.b.File(typoscript.IncludeExtensionStatic, f, f); ok {
			node.Add(inc)
		}
	}
}

// basedOn is handleIncludeBasedOnTemplates: the listed templates in list
// order, each at most once per tree, their own content before their
// includes.
func (st *treeState) basedOn(node *typoscript.Include, csv string) error {
	var uids []int64
	for e := range strings.SplitSeq(csv, ",") {
		if e = strings.TrimSpace(e); e == "" {
			continue
		}
		n, _ := strconv.ParseInt(e, 10, 64)
		if !st.included[n] {
			uids = append(uids, n)
		}
	}
	if len(uids) == 0 {
		return nil
	}
	st.depth++
	defer func() { st.depth-- }()
	if st.depth > st.r.limits.WithDefaults().MaxIncludeDepth {
		st.note(node, "basedOn templates nested deeper than the limit")
		return nil
	}
	rows, err := st.r.src.SysTemplatesByUID(st.ctx, uids)
	if err != nil {
		return fmt.Errorf("read basedOn templates: %w", err)
	}
	for _, uid := range uids {
		row, ok := rows[uid]
		if !ok {
			continue
		}
		st.included[uid] = true
		n := st.templateNode(row)
		st.b.Parse(n, st.content(row))
		node.Add(n)
		if err := st.handleRow(n, row); err != nil {
			return err
		}
	}
	return nil
}

// siteTemplate is the include of a site that provides TypoScript (v13
// site sets): clear and root, global TypoScript, each set's file in
// dependency order, the site settings as constants, the content rendering
// definitions, then the site's own file.
func (st *treeState) siteTemplate(sets []*Set) *typoscript.Include {
	s := st.site
	node := &typoscript.Include{Kind: typoscript.IncludeSiteTemplate, Name: "Site TypoScript of site " + s.Identifier,
		Clear: true, Root: true}
	st.defaults(node)
	file := st.typ.String() + ".typoscript"
	for _, set := range sets {
		if inc, ok := st.b.File(typoscript.IncludeSet, set.ref(file), set.ref(file)); ok {
			node.Add(inc)
		}
	}
	if st.typ == typoscript.TypeConstants && len(st.settings) > 0 {
		node.Add(st.b.String(typoscript.IncludeSite, "Site constants settings of site "+s.Identifier, "",
			settingsTypoScript(st.settings)))
	}
	if st.typ == typoscript.TypeSetup && st.r.profile.ContentRenderingSetup != "" {
		node.Add(st.b.String(typoscript.IncludeDefaultTypoScriptMagicKey,
			"TYPO3_CONF_VARS defaultContentRendering setup for site "+s.Identifier, "", st.r.profile.ContentRenderingSetup))
	}
	own := filepath.Join(s.Dir, file)
	if inc, ok := st.b.File(typoscript.IncludeFile, "config/sites/"+s.Identifier+"/"+file, own); ok {
		node.Add(inc)
	}
	return node
}

// extConf returns an extension configuration value: the override if
// given, else the ext_conf_template.txt default.
func (r *Resolver) extConf(ext, path string) (string, bool) {
	if v, ok := r.overrides[ext][path]; ok {
		return v, true
	}
	r.confMu.Lock()
	defer r.confMu.Unlock()
	m, ok := r.conf[ext]
	if !ok {
		m = map[string]string{}
		if slices.Contains(r.extensions, ext) {
			b := r.builder(typoscript.TypeOther)
			inc, found := b.File(typoscript.IncludeFile, "ext_conf_template.txt", "EXT:"+ext+"/ext_conf_template.txt")
			if found {
				m = typoscript.BuildAST(inc, typoscript.ASTParams{Limits: r.limits}).Root.FlatMap()
			}
			b.Close()
		}
		r.conf[ext] = m
	}
	v, ok := m[path]
	return v, ok
}
