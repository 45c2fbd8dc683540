package configuration

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typoscript"
	"github.com/t3agent/t3agent/internal/typoscript/template"
)

// Titles of the sections every reading answer may end with.
const (
	conditionsTitle = "Conditions taken as false (they need a live request or other run-time state t3agent does not have):"
	getEnvTitle     = "getEnv was not evaluated (the TYPO3 server's environment is not visible to t3agent; the value before it is kept):"
)

type getTypoScript struct{ env }

func (t *getTypoScript) Spec() tool.Spec {
	return spec("get_typoscript",
		"The resolved frontend TypoScript of a page, built like TYPO3's frontend does it (default language): "+
			"sys_template records along the rootline, site sets, included files, constants substituted. "+
			"type setup (default) or constants. Without path: only the top-level keys, one line each as "+
			"`key = value (+N children; set in file:line)`. With path (dotted, e.g. page.10, lib.contentElement, "+
			"plugin.tx_felogin_login): setup shows that object and its subtree, two spaces per level, then where "+
			"its values were set; constants show flat `a.b.c = value` lines, usable as {$a.b.c}. At most 300 lines "+
			"per answer and 500 characters per value, cuts are marked: ask again with a deeper path. "+
			"Credentials (values of keys such as password, secret, apiKey; not flags such as showForgotPassword = 0) "+
			"show as [redacted], URL passwords as ***. "+
			"Conditions that need a live request (request, ip(), date, user, application context) are taken as "+
			"false and listed; getEnv is not evaluated. Use it to see which TypoScript really applies on a page "+
			"before explaining its rendering or suggesting a change; check_typoscript finds syntax errors.",
		`{"type":"object","properties":{`+pageUIDSchema+`,`+
			`"type":{"type":"string","enum":["setup","constants"],"default":"setup","description":"setup (default) or constants."},`+
			pathSchema+
			`},"required":["pageUid"],"additionalProperties":false}`)
}

func (t *getTypoScript) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	if res, ok := authorize(call); !ok {
		return res, nil
	}
	uid, ok := pageArg(args)
	if !ok {
		return badPage(), nil
	}
	typ, ok := stringArg(args, "type")
	switch {
	case !ok:
		return tool.Errorf("type must be setup or constants."), nil
	case typ == "":
		typ = "setup"
	case typ != "setup" && typ != "constants":
		return tool.Errorf("type must be setup or constants."), nil
	}
	path, ok := pathArg(args)
	if !ok {
		return badPath(), nil
	}
	r, res, err := t.open(ctx, uid)
	if res != nil || err != nil {
		return deref(res), err
	}
	f, err := r.Frontend(ctx, uid)
	if err != nil {
		return resolveError(uid, err)
	}
	tree := &f.Setup
	trees := []labelled{{"constants", f.Constants.Conditions}, {"setup", f.Setup.Conditions}}
	findings := [][]typoscript.Finding{f.Constants.Findings, f.Setup.Findings}
	red := newRedactor(t.site.Root, f.Constants.Root)
	if typ == "constants" {
		tree = &f.Constants
		trees = trees[:1]
		findings = findings[:1]
	}

	var b strings.Builder
	fmt.Fprintf(&b, "TypoScript %s of page %s.\n", typ, pageLine(uid, f.PageUID, f.Rootline, f.Site))
	b.WriteString(templatesLine(red, f.Templates))
	v := newView(red)
	if path == "" {
		fmt.Fprintf(&b, "\nTop-level keys (%d); ask with a path for a subtree:\n", len(tree.Root.Children()))
		v.top(tree.Root)
		b.WriteString(v.w.String())
	} else {
		segs := splitPath(path)
		n, rule := lookup(tree.Root, segs)
		if n == nil || len(segs) == 0 {
			return tool.Errorf("The TypoScript %s of page %d has no object %s; call without path to see the top-level keys.",
				typ, uid, quoteArg(path)), nil
		}
		b.WriteString("\n")
		if typ == "constants" {
			v.flat(n, segs, rule)
		} else {
			v.subtree(n, joinPath(segs), rule)
		}
		b.WriteString(v.w.String())
		if v.w.omitted > 0 {
			section(&b, "Deeper paths to ask for:", deeper(n, joinPath(segs)))
		}
		section(&b, "Set in:", v.src.lines(red))
	}
	getEnv, problems := evaluationNotes(red, findings...)
	section(&b, conditionsTitle, undecided(red, trees...))
	section(&b, getEnvTitle, getEnv)
	section(&b, "Problems while evaluating:", problems)
	section(&b, "Notes:", bullets(f.Notes))
	if k := len(f.Constants.Syntax) + len(f.Setup.Syntax); k > 0 {
		fmt.Fprintf(&b, "\nThe TypoScript of this page has %d syntax %s; check_typoscript lists them.\n", k, plural(k, "finding", "findings"))
	}
	return tool.Text(strings.TrimRight(b.String(), "\n")), nil
}

// pathArg reads the optional object path; a trailing dot ("page.") is
// accepted as the object itself.
func pathArg(args map[string]any) (string, bool) {
	p, ok := stringArg(args, "path")
	if !ok || strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "", false
	}
	return strings.TrimSpace(p), true
}

func badPath() tool.Result {
	return tool.Errorf("path must be a dotted object path such as page.10, without spaces.")
}

// deref returns the answer prepared by open, or the empty result when
// open failed with an error.
func deref(r *tool.Result) tool.Result {
	if r == nil {
		return tool.Result{}
	}
	return *r
}

// pageLine describes the resolved page: its uid (and the default-language
// page it resolved as), the rootline and the site.
func pageLine(asked, resolved int64, rootline []template.Page, site *template.Site) string {
	s := strconv.FormatInt(asked, 10)
	if resolved != asked {
		s += fmt.Sprintf(", resolved as its default-language page %d", resolved)
	}
	uids := make([]string, 0, len(rootline))
	for _, p := range rootline {
		uids = append(uids, strconv.FormatInt(p.UID, 10))
	}
	s += " (rootline " + strings.Join(uids, " > ")
	if site != nil {
		s += "; site " + cut(oneLine(site.Identifier), maxNameRunes)
	}
	return s + ")"
}

// templatesLine names the sys_template records used, root first.
func templatesLine(r *redactor, rows []template.SysTemplate) string {
	if len(rows) == 0 {
		return "Templates: none; the site provides the TypoScript.\n"
	}
	parts := make([]string, len(rows))
	for i, row := range rows {
		parts[i] = r.name(fmt.Sprintf("[sys_template:%d] %s", row.UID, row.Title))
		if row.Root {
			parts[i] += " (root)"
		}
	}
	return "Templates: " + strings.Join(parts, ", ") + ".\n"
}

// quoteArg echoes a model-supplied value, bounded.
func quoteArg(s string) string { return strconv.Quote(cut(s, 80)) }

func bullets(items []string) []string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = "- " + cut(oneLine(s), maxValueRunes)
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
