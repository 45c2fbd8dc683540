package gate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/tracing"
	"github.com/t3agent/t3agent/internal/typo3"
)

// Reason is why the gate denied a tool: the first check that failed, in
// the order the constants are listed. An allowed decision has no reason,
// except an observed-only one, which keeps ReasonTrustZone to say what
// enforcement would have denied.
type Reason string

const (
	ReasonNotRegistered      Reason = "not_registered"
	ReasonToolDisabled       Reason = "tool_disabled"
	ReasonRequiresAdmin      Reason = "requires_admin"
	ReasonConfigurationGroup Reason = "configuration_group"
	ReasonTrustZone          Reason = "trust_zone"
	// ReasonNotOffered is Invoke's own: the tool was not in the set
	// offered at the start of the turn.
	ReasonNotOffered Reason = "not_offered"
	// ReasonWriteUnapproved is the loop's: an approval-bound call in a turn
	// that was answered with input, never approved (RecordUnapproved).
	ReasonWriteUnapproved Reason = "write_unapproved"
)

// Enforcement switches the trust-zone check between denying and only
// recording. Exactly Observe observes; every other value, including the
// empty string, "OBSERVE", "observe " and typos, enforces. SPEC §2 asks
// for the exact word, and a near miss must fail closed, never open (the
// reference failed open on typos), so no trimming or case folding is done:
// pass the operator's setting as it is.
type Enforcement string

const (
	Enforce Enforcement = "enforce"
	Observe Enforcement = "observe"
)

// Observes reports whether e is exactly Observe.
func (e Enforcement) Observes() bool { return e == Observe }

// EnforcementSetting is the store setting that holds the operator's
// enforcement mode. The gate reads it with the overrides, for every
// decision batch; unset enforces.
const EnforcementSetting = "tools.data_class_enforcement"

// Configuration is what the gate needs from an agent configuration. The
// full configuration model implements it by reducing itself to a Config:
// its allowed tool groups and the least trusted zone along its provider's
// fallback chain.
type Configuration interface {
	GateConfig() Config
}

// Config is the minimal configuration, and a Configuration itself. It is
// a value; the gate never changes it.
type Config struct {
	// Name identifies the configuration in governance events and logs.
	Name string
	// AllowedGroups narrows the offered tools to these groups; empty
	// means every group.
	AllowedGroups []string
	// TrustZone is the zone of the provider that will receive tool output,
	// already reduced to the least trusted along the fallback chain.
	// Empty or unknown zones count as externalGlobal.
	TrustZone tool.TrustZone
}

// GateConfig returns c.
func (c Config) GateConfig() Config { return c }

// configOf resolves a Configuration; none at all gets the strictest zone
// and no group restriction, so forgetting it can only take tools away.
func configOf(c Configuration) Config {
	var cfg Config
	if c != nil {
		cfg = c.GateConfig()
	}
	cfg.TrustZone = cfg.TrustZone.Normalize()
	return cfg
}

// Decision is the gate's answer for one tool.
type Decision struct {
	Tool    string `json:"tool"`
	Allowed bool   `json:"allowed"`
	// Reason is the first failing check, or empty when allowed (see Reason).
	Reason Reason `json:"reason,omitempty"`
	// DataClass is the tool's class; secretAdjacent for unknown names.
	DataClass tool.DataClass `json:"dataClass"`
	Zone      tool.TrustZone `json:"zone"`
	// Ceiling is the most sensitive class Zone may receive.
	Ceiling tool.DataClass `json:"ceiling"`
	// ObservedOnly marks a tool allowed only because enforcement is set
	// to observe; enforcement would have denied it for ReasonTrustZone.
	ObservedOnly bool `json:"observedOnly,omitempty"`
}

// Store is what the gate needs from the store.
type Store interface {
	AvailabilityStore
	store.GovernanceEvents
}

// DefaultTimeout is the deadline of one tool call unless Params.Timeout
// or InvokeParams.Timeout says otherwise.
const DefaultTimeout = 30 * time.Second

// Params configure New.
type Params struct {
	// Registry holds the tools; required.
	Registry *tool.Registry
	// Store holds the overrides and receives governance events; required.
	Store Store
	// Logger receives denials, observed-only decisions, failed tool calls
	// with their causes, and panics with their stacks. nil means
	// slog.Default().
	Logger *slog.Logger
	// Timeout is the deadline of one tool call; 0 means DefaultTimeout.
	Timeout time.Duration
	// OnCallFinished, when set, is called after every Invoke, synchronously
	// and on the caller's goroutine, so metrics and the loop's trace can
	// attach. It must be quick and must not panic.
	OnCallFinished func(ctx context.Context, report CallReport)
	// OnDenied, when set, is called for every denial the gate records
	// (each tool_denied and write_unapproved governance event, and an
	// observed-only decision turned into a denial), synchronously. It
	// must be quick and must not panic.
	OnDenied func(ctx context.Context, d Denial)
	// TracerProvider makes a span of every Invoke (execute_tool, with the
	// decision and the outcome); nil makes none.
	TracerProvider trace.TracerProvider
}

// Gate is the one place that decides whether a tool may be offered or
// called, and the only way a tool runs (Invoke).
//
// A Gate is safe for concurrent use by any number of goroutines. It holds
// no per-run state: decisions take the registry's view (which asks the MCP
// catalogue's generation, one small query, and follows a change made in
// any process) and load the overrides from the store each time (once per
// Explain or Offer, not once per tool), so a toggle or a changed MCP
// server takes effect at the next decision.
type Gate struct {
	reg      *tool.Registry
	st       Store
	avail    *Availability
	log      *slog.Logger
	timeout  time.Duration
	finished func(context.Context, CallReport)
	denied   func(context.Context, Denial)
	schemas  schemaCache
	tracer   trace.Tracer
}

