package store

import (
	"context"
	"database/sql"
	"io/fs"
	"log/slog"
	"time"

	"github.com/pressly/goose/v3"
)

// Store is t3agent's own state. It is composed of one small interface per
// kind of record so that a consumer can ask for only what it uses (a
// settings page needs Settings, the tool gate needs the overrides).
//
// A Store is safe for concurrent use by many goroutines, and several
// processes may open the same database: every method is atomic on its own,
// and upserts are last-writer-wins. A Store must not be used after Close.
type Store interface {
	ToolOverrides
	ToolGroupOverrides
	ToolPolicies
	Settings
	GovernanceEvents
	MCPCatalogue
	Runs
	AgentConfigs
	Telemetry
	Conversations
	Credentials
	MCPServerState
	MCPOAuth
	Stats
	SiteIndex

	// Ping reports whether the database answers; use it for readiness.
	Ping(ctx context.Context) error
	// SchemaVersion is the highest migration version applied to the
	// database, as recorded in goose's own version table.
	SchemaVersion(ctx context.Context) (int64, error)
	// Close releases every connection. It waits for running statements and
	// may be called more than once.
	Close() error
}

// ToolOverrides persists per-tool availability decisions.
type ToolOverrides interface {
	// SetToolOverride creates or replaces the override for params.Name and
	// returns it as stored.
	SetToolOverride(ctx context.Context, params SetToolOverrideParams) (ToolOverride, error)
	// ToolOverrides lists every override, ordered by name (bytewise);
	// never nil, so an empty list renders as [].
	ToolOverrides(ctx context.Context) ([]ToolOverride, error)
	// ClearToolOverride removes the override so the tool follows its
	// default again; ErrNotFound when there was none.
	ClearToolOverride(ctx context.Context, name string) error
}

// ToolGroupOverrides persists per-group availability decisions. They are
// kept apart from tool overrides: a tool and a group may share a name.
type ToolGroupOverrides interface {
	SetToolGroupOverride(ctx context.Context, params SetToolGroupOverrideParams) (ToolGroupOverride, error)
	// ToolGroupOverrides lists every group override, ordered by group
	// (bytewise); never nil.
	ToolGroupOverrides(ctx context.Context) ([]ToolGroupOverride, error)
	// ClearToolGroupOverride removes the override; ErrNotFound when there was none.
	ClearToolGroupOverride(ctx context.Context, group string) error
}

// ToolPolicies reads what the tool gate decides on besides the tools
// themselves.
type ToolPolicies interface {
	// ToolPolicy reads the tool and the group overrides and the setting
	// settingKey together, in one query (a run's offer needs all of them
	// at its start), each list ordered as ToolOverrides and
	// ToolGroupOverrides order them; never nil.
	ToolPolicy(ctx context.Context, settingKey string) (ToolPolicy, error)
}

// ToolPolicy is one read of ToolPolicies.
type ToolPolicy struct {
	Tools  []ToolOverride
	Groups []ToolGroupOverride
	// Setting is the value of the setting asked for, when SettingSet.
	Setting    string
	SettingSet bool
}

// Settings persists t3agent's own key/value configuration.
type Settings interface {
	// Setting returns the value stored under key, or ErrNotFound.
	Setting(ctx context.Context, key string) (string, error)
	// SetSetting creates or replaces one setting and returns it as stored.
	SetSetting(ctx context.Context, params SetSettingParams) (Setting, error)
	// SetSettings creates or replaces several settings in one transaction:
	// all are stored, or none. All share one UpdatedAt. A key given twice
	// is refused.
	SetSettings(ctx context.Context, params []SetSettingParams) ([]Setting, error)
	// DeleteSetting removes key; ErrNotFound when it was not set.
	DeleteSetting(ctx context.Context, key string) error
	// Settings lists every setting, ordered by key (bytewise); never nil.
	Settings(ctx context.Context) ([]Setting, error)
}

// GovernanceEvents persists the tool gate's record of denials and of
// decisions let through only because enforcement was set to observe. The
// record holds who, what and why, and by design no call arguments: there
// is no field for them.
type GovernanceEvents interface {
	// RecordGovernanceEvent appends one event and returns it as stored,
	// with its ID and CreatedAt.
	RecordGovernanceEvent(ctx context.Context, params RecordGovernanceEventParams) (GovernanceEvent, error)
	// RecordGovernanceEvents appends several events in one transaction:
	// all are stored, or none. They share one CreatedAt and get ascending
	// IDs in the order given.
	RecordGovernanceEvents(ctx context.Context, params []RecordGovernanceEventParams) ([]GovernanceEvent, error)
	// GovernanceEvents lists events newest first (by ID), filtered and
	// paged by params; never nil.
	GovernanceEvents(ctx context.Context, params ListGovernanceEventsParams) ([]GovernanceEvent, error)
}

// OpenParams configure Open and New. The zero value is ready to use.
type OpenParams struct {
	// Logger receives migration and lifecycle messages; nil discards them.
	Logger *slog.Logger
	// Now is the clock for every timestamp the store writes; nil means
	// time.Now. Tests inject a fixed clock here.
	Now func() time.Time
}

// Driver is what one database brings to the shared SQL layer: its
// connection pools, its migrations and its goose dialect. The packages
// sqlitestore and pgstore provide one each. They do not import this package
// (so Open can import them); they satisfy Driver by shape.
//
// Statements are written once, for both dialects: "$n" placeholders,
// INSERT … ON CONFLICT … DO UPDATE, RETURNING. Where a dialect needs other
// SQL, the shared layer branches on Dialect.
type Driver interface {
	// Dialect names the SQL dialect (goose.DialectSQLite3 or goose.DialectPostgres).
	Dialect() goose.Dialect
	// Writer carries every write. On SQLite it is a single connection
	// whose transactions begin IMMEDIATE, so writers in one process queue
	// instead of failing with "database is locked".
	Writer() *sql.DB
	// Reader carries reads. It may be the same pool as Writer.
	Reader() *sql.DB
	// Migrations holds the dialect's goose SQL files at its root.
	Migrations() fs.FS
	// Describe names the database for messages, without credentials.
	Describe() string
	// Close closes the pools.
	Close() error
}
