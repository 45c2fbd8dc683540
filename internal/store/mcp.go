package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

const mcpServerColumns = `identifier, name, description, url, auth_kind, auth_header, credential, data_class,
	effect, requires_approval, admin_only, enabled, import_status, import_error, last_import, tool_count,
	last_contact, last_latency_ms, created_at, updated_at, updated_by`

const mcpToolColumns = `name, server, remote_name, title, description, input_schema, annotations, effect, orphaned, imported_at`

// mcpNullTime reads a nullable timestamp; NULL is the zero time ("never").
type mcpNullTime struct{ t *time.Time }

func (n mcpNullTime) Scan(src any) error {
	if src == nil {
		*n.t = time.Time{}
		return nil
	}
	return timeScanner(n).Scan(src)
}

func scanMCPServer(r rowScanner) (MCPServer, error) {
	var s MCPServer
	var latencyMS int64
	err := r.Scan(&s.Identifier, &s.Name, &s.Description, &s.URL, &s.AuthKind, &s.AuthHeader, &s.SealedCredential,
		&s.DataClass, &s.Effect, &s.RequiresApproval, &s.AdminOnly, &s.Enabled, &s.ImportStatus, &s.ImportError,
		mcpNullTime{&s.LastImport}, &s.ToolCount, mcpNullTime{&s.LastContact}, &latencyMS,
		timeScanner{&s.CreatedAt}, timeScanner{&s.UpdatedAt}, &s.UpdatedBy)
	s.LastLatency = time.Duration(latencyMS) * time.Millisecond
	return s, err
}

func scanMCPTool(r rowScanner) (MCPTool, error) {
	var t MCPTool
	err := r.Scan(&t.Name, &t.Server, &t.RemoteName, &t.Title, &t.Description, &t.InputSchema, &t.Annotations,
		&t.Effect, &t.Orphaned, timeScanner{&t.ImportedAt})
	return t, err
}

func checkMCPEffect(what, v string, allowEmpty bool) error {
	switch v {
	case MCPEffectReadOnly, MCPEffectIdempotentWrite, MCPEffectNonIdempotentWrite:
		return nil
	case "":
		if allowEmpty {
			return nil
		}
	}
	return invalid("%s %q is not read_only, idempotent_write or non_idempotent_write", what, v)
}

func checkMCPAuth(kind, header string) error {
	switch kind {
	case MCPAuthNone, MCPAuthBearer:
		return nil
	case MCPAuthHeader:
		if header == "" {
			return invalid("an MCP server with header auth needs a header name")
		}
		return nil
	}
	return invalid("MCP auth kind %q is not none, bearer or header", kind)
}

// checkMCPServerText checks the free-text fields of a server; nil pointers
// are skipped so Update can use it too.
func checkMCPServerText(name, description, url, header, credential, dataClass *string) error {
	for _, f := range []struct {
		what string
		v    *string
		max  int
	}{
		{"MCP server name", name, MaxNameLen},
		{"MCP server description", description, MaxMCPTextLen},
		{"MCP server URL", url, MaxMCPURLLen},
		{"MCP auth header name", header, MaxNameLen},
		{"sealed MCP credential", credential, MaxMCPTextLen},
		{"MCP server data class", dataClass, MaxNameLen},
	} {
		if f.v == nil {
			continue
		}
		if err := checkText(f.what, *f.v, f.max); err != nil {
			return err
		}
	}
	if name != nil && *name == "" {
		return invalid("MCP server name must not be empty")
	}
	if url != nil && *url == "" {
		return invalid("MCP server URL must not be empty")
	}
	return nil
}

