package agentconfig

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/secret"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
)

var (
	// ErrNotFound is matched when a configuration or task does not exist.
	ErrNotFound = errors.New("agentconfig: not found")
	// ErrInactive is matched when a configuration, its model or its
	// provider is switched off.
	ErrInactive = errors.New("agentconfig: inactive")
	// ErrCycle is matched when a fallback chain loops.
	ErrCycle = errors.New("agentconfig: fallback chain loops")
	// ErrNoKey is matched when a provider's API key (or a header value)
	// cannot be had: the variable is unset, there is no master key, or the
	// sealed value does not open.
	ErrNoKey = errors.New("agentconfig: API key unavailable")
)

// Params configure New.
type Params struct {
	// Store holds the records; required.
	Store store.AgentConfigs
	// Keyring seals literal keys on apply and opens them on use. nil is
	// allowed while no literal key is given or stored.
	Keyring *secret.Keyring
	// LookupEnv reads env:NAME keys; nil means os.LookupEnv.
	LookupEnv func(name string) (string, bool)
}

// Service reads, resolves and applies the configuration model. It is
// safe for concurrent use. Resolving keeps the last snapshot it read and
// reuses it while the store's generation has not moved: every resolve
// still asks the store (one small query), so a change made anywhere,
// even by hand in SQL, counts from the next resolve on.
type Service struct {
	st        store.AgentConfigs
	keys      *secret.Keyring
	lookupEnv func(string) (string, bool)

	mu   sync.Mutex
	last *Snapshot // shared: never changed after it is stored here
}

// New returns a Service over p.Store.
func New(p Params) *Service {
	s := &Service{st: p.Store, keys: p.Keyring, lookupEnv: p.LookupEnv}
	if s.lookupEnv == nil {
		s.lookupEnv = os.LookupEnv
	}
	return s
}

// Snapshot reads every record, consistently. The result is the caller's
// own.
func (s *Service) Snapshot(ctx context.Context) (*Snapshot, error) {
	snap, err := s.st.AgentConfigSnapshot(ctx)
	if err != nil {
		return nil, err
	}
	return snapshotFromStore(snap), nil
}

