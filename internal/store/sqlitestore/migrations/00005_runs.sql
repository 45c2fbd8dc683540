-- +goose Up
-- One row per agent run. The lease (lease_owner, lease_expires), the
-- pending effect of a fenced write and the sealed suspended state are the
-- seams of durable runs: a run that stops for approval keeps its pending
-- turn in suspended_state, sealed with the master key.
-- cost is in picodollars (1e-12 USD), so sums are exact; NULL when a
-- model without prices answered.
CREATE TABLE runs (
    id                 TEXT NOT NULL PRIMARY KEY,
    status             TEXT NOT NULL,
    outcome            TEXT NOT NULL,
    termination_reason TEXT NOT NULL,
    owner_username     TEXT NOT NULL,
    owner_uid          INTEGER NOT NULL CHECK (owner_uid >= 0),
    configuration      TEXT NOT NULL,
    caller_source      TEXT NOT NULL,
    caller_operation   TEXT NOT NULL,
    privacy            TEXT NOT NULL,
    rounds             INTEGER NOT NULL CHECK (rounds >= 0),
    tool_calls         INTEGER NOT NULL CHECK (tool_calls >= 0),
    input_tokens       INTEGER NOT NULL CHECK (input_tokens >= 0),
    output_tokens      INTEGER NOT NULL CHECK (output_tokens >= 0),
    cost               INTEGER CHECK (cost >= 0),
    truncated          INTEGER NOT NULL CHECK (truncated IN (0, 1)),
    error              TEXT NOT NULL,
    error_class        TEXT NOT NULL,
    lease_owner        TEXT NOT NULL,
    lease_expires      TIMESTAMP,
    pending_effect     TEXT NOT NULL,
    turn_digest        TEXT NOT NULL,
    suspended_state    TEXT,
    created_at         TIMESTAMP NOT NULL,
    updated_at         TIMESTAMP NOT NULL,
    finished_at        TIMESTAMP
) WITHOUT ROWID;

-- Listings are newest first, overall or per owner; the reaper will look
-- for running rows whose lease expired.
CREATE INDEX runs_created ON runs (created_at, id);
CREATE INDEX runs_owner ON runs (owner_username, created_at, id);
CREATE INDEX runs_lease ON runs (status, lease_expires);

-- The ordered log of one run. seq is given by the run (0, 1, 2, …), so a
-- replayed step collides on the key instead of being stored twice.
CREATE TABLE run_events (
    run_id      TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL CHECK (seq >= 0),
    kind        TEXT NOT NULL,
    round       INTEGER NOT NULL CHECK (round >= 0),
    duration_ms INTEGER NOT NULL CHECK (duration_ms >= 0),
    payload     TEXT NOT NULL,
    created_at  TIMESTAMP NOT NULL,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;

-- +goose Down
DROP TABLE run_events;
DROP TABLE runs;
