package gate_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/tool"
)

func env500(b *testing.B) *env {
	var builtins []tool.Tool
	for i := range 500 {
		builtins = append(builtins, newTool(fmt.Sprintf("tool_%03d", i)))
	}
	e := newEnv(b, envParams{builtins: builtins})
	// A few overrides, as an installation has.
	for i := range 10 {
		e.setTool(fmt.Sprintf("tool_%03d", i*7), i%2 == 0)
	}
	e.setGroup(tool.GroupFiles, false)
	return e
}

// loopP50 runs f in b.Loop and also reports the median iteration as
// p50-ns: on a shared machine a preempted iteration moves the mean, not
// the median.
func loopP50(b *testing.B, f func()) {
	var d []time.Duration
	for b.Loop() {
		start := time.Now()
		f()
		d = append(d, time.Since(start))
	}
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Nanoseconds()), "p50-ns")
}

// BenchmarkDecide500 is one gate decision with 500 registered tools,
// overrides loaded from the SQLite store included.
func BenchmarkDecide500(b *testing.B) {
	e := env500(b)
	p := gate.DecideParams{Tool: "tool_250", Actor: editor(), Config: gate.Config{Name: "bench", TrustZone: tool.ZoneExternalEU}, RunID: "r"}
	loopP50(b, func() {
		d, err := e.gate.Decide(b.Context(), p)
		if err != nil || !d.Allowed {
			b.Fatalf("%+v, %v", d, err)
		}
	})
}

// BenchmarkExplain500 decides for all 500 tools with one load of the
// overrides.
func BenchmarkExplain500(b *testing.B) {
	e := env500(b)
	p := gate.ExplainParams{Actor: editor(), Config: gate.Config{TrustZone: tool.ZoneExternalEU}}
	for b.Loop() {
		list, err := e.gate.Explain(b.Context(), p)
		if err != nil || len(list) != 500 {
			b.Fatal(err)
		}
	}
}

// BenchmarkInvokeOverhead is gate check, argument validation and the call
// of a trivial tool. "offered" is the loop's path (the turn's offered set
// carries the overrides); "fresh" decides afresh, reading the overrides
// from the store, as the playground and the CLI do.
func BenchmarkInvokeOverhead(b *testing.B) {
	e := env500(b)
	cfg := gate.Config{TrustZone: tool.ZoneExternalEU}
	offered, err := e.gate.Offer(b.Context(), gate.OfferParams{Requested: []string{"tool_250"}, Actor: editor(), Config: cfg})
	if err != nil || !offered.Has("tool_250") {
		b.Fatal(err)
	}
	args := json.RawMessage(`{"q":"hello world"}`)
	for _, c := range []struct {
		name    string
		offered *gate.Offered
	}{{"offered", offered}, {"fresh", nil}} {
		b.Run(c.name, func(b *testing.B) {
			p := gate.InvokeParams{Name: "tool_250", Args: args, Config: cfg, Offered: c.offered, Call: tool.Call{Actor: editor(), RunID: "r", CallID: "c"}}
			loopP50(b, func() {
				if res := e.gate.Invoke(b.Context(), p); res.IsError {
					b.Fatal(res.Content)
				}
			})
		})
	}
}
