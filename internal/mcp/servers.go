package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
)

// AuthKind is how a server's credential is presented.
type AuthKind string

const (
	AuthNone   AuthKind = store.MCPAuthNone
	AuthBearer AuthKind = store.MCPAuthBearer // Authorization: Bearer <credential>
	AuthHeader AuthKind = store.MCPAuthHeader // <AuthHeader>: <credential>
)

// MaxCredentialLen bounds a credential, in bytes.
const MaxCredentialLen = 8 << 10

// Server is an MCP server as t3agent shows it: the stored record without
// its credential, which is only ever reported as present or not.
type Server struct {
	Identifier    string   `json:"identifier"`
	Name          string   `json:"name"`
	Description   string   `json:"description"`
	URL           string   `json:"url"`
	Auth          AuthKind `json:"auth"`
	AuthHeader    string   `json:"authHeader,omitempty"`
	HasCredential bool     `json:"hasCredential"`
	// DataClass is the operator's declaration; zero when none was made,
	// which leaves the server inert (see Inert).
	DataClass        tool.DataClass `json:"dataClass,omitzero"`
	Effect           tool.Effect    `json:"effect"`
	RequiresApproval bool           `json:"requiresApproval"`
	AdminOnly        bool           `json:"adminOnly"`
	Enabled          bool           `json:"enabled"`
	ImportStatus     string         `json:"importStatus"`
	ImportError      string         `json:"importError,omitempty"`
	LastImport       time.Time      `json:"lastImport,omitzero"`
	ToolCount        int            `json:"toolCount"`
	LastContact      time.Time      `json:"lastContact,omitzero"`
	LastLatency      time.Duration  `json:"lastLatencyNs,omitzero"`
	CreatedAt        time.Time      `json:"createdAt"`
	UpdatedAt        time.Time      `json:"updatedAt"`
	UpdatedBy        string         `json:"updatedBy"`
}

// Inert reports whether the server's tools are never offered: it has no
// valid data class. Its tools may still be imported and inspected.
func (s Server) Inert() bool { return !s.DataClass.Valid() }

func serverOf(r store.MCPServer) Server {
	class, _ := tool.ParseDataClass(r.DataClass)
	return Server{
		Identifier: r.Identifier, Name: r.Name, Description: r.Description, URL: r.URL,
		Auth: AuthKind(r.AuthKind), AuthHeader: r.AuthHeader, HasCredential: r.SealedCredential != "",
		DataClass: class, Effect: tool.Effect(r.Effect), RequiresApproval: r.RequiresApproval,
		AdminOnly: r.AdminOnly, Enabled: r.Enabled, ImportStatus: r.ImportStatus, ImportError: r.ImportError,
		LastImport: r.LastImport, ToolCount: r.ToolCount, LastContact: r.LastContact, LastLatency: r.LastLatency,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, UpdatedBy: r.UpdatedBy,
	}
}

// AddParams are the parameters of Add. The zero values of the optional
// fields are the safe defaults: no data class (inert), effect
// non_idempotent_write, approval required, admin-only, disabled.
type AddParams struct {
	Identifier  string // required, IdentifierPattern
	Name        string // defaults to Identifier
	Description string
	URL         string // required: http or https, no user info
	Auth        AuthKind
	AuthHeader  string // the header name for AuthHeader
	// Credential is the plaintext secret for AuthBearer or AuthHeader. It
	// is sealed with the master key before it is stored and never shown,
	// logged or returned again.
	Credential       string
	DataClass        tool.DataClass
	Effect           tool.Effect // "" means non_idempotent_write
	RequiresApproval *bool       // nil means true
	AdminOnly        *bool       // nil means true
	Enabled          bool
	By               string // required: the acting admin
}

// UpdateParams change the fields that are not nil. A credential change
// or a URL change retires the server's pooled session.
type UpdateParams struct {
	Identifier       string
	Name             *string
	Description      *string
	URL              *string
	Auth             *AuthKind
	AuthHeader       *string
	Credential       *string // "" removes the credential
	DataClass        *tool.DataClass
	ClearDataClass   bool // makes the server inert
	Effect           *tool.Effect
	RequiresApproval *bool
	AdminOnly        *bool
	Enabled          *bool
	By               string
}

