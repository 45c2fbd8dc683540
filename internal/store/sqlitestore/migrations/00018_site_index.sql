-- +goose Up
-- The site index: t3agent's full-text index of the TYPO3 site, a cache
-- derived from the site database (backup and copy leave it out; a build
-- makes it again). One document per site row; its id packs the table's
-- number above the row's 32-bit uid, so one table is one id range in uid
-- order. The terms live in a contentless FTS5 table (folded in Go, so the
-- unicode61 tokenizer only splits them on the spaces between).

CREATE TABLE site_index_state (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    generation  INTEGER NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('building', 'ready')),
    begun_at    TIMESTAMP NOT NULL,
    built_at    TIMESTAMP,
    synced_at   TIMESTAMP,
    updated_at  TIMESTAMP NOT NULL
);

CREATE TABLE site_index_tables (
    no          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT NOT NULL UNIQUE,
    mark_tstamp INTEGER NOT NULL,
    mark_uid    INTEGER NOT NULL,
    docs        INTEGER NOT NULL
);

CREATE TABLE site_index_docs (
    id          INTEGER PRIMARY KEY,
    tbl         INTEGER NOT NULL,
    uid         INTEGER NOT NULL,
    pid         INTEGER NOT NULL,
    lang        INTEGER NOT NULL,
    tstamp      INTEGER NOT NULL,
    hidden      BOOLEAN NOT NULL,
    deleted     BOOLEAN NOT NULL,
    starttime   INTEGER NOT NULL,
    endtime     INTEGER NOT NULL,
    fe_group    TEXT NOT NULL,
    workspace   INTEGER NOT NULL,
    title       TEXT NOT NULL,
    body        TEXT NOT NULL
);

CREATE VIRTUAL TABLE site_index_fts USING fts5(
    title, body, extra,
    content = '', contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 0'
);

CREATE TABLE site_index_terms (
    id   INTEGER PRIMARY KEY AUTOINCREMENT,
    term TEXT NOT NULL UNIQUE
);

-- +goose Down
DROP TABLE site_index_terms;
DROP TABLE site_index_fts;
DROP TABLE site_index_docs;
DROP TABLE site_index_tables;
DROP TABLE site_index_state;
