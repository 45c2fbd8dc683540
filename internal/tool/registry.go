package tool

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
)

// Provider supplies tools that are not builtin, such as the tools imported
// from MCP servers. Tools must answer from persisted state only (the
// catalogue rows in the store) and never reach the network: the registry
// calls it while a run is being set up.
//
// A Provider must be safe for concurrent use. It may return tools whose
// names collide with builtins or with other providers' tools; the registry
// drops those, so a provider can never shadow a builtin.
type Provider interface {
	Tools(ctx context.Context) ([]Tool, error)
}

// Entry is one registered tool together with the spec it was registered
// with. The registry reads Spec once and validates it, so every caller
// sees the same declaration the registry checked. Entries are shared
// values: read them, never change their Spec's slices.
type Entry struct {
	Tool    Tool
	Spec    Spec
	Builtin bool
}

// Registry holds the builtin tools and the tools of providers.
//
// Builtins are fixed at construction. Provider tools are loaded into an
// immutable view on first use (Get or List) and kept until Refresh loads
// them again; callers that need the latest catalogue (the start of a run,
// the end of an MCP import) call Refresh. Lookups never do I/O once the
// view is loaded.
//
// A Registry is safe for concurrent use. Get and List read the current
// view without locking; loads are serialised, and a reader sees either the
// old view or the new one, never a mix.
type Registry struct {
	builtins  map[string]Entry
	providers []Provider
	log       atomic.Pointer[slog.Logger]

	loadMu sync.Mutex // serialises building views
	view   atomic.Pointer[view]
}

// view is one immutable snapshot of every registered tool.
type view struct {
	byName map[string]Entry
	sorted []Entry // by name
}

// NewRegistry validates every builtin and returns a registry of them and
// of the providers' tools. A builtin with an invalid spec, two builtins of
// one name, or a nil builtin or provider fail here, at start, rather than
// when a run first needs the tool.
func NewRegistry(builtins []Tool, providers ...Provider) (*Registry, error) {
	r := &Registry{builtins: make(map[string]Entry, len(builtins))}
	for i, t := range builtins {
		if t == nil {
			return nil, fmt.Errorf("tool registry: builtin %d is nil", i)
		}
		spec := t.Spec()
		if err := spec.Validate(); err != nil {
			return nil, fmt.Errorf("tool registry: builtin %d: %w", i, err)
		}
		if _, dup := r.builtins[spec.Name]; dup {
			return nil, fmt.Errorf("tool registry: two builtin tools are named %q", spec.Name)
		}
		r.builtins[spec.Name] = Entry{Tool: t, Spec: spec, Builtin: true}
	}
	for i, p := range providers {
		if p == nil {
			return nil, fmt.Errorf("tool registry: provider %d is nil", i)
		}
	}
	r.providers = providers
	if len(providers) == 0 {
		// Nothing to load: the builtins are the whole view, now and always.
		v, _ := r.build(context.Background())
		r.view.Store(v)
	}
	return r, nil
}

// SetLogger sets where dropped provider tools and failing providers are
// reported; nil means slog.Default(). It may be called at any time.
func (r *Registry) SetLogger(l *slog.Logger) { r.log.Store(l) }

func (r *Registry) logger() *slog.Logger {
	if l := r.log.Load(); l != nil {
		return l
	}
	return slog.Default()
}

// Get returns the tool registered under name.
func (r *Registry) Get(ctx context.Context, name string) (Entry, bool) {
	e, ok := r.current(ctx).byName[name]
	return e, ok
}

// List returns every registered tool, sorted by name. The slice is the
// caller's to keep.
func (r *Registry) List(ctx context.Context) []Entry {
	return slices.Clone(r.current(ctx).sorted)
}

// Len is the number of registered tools.
func (r *Registry) Len(ctx context.Context) int { return len(r.current(ctx).sorted) }

// IsBuiltin reports whether name is a builtin tool. It never loads
// provider tools, so an MCP import can check its names against it.
func (r *Registry) IsBuiltin(name string) bool {
	_, ok := r.builtins[name]
	return ok
}

