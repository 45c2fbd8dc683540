package structure

// RenderFlexForm exposes the data structure renderer to the fuzz target
// in package structure_test; sheet FILE: references are not followed.
func RenderFlexForm(src []byte) (string, error) {
	return renderDataStructure(src, newLabels(nil), nil)
}

// JoinBase exposes the site/language base join to its fuzz target.
func JoinBase(site, lang string) (host, path string, ok bool) { return joinBase(site, lang) }
