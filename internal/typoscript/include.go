package typoscript

import (
	"errors"
	"path/filepath"
	"strconv"
	"strings"
)

// IncludeKind names an include-tree node like TYPO3's IncludeNode classes.
type IncludeKind uint8

const (
	IncludeRoot IncludeKind = iota
	IncludeSysTemplate
	IncludeSiteTemplate
	IncludeSite
	IncludeSet
	IncludeDefaultTypoScript
	IncludeDefaultTypoScriptMagicKey
	IncludeStaticFileDatabase
	IncludeStaticFileFile
	IncludeFile
	IncludeExtensionStatic
	IncludeAtImport
	IncludeTyposcript
	IncludeConditionIncludeTyposcript
	IncludeSegment
	IncludeCondition
	IncludeConditionElse
	IncludeConditionStop
	IncludeTsConfig
	IncludeString
)

var includeKindNames = [...]string{
	IncludeRoot: "RootInclude", IncludeSysTemplate: "SysTemplateInclude", IncludeSiteTemplate: "SiteTemplateInclude",
	IncludeSite: "SiteInclude", IncludeSet: "SetInclude", IncludeDefaultTypoScript: "DefaultTypoScriptInclude",
	IncludeDefaultTypoScriptMagicKey: "DefaultTypoScriptMagicKeyInclude",
	IncludeStaticFileDatabase:        "IncludeStaticFileDatabaseInclude", IncludeStaticFileFile: "IncludeStaticFileFileInclude",
	IncludeFile: "FileInclude", IncludeExtensionStatic: "ExtensionStaticInclude", IncludeAtImport: "AtImportInclude",
	IncludeTyposcript: "IncludeTyposcriptInclude", IncludeConditionIncludeTyposcript: "ConditionIncludeTyposcriptInclude",
	IncludeSegment: "SegmentInclude", IncludeCondition: "ConditionInclude", IncludeConditionElse: "ConditionElseInclude",
	IncludeConditionStop: "ConditionStopInclude", IncludeTsConfig: "TsConfigInclude", IncludeString: "StringInclude",
}

func (k IncludeKind) String() string {
	if int(k) < len(includeKindNames) {
		return includeKindNames[k]
	}
	return "Include"
}

// isCondition reports whether nodes of kind k are decided by a condition.
func (k IncludeKind) isCondition() bool {
	return k == IncludeCondition || k == IncludeConditionElse || k == IncludeConditionIncludeTyposcript
}

// Include is one node of an include tree: a source (record field, file,
// string) or a part of one (segment, condition body). A node that was
// split has its content in its children; otherwise Lines is its content.
type Include struct {
	Kind IncludeKind
	// Name is what TYPO3 shows: an EXT: path, "[sys_template:2] Title", ….
	Name string
	// Path is the reference relative imports resolve against ("EXT:…" or
	// an absolute path); empty for record fields and strings.
	Path     string
	Lines    []Line
	Split    bool
	Children []*Include
	// Cond is the condition as written, for condition kinds.
	Cond string
	// Line is the line in the parent that produced this node: the
	// condition or the @import line.
	Line int
	// Clear and Root are the sys_template flags of template kinds.
	Clear, Root bool
}

func (inc *Include) add(c *Include) { inc.Children = append(inc.Children, c) }

// Add appends a child; resolution code uses it to assemble trees.
func (inc *Include) Add(c *Include) { inc.add(c) }

// Walk calls fn for inc and its descendants, depth first, parents first;
// fn returning false skips a node's children.
func (inc *Include) Walk(fn func(n *Include, depth int) bool) {
	var walk func(n *Include, depth int)
	walk = func(n *Include, depth int) {
		if !fn(n, depth) {
			return
		}
		for _, c := range n.Children {
			walk(c, depth+1)
		}
	}
	walk(inc, 0)
}

