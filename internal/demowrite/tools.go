package demowrite

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/t3agent/t3agent/internal/typo3"
)

// Tool names, as the server offers them.
const (
	ToolUpdatePageMetadata       = "update_page_metadata"
	ToolCreateContentDraft       = "create_content_element_draft"
	ToolSetFileAlternative       = "set_file_alternative_text"
	maxUID                       = 1<<31 - 1
	defaultLanguage              = 0
	maxColPos                    = 999
	contentSortingStep     int64 = 256
)

// pageFields are the pages columns update_page_metadata may change, in
// the order they are written.
var pageFields = []field{
	{name: "uid", kind: kindInt, required: true, min: 1, max: maxUID, doc: "uid of the page (pages.uid)"},
	{name: "title", kind: kindLine, maxLen: maxLine, nonEmpty: true, doc: "page title"},
	{name: "nav_title", kind: kindLine, maxLen: maxLine, doc: "navigation title (empty: the title is used)"},
	{name: "subtitle", kind: kindLine, maxLen: maxLine, doc: "subtitle"},
	{name: "description", kind: kindText, maxLen: maxText, doc: "meta description for search engines"},
	{name: "keywords", kind: kindText, maxLen: maxText, doc: "meta keywords, comma-separated"},
	{name: "abstract", kind: kindText, maxLen: maxText, doc: "abstract"},
	{name: "author", kind: kindLine, maxLen: maxLine, doc: "author name"},
	{name: "author_email", kind: kindLine, maxLen: maxLine, email: true, doc: "author e-mail address (empty to clear)"},
}

var contentFields = []field{
	{name: "pid", kind: kindInt, required: true, min: 1, max: maxUID, doc: "uid of the page that gets the element"},
	{name: "header", kind: kindLine, required: true, maxLen: maxLine, nonEmpty: true, doc: "the element's header"},
	{name: "bodytext", kind: kindText, maxLen: maxText, doc: "the text (for bullets: one item per line)"},
	{name: "CType", kind: kindLine, maxLen: maxLine, enum: []string{"text", "header", "bullets"}, doc: "content type (default text)"},
	{name: "colPos", kind: kindInt, min: 0, max: maxColPos, doc: "column (default 0, the main column)"},
	{name: "sys_language_uid", kind: kindInt, min: 0, max: maxUID, doc: "language (default 0)"},
}

var fileFields = []field{
	{name: "file", kind: kindInt, required: true, min: 1, max: maxUID, doc: "uid of the file (sys_file.uid)"},
	{name: "alternative", kind: kindText, required: true, maxLen: maxText, doc: "the alternative text (empty to clear)"},
	{name: "sys_language_uid", kind: kindInt, min: 0, max: maxUID, doc: "language of the metadata (default 0)"},
}

// writeTool is one tool: its spec and its handler.
type writeTool struct {
	spec    *mcp.Tool
	handler mcp.ToolHandler
}

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

func (s *Server) tools() []writeTool {
	return []writeTool{
		{spec: &mcp.Tool{
			Name:        ToolUpdatePageMetadata,
			Title:       "Update page metadata",
			Description: "Change the title, navigation title, subtitle or metadata (description, keywords, abstract, author) of a page of the demo site. Only the fields given change; the change is recorded in the page history.",
			InputSchema: schema(pageFields),
			Annotations: &mcp.ToolAnnotations{Title: "Update page metadata", DestructiveHint: yes(), IdempotentHint: true, OpenWorldHint: no()},
		}, handler: s.handle(ToolUpdatePageMetadata, pageFields, s.updatePage)},
		{spec: &mcp.Tool{
			Name:        ToolCreateContentDraft,
			Title:       "Create a content element draft",
			Description: "Create a text, header or bullets content element at the bottom of a column of a page of the demo site, hidden, so an editor reviews it before it goes live.",
			InputSchema: schema(contentFields),
			Annotations: &mcp.ToolAnnotations{Title: "Create a content element draft", DestructiveHint: no(), IdempotentHint: false, OpenWorldHint: no()},
		}, handler: s.handle(ToolCreateContentDraft, contentFields, s.createContent)},
		{spec: &mcp.Tool{
			Name:        ToolSetFileAlternative,
			Title:       "Set a file's alternative text",
			Description: "Set the alternative text (sys_file_metadata.alternative) of a file of the demo site, used as the alt text of its images.",
			InputSchema: schema(fileFields),
			Annotations: &mcp.ToolAnnotations{Title: "Set a file's alternative text", DestructiveHint: yes(), IdempotentHint: true, OpenWorldHint: no()},
		}, handler: s.handle(ToolSetFileAlternative, fileFields, s.setAlternative)},
	}
}

