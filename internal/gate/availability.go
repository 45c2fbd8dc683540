package gate

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
)

// ErrUnknownTool is matched (errors.Is) when an override names a tool that
// is not registered.
var ErrUnknownTool = errors.New("gate: unknown tool")

// ErrUnknownGroup is matched when an override names a group that no
// registered tool has and that is neither builtin nor an MCP group.
var ErrUnknownGroup = errors.New("gate: unknown tool group")

// mcpGroup is the shape of an MCP server's group, which may be overridden
// before its tools are imported.
var mcpGroup = regexp.MustCompile(`^mcp_[a-z0-9_]{1,32}$`)

// AvailabilityStore is what Availability needs from the store.
type AvailabilityStore interface {
	store.ToolOverrides
	store.ToolGroupOverrides
	store.ToolPolicies
}

// Availability reads and changes which tools are enabled. A tool is
// enabled when its group is (a group without an override is) and its own
// override says so, or, without one, its Spec.EnabledByDefault. A tool
// override cannot re-enable a tool whose group is disabled.
//
// Toggling is admin-only; the callers (CLI, API) check that, and pass who
// acted as the By of each change. An Availability is safe for concurrent
// use; overrides are last-writer-wins in the store.
type Availability struct {
	st  AvailabilityStore
	reg *tool.Registry
}

// NewAvailability returns the availability of reg's tools as st records it.
func NewAvailability(st AvailabilityStore, reg *tool.Registry) *Availability {
	return &Availability{st: st, reg: reg}
}

// Overrides is one snapshot of the tool and group overrides and of the
// enforcement mode, loaded once and then asked about any number of tools
// without touching the store. The zero value has no overrides (every group
// enabled, every tool at its default) and enforces. An Overrides is
// immutable and safe for concurrent use.
type Overrides struct {
	tools       map[string]bool
	groups      map[string]bool
	enforcement Enforcement
}

// Load reads both override sets and the enforcement mode
// (EnforcementSetting; unset enforces) once per decision batch, in one
// query. It is never cached, so an operator's toggle in any process counts
// from the next batch on.
func (a *Availability) Load(ctx context.Context) (Overrides, error) {
	p, err := a.st.ToolPolicy(ctx, EnforcementSetting)
	if err != nil {
		return Overrides{}, err
	}
	o := Overrides{
		tools: make(map[string]bool, len(p.Tools)), groups: make(map[string]bool, len(p.Groups)),
		enforcement: Enforce,
	}
	for _, t := range p.Tools {
		o.tools[t.Name] = t.Enabled
	}
	for _, g := range p.Groups {
		o.groups[g.Group] = g.Enabled
	}
	if p.SettingSet {
		o.enforcement = Enforcement(p.Setting)
	}
	return o, nil
}

// Enforcement is the enforcement mode the overrides were loaded with.
func (o Overrides) Enforcement() Enforcement { return o.enforcement }

// GroupEnabled reports whether group is enabled; a group without an
// override is.
func (o Overrides) GroupEnabled(group string) bool {
	enabled, ok := o.groups[group]
	return !ok || enabled
}

// ToolOverride returns the tool's own override, if it has one.
func (o Overrides) ToolOverride(name string) (enabled, ok bool) {
	enabled, ok = o.tools[name]
	return enabled, ok
}

// Enabled is the effective availability of the tool spec declares.
func (o Overrides) Enabled(spec tool.Spec) bool {
	if !o.GroupEnabled(spec.Group) {
		return false
	}
	if enabled, ok := o.tools[spec.Name]; ok {
		return enabled
	}
	return spec.EnabledByDefault
}

// SetToolParams are the parameters of SetTool.
type SetToolParams struct {
	Name    string // a registered tool
	Enabled bool
	By      string // who acted (required)
}

// SetTool overrides one registered tool's default. A name the registry
// does not know is refused with ErrUnknownTool, so a typo is not stored
// as a silent no-op.
func (a *Availability) SetTool(ctx context.Context, p SetToolParams) (store.ToolOverride, error) {
	if _, ok := a.reg.Get(ctx, p.Name); !ok {
		return store.ToolOverride{}, fmt.Errorf("%w %q: no registered tool has this name", ErrUnknownTool, p.Name)
	}
	return a.st.SetToolOverride(ctx, store.SetToolOverrideParams{Name: p.Name, Enabled: p.Enabled, UpdatedBy: p.By})
}

// ClearTool removes a tool's override, so it follows its default again.
// It accepts names that are no longer registered, to clean up after a
// vanished tool; store.ErrNotFound when there was no override.
func (a *Availability) ClearTool(ctx context.Context, name string) error {
	return a.st.ClearToolOverride(ctx, name)
}

// SetGroupParams are the parameters of SetGroup.
type SetGroupParams struct {
	Group   string // a builtin group, an MCP group (mcp_<server>) or any registered tool's group
	Enabled bool
	By      string // who acted (required)
}

// SetGroup enables or disables a whole group, including tools added to it
// later. Unknown groups are refused with ErrUnknownGroup.
func (a *Availability) SetGroup(ctx context.Context, p SetGroupParams) (store.ToolGroupOverride, error) {
	if !a.knownGroup(ctx, p.Group) {
		return store.ToolGroupOverride{}, fmt.Errorf("%w %q: it is not a builtin group (content, structure, configuration, system, accounts, rag, files), an MCP group (mcp_<server>), or the group of a registered tool", ErrUnknownGroup, p.Group)
	}
	return a.st.SetToolGroupOverride(ctx, store.SetToolGroupOverrideParams{Group: p.Group, Enabled: p.Enabled, UpdatedBy: p.By})
}

// ClearGroup removes a group's override, so the group is enabled again;
// store.ErrNotFound when there was none.
func (a *Availability) ClearGroup(ctx context.Context, group string) error {
	return a.st.ClearToolGroupOverride(ctx, group)
}

func (a *Availability) knownGroup(ctx context.Context, group string) bool {
	switch group {
	case tool.GroupContent, tool.GroupStructure, tool.GroupConfiguration, tool.GroupSystem,
		tool.GroupAccounts, tool.GroupRAG, tool.GroupFiles, tool.GroupCode:
		// The groups of SPEC §2 are valid even with no tool in them yet.
		return true
	}
	if mcpGroup.MatchString(group) {
		return true
	}
	for _, e := range a.reg.List(ctx) {
		if e.Spec.Group == group {
			return true
		}
	}
	return false
}
