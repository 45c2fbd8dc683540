package demowrite_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/demowrite"
)

// TestWrites: each tool changes the demo site the way DataHandler does —
// the field, tstamp, one sys_history row (update: old and new values of
// the changed fields; insert: the new record) and one sys_log row — and a
// repeated update changes nothing and records nothing.
func TestWrites(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cs := mustConnect(t, f.srv, f.login(t, f.srv, "admin", ""))
	now := clock.Unix()

	t.Run("update_page_metadata", func(t *testing.T) {
		before := f.historyRows(t, "pages", 2)
		logs := f.count(t, `SELECT COUNT(*) FROM sys_log WHERE tablename = 'pages' AND recuid = 2`)
		args := map[string]any{"uid": 2, "title": "About Nordlicht", "description": "Who we are.", "author_email": "team@example.org"}
		res := call(t, cs, demowrite.ToolUpdatePageMetadata, args)
		if res.IsError || !strings.Contains(text(res), "title, description, author_email changed") {
			t.Fatalf("result: %s", text(res))
		}
		if got := f.str(t, `SELECT title || '|' || description || '|' || author_email || '|' || tstamp FROM pages WHERE uid = 2`); got != "About Nordlicht|Who we are.|team@example.org|"+itoa(now) {
			t.Errorf("page 2 = %q", got)
		}
		if n := f.historyRows(t, "pages", 2); n != before+1 {
			t.Fatalf("sys_history rows for pages:2: %d, want %d", n, before+1)
		}
		var h struct {
			Old map[string]string `json:"oldRecord"`
			New map[string]string `json:"newRecord"`
		}
		raw := f.str(t, `SELECT history_data FROM sys_history WHERE tablename = 'pages' AND recuid = 2 ORDER BY uid DESC LIMIT 1`)
		if err := json.Unmarshal([]byte(raw), &h); err != nil || h.Old["title"] != "About us" || h.New["title"] != "About Nordlicht" || len(h.New) != 3 {
			t.Errorf("history_data = %s", raw)
		}
		if got := f.str(t, `SELECT actiontype || '|' || usertype || '|' || userid || '|' || tstamp FROM sys_history WHERE tablename = 'pages' AND recuid = 2 ORDER BY uid DESC LIMIT 1`); got != "2|BE|1|"+itoa(now) {
			t.Errorf("sys_history row = %q", got)
		}
		if n := f.count(t, `SELECT COUNT(*) FROM sys_log WHERE tablename = 'pages' AND recuid = 2`); n != logs+1 {
			t.Errorf("sys_log rows: %d, want %d", n, logs+1)
		}
		// The same values again: nothing changes, nothing is recorded.
		res = call(t, cs, demowrite.ToolUpdatePageMetadata, args)
		if res.IsError || !strings.Contains(text(res), "nothing was changed") || f.historyRows(t, "pages", 2) != before+1 {
			t.Errorf("repeated update: %s", text(res))
		}
	})

	t.Run("create_content_element_draft", func(t *testing.T) {
		maxSorting := f.count(t, `SELECT COALESCE(MAX(sorting), 0) FROM tt_content WHERE pid = 17 AND colPos = 0 AND deleted = 0 AND sys_language_uid = 0`)
		res := call(t, cs, demowrite.ToolCreateContentDraft, map[string]any{"pid": 17, "header": "Opening hours", "bodytext": "Mon–Fri 8–17", "CType": "text"})
		if res.IsError {
			t.Fatalf("result: %s", text(res))
		}
		var out struct {
			UID     int64 `json:"uid"`
			History int64 `json:"historyUid"`
		}
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &out); err != nil || out.UID == 0 {
			t.Fatalf("structured = %s", b)
		}
		if got := f.str(t, `SELECT pid || '|' || hidden || '|' || CType || '|' || header || '|' || bodytext || '|' || sorting || '|' || crdate || '|' || tstamp FROM tt_content WHERE uid = ?`, out.UID); got != "17|1|text|Opening hours|Mon–Fri 8–17|"+itoa(int64(maxSorting)+256)+"|"+itoa(now)+"|"+itoa(now) {
			t.Errorf("content = %q", got)
		}
		if got := f.str(t, `SELECT actiontype || '|' || recuid FROM sys_history WHERE uid = ?`, out.History); got != "1|"+itoa(out.UID) {
			t.Errorf("history = %q", got)
		}
		if n := f.historyRows(t, "tt_content", out.UID); n != 1 {
			t.Errorf("%d history rows for the new element", n)
		}
	})

	t.Run("set_file_alternative_text", func(t *testing.T) {
		meta := f.count(t, `SELECT uid FROM sys_file_metadata WHERE file = 1 AND sys_language_uid = 0`)
		before := f.historyRows(t, "sys_file_metadata", int64(meta))
		res := call(t, cs, demowrite.ToolSetFileAlternative, map[string]any{"file": 1, "alternative": "A blue pump on a white background"})
		if res.IsError {
			t.Fatalf("result: %s", text(res))
		}
		if got := f.str(t, `SELECT alternative || '|' || tstamp FROM sys_file_metadata WHERE uid = ?`, meta); got != "A blue pump on a white background|"+itoa(now) {
			t.Errorf("metadata = %q", got)
		}
		if n := f.historyRows(t, "sys_file_metadata", int64(meta)); n != before+1 {
			t.Errorf("history rows %d, want %d", n, before+1)
		}
	})
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestInputValidation: bad input is an error result of one sentence
// that names the problem, and nothing is written.
func TestInputValidation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cs := mustConnect(t, f.srv, f.login(t, f.srv, "admin", ""))
	long := strings.Repeat("x", 256)
	for _, c := range []struct {
		tool string
		args any
		want string
	}{
		{demowrite.ToolUpdatePageMetadata, map[string]any{}, "needs the argument uid"},
		{demowrite.ToolUpdatePageMetadata, map[string]any{"uid": 2}, "needs at least one field"},
		{demowrite.ToolUpdatePageMetadata, map[string]any{"uid": "2", "title": "x"}, "uid must be a whole number"},
		{demowrite.ToolUpdatePageMetadata, map[string]any{"uid": 2.5, "title": "x"}, "uid must be a whole number"},
		{demowrite.ToolUpdatePageMetadata, map[string]any{"uid": 0, "title": "x"}, "uid must be between 1 and"},
		{demowrite.ToolUpdatePageMetadata, map[string]any{"uid": -3, "title": "x"}, "uid must be between 1 and"},
		{demowrite.ToolUpdatePageMetadata, map[string]any{"uid": 2, "title": ""}, "title may not be empty"},
		{demowrite.ToolUpdatePageMetadata, map[string]any{"uid": 2, "title": "  "}, "title may not be empty"},
		{demowrite.ToolUpdatePageMetadata, map[string]any{"uid": 2, "title": long}, "256 characters long; at most 255"},
		{demowrite.ToolUpdatePageMetadata, map[string]any{"uid": 2, "title": "a\nb"}, "title must be a single line"},
		{demowrite.ToolUpdatePageMetadata, map[string]any{"uid": 2, "title": "a\u0000b"}, "title contains a control character"},
		{demowrite.ToolUpdatePageMetadata, map[string]any{"uid": 2, "title": "a\u202eb"}, "title contains a control character"},
		{demowrite.ToolUpdatePageMetadata, map[string]any{"uid": 2, "title": 7}, "title must be a string"},
		{demowrite.ToolUpdatePageMetadata, map[string]any{"uid": 2, "hidden": 1}, `does not accept the argument "hidden"`},
		{demowrite.ToolUpdatePageMetadata, map[string]any{"uid": 2, "author_email": "not an address"}, "author_email must be an e-mail address"},
		{demowrite.ToolUpdatePageMetadata, map[string]any{"uid": 2, "author_email": "Team <team@example.org>"}, "author_email must be an e-mail address"},
		{demowrite.ToolUpdatePageMetadata, map[string]any{"uid": 999999, "title": "x"}, "Page 999999 does not exist."},
		{demowrite.ToolUpdatePageMetadata, map[string]any{"uid": 11, "title": "x"}, "Page 11 does not exist."}, // deleted
		{demowrite.ToolCreateContentDraft, map[string]any{"pid": 6}, "needs the argument header"},
		{demowrite.ToolCreateContentDraft, map[string]any{"pid": 6, "header": "x", "CType": "html"}, "CType must be one of text, header, bullets"},
		{demowrite.ToolCreateContentDraft, map[string]any{"pid": 6, "header": "x", "colPos": 1000}, "colPos must be between 0 and 999"},
		{demowrite.ToolCreateContentDraft, map[string]any{"pid": 16, "header": "x"}, "is not a page that shows content"},
		{demowrite.ToolCreateContentDraft, map[string]any{"pid": 6, "header": "x", "bodytext": strings.Repeat("y", 20001)}, "at most 20000"},
		{demowrite.ToolSetFileAlternative, map[string]any{"file": 1}, "needs the argument alternative"},
		{demowrite.ToolSetFileAlternative, map[string]any{"file": 99999, "alternative": "x"}, "File 99999 does not exist."},
		{demowrite.ToolSetFileAlternative, map[string]any{"file": 1, "alternative": "x", "sys_language_uid": 7}, "has no metadata in language 7"},
		{demowrite.ToolSetFileAlternative, []int{1}, "must be a JSON object"},
	} {
		before := f.allHistory(t)
		res := call(t, cs, c.tool, c.args)
		msg := text(res)
		if !res.IsError || !strings.Contains(msg, c.want) || strings.Count(msg, ". ") > 0 || !strings.HasSuffix(msg, ".") || strings.Contains(msg, "\n") {
			t.Errorf("%s %v: isError %v, %q; want one sentence with %q", c.tool, c.args, res.IsError, msg, c.want)
		}
		if f.allHistory(t) != before {
			t.Errorf("%s %v wrote history", c.tool, c.args)
		}
	}
}