// refusal is a write the acting user may not make, or that names a
// record that is not there: one sentence, as an error result.
type refusal struct{ msg string }

func (e *refusal) Error() string { return e.msg }

func refuse(format string, args ...any) error { return &refusal{msg: fmt.Sprintf(format, args...)} }

// outcome is what a write reports.
type outcome struct {
	text       string
	structured map[string]any
}

// handle decodes and checks the arguments, finds the acting user and
// runs fn. Bad input and refusals are error results the model reads; a
// failure of the database is a protocol error whose cause stays in the
// log.
func (s *Server) handle(name string, fields []field, fn func(ctx context.Context, u *typo3.BackendUser, a args) (outcome, error)) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var u *typo3.BackendUser
		if req.Extra != nil && req.Extra.TokenInfo != nil {
			u, _ = req.Extra.TokenInfo.Extra[principalKey].(*typo3.BackendUser)
		}
		if u == nil {
			return nil, errors.New("the call carries no authorized backend user")
		}
		a, err := parseArgs(name, req.Params.Arguments, fields)
		if err != nil {
			return errorResult(err.Error()), nil
		}
		out, err := fn(ctx, u, a)
		var ie *inputError
		var rf *refusal
		switch {
		case errors.As(err, &ie), errors.As(err, &rf):
			return errorResult(err.Error()), nil
		case err != nil:
			s.log.ErrorContext(ctx, "demo write failed", "tool", name, "user", u.Username, "error", err.Error())
			return nil, fmt.Errorf("the demo site could not be written; the server log says why")
		}
		s.log.InfoContext(ctx, "demo write", "tool", name, "user", u.Username, "result", out.text)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out.text}}, StructuredContent: out.structured}, nil
	}
}

func errorResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// mayWriteField checks TYPO3's exclude-field rule: a column the TCA marks
// exclude needs the user's non_exclude_fields grant.
func (s *Server) mayWriteField(u *typo3.BackendUser, table, name string) error {
	t := s.p.Site.TCA.Table(table)
	if t == nil {
		return nil
	}
	if c := t.Column(name); c != nil && c.Exclude && !u.IsNonExcludeField(table, name) {
		return refuse("The backend user %s may not change the field %s of %s.", u.Username, name, table)
	}
	return nil
}

// writablePage loads a page the user may change with perms.
func (s *Server) writablePage(ctx context.Context, u *typo3.BackendUser, uid int64, perms typo3.Permission, what string) (*typo3.Page, error) {
	acc := typo3.NewPageAccess(s.p.Site, u)
	p, err := acc.Page(ctx, uid)
	if errors.Is(err, typo3.ErrPageNotFound) {
		return nil, refuse("Page %d does not exist.", uid)
	}
	if err != nil {
		return nil, err
	}
	ok, err := acc.DoesUserHaveAccess(ctx, uid, perms)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, refuse("The backend user %s may not %s on page %d.", u.Username, what, uid)
	}
	if p.Editlock && !u.Admin {
		return nil, refuse("Page %d is locked for editing.", uid)
	}
	if !u.CanAccessLanguage(p.SysLanguageUID) {
		return nil, refuse("The backend user %s may not edit language %d.", u.Username, p.SysLanguageUID)
	}
	return p, nil
}

func (s *Server) updatePage(ctx context.Context, u *typo3.BackendUser, a args) (outcome, error) {
	uid := a.int("uid")
	var set []string
	for _, f := range pageFields[1:] {
		if _, ok := a.str(f.name); ok {
			set = append(set, f.name)
		}
	}
	if len(set) == 0 {
		return outcome{}, badInput("%s needs at least one field to change: %s.", ToolUpdatePageMetadata, names(pageFields[1:]))
	}
	if !u.CanModifyTable("pages") {
		return outcome{}, refuse("The backend user %s may not modify pages.", u.Username)
	}
	for _, f := range set {
		if err := s.mayWriteField(u, "pages", f); err != nil {
			return outcome{}, err
		}
	}
	p, err := s.writablePage(ctx, u, uid, typo3.PermPageEdit, "edit the page")
	if err != nil {
		return outcome{}, err
	}
	values := map[string]string{}
	for _, f := range set {
		values[f], _ = a.str(f)
	}
	res, err := s.update(ctx, updateParams{user: u, table: "pages", uid: uid, pid: p.PID, label: "title", values: values, order: set, pageTitle: p.Title})
	if err != nil {
		return outcome{}, err
	}
	if len(res.changed) == 0 {
		return outcome{text: fmt.Sprintf("Page %d already has these values; nothing was changed.", uid),
			structured: map[string]any{"uid": uid, "changed": []string{}}}, nil
	}
	return outcome{
		text: fmt.Sprintf("Page %d (%s): %s changed; recorded as sys_history %d.", uid, res.title, strings.Join(res.changed, ", "), res.history),
		structured: map[string]any{"uid": uid, "changed": res.changed, "historyUid": res.history,
			"oldRecord": res.old, "newRecord": res.new},
	}, nil
}

