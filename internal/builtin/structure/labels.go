package structure

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"

	"github.com/t3agent/t3agent/internal/typo3/extpath"
)

// Limits of label resolution within one call. XLF files of real
// extensions are far below them; they only bound hostile input.
const (
	maxXLFBytes = 2 << 20
	maxXLFFiles = 64
	maxXLFUnits = 20000
	maxLabel    = 160
)

// labels turns TYPO3 label references into text for one call: a plain
// string stays as it is; "LLL:EXT:ext/Resources/Private/Language/x.xlf:id"
// becomes the English source of trans-unit id when the XLF file is in the
// installation, and otherwise the id itself, which is usually descriptive
// enough ("tt_content.pi_flexform.show_permalogin") and needs no file.
// Files are parsed at most once per call.
type labels struct {
	exts  *extpath.Map // nil: no installation folder, ids only
	files map[string]map[string]string
}

func newLabels(exts *extpath.Map) *labels {
	return &labels{exts: exts, files: map[string]map[string]string{}}
}

// text resolves s and cleans it for one output line.
func (l *labels) text(s string) string {
	s = strings.TrimSpace(s)
	ref, ok := strings.CutPrefix(s, "LLL:")
	if !ok {
		return clean(s, maxLabel)
	}
	i := strings.LastIndexByte(ref, ':')
	if i < 0 {
		return clean(s, maxLabel)
	}
	file, id := strings.TrimSpace(ref[:i]), strings.TrimSpace(ref[i+1:])
	if id == "" {
		return clean(s, maxLabel)
	}
	if src, ok := l.unit(file, id); ok && strings.TrimSpace(src) != "" {
		return clean(src, maxLabel)
	}
	return clean(id, maxLabel)
}

// unit looks id up in the XLF file named by the EXT: reference file.
func (l *labels) unit(file, id string) (string, bool) {
	if l == nil || l.exts == nil || !strings.HasPrefix(file, "EXT:") {
		return "", false
	}
	units, seen := l.files[file]
	if !seen {
		if len(l.files) >= maxXLFFiles {
			return "", false
		}
		b, err := l.exts.ReadFile(file, maxXLFBytes)
		if err == nil {
			units = parseXLF(b)
		}
		l.files[file] = units // nil for unreadable files: do not retry
	}
	src, ok := units[id]
	return src, ok
}

// parseXLF reads the trans-unit sources of an XLIFF 1.2 file. A file that
// is not well-formed yields what was read before the error; labels are a
// convenience, and the id remains as the fallback.
func parseXLF(b []byte) map[string]string {
	units := map[string]string{}
	d := xml.NewDecoder(bytes.NewReader(b))
	d.CharsetReader = charsetReader
	var id string
	var inSource bool
	var text strings.Builder
	for len(units) < maxXLFUnits {
		tok, err := d.Token()
		if err != nil {
			break
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "trans-unit":
				id = attr(t, "id")
			case "source":
				if id != "" {
					inSource = true
					text.Reset()
				}
			}
		case xml.CharData:
			if inSource && text.Len() < 4*maxLabel {
				text.Write(t)
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "source":
				if inSource {
					if _, dup := units[id]; !dup {
						units[id] = text.String()
					}
					inSource = false
				}
			case "trans-unit":
				id = ""
			}
		}
	}
	return units
}

func attr(t xml.StartElement, name string) string {
	for _, a := range t.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// charsetReader accepts the encodings TYPO3 files declare: UTF-8 (and its
// ASCII subset) as is, ISO-8859-1 converted. Anything else is refused
// rather than misread.
func charsetReader(charset string, in io.Reader) (io.Reader, error) {
	switch strings.ToLower(strings.TrimSpace(charset)) {
	case "utf-8", "utf8", "us-ascii", "ascii":
		return in, nil
	case "iso-8859-1", "latin1", "latin-1":
		return &latin1Reader{r: in}, nil
	}
	return nil, errors.New("unsupported XML encoding " + charset)
}

// latin1Reader converts ISO-8859-1 bytes to UTF-8.
type latin1Reader struct {
	r   io.Reader
	buf []byte
}

func (l *latin1Reader) Read(p []byte) (int, error) {
	if len(p) < 2 {
		return 0, io.ErrShortBuffer
	}
	if cap(l.buf) < len(p)/2 {
		l.buf = make([]byte, len(p)/2)
	}
	in := l.buf[:len(p)/2]
	n, err := l.r.Read(in)
	out := 0
	for _, c := range in[:n] {
		if c < 0x80 {
			p[out] = c
			out++
			continue
		}
		p[out], p[out+1] = 0xC0|c>>6, 0x80|c&0x3F
		out += 2
	}
	return out, err
}