// TreeString renders the include tree one node per line, "Kind: Name" with
// two spaces per level and the condition in brackets, the form of the
// golden include-tree files. conds, when given, maps condition nodes to
// the expression to show (after constant substitution).
func (inc *Include) TreeString(conds map[*Include]string) string {
	var b strings.Builder
	inc.Walk(func(n *Include, depth int) bool {
		b.WriteString(strings.Repeat("  ", depth))
		b.WriteString(n.Kind.String())
		b.WriteString(": ")
		b.WriteString(n.Name)
		if n.Kind.isCondition() {
			c := n.Cond
			if s, ok := conds[n]; ok {
				c = s
			}
			b.WriteString(" [" + c + "]")
		}
		b.WriteByte('\n')
		return true
	})
	return b.String()
}

// SourceType selects the import suffixes and the frontend-only magic.
type SourceType uint8

const (
	// TypeSetup and TypeConstants are frontend TypoScript: @import takes
	// .typoscript files, and imports of EXT: files may pull in TYPO3's
	// "defaultContentRendering".
	TypeSetup SourceType = iota
	TypeConstants
	// TypeTSconfig imports .typoscript and .tsconfig files.
	TypeTSconfig
	// TypeOther is any other TypoScript (.typoscript, no magic).
	TypeOther
)

func (t SourceType) String() string {
	switch t {
	case TypeSetup:
		return "setup"
	case TypeConstants:
		return "constants"
	case TypeTSconfig:
		return "tsconfig"
	}
	return "other"
}

func (t SourceType) suffixes() []string {
	if t == TypeTSconfig {
		return []string{"typoscript", "tsconfig"}
	}
	return []string{"typoscript"}
}

// BuildParams configures a Builder.
type BuildParams struct {
	Type SourceType
	// Paths resolves EXT: references; nil resolves none.
	Paths ExtensionPaths
	// ProjectRoot bounds absolute references (site configuration files);
	// PublicDir (default ProjectRoot/public) is where plain relative
	// references point, as in TYPO3.
	ProjectRoot, PublicDir string
	Limits                 Limits
	// ContentRendering is TYPO3's FE.contentRenderingTemplates ("extkey
	// without underscores/Path/") and DefaultContentRendering the
	// TypoScript registered as "defaultContentRendering" for this type.
	// An @import of a matching EXT: file is followed by it.
	ContentRendering        []string
	DefaultContentRendering string
	// Loaded reports whether an extension is active; nil means any
	// extension Paths resolves.
	Loaded func(key string) bool
	// Cache, when set, serves files and directory listings read by
	// earlier builds that are unchanged on disk (see FileCache).
	Cache *FileCache
}

// Builder turns sources into include trees, reading imported files. It
// keeps the limits across everything it builds, so use one Builder per
// resolution. It is not safe for concurrent use.
type Builder struct {
	p        BuildParams
	lim      Limits
	fs       *files
	findings []Finding
	imports  int
	bytes    int
	lines    int      // logical lines tokenized so far
	stack    []string // files being built, for cycle detection
	// handled marks import lines (by include name) that already have a
	// finding, so Scan does not add "import.empty" for them too.
	handled map[string]map[int]bool
}

// NewBuilder prepares a Builder.
func NewBuilder(p BuildParams) *Builder {
	fs := newFiles(p.Paths, p.ProjectRoot, p.PublicDir, p.Cache)
	fs.loaded = p.Loaded
	return &Builder{
		p:       p,
		lim:     p.Limits.withDefaults(),
		fs:      fs,
		handled: map[string]map[int]bool{},
	}
}

// Close releases the directory handles the Builder opened.
func (b *Builder) Close() { b.fs.close() }

// Type is the builder's source type.
func (b *Builder) Type() SourceType { return b.p.Type }

// Findings returns what building found: import cycles, exceeded limits,
// unreadable files. Syntax findings come from Scan.
func (b *Builder) Findings() []Finding { return b.findings }

func (b *Builder) addFinding(inc *Include, line int, kind, detail string) {
	b.findings = append(b.findings, Finding{Include: inc.Name, Line: line, Kind: kind, Detail: detail})
	if line > 0 && kind != KindDeprecated {
		m := b.handled[inc.Name]
		if m == nil {
			m = map[int]bool{}
			b.handled[inc.Name] = m
		}
		m[line] = true
	}
}