// reservedHeaders may not carry a credential: the transport owns them.
var reservedHeaders = []string{
	"Accept", "Connection", "Content-Length", "Content-Type", "Host", "Last-Event-Id",
	"Mcp-Protocol-Version", "Mcp-Session-Id", "Mcp-Method", "Transfer-Encoding", "Upgrade",
}

func checkAuth(kind AuthKind, header, credential string) error {
	switch kind {
	case AuthNone:
		if credential != "" {
			return errors.New("a credential needs --auth bearer or --auth header")
		}
		return nil
	case AuthBearer, AuthHeader:
	default:
		return fmt.Errorf("auth %q is not none, bearer or header", kind)
	}
	if credential == "" {
		return fmt.Errorf("auth %s needs a credential", kind)
	}
	if len(credential) > MaxCredentialLen || strings.ContainsAny(credential, "\r\n\x00") {
		return errors.New("the credential must be one line of at most 8 KiB")
	}
	if kind == AuthHeader {
		if header == "" || !validHeaderName(header) {
			return fmt.Errorf("auth header needs a valid header name, not %q", remoteText(header, 64))
		}
		for _, r := range reservedHeaders {
			if strings.EqualFold(header, r) {
				return fmt.Errorf("the header %s is set by the MCP transport and cannot carry a credential", r)
			}
		}
	}
	return nil
}

