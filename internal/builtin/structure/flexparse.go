package structure

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/t3agent/t3agent/internal/typo3/tca"
)

// Bounds of FlexForm data structure parsing. Real data structures are a
// few kilobytes with a nesting depth below 15.
const (
	maxDSBytes    = 1 << 20
	maxXMLDepth   = 64
	maxXMLNodes   = 50000
	maxXMLText    = 64 << 10
	maxFlexLines  = 500
	maxFlexNested = 4
)

var errXMLTooLarge = errors.New("the XML is too large or too deeply nested")

// xnode is one element of a parsed XML document the way TYPO3's
// xml2array sees it: an element's key is its index attribute when it has
// one (<numIndex index="0">), its tag name otherwise.
type xnode struct {
	name     string
	children []*xnode
	text     string
}

// child returns the first child with key name, or nil.
func (n *xnode) child(name string) *xnode {
	if n == nil {
		return nil
	}
	for _, c := range n.children {
		if c.name == name {
			return c
		}
	}
	return nil
}

// str returns the trimmed text of child name ("" when absent).
func (n *xnode) str(name string) string {
	if c := n.child(name); c != nil {
		return strings.TrimSpace(c.text)
	}
	return ""
}

// parseXML reads one XML document into a tree. encoding/xml expands only
// the five predefined entities and never fetches external DTDs or
// entities, so a DOCTYPE is inert; size, depth and node count are bounded.
func parseXML(b []byte) (*xnode, error) {
	if len(b) > maxDSBytes {
		return nil, errXMLTooLarge
	}
	d := xml.NewDecoder(bytes.NewReader(b))
	d.CharsetReader = charsetReader
	var root *xnode
	var stack []*xnode
	nodes := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("the XML is not well-formed: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			nodes++
			if nodes > maxXMLNodes || len(stack) >= maxXMLDepth {
				return nil, errXMLTooLarge
			}
			n := &xnode{name: t.Name.Local}
			if idx := attr(t, "index"); idx != "" {
				n.name = idx
			}
			if len(stack) == 0 {
				if root != nil {
					return nil, errors.New("the XML has more than one root element")
				}
				root = n
			} else {
				p := stack[len(stack)-1]
				p.children = append(p.children, n)
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				n := stack[len(stack)-1]
				if len(n.text)+len(t) <= maxXMLText {
					n.text += string(t)
				}
			}
		}
	}
	if root == nil {
		return nil, errors.New("the XML has no root element")
	}
	return root, nil
}

// dsSheet is one sheet of a data structure: its key and its ROOT node, or
// a FILE: reference still to be loaded.
type dsSheet struct {
	key  string
	root *xnode
	file string
}

// dsSheets lists the sheets of a parsed <T3DataStructure>: a top-level
// <ROOT> is sheet sDEF (as FlexFormTools normalises it); <sheets> children
// are taken in order, each with its <ROOT> or a FILE: reference.
func dsSheets(doc *xnode) ([]dsSheet, error) {
	if sheets := doc.child("sheets"); sheets != nil {
		out := make([]dsSheet, 0, len(sheets.children))
		for _, s := range sheets.children {
			sh := dsSheet{key: s.name, root: s.child("ROOT")}
			if sh.root == nil {
				if ref := strings.TrimSpace(s.text); strings.HasPrefix(ref, "FILE:") {
					sh.file = strings.TrimPrefix(ref, "FILE:")
				}
			}
			out = append(out, sh)
		}
		return out, nil
	}
	if root := doc.child("ROOT"); root != nil {
		return []dsSheet{{key: "sDEF", root: root}}, nil
	}
	return nil, errors.New("the data structure has neither <sheets> nor <ROOT>")
}

// sheetRootOf finds the ROOT of a sheet loaded from a FILE: reference:
// the file's <ROOT> element, or the document itself when xml2array would
// have unwrapped it to ROOT's content (type, el).
func sheetRootOf(doc *xnode) *xnode {
	if r := doc.child("ROOT"); r != nil {
		return r
	}
	if doc.child("el") != nil {
		return doc
	}
	if sheets, err := dsSheets(doc); err == nil && len(sheets) == 1 && sheets[0].root != nil {
		return sheets[0].root
	}
	return nil
}

// unwrap merges a pre-v12 <TCEforms> wrapper into its element, so label,
// config and sheetTitle are found in either place.
func unwrap(n *xnode) *xnode {
	w := n.child("TCEforms")
	if w == nil {
		return n
	}
	m := &xnode{name: n.name, text: n.text}
	m.children = append(m.children, w.children...)
	for _, c := range n.children {
		if c != w {
			m.children = append(m.children, c)
		}
	}
	return m
}

// flexRenderer writes sheets → fields, bounded in lines.
type flexRenderer struct {
	b         strings.Builder
	lines     int
	truncated bool
	lbl       *labels
}