// String builds a node of kind from source text (a record field, a
// configured string). path, if set, anchors relative imports.
func (b *Builder) String(kind IncludeKind, name, path, src string) *Include {
	inc := &Include{Kind: kind, Name: name, Path: path}
	b.Parse(inc, src)
	return inc
}

// tokenize runs Tokenize with what is left of the build's line budget.
func (b *Builder) tokenize(src string) []Line {
	lim := b.lim
	lim.MaxLines = b.lim.MaxLines - b.lines
	if lim.MaxLines <= 0 {
		return []Line{{Kind: LineInvalid, Num: 1, Problem: ProblemTooManyLines}}
	}
	lines := Tokenize(src, lim)
	b.lines += len(lines)
	return lines
}

// Parse tokenizes src into inc and splits it; existing children stay
// first, so a node's own content comes after its includes.
func (b *Builder) Parse(inc *Include, src string) {
	if !b.account(inc, len(src)) {
		return
	}
	inc.Lines = b.tokenize(src)
	b.split(inc, 0)
}

// AddFinding records a finding of resolution code on inc.
func (b *Builder) AddFinding(inc *Include, line int, kind, detail string) {
	b.addFinding(inc, line, kind, detail)
}

// File builds a node of kind from the file at ref ("EXT:…" or an absolute
// path below the project root). ok is false when the file does not exist
// or cannot be read; a read problem is also recorded as a finding.
func (b *Builder) File(kind IncludeKind, name, ref string) (*Include, bool) {
	inc := &Include{Kind: kind, Name: name, Path: ref}
	if !b.fs.isFile(ref) {
		return inc, false
	}
	return inc, b.fill(inc, ref, 0, nil, 0)
}

// Exists reports whether ref names a readable regular file.
func (b *Builder) Exists(ref string) bool { return b.fs.isFile(ref) }

// IsDir reports whether ref names a directory.
func (b *Builder) IsDir(ref string) bool { return b.fs.isDir(ref) }

// ReadFile returns a file's content within the source size limit.
func (b *Builder) ReadFile(ref string) (string, error) {
	return b.fs.read(ref, b.lim.MaxSourceBytes)
}

// account counts a source against the total-bytes limit.
func (b *Builder) account(inc *Include, n int) bool {
	if b.bytes+n > b.lim.MaxTotalBytes {
		b.addFinding(inc, 0, KindLimit, "total size of all sources exceeds the limit")
		return false
	}
	b.bytes += n
	return true
}

// fill reads ref into inc and splits it; parent/line say which @import
// asked for it (for findings), depth is the import nesting.
func (b *Builder) fill(inc *Include, ref string, depth int, parent *Include, line int) bool {
	report := inc
	if parent != nil {
		report = parent
	}
	if b.imports >= b.lim.MaxImports {
		b.addFinding(report, line, KindLimit, "more included files than the limit")
		return false
	}
	key := b.fileKey(ref)
	for _, s := range b.stack {
		if s == key {
			b.addFinding(report, line, KindImportCycle, "the file includes itself")
			return false
		}
	}
	e, err := b.fs.load(ref, b.lim.MaxSourceBytes)
	if err != nil {
		detail := "file cannot be read"
		kind := KindImportUnreadable
		if errors.Is(err, errTooLarge) {
			detail, kind = "file larger than the limit", KindLimit
		}
		b.addFinding(report, line, kind, detail)
		return false
	}
	if !b.account(report, len(e.src)) {
		return false
	}
	b.imports++
	budget := b.lim.MaxLines - b.lines
	if lines, ok := e.linesFor(b.lim, budget); ok {
		inc.Lines = lines
		b.lines += len(lines)
	} else {
		inc.Lines = b.tokenize(e.src)
		b.fs.keepLines(e, inc.Lines, b.lim, budget)
	}
	b.stack = append(b.stack, key)
	b.split(inc, depth)
	b.stack = b.stack[:len(b.stack)-1]
	return true
}

// fileKey identifies a file for cycle detection: its resolved path when
// known, else the reference.
func (b *Builder) fileKey(ref string) string {
	dir, rel, err := b.fs.locate(ref)
	if err != nil {
		return ref
	}
	return filepath.Join(dir, filepath.FromSlash(rel))
}

