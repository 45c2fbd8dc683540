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
    id         integer PRIMARY KEY CHECK (id = 1),
    generation bigint NOT NULL
);
INSERT INTO mcp_catalogue_generation (id, generation) VALUES (1, 1);

-- The triggers fire before each writing statement, so a transaction takes
-- the generation row's lock before any row lock of the catalogue tables:
-- an import (whose first statement touches tool_count) and a concurrent
-- change of the same server queue on it instead of deadlocking.
-- +goose StatementBegin
CREATE FUNCTION bump_mcp_catalogue_generation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE mcp_catalogue_generation SET generation = generation + 1 WHERE id = 1;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER mcp_servers_generation BEFORE INSERT OR DELETE OR TRUNCATE ON mcp_servers
    FOR EACH STATEMENT EXECUTE FUNCTION bump_mcp_catalogue_generation();
CREATE TRIGGER mcp_servers_generation_update BEFORE UPDATE OF identifier, name, description, url, auth_kind,
    auth_header, credential, data_class, effect, requires_approval, admin_only, enabled, tool_count ON mcp_servers
    FOR EACH STATEMENT EXECUTE FUNCTION bump_mcp_catalogue_generation();
CREATE TRIGGER mcp_tools_generation BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON mcp_tools
    FOR EACH STATEMENT EXECUTE FUNCTION bump_mcp_catalogue_generation();

-- +goose Down
DROP TRIGGER mcp_tools_generation ON mcp_tools;
DROP TRIGGER mcp_servers_generation_update ON mcp_servers;
DROP TRIGGER mcp_servers_generation ON mcp_servers;
DROP FUNCTION bump_mcp_catalogue_generation();
DROP TABLE mcp_catalogue_generation;
