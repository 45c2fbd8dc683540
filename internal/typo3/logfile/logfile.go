// Package logfile reads the log files TYPO3's FileWriter writes
// (var/log/typo3_<hash>.log, typo3_deprecations_<hash>.log): records,
// the exception a record carries, and its stack frames.
//
// A record starts with date('r') and the level in brackets:
//
//	Mon, 02 Jan 2006 15:04:05 +0000 [ERROR] request="…" component="…": message - {json}
//
// and runs until the next such line, so messages with line breaks stay
// whole. The data after " - " is the JSON of the log context; an exception
// in it is PHP's string form of a Throwable ("Class: message in file:line",
// "Stack trace:", "#0 file(line): call", …). Everything here is pure
// parsing with bounded work; malformed input yields fewer records, never
// an error or a panic.
package logfile

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Record is one log entry.
type Record struct {
	Time      time.Time
	Level     string // upper case, as written: ERROR, CRITICAL, …
	Request   string
	Component string
	Message   string
	// Data is the JSON context after " - ", decoded; nil when absent or
	// not JSON.
	Data map[string]any
}

// header matches the start of a record.
var header = regexp.MustCompile(`^([A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} [+-]\d{4}) \[([A-Z]+)\] ?`)

// fields matches the request and component of a record after its header.
var fields = regexp.MustCompile(`^request="([^"]*)" component="([^"]*)": `)

// maxRecordBytes bounds one record; longer ones are cut.
const maxRecordBytes = 256 << 10

// Parse splits b into records, oldest first as written.
func Parse(b []byte) []Record {
	var out []Record
	text := string(b)
	var cur []string
	curLen := 0
	flush := func() {
		if len(cur) > 0 {
			if r, ok := parseRecord(strings.Join(cur, "\n")); ok {
				out = append(out, r)
			}
		}
		cur, curLen = cur[:0], 0
	}
	for len(text) > 0 {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		line = strings.TrimSuffix(line, "\r")
		if header.MatchString(line) {
			flush()
		} else if len(cur) == 0 {
			continue // the tail of a record cut off by the read window
		}
		if curLen+len(line) <= maxRecordBytes {
			cur = append(cur, line)
			curLen += len(line) + 1
		}
	}
	flush()
	return out
}

func parseRecord(s string) (Record, bool) {
	m := header.FindStringSubmatchIndex(s)
	if m == nil {
		return Record{}, false
	}
	t, err := time.Parse("Mon, 02 Jan 2006 15:04:05 -0700", s[m[2]:m[3]])
	if err != nil {
		return Record{}, false
	}
	r := Record{Time: t.UTC(), Level: s[m[4]:m[5]]}
	rest := s[m[1]:]
	if f := fields.FindStringSubmatch(rest); f != nil {
		r.Request, r.Component = f[1], f[2]
		rest = rest[len(f[0]):]
	}
	// The context is the last " - {…}" that is valid JSON.
	for i := strings.LastIndex(rest, " - {"); i >= 0; i = strings.LastIndex(rest[:i], " - {") {
		var data map[string]any
		if json.Unmarshal([]byte(rest[i+3:]), &data) == nil {
			r.Data = data
			rest = rest[:i]
			break
		}
	}
	r.Message = rest
	return r, true
}

// Error reports whether the record's level is ERROR or worse.
func (r Record) Error() bool {
	switch r.Level {
	case "ERROR", "CRITICAL", "ALERT", "EMERGENCY":
		return true
	}
	return false
}

// Exception is a Throwable as PHP writes it with (string)$e.
type Exception struct {
	Class, Message string
	File           string
	Line           int
	Frames         []Frame
}

// Frame is one line of a stack trace. File is empty for internal
// functions and {main}.
type Frame struct {
	File string
	Line int
	Call string
}

var (
	throwSite = regexp.MustCompile(`^(?s)([A-Za-z_\\][A-Za-z0-9_\\]*)(?:\(\d+\))?: (.*) in (\S+):(\d+)$`)
	frameLine = regexp.MustCompile(`^#\d+ (?:(\S.*?)\((\d+)\)|\[internal function\]|\{main\})(?:: (.*))?$`)
)

// maxFrames bounds the frames kept of one exception.
const maxFrames = 100

// Exception returns the exception of the record: the context's
// "exception" string, or else a message that itself has PHP's form.
func (r Record) Exception() (Exception, bool) {
	if s, ok := r.Data["exception"].(string); ok {
		if e, ok := ParseException(s); ok {
			return e, true
		}
	}
	return ParseException(r.Message)
}

// ParseException reads PHP's string form of a Throwable. Only the first
// (outermost) exception of a chain is taken.
func ParseException(s string) (Exception, bool) {
	head, trace, _ := strings.Cut(s, "\nStack trace:\n")
	if next := strings.Index(trace, "\n\nNext "); next >= 0 {
		trace = trace[:next]
	}
	m := throwSite.FindStringSubmatch(strings.TrimSpace(head))
	if m == nil {
		return Exception{}, false
	}
	line, _ := strconv.Atoi(m[4])
	e := Exception{Class: m[1], Message: m[2], File: m[3], Line: line}
	for _, l := range strings.Split(trace, "\n") {
		if len(e.Frames) == maxFrames {
			break
		}
		f := frameLine.FindStringSubmatch(strings.TrimSpace(l))
		if f == nil {
			continue
		}
		n, _ := strconv.Atoi(f[2])
		e.Frames = append(e.Frames, Frame{File: f[1], Line: n, Call: f[3]})
	}
	return e, true
}

// Tail reads at most max bytes from the end of the file at path, starting
// after the first line break when the window cuts a line.
func Tail(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	off := fi.Size() - max
	if off < 0 {
		off = 0
	}
	b := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if off > 0 {
		if i := strings.IndexByte(string(b), '\n'); i >= 0 {
			b = b[i+1:]
		} else {
			b = nil
		}
	}
	return b, nil
}

// File is one log file of var/log.
type File struct {
	Path    string
	ModTime time.Time
}

// Files lists var/log/typo3_*.log below root: the main logs, or with
// deprecations the deprecation logs, newest first. A missing folder is
// no files.
func Files(root string, deprecations bool) ([]File, error) {
	matches, err := filepath.Glob(filepath.Join(root, "var", "log", "typo3_*.log"))
	if err != nil {
		return nil, err
	}
	var out []File
	for _, m := range matches {
		isDep := strings.HasPrefix(filepath.Base(m), "typo3_deprecations_")
		if isDep != deprecations {
			continue
		}
		fi, err := os.Lstat(m)
		if err != nil || !fi.Mode().IsRegular() {
			continue // a symlink could lead anywhere
		}
		out = append(out, File{Path: m, ModTime: fi.ModTime()})
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].ModTime.Equal(out[j].ModTime) {
			return out[i].ModTime.After(out[j].ModTime)
		}
		return out[i].Path > out[j].Path
	})
	return out, nil
}
