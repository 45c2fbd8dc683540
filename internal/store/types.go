package store

import "time"

// Limits on what the store accepts. They are the same for every driver so
// that a value SQLite would keep is never one PostgreSQL refuses.
const (
	// MaxNameLen bounds tool names, group names, setting keys and actors, in bytes.
	MaxNameLen = 255
	// MaxSettingValueLen bounds a setting's value, in bytes.
	MaxSettingValueLen = 1 << 20
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
