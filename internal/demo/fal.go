package demo

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"path/filepath"
	"strings"
)

// The demo's file abstraction layer material (docs/demo-site.md, "Files
// and storages"): two Local storages, the files of sys_file on disk with
// the sizes and dimensions the rows record, one indexed file missing from
// disk, one file outside the editors' mount, hidden dotfiles, and file
// references from content and from pages.

// Fixed sys_file uids beyond the content images (1–16).
const (
	fileLogo        = 17
	fileDatasheet   = 18
	filePriceList   = 19 // in /internal/: outside the Editors' mount
	fileMissing     = 20 // sys_file.missing 1, not on disk
	fileArchiveOnly = 21 // on storage 2, outside the storage allow-list
)

// demoFileBytes returns the content of a demo file as written to disk; its
// length is sys_file.size. Images are small real JPEGs whose dimensions
// are the metadata's width and height.
func demoFileBytes(i int, f demoFile) []byte {
	switch f.ext {
	case "jpg":
		img := image.NewRGBA(image.Rect(0, 0, f.width, f.height))
		for y := 0; y < f.height; y++ {
			for x := 0; x < f.width; x++ {
				img.Set(x, y, color.RGBA{uint8(20 + i*13 + x/2), uint8(60 + y/2), uint8(140 + i*7), 255})
			}
		}
		var b bytes.Buffer
		if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 70}); err != nil {
			panic(err) // encoding into memory cannot fail
		}
		return b.Bytes()
	case "svg":
		b, err := skeleton.ReadFile("skeleton/packages/site_demo/Resources/Public/Images/logo.svg")
		if err != nil {
			panic(err) // embedded
		}
		return b
	}
	return minimalPDF(f.title)
}

// minimalPDF is a one-page PDF showing title.
func minimalPDF(title string) []byte {
	text := strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(title)
	stream := fmt.Sprintf("BT /F1 18 Tf 72 720 Td (%s) Tj ET", text)
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(stream), stream),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// storageDir is the directory below the public folder of each demo
// storage's basePath.
var storageDir = map[int]string{1: "fileadmin", 2: "archive"}

// writeFAL writes the files of every storage below root/public: each
// sys_file row's file except the one marked missing, plus files the index
// does not know (a notes file, two dotfiles that are never shown).
func writeFAL(root string) error {
	public := filepath.Join(root, "public")
	write := func(rel string, b []byte) error {
		p := filepath.Join(public, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, b, 0o644)
	}
	for i, f := range demoFileList() {
		if f.missing {
			continue
		}
		if err := write(storageDir[f.storage]+f.folder+f.name, demoFileBytes(i, f)); err != nil {
			return fmt.Errorf("write demo files: %w", err)
		}
	}
	for rel, text := range map[string]string{
		"fileadmin/user_upload/documents/README.txt": "Data sheets of the Aqua and Fjord series. Not yet indexed by TYPO3.\n",
		"fileadmin/user_upload/.editor-notes.txt":    "Hidden notes: never listed by t3agent.\n",
		"fileadmin/.htaccess":                        "# Protects nothing; dotfiles are never listed.\n",
		"fileadmin/internal/.htaccess":               "Require all denied\n",
	} {
		if err := write(rel, []byte(text)); err != nil {
			return fmt.Errorf("write demo files: %w", err)
		}
	}
	return nil
}

// extraFileRef is a file reference that is not a content element's image
// or asset.
type extraFileRef struct {
	file         int
	table, field string
	foreign, pid int
	hidden       int
	deleted      int
}

// extraFileRefs are the fixed references beyond the content images: the
// internal price list as media of page 9 (which editors may not see), the
// data sheet as a hidden medium of page 6, and a deleted reference to the
// logo.
func extraFileRefs() []extraFileRef {
	return []extraFileRef{
		{file: filePriceList, table: "pages", field: "media", foreign: 9, pid: 9},
		{file: fileDatasheet, table: "pages", field: "media", foreign: 6, pid: 6, hidden: 1},
		{file: fileLogo, table: "pages", field: "media", foreign: 1, pid: 1, deleted: 1},
	}
}

// archiveStorage is sys_file_storage 2, a Local storage outside the
// storage allow-list.
func archiveStorage(ts int64) map[string]any {
	return map[string]any{
		"uid": 2, "pid": 0, "tstamp": ts, "crdate": ts, "deleted": 0,
		"name": "Board archive", "description": "Minutes of the board; not for AI tools.", "driver": "Local",
		"configuration": storageConfiguration(storageDir[2] + "/"),
		"is_browsable":  1, "is_public": 0, "is_writable": 0, "is_online": 1, "is_default": 0,
		"auto_extract_metadata": 0, "processingfolder": "",
	}
}

// storageConfiguration is the FlexForm TYPO3 stores for a Local storage
// with a relative basePath.
func storageConfiguration(basePath string) string {
	return `<?xml version="1.0" encoding="utf-8" standalone="yes" ?>
<T3FlexForms>
    <data>
        <sheet index="sDEF">
            <language index="lDEF">
                <field index="basePath">
                    <value index="vDEF">` + basePath + `</value>
                </field>
                <field index="pathType">
                    <value index="vDEF">relative</value>
                </field>
                <field index="caseSensitive">
                    <value index="vDEF">1</value>
                </field>
            </language>
        </sheet>
    </data>
</T3FlexForms>`
}
