package typoscript

// Limits bound the work one parse or resolution may do, so hostile or broken
// input (deep nesting, huge values, import loops, copy bombs) costs bounded
// time and memory. A zero field means "use the default".
type Limits struct {
	// MaxSourceBytes caps one source: a file, a record field or a string.
	MaxSourceBytes int
	// MaxTotalBytes caps all sources read by one include-tree build.
	MaxTotalBytes int
	// MaxLines caps the logical lines of one include-tree build (one
	// Tokenize call on its own), bounding memory for sources of many tiny
	// lines.
	MaxLines int
	// MaxValueBytes caps one value: a multi-line value, a value after
	// constant substitution or after a modifier.
	MaxValueBytes int
	// MaxDepth caps the depth of an object path (block nesting plus dotted
	// segments) and so the recursion of every tree walk.
	MaxDepth int
	// MaxIncludeDepth caps nested @import / include levels.
	MaxIncludeDepth int
	// MaxImports caps the number of files one include-tree build reads.
	MaxImports int
	// MaxNodes caps the nodes of one syntax tree (copies included).
	MaxNodes int
	// MaxExprBytes caps the length of one condition expression; deeper
	// expression nesting than MaxDepth is refused as well.
	MaxExprBytes int
	// MaxOutputLines caps rendered output (Render).
	MaxOutputLines int
}

// DefaultLimits are generous for real installations: bootstrap_package with
// all core extensions uses well under a tenth of each.
func DefaultLimits() Limits {
	return Limits{
		MaxSourceBytes:  64 << 20,
		MaxTotalBytes:   128 << 20,
		MaxLines:        500000,
		MaxValueBytes:   1 << 20,
		MaxDepth:        128,
		MaxIncludeDepth: 32,
		MaxImports:      4000,
		MaxNodes:        1 << 20,
		MaxExprBytes:    8 << 10,
		MaxOutputLines:  300,
	}
}

// WithDefaults returns l with zero fields filled from DefaultLimits.
func (l Limits) WithDefaults() Limits { return l.withDefaults() }

// withDefaults fills zero fields from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	fill := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	fill(&l.MaxSourceBytes, d.MaxSourceBytes)
	fill(&l.MaxTotalBytes, d.MaxTotalBytes)
	fill(&l.MaxLines, d.MaxLines)
	fill(&l.MaxValueBytes, d.MaxValueBytes)
	fill(&l.MaxDepth, d.MaxDepth)
	fill(&l.MaxIncludeDepth, d.MaxIncludeDepth)
	fill(&l.MaxImports, d.MaxImports)
	fill(&l.MaxNodes, d.MaxNodes)
	fill(&l.MaxExprBytes, d.MaxExprBytes)
	fill(&l.MaxOutputLines, d.MaxOutputLines)
	return l
}
