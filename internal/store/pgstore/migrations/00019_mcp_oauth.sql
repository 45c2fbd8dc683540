-- +goose Up
-- OAuth 2.1 authorization of t3agent (as a client) to an external MCP
-- server: how it registers and which flow it uses, and the grant it
-- holds. client_secret and token are sealed with the master key, bound
-- to the server (and the token also to issuer); never plaintext.
-- client_id '' means dynamic client registration; token '' means no
-- grant yet. status says whether calls can be made or a person must log
-- in again (a revoked or expired grant).
CREATE TABLE mcp_oauth (
    server        text COLLATE "C" PRIMARY KEY REFERENCES mcp_servers (identifier) ON DELETE CASCADE,
    flow          text NOT NULL CHECK (flow IN ('authorization_code', 'client_credentials')),
    client_id     text NOT NULL,
    client_secret text NOT NULL,
    scopes        text NOT NULL,
    redirect_url  text NOT NULL,
    issuer        text NOT NULL,
    token         text NOT NULL,
    status        text NOT NULL CHECK (status IN ('needs_login', 'connected')),
    status_reason text NOT NULL,
    updated_at    timestamptz NOT NULL
);

-- +goose Down
DROP TABLE mcp_oauth;
