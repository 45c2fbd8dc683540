// Package store keeps t3agent's own state: tool and tool-group availability
// overrides, settings, the tool gate's governance events, the MCP servers
// with their tool catalogue, agent configurations and telemetry, runs with
// their events, chat conversations with their messages, and the API's
// credentials (service tokens, browser sessions). It never touches the
// TYPO3 site's database.
//
// # Opening
//
// Open takes a DSN and picks the database:
//
//	st, err := store.Open(ctx, "sqlite:/var/lib/t3agent/t3agent.db", store.OpenParams{Logger: log})
//	st, err := store.Open(ctx, "postgres://t3agent@db/t3agent", store.OpenParams{Logger: log})
//
// SQLite is the default: one file, nothing to set up, one process (or a
// few on one machine). PostgreSQL is for several processes on several
// machines sharing the work. Open migrates the schema before it returns;
// a database written by a newer t3agent is refused rather than guessed at.
//
// # The seam
//
// Store is the whole interface, composed of one small interface per kind
// of record (ToolOverrides, ToolGroupOverrides, Settings, GovernanceEvents,
// MCPCatalogue, Runs, AgentConfigs, Telemetry, Conversations, Credentials,
// MCPServerState, and Stats, the read-only aggregates monitoring scrapes),
// so a consumer states what it needs and a test hands it a real store.
// Methods take ctx first and, where they take more than a key, one
// XxxParams struct, so a field can be added without touching every
// caller. Errors are sentences that match ErrNotFound or ErrInvalid
// through errors.Is.
//
// Below the interface sits one SQL implementation shared by all databases,
// written once in the common dialect ($n placeholders, INSERT … ON CONFLICT,
// RETURNING) over database/sql. What differs per database lives in a
// Driver: sqlitestore (modernc.org/sqlite, a single writer connection and a
// query_only reader pool on a WAL file) and pgstore (pgx through its
// database/sql adapter, one pool). Each driver embeds its own goose
// migrations; goose's version table is the schema version, and on
// PostgreSQL an advisory lock lets one of several starting processes
// migrate while the others wait.
//
// Package storetest holds the one suite every driver passes: round trips,
// upserts, ErrNotFound, ordering, concurrent writers, two stores on one
// database, the injected clock, reopening. A driver's test supplies only a
// function that makes a fresh database.
//
// # Concurrency
//
// A Store is safe for concurrent use by any number of goroutines, and any
// number of Stores (in one process or many) may share a database. Each
// method is atomic; SetSettings and RecordGovernanceEvents are one
// transaction each. Overrides and settings are last-writer-wins;
// governance events are append-only. A write is visible to every later
// read, from any Store on the same database, once it returns. On SQLite, writers in one
// process queue for the single writer connection and writers in other
// processes wait up to sqlitestore.BusyTimeout, so "database is locked" is
// not an error callers need to handle. Work that must claim rows (queued
// runs, conversations waiting for a chat worker) uses guarded updates
// inside the store: BEGIN IMMEDIATE on SQLite, FOR UPDATE SKIP LOCKED on
// PostgreSQL. Conversation changes are compare-and-sets on the status:
// of two racing changes one wins, the other gets ErrConflict and writes
// nothing, its messages included.
//
// # Values
//
// Timestamps come from OpenParams.Now (time.Now by default) and are stored
// and returned in UTC with microsecond precision, the finest both
// databases keep. Names are compared bytewise, so listings are in the same
// order on both databases. Text must be valid UTF-8 without NUL bytes:
// PostgreSQL could not store anything else, so SQLite is held to the same.
//
// # Adding a kind of record
//
// Add a migration to each driver's migrations directory, a small
// interface with its types here (and embed it in Store), the statements
// in a file beside overrides.go, and tests to storetest. Both drivers then
// run them.
package store
