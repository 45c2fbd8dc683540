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

// Versioned is a Provider whose tools follow records that may change
// while a registry holds them, through this process or any other (the MCP
// catalogue in the shared store). Generation returns a number that moves
// whenever what Tools returns may have changed, and seldom otherwise; it
// must be cheap (one small query), since the registry asks it on every
// lookup and loads the provider's tools again only when it moved.
//
// Generation must be safe for concurrent use. A value read before Tools
// must not be newer than what Tools then returns: the registry stamps its
// view with the generation it read first, so a change in between only
// costs one more load.
type Versioned interface {
	Provider
	Generation(ctx context.Context) (int64, error)
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
// immutable View on first use and kept while they are current: every
// lookup (View, Get, List, Len) first asks each Versioned provider for its
// generation, one small query, and loads the providers' tools again when
// one moved, so a change made anywhere (another process, an operator's
// SQL) counts from the next lookup. Providers that are not Versioned are
// loaded once, and again on Refresh. A caller that looks up many tools at
// once (the gate's offer) takes one View and asks it, so the generation is
// asked once.
//
// A Registry is safe for concurrent use. Lookups of a current view do not
// lock; loads are serialised, and a reader sees either the old view or the
// new one, never a mix.
type Registry struct {
	builtins  map[string]Entry
	providers []Provider
	versions  []Versioned // per provider: itself when Versioned, else nil
	versioned bool        // some provider is Versioned
	log       atomic.Pointer[slog.Logger]

	loadMu sync.Mutex // serialises building views
	view   atomic.Pointer[View]
}

// View is one immutable snapshot of every registered tool. It is safe for
// concurrent use and never changes; the registry replaces it whole.
type View struct {
	byName map[string]Entry
	sorted []Entry // by name
	// gens are the providers' generations the view was built at, by
	// provider; unknownGeneration where it could not be read or the
	// provider failed (the next lookup loads again), 0 where the provider
	// is not Versioned.
	gens []int64
}

// unknownGeneration marks a provider whose generation or tools could not
// be read; no generation equals it, so the next lookup tries again.
const unknownGeneration = -1

// Get returns the tool registered under name in this view.
func (v *View) Get(name string) (Entry, bool) {
	e, ok := v.byName[name]
	return e, ok
}

// List returns every tool of this view, sorted by name. The slice is the
// caller's to keep.
func (v *View) List() []Entry { return slices.Clone(v.sorted) }

// Len is the number of tools in this view.
func (v *View) Len() int { return len(v.sorted) }

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
	r.versions = make([]Versioned, len(providers))
	for i, p := range providers {
		if p == nil {
			return nil, fmt.Errorf("tool registry: provider %d is nil", i)
		}
		if vp, ok := p.(Versioned); ok {
			r.versions[i], r.versioned = vp, true
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

// View returns the current view, loading the providers' tools when none
// is loaded yet or a Versioned provider's generation moved since. When a
// generation cannot be read, the view loaded before is kept (and the
// failure logged): the store that failed would fail the load as well.
func (r *Registry) View(ctx context.Context) *View {
	v := r.view.Load()
	if !r.versioned {
		if v != nil {
			return v
		}
		return r.load(ctx, nil)
	}
	gens, err := r.generations(ctx)
	if err != nil {
		if ctx.Err() == nil {
			r.logger().WarnContext(ctx, "tool registry: cannot ask a provider whether its tools changed; the tools loaded before stay", "error", err.Error())
		}
		if v != nil {
			return v
		}
		return r.load(ctx, nil)
	}
	if v != nil && slices.Equal(v.gens, gens) {
		return v
	}
	return r.load(ctx, gens)
}

// Get returns the tool registered under name (see View).
func (r *Registry) Get(ctx context.Context, name string) (Entry, bool) {
	return r.View(ctx).Get(name)
}

// List returns every registered tool, sorted by name (see View). The
// slice is the caller's to keep.
func (r *Registry) List(ctx context.Context) []Entry { return r.View(ctx).List() }

// Len is the number of registered tools (see View).
func (r *Registry) Len(ctx context.Context) int { return r.View(ctx).Len() }

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

// Refresh loads the providers' tools again and replaces the view, whether
// or not a generation moved. Readers keep the old view until the new one
// is complete. Provider failures and dropped tools are logged and also
// returned, joined, so a caller such as an import can show them; the view
// is replaced all the same, without what failed. When ctx ends during the
// load, the old view stays and ctx's error is returned.
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

// generations asks every Versioned provider for its generation, by
// provider (0 for the others).
func (r *Registry) generations(ctx context.Context) ([]int64, error) {
	gens := make([]int64, len(r.providers))
	for i, vp := range r.versions {
		if vp == nil {
			continue
		}
		g, err := vp.Generation(ctx)
		if err != nil {
			return nil, fmt.Errorf("tool provider %s: %w", providerName(i, r.providers[i]), err)
		}
		gens[i] = g
	}
	return gens, nil
}

// load builds a view, unless the one there is at least as new as seen
// (another caller loaded it while this one waited); seen nil takes any
// loaded view. A load that ctx cuts short is returned to this caller
// (without the tools it could not load, so nothing extra is offered) but
// not kept, so the next caller tries again.
func (r *Registry) load(ctx context.Context, seen []int64) *View {
	r.loadMu.Lock()
	defer r.loadMu.Unlock()
	if v := r.view.Load(); v != nil && (seen == nil || newerOrSame(v.gens, seen)) {
		return v
	}
	v, _ := r.build(ctx)
	if ctx.Err() == nil {
		r.view.Store(v)
	}
	return v
}

// newerOrSame reports whether every generation in have is known and at
// least the one in seen.
func newerOrSame(have, seen []int64) bool {
	for i := range have {
		if have[i] == unknownGeneration || have[i] < seen[i] {
			return false
		}
	}
	return true
}

// build makes a view of the builtins and every provider's tools, each
// Versioned provider's generation read before its tools. Problems are
// logged here and returned joined.
func (r *Registry) build(ctx context.Context) (*View, error) {
	v := &View{byName: make(map[string]Entry, len(r.builtins)), gens: make([]int64, len(r.providers))}
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
		if vp := r.versions[i]; vp != nil {
			g, err := vp.Generation(ctx)
			if err != nil {
				g = unknownGeneration
				report(fmt.Errorf("tool provider %s: cannot read its generation: %w", from, err),
					"tool provider's generation unreadable; its tools are loaded again on the next lookup", "provider", from)
			}
			v.gens[i] = g
		}
		tools, err := p.Tools(ctx)
		if err != nil {
			if r.versions[i] != nil {
				v.gens[i] = unknownGeneration
			}
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
