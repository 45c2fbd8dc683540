// Package code holds the builtin tools of the code group, all admin-only:
// get_last_exception (the newest errors of TYPO3's log files with their
// stack frames and the guarded source around them), read_source (lines
// of one project file) and search_code (a literal or RE2 search over the
// project's code files).
//
// Every file they open passes the project path guard (package
// typo3/projectpath): realpath inside the project root, no ".." or
// encoded paths, and never .env, config/system, settings.php,
// additional.php, LocalConfiguration.php, auth.json, key or certificate
// files, .git or var/ (except var/log), also when a symlink leads there.
// A refused path gets one neutral sentence that never confirms the file
// exists. Every line they return is redacted (package introspect) and
// every answer is bounded.
package code

import (
	"errors"
	"strings"

	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/projectpath"
)

// Tools returns the code tools over site. policy is accepted for the
// builtin groups' common signature; these tools read no records.
func Tools(site *typo3.Site, policy *readpolicy.Policy) []tool.Tool {
	e := env{site: site}
	return []tool.Tool{&lastException{e}, &readSource{e}, &searchCode{e}}
}

type env struct{ site *typo3.Site }

// deniedFile is the one sentence for a path that is refused, outside the
// root or missing.
const deniedFile = "File not found or not permitted."

// noRoot answers when the installation folder is unknown.
const noRoot = "The TYPO3 installation folder is not configured for this site, so its files cannot be read."

// guard returns the path guard of the site's project root, or false
// when no usable root is configured.
func (e env) guard() (*projectpath.Guard, bool) {
	if e.site == nil || e.site.Root == "" {
		return nil, false
	}
	g, err := projectpath.New(e.site.Root)
	return g, err == nil
}

// pathError turns a guard refusal into the answer the model reads.
func pathError(err error) tool.Result {
	if errors.Is(err, projectpath.ErrInvalid) {
		return tool.Errorf("path %s.", strings.TrimPrefix(err.Error(), "the path "))
	}
	return tool.Errorf("%s", deniedFile)
}

// mapper turns the absolute paths of a log (written on the TYPO3 server,
// whose project folder may lie elsewhere) into project-relative ones by
// finding the server's project prefix once.
type mapper struct {
	g      *projectpath.Guard
	prefix string
}

// rel returns the project-relative form of a server path, or "".
func (m *mapper) rel(p string) string {
	if p == "" {
		return ""
	}
	if m.prefix != "" && strings.HasPrefix(p, m.prefix) {
		return strings.TrimPrefix(p, m.prefix)
	}
	if strings.HasPrefix(p, m.g.Root()+"/") {
		m.prefix = m.g.Root() + "/"
		return strings.TrimPrefix(p, m.prefix)
	}
	if pre := projectpath.ServerPrefix(m.g.Root(), p); pre != "" {
		if m.prefix == "" {
			m.prefix = pre
		}
		return strings.TrimPrefix(p, pre)
	}
	return ""
}

// display shows a server path project-relative when it can.
func (m *mapper) display(p string) string {
	if r := m.rel(p); r != "" {
		return r
	}
	return p
}

// vendor reports whether a project-relative path is third-party code.
func vendor(rel string) bool {
	return strings.HasPrefix(rel, "vendor/") || strings.Contains(rel, "/vendor/") ||
		strings.HasPrefix(rel, "typo3/sysext/") || strings.HasPrefix(rel, "public/typo3/sysext/")
}
