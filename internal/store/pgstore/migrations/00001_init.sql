-- +goose Up
-- Names use COLLATE "C" so ORDER BY is bytewise whatever the database's
-- locale, matching SQLite.
CREATE TABLE tool_overrides (
    name       text COLLATE "C" PRIMARY KEY,
    enabled    boolean NOT NULL,
    updated_at timestamptz NOT NULL,
    updated_by text NOT NULL
);

CREATE TABLE tool_group_overrides (
    name       text COLLATE "C" PRIMARY KEY,
    enabled    boolean NOT NULL,
    updated_at timestamptz NOT NULL,
    updated_by text NOT NULL
);

CREATE TABLE settings (
    key        text COLLATE "C" PRIMARY KEY,
    value      text NOT NULL,
    updated_at timestamptz NOT NULL
);

-- +goose Down
DROP TABLE settings;
DROP TABLE tool_group_overrides;
DROP TABLE tool_overrides;
