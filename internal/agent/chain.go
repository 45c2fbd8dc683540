package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/telemetry"
)

// chainEntry is one configuration of the run's fallback chain with its
// place in it.
type chainEntry struct {
	agentconfig.Entry
	index int
}

// buildChain makes the run's provider: an llm.Fallback over the primary
// and its fallbacks, each entry's calls metered. A fallback whose
// provider cannot be built (its key is missing, say) is left out; the
// primary must build.
func (r *run) buildChain(ctx context.Context) *ending {
	r.chain = map[string]chainEntry{}
	var entries []llm.Entry
	for i, e := range r.cfg.Chain() {
		p, err := r.rt.prov.Provider(ctx, e)
		if err != nil {
			if i == 0 {
				end := failed(TerminationProviderFailed, "configuration", fmt.Sprintf("The provider of configuration %q cannot be used: %v.", e.Configuration.Identifier, err))
				return &end
			}
			r.rt.log.WarnContext(ctx, "fallback left out: its provider cannot be used", "run_id", r.id,
				"configuration", e.Configuration.Identifier, "error", err.Error())
			continue
		}
		name := e.Configuration.Identifier
		r.chain[name] = chainEntry{Entry: e, index: i}
		entries = append(entries, llm.Entry{Name: name, Model: e.Model.ModelID, Provider: &metered{r: r, entry: r.chain[name], inner: p}})
	}
	r.provider = &llm.Fallback{Entries: entries, Logger: r.rt.log}
	return nil
}

// entry is the chain entry named name, or the primary.
func (r *run) entry(name string) chainEntry {
	if e, ok := r.chain[name]; ok {
		return e
	}
	return chainEntry{Entry: r.cfg.Entry}
}

// metered records every call of one chain entry in telemetry: the
// configuration, model and provider it went to, its place in the chain,
// usage, latency, attempts and error class.
type metered struct {
	r     *run
	entry chainEntry
	inner llm.Provider
}

func (m *metered) Name() string { return m.inner.Name() }

func (m *metered) Chat(ctx context.Context, req llm.Request) (llm.Response, error) {
	r := m.r
	ctx, span := r.rt.spans.chat(ctx, m.entry, req)
	start := r.rt.now()
	resp, err := m.inner.Chat(ctx, req)
	r.rt.spans.chatDone(ctx, span, r, m.inner.Name(), req, resp, err)
	p := telemetry.CallParams{
		RunID: r.id, Source: r.req.Caller.Source, Operation: r.req.Caller.Operation, Username: r.username(),
		RequestedConfiguration: r.conf.Identifier, Entry: m.entry.Entry, FallbackIndex: m.entry.index,
		Latency: r.rt.now().Sub(start), Err: err,
	}
	if err == nil {
		u := resp.Usage
		p.Usage, p.ServedModel, p.Attempts = &u, resp.Model, max(resp.Attempts, 1)
	}
	// Recorded even when the caller gave up: the call happened.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	if _, terr := r.rt.tel.RecordCall(wctx, p); terr != nil {
		r.rt.log.WarnContext(ctx, "cannot record a provider call", "run_id", r.id, "error", terr.Error())
	}
	var le *llm.Error
	if err != nil && !errors.As(err, &le) {
		err = llm.AsError(m.inner.Name(), err)
	}
	return resp, err
}