func (s *sqlStore) CreateMCPServer(ctx context.Context, p CreateMCPServerParams) (MCPServer, error) {
	if err := checkName("MCP server identifier", p.Identifier); err != nil {
		return MCPServer{}, err
	}
	if err := checkMCPServerText(&p.Name, &p.Description, &p.URL, &p.AuthHeader, &p.SealedCredential, &p.DataClass); err != nil {
		return MCPServer{}, err
	}
	if err := checkMCPAuth(p.AuthKind, p.AuthHeader); err != nil {
		return MCPServer{}, err
	}
	if err := checkMCPEffect("MCP server effect", p.Effect, false); err != nil {
		return MCPServer{}, err
	}
	if err := checkName("actor (CreatedBy)", p.CreatedBy); err != nil {
		return MCPServer{}, err
	}
	now := s.stamp()
	row := s.w.QueryRowContext(ctx, `
		INSERT INTO mcp_servers (identifier, name, description, url, auth_kind, auth_header, credential, data_class,
			effect, requires_approval, admin_only, enabled, import_status, import_error, last_import, tool_count,
			last_contact, last_latency_ms, created_at, updated_at, updated_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, '', NULL, 0, NULL, 0, $14, $14, $15)
		ON CONFLICT (identifier) DO NOTHING
		RETURNING `+mcpServerColumns,
		p.Identifier, p.Name, p.Description, p.URL, p.AuthKind, p.AuthHeader, p.SealedCredential, p.DataClass,
		p.Effect, p.RequiresApproval, p.AdminOnly, p.Enabled, MCPImportNever, now, p.CreatedBy)
	srv, err := scanMCPServer(row)
	if errors.Is(err, sql.ErrNoRows) {
		return MCPServer{}, existsError{what: fmt.Sprintf("MCP server %q", p.Identifier)}
	}
	if err != nil {
		return MCPServer{}, fmt.Errorf("store: cannot save MCP server %q: %w", p.Identifier, err)
	}
	return srv, nil
}

func (s *sqlStore) MCPServer(ctx context.Context, identifier string) (MCPServer, error) {
	if err := checkName("MCP server identifier", identifier); err != nil {
		return MCPServer{}, err
	}
	srv, err := scanMCPServer(s.r.QueryRowContext(ctx, `SELECT `+mcpServerColumns+` FROM mcp_servers WHERE identifier = $1`, identifier))
	if errors.Is(err, sql.ErrNoRows) {
		return MCPServer{}, notFound("MCP server %q", identifier)
	}
	if err != nil {
		return MCPServer{}, fmt.Errorf("store: cannot read MCP server %q: %w", identifier, err)
	}
	return srv, nil
}

func (s *sqlStore) MCPServers(ctx context.Context) ([]MCPServer, error) {
	return queryAll(ctx, s.r, "list MCP servers", "an MCP server", scanMCPServer,
		`SELECT `+mcpServerColumns+` FROM mcp_servers ORDER BY identifier`)
}

func (s *sqlStore) UpdateMCPServer(ctx context.Context, p UpdateMCPServerParams) (MCPServer, error) {
	if err := checkName("MCP server identifier", p.Identifier); err != nil {
		return MCPServer{}, err
	}
	if err := checkName("actor (UpdatedBy)", p.UpdatedBy); err != nil {
		return MCPServer{}, err
	}
	if err := checkMCPServerText(p.Name, p.Description, p.URL, p.AuthHeader, p.SealedCredential, p.DataClass); err != nil {
		return MCPServer{}, err
	}
	if p.Effect != nil {
		if err := checkMCPEffect("MCP server effect", *p.Effect, false); err != nil {
			return MCPServer{}, err
		}
	}
	var out MCPServer
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		cur, err := scanMCPServer(tx.QueryRowContext(ctx, `SELECT `+mcpServerColumns+` FROM mcp_servers WHERE identifier = $1`, p.Identifier))
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("MCP server %q", p.Identifier)
		}
		if err != nil {
			return fmt.Errorf("store: cannot read MCP server %q: %w", p.Identifier, err)
		}
		set := func(dst *string, v *string) {
			if v != nil {
				*dst = *v
			}
		}
		setBool := func(dst *bool, v *bool) {
			if v != nil {
				*dst = *v
			}
		}
		set(&cur.Name, p.Name)
		set(&cur.Description, p.Description)
		set(&cur.URL, p.URL)
		set(&cur.AuthKind, p.AuthKind)
		set(&cur.AuthHeader, p.AuthHeader)
		set(&cur.SealedCredential, p.SealedCredential)
		set(&cur.DataClass, p.DataClass)
		set(&cur.Effect, p.Effect)
		setBool(&cur.RequiresApproval, p.RequiresApproval)
		setBool(&cur.AdminOnly, p.AdminOnly)
		setBool(&cur.Enabled, p.Enabled)
		// The auth pair is checked as it will be stored, so changing only
		// the kind to header cannot leave the header name empty.
		if err := checkMCPAuth(cur.AuthKind, cur.AuthHeader); err != nil {
			return err
		}
		out, err = scanMCPServer(tx.QueryRowContext(ctx, `
			UPDATE mcp_servers SET name = $2, description = $3, url = $4, auth_kind = $5, auth_header = $6,
				credential = $7, data_class = $8, effect = $9, requires_approval = $10, admin_only = $11,
				enabled = $12, updated_at = $13, updated_by = $14
			WHERE identifier = $1
			RETURNING `+mcpServerColumns,
			p.Identifier, cur.Name, cur.Description, cur.URL, cur.AuthKind, cur.AuthHeader, cur.SealedCredential,
			cur.DataClass, cur.Effect, cur.RequiresApproval, cur.AdminOnly, cur.Enabled, s.stamp(), p.UpdatedBy))
		if err != nil {
			return fmt.Errorf("store: cannot update MCP server %q: %w", p.Identifier, err)
		}
		return nil
	})
	if err != nil {
		return MCPServer{}, err
	}
	return out, nil
}

