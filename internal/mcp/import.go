package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
)

// Caps of one import (SPEC §3). Past either, the import is refused whole.
const (
	MaxImportPages = 50
	MaxImportTools = 500
)

// Bounds of what a catalogue row keeps of a remote tool's words.
const (
	maxTitleRunes       = 200
	maxDescriptionRunes = 4000
)

// ImportParams are the parameters of Import.
type ImportParams struct {
	Server string // identifier; required
	// Registry, when set, is checked for builtin names (a remote tool
	// whose local name a builtin has is skipped) and refreshed after a
	// successful import so the new catalogue is registered at once.
	Registry *tool.Registry
}

// ImportResult says what an import did.
type ImportResult struct {
	Server     Server   `json:"server"`
	Advertised int      `json:"advertised"` // tools the server listed
	Imported   int      `json:"imported"`   // tools now live in the catalogue
	Added      []string `json:"added"`
	Updated    []string `json:"updated"`
	Restored   []string `json:"restored"`
	Orphaned   []string `json:"orphaned"`
	// Skipped says, one line per tool, which tools were left out and why.
	Skipped []string `json:"skipped"`
}

// Import lists the server's tools (with paging) and reconciles them into
// the catalogue. It is an explicit operator action; runs never list tools
// live.
//
// The listing is refused whole, leaving the catalogue as it was and
// recording the reason as the server's import error, when it fails, when
// it needs more than MaxImportPages pages, or when the server advertises
// more than MaxImportTools tools. Otherwise every tool is checked — a
// name, a valid local name (LocalName), not twice, not a builtin's name,
// an input schema NormalizeSchema accepts — and a tool that fails is
// skipped and reported, never repaired. The rest replace the server's
// catalogue: tools that vanished are orphaned, returning tools restored.
// The server needs no data class to be imported; without one its tools
// stay inert.
func (s *Service) Import(ctx context.Context, p ImportParams) (ImportResult, error) {
	r, err := s.st.MCPServer(ctx, p.Server)
	if err != nil {
		return ImportResult{}, err
	}
	listed, latency, err := s.listTools(ctx, r)
	if err != nil {
		if _, ferr := s.st.RecordMCPImportFailure(context.WithoutCancel(ctx), store.RecordMCPImportFailureParams{Identifier: r.Identifier, Error: err.Error()}); ferr != nil {
			s.log.WarnContext(ctx, "MCP import failure not recorded", "server", r.Identifier, "error", ferr.Error())
		}
		return ImportResult{}, err
	}
	s.contact(ctx, r.Identifier, latency)

	var isBuiltin func(string) bool
	if p.Registry != nil {
		isBuiltin = p.Registry.IsBuiltin
	}
	imports, skipped := catalogueRows(r.Identifier, listed, isBuiltin)
	applied, err := s.st.ApplyMCPImport(ctx, store.ApplyMCPImportParams{Identifier: r.Identifier, Tools: imports, Skipped: skipped})
	s.changes.changed(r.Identifier)
	if err != nil {
		return ImportResult{}, err
	}
	for _, c := range applied.Conflicts {
		skipped = append(skipped, fmt.Sprintf("%s: skipped, the name belongs to a tool of MCP server %q", c.Name, c.Server))
	}
	res := ImportResult{
		Server: serverOf(applied.Server), Advertised: len(listed), Imported: applied.Server.ToolCount,
		Added: applied.Added, Updated: applied.Updated, Restored: applied.Restored, Orphaned: applied.Orphaned,
		Skipped: skipped,
	}
	s.log.InfoContext(ctx, "MCP import done", "server", r.Identifier, "status", applied.Server.ImportStatus,
		"advertised", len(listed), "imported", res.Imported, "skipped", len(skipped), "orphaned", len(res.Orphaned))
	if p.Registry != nil {
		// Problems of other providers are logged by the registry; the
		// import itself is done either way.
		_ = p.Registry.Refresh(ctx)
	}
	return res, nil
}

