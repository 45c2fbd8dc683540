package store

import (
	"context"
	"errors"
	"time"
)

// ErrExists is matched (errors.Is) by every error that refuses to create a
// record whose key is already taken, such as a second MCP server with the
// same identifier.
var ErrExists = errors.New("store: already exists")

type existsError struct{ what string }

func (e existsError) Error() string        { return "store: " + e.what + " already exists" }
func (e existsError) Is(target error) bool { return target == ErrExists }

// Limits on MCP records, the same for every driver.
const (
	// MaxMCPURLLen bounds a server URL, in bytes.
	MaxMCPURLLen = 2048
	// MaxMCPTextLen bounds descriptions, import errors and annotations.
	MaxMCPTextLen = 64 << 10
	// MaxMCPSchemaLen bounds a stored input schema; package mcp refuses
	// larger ones long before they get here.
	MaxMCPSchemaLen = 64 << 10
	// MaxMCPImportTools bounds the tools of one import.
	MaxMCPImportTools = 1000
)

// MCP auth kinds: how a server's credential is presented.
const (
	MCPAuthNone   = "none"
	MCPAuthBearer = "bearer" // Authorization: Bearer <credential>
	MCPAuthHeader = "header" // <AuthHeader>: <credential>
)

// MCP import statuses.
const (
	MCPImportNever   = "never_imported"
	MCPImportOK      = "ok"
	MCPImportPartial = "partial" // some tools were skipped; ImportError says which and why
	MCPImportError   = "error"   // the last import was refused; the catalogue kept what it had
)

// Effects a server or tool may declare; the vocabulary of tool.Effect.
const (
	MCPEffectReadOnly           = "read_only"
	MCPEffectIdempotentWrite    = "idempotent_write"
	MCPEffectNonIdempotentWrite = "non_idempotent_write"
)

// MCPCatalogue persists the external MCP servers and the catalogue of
// their imported tools. The store keeps values as given and checks only
// their shape and vocabulary; package mcp owns the rules (identifier
// pattern, URL guard, data classes, name rule, schema normalisation).
type MCPCatalogue interface {
	// CreateMCPServer stores a new server; ErrExists when the identifier
	// is taken.
	CreateMCPServer(ctx context.Context, params CreateMCPServerParams) (MCPServer, error)
	// MCPServer returns one server, or ErrNotFound.
	MCPServer(ctx context.Context, identifier string) (MCPServer, error)
	// MCPServers lists every server, ordered by identifier; never nil.
	MCPServers(ctx context.Context) ([]MCPServer, error)
	// UpdateMCPServer changes the fields params sets and returns the row;
	// ErrNotFound when there is no such server.
	UpdateMCPServer(ctx context.Context, params UpdateMCPServerParams) (MCPServer, error)
	// DeleteMCPServer removes a server and its catalogue; ErrNotFound when
	// there was none.
	DeleteMCPServer(ctx context.Context, identifier string) error
	// RecordMCPContact stores the time and latency of a successful
	// operation. It touches nothing else (not UpdatedAt, not the import
	// status).
	RecordMCPContact(ctx context.Context, params RecordMCPContactParams) error
	// RecordMCPImportFailure marks the last import as refused with a
	// reason. The catalogue and the tool count stay as they were.
	RecordMCPImportFailure(ctx context.Context, params RecordMCPImportFailureParams) (MCPServer, error)
	// ApplyMCPImport reconciles the server's catalogue with the tools of
	// one import, in one transaction: tools are inserted or updated by
	// name (keeping their effect override), tools of the server that are
	// not in the import are orphaned, returning tools are restored. A name
	// held by another server's tool is not taken over: that tool is
	// skipped and reported as a conflict, and the import becomes partial.
	ApplyMCPImport(ctx context.Context, params ApplyMCPImportParams) (MCPImportResult, error)
	// MCPTools lists catalogue rows, ordered by name; never nil.
	MCPTools(ctx context.Context, params ListMCPToolsParams) ([]MCPTool, error)
	// MCPTool returns one catalogue row by local name, or ErrNotFound.
	MCPTool(ctx context.Context, name string) (MCPTool, error)
	// MCPToolWithServer returns a catalogue row and its server in one
	// read, for a registered tool's check that its declaration still
	// holds; ErrNotFound when the tool is not in the catalogue.
	MCPToolWithServer(ctx context.Context, name string) (MCPTool, MCPServer, error)
	// SetMCPToolEffect sets or (with "") clears a tool's effect override.
	SetMCPToolEffect(ctx context.Context, params SetMCPToolEffectParams) (MCPTool, error)
	// MCPCatalogueGeneration returns the current generation of the
	// catalogue: a number that grows with every write to what it
	// registers (a server's declaration, URL, credential or enabled flag,
	// and any tool row), by t3agent or by anyone else's SQL, and is
	// committed with the write. The health and import-note columns do not
	// move it. A registry whose tools were read at this generation is
	// still current. One small query.
	MCPCatalogueGeneration(ctx context.Context) (int64, error)
}