func (r *flexRenderer) line(indent int, s string) {
	if r.lines >= maxFlexLines {
		r.truncated = true
		return
	}
	r.lines++
	r.b.WriteString(strings.Repeat("  ", indent))
	r.b.WriteString(s)
	r.b.WriteByte('\n')
}

// sheet renders one sheet: `Sheet: key (title)` and its fields.
func (r *flexRenderer) sheet(key string, root *xnode) {
	root = unwrap(root)
	head := "Sheet: " + clean(key, 64)
	if t := root.str("sheetTitle"); t != "" {
		head += " (" + r.lbl.text(t) + ")"
	}
	r.line(0, head)
	el := root.child("el")
	if el == nil || len(el.children) == 0 {
		r.line(0, "(no fields)")
		return
	}
	r.fields(el, 0, 0)
}

// fields renders the children of an <el>.
func (r *flexRenderer) fields(el *xnode, indent, depth int) {
	for _, f := range el.children {
		if r.truncated {
			return
		}
		r.field(f, indent, depth)
	}
}

// field renders one element: a field with config, a section with its
// containers, or a plain array grouping further fields.
func (r *flexRenderer) field(f *xnode, indent, depth int) {
	f = unwrap(f)
	name := clean(f.name, 80)
	label := f.str("label")
	if label == "" {
		label = f.str("title")
	}
	suffix := ""
	if label != "" {
		suffix = " (" + r.lbl.text(label) + ")"
	}
	isArray := f.str("type") == "array"
	if isArray && depth >= maxFlexNested {
		r.line(indent, "- "+name+": nested too deeply, not shown"+suffix)
		return
	}
	switch {
	case isArray && truthyText(f.str("section")):
		r.line(indent, "- "+name+": section"+suffix)
		el := f.child("el")
		if el == nil {
			return
		}
		for _, c := range el.children {
			if r.truncated {
				return
			}
			c = unwrap(c)
			title := c.str("title")
			if title == "" {
				title = c.str("label")
			}
			head := "- container " + clean(c.name, 80)
			if title != "" {
				head += " (" + r.lbl.text(title) + ")"
			}
			r.line(indent+1, head+":")
			if cel := c.child("el"); cel != nil {
				r.fields(cel, indent+2, depth+1)
			}
		}
	case isArray:
		r.line(indent, "- "+name+": array"+suffix)
		if el := f.child("el"); el != nil {
			r.fields(el, indent+1, depth+1)
		}
	default:
		cfg := f.child("config")
		if cfg == nil {
			r.line(indent, "- "+name+": (no config)"+suffix)
			return
		}
		r.line(indent, "- "+name+": "+describeColumn(&tca.Column{Config: flexConfig(cfg)})+suffix)
	}
}

// flexConfig reads the TCA-like <config> of a FlexForm field into the
// shape describeColumn takes.
func flexConfig(cfg *xnode) tca.ColumnConfig {
	raw := map[string]any{}
	for _, k := range []string{"foreign_field", "required", "eval"} {
		if v := cfg.str(k); v != "" {
			raw[k] = v
		}
	}
	return tca.ColumnConfig{
		Type:         cfg.str("type"),
		RenderType:   cfg.str("renderType"),
		ForeignTable: cfg.str("foreign_table"),
		MM:           cfg.str("MM"),
		Allowed:      cfg.str("allowed"),
		Raw:          raw,
	}
}

// truthyText reads a flag the way PHP casts a string.
func truthyText(s string) bool { return s != "" && s != "0" }

// renderDataStructure parses a data structure and renders its sheets.
// loadSheet resolves sheet-level FILE: references (nil: none allowed).
func renderDataStructure(src []byte, lbl *labels, loadSheet func(ref string) ([]byte, error)) (string, error) {
	doc, err := parseXML(src)
	if err != nil {
		return "", err
	}
	sheets, err := dsSheets(doc)
	if err != nil {
		return "", err
	}
	r := &flexRenderer{lbl: lbl}
	for _, sh := range sheets {
		if r.truncated {
			break
		}
		root := sh.root
		if root == nil && sh.file != "" && loadSheet != nil {
			b, err := loadSheet(sh.file)
			if err != nil {
				r.line(0, "Sheet: "+clean(sh.key, 64)+" — FILE:"+clean(sh.file, 200)+" cannot be read: "+err.Error())
				continue
			}
			sub, err := parseXML(b)
			if err != nil {
				r.line(0, "Sheet: "+clean(sh.key, 64)+" — FILE:"+clean(sh.file, 200)+": "+err.Error())
				continue
			}
			root = sheetRootOf(sub)
		}
		if root == nil {
			r.line(0, "Sheet: "+clean(sh.key, 64)+" — no ROOT element")
			continue
		}
		r.sheet(sh.key, root)
	}
	if r.truncated {
		r.b.WriteString(fmt.Sprintf("… output cut at %d lines.\n", maxFlexLines))
	}
	return strings.TrimRight(r.b.String(), "\n"), nil
}