// split cuts inc's lines into segments, condition nodes and imports, as
// TYPO3's TreeFromLineStreamBuilder::buildTreeInternal does.
func (b *Builder) split(inc *Include, depth int) {
	node, parent := inc, inc
	// Segments are sub-slices of inc.Lines: a segment is always a run of
	// consecutive lines, so nothing is copied.
	start, end := -1, -1
	child := segmentOf(node)
	flush := func() {
		if start >= 0 {
			child.Lines = inc.Lines[start:end:end]
			node.add(child)
			start = -1
		}
	}
	for i, line := range inc.Lines {
		one := inc.Lines[i : i+1 : i+1]
		if line.Kind == LineCondition && node.Kind == IncludeCondition {
			// A new condition ends the current one.
			node.Split = true
			flush()
			node = parent
		}
		switch {
		case line.Kind == LineCondition:
			node.Split = true
			flush()
			c := &Include{Kind: IncludeCondition, Split: true, Name: node.Name, Path: node.Path,
				Cond: line.Value, Line: line.Num, Lines: one}
			node.add(c)
			parent, node = node, c
			child = segmentOf(node)
			continue
		case line.Kind == LineConditionStop:
			// [END] / [GLOBAL] closes an open condition (the line ends the
			// condition's last segment); in v13 it is also a node of its
			// own at the outer level, inside a condition or not.
			node.Split = true
			if node.Kind == IncludeCondition || node.Kind == IncludeConditionElse {
				if start < 0 {
					start = i
				}
				end = i + 1
				flush()
				node = parent
				node.Split = true
			} else {
				flush()
			}
			node.add(&Include{Kind: IncludeConditionStop, Name: node.Name, Path: node.Path, Line: line.Num, Lines: one})
			child = segmentOf(node)
			continue
		case line.Kind == LineElse && node.Kind == IncludeCondition:
			node.Split = true
			flush()
			cond, condLine := node.Cond, node.Line
			node = parent
			e := &Include{Kind: IncludeConditionElse, Split: true, Name: node.Name, Path: node.Path,
				Cond: cond, Line: condLine, Lines: one}
			node.add(e)
			parent, node = node, e
			child = segmentOf(node)
			continue
		case line.Kind == LineImport:
			node.Split = true
			flush()
			child = segmentOf(node)
			for _, suffix := range b.p.Type.suffixes() {
				b.atImport(suffix, node, line, depth, false)
			}
			continue
		case line.Kind == LineImportOld:
			node.Split = true
			flush()
			child = segmentOf(node)
			b.includeTyposcript(node, line, depth)
			continue
		}
		if start < 0 {
			start = i
		}
		end = i + 1
	}
	if node.Split {
		flush()
	}
}

func segmentOf(n *Include) *Include {
	return &Include{Kind: IncludeSegment, Name: n.Name, Path: n.Path}
}

