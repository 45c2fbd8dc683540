-- +goose Up
-- OAuth 2.1 authorization of t3agent (as a client) to an external MCP
-- server: how it registers and which flow it uses, and the grant it
-- holds. client_secret and token are sealed with the master key, bound
-- to the server (and the token also to issuer); never plaintext.
-- client_id '' means dynamic client registration; token '' means no
-- grant yet. status says whether calls can be made or a person must log
-- in again (a revoked or expired grant).
CREATE TABLE mcp_oauth (
    server        TEXT NOT NULL PRIMARY KEY REFERENCES mcp_servers (identifier) ON DELETE CASCADE,
    flow          TEXT NOT NULL CHECK (flow IN ('authorization_code', 'client_credentials')),
    client_id     TEXT NOT NULL,
    client_secret TEXT NOT NULL,
    scopes        TEXT NOT NULL,
    redirect_url  TEXT NOT NULL,
    issuer        TEXT NOT NULL,
    token         TEXT NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('needs_login', 'connected')),
    status_reason TEXT NOT NULL,
    updated_at    TIMESTAMP NOT NULL
) WITHOUT ROWID;

-- +goose Down
DROP TABLE mcp_oauth;
