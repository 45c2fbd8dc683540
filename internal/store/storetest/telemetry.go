package storetest

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/store"
)

// ---- telemetry: provider calls and the daily usage ledger ----

func call(day, user, cfg string, in, out, cost int64) store.RecordLLMCallParams {
	return store.RecordLLMCallParams{
		RunID: "run-1", Source: "chat", Operation: "chatTurn", Username: user,
		RequestedConfiguration: cfg, Configuration: cfg, Provider: "openai", Model: "gpt-4o-mini",
		ModelID: "gpt-4o-mini-2024-07-18", Success: true, InputTokens: &in, OutputTokens: &out, Cost: &cost,
		Latency: 1234 * time.Millisecond, Attempts: 1, Day: day,
	}
}

func mustRecord(t *testing.T, st store.Store, p store.RecordLLMCallParams) store.LLMCall {
	t.Helper()
	c, err := st.RecordLLMCall(t.Context(), p)
	if err != nil {
		t.Fatalf("RecordLLMCall: %v", err)
	}
	return c
}

func mustUsage(t *testing.T, st store.Store, p store.UsageParams) []store.UsageRow {
	t.Helper()
	rows, err := st.Usage(t.Context(), p)
	if err != nil {
		t.Fatalf("Usage %+v: %v", p, err)
	}
	return rows
}

func testLLMCallsRoundTrip(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	if got, err := f.st.LLMCalls(ctx, store.ListLLMCallsParams{}); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("LLMCalls on a new store = %#v, %v", got, err)
	}
	ok := call("2025-03-14", "jürgen", "support", 1200, 300, 360_000_000)
	failed := store.RecordLLMCallParams{
		RunID: "run-1", Source: "chat", Operation: "chatTurn", Username: "jürgen", RequestedConfiguration: "support",
		Configuration: "local", FallbackIndex: 2, Provider: "ollama", Model: "llama", ModelID: "llama3.1",
		ErrorClass: "serverError", Latency: 3*time.Second + 999*time.Microsecond, Attempts: 4, Day: "2025-03-14",
	}
	first := mustRecord(t, f.st, ok)
	second := mustRecord(t, f.st, failed)
	checkTime(t, "CreatedAt", first.CreatedAt, f.clock.Stamp())
	if second.ID <= first.ID {
		t.Errorf("IDs %d then %d, want ascending", first.ID, second.ID)
	}
	mustRecord(t, f.st, call("2025-03-14", "x", "support", 1, 1, 1)) // another run
	got, err := f.st.LLMCalls(ctx, store.ListLLMCallsParams{RunID: "run-1"})
	if err != nil || len(got) != 3 {
		t.Fatalf("LLMCalls(run-1) = %d calls, %v", len(got), err)
	}
	got, _ = f.st.LLMCalls(ctx, store.ListLLMCallsParams{RunID: "run-1", Limit: 2})
	if len(got) != 2 || got[0].ID <= got[1].ID {
		t.Fatalf("page of 2 = %+v, want the two newest, newest first", got)
	}
	// The failed call reads back with NULL tokens and cost, and the
	// latency cut to whole milliseconds.
	wantFailed := store.LLMCall{
		ID: second.ID, RunID: "run-1", Source: "chat", Operation: "chatTurn", Username: "jürgen",
		RequestedConfiguration: "support", Configuration: "local", FallbackIndex: 2, Provider: "ollama",
		Model: "llama", ModelID: "llama3.1", ErrorClass: "serverError", Latency: 3 * time.Second, Attempts: 4,
		Day: "2025-03-14", CreatedAt: second.CreatedAt,
	}
	if !reflect.DeepEqual(got[1], wantFailed) || !reflect.DeepEqual(second, wantFailed) {
		t.Errorf("failed call:\n got  %+v\n and  %+v\nwant %+v", got[1], second, wantFailed)
	}
	next, _ := f.st.LLMCalls(ctx, store.ListLLMCallsParams{RunID: "run-1", BeforeID: got[1].ID})
	if len(next) != 1 || next[0].ID != first.ID || *next[0].InputTokens != 1200 || *next[0].Cost != 360_000_000 || !next[0].Success {
		t.Errorf("next page = %+v, want the first call", next)
	}
	if all, _ := f.st.LLMCalls(ctx, store.ListLLMCallsParams{}); len(all) != 3 {
		t.Errorf("all calls = %d, want 3", len(all))
	}
}

