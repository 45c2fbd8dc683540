package agent_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/dbtest"
	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/tool"
)

// BenchmarkLoop is a 5-round run with 5 tool calls (two in the first
// turn, one in each of the next three, then the answer) against a
// zero-latency scripted OpenAI server, every step persisted, on SQLite
// and on PostgreSQL. ms/round is the whole run over its 5 rounds: the
// loop's own overhead, since the provider takes no time; p50-ms/round is
// the median run over its 5 rounds, which a preempted run on a shared
// machine does not move. "builtin" calls
// get_page_content on the demo site; "noop" a tool that does nothing, to
// show the loop without tool work.
//
//	go test ./internal/agent -run '^$' -bench BenchmarkLoop -benchtime 200x
func BenchmarkLoop(b *testing.B) {
	for _, db := range []struct {
		name string
		dsn  func(testing.TB) string
	}{
		{"sqlite", func(testing.TB) string { return "" }},
		{"postgres", func(tb testing.TB) string { return dbtest.Postgres(tb) }},
	} {
		for _, tl := range []struct{ name, call, args string }{
			{"builtin", "get_page_content", `{"uid":6}`},
			{"noop", "noop", `{}`},
		} {
			b.Run(db.name+"/"+tl.name, func(b *testing.B) {
				noop := newTestTool("noop", tool.GroupContent, tool.EditorContent)
				f := newFixture(b, fixtureParams{extra: []tool.Tool{noop}, storeDSN: db.dsn(b)})
				call := func(id string) llm.ToolCall { return llmtest.Call(id, tl.call, tl.args) }
				srv := llmtest.New(b, llmtest.Options{Wire: llmtest.OpenAI, Cycle: true},
					llmtest.Calls(call("c1"), call("c2")).WithUsage(900, 20),
					llmtest.Calls(call("c3")).WithUsage(1000, 20),
					llmtest.Calls(call("c4")).WithUsage(1100, 20),
					llmtest.Calls(call("c5")).WithUsage(1200, 20),
					llmtest.Text("Done.").WithUsage(1300, 20),
				)
				f.apply(providerDoc("bench", "openai", "externalGlobal", srv, 0, ""))
				req := f.request("bench", "editor", "Look around.")
				req.Tools = []string{tl.call}
				ctx := context.Background()
				var runs []time.Duration
				for b.Loop() {
					start := time.Now()
					res := f.rt.Run(ctx, req)
					runs = append(runs, time.Since(start))
					if res.Outcome != agent.OutcomeCompleted || res.Rounds != 5 || res.ToolCalls != 5 {
						b.Fatalf("result = %+v", res)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/5/1e6, "ms/round")
				slices.Sort(runs)
				b.ReportMetric(float64(runs[len(runs)/2].Nanoseconds())/5/1e6, "p50-ms/round")
			})
		}
	}
}

// BenchmarkQueue is queued-run throughput: b.N runs are enqueued, then a
// worker with 1, 2 or 4 slots drains the queue on PostgreSQL against a
// zero-latency scripted provider (one round). runs/s is the drain rate;
// every run is claimed, rehydrated (the configuration's generation checked,
// the owner looked up on the site), leased, run, recorded and settled.
//
//	go test ./internal/agent -run '^$' -bench BenchmarkQueue -benchtime 2000x
//
// "offer" runs offer the editor every enabled tool, as a plain Run does:
// the gate reads the overrides and the enforcement mode (one query) and
// records a governance event for each tool it denies the editor (one
// multi-row insert). "notools" asks for no tools, to show the queue and
// the loop alone.
func BenchmarkQueue(b *testing.B) {
	for _, tools := range []string{"offer", "notools"} {
		for _, slots := range []int{1, 2, 4} {
			benchQueue(b, tools, slots)
		}
	}
}

func benchQueue(b *testing.B, tools string, slots int) {
	b.Run(fmt.Sprintf("postgres/%s/workers=%d", tools, slots), func(b *testing.B) {
		f := newFixture(b, fixtureParams{storeDSN: dbtest.Postgres(b)})
		srv := llmtest.New(b, llmtest.Options{Wire: llmtest.OpenAI, Cycle: true}, llmtest.Text("Done.").WithUsage(100, 5))
		f.apply(providerDoc("bench", "openai", "externalGlobal", srv, 0, ""))
		req := f.request("bench", "editor", "Queued question.")
		if tools == "notools" {
			req.Tools = []string{}
		}
		ctx := context.Background()
		for range b.N {
			if _, err := f.rt.Enqueue(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
		var done atomic.Int64
		w, err := agent.NewWorker(agent.WorkerParams{Runtime: f.rt, Concurrency: slots, Drain: true, OnResult: func(res agent.Result) {
			if res.Outcome == agent.OutcomeCompleted {
				done.Add(1)
			}
		}})
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		w.Start(ctx)
		w.Wait()
		b.StopTimer()
		if done.Load() != int64(b.N) {
			b.Fatalf("%d of %d runs completed", done.Load(), b.N)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
	})
}