func validHeaderName(h string) bool {
	if len(h) > 128 {
		return false
	}
	for _, c := range []byte(h) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

func checkEffect(e tool.Effect) error {
	if !e.Valid() {
		return fmt.Errorf("effect %q is not read_only, idempotent_write or non_idempotent_write", e)
	}
	return nil
}

// sealedFor is the associated data that binds a sealed credential to its
// server, so a value copied to another row does not open there.
func sealedFor(identifier string) string { return "mcp_server:" + identifier }

func (s *Service) seal(identifier, credential string) (string, error) {
	if credential == "" {
		return "", nil
	}
	if s.keys == nil {
		return "", errors.New("a credential cannot be stored: no master key is configured (security.master_key)")
	}
	return s.keys.Seal([]byte(credential), sealedFor(identifier))
}

// Add stores a new server. It is not contacted: Ping and Import do that.
func (s *Service) Add(ctx context.Context, p AddParams) (Server, error) {
	if !IdentifierPattern.MatchString(p.Identifier) {
		return Server{}, opError(p.Identifier, KindInvalidRequest, "the MCP server identifier %q does not match %s", remoteText(p.Identifier, 64), IdentifierPattern)
	}
	if p.Name == "" {
		p.Name = p.Identifier
	}
	if _, err := s.guard.CheckURL(p.URL); err != nil {
		return Server{}, invalid(p.Identifier, fmt.Errorf("the MCP server URL: %w", err))
	}
	if p.Auth == "" {
		p.Auth = AuthNone
	}
	if err := checkAuth(p.Auth, p.AuthHeader, p.Credential); err != nil {
		return Server{}, invalid(p.Identifier, err)
	}
	if p.Effect == "" {
		p.Effect = tool.NonIdempotentWrite
	}
	if err := checkEffect(p.Effect); err != nil {
		return Server{}, invalid(p.Identifier, err)
	}
	class := ""
	if p.DataClass != 0 {
		if !p.DataClass.Valid() {
			return Server{}, opError(p.Identifier, KindInvalidRequest, "%v is not a data class", p.DataClass)
		}
		class = p.DataClass.String()
	}
	sealed, err := s.seal(p.Identifier, p.Credential)
	if err != nil {
		return Server{}, invalid(p.Identifier, err)
	}
	// Every change through the Service is marked once stored (or tried),
	// so registered tools compare with the store on their next call.
	defer s.changes.changed(p.Identifier)
	header := ""
	if p.Auth == AuthHeader {
		header = p.AuthHeader
	}
	r, err := s.st.CreateMCPServer(ctx, store.CreateMCPServerParams{
		Identifier: p.Identifier, Name: p.Name, Description: p.Description, URL: p.URL,
		AuthKind: string(p.Auth), AuthHeader: header, SealedCredential: sealed, DataClass: class,
		Effect: string(p.Effect), RequiresApproval: boolOr(p.RequiresApproval, true),
		AdminOnly: boolOr(p.AdminOnly, true), Enabled: p.Enabled, CreatedBy: p.By,
	})
	if err != nil {
		return Server{}, err
	}
	s.log.InfoContext(ctx, "MCP server added", "server", r.Identifier, "by", p.By, "auth", r.AuthKind, "data_class", r.DataClass)
	return serverOf(r), nil
}

// invalid is a refusal of the caller's parameters (KindInvalidRequest),
// with err's sentence as it is.
func invalid(server string, err error) *Error {
	return &Error{Server: server, Kind: KindInvalidRequest, msg: err.Error()}
}

func boolOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

// Update changes a server. The auth kind, header and credential are
// checked together as they will be stored.
func (s *Service) Update(ctx context.Context, p UpdateParams) (Server, error) {
	cur, err := s.st.MCPServer(ctx, p.Identifier)
	if err != nil {
		return Server{}, err
	}
	up := store.UpdateMCPServerParams{
		Identifier: p.Identifier, Name: p.Name, Description: p.Description,
		RequiresApproval: p.RequiresApproval, AdminOnly: p.AdminOnly, Enabled: p.Enabled, UpdatedBy: p.By,
	}
	if p.Name != nil && *p.Name == "" {
		return Server{}, opError(p.Identifier, KindInvalidRequest, "the MCP server name must not be empty")
	}
	if p.URL != nil {
		if _, err := s.guard.CheckURL(*p.URL); err != nil {
			return Server{}, invalid(p.Identifier, fmt.Errorf("the MCP server URL: %w", err))
		}
		up.URL = p.URL
	}
	if p.Auth != nil || p.AuthHeader != nil || p.Credential != nil {
		kind, header := AuthKind(cur.AuthKind), cur.AuthHeader
		if p.Auth != nil {
			kind = *p.Auth
		}
		if p.AuthHeader != nil {
			header = *p.AuthHeader
		}
		if kind != AuthHeader {
			header = ""
		}
		// Changing how the credential is presented needs the credential
		// again, so a changed header never silently keeps an old secret.
		if p.Credential == nil && kind != AuthNone && (kind != AuthKind(cur.AuthKind) || header != cur.AuthHeader) {
			return Server{}, opError(p.Identifier, KindInvalidRequest, "changing the auth kind or header needs the credential again")
		}
		sealed := cur.SealedCredential
		if p.Credential != nil || kind == AuthNone {
			cred := ""
			if p.Credential != nil {
				cred = *p.Credential
			}
			if err := checkAuth(kind, header, cred); err != nil {
				return Server{}, invalid(p.Identifier, err)
			}
			if sealed, err = s.seal(p.Identifier, cred); err != nil {
				return Server{}, invalid(p.Identifier, err)
			}
		}
		k := string(kind)
		up.AuthKind, up.AuthHeader, up.SealedCredential = &k, &header, &sealed
	}
	if p.ClearDataClass {
		empty := ""
		up.DataClass = &empty
	} else if p.DataClass != nil {
		if !p.DataClass.Valid() {
			return Server{}, opError(p.Identifier, KindInvalidRequest, "%v is not a data class", *p.DataClass)
		}
		c := p.DataClass.String()
		up.DataClass = &c
	}
	if p.Effect != nil {
		if err := checkEffect(*p.Effect); err != nil {
			return Server{}, invalid(p.Identifier, err)
		}
		e := string(*p.Effect)
		up.Effect = &e
	}
	defer s.changes.changed(p.Identifier)
	r, err := s.st.UpdateMCPServer(ctx, up)
	if err != nil {
		return Server{}, err
	}
	s.pool.retire(p.Identifier)
	s.log.InfoContext(ctx, "MCP server changed", "server", r.Identifier, "by", p.By)
	return serverOf(r), nil
}

// SetEnabled enables or disables a server. A disabled server's tools are
// not registered; its catalogue stays.
func (s *Service) SetEnabled(ctx context.Context, identifier string, enabled bool, by string) (Server, error) {
	return s.Update(ctx, UpdateParams{Identifier: identifier, Enabled: &enabled, By: by})
}

// Remove deletes a server and its catalogue and retires its session.
func (s *Service) Remove(ctx context.Context, identifier string) error {
	defer s.changes.changed(identifier)
	if err := s.st.DeleteMCPServer(ctx, identifier); err != nil {
		return err
	}
	s.pool.retire(identifier)
	s.log.InfoContext(ctx, "MCP server removed", "server", identifier)
	return nil
}

// Server returns one server.
func (s *Service) Server(ctx context.Context, identifier string) (Server, error) {
	r, err := s.st.MCPServer(ctx, identifier)
	if err != nil {
		return Server{}, err
	}
	return serverOf(r), nil
}

// Servers lists every server by identifier.
func (s *Service) Servers(ctx context.Context) ([]Server, error) {
	rows, err := s.st.MCPServers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Server, len(rows))
	for i, r := range rows {
		out[i] = serverOf(r)
	}
	return out, nil
}