// atImport resolves one @import for one suffix (TreeFromLineStreamBuilder::
// processAtImport): a file, a directory, a file without suffix, one "*"
// in the file name, and failing those a path relative to the importing
// file.
func (b *Builder) atImport(suffix string, node *Include, line Line, depth int, relative bool) {
	value := line.Value
	if relative {
		if node.Path == "" {
			return
		}
		value = strings.TrimRight(phpDirname(node.Path), "/") + "/" + strings.TrimLeft(value, "./")
	}
	if _, _, err := b.fs.locate(value); err != nil && strings.HasPrefix(value, "EXT:") {
		return
	}
	ref := strings.TrimRight(value, "/")
	ext := "." + suffix
	switch {
	case strings.HasSuffix(ref, ext) && b.fs.isFile(ref):
		if validFileName(ref) {
			b.importFile(node, ref, value, line, depth)
		}
	case b.fs.isDir(ref):
		for _, e := range b.fs.list(ref) {
			if e.isDir || !strings.HasSuffix(e.name, ext) || !validFileName(e.name) {
				continue
			}
			id := strings.TrimRight(value, "/") + "/" + e.name
			b.importFile(node, ref+"/"+e.name, id, line, depth)
		}
	case b.fs.isFile(ref + ext):
		if validFileName(ref + ext) {
			b.importFile(node, ref+ext, value+ext, line, depth)
		}
	case strings.Contains(ref, "*"):
		dir := phpDirname(ref)
		if !b.fs.isDir(dir) {
			if strings.HasPrefix(value, "./") && !relative {
				b.atImport(suffix, node, line, depth, true)
			}
			return
		}
		pattern := ref[len(dir):]
		pattern = strings.TrimPrefix(pattern, "/")
		if !strings.Contains(pattern, "*") || strings.Count(pattern, "*") > 1 {
			return
		}
		if strings.HasSuffix(pattern, suffix) {
			pattern = strings.TrimRight(pattern[:len(pattern)-len(suffix)], ".")
		}
		pattern += ext
		star := strings.IndexByte(pattern, '*')
		left, right := pattern[:star], pattern[star+1:]
		for _, e := range b.fs.list(dir) {
			if e.isDir || !strings.HasPrefix(e.name, left) || !strings.HasSuffix(e.name, right) || !validFileName(e.name) {
				continue
			}
			id := strings.TrimRight(phpDirname(value), "/") + "/" + e.name
			b.importFile(node, dir+"/"+e.name, id, line, depth)
		}
	case !relative:
		b.atImport(suffix, node, line, depth, true)
	}
}

// importFile adds an AtImportInclude for ref named id, then the
// defaultContentRendering magic for it.
func (b *Builder) importFile(node *Include, ref, id string, line Line, depth int) {
	if depth+1 > b.lim.MaxIncludeDepth {
		b.addFinding(node, line.Num, KindLimit, "imports nested deeper than the limit")
		return
	}
	inc := &Include{Kind: IncludeAtImport, Name: id, Path: id, Line: line.Num}
	if !b.fill(inc, ref, depth+1, node, line.Num) {
		return
	}
	node.add(inc)
	b.contentRendering(node, id, "TYPO3_CONF_VARS defaultContentRendering for "+id)
}

// ContentRendering adds TYPO3's "defaultContentRendering" TypoScript below
// parent when identifier (an EXT: file of this builder's type) lies in one
// of the content rendering template folders, like TreeFromLineStreamBuilder
// ::addStaticMagicFromGlobals.
func (b *Builder) contentRendering(parent *Include, identifier, name string) {
	if (b.p.Type != TypeSetup && b.p.Type != TypeConstants) || b.p.DefaultContentRendering == "" {
		return
	}
	rest, ok := strings.CutPrefix(identifier, "EXT:")
	if !ok {
		return
	}
	key, rel := splitExtPath(rest)
	if key == "" || !b.loaded(key) {
		return
	}
	base := rel
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		base = rel[i+1:]
	}
	typ, _, _ := strings.Cut(base, ".")
	if typ != b.p.Type.String() {
		return
	}
	lookup := strings.ReplaceAll(key, "_", "") + "/" + strings.TrimRight(phpDirname(rel), " ") + "/"
	b.MagicContentRendering(parent, lookup, name)
}

// MagicContentRendering adds the defaultContentRendering node named name
// below parent when lookup ("extkeywithoutunderscores/Path/") is a content
// rendering template.
func (b *Builder) MagicContentRendering(parent *Include, lookup, name string) {
	if b.p.DefaultContentRendering == "" {
		return
	}
	for _, t := range b.p.ContentRendering {
		if t == lookup {
			parent.add(b.String(IncludeDefaultTypoScriptMagicKey, name, "", b.p.DefaultContentRendering))
			return
		}
	}
}

func (b *Builder) loaded(key string) bool {
	if b.p.Loaded != nil {
		return b.p.Loaded(key)
	}
	if b.p.Paths == nil {
		return false
	}
	_, err := b.p.Paths.Path("EXT:" + key)
	return err == nil
}

