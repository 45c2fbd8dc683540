-- +goose Up
-- Chat conversations. The turn's state (claim_id … error_code) is written
-- whole by every compare-and-set change; status, decision and role values
-- are checked in Go, as on SQLite, where a CHECK could not be changed
-- without rebuilding the table. message_count always equals the highest
-- seq of the conversation's messages (seq runs from 1 without gaps).
CREATE TABLE conversations (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    owner_uid       bigint NOT NULL CHECK (owner_uid > 0),
    owner_username  text NOT NULL,
    title           text NOT NULL,
    status          text NOT NULL,
    task            text NOT NULL,
    claim_id        text NOT NULL,
    run_id          text NOT NULL,
    decision        text NOT NULL,
    decision_digest text NOT NULL,
    decision_by     text NOT NULL,
    decision_reason text NOT NULL,
    pending_input   text NOT NULL,
    error_message   text NOT NULL,
    error_code      text NOT NULL,
    pinned          boolean NOT NULL,
    archived        boolean NOT NULL,
    message_count   integer NOT NULL CHECK (message_count >= 0),
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);

-- The worker claims the least recently updated processing row; cleanup
-- and reconcile look for old rows of a status. The list is per owner.
CREATE INDEX conversations_claim ON conversations (status, updated_at, id);
CREATE INDEX conversations_owner ON conversations (owner_uid, archived, pinned, updated_at, id);

-- The ordered messages of a conversation.
CREATE TABLE chat_messages (
    conversation_id  bigint NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    seq              integer NOT NULL CHECK (seq >= 1),
    role             text NOT NULL,
    content          text NOT NULL,
    beside_tool_call boolean NOT NULL,
    notice           text NOT NULL,
    created_at       timestamptz NOT NULL,
    PRIMARY KEY (conversation_id, seq)
);

-- Service accounts' bearer tokens: only the SHA-256 of the secret is
-- kept. scopes is a comma list; NULL times mean never.
CREATE TABLE service_tokens (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name         text COLLATE "C" NOT NULL UNIQUE,
    username     text NOT NULL,
    scopes       text NOT NULL,
    secret_hash  text COLLATE "C" NOT NULL UNIQUE,
    created_by   text NOT NULL,
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz,
    last_used_at timestamptz,
    revoked      boolean NOT NULL
);

-- Browser logins: only the SHA-256 of the cookie value is kept.
CREATE TABLE web_sessions (
    id_hash    text COLLATE "C" PRIMARY KEY,
    username   text NOT NULL,
    csrf_token text NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
);

CREATE INDEX web_sessions_expires ON web_sessions (expires_at);

-- +goose Down
DROP TABLE web_sessions;
DROP TABLE service_tokens;
DROP TABLE chat_messages;
DROP TABLE conversations;