// Hints are a remote tool's annotations. They are shown to operators and
// never change the declared effect.
type Hints struct {
	ReadOnly    *bool `json:"readOnlyHint,omitempty"`
	Destructive *bool `json:"destructiveHint,omitempty"`
	Idempotent  *bool `json:"idempotentHint,omitempty"`
	OpenWorld   *bool `json:"openWorldHint,omitempty"`
}

// CatalogueTool is one imported tool as `mcp show` lists it.
type CatalogueTool struct {
	Name           string         `json:"name"`
	RemoteName     string         `json:"remoteName"`
	Title          string         `json:"title,omitempty"`
	Description    string         `json:"description"`
	Effect         tool.Effect    `json:"effect"` // effective: the override, else the server's
	EffectOverride tool.Effect    `json:"effectOverride,omitempty"`
	DataClass      tool.DataClass `json:"dataClass,omitzero"` // the server's; zero when inert
	Hints          Hints          `json:"hints"`
	Orphaned       bool           `json:"orphaned"`
	InputSchema    []byte         `json:"-"`
}

// Tools lists a server's catalogue, orphaned tools included.
func (s *Service) Tools(ctx context.Context, identifier string) ([]CatalogueTool, error) {
	srv, err := s.st.MCPServer(ctx, identifier)
	if err != nil {
		return nil, err
	}
	rows, err := s.st.MCPTools(ctx, store.ListMCPToolsParams{Server: identifier, IncludeOrphaned: true})
	if err != nil {
		return nil, err
	}
	class, _ := tool.ParseDataClass(srv.DataClass)
	out := make([]CatalogueTool, len(rows))
	for i, r := range rows {
		eff := tool.Effect(srv.Effect)
		if r.Effect != "" {
			eff = tool.Effect(r.Effect)
		}
		out[i] = CatalogueTool{
			Name: r.Name, RemoteName: r.RemoteName, Title: r.Title, Description: r.Description,
			Effect: eff, EffectOverride: tool.Effect(r.Effect), DataClass: class,
			Hints: parseHints(r.Annotations), Orphaned: r.Orphaned, InputSchema: []byte(r.InputSchema),
		}
	}
	return out, nil
}

// SetToolEffectParams are the parameters of SetToolEffect.
type SetToolEffectParams struct {
	Name   string      // local tool name
	Effect tool.Effect // "" clears the override
}

// SetToolEffect overrides one tool's effect (or clears the override).
func (s *Service) SetToolEffect(ctx context.Context, p SetToolEffectParams) error {
	if p.Effect != "" {
		if err := checkEffect(p.Effect); err != nil {
			return invalid("", err)
		}
	}
	t, err := s.st.SetMCPToolEffect(ctx, store.SetMCPToolEffectParams{Name: p.Name, Effect: string(p.Effect)})
	if err != nil {
		return err
	}
	s.changes.changed(t.Server)
	return nil
}