// current returns the model as it is now: the snapshot read last while
// the store's generation still matches it, a fresh read otherwise. The
// result is shared and must not be changed.
func (s *Service) current(ctx context.Context) (*Snapshot, error) {
	g, err := s.st.AgentConfigGeneration(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	last := s.last
	s.mu.Unlock()
	if last != nil && last.generation == g {
		return last, nil
	}
	// The snapshot carries the generation it was read at, which may be
	// newer than g; either way it is at least as new as g.
	snap, err := s.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.last == nil || snap.generation > s.last.generation {
		s.last = snap
	}
	s.mu.Unlock()
	return snap, nil
}

// Entry is one usable configuration with its model and provider.
type Entry struct {
	Configuration Configuration `json:"configuration"`
	Model         Model         `json:"model"`
	Provider      Provider      `json:"provider"`
}

// Skipped is a fallback the resolver left out, and why.
type Skipped struct {
	Identifier string `json:"identifier"`
	// Reason is "missing", "inactive" or "chain_limit".
	Reason string `json:"reason"`
}

// Resolved is a configuration ready for a run: its own entry (embedded),
// the fallbacks to try in order when its provider fails retryably, and
// what was skipped. It implements gate.Configuration.
type Resolved struct {
	Entry
	Fallbacks []Entry   `json:"fallbacks"`
	Skipped   []Skipped `json:"skipped,omitempty"`
	// from is the snapshot the configuration was resolved in.
	from *Snapshot
}

var _ gate.Configuration = (*Resolved)(nil)

// Chain is the configuration followed by its fallbacks: the order in
// which providers are tried.
func (r *Resolved) Chain() []Entry {
	return append([]Entry{r.Entry}, r.Fallbacks...)
}

// TrustZone is the least trusted zone among the providers of the chain:
// any of them may receive the run's tool output.
func (r *Resolved) TrustZone() tool.TrustZone {
	zones := []tool.TrustZone{r.Provider.TrustZone}
	for _, f := range r.Fallbacks {
		zones = append(zones, f.Provider.TrustZone)
	}
	return tool.LeastTrusted(zones...)
}

// GateConfig reduces the configuration to what the gate decides on: its
// allowed tool groups and the chain's least trusted zone.
func (r *Resolved) GateConfig() gate.Config {
	return gate.Config{
		Name:          r.Configuration.Identifier,
		AllowedGroups: slices.Clone(r.Configuration.AllowedToolGroups),
		TrustZone:     r.TrustZone(),
	}
}

// UserLimits returns the budget limits of the backend user in the
// snapshot the configuration was resolved in (see Snapshot.UserLimits). A
// run is held to them, as to the configuration's own, from its start: a
// change counts from the next run on. A Resolved not made by a resolve has
// no snapshot, hence no user limits.
func (r *Resolved) UserLimits(username string) Budget {
	if r.from == nil {
		return Budget{}
	}
	return r.from.UserLimits(username)
}

// Resolve resolves the configuration identifier with its model, provider
// and fallback chain in the model as it is now. See (*Snapshot).Resolve.
func (s *Service) Resolve(ctx context.Context, identifier string) (*Resolved, error) {
	snap, err := s.current(ctx)
	if err != nil {
		return nil, err
	}
	return snap.Resolve(identifier)
}

// ResolveTask resolves a task and its configuration in the model as it
// is now.
func (s *Service) ResolveTask(ctx context.Context, identifier string) (Task, *Resolved, error) {
	snap, err := s.current(ctx)
	if err != nil {
		return Task{}, nil, err
	}
	t, ok := snap.Task(identifier)
	if !ok {
		return Task{}, nil, fmt.Errorf("%w: there is no task %q", ErrNotFound, identifier)
	}
	r, err := snap.Resolve(t.Configuration)
	if err != nil {
		return Task{}, nil, fmt.Errorf("task %q: %w", identifier, err)
	}
	return t, r, nil
}

// entry is a configuration with its model and provider, when all three
// exist and are active.
func (s *Snapshot) entry(id string) (Entry, error) {
	c, ok := s.Configuration(id)
	if !ok {
		return Entry{}, fmt.Errorf("%w: there is no configuration %q", ErrNotFound, id)
	}
	m, ok := s.Model(c.Model)
	if !ok {
		return Entry{}, fmt.Errorf("%w: configuration %q uses model %q, which does not exist", ErrNotFound, id, c.Model)
	}
	p, ok := s.Provider(m.Provider)
	if !ok {
		return Entry{}, fmt.Errorf("%w: model %q uses provider %q, which does not exist", ErrNotFound, m.Identifier, m.Provider)
	}
	switch {
	case !c.Active:
		return Entry{}, fmt.Errorf("%w: configuration %q is inactive", ErrInactive, id)
	case !m.Active:
		return Entry{}, fmt.Errorf("%w: model %q of configuration %q is inactive", ErrInactive, m.Identifier, id)
	case !p.Active:
		return Entry{}, fmt.Errorf("%w: provider %q of configuration %q is inactive", ErrInactive, p.Identifier, id)
	}
	return Entry{Configuration: c, Model: m, Provider: p}, nil
}

// Resolve resolves the configuration identifier. It fails with
// ErrNotFound or ErrInactive when the configuration itself is unusable.
// The fallback chain is expanded depth first (a fallback's own chain
// follows it), each configuration once; missing and inactive entries are
// skipped (their own chains too), and so is everything beyond MaxChain.
// A chain that loops back onto itself fails with ErrCycle: apply refuses
// one, so only a concurrent edit can store it.
func (s *Snapshot) Resolve(identifier string) (*Resolved, error) {
	primary, err := s.entry(identifier)
	if err != nil {
		return nil, err
	}
	r := &Resolved{Entry: primary, Fallbacks: []Entry{}, from: s}
	seen := map[string]bool{identifier: true}
	var walk func(c Configuration, path []string) error
	walk = func(c Configuration, path []string) error {
		for _, id := range c.FallbackChain {
			if slices.Contains(path, id) {
				return fmt.Errorf("%w: %s", ErrCycle, strings.Join(append(slices.Clone(path), id), " → "))
			}
			if seen[id] {
				continue
			}
			seen[id] = true
			e, err := s.entry(id)
			switch {
			case errors.Is(err, ErrNotFound):
				r.Skipped = append(r.Skipped, Skipped{Identifier: id, Reason: "missing"})
				continue
			case err != nil:
				r.Skipped = append(r.Skipped, Skipped{Identifier: id, Reason: "inactive"})
				continue
			case len(r.Fallbacks)+1 >= MaxChain:
				r.Skipped = append(r.Skipped, Skipped{Identifier: id, Reason: "chain_limit"})
				continue
			}
			r.Fallbacks = append(r.Fallbacks, e)
			if err := walk(e.Configuration, append(path, id)); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(primary.Configuration, []string{identifier}); err != nil {
		return nil, fmt.Errorf("configuration %q: %w", identifier, err)
	}
	return r, nil
}

// keyPlace binds a provider's sealed API key to its record.
func keyPlace(provider string) string { return "llm_provider:" + provider }

// headerPlace binds a sealed header value to its provider and name.
func headerPlace(provider, header string) string {
	return "llm_provider:" + provider + ":header:" + strings.ToLower(header)
}

// APIKey returns the provider's key: read from the environment for
// env:NAME, opened with the keyring when sealed, "" when there is none.
// Errors match ErrNoKey and never hold the key.
func (s *Service) APIKey(p Provider) (string, error) {
	return s.open(p.APIKey, keyPlace(p.Identifier), fmt.Sprintf("provider %q: api_key", p.Identifier))
}

// Headers returns the provider's extra headers with their values resolved
// as APIKey resolves the key.
func (s *Service) Headers(p Provider) (map[string]string, error) {
	out := make(map[string]string, len(p.Headers))
	for name, ref := range p.Headers {
		v, err := s.open(ref, headerPlace(p.Identifier, name), fmt.Sprintf("provider %q: headers.%s", p.Identifier, name))
		if err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, nil
}

func (s *Service) open(ref SecretRef, place, what string) (string, error) {
	switch {
	case ref.env != "":
		v, ok := s.lookupEnv(ref.env)
		if !ok || v == "" {
			return "", fmt.Errorf("%w: %s: the environment variable %s is not set", ErrNoKey, what, ref.env)
		}
		return v, nil
	case ref.plain != "":
		return ref.plain, nil
	case ref.sealed == "":
		return "", nil
	case s.keys == nil:
		return "", fmt.Errorf("%w: %s is sealed and no master key is configured (security.master_key)", ErrNoKey, what)
	}
	v, err := s.keys.Open(ref.sealed, place)
	if err != nil {
		return "", fmt.Errorf("%w: %s: the sealed value cannot be opened with the configured master key", ErrNoKey, what)
	}
	return string(v), nil
}
