package configuration

import (
	"context"
	"fmt"
	"strings"

	"github.com/t3agent/t3agent/internal/tool"
)

type getTSconfig struct{ env }

func (t *getTSconfig) Spec() tool.Spec {
	return spec("get_tsconfig",
		"The Page TSconfig of a page as the TYPO3 backend merges it: every extension's Configuration/page.tsconfig, "+
			"the site sets' and the site's page.tsconfig, then the TSconfig field and TSconfig includes of each page "+
			"on the rootline, root first; conditions decided from the page and its site. Without path: only the "+
			"top-level keys (mod, TCEFORM, TCEMAIN, TCAdefaults, RTE, …) with their child counts. With path (dotted, "+
			"e.g. TCEFORM.tt_content, mod.web_layout.BackendLayouts): that subtree, two spaces per level, then where "+
			"its values were set. At most 300 lines per answer and 500 characters per value, cuts are marked: ask "+
			"again with a deeper path. Credentials show as [redacted] (not flags "+
			"whose names hold a credential word), URL passwords as ***. "+
			"Overrides from a backend user's own user TSconfig (page.…) are not included. Use it to explain backend "+
			"forms, defaults, permissions and page module settings of a page.",
		`{"type":"object","properties":{`+pageUIDSchema+`,`+pathSchema+
			`},"required":["pageUid"],"additionalProperties":false}`)
}

func (t *getTSconfig) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	if res, ok := authorize(call); !ok {
		return res, nil
	}
	uid, ok := pageArg(args)
	if !ok {
		return badPage(), nil
	}
	path, ok := pathArg(args)
	if !ok {
		return badPath(), nil
	}
	r, res, err := t.open(ctx, uid)
	if res != nil || err != nil {
		return deref(res), err
	}
	ts, err := r.PageTSconfig(ctx, uid)
	if err != nil {
		return resolveError(uid, err)
	}
	// Page TSconfig substitutes only site settings, which the resolver
	// does not hand out; the key rule covers its own values.
	red := newRedactor(t.site.Root)

	var b strings.Builder
	fmt.Fprintf(&b, "Page TSconfig of page %s.\n", pageLine(uid, ts.PageUID, ts.Rootline, ts.Site))
	v := newView(red)
	if path == "" {
		fmt.Fprintf(&b, "\nTop-level keys (%d); ask with a path for a subtree:\n", len(ts.Root.Children()))
		v.top(ts.Root)
		b.WriteString(v.w.String())
	} else {
		segs := splitPath(path)
		n, rule := lookup(ts.Root, segs)
		if n == nil || len(segs) == 0 {
			return tool.Errorf("The Page TSconfig of page %d has no object %s; call without path to see the top-level keys.",
				uid, quoteArg(path)), nil
		}
		b.WriteString("\n")
		v.subtree(n, joinPath(segs), rule)
		b.WriteString(v.w.String())
		if v.w.omitted > 0 {
			section(&b, "Deeper paths to ask for:", deeper(n, joinPath(segs)))
		}
		section(&b, "Set in:", v.src.lines(red))
	}
	getEnv, problems := evaluationNotes(red, ts.Findings)
	section(&b, conditionsTitle, undecided(red, labelled{conds: ts.Conditions}))
	section(&b, getEnvTitle, getEnv)
	section(&b, "Problems while evaluating:", problems)
	section(&b, "Notes:", append(bullets(ts.Notes),
		"- Overrides from the acting backend user's user TSconfig (page.…) are not applied."))
	if k := len(ts.Syntax); k > 0 {
		fmt.Fprintf(&b, "\nThe Page TSconfig of this page has %d syntax %s:\n", k, plural(k, "finding", "findings"))
		for i, f := range ts.Syntax {
			if i == maxListed {
				fmt.Fprintf(&b, "- … and %d more\n", k-maxListed)
				break
			}
			b.WriteString("- " + findingLine(red, f) + "\n")
		}
	}
	return tool.Text(strings.TrimRight(b.String(), "\n")), nil
}