// TestPermissions: the acting user is the one who granted the token,
// with TYPO3's table, page and mount permissions.
func TestPermissions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	editor := mustConnect(t, f.srv, f.login(t, f.srv, "editor", ""))
	admin := mustConnect(t, f.srv, f.login(t, f.srv, "admin", ""))
	for _, c := range []struct {
		name  string
		admin bool
		tool  string
		args  map[string]any
		want  string // "" means allowed
	}{
		{"editor: pages are not modifiable", false, demowrite.ToolUpdatePageMetadata, map[string]any{"uid": 6, "title": "x"}, "may not modify pages"},
		{"editor: content in the mount", false, demowrite.ToolCreateContentDraft, map[string]any{"pid": 6, "header": "ok"}, ""},
		{"editor: page of another group", false, demowrite.ToolCreateContentDraft, map[string]any{"pid": 9, "header": "x"}, "may not edit content on page 9"},
		{"editor: outside the mount", false, demowrite.ToolCreateContentDraft, map[string]any{"pid": 17, "header": "x"}, "may not edit content on page 17"},
		{"editor: language not allowed", false, demowrite.ToolCreateContentDraft, map[string]any{"pid": 6, "header": "x", "sys_language_uid": 1}, "may not edit language 1"},
		{"editor: file metadata", false, demowrite.ToolSetFileAlternative, map[string]any{"file": 1, "alternative": "x"}, "may not modify file metadata"},
		{"admin: page 9", true, demowrite.ToolUpdatePageMetadata, map[string]any{"uid": 9, "nav_title": "Pricing"}, ""},
		{"admin: content on page 9", true, demowrite.ToolCreateContentDraft, map[string]any{"pid": 9, "header": "ok"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			cs := editor
			if c.admin {
				cs = admin
			}
			before := f.allHistory(t)
			res := call(t, cs, c.tool, c.args)
			if c.want == "" {
				if res.IsError || f.allHistory(t) != before+1 {
					t.Errorf("refused: %s", text(res))
				}
				return
			}
			if !res.IsError || !strings.Contains(text(res), c.want) || f.allHistory(t) != before {
				t.Errorf("got %q, want a refusal with %q", text(res), c.want)
			}
		})
	}
}