// listTools connects to the server with a fresh session (an import must
// see the server as it is now) and walks tools/list within the caps.
func (s *Service) listTools(ctx context.Context, r store.MCPServer) ([]*sdk.Tool, time.Duration, error) {
	t, err := s.targetOf(ctx, r)
	if err != nil {
		return nil, 0, err
	}
	ctx, op, budget, cancel := s.begin(ctx)
	defer cancel()
	if err := s.resolveCheck(ctx, t); err != nil {
		return nil, 0, s.fail(ctx, "import", t, op, budget, err)
	}
	start := time.Now()
	cs, err := s.connect(ctx, t)
	if err != nil {
		return nil, 0, s.fail(ctx, "import", t, op, budget, err)
	}
	defer cs.Close()
	var tools []*sdk.Tool
	cursor := ""
	for page := 1; ; page++ {
		res, err := cs.ListTools(ctx, &sdk.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, 0, s.fail(ctx, "import", t, op, budget, err)
		}
		tools = append(tools, res.Tools...)
		if len(tools) > MaxImportTools {
			return nil, 0, opError(t.id, KindTooManyTools, "the MCP server %q advertises more than %d tools; the import was refused and the catalogue left as it was", t.id, MaxImportTools)
		}
		if res.NextCursor == "" {
			break
		}
		if page == MaxImportPages {
			return nil, 0, opError(t.id, KindTooManyTools, "the MCP server %q lists its tools on more than %d pages; the import was refused and the catalogue left as it was", t.id, MaxImportPages)
		}
		cursor = res.NextCursor
	}
	return tools, time.Since(start), nil
}

// catalogueRows checks every listed tool and returns the rows to keep and
// one line per skipped tool.
func catalogueRows(server string, listed []*sdk.Tool, isBuiltin func(string) bool) ([]store.MCPToolImport, []string) {
	var rows []store.MCPToolImport
	var skipped []string
	seen := map[string]bool{}
	for i, t := range listed {
		if t == nil || t.Name == "" {
			skipped = append(skipped, fmt.Sprintf("tool %d: skipped, it has no name", i+1))
			continue
		}
		shown := remoteText(t.Name, 80)
		name, err := LocalName(server, t.Name)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: skipped, %s", shown, err.Error()))
			continue
		}
		if seen[name] {
			skipped = append(skipped, fmt.Sprintf("%s: skipped, the server lists it twice", shown))
			continue
		}
		seen[name] = true
		if isBuiltin != nil && isBuiltin(name) {
			skipped = append(skipped, fmt.Sprintf("%s: skipped, %s is the name of a builtin tool", shown, name))
			continue
		}
		raw, err := json.Marshal(t.InputSchema)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: skipped, the input schema cannot be read", shown))
			continue
		}
		schema, err := NormalizeSchema(raw)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: skipped, %s", shown, err.Error()))
			continue
		}
		rows = append(rows, store.MCPToolImport{
			Name:        name,
			RemoteName:  t.Name,
			Title:       remoteText(t.Title, maxTitleRunes),
			Description: boundRunes(strings.TrimSpace(cleanText(t.Description)), maxDescriptionRunes),
			InputSchema: string(schema),
			Annotations: hintsJSON(t.Annotations),
		})
	}
	return rows, skipped
}

func boundRunes(s string, max int) string {
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return string(r[:max-1]) + "…"
}

// hintsJSON keeps the four hints of a tool's annotations for display.
func hintsJSON(a *sdk.ToolAnnotations) string {
	var h Hints
	if a != nil {
		h = Hints{ReadOnly: &a.ReadOnlyHint, Destructive: a.DestructiveHint, Idempotent: &a.IdempotentHint, OpenWorld: a.OpenWorldHint}
		if !a.ReadOnlyHint {
			h.ReadOnly = nil
		}
		if !a.IdempotentHint {
			h.Idempotent = nil
		}
	}
	b, _ := json.Marshal(h)
	return string(b)
}

func parseHints(s string) Hints {
	var h Hints
	_ = json.Unmarshal([]byte(s), &h)
	return h
}
