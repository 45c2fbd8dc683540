package store

import "time"

// Limits on what the store accepts. They are the same for every driver so
// that a value SQLite would keep is never one PostgreSQL refuses.
const (
	// MaxNameLen bounds tool names, group names, setting keys and actors, in bytes.
	MaxNameLen = 255
	// MaxSettingValueLen bounds a setting's value, in bytes.
	MaxSettingValueLen = 1 << 20
	// DefaultGovernanceEventLimit is the page size of GovernanceEvents
	// when ListGovernanceEventsParams.Limit is 0.
	DefaultGovernanceEventLimit = 100
	// MaxGovernanceEventLimit is the largest page GovernanceEvents returns.
	MaxGovernanceEventLimit = 1000
)

// ToolOverride is an operator's decision to enable or disable one tool,
// taking precedence over the tool's enabled-by-default. A tool without an
// override follows its default.
type ToolOverride struct {
	Name      string // tool wire name
	Enabled   bool
	UpdatedAt time.Time // from the store's clock; UTC, microsecond precision
	UpdatedBy string    // the acting user or service account
}

// SetToolOverrideParams are the parameters of SetToolOverride.
type SetToolOverrideParams struct {
	Name      string // required
	Enabled   bool
	UpdatedBy string // required: every toggle has an actor
}

// ToolGroupOverride is an operator's decision to enable or disable a whole
// tool group (e.g. "content", "mcp_docs"). Groups are enabled unless
// overridden.
type ToolGroupOverride struct {
	Group     string
	Enabled   bool
	UpdatedAt time.Time // UTC, microsecond precision
	UpdatedBy string
}

// SetToolGroupOverrideParams are the parameters of SetToolGroupOverride.
type SetToolGroupOverrideParams struct {
	Group     string // required
	Enabled   bool
	UpdatedBy string // required
}

// Setting is one key/value pair of t3agent's own configuration.
type Setting struct {
	Key       string
	Value     string    // may be empty; a missing key is ErrNotFound instead
	UpdatedAt time.Time // UTC, microsecond precision
}

// SetSettingParams are the parameters of SetSetting and SetSettings.
type SetSettingParams struct {
	Key   string // required
	Value string // any valid UTF-8 without NUL bytes, up to MaxSettingValueLen
}

// GovernanceEvent is one recorded gate decision: a tool denied, or let
// through only because enforcement was set to observe. The text fields are
// the gate's vocabulary (package gate defines the kinds and reasons); the
// store keeps them as given. It has no field for a call's arguments, so it
// can never hold them.
type GovernanceEvent struct {
	ID            int64     // ascending in the order events were stored
	Kind          string    // e.g. "tool_denied", "tool_observed"
	Tool          string    // the tool name as asked for (it may not exist)
	Reason        string    // e.g. "trust_zone"
	Zone          string    // trust zone of the receiving provider
	Ceiling       string    // most sensitive data class that zone may receive
	DataClass     string    // the tool's data class
	ActorUsername string    // "" when no user acted
	ActorUID      int64     // 0 when no user acted
	Configuration string    // the agent configuration, "" for none
	RunID         string    // "" outside runs
	CreatedAt     time.Time // from the store's clock; UTC, microsecond precision
}

// RecordGovernanceEventParams are the parameters of RecordGovernanceEvent.
// Kind is required; every other text may be empty, and each is at most
// MaxNameLen bytes of valid UTF-8 without NUL bytes.
type RecordGovernanceEventParams struct {
	Kind          string
	Tool          string
	Reason        string
	Zone          string
	Ceiling       string
	DataClass     string
	ActorUsername string
	ActorUID      int64 // ≥ 0
	Configuration string
	RunID         string
}

// ListGovernanceEventsParams filter and page GovernanceEvents. The zero
// value lists the newest DefaultGovernanceEventLimit events.
type ListGovernanceEventsParams struct {
	// RunID, Tool and Kind, when not empty, keep only events that match
	// exactly; several filters combine with AND.
	RunID string
	Tool  string
	Kind  string
	// BeforeID, when > 0, keeps only events with a smaller ID: pass the
	// last ID of a page to get the next one.
	BeforeID int64
	// Limit is the page size: 0 means DefaultGovernanceEventLimit; more
	// than MaxGovernanceEventLimit, or negative, is refused.
	Limit int
}