func testUsageLedger(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	rec := func(p store.RecordLLMCallParams) { mustRecord(t, f.st, p) }
	rec(call("2025-03-14", "anna", "support", 100, 10, 1000))
	rec(call("2025-03-14", "anna", "support", 200, 20, 2000)) // same ledger row
	other := call("2025-03-14", "anna", "support", 5, 5, 5)
	other.Source = "cli"
	rec(other) // another source: another row
	rec(call("2025-03-15", "anna", "local", 1, 2, 3))
	rec(call("2025-04-01", "bob", "support", 1000, 1000, 1_000_000))
	unpriced := call("2025-03-15", "bob", "local", 7, 7, 0)
	unpriced.Cost = nil
	rec(unpriced)
	failed := call("2025-03-15", "bob", "local", 0, 0, 0)
	failed.Success, failed.ErrorClass, failed.InputTokens, failed.OutputTokens = false, "rateLimit", nil, nil
	rec(failed)

	totals := func(p store.UsageTotalsParams) store.UsageTotal {
		t.Helper()
		u, err := f.st.UsageTotals(ctx, p)
		if err != nil {
			t.Fatalf("UsageTotals %+v: %v", p, err)
		}
		return u
	}
	for _, c := range []struct {
		p    store.UsageTotalsParams
		want store.UsageTotal
	}{
		{store.UsageTotalsParams{Username: "anna", From: "2025-03-14", To: "2025-03-14"},
			store.UsageTotal{Requests: 3, InputTokens: 305, OutputTokens: 35, Cost: 3005}},
		{store.UsageTotalsParams{Username: "anna", From: "2025-03-01", To: "2025-03-31"},
			store.UsageTotal{Requests: 4, InputTokens: 306, OutputTokens: 37, Cost: 3008}},
		{store.UsageTotalsParams{Username: "bob", From: "2025-03-01", To: "2025-03-31"},
			store.UsageTotal{Requests: 2, Errors: 1, InputTokens: 7, OutputTokens: 7, Cost: 0, Unpriced: 1}},
		{store.UsageTotalsParams{Configuration: "support", From: "2025-03-01", To: "2025-04-30"},
			store.UsageTotal{Requests: 4, InputTokens: 1305, OutputTokens: 1035, Cost: 1_003_005}},
		{store.UsageTotalsParams{Configuration: "nobody", From: "2025-01-01", To: "2025-12-31"}, store.UsageTotal{}},
	} {
		if got := totals(c.p); got != c.want {
			t.Errorf("UsageTotals %+v = %+v, want %+v", c.p, got, c.want)
		}
	}
	if u := totals(store.UsageTotalsParams{Username: "anna", From: "2025-03-14", To: "2025-03-14"}); u.Tokens() != 340 {
		t.Errorf("Tokens() = %d, want 340", u.Tokens())
	}

	byKey := func(by store.UsageKey, from, to string) map[string]int64 {
		m := map[string]int64{}
		for _, r := range mustUsage(t, f.st, store.UsageParams{By: by, From: from, To: to}) {
			m[r.Key] = r.Requests
		}
		return m
	}
	for _, c := range []struct {
		by       store.UsageKey
		from, to string
		want     map[string]int64
	}{
		{store.UsageByDay, "", "", map[string]int64{"2025-03-14": 3, "2025-03-15": 3, "2025-04-01": 1}},
		{store.UsageByUser, "", "", map[string]int64{"anna": 4, "bob": 3}},
		{store.UsageByConfiguration, "2025-03-15", "", map[string]int64{"local": 3, "support": 1}},
		{store.UsageByProvider, "", "2025-03-31", map[string]int64{"openai": 6}},
		{store.UsageByModel, "", "", map[string]int64{"gpt-4o-mini": 7}},
		{store.UsageBySource, "", "", map[string]int64{"chat": 6, "cli": 1}},
		{store.UsageByDay, "2025-05-01", "", map[string]int64{}},
	} {
		if got := byKey(c.by, c.from, c.to); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Usage by %s [%s, %s] = %v, want %v", c.by, c.from, c.to, got, c.want)
		}
	}
	rows := mustUsage(t, f.st, store.UsageParams{By: store.UsageByUser})
	if rows[0].Key != "anna" || rows[1].Key != "bob" || rows[1].Errors != 1 || rows[1].Unpriced != 1 || rows[1].Cost != 1_000_000 {
		t.Errorf("usage by user = %+v", rows)
	}
	if empty := mustUsage(t, f.st, store.UsageParams{By: store.UsageByDay, From: "2030-01-01"}); empty == nil {
		t.Error("Usage of no rows is nil, want an empty slice")
	}
}

