package structure

import (
	"context"
	"fmt"
	"strings"

	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3/extpath"
)

// maxRootPaths caps the root paths of one fluid_resolve call.
const maxRootPaths = 20

type fluidResolve struct{ env }

func (t *fluidResolve) Spec() tool.Spec {
	return spec("fluid_resolve", tool.GroupConfiguration,
		"Which Fluid file wins for a template, partial or layout: lists the candidate paths in the order Fluid "+
			"tries them, marks each [x] when the file exists or [ ] when not, and names the winner (the first "+
			"existing one). Root paths are walked from the last to the first (later paths override earlier ones, "+
			"like TypoScript's templateRootPaths.10 over .0); in each, `<Name>.<format>` is tried before `<Name>`; "+
			"templates try `<Controller>/<Action>` before `<Action>`. The extension's own "+
			"Resources/Private/Templates|Partials|Layouts/ is always the lowest-priority root path (Extbase adds "+
			"it); pass the configured plugin.tx_*.view.*RootPaths or FLUIDTEMPLATE root paths, in key order, as "+
			"`paths` (EXT: paths only). Never returns file contents. Use it to debug \"wrong template wins\" or "+
			"\"template not found\".",
		`{"type":"object","properties":{`+
			`"kind":{"type":"string","enum":["template","partial","layout"],"description":"What to resolve."},`+
			`"name":{"type":"string","minLength":1,"maxLength":200,"description":"Template action (e.g. list), partial or layout name; may contain / (e.g. Page/Header)."},`+
			`"extension":{"type":"string","pattern":"^[a-z][a-z0-9_]{1,59}$","description":"Extension key, e.g. bootstrap_package."},`+
			`"controller":{"type":"string","minLength":1,"maxLength":200,"description":"Extbase controller name without Controller (templates only), e.g. Login; may contain /."},`+
			`"format":{"type":"string","pattern":"^[a-zA-Z0-9]{1,16}$","default":"html","description":"File format suffix, default html."},`+
			`"paths":{"type":"array","maxItems":20,"items":{"type":"string","minLength":5,"maxLength":300},"description":"Root paths in TypoScript key order, lowest priority first, e.g. EXT:site_demo/Resources/Private/Templates/ContentElements/."}`+
			`},"required":["kind","name","extension"],"additionalProperties":false}`)
}

// kindDir maps the kind to its default folder below Resources/Private.
func kindDir(kind string) (string, bool) {
	switch kind {
	case "template":
		return "Templates", true
	case "partial":
		return "Partials", true
	case "layout":
		return "Layouts", true
	}
	return "", false
}

