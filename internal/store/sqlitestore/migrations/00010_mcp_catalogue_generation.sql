-- +goose Up
-- mcp_catalogue_generation counts the changes to what the MCP catalogue
-- registers: the servers' declarations and the imported tools. Triggers
-- bump it inside the writing transaction, whoever writes: t3agent's mcp
-- commands, another process, or an operator's own SQL. A registry keeps
-- the tools it built while this one row stands, instead of reading the
-- catalogue for every run. The health columns (last_contact,
-- last_latency_ms) and the import notes (import_status, import_error,
-- last_import) change nothing that is registered and do not bump it.
CREATE TABLE mcp_catalogue_generation (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    generation INTEGER NOT NULL
);
INSERT INTO mcp_catalogue_generation (id, generation) VALUES (1, 1);

-- +goose StatementBegin
CREATE TRIGGER mcp_servers_generation_insert AFTER INSERT ON mcp_servers BEGIN
    UPDATE mcp_catalogue_generation SET generation = generation + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER mcp_servers_generation_update AFTER UPDATE OF identifier, name, description, url, auth_kind,
    auth_header, credential, data_class, effect, requires_approval, admin_only, enabled, tool_count ON mcp_servers BEGIN
    UPDATE mcp_catalogue_generation SET generation = generation + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER mcp_servers_generation_delete AFTER DELETE ON mcp_servers BEGIN
    UPDATE mcp_catalogue_generation SET generation = generation + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER mcp_tools_generation_insert AFTER INSERT ON mcp_tools BEGIN
    UPDATE mcp_catalogue_generation SET generation = generation + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER mcp_tools_generation_update AFTER UPDATE ON mcp_tools BEGIN
    UPDATE mcp_catalogue_generation SET generation = generation + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER mcp_tools_generation_delete AFTER DELETE ON mcp_tools BEGIN
    UPDATE mcp_catalogue_generation SET generation = generation + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER mcp_tools_generation_delete;
DROP TRIGGER mcp_tools_generation_update;
DROP TRIGGER mcp_tools_generation_insert;
DROP TRIGGER mcp_servers_generation_delete;
DROP TRIGGER mcp_servers_generation_update;
DROP TRIGGER mcp_servers_generation_insert;
DROP TABLE mcp_catalogue_generation;
