package code

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/t3agent/t3agent/internal/builtin/introspect"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3/projectpath"
)

// maxSourceBytes caps the file read_source reads.
const maxSourceBytes = 8 << 20

type readSource struct{ env }

func (t *readSource) Spec() tool.Spec {
	return introspect.Spec("read_source", tool.GroupCode, tool.SourceCode, true,
		"Lines of one file of the TYPO3 project (site package code, templates, TypoScript, YAML, extension code "+
			"under vendor/), numbered as `    N | text`. path is relative to the project root, e.g. "+
			"packages/site_demo/Classes/ViewHelpers/PageTitleViewHelper.php. from_line (default 1) and lines "+
			"(default 60, at most 200) pick the window; the header says how many lines the file has. "+
			"Never readable: .env and other hidden files, .git, config/system (settings.php, additional.php), "+
			"LocalConfiguration.php, auth.json, key and certificate files, var/ except var/log, anything outside "+
			"the project (also through symlinks); those answer \"File not found or not permitted.\" "+
			"Credentials in the lines (password assignments, tokens, URL passwords) are masked. "+
			"Use it after get_last_exception or search_code to read the code around a line.",
		`{"type":"object","properties":{`+
			`"path":{"type":"string","minLength":1,"maxLength":1024,"description":"File path relative to the project root."},`+
			`"from_line":{"type":"integer","minimum":1,"maximum":10000000,"default":1,"description":"First line to show."},`+
			`"lines":{"type":"integer","minimum":1,"maximum":200,"default":60,"description":"How many lines to show."}`+
			`},"required":["path"],"additionalProperties":false}`)
}

func (t *readSource) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	if res, ok := introspect.Authorize(call); !ok {
		return res, nil
	}
	path, err := introspect.String(args, "path")
	if err != nil || path == "" {
		return tool.Errorf("path must name a file relative to the project root."), nil
	}
	from, err := introspect.Int(args, "from_line", 1, 1, 10000000)
	if err != nil {
		return tool.Errorf("%s.", err.Error()), nil
	}
	n, err := introspect.Int(args, "lines", 60, 1, 200)
	if err != nil {
		return tool.Errorf("%s.", err.Error()), nil
	}
	g, ok := t.guard()
	if !ok {
		return tool.Errorf("%s", noRoot), nil
	}
	real, rel, err := g.Resolve(path)
	if err != nil {
		return pathError(err), nil
	}
	fi, err := os.Stat(real)
	if err != nil {
		return tool.Errorf("%s", deniedFile), nil
	}
	if fi.IsDir() {
		return tool.Errorf("%s is a folder; read_source reads files (search_code searches folders).", rel), nil
	}
	if !fi.Mode().IsRegular() {
		return tool.Errorf("%s", deniedFile), nil
	}
	if fi.Size() > maxSourceBytes {
		return tool.Errorf("%s is larger than %d MB; search it with search_code instead.", rel, maxSourceBytes>>20), nil
	}
	lines, total, binary, err := readWindow(real, int(from), int(n))
	if err != nil {
		return tool.Result{}, fmt.Errorf("read %s: %w", rel, err)
	}
	if binary {
		return tool.Errorf("%s is not a text file.", rel), nil
	}
	if int(from) > total {
		return tool.Errorf("%s has %d lines; from_line %d is past its end.", rel, total, from), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s, lines %d-%d of %d:\n", rel, from, int(from)+len(lines)-1, total)
	b.WriteString(numbered(lines, int(from), 0))
	return tool.Text(strings.TrimSuffix(b.String(), "\n")), nil
}

// readWindow reads lines [from, from+n) of a file and counts all lines;
// binary reports a NUL byte in the first 8 KiB.
func readWindow(path string, from, n int) (lines []string, total int, binary bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, false, err
	}
	defer f.Close()
	head := make([]byte, 8192)
	k, _ := io.ReadFull(f, head)
	if bytes.IndexByte(head[:k], 0) >= 0 {
		return nil, 0, true, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, 0, false, err
	}
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := r.ReadString('\n')
		if line != "" || err == nil {
			total++
			if total >= from && total < from+n {
				lines = append(lines, strings.TrimRight(line, "\r\n"))
			}
		}
		if err == io.EOF {
			return lines, total, false, nil
		}
		if err != nil {
			return nil, 0, false, err
		}
	}
}

// numbered renders lines as "%5d | text", redacted, cut at 500
// characters; mark (when not 0) gets a ">" in front. A private key block
// is masked whole, since line-wise redaction would see only its parts.
func numbered(lines []string, first, mark int) string {
	var b strings.Builder
	inKey := false
	for i, l := range lines {
		no := first + i
		text := l
		switch {
		case strings.Contains(l, "-----BEGIN") && strings.Contains(l, "PRIVATE KEY"):
			inKey = !strings.Contains(l, "-----END")
			text = "[REDACTED:private_key]"
		case inKey:
			if strings.Contains(l, "-----END") {
				inKey = false
			}
			text = "[REDACTED:private_key]"
		default:
			text = introspect.Text(text)
		}
		text = strings.ReplaceAll(cutLine(text, 500), "\t", "    ")
		prefix := " "
		if no == mark {
			prefix = ">"
		}
		fmt.Fprintf(&b, "%s%5d | %s\n", prefix, no, text)
	}
	return b.String()
}

func cutLine(s string, n int) string {
	s = strings.ToValidUTF8(s, "?")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// sourceExcerpt reads ±radius lines around line of a guarded file.
func sourceExcerpt(g *projectpath.Guard, rel string, line, radius int) (string, bool) {
	real, _, err := g.Resolve(rel)
	if err != nil {
		return "", false
	}
	fi, err := os.Stat(real)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxSourceBytes {
		return "", false
	}
	from := max(1, line-radius)
	lines, _, binary, err := readWindow(real, from, 2*radius+1)
	if err != nil || binary || len(lines) == 0 {
		return "", false
	}
	return numbered(lines, from, line), true
}
