package typoscript

import "strings"

// Origin says where something was set: the include's display name (an
// EXT: path, "[sys_template:2] Title", …) and the 1-based line in it.
type Origin struct {
	Include string `json:"include,omitempty"`
	Line    int    `json:"line,omitempty"`
}

// Node is one object of a TypoScript syntax tree. Children keep insertion
// order, as TYPO3's PHP arrays do.
type Node struct {
	Name string
	// Value is meaningful only when HasValue is set (TYPO3 distinguishes
	// an empty value from none).
	Value    string
	HasValue bool
	// Ref is the target of "=<" (IsRef); it is kept, never resolved.
	Ref   string
	IsRef bool
	// Origin is where the value (or the reference) was last set.
	Origin Origin
	// children may hold nil tombstones of removed nodes while a tree is
	// built (removal stays cheap for huge blocks); BuildAST compacts.
	children []*Node
	index    map[string]int // built once a node has many children
	dead     int            // tombstones in children
}

// indexThreshold is where a map lookup starts to pay off over a scan.
const indexThreshold = 16

// Children returns the child nodes in order. The slice must not be
// modified.
func (n *Node) Children() []*Node {
	if n.dead > 0 {
		n.compact()
	}
	return n.children
}

// Child returns the child called name, or nil.
func (n *Node) Child(name string) *Node {
	if n.index != nil {
		if i, ok := n.index[name]; ok {
			return n.children[i]
		}
		return nil
	}
	for _, c := range n.children {
		if c != nil && c.Name == name {
			return c
		}
	}
	return nil
}

// Lookup follows a path of child names; nil when any is missing.
func (n *Node) Lookup(path ...string) *Node {
	cur := n
	for _, p := range path {
		if cur = cur.Child(p); cur == nil {
			return nil
		}
	}
	return cur
}

// LookupDotted is Lookup on a dotted path; "\." is a literal dot.
func (n *Node) LookupDotted(path string) *Node {
	if path == "" {
		return n
	}
	segs, _ := parsePath(path)
	return n.Lookup(segs...)
}

// set adds c, or replaces a child of the same name in place (PHP's
// $children[$name] = $node keeps the key's position).
func (n *Node) set(c *Node) {
	if n.index != nil {
		if i, ok := n.index[c.Name]; ok {
			n.children[i] = c
			return
		}
	} else {
		for i, old := range n.children {
			if old != nil && old.Name == c.Name {
				n.children[i] = c
				return
			}
		}
	}
	n.children = append(n.children, c)
	if n.index != nil {
		n.index[c.Name] = len(n.children) - 1
	} else if len(n.children) > indexThreshold {
		n.reindex()
	}
}

func (n *Node) reindex() {
	n.index = make(map[string]int, len(n.children))
	for i, c := range n.children {
		if c != nil {
			n.index[c.Name] = i
		}
	}
}

// remove deletes the child called name, if any. It leaves a tombstone and
// compacts once they are the majority, so unsetting many children of a
// large block costs linear time overall.
func (n *Node) remove(name string) {
	i := -1
	if n.index != nil {
		if j, ok := n.index[name]; ok {
			i = j
			delete(n.index, name)
		}
	} else {
		for j, c := range n.children {
			if c != nil && c.Name == name {
				i = j
				break
			}
		}
	}
	if i < 0 {
		return
	}
	n.children[i] = nil
	n.dead++
	if n.dead > indexThreshold && n.dead*2 > len(n.children) {
		n.compact()
	}
}

// compact drops tombstones.
func (n *Node) compact() {
	live := n.children[:0]
	for _, c := range n.children {
		if c != nil {
			live = append(live, c)
		}
	}
	clear(n.children[len(live):])
	n.children, n.dead = live, 0
	if n.index != nil {
		n.reindex()
	}
}

// compactAll compacts n's whole subtree.
func (n *Node) compactAll() {
	if n.dead > 0 {
		n.compact()
	}
	for _, c := range n.children {
		c.compactAll()
	}
}

// clone deep-copies n (the "<" operator).
func (n *Node) clone() *Node {
	c := &Node{Name: n.Name, Value: n.Value, HasValue: n.HasValue, Ref: n.Ref, IsRef: n.IsRef, Origin: n.Origin}
	if len(n.children) > 0 {
		c.children = make([]*Node, 0, len(n.children)-n.dead)
		for _, ch := range n.children {
			if ch != nil {
				c.children = append(c.children, ch.clone())
			}
		}
		if n.index != nil {
			c.reindex()
		}
	}
	return c
}

// escapeName escapes dots in a name for a dotted key, like TYPO3's
// flatten (addcslashes($name, '.')).
func escapeName(name string) string {
	if !strings.Contains(name, ".") {
		return name
	}
	return strings.ReplaceAll(name, ".", `\.`)
}

// KV is one entry of a flattened tree.
type KV struct {
	Key   string
	Value string
}

// Flatten lists every value below n as dotted key = value in tree order,
// the form of TYPO3's RootNode::flatten(). References without a value do
// not appear (their target is not resolved).
func (n *Node) Flatten() []KV {
	var out []KV
	var walk func(prefix string, c *Node)
	walk = func(prefix string, c *Node) {
		key := prefix + escapeName(c.Name)
		if c.HasValue {
			out = append(out, KV{Key: key, Value: c.Value})
		}
		for _, g := range c.Children() {
			walk(key+".", g)
		}
	}
	for _, c := range n.Children() {
		walk("", c)
	}
	return out
}

// FlatMap is Flatten as a map, the form constants are looked up in.
func (n *Node) FlatMap() map[string]string {
	kv := n.Flatten()
	m := make(map[string]string, len(kv))
	for _, e := range kv {
		m[e.Key] = e.Value
	}
	return m
}

// ArrayEntry is one entry of the classic TypoScript array: "key" with a
// string value or "key." with nested entries.
type ArrayEntry struct {
	Key      string
	Value    string
	Children []ArrayEntry // set for "key." entries
}

// Array returns the classic TypoScript array form (RootNode::toArray):
// "name" = value and "name." = children, references shown as "< target".
func (n *Node) Array() []ArrayEntry {
	var out []ArrayEntry
	for _, c := range n.Children() {
		switch {
		case c.IsRef:
			out = append(out, ArrayEntry{Key: c.Name, Value: "< " + c.Ref})
		case c.HasValue:
			out = append(out, ArrayEntry{Key: c.Name, Value: c.Value})
		}
		if len(c.Children()) > 0 {
			out = append(out, ArrayEntry{Key: c.Name + ".", Children: c.Array()})
		}
	}
	return out
}
