package mcp

import (
	"fmt"
	"regexp"

	"github.com/t3agent/t3agent/internal/tool"
)

// IdentifierPattern is the rule for server identifiers (SPEC §3).
var IdentifierPattern = regexp.MustCompile(`^[a-z0-9_]{1,32}$`)

// Group is the tool group of a server's tools.
func Group(identifier string) string { return "mcp_" + identifier }

// LocalName is the registry name of a remote tool: mcp_<server>_<remote>.
// A name that breaks tool.NamePattern is refused, never rewritten: a
// rewritten name could collide with another tool or mislead the model.
func LocalName(identifier, remote string) (string, error) {
	name := "mcp_" + identifier + "_" + remote
	if !tool.NamePattern.MatchString(name) {
		return "", fmt.Errorf("the local name %q does not match %s", remoteText(name, 80), tool.NamePattern)
	}
	return name, nil
}
