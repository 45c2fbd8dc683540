-- +goose Up
-- External MCP servers and the catalogue of their imported tools.
-- credential holds the sealed value (never the plaintext); an empty
-- data_class leaves the server inert. Nullable timestamps mean "never".
CREATE TABLE mcp_servers (
    identifier        TEXT NOT NULL PRIMARY KEY,
    name              TEXT NOT NULL,
    description       TEXT NOT NULL,
    url               TEXT NOT NULL,
    auth_kind         TEXT NOT NULL CHECK (auth_kind IN ('none', 'bearer', 'header')),
    auth_header       TEXT NOT NULL,
    credential        TEXT NOT NULL,
    data_class        TEXT NOT NULL,
    effect            TEXT NOT NULL CHECK (effect IN ('read_only', 'idempotent_write', 'non_idempotent_write')),
    requires_approval INTEGER NOT NULL CHECK (requires_approval IN (0, 1)),
    admin_only        INTEGER NOT NULL CHECK (admin_only IN (0, 1)),
    enabled           INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    import_status     TEXT NOT NULL,
    import_error      TEXT NOT NULL,
    last_import       TIMESTAMP,
    tool_count        INTEGER NOT NULL CHECK (tool_count >= 0),
    last_contact      TIMESTAMP,
    last_latency_ms   INTEGER NOT NULL CHECK (last_latency_ms >= 0),
    created_at        TIMESTAMP NOT NULL,
    updated_at        TIMESTAMP NOT NULL,
    updated_by        TEXT NOT NULL
) WITHOUT ROWID;

-- name is the local tool name, unique across servers; effect '' follows
-- the server's effect.
CREATE TABLE mcp_tools (
    name         TEXT NOT NULL PRIMARY KEY,
    server       TEXT NOT NULL REFERENCES mcp_servers (identifier) ON DELETE CASCADE,
    remote_name  TEXT NOT NULL,
    title        TEXT NOT NULL,
    description  TEXT NOT NULL,
    input_schema TEXT NOT NULL,
    annotations  TEXT NOT NULL,
    effect       TEXT NOT NULL CHECK (effect IN ('', 'read_only', 'idempotent_write', 'non_idempotent_write')),
    orphaned     INTEGER NOT NULL CHECK (orphaned IN (0, 1)),
    imported_at  TIMESTAMP NOT NULL,
    UNIQUE (server, remote_name)
) WITHOUT ROWID;

CREATE INDEX mcp_tools_server ON mcp_tools (server, name);

-- +goose Down
DROP TABLE mcp_tools;
DROP TABLE mcp_servers;
