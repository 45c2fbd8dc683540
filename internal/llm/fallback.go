package llm

import (
	"context"
	"log/slog"
)

// Entry is one step of a fallback chain: a named configuration, the
// provider it calls (normally a Breaker over a Retry over an adapter) and
// the model it asks for ("" keeps the request's model).
type Entry struct {
	Name     string
	Provider Provider
	Model    string
}

// Fallback is an ordered chain of entries. Chat tries the first; on a
// failure whose class is Retryable (connection, rateLimit, serverError,
// circuitOpen) it moves to the next, and on any other failure it stops
// there, since another endpoint would not fix a bad request or key. An
// exhausted chain returns the last entry's error (so it is classified by
// its last attempt) with Attempts summed over the chain and FellBack
// naming the entries passed over. The served Response carries Entry,
// FellBack and the summed Attempts. A stream that already delivered text
// never moves on.
//
// A Fallback is safe for concurrent use when its entries are; do not
// change Entries while calls are in flight.
type Fallback struct {
	Entries []Entry
	// Logger receives one record per entry passed over; nil logs nothing.
	Logger *slog.Logger
}

// Name is the first entry's provider name: the one requested.
func (f *Fallback) Name() string {
	if len(f.Entries) == 0 {
		return "fallback"
	}
	return f.Entries[0].Provider.Name()
}

// Chat implements Provider.
func (f *Fallback) Chat(ctx context.Context, req Request) (Response, error) {
	return f.do(ctx, req, nil)
}

// ChatStream implements Streamer.
func (f *Fallback) ChatStream(ctx context.Context, req Request, onDelta func(string)) (Response, error) {
	if onDelta == nil {
		onDelta = func(string) {}
	}
	return f.do(ctx, req, onDelta)
}

func (f *Fallback) do(ctx context.Context, req Request, onDelta func(string)) (Response, error) {
	if len(f.Entries) == 0 {
		return Response{}, &Error{Provider: "fallback", Class: FailConfiguration, Message: "empty fallback chain"}
	}
	var failed []EntryFailure
	attempts := 0
	for i, entry := range f.Entries {
		r := req
		if entry.Model != "" {
			r.Model = entry.Model
		}
		var resp Response
		var err error
		emitted := false
		if onDelta == nil {
			resp, err = entry.Provider.Chat(ctx, r)
		} else {
			resp, err = Stream(ctx, entry.Provider, r, func(s string) { emitted = true; onDelta(s) })
		}
		if err == nil {
			resp.Attempts = attempts + max(resp.Attempts, 1)
			resp.Entry = entry.Name
			resp.FellBack = failed
			if resp.Provider == "" {
				resp.Provider = entry.Provider.Name()
			}
			return resp, nil
		}
		e := AsError(entry.Provider.Name(), err)
		n := max(e.Attempts, 0) // a circuitOpen made no network call
		attempts += n
		e.Attempts = attempts
		e.Entry = entry.Name
		e.FellBack = failed
		last := i == len(f.Entries)-1
		if last || emitted || !e.Class.Retryable() || ctx.Err() != nil {
			return Response{}, e
		}
		failed = append(failed, EntryFailure{
			Entry: entry.Name, Provider: e.Provider, Model: r.Model,
			Class: e.Class, Status: e.Status, Attempts: n,
		})
		if f.Logger != nil {
			f.Logger.LogAttrs(ctx, slog.LevelWarn, "llm: falling back",
				slog.String("entry", entry.Name), slog.String("provider", e.Provider),
				slog.String("class", string(e.Class)), slog.String("next", f.Entries[i+1].Name))
		}
	}
	// Not reached: the last entry always returns above.
	return Response{}, &Error{Provider: f.Name(), Class: FailUnknown, Message: "fallback chain ended without an answer"}
}