// MCPServer is one external MCP server as configured by an operator.
type MCPServer struct {
	Identifier  string // ^[a-z0-9_]{1,32}$, unique
	Name        string
	Description string
	URL         string
	AuthKind    string // MCPAuthNone, MCPAuthBearer or MCPAuthHeader
	AuthHeader  string // header name for MCPAuthHeader
	// SealedCredential is the credential sealed with the master key; ""
	// means none. It never leaves t3agent: it has no JSON encoding.
	SealedCredential string `json:"-"`
	// DataClass is the operator's declaration of how sensitive the
	// server's output is; "" leaves the server inert.
	DataClass        string
	Effect           string // the server's effect; tools may override it
	RequiresApproval bool
	AdminOnly        bool
	Enabled          bool
	ImportStatus     string
	ImportError      string
	LastImport       time.Time // zero: never imported successfully
	ToolCount        int
	LastContact      time.Time // zero: never reached
	LastLatency      time.Duration
	CreatedAt        time.Time
	UpdatedAt        time.Time
	UpdatedBy        string
}

// CreateMCPServerParams are the parameters of CreateMCPServer. Every field
// is stored as given; package mcp applies the defaults.
type CreateMCPServerParams struct {
	Identifier       string // required
	Name             string // required
	Description      string
	URL              string // required
	AuthKind         string // required: MCPAuthNone, MCPAuthBearer or MCPAuthHeader
	AuthHeader       string
	SealedCredential string
	DataClass        string
	Effect           string // required
	RequiresApproval bool
	AdminOnly        bool
	Enabled          bool
	CreatedBy        string // required
}

// UpdateMCPServerParams change the fields that are not nil.
type UpdateMCPServerParams struct {
	Identifier       string // required
	Name             *string
	Description      *string
	URL              *string
	AuthKind         *string
	AuthHeader       *string
	SealedCredential *string
	DataClass        *string
	Effect           *string
	RequiresApproval *bool
	AdminOnly        *bool
	Enabled          *bool
	UpdatedBy        string // required
}

// RecordMCPContactParams are the parameters of RecordMCPContact.
type RecordMCPContactParams struct {
	Identifier string
	Latency    time.Duration // ≥ 0; stored in milliseconds
	// At is when the contact happened; zero means now. Package mcp stores
	// contacts a while after they happen, so it gives the real time.
	At time.Time
}

// RecordMCPImportFailureParams are the parameters of RecordMCPImportFailure.
type RecordMCPImportFailureParams struct {
	Identifier string
	Error      string // required: why the import was refused
}

// MCPToolImport is one tool of an import, already checked by package mcp.
type MCPToolImport struct {
	Name        string // local name, mcp_<server>_<remote>
	RemoteName  string
	Title       string
	Description string
	InputSchema string // normalised JSON
	Annotations string // JSON object of the server's hints, for display only
}

// ApplyMCPImportParams are the parameters of ApplyMCPImport.
type ApplyMCPImportParams struct {
	Identifier string
	Tools      []MCPToolImport
	// Skipped lists the reasons tools were left out, one line each; with
	// none (and no conflicts) the import is ok, else partial.
	Skipped []string
}

// MCPToolConflict is a tool of an import whose local name another
// server's tool already holds.
type MCPToolConflict struct {
	Name   string
	Server string // the server that holds the name
}

// MCPImportResult says what an import changed.
type MCPImportResult struct {
	Server    MCPServer // the server row after the import
	Added     []string  // new names
	Updated   []string  // names that were there and still are
	Restored  []string  // names that had been orphaned and are back
	Orphaned  []string  // names the import no longer has
	Conflicts []MCPToolConflict
}

// MCPTool is one catalogue row.
type MCPTool struct {
	Name        string // local name
	Server      string // server identifier
	RemoteName  string
	Title       string
	Description string
	InputSchema string
	Annotations string
	Effect      string // override; "" means the server's effect
	Orphaned    bool
	ImportedAt  time.Time // the import that last saw the tool
}

// ListMCPToolsParams filter MCPTools.
type ListMCPToolsParams struct {
	Server          string // "" for every server
	IncludeOrphaned bool
}

// SetMCPToolEffectParams are the parameters of SetMCPToolEffect.
type SetMCPToolEffectParams struct {
	Name   string
	Effect string // "" clears the override
}
