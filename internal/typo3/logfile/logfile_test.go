package logfile_test

import (
	"strings"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/typo3/logfile"
)

const sample = `Mon, 01 Jun 2026 16:05:12 +0000 [CRITICAL] request="6a1f0c2b9d3e4" component="TYPO3.CMS.Frontend.ContentObject.Exception.ProductionExceptionHandler": Oops, an error occurred! - {"exception":"UnexpectedValueException: No pages. in /var/www/html/packages/p/Classes/A.php:40\nStack trace:\n#0 /var/www/html/packages/p/Classes/A.php(22): P\\A->b(Array)\n#1 [internal function]: P\\A->c()\n#2 {main}"}
Mon, 01 Jun 2026 16:06:00 +0000 [INFO] request="6a1f0c2b9d3e5" component="TYPO3.CMS.Core": two
lines
Tue, 02 Jun 2026 08:00:00 +0200 [ERROR] request="x" component="Y": Core: Error handler (FE): PHP Warning: Undefined array key - not json {
`

func TestParse(t *testing.T) {
	t.Parallel()
	recs := logfile.Parse([]byte("cut-off tail of an earlier record\n" + sample))
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3: %+v", len(recs), recs)
	}
	r := recs[0]
	if r.Level != "CRITICAL" || r.Request != "6a1f0c2b9d3e4" || !r.Error() || r.Message != "Oops, an error occurred!" ||
		!r.Time.Equal(time.Date(2026, 6, 1, 16, 5, 12, 0, time.UTC)) {
		t.Errorf("record 0: %+v", r)
	}
	e, ok := r.Exception()
	if !ok || e.Class != "UnexpectedValueException" || e.Message != "No pages." || e.File != "/var/www/html/packages/p/Classes/A.php" || e.Line != 40 {
		t.Fatalf("exception: %+v %v", e, ok)
	}
	if len(e.Frames) != 3 || e.Frames[0].Line != 22 || e.Frames[1].File != "" || e.Frames[1].Call != `P\A->c()` || e.Frames[2].Call != "" {
		t.Errorf("frames: %+v", e.Frames)
	}
	if recs[1].Message != "two\nlines" || recs[1].Error() {
		t.Errorf("record 1: %+v", recs[1])
	}
	if recs[2].Time.Hour() != 6 || recs[2].Data != nil || !strings.HasSuffix(recs[2].Message, "not json {") {
		t.Errorf("record 2 (UTC, no JSON): %+v", recs[2])
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(sample))
	f.Add([]byte("Mon, 01 Jun 2026 16:05:12 +0000 [ERROR] x - {\"exception\":\"A: b in c:1\\nStack trace:\\n#0 d(2): e\"}"))
	f.Add([]byte("\n\n[ERROR]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, r := range logfile.Parse(b) {
			if r.Level == "" || r.Time.IsZero() {
				t.Fatalf("record without level or time: %+v", r)
			}
			if e, ok := r.Exception(); ok && (e.Class == "" || len(e.Frames) > 100) {
				t.Fatalf("bad exception: %+v", e)
			}
		}
		if e, ok := logfile.ParseException(string(b)); ok && e.Class == "" {
			t.Fatal("exception without class")
		}
	})
}