// New returns a gate over p.Registry and p.Store. It compiles every
// builtin's input schema up front, so a builtin whose schema does not
// compile fails at start rather than at its first call.
func New(p Params) (*Gate, error) {
	if p.Registry == nil || p.Store == nil {
		return nil, errors.New("gate: a registry and a store are required")
	}
	if p.Timeout < 0 {
		return nil, fmt.Errorf("gate: timeout %v is negative", p.Timeout)
	}
	g := &Gate{
		reg:      p.Registry,
		st:       p.Store,
		avail:    NewAvailability(p.Store, p.Registry),
		log:      p.Logger,
		timeout:  p.Timeout,
		finished: p.OnCallFinished,
		denied:   p.OnDenied,
		tracer:   tracing.Tracer(p.TracerProvider),
	}
	if g.log == nil {
		g.log = slog.Default()
	}
	if g.timeout == 0 {
		g.timeout = DefaultTimeout
	}
	for _, e := range p.Registry.Builtins() {
		if _, err := g.schemas.get(e.Spec.Name, e.Spec.InputSchema); err != nil {
			return nil, fmt.Errorf("gate: builtin tool %s: %w", e.Spec.Name, err)
		}
	}
	return g, nil
}

// Availability is the gate's view of the overrides, for toggling.
func (g *Gate) Availability() *Availability { return g.avail }

// Registry is the registry the gate decides over.
func (g *Gate) Registry() *tool.Registry { return g.reg }

// scope is who asks, through which configuration, in which mode.
type scope struct {
	actor       *typo3.BackendUser
	cfg         Config
	enforcement Enforcement
	runID       string
}

// decide is the whole policy, a pure function of its inputs. All checks
// are ANDed; their order only picks the reason reported.
func decide(name string, e tool.Entry, found bool, ov Overrides, s scope) Decision {
	d := Decision{
		Tool:      name,
		DataClass: tool.SecretAdjacent,
		Zone:      s.cfg.TrustZone,
		Ceiling:   s.cfg.TrustZone.Ceiling(),
	}
	if !found {
		d.Reason = ReasonNotRegistered
		return d
	}
	d.DataClass = classOf(e.Spec)
	switch {
	case !ov.Enabled(e.Spec):
		d.Reason = ReasonToolDisabled
	case e.Spec.AdminOnly && (s.actor == nil || !s.actor.Admin):
		d.Reason = ReasonRequiresAdmin
	case len(s.cfg.AllowedGroups) > 0 && !slices.Contains(s.cfg.AllowedGroups, e.Spec.Group):
		d.Reason = ReasonConfigurationGroup
	case !s.cfg.TrustZone.Permits(d.DataClass):
		d.Reason = ReasonTrustZone
		// Remote output comes from outside t3agent, so observing is never
		// allowed to let it past the ceiling.
		if s.enforcement.Observes() && !e.Spec.Remote {
			d.Allowed, d.ObservedOnly = true, true
		}
	default:
		d.Allowed = true
	}
	return d
}

// classOf is the tool's declared class; a spec without a valid one (the
// registry refuses those) falls back to its group's, which is
// secretAdjacent for unknown groups.
func classOf(s tool.Spec) tool.DataClass {
	if s.DataClass.Valid() {
		return s.DataClass
	}
	return tool.GroupDataClass(s.Group)
}

// DecideParams are the parameters of Decide.
type DecideParams struct {
	Tool   string
	Actor  *typo3.BackendUser // nil: no user, so no admin-only tool
	Config Configuration      // nil: externalGlobal, every group
	RunID  string             // for governance events
}

// Decide decides for one tool and records a governance event when it
// denies the tool or allows it only by observing. It loads the overrides
// (one query); to decide for many tools use Explain or Offer, which
// load them once.
//
// On a store error the tool is denied and the error returned. An
// observed-only decision whose event cannot be stored is turned into a
// denial: observe means "allowed and recorded", never "allowed unseen".
func (g *Gate) Decide(ctx context.Context, p DecideParams) (Decision, error) {
	s := scope{actor: p.Actor, cfg: configOf(p.Config), runID: p.RunID}
	e, found := g.reg.View(ctx).Get(p.Tool)
	var ov Overrides
	if found {
		var err error
		if ov, err = g.avail.Load(ctx); err != nil {
			d := decide(p.Tool, e, found, Overrides{}, s)
			d.Allowed, d.ObservedOnly = false, false
			return d, fmt.Errorf("gate: cannot decide on tool %q: %w", p.Tool, err)
		}
	}
	s.enforcement = ov.Enforcement()
	d := decide(p.Tool, e, found, ov, s)
	ds := g.record(ctx, StageDecide, s, []Decision{d})
	return ds[0], nil
}

// ExplainParams are the parameters of Explain.
type ExplainParams struct {
	Actor  *typo3.BackendUser
	Config Configuration
}

// Explain decides for every registered tool, sorted by name, with one
// load of the overrides. It is a readout (the CLI's explain, the tools
// page) and records no governance events: nothing was asked for, so
// nothing was denied.
func (g *Gate) Explain(ctx context.Context, p ExplainParams) ([]Decision, error) {
	entries := g.reg.View(ctx).List()
	ov, err := g.avail.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("gate: cannot explain the tools: %w", err)
	}
	s := scope{actor: p.Actor, cfg: configOf(p.Config), enforcement: ov.Enforcement()}
	out := make([]Decision, len(entries))
	for i, e := range entries {
		out[i] = decide(e.Spec.Name, e, true, ov, s)
	}
	return out, nil
}
