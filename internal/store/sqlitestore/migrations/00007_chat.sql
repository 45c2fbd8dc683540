-- +goose Up
-- Chat conversations. The turn's state (claim_id … error_code) is written
-- whole by every compare-and-set change; status, decision and role values
-- are checked in Go so that a new value needs no table rebuild here.
-- message_count always equals the highest seq of the conversation's
-- messages (seq runs from 1 without gaps). AUTOINCREMENT: an id is never
-- reused, so a deleted conversation's id never names another one.
CREATE TABLE conversations (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    owner_uid       INTEGER NOT NULL CHECK (owner_uid > 0),
    owner_username  TEXT NOT NULL,
    title           TEXT NOT NULL,
    status          TEXT NOT NULL,
    task            TEXT NOT NULL,
    claim_id        TEXT NOT NULL,
    run_id          TEXT NOT NULL,
    decision        TEXT NOT NULL,
    decision_digest TEXT NOT NULL,
    decision_by     TEXT NOT NULL,
    decision_reason TEXT NOT NULL,
    pending_input   TEXT NOT NULL,
    error_message   TEXT NOT NULL,
    error_code      TEXT NOT NULL,
    pinned          INTEGER NOT NULL CHECK (pinned IN (0, 1)),
    archived        INTEGER NOT NULL CHECK (archived IN (0, 1)),
    message_count   INTEGER NOT NULL CHECK (message_count >= 0),
    created_at      TIMESTAMP NOT NULL,
    updated_at      TIMESTAMP NOT NULL
);

-- The worker claims the least recently updated processing row; cleanup
-- and reconcile look for old rows of a status. The list is per owner.
CREATE INDEX conversations_claim ON conversations (status, updated_at, id);
CREATE INDEX conversations_owner ON conversations (owner_uid, archived, pinned, updated_at, id);

-- The ordered messages of a conversation. A rowid table (not WITHOUT
-- ROWID): a message may be large.
CREATE TABLE chat_messages (
    conversation_id  INTEGER NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    seq              INTEGER NOT NULL CHECK (seq >= 1),
    role             TEXT NOT NULL,
    content          TEXT NOT NULL,
    beside_tool_call INTEGER NOT NULL CHECK (beside_tool_call IN (0, 1)),
    notice           TEXT NOT NULL,
    created_at       TIMESTAMP NOT NULL,
    PRIMARY KEY (conversation_id, seq)
);

-- Service accounts' bearer tokens: only the SHA-256 of the secret is
-- kept. scopes is a comma list; NULL times mean never.
CREATE TABLE service_tokens (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    name         TEXT NOT NULL UNIQUE,
    username     TEXT NOT NULL,
    scopes       TEXT NOT NULL,
    secret_hash  TEXT NOT NULL UNIQUE,
    created_by   TEXT NOT NULL,
    created_at   TIMESTAMP NOT NULL,
    expires_at   TIMESTAMP,
    last_used_at TIMESTAMP,
    revoked      INTEGER NOT NULL CHECK (revoked IN (0, 1))
);

-- Browser logins: only the SHA-256 of the cookie value is kept.
CREATE TABLE web_sessions (
    id_hash    TEXT NOT NULL PRIMARY KEY,
    username   TEXT NOT NULL,
    csrf_token TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    expires_at TIMESTAMP NOT NULL
) WITHOUT ROWID;

CREATE INDEX web_sessions_expires ON web_sessions (expires_at);

-- +goose Down
DROP TABLE web_sessions;
DROP TABLE service_tokens;
DROP TABLE chat_messages;
DROP TABLE conversations;