// splitExtPath is GeneralUtility::trimExplode('/', $s, true, 2) as TYPO3
// splits "key/Path": empty segments vanish, so "Path/" has no trailing
// slash and "a//b" is "a/b".
func splitExtPath(s string) (key, rel string) {
	var segs []string
	for seg := range strings.SplitSeq(s, "/") {
		if strings.TrimSpace(seg) != "" {
			segs = append(segs, seg)
		}
	}
	if len(segs) == 0 {
		return "", ""
	}
	return strings.TrimSpace(segs[0]), strings.TrimSpace(strings.Join(segs[1:], "/"))
}

// SplitExtPath exports splitExtPath for resolution code.
func SplitExtPath(s string) (key, rel string) { return splitExtPath(s) }

// includeTyposcript handles the deprecated <INCLUDE_TYPOSCRIPT: …> as
// TYPO3 v13 still does: source="FILE:…" (EXT:, "./" relative or public
// relative) or source="DIR:…" (recursive, optional extensions="…"),
// optionally under condition="…".
func (b *Builder) includeTyposcript(node *Include, line Line, depth int) {
	b.addFinding(node, line.Num, KindDeprecated, "INCLUDE_TYPOSCRIPT is deprecated in TYPO3 v13 and ignored from v14; use @import")
	source := attribute(line.Value, "source")
	source = strings.NewReplacer(" ", "", "\t", "").Replace(source)
	if source == "" {
		return
	}
	cond := attribute(line.Value, "condition")
	if strings.HasPrefix(cond, "[") && strings.HasSuffix(cond, "]") && len(cond) >= 2 {
		cond = cond[1 : len(cond)-1]
	}
	cond = stripSlashes(cond)
	var exts []string
	for e := range strings.SplitSeq(attribute(line.Value, "extensions"), ",") {
		if e = strings.TrimSpace(e); e != "" {
			exts = append(exts, e)
		}
	}
	target := func(name string) *Include {
		if cond == "" {
			return node
		}
		c := &Include{Kind: IncludeConditionIncludeTyposcript, Split: true, Name: name, Cond: cond, Line: line.Num}
		node.add(c)
		return c
	}
	switch {
	case strings.HasPrefix(source, "FILE:./"):
		if node.Path == "" {
			return
		}
		name := phpDirname(node.Path) + "/" + source[len("FILE:./"):]
		if validFileName(name) && b.fs.isFile(name) {
			b.includeFile(target(name), name, line, depth)
		}
	case strings.HasPrefix(source, "FILE:"):
		name := source[len("FILE:"):]
		if validFileName(name) && b.fs.isFile(name) {
			t := target(name)
			b.includeFile(t, name, line, depth)
			b.contentRendering(t, name, "TYPO3_CONF_VARS defaultContentRendering for "+name)
		}
	case strings.HasPrefix(source, "DIR:"):
		dir := strings.TrimRight(source[len("DIR:"):], "/")
		if !b.fs.isDir(dir) {
			return
		}
		b.includeDir(target(dir), dir, exts, line, depth, 0)
	}
}

func (b *Builder) includeDir(node *Include, dir string, exts []string, line Line, depth, level int) {
	if level > b.lim.MaxIncludeDepth {
		b.addFinding(node, line.Num, KindLimit, "directories nested deeper than the limit")
		return
	}
	var subdirs []string
	for _, e := range b.fs.list(dir) {
		if e.isDir {
			subdirs = append(subdirs, e.name)
			continue
		}
		if !validFileName(e.name) {
			continue
		}
		if len(exts) > 0 {
			ok := false
			for _, x := range exts {
				if strings.HasSuffix(e.name, x) {
					ok = true
					break
				}
			}
			if !ok {
				continue
			}
		}
		b.includeFile(node, dir+"/"+e.name, line, depth)
	}
	for _, s := range subdirs {
		b.includeDir(node, dir+"/"+s, exts, line, depth, level+1)
	}
}

func (b *Builder) includeFile(node *Include, name string, line Line, depth int) {
	if depth+1 > b.lim.MaxIncludeDepth {
		b.addFinding(node, line.Num, KindLimit, "imports nested deeper than the limit")
		return
	}
	inc := &Include{Kind: IncludeTyposcript, Name: name, Path: name, Line: line.Num}
	if b.fill(inc, name, depth+1, node, line.Num) {
		node.add(inc)
	}
}

