package gate

import (
	"context"
	"fmt"
	"slices"

	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

// OfferParams are the parameters of Offer.
type OfferParams struct {
	// Requested narrows the offer to these names. It is a request, never a
	// grant: each name still passes the gate. nil means every enabled
	// tool; an empty, non-nil slice means none.
	Requested []string
	Actor     *typo3.BackendUser
	Config    Configuration
	RunID     string
}

// Offered is the set of tools offered for one turn, as the gate decided
// it. Only Offer makes one, so a plain list of names can never stand in
// for it. An empty Offered is a legitimate answer: the loop then sends a
// plain completion without a tools field.
//
// An Offered is immutable and safe for concurrent use.
type Offered struct {
	specs     []tool.Spec           // allowed tools, by name
	entries   map[string]tool.Entry // allowed tools as the offer's registry view held them
	decisions []Decision            // every decision made, allowed or not, by name
	ov        Overrides             // the overrides the offer was decided on
}

// Offer decides which tools to offer for a turn, with one load of the
// overrides, and records a governance event for each tool it denies or
// allows only by observing. With Requested nil the candidates are the
// enabled tools, so disabled tools are left out without an event; a
// requested name is decided in full, so asking for a disabled or unknown
// tool is recorded as a denial.
func (g *Gate) Offer(ctx context.Context, p OfferParams) (*Offered, error) {
	ov, err := g.avail.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("gate: cannot decide which tools to offer: %w", err)
	}
	s := scope{actor: p.Actor, cfg: configOf(p.Config), enforcement: ov.Enforcement(), runID: p.RunID}
	// One view for the whole offer: one look at whether the catalogue
	// changed, and every decision on the same tools.
	view := g.reg.View(ctx)
	entries := make(map[string]tool.Entry)
	var ds []Decision
	if p.Requested == nil {
		for _, e := range view.List() {
			if !ov.Enabled(e.Spec) {
				continue
			}
			entries[e.Spec.Name] = e
			ds = append(ds, decide(e.Spec.Name, e, true, ov, s))
		}
	} else {
		names := slices.Clone(p.Requested)
		slices.Sort(names)
		for _, name := range slices.Compact(names) {
			e, found := view.Get(name)
			if found {
				entries[name] = e
			}
			ds = append(ds, decide(name, e, found, ov, s))
		}
	}
	ds = g.record(ctx, StageOffer, s, ds)

	o := &Offered{entries: make(map[string]tool.Entry), decisions: ds, ov: ov}
	for _, d := range ds {
		if d.Allowed {
			o.entries[d.Tool] = entries[d.Tool]
			o.specs = append(o.specs, entries[d.Tool].Spec)
		}
	}
	return o, nil
}

// Len is the number of offered tools.
func (o *Offered) Len() int { return len(o.specs) }

// Has reports whether name was offered.
func (o *Offered) Has(name string) bool {
	_, ok := o.entries[name]
	return ok
}

// Names lists the offered tools, sorted.
func (o *Offered) Names() []string {
	out := make([]string, len(o.specs))
	for i, s := range o.specs {
		out[i] = s.Name
	}
	return out
}

// Specs are the offered tools' specs, sorted by name, for the provider's
// tools field.
func (o *Offered) Specs() []tool.Spec { return slices.Clone(o.specs) }

// Decisions are all decisions the offer made, allowed or not, sorted by
// tool name, for the run's trace.
func (o *Offered) Decisions() []Decision { return slices.Clone(o.decisions) }
