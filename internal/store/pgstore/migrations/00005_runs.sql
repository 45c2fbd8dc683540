-- +goose Up
-- One row per agent run. The lease (lease_owner, lease_expires), the
-- pending effect of a fenced write and the sealed suspended state are the
-- seams of durable runs: a run that stops for approval keeps its pending
-- turn in suspended_state, sealed with the master key.
-- cost is in picodollars (1e-12 USD), so sums are exact; NULL when a
-- model without prices answered.
CREATE TABLE runs (
    id                 text COLLATE "C" PRIMARY KEY,
    status             text NOT NULL,
    outcome            text NOT NULL,
    termination_reason text NOT NULL,
    owner_username     text COLLATE "C" NOT NULL,
    owner_uid          bigint NOT NULL CHECK (owner_uid >= 0),
    configuration      text NOT NULL,
    caller_source      text NOT NULL,
    caller_operation   text NOT NULL,
    privacy            text NOT NULL,
    rounds             integer NOT NULL CHECK (rounds >= 0),
    tool_calls         integer NOT NULL CHECK (tool_calls >= 0),
    input_tokens       bigint NOT NULL CHECK (input_tokens >= 0),
    output_tokens      bigint NOT NULL CHECK (output_tokens >= 0),
    cost               bigint CHECK (cost >= 0),
    truncated          boolean NOT NULL,
    error              text NOT NULL,
    error_class        text NOT NULL,
    lease_owner        text NOT NULL,
    lease_expires      timestamptz,
    pending_effect     text NOT NULL,
    turn_digest        text NOT NULL,
    suspended_state    text,
    created_at         timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL,
    finished_at        timestamptz
);

-- Listings are newest first, overall or per owner; the reaper will look
-- for running rows whose lease expired.
CREATE INDEX runs_created ON runs (created_at, id);
CREATE INDEX runs_owner ON runs (owner_username, created_at, id);
CREATE INDEX runs_lease ON runs (status, lease_expires);

-- The ordered log of one run. seq is given by the run (0, 1, 2, …), so a
-- replayed step collides on the key instead of being stored twice.
CREATE TABLE run_events (
    run_id      text COLLATE "C" NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq         bigint NOT NULL CHECK (seq >= 0),
    kind        text NOT NULL,
    round       integer NOT NULL CHECK (round >= 0),
    duration_ms bigint NOT NULL CHECK (duration_ms >= 0),
    payload     text NOT NULL,
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (run_id, seq)
);

-- +goose Down
DROP TABLE run_events;
DROP TABLE runs;
