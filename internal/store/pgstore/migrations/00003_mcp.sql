-- +goose Up
-- External MCP servers and the catalogue of their imported tools.
-- credential holds the sealed value (never the plaintext); an empty
-- data_class leaves the server inert. Nullable timestamps mean "never".
CREATE TABLE mcp_servers (
    identifier        text COLLATE "C" PRIMARY KEY,
    name              text NOT NULL,
    description       text NOT NULL,
    url               text NOT NULL,
    auth_kind         text NOT NULL CHECK (auth_kind IN ('none', 'bearer', 'header')),
    auth_header       text NOT NULL,
    credential        text NOT NULL,
    data_class        text NOT NULL,
    effect            text NOT NULL CHECK (effect IN ('read_only', 'idempotent_write', 'non_idempotent_write')),
    requires_approval boolean NOT NULL,
    admin_only        boolean NOT NULL,
    enabled           boolean NOT NULL,
    import_status     text NOT NULL,
    import_error      text NOT NULL,
    last_import       timestamptz,
    tool_count        integer NOT NULL CHECK (tool_count >= 0),
    last_contact      timestamptz,
    last_latency_ms   bigint NOT NULL CHECK (last_latency_ms >= 0),
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL,
    updated_by        text NOT NULL
);

-- name is the local tool name, unique across servers; effect '' follows
-- the server's effect.
CREATE TABLE mcp_tools (
    name         text COLLATE "C" PRIMARY KEY,
    server       text COLLATE "C" NOT NULL REFERENCES mcp_servers (identifier) ON DELETE CASCADE,
    remote_name  text COLLATE "C" NOT NULL,
    title        text NOT NULL,
    description  text NOT NULL,
    input_schema text NOT NULL,
    annotations  text NOT NULL,
    effect       text NOT NULL CHECK (effect IN ('', 'read_only', 'idempotent_write', 'non_idempotent_write')),
    orphaned     boolean NOT NULL,
    imported_at  timestamptz NOT NULL,
    UNIQUE (server, remote_name)
);

CREATE INDEX mcp_tools_server ON mcp_tools (server, name);

-- +goose Down
DROP TABLE mcp_tools;
DROP TABLE mcp_servers;
