-- +goose Up
-- Timestamps are TIMESTAMP so the driver hands them back as time.Time.
-- They are written as UTC text with a trimmed fraction
-- ("2025-03-14 09:26:53.5897+00:00"), which sorts chronologically;
-- names are compared bytewise (SQLite's default BINARY collation), as the
-- PostgreSQL schema does with COLLATE "C".
CREATE TABLE tool_overrides (
    name       TEXT NOT NULL PRIMARY KEY,
    enabled    INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    updated_at TIMESTAMP NOT NULL,
    updated_by TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE tool_group_overrides (
    name       TEXT NOT NULL PRIMARY KEY,
    enabled    INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    updated_at TIMESTAMP NOT NULL,
    updated_by TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE settings (
    key        TEXT NOT NULL PRIMARY KEY,
    value      TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
) WITHOUT ROWID;

-- +goose Down
DROP TABLE settings;
DROP TABLE tool_group_overrides;
DROP TABLE tool_overrides;