func (t *fluidResolve) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	if call.Actor == nil {
		return denyUser(), nil
	}
	var kind, name, ext, controller, format string
	for _, p := range []struct {
		dst  *string
		name string
	}{{&kind, "kind"}, {&name, "name"}, {&ext, "extension"}, {&controller, "controller"}, {&format, "format"}} {
		v, err := stringArg(args, p.name)
		if err != nil {
			return tool.Errorf("%v.", err), nil
		}
		*p.dst = strings.TrimSpace(v)
	}
	paths, err := stringsArg(args, "paths")
	if err != nil {
		return tool.Errorf("%v.", err), nil
	}
	dir, ok := kindDir(kind)
	if !ok {
		return tool.Errorf("kind must be template, partial or layout."), nil
	}
	if !extpath.ValidKey(ext) {
		return tool.Errorf("%s is not a valid extension key (lower-case letters, digits and underscores, starting with a letter).", quoteArg(ext)), nil
	}
	if msg := checkFluidName("name", name); msg != "" {
		return tool.Errorf("%s", msg), nil
	}
	if controller != "" {
		if kind != "template" {
			return tool.Errorf("controller applies to templates only."), nil
		}
		if msg := checkFluidName("controller", controller); msg != "" {
			return tool.Errorf("%s", msg), nil
		}
	}
	if format == "" {
		format = "html"
	}
	if !validFormat(format) {
		return tool.Errorf("format must be 1 to 16 letters or digits, such as html or xml."), nil
	}
	if len(paths) > maxRootPaths {
		return tool.Errorf("At most %d root paths.", maxRootPaths), nil
	}

	// Root paths in priority order, lowest first, as TypoScript lists them;
	// the extension's default folder goes first unless already present.
	def := "EXT:" + ext + "/Resources/Private/" + dir + "/"
	roots := []string{def}
	for _, p := range paths {
		p = strings.TrimSpace(p)
		if _, _, err := extpath.Split(p); err != nil {
			return tool.Errorf("Root path %s is refused: %v. Use EXT:<extension key>/<path inside the extension>.", quoteArg(p), err), nil
		}
		if !strings.HasSuffix(p, "/") {
			p += "/"
		}
		if p == def {
			continue
		}
		roots = append(roots, p)
	}

	exts, extErr := t.extensions()
	var rels []string
	if kind == "template" {
		action := ucfirst(name)
		if controller != "" {
			rels = append(rels, controller+"/"+action)
		}
		rels = append(rels, action)
	} else {
		rels = []string{ucfirst(name)}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "Fluid %s %s", kind, quoteArg(name))
	if controller != "" {
		fmt.Fprintf(&b, ", controller %s", quoteArg(controller))
	}
	fmt.Fprintf(&b, ", format %s, extension %s\n", format, ext)
	b.WriteString("Root paths, highest priority first:\n")
	for i := len(roots) - 1; i >= 0; i-- {
		note := ""
		if roots[i] == def {
			note = " (extension default)"
		}
		if exts != nil {
			key, _, _ := extpath.Split(roots[i])
			if _, ok := exts.Lookup(key); !ok {
				note += " (extension " + key + " is not installed)"
			}
		}
		b.WriteString("  " + roots[i] + note + "\n")
	}
	b.WriteString("Candidates in lookup order:\n")
	winner := ""
	for _, rel := range rels {
		for i := len(roots) - 1; i >= 0; i-- {
			for _, cand := range []string{roots[i] + rel + "." + format, roots[i] + rel} {
				if err := ctx.Err(); err != nil {
					return tool.Result{}, err
				}
				mark := "[ ]"
				if isFile(exts, cand) {
					mark = "[x]"
					if winner == "" {
						winner = cand
					}
				}
				b.WriteString(mark + " " + cand + "\n")
			}
		}
	}
	switch {
	case winner != "":
		b.WriteString("Winner: " + winner)
	case extErr != nil:
		b.WriteString("Winner: none — the installation folder is not available, so no file could be checked.")
	default:
		b.WriteString("Winner: none — Fluid would fail with \"template not found\" (InvalidTemplateResourceException).")
	}
	return tool.Text(b.String()), nil
}

// isFile reports whether ref names a regular file inside its extension
// (is_file); symlinks out of the extension count as missing.
func isFile(exts *extpath.Map, ref string) bool {
	if exts == nil {
		return false
	}
	info, err := exts.Stat(ref)
	return err == nil && info.Mode().IsRegular()
}

// checkFluidName allows slash-separated names of letters, digits, '_',
// '-' and '.', refusing empty segments, "." and "..".
func checkFluidName(field, s string) string {
	if s == "" {
		return field + " is required."
	}
	for seg := range strings.SplitSeq(s, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Sprintf("%s %s is refused: use a relative name without \"..\", \".\" or empty segments, e.g. Page/Header.", field, quoteArg(s))
		}
		for _, r := range seg {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
				return fmt.Sprintf("%s %s is refused: only letters, digits, _, -, . and / are allowed.", field, quoteArg(s))
			}
		}
	}
	return ""
}

func validFormat(s string) bool {
	if len(s) == 0 || len(s) > 16 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// ucfirst upper-cases the first letter, as Fluid does with names.
func ucfirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
