package code

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/t3agent/t3agent/internal/builtin/introspect"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3/logfile"
)

// Limits of get_last_exception.
const (
	logWindow      = 2 << 20 // bytes read from the end of each log file
	maxIndex       = 49
	sourceFrames   = 3
	sourceRadius   = 6
	maxFramesShown = 40
)

type lastException struct{ env }

func (t *lastException) Spec() tool.Spec {
	return introspect.Spec("get_last_exception", tool.GroupCode, tool.SecretAdjacent, true,
		"The newest error of the TYPO3 site from its log files (var/log/typo3_*.log, the last 2 MB of each; "+
			"levels ERROR, CRITICAL, ALERT, EMERGENCY): time, level, component, exception class, message (URL "+
			"passwords and other credentials masked), where it was thrown, the stack frames with project-relative "+
			"paths, and ±6 lines of source around up to 3 frames in the project's own code (not vendor/), "+
			"marked with >. index 0 is the newest, 1 the one before, …; search keeps only errors whose class or "+
			"message contains the text (case-insensitive). Use it first when someone reports an error page or "+
			"\"Oops, an error occurred\"; read_source shows more of a file.",
		`{"type":"object","properties":{`+
			`"index":{"type":"integer","minimum":0,"maximum":49,"default":0,"description":"0 = newest error, 1 = the one before, …"},`+
			`"search":{"type":"string","maxLength":200,"description":"Only errors whose exception class or message contains this text."}`+
			`},"additionalProperties":false}`)
}

func (t *lastException) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	if res, ok := introspect.Authorize(call); !ok {
		return res, nil
	}
	index, err := introspect.Int(args, "index", 0, 0, maxIndex)
	if err != nil {
		return tool.Errorf("%s.", err.Error()), nil
	}
	search, err := introspect.String(args, "search")
	if err != nil {
		return tool.Errorf("%s.", err.Error()), nil
	}
	g, ok := t.guard()
	if !ok {
		return tool.Errorf("%s", noRoot), nil
	}
	files, err := logfile.Files(g.Root(), false)
	if err != nil {
		return tool.Result{}, fmt.Errorf("list log files: %w", err)
	}
	var errs []logfile.Record
	for _, f := range files {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		b, err := logfile.Tail(f.Path, logWindow)
		if err != nil {
			continue
		}
		for _, r := range logfile.Parse(b) {
			if r.Error() && matches(r, search) {
				errs = append(errs, r)
			}
		}
	}
	if len(files) == 0 {
		return tool.Text("No TYPO3 log files (var/log/typo3_*.log) exist."), nil
	}
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Time.After(errs[j].Time) })
	if int(index) >= len(errs) {
		what := "errors"
		if search != "" {
			what = fmt.Sprintf("errors matching %q", search)
		}
		return tool.Text(fmt.Sprintf("The log files hold %d %s; there is no error at index %d.", len(errs), what, index)), nil
	}
	r := errs[index]
	m := &mapper{g: g}
	e, ok := r.Exception()
	if ok {
		// Find the server's project folder first, so every path of the
		// answer is shown project-relative.
		m.rel(e.File)
		for _, f := range e.Frames {
			if m.prefix != "" {
				break
			}
			m.rel(f.File)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Error %d of %d (0 = newest): %s [%s] %s\n", index, len(errs), introspect.Date(r.Time), r.Level, r.Component)
	if !ok {
		fmt.Fprintf(&b, "Message: %s\n(no exception with a stack trace was logged)", introspect.Cut(introspect.Text(r.Message), 2000))
		return tool.Text(b.String()), nil
	}
	if msg := strings.TrimSpace(r.Message); msg != "" && !strings.Contains(e.Message, msg) {
		fmt.Fprintf(&b, "Log message: %s\n", introspect.Cut(introspect.Text(msg), 500))
	}
	fmt.Fprintf(&b, "Exception: %s\n", e.Class)
	fmt.Fprintf(&b, "Message: %s\n", introspect.Cut(introspect.Text(e.Message), 2000))
	fmt.Fprintf(&b, "Thrown in: %s:%d\n", m.display(e.File), e.Line)
	b.WriteString("Stack trace:\n")
	for i, f := range e.Frames {
		if i == maxFramesShown {
			fmt.Fprintf(&b, "  … %d more frames\n", len(e.Frames)-i)
			break
		}
		switch {
		case f.File != "":
			fmt.Fprintf(&b, "  #%d %s(%d): %s\n", i, m.display(f.File), f.Line, introspect.Cut(introspect.Text(f.Call), 300))
		case f.Call != "":
			fmt.Fprintf(&b, "  #%d [internal function]: %s\n", i, introspect.Cut(introspect.Text(f.Call), 300))
		default:
			fmt.Fprintf(&b, "  #%d {main}\n", i)
		}
	}
	// Source of the project's own frames: the throw site first.
	type site struct {
		rel  string
		line int
	}
	var sites []site
	seen := map[site]bool{}
	cands := append([]logfile.Frame{{File: e.File, Line: e.Line}}, e.Frames...)
	for _, f := range cands {
		if len(sites) == sourceFrames {
			break
		}
		rel := m.rel(f.File)
		s := site{rel, f.Line}
		if rel == "" || f.Line <= 0 || vendor(rel) || seen[s] {
			continue
		}
		seen[s] = true
		sites = append(sites, s)
	}
	for _, s := range sites {
		text, ok := sourceExcerpt(g, s.rel, s.line, sourceRadius)
		if !ok {
			fmt.Fprintf(&b, "Source of %s:%d: not shown (the file is missing, shorter than the logged line, or not permitted).\n", s.rel, s.line)
			continue
		}
		fmt.Fprintf(&b, "Source of %s around line %d:\n%s", s.rel, s.line, text)
	}
	if len(sites) == 0 {
		b.WriteString("No frame is in the project's own code (all are in vendor/ or outside the project).\n")
	}
	out := strings.TrimSuffix(b.String(), "\n")
	if len(out) > introspect.MaxBytes {
		out = out[:introspect.MaxBytes] + "\n… (answer capped)"
	}
	return tool.Text(out), nil
}

func matches(r logfile.Record, search string) bool {
	if search == "" {
		return true
	}
	s := strings.ToLower(search)
	if strings.Contains(strings.ToLower(r.Message), s) {
		return true
	}
	if e, ok := r.Exception(); ok {
		return strings.Contains(strings.ToLower(e.Class+" "+e.Message), s)
	}
	return false
}
