package mcp

import (
	"context"
	"fmt"
	"net/url"
	"slices"

	"github.com/t3agent/t3agent/internal/store"
)

// PreviewImport lists the server's tools as Import does and says what an
// import would change — tools added, updated, restored and orphaned, and
// those it would skip — without writing anything: the catalogue, the
// import status and the server's health stay as they are. The console
// shows it before the operator confirms the import.
//
// The preview is what the server lists now; the import that follows
// lists again, so a server that changed meanwhile is imported as it is
// then.
func (s *Service) PreviewImport(ctx context.Context, p ImportParams) (ImportResult, error) {
	r, err := s.st.MCPServer(ctx, p.Server)
	if err != nil {
		return ImportResult{}, err
	}
	listed, _, err := s.listTools(ctx, r)
	if err != nil {
		return ImportResult{}, err
	}
	var isBuiltin func(string) bool
	if p.Registry != nil {
		isBuiltin = p.Registry.IsBuiltin
	}
	rows, skipped := catalogueRows(r.Identifier, listed, isBuiltin)
	all, err := s.st.MCPTools(ctx, store.ListMCPToolsParams{IncludeOrphaned: true})
	if err != nil {
		return ImportResult{}, err
	}
	have := map[string]store.MCPTool{}
	owner := map[string]string{}
	for _, t := range all {
		owner[t.Name] = t.Server
		if t.Server == r.Identifier {
			have[t.Name] = t
		}
	}
	res := ImportResult{Server: serverOf(r), Advertised: len(listed), Skipped: skipped}
	seen := map[string]bool{}
	for _, row := range rows {
		if o, ok := owner[row.Name]; ok && o != r.Identifier {
			res.Skipped = append(res.Skipped, fmt.Sprintf("%s: skipped, the name belongs to a tool of MCP server %q", row.Name, o))
			continue
		}
		seen[row.Name] = true
		res.Imported++
		old, ok := have[row.Name]
		switch {
		case !ok:
			res.Added = append(res.Added, row.Name)
		case old.Orphaned:
			res.Restored = append(res.Restored, row.Name)
		case old.RemoteName != row.RemoteName || old.Title != row.Title || old.Description != row.Description ||
			old.InputSchema != row.InputSchema || old.Annotations != row.Annotations:
			res.Updated = append(res.Updated, row.Name)
		}
	}
	for name, t := range have {
		if !t.Orphaned && !seen[name] {
			res.Orphaned = append(res.Orphaned, name)
		}
	}
	for _, l := range [][]string{res.Added, res.Updated, res.Restored, res.Orphaned} {
		slices.Sort(l)
	}
	return res, nil
}

// DisplayURL is a server's URL as t3agent shows it: query values, which
// sometimes carry tokens, are replaced by "…".
func DisplayURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.RawQuery == "" {
		return raw
	}
	q := u.Query()
	for k := range q {
		q.Set(k, "…")
	}
	u.RawQuery = q.Encode()
	return u.String()
}