func (s *sqlStore) DeleteMCPServer(ctx context.Context, identifier string) error {
	if err := checkName("MCP server identifier", identifier); err != nil {
		return err
	}
	return s.writeTx(ctx, func(tx *sql.Tx) error {
		// The catalogue goes first, so the delete does not depend on the
		// database enforcing the foreign key.
		if _, err := tx.ExecContext(ctx, `DELETE FROM mcp_tools WHERE server = $1`, identifier); err != nil {
			return fmt.Errorf("store: cannot delete the catalogue of MCP server %q: %w", identifier, err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM mcp_oauth WHERE server = $1`, identifier); err != nil {
			return fmt.Errorf("store: cannot delete the OAuth record of MCP server %q: %w", identifier, err)
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM mcp_servers WHERE identifier = $1`, identifier)
		if err != nil {
			return fmt.Errorf("store: cannot delete MCP server %q: %w", identifier, err)
		}
		return mustAffect(res, "MCP server %q", identifier)
	})
}

func (s *sqlStore) RecordMCPContact(ctx context.Context, p RecordMCPContactParams) error {
	if err := checkName("MCP server identifier", p.Identifier); err != nil {
		return err
	}
	if p.Latency < 0 {
		return invalid("MCP latency %v is negative", p.Latency)
	}
	at := s.stamp()
	if !p.At.IsZero() {
		at = p.At.UTC().Truncate(time.Microsecond)
	}
	res, err := s.w.ExecContext(ctx, `UPDATE mcp_servers SET last_contact = $2, last_latency_ms = $3 WHERE identifier = $1`,
		p.Identifier, at, p.Latency.Milliseconds())
	if err != nil {
		return fmt.Errorf("store: cannot record contact with MCP server %q: %w", p.Identifier, err)
	}
	return mustAffect(res, "MCP server %q", p.Identifier)
}

func (s *sqlStore) RecordMCPImportFailure(ctx context.Context, p RecordMCPImportFailureParams) (MCPServer, error) {
	if err := checkName("MCP server identifier", p.Identifier); err != nil {
		return MCPServer{}, err
	}
	if p.Error == "" {
		return MCPServer{}, invalid("a refused MCP import needs a reason")
	}
	if err := checkText("MCP import error", p.Error, MaxMCPTextLen); err != nil {
		return MCPServer{}, err
	}
	srv, err := scanMCPServer(s.w.QueryRowContext(ctx, `
		UPDATE mcp_servers SET import_status = $2, import_error = $3 WHERE identifier = $1
		RETURNING `+mcpServerColumns, p.Identifier, MCPImportError, p.Error))
	if errors.Is(err, sql.ErrNoRows) {
		return MCPServer{}, notFound("MCP server %q", p.Identifier)
	}
	if err != nil {
		return MCPServer{}, fmt.Errorf("store: cannot record the failed import of MCP server %q: %w", p.Identifier, err)
	}
	return srv, nil
}

func checkMCPToolImport(server string, t MCPToolImport) error {
	if err := checkName("MCP tool name", t.Name); err != nil {
		return err
	}
	if err := checkName("MCP remote tool name", t.RemoteName); err != nil {
		return fmt.Errorf("tool %q: %w", t.Name, err)
	}
	for _, f := range []struct {
		what, v string
		max     int
	}{
		{"title", t.Title, MaxMCPTextLen},
		{"description", t.Description, MaxMCPTextLen},
		{"input schema", t.InputSchema, MaxMCPSchemaLen},
		{"annotations", t.Annotations, MaxMCPTextLen},
	} {
		if err := checkText(fmt.Sprintf("the %s of MCP tool %q (server %q)", f.what, t.Name, server), f.v, f.max); err != nil {
			return err
		}
	}
	if t.InputSchema == "" {
		return invalid("MCP tool %q has no input schema", t.Name)
	}
	return nil
}

func (s *sqlStore) ApplyMCPImport(ctx context.Context, p ApplyMCPImportParams) (MCPImportResult, error) {
	if err := checkName("MCP server identifier", p.Identifier); err != nil {
		return MCPImportResult{}, err
	}
	if len(p.Tools) > MaxMCPImportTools {
		return MCPImportResult{}, invalid("an MCP import holds at most %d tools, not %d", MaxMCPImportTools, len(p.Tools))
	}
	seen := make(map[string]bool, len(p.Tools))
	for _, t := range p.Tools {
		if err := checkMCPToolImport(p.Identifier, t); err != nil {
			return MCPImportResult{}, err
		}
		if seen[t.Name] {
			return MCPImportResult{}, invalid("MCP tool %q is given twice", t.Name)
		}
		seen[t.Name] = true
	}
	for _, line := range p.Skipped {
		if err := checkText("MCP import note", line, MaxMCPTextLen); err != nil {
			return MCPImportResult{}, err
		}
	}
	var res MCPImportResult
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		res = MCPImportResult{}
		now := s.stamp()
		// Touching the row first takes, on PostgreSQL, the catalogue
		// generation's lock (tool_count moves it) and then the row's, in
		// the order every catalogue write takes them: two imports of one
		// server run one after the other, and an import and a change of
		// the server cannot deadlock.
		r, err := tx.ExecContext(ctx, `UPDATE mcp_servers SET tool_count = tool_count WHERE identifier = $1`, p.Identifier)
		if err != nil {
			return fmt.Errorf("store: cannot import into MCP server %q: %w", p.Identifier, err)
		}
		if err := mustAffect(r, "MCP server %q", p.Identifier); err != nil {
			return err
		}
		before, err := mcpToolStates(ctx, tx, p.Identifier)
		if err != nil {
			return err
		}
		kept := make(map[string]bool, len(p.Tools))
		for _, t := range p.Tools {
			var name string
			err := tx.QueryRowContext(ctx, `
				INSERT INTO mcp_tools (name, server, remote_name, title, description, input_schema, annotations, effect, orphaned, imported_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, '', $8, $9)
				ON CONFLICT (name) DO UPDATE
				SET remote_name = excluded.remote_name, title = excluded.title, description = excluded.description,
					input_schema = excluded.input_schema, annotations = excluded.annotations,
					orphaned = excluded.orphaned, imported_at = excluded.imported_at
				WHERE mcp_tools.server = excluded.server
				RETURNING name`,
				t.Name, p.Identifier, t.RemoteName, t.Title, t.Description, t.InputSchema, t.Annotations, false, now,
			).Scan(&name)
			if errors.Is(err, sql.ErrNoRows) {
				var holder string
				if err := tx.QueryRowContext(ctx, `SELECT server FROM mcp_tools WHERE name = $1`, t.Name).Scan(&holder); err != nil {
					return fmt.Errorf("store: cannot read the holder of MCP tool %q: %w", t.Name, err)
				}
				res.Conflicts = append(res.Conflicts, MCPToolConflict{Name: t.Name, Server: holder})
				continue
			}
			if err != nil {
				return fmt.Errorf("store: cannot import MCP tool %q: %w", t.Name, err)
			}
			kept[t.Name] = true
			orphaned, existed := before[t.Name]
			switch {
			case !existed:
				res.Added = append(res.Added, t.Name)
			case orphaned:
				res.Restored = append(res.Restored, t.Name)
			default:
				res.Updated = append(res.Updated, t.Name)
			}
		}
		for name, orphaned := range before {
			if kept[name] || orphaned {
				continue
			}
			if _, err := tx.ExecContext(ctx, `UPDATE mcp_tools SET orphaned = $2 WHERE name = $1`, name, true); err != nil {
				return fmt.Errorf("store: cannot orphan MCP tool %q: %w", name, err)
			}
			res.Orphaned = append(res.Orphaned, name)
		}
		for _, l := range [][]string{res.Added, res.Updated, res.Restored, res.Orphaned} {
			slices.Sort(l)
		}
		notes := slices.Clone(p.Skipped)
		for _, c := range res.Conflicts {
			notes = append(notes, fmt.Sprintf("%s: skipped, the name belongs to a tool of MCP server %q", c.Name, c.Server))
		}
		status := MCPImportOK
		if len(notes) > 0 {
			status = MCPImportPartial
		}
		msg := strings.Join(notes, "\n")
		if len(msg) > MaxMCPTextLen {
			msg = strings.ToValidUTF8(msg[:MaxMCPTextLen], "")
		}
		res.Server, err = scanMCPServer(tx.QueryRowContext(ctx, `
			UPDATE mcp_servers SET import_status = $2, import_error = $3, last_import = $4, tool_count = $5
			WHERE identifier = $1
			RETURNING `+mcpServerColumns, p.Identifier, status, msg, now, len(kept)))
		if err != nil {
			return fmt.Errorf("store: cannot record the import of MCP server %q: %w", p.Identifier, err)
		}
		return nil
	})
	if err != nil {
		return MCPImportResult{}, err
	}
	return res, nil
}