func (s *Server) createContent(ctx context.Context, u *typo3.BackendUser, a args) (outcome, error) {
	pid := a.int("pid")
	ctype, ok := a.str("CType")
	if !ok {
		ctype = "text"
	}
	lang := a.int("sys_language_uid")
	if !u.CanModifyTable("tt_content") {
		return outcome{}, refuse("The backend user %s may not modify content elements.", u.Username)
	}
	if !u.CheckAuthMode("tt_content", "CType", ctype) {
		return outcome{}, refuse("The backend user %s may not create content elements of type %s.", u.Username, ctype)
	}
	if !u.CanAccessLanguage(int(lang)) {
		return outcome{}, refuse("The backend user %s may not edit language %d.", u.Username, lang)
	}
	for _, f := range []string{"header", "bodytext", "colPos", "sys_language_uid"} {
		if _, given := a[f]; given {
			if err := s.mayWriteField(u, "tt_content", f); err != nil {
				return outcome{}, err
			}
		}
	}
	p, err := s.writablePage(ctx, u, pid, typo3.PermContentEdit, "edit content")
	if err != nil {
		return outcome{}, err
	}
	if p.Doktype >= 200 || p.Doktype == 3 || p.Doktype == 4 {
		return outcome{}, refuse("Page %d is not a page that shows content (doktype %d).", pid, p.Doktype)
	}
	header, _ := a.str("header")
	body, _ := a.str("bodytext")
	res, err := s.insertContent(ctx, contentParams{user: u, page: p, ctype: ctype, header: header, body: body, colPos: a.int("colPos"), lang: lang})
	if err != nil {
		return outcome{}, err
	}
	return outcome{
		text: fmt.Sprintf("Content element %d (%s, hidden) created on page %d (%s), column %d; recorded as sys_history %d.",
			res.uid, ctype, pid, p.Title, a.int("colPos"), res.history),
		structured: map[string]any{"uid": res.uid, "pid": pid, "hidden": true, "historyUid": res.history},
	}, nil
}

func (s *Server) setAlternative(ctx context.Context, u *typo3.BackendUser, a args) (outcome, error) {
	file := a.int("file")
	lang := a.int("sys_language_uid")
	alt, _ := a.str("alternative")
	if !u.CanModifyTable("sys_file_metadata") {
		return outcome{}, refuse("The backend user %s may not modify file metadata.", u.Username)
	}
	if err := s.mayWriteField(u, "sys_file_metadata", "alternative"); err != nil {
		return outcome{}, err
	}
	if !u.CanAccessLanguage(int(lang)) {
		return outcome{}, refuse("The backend user %s may not edit language %d.", u.Username, lang)
	}
	meta, name, err := s.fileMetadata(ctx, file, lang)
	if err != nil {
		return outcome{}, err
	}
	res, err := s.update(ctx, updateParams{user: u, table: "sys_file_metadata", uid: meta, pid: 0, label: "title",
		values: map[string]string{"alternative": alt}, order: []string{"alternative"}, pageTitle: "[root-level]", titleOverride: name})
	if err != nil {
		return outcome{}, err
	}
	if len(res.changed) == 0 {
		return outcome{text: fmt.Sprintf("File %d (%s) already has this alternative text; nothing was changed.", file, name),
			structured: map[string]any{"file": file, "metadataUid": meta, "changed": []string{}}}, nil
	}
	return outcome{
		text:       fmt.Sprintf("File %d (%s): alternative text set; recorded as sys_history %d.", file, name, res.history),
		structured: map[string]any{"file": file, "metadataUid": meta, "changed": res.changed, "historyUid": res.history},
	}, nil
}
