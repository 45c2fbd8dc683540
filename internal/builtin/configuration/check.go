package configuration

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typoscript"
)

type checkTypoScript struct{ env }

func (t *checkTypoScript) Spec() tool.Spec {
	return spec("check_typoscript",
		"Syntax check of a page's frontend TypoScript: the constants and setup include trees (sys_template records, "+
			"site sets, every included file), all condition branches included. Reports invalid lines, unbalanced "+
			"braces, imports that include nothing or cannot be read, import cycles, unknown modifiers and exceeded "+
			"limits, one per line as `[constants|setup] <template or file>, line N: <kind> (<problem>)`, at most 50. "+
			"The text of an offending line is never shown: open the file or the template record to see it. "+
			"Answers \"No findings\" when the TypoScript is clean. Use it when a page renders wrongly or after a "+
			"TypoScript change.",
		`{"type":"object","properties":{`+pageUIDSchema+`},"required":["pageUid"],"additionalProperties":false}`)
}

func (t *checkTypoScript) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	if res, ok := authorize(call); !ok {
		return res, nil
	}
	uid, ok := pageArg(args)
	if !ok {
		return badPage(), nil
	}
	r, res, err := t.open(ctx, uid)
	if res != nil || err != nil {
		return deref(res), err
	}
	f, err := r.Frontend(ctx, uid)
	if err != nil {
		return resolveError(uid, err)
	}
	red := newRedactor(t.site.Root)
	var found []string
	add := func(label string, fs []typoscript.Finding, evaluation bool) {
		for _, f := range fs {
			// Of what evaluation meets only real problems count here;
			// getEnv is a limit of t3agent, not of the TypoScript.
			if evaluation && f.Kind != typoscript.KindModifier && f.Kind != typoscript.KindLimit {
				continue
			}
			found = append(found, "["+label+"] "+findingLine(red, f))
		}
	}
	add("constants", f.Constants.Syntax, false)
	add("setup", f.Setup.Syntax, false)
	add("constants", f.Constants.Findings, true)
	add("setup", f.Setup.Findings, true)

	var b strings.Builder
	fmt.Fprintf(&b, "Syntax check of the TypoScript of page %s.\n", pageLine(uid, f.PageUID, f.Rootline, f.Site))
	b.WriteString(templatesLine(red, f.Templates))
	if len(found) == 0 {
		b.WriteString("No findings: the constants and setup include trees parse cleanly.")
		return tool.Text(b.String()), nil
	}
	fmt.Fprintf(&b, "%d %s:\n", len(found), plural(len(found), "finding", "findings"))
	for i, s := range found {
		if i == maxFindings {
			fmt.Fprintf(&b, "… and %d more findings.\n", len(found)-maxFindings)
			break
		}
		b.WriteString(s + "\n")
	}
	return tool.Text(strings.TrimRight(b.String(), "\n")), nil
}

// findingLine is "<include>, line N: kind (problem)". Findings carry the
// include's name, the line number and a fixed problem text, never the
// line itself.
func findingLine(r *redactor, f typoscript.Finding) string {
	s := r.name(f.Include)
	if f.Line > 0 {
		s += ", line " + strconv.Itoa(f.Line)
	}
	s += ": " + f.Kind
	if f.Detail != "" {
		s += " (" + cut(oneLine(f.Detail), maxExprRunes) + ")"
	}
	return s
}