// attribute reads name="value" from an INCLUDE_TYPOSCRIPT tag; in the
// value \" and \\ are escapes.
func attribute(tag, name string) string {
	i := 0
	for {
		j := strings.Index(tag[i:], name+`="`)
		if j < 0 {
			return ""
		}
		j += i
		if j > 0 && !isSpace(tag[j-1]) {
			i = j + 1
			continue
		}
		start := j + len(name) + 2
		for k := start; k < len(tag); k++ {
			if tag[k] == '\\' {
				k++
				continue
			}
			if tag[k] == '"' {
				return tag[start:k]
			}
		}
		return tag[start:]
	}
}

// stripSlashes is PHP's stripslashes.
func stripSlashes(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '0' {
				b.WriteByte(0)
				continue
			}
		} else if s[i] == '\\' {
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Finding kinds. The first four are TYPO3's own (IncludeTreeSyntaxScanner).
const (
	KindLineInvalid      = "line.invalid"
	KindBraceExcess      = "brace.excess"
	KindBraceMissing     = "brace.missing"
	KindImportEmpty      = "import.empty"
	KindImportCycle      = "import.cycle"
	KindImportUnreadable = "import.unreadable"
	KindLimit            = "limit"
	KindModifier         = "modifier"
	KindGetEnv           = "modifier.getEnv"
	KindStaticInvalid    = "include_static_file.invalid"
	KindDeprecated       = "import.deprecated"
)

// Finding is one problem, located by include name and line. It never
// carries the text of the offending line.
type Finding struct {
	Include string `json:"include"`
	Line    int    `json:"line"`
	Kind    string `json:"kind"`
	Detail  string `json:"detail,omitempty"`
}

func (f Finding) String() string {
	s := f.Include
	if f.Line > 0 {
		s += ", line " + strconv.Itoa(f.Line)
	}
	s += ": " + f.Kind
	if f.Detail != "" {
		s += " (" + f.Detail + ")"
	}
	return s
}

// Scan lists the syntax findings of a tree the way TYPO3's
// IncludeTreeSyntaxScannerVisitor does: invalid lines and unbalanced
// braces per unsplit node, and imports that included nothing. Findings of
// b (cycles, limits) come first when b is given.
func Scan(root *Include, b *Builder) []Finding {
	var out []Finding
	var handled map[string]map[int]bool
	if b != nil {
		out = append(out, b.findings...)
		handled = b.handled
	}
	root.Walk(func(n *Include, _ int) bool {
		if !n.Split {
			depth, last := 0, 0
			for _, l := range n.Lines {
				last = l.Num
				switch l.Kind {
				case LineInvalid:
					out = append(out, Finding{Include: n.Name, Line: l.Num, Kind: KindLineInvalid, Detail: l.Problem})
				case LineBlockOpen:
					depth++
				case LineBlockClose:
					depth--
					if depth < 0 {
						depth = 0
						out = append(out, Finding{Include: n.Name, Line: l.Num, Kind: KindBraceExcess})
					}
				}
			}
			if depth != 0 {
				out = append(out, Finding{Include: n.Name, Line: last, Kind: KindBraceMissing})
			}
			return true
		}
		imports := map[int]bool{}
		for _, l := range n.Lines {
			if l.Kind == LineImport || l.Kind == LineImportOld {
				imports[l.Num] = true
			}
		}
		if len(imports) == 0 {
			return true
		}
		for _, c := range n.Children {
			if c.Kind == IncludeAtImport || c.Kind == IncludeTyposcript {
				delete(imports, c.Line)
			}
			if c.Kind.isCondition() {
				for _, cc := range c.Children {
					if cc.Kind == IncludeAtImport || cc.Kind == IncludeTyposcript {
						delete(imports, cc.Line)
					}
				}
			}
		}
		for _, l := range n.Lines {
			if imports[l.Num] && !handled[n.Name][l.Num] {
				out = append(out, Finding{Include: n.Name, Line: l.Num, Kind: KindImportEmpty})
			}
		}
		return true
	})
	return out
}