// BuiltinNames lists the builtin tool names, sorted. It never loads
// provider tools.
func (r *Registry) BuiltinNames() []string {
	names := make([]string, 0, len(r.builtins))
	for n := range r.builtins {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Builtins lists the builtin tools, sorted by name. It never loads
// provider tools.
func (r *Registry) Builtins() []Entry {
	out := make([]Entry, 0, len(r.builtins))
	for _, n := range r.BuiltinNames() {
		out = append(out, r.builtins[n])
	}
	return out
}

// Refresh loads the providers' tools again and replaces the view. Readers
// keep the old view until the new one is complete. Provider failures and
// dropped tools are logged and also returned, joined, so a caller such as
// an import can show them; the view is replaced all the same, without
// what failed. When ctx ends during the load, the old view stays and
// ctx's error is returned.
func (r *Registry) Refresh(ctx context.Context) error {
	if len(r.providers) == 0 {
		return nil
	}
	r.loadMu.Lock()
	defer r.loadMu.Unlock()
	v, problems := r.build(ctx)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("tool registry: refresh interrupted: %w", err)
	}
	r.view.Store(v)
	return problems
}

// current returns the loaded view, loading it on first use. A load that
// ctx cuts short is returned to this caller (without the tools it could
// not load, so nothing extra is offered) but not kept, so the next caller
// tries again.
func (r *Registry) current(ctx context.Context) *view {
	if v := r.view.Load(); v != nil {
		return v
	}
	r.loadMu.Lock()
	defer r.loadMu.Unlock()
	if v := r.view.Load(); v != nil {
		return v
	}
	v, _ := r.build(ctx)
	if ctx.Err() == nil {
		r.view.Store(v)
	}
	return v
}

// build makes a view of the builtins and every provider's tools. Problems
// are logged here and returned joined.
func (r *Registry) build(ctx context.Context) (*view, error) {
	v := &view{byName: make(map[string]Entry, len(r.builtins))}
	for n, e := range r.builtins {
		v.byName[n] = e
	}
	var problems []error
	report := func(err error, msg string, attrs ...any) {
		problems = append(problems, err)
		r.logger().WarnContext(ctx, msg, append(attrs, "error", err.Error())...)
	}
	for i, p := range r.providers {
		from := providerName(i, p)
		tools, err := p.Tools(ctx)
		if err != nil {
			report(fmt.Errorf("tool provider %s failed: %w", from, err),
				"tool provider failed; none of its tools are registered", "provider", from)
			continue
		}
		for _, t := range tools {
			if t == nil {
				report(fmt.Errorf("tool provider %s returned a nil tool", from), "provider tool skipped", "provider", from)
				continue
			}
			spec := t.Spec()
			if err := spec.Validate(); err != nil {
				report(fmt.Errorf("tool provider %s: %w", from, err), "provider tool skipped: invalid spec", "provider", from, "tool", spec.Name)
				continue
			}
			if prev, taken := v.byName[spec.Name]; taken {
				// Builtins win, then the earlier provider tool: a later
				// tool can never take over a name already in use.
				owner := "an earlier provider tool"
				if prev.Builtin {
					owner = "a builtin tool"
				}
				report(fmt.Errorf("tool provider %s: tool %q dropped: the name belongs to %s", from, spec.Name, owner),
					"provider tool dropped: name collision", "provider", from, "tool", spec.Name)
				continue
			}
			v.byName[spec.Name] = Entry{Tool: t, Spec: spec}
		}
	}
	v.sorted = make([]Entry, 0, len(v.byName))
	for _, e := range v.byName {
		v.sorted = append(v.sorted, e)
	}
	slices.SortFunc(v.sorted, func(a, b Entry) int { return cmp.Compare(a.Spec.Name, b.Spec.Name) })
	return v, errors.Join(problems...)
}

// providerName names a provider in messages: its String method if it has
// one, else its type and position.
func providerName(i int, p Provider) string {
	if s, ok := p.(fmt.Stringer); ok {
		return s.String()
	}
	return fmt.Sprintf("%T (#%d)", p, i)
}
