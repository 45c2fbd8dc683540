-- +goose Up
-- One row per gate decision that denied a tool, or let one through only
-- because enforcement was set to observe. There is deliberately no column
-- for a call's arguments: events must never hold them.
-- AUTOINCREMENT so an id is never reused, which keeps paging by id stable.
CREATE TABLE governance_events (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    kind           TEXT NOT NULL,
    tool           TEXT NOT NULL,
    reason         TEXT NOT NULL,
    zone           TEXT NOT NULL,
    ceiling        TEXT NOT NULL,
    data_class     TEXT NOT NULL,
    actor_username TEXT NOT NULL,
    actor_uid      INTEGER NOT NULL CHECK (actor_uid >= 0),
    configuration  TEXT NOT NULL,
    run_id         TEXT NOT NULL,
    created_at     TIMESTAMP NOT NULL
);

-- The readouts filter by run or by tool, newest first.
CREATE INDEX governance_events_run ON governance_events (run_id, id);
CREATE INDEX governance_events_tool ON governance_events (tool, id);

-- +goose Down
DROP TABLE governance_events;