// mcpToolStates maps the server's tool names to their orphaned flag.
func mcpToolStates(ctx context.Context, tx *sql.Tx, server string) (map[string]bool, error) {
	rows, err := tx.QueryContext(ctx, `SELECT name, orphaned FROM mcp_tools WHERE server = $1`, server)
	if err != nil {
		return nil, fmt.Errorf("store: cannot read the catalogue of MCP server %q: %w", server, err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var name string
		var orphaned bool
		if err := rows.Scan(&name, &orphaned); err != nil {
			return nil, fmt.Errorf("store: cannot read the catalogue of MCP server %q: %w", server, err)
		}
		out[name] = orphaned
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: cannot read the catalogue of MCP server %q: %w", server, err)
	}
	return out, nil
}

func (s *sqlStore) MCPTools(ctx context.Context, p ListMCPToolsParams) ([]MCPTool, error) {
	q := `SELECT ` + mcpToolColumns + ` FROM mcp_tools WHERE ($1 = '' OR server = $1) AND ($2 OR orphaned = $3) ORDER BY name`
	if err := checkText("MCP server filter", p.Server, MaxNameLen); err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, q, p.Server, p.IncludeOrphaned, false)
	if err != nil {
		return nil, fmt.Errorf("store: cannot list MCP tools: %w", err)
	}
	defer rows.Close()
	out := []MCPTool{}
	for rows.Next() {
		t, err := scanMCPTool(rows)
		if err != nil {
			return nil, fmt.Errorf("store: cannot read an MCP tool: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: cannot list MCP tools: %w", err)
	}
	return out, nil
}

func (s *sqlStore) MCPTool(ctx context.Context, name string) (MCPTool, error) {
	if err := checkName("MCP tool name", name); err != nil {
		return MCPTool{}, err
	}
	t, err := scanMCPTool(s.r.QueryRowContext(ctx, `SELECT `+mcpToolColumns+` FROM mcp_tools WHERE name = $1`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return MCPTool{}, notFound("MCP tool %q", name)
	}
	if err != nil {
		return MCPTool{}, fmt.Errorf("store: cannot read MCP tool %q: %w", name, err)
	}
	return t, nil
}

func (s *sqlStore) MCPToolWithServer(ctx context.Context, name string) (MCPTool, MCPServer, error) {
	if err := checkName("MCP tool name", name); err != nil {
		return MCPTool{}, MCPServer{}, err
	}
	var t MCPTool
	var srv MCPServer
	var latencyMS int64
	err := s.r.QueryRowContext(ctx, `
		SELECT t.name, t.server, t.remote_name, t.title, t.description, t.input_schema, t.annotations, t.effect, t.orphaned, t.imported_at,
			s.identifier, s.name, s.description, s.url, s.auth_kind, s.auth_header, s.credential, s.data_class,
			s.effect, s.requires_approval, s.admin_only, s.enabled, s.import_status, s.import_error, s.last_import, s.tool_count,
			s.last_contact, s.last_latency_ms, s.created_at, s.updated_at, s.updated_by
		FROM mcp_tools t JOIN mcp_servers s ON s.identifier = t.server
		WHERE t.name = $1`, name).Scan(
		&t.Name, &t.Server, &t.RemoteName, &t.Title, &t.Description, &t.InputSchema, &t.Annotations, &t.Effect, &t.Orphaned, timeScanner{&t.ImportedAt},
		&srv.Identifier, &srv.Name, &srv.Description, &srv.URL, &srv.AuthKind, &srv.AuthHeader, &srv.SealedCredential,
		&srv.DataClass, &srv.Effect, &srv.RequiresApproval, &srv.AdminOnly, &srv.Enabled, &srv.ImportStatus, &srv.ImportError,
		mcpNullTime{&srv.LastImport}, &srv.ToolCount, mcpNullTime{&srv.LastContact}, &latencyMS,
		timeScanner{&srv.CreatedAt}, timeScanner{&srv.UpdatedAt}, &srv.UpdatedBy)
	if errors.Is(err, sql.ErrNoRows) {
		return MCPTool{}, MCPServer{}, notFound("MCP tool %q", name)
	}
	if err != nil {
		return MCPTool{}, MCPServer{}, fmt.Errorf("store: cannot read MCP tool %q: %w", name, err)
	}
	srv.LastLatency = time.Duration(latencyMS) * time.Millisecond
	return t, srv, nil
}

func (s *sqlStore) SetMCPToolEffect(ctx context.Context, p SetMCPToolEffectParams) (MCPTool, error) {
	if err := checkName("MCP tool name", p.Name); err != nil {
		return MCPTool{}, err
	}
	if err := checkMCPEffect("MCP tool effect", p.Effect, true); err != nil {
		return MCPTool{}, err
	}
	t, err := scanMCPTool(s.w.QueryRowContext(ctx, `UPDATE mcp_tools SET effect = $2 WHERE name = $1 RETURNING `+mcpToolColumns, p.Name, p.Effect))
	if errors.Is(err, sql.ErrNoRows) {
		return MCPTool{}, notFound("MCP tool %q", p.Name)
	}
	if err != nil {
		return MCPTool{}, fmt.Errorf("store: cannot set the effect of MCP tool %q: %w", p.Name, err)
	}
	return t, nil
}

func (s *sqlStore) MCPCatalogueGeneration(ctx context.Context) (int64, error) {
	var g int64
	if err := s.r.QueryRowContext(ctx, `SELECT generation FROM mcp_catalogue_generation WHERE id = 1`).Scan(&g); err != nil {
		return 0, fmt.Errorf("store: cannot read the MCP catalogue's generation: %w", err)
	}
	return g, nil
}
