-- +goose Up
-- One row per gate decision that denied a tool, or let one through only
-- because enforcement was set to observe. There is deliberately no column
-- for a call's arguments: events must never hold them.
CREATE TABLE governance_events (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind           text NOT NULL,
    tool           text NOT NULL,
    reason         text NOT NULL,
    zone           text NOT NULL,
    ceiling        text NOT NULL,
    data_class     text NOT NULL,
    actor_username text NOT NULL,
    actor_uid      bigint NOT NULL CHECK (actor_uid >= 0),
    configuration  text NOT NULL,
    run_id         text NOT NULL,
    created_at     timestamptz NOT NULL
);

-- The readouts filter by run or by tool, newest first.
CREATE INDEX governance_events_run ON governance_events (run_id, id);
CREATE INDEX governance_events_tool ON governance_events (tool, id);

-- +goose Down
DROP TABLE governance_events;