func testTelemetryInvalid(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	bad := func(mod func(p *store.RecordLLMCallParams)) store.RecordLLMCallParams {
		p := call("2025-03-14", "anna", "support", 1, 1, 1)
		mod(&p)
		return p
	}
	for _, c := range []struct {
		why string
		p   store.RecordLLMCallParams
	}{
		{"no day", bad(func(p *store.RecordLLMCallParams) { p.Day = "" })},
		{"not a day", bad(func(p *store.RecordLLMCallParams) { p.Day = "2025-02-30" })},
		{"day with time", bad(func(p *store.RecordLLMCallParams) { p.Day = "2025-03-14T10:00" })},
		{"success with error class", bad(func(p *store.RecordLLMCallParams) { p.ErrorClass = "auth" })},
		{"failure without class", bad(func(p *store.RecordLLMCallParams) { p.Success = false })},
		{"negative tokens", bad(func(p *store.RecordLLMCallParams) { p.InputTokens = ptr(int64(-1)) })},
		{"negative latency", bad(func(p *store.RecordLLMCallParams) { p.Latency = -time.Second })},
		{"NUL in user", bad(func(p *store.RecordLLMCallParams) { p.Username = "a\x00" })},
	} {
		if _, err := f.st.RecordLLMCall(ctx, c.p); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", c.why, err)
		}
	}
	for _, p := range []store.UsageTotalsParams{
		{From: "2025-03-01", To: "2025-03-31"},
		{Username: "a", Configuration: "b", From: "2025-03-01", To: "2025-03-31"},
		{Username: "a", From: "March", To: "2025-03-31"},
	} {
		if _, err := f.st.UsageTotals(ctx, p); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("UsageTotals %+v: err = %v, want ErrInvalid", p, err)
		}
	}
	for _, p := range []store.UsageParams{{By: "users"}, {By: "day; DROP TABLE llm_calls"}, {By: store.UsageByDay, From: "yesterday"}} {
		if _, err := f.st.Usage(ctx, p); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Usage %+v: err = %v, want ErrInvalid", p, err)
		}
	}
	for _, p := range []store.ListLLMCallsParams{{Limit: -1}, {Limit: store.MaxLLMCallLimit + 1}, {BeforeID: -1}} {
		if _, err := f.st.LLMCalls(ctx, p); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("LLMCalls %+v: err = %v, want ErrInvalid", p, err)
		}
	}
	if rows := mustUsage(t, f.st, store.UsageParams{By: store.UsageByDay}); len(rows) != 0 {
		t.Errorf("refused calls reached the ledger: %+v", rows)
	}
}

// testUsageLedgerConcurrent: many writers add to one ledger row; none is lost.
func testUsageLedgerConcurrent(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	const n, each = 16, 5
	err := runAll(n, func(i int) error {
		for j := range each {
			p := call("2025-03-14", "anna", "support", int64(i), int64(j), 10)
			p.RunID = fmt.Sprintf("run-%d", i)
			if _, err := f.st.RecordLLMCall(ctx, p); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	u, err := f.st.UsageTotals(ctx, store.UsageTotalsParams{Username: "anna", From: "2025-03-14", To: "2025-03-14"})
	if err != nil {
		t.Fatal(err)
	}
	// Σi over 16 writers × 5 calls = 5·120; Σj = 16·10.
	want := store.UsageTotal{Requests: n * each, InputTokens: each * 120, OutputTokens: n * 10, Cost: n * each * 10}
	if u != want {
		t.Errorf("ledger after concurrent writes = %+v, want %+v", u, want)
	}
	if calls, _ := f.st.LLMCalls(ctx, store.ListLLMCallsParams{Limit: store.MaxLLMCallLimit}); len(calls) != n*each {
		t.Errorf("%d call rows, want %d", len(calls), n*each)
	}
}
