-- +goose Up
-- t3agent as an MCP server: the record of every call through the MCP
-- facade, and the OAuth 2.1 authorization server's clients, pending
-- authorization requests, grants and tokens. Secrets are never stored:
-- codes and refresh tokens only as their SHA-256, access tokens by a
-- random id inside an encrypted bearer value.

-- One row per facade call: who, through which client and credential,
-- which tool, the decision and the outcome, how long it took. There is
-- deliberately no column for a call's arguments or its result.
CREATE TABLE mcp_calls (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    actor_username TEXT NOT NULL,
    actor_uid      INTEGER NOT NULL CHECK (actor_uid >= 0),
    client         TEXT NOT NULL,
    credential     TEXT NOT NULL,
    configuration  TEXT NOT NULL,
    method         TEXT NOT NULL,
    tool           TEXT NOT NULL,
    decision       TEXT NOT NULL,
    outcome        TEXT NOT NULL,
    run_id         TEXT NOT NULL,
    duration_us    INTEGER NOT NULL CHECK (duration_us >= 0),
    created_at     TIMESTAMP NOT NULL
);
CREATE INDEX mcp_calls_actor ON mcp_calls (actor_username, id);

-- OAuth clients: registered dynamically (RFC 7591, a random id) or known
-- by their Client ID Metadata Document (the id is its https URL).
-- redirect_uris is a JSON array.
CREATE TABLE oauth_clients (
    client_id     TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    redirect_uris TEXT NOT NULL,
    kind          TEXT NOT NULL,
    created_at    TIMESTAMP NOT NULL,
    updated_at    TIMESTAMP NOT NULL
);

-- Authorization requests between /authorize and the code's redemption.
-- username and consent_hash are set when the person logs in on the
-- consent page; done when they allow; code_hash when the code is issued.
CREATE TABLE oauth_requests (
    id                    TEXT PRIMARY KEY,
    client_id             TEXT NOT NULL,
    redirect_uri          TEXT NOT NULL,
    state                 TEXT NOT NULL,
    nonce                 TEXT NOT NULL,
    scopes                TEXT NOT NULL,
    resource              TEXT NOT NULL,
    code_challenge        TEXT NOT NULL,
    code_challenge_method TEXT NOT NULL,
    response_mode         TEXT NOT NULL,
    username              TEXT NOT NULL,
    consent_hash          TEXT NOT NULL,
    done                  INTEGER NOT NULL CHECK (done IN (0, 1)),
    code_hash             TEXT UNIQUE,
    auth_time             TIMESTAMP,
    created_at            TIMESTAMP NOT NULL,
    expires_at            TIMESTAMP NOT NULL
);
CREATE INDEX oauth_requests_expiry ON oauth_requests (expires_at);

-- A grant is a person's consent for one client on one resource; its
-- tokens die with it.
CREATE TABLE oauth_grants (
    id           TEXT PRIMARY KEY,
    username     TEXT NOT NULL,
    user_uid     INTEGER NOT NULL CHECK (user_uid >= 0),
    client_id    TEXT NOT NULL,
    client_name  TEXT NOT NULL,
    resource     TEXT NOT NULL,
    scopes       TEXT NOT NULL,
    created_at   TIMESTAMP NOT NULL,
    last_used_at TIMESTAMP,
    revoked_at   TIMESTAMP
);
CREATE INDEX oauth_grants_user ON oauth_grants (username, created_at);

-- Access and refresh tokens. An access token's id is random and travels
-- encrypted in the bearer value; a refresh token's id is the SHA-256 of
-- its value. used_at marks a refresh token that was rotated.
CREATE TABLE oauth_tokens (
    id         TEXT PRIMARY KEY,
    grant_id   TEXT NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
    kind       TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    expires_at TIMESTAMP NOT NULL,
    used_at    TIMESTAMP,
    revoked_at TIMESTAMP
);
CREATE INDEX oauth_tokens_grant ON oauth_tokens (grant_id);
CREATE INDEX oauth_tokens_expiry ON oauth_tokens (expires_at);

-- +goose Down
DROP TABLE oauth_tokens;
DROP TABLE oauth_grants;
DROP TABLE oauth_requests;
DROP TABLE oauth_clients;
DROP TABLE mcp_calls;
