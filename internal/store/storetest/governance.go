package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/store"
)

// ---- governance events ----

func event(i int) store.RecordGovernanceEventParams {
	return store.RecordGovernanceEventParams{
		Kind:          "tool_denied",
		Tool:          fmt.Sprintf("tool_%02d", i),
		Reason:        "trust_zone",
		Zone:          "externalGlobal",
		Ceiling:       "editorContent",
		DataClass:     "secretAdjacent",
		ActorUsername: "editor",
		ActorUID:      int64(i + 1),
		Configuration: "default",
		RunID:         fmt.Sprintf("run-%d", i%3),
	}
}

func recordEvent(t *testing.T, st store.Store, p store.RecordGovernanceEventParams) store.GovernanceEvent {
	t.Helper()
	ev, err := st.RecordGovernanceEvent(t.Context(), p)
	if err != nil {
		t.Fatalf("RecordGovernanceEvent %+v: %v", p, err)
	}
	return ev
}

func listEvents(t *testing.T, st store.Store, p store.ListGovernanceEventsParams) []store.GovernanceEvent {
	t.Helper()
	got, err := st.GovernanceEvents(t.Context(), p)
	if err != nil {
		t.Fatalf("GovernanceEvents %+v: %v", p, err)
	}
	return got
}

// params strips what the store adds, for comparing with what was recorded.
func params(ev store.GovernanceEvent) store.RecordGovernanceEventParams {
	return store.RecordGovernanceEventParams{
		Kind: ev.Kind, Tool: ev.Tool, Reason: ev.Reason, Zone: ev.Zone, Ceiling: ev.Ceiling,
		DataClass: ev.DataClass, ActorUsername: ev.ActorUsername, ActorUID: ev.ActorUID,
		Configuration: ev.Configuration, RunID: ev.RunID,
	}
}

func ids(list []store.GovernanceEvent) []int64 {
	out := make([]int64, len(list))
	for i, ev := range list {
		out[i] = ev.ID
	}
	return out
}

func testEventsEmpty(t *testing.T, h harness) {
	f := h.setup(t)
	got := listEvents(t, f.st, store.ListGovernanceEventsParams{})
	if got == nil || len(got) != 0 {
		t.Fatalf("GovernanceEvents on a new store = %#v, want an empty non-nil slice", got)
	}
}

func testEventsRoundTrip(t *testing.T, h harness) {
	f := h.setup(t)
	full := store.RecordGovernanceEventParams{
		Kind: "tool_observed", Tool: "get_full_tca", Reason: "trust_zone", Zone: "externalEu",
		Ceiling: "internalConfiguration", DataClass: "systemDiagnostics", ActorUsername: "jürgen ✓",
		ActorUID: 1 << 40, Configuration: "Support (EU)", RunID: "01JQ7ZK3Q4",
	}
	// Only Kind is required: an event without a user, run or configuration
	// is still worth keeping.
	bare := store.RecordGovernanceEventParams{Kind: "tool_denied"}
	var stored []store.GovernanceEvent
	for _, p := range []store.RecordGovernanceEventParams{full, bare} {
		ev := recordEvent(t, f.st, p)
		if params(ev) != p || ev.ID <= 0 {
			t.Errorf("RecordGovernanceEvent returned %+v, want %+v with an ID", ev, p)
		}
		checkTime(t, "returned CreatedAt", ev.CreatedAt, f.clock.Stamp())
		stored = append(stored, ev)
	}
	if stored[1].ID <= stored[0].ID {
		t.Errorf("IDs %d then %d, want ascending", stored[0].ID, stored[1].ID)
	}
	list := listEvents(t, f.st, store.ListGovernanceEventsParams{})
	slices.Reverse(list) // newest first
	if len(list) != 2 {
		t.Fatalf("listed %d events, want 2", len(list))
	}
	for i := range list {
		if list[i].ID != stored[i].ID || params(list[i]) != params(stored[i]) {
			t.Errorf("listed %+v, want %+v", list[i], stored[i])
		}
		checkTime(t, "listed CreatedAt", list[i].CreatedAt, stored[i].CreatedAt)
	}
}

func testEventsPaging(t *testing.T, h harness) {
	f := h.setup(t)
	const n = 25
	var all []int64
	for i := range n {
		all = append(all, recordEvent(t, f.st, event(i)).ID)
		f.clock.Advance(time.Second)
	}
	slices.Reverse(all)

	// Newest first; the default page holds every one of these.
	if got := ids(listEvents(t, f.st, store.ListGovernanceEventsParams{})); !slices.Equal(got, all) {
		t.Errorf("default page = %v, want %v", got, all)
	}
	// Page through with BeforeID: every event exactly once, in order.
	var paged []int64
	before := int64(0)
	for pages := 0; ; pages++ {
		if pages > n {
			t.Fatal("paging does not end")
		}
		page := listEvents(t, f.st, store.ListGovernanceEventsParams{Limit: 10, BeforeID: before})
		if len(page) == 0 {
			break
		}
		if len(page) > 10 {
			t.Fatalf("page of %d events, want at most 10", len(page))
		}
		paged = append(paged, ids(page)...)
		before = page[len(page)-1].ID
	}
	if !slices.Equal(paged, all) {
		t.Errorf("paged = %v, want %v", paged, all)
	}
	// CreatedAt follows the clock, so newest first holds for time too.
	list := listEvents(t, f.st, store.ListGovernanceEventsParams{Limit: 2})
	if len(list) != 2 || !list[0].CreatedAt.After(list[1].CreatedAt) {
		t.Errorf("the two newest events = %+v, want descending CreatedAt", list)
	}
}

func testEventsDefaultLimit(t *testing.T, h harness) {
	f := h.setup(t)
	batch := make([]store.RecordGovernanceEventParams, store.DefaultGovernanceEventLimit+5)
	for i := range batch {
		batch[i] = event(i)
	}
	if _, err := f.st.RecordGovernanceEvents(t.Context(), batch); err != nil {
		t.Fatal(err)
	}
	if got := listEvents(t, f.st, store.ListGovernanceEventsParams{}); len(got) != store.DefaultGovernanceEventLimit {
		t.Errorf("default page holds %d events, want %d", len(got), store.DefaultGovernanceEventLimit)
	}
	if got := listEvents(t, f.st, store.ListGovernanceEventsParams{Limit: store.MaxGovernanceEventLimit}); len(got) != len(batch) {
		t.Errorf("a page of %d holds %d events, want all %d", store.MaxGovernanceEventLimit, len(got), len(batch))
	}
}

func testEventsFilters(t *testing.T, h harness) {
	f := h.setup(t)
	for i := range 9 {
		p := event(i % 3) // tools tool_00..tool_02, runs run-0..run-2
		if i >= 6 {
			p.Kind = "tool_observed"
		}
		recordEvent(t, f.st, p)
	}
	count := func(p store.ListGovernanceEventsParams) int { return len(listEvents(t, f.st, p)) }
	for _, c := range []struct {
		p    store.ListGovernanceEventsParams
		want int
	}{
		{store.ListGovernanceEventsParams{RunID: "run-1"}, 3},
		{store.ListGovernanceEventsParams{Tool: "tool_02"}, 3},
		{store.ListGovernanceEventsParams{Kind: "tool_observed"}, 3},
		{store.ListGovernanceEventsParams{Kind: "tool_denied", RunID: "run-0"}, 2},
		{store.ListGovernanceEventsParams{Kind: "tool_observed", Tool: "tool_01", RunID: "run-1"}, 1},
		{store.ListGovernanceEventsParams{Tool: "tool_01", RunID: "run-2"}, 0},
		{store.ListGovernanceEventsParams{RunID: "RUN-1"}, 0}, // exact, not case-folded
		{store.ListGovernanceEventsParams{Tool: "tool_0"}, 0}, // exact, not a prefix
	} {
		if got := count(c.p); got != c.want {
			t.Errorf("GovernanceEvents %+v: %d events, want %d", c.p, got, c.want)
		}
	}
	for _, ev := range listEvents(t, f.st, store.ListGovernanceEventsParams{RunID: "run-2", Kind: "tool_denied"}) {
		if ev.RunID != "run-2" || ev.Kind != "tool_denied" {
			t.Errorf("filter returned %+v", ev)
		}
	}
}

func testEventsBatch(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	batch := []store.RecordGovernanceEventParams{event(2), event(0), event(1)}
	got, err := f.st.RecordGovernanceEvents(ctx, batch)
	if err != nil {
		t.Fatalf("RecordGovernanceEvents: %v", err)
	}
	if len(got) != len(batch) {
		t.Fatalf("RecordGovernanceEvents returned %d events, want %d", len(got), len(batch))
	}
	for i := range batch {
		if params(got[i]) != batch[i] {
			t.Errorf("event %d = %+v, want %+v in the order given", i, got[i], batch[i])
		}
		if i > 0 && got[i].ID <= got[i-1].ID {
			t.Errorf("IDs %v are not ascending in the order given", ids(got))
		}
		checkTime(t, "CreatedAt", got[i].CreatedAt, f.clock.Stamp())
	}

	// All or nothing: a bad entry anywhere stores none of the batch.
	bad := event(9)
	bad.Kind = ""
	if _, err := f.st.RecordGovernanceEvents(ctx, []store.RecordGovernanceEventParams{event(8), bad}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("batch with an invalid event: err = %v, want ErrInvalid", err)
	}
	if n := len(listEvents(t, f.st, store.ListGovernanceEventsParams{})); n != len(batch) {
		t.Errorf("after a refused batch %d events are stored, want %d", n, len(batch))
	}
	empty, err := f.st.RecordGovernanceEvents(ctx, nil)
	if err != nil || empty == nil || len(empty) != 0 {
		t.Errorf("RecordGovernanceEvents(nil) = %#v, %v; want an empty non-nil slice", empty, err)
	}

	// A batch larger than one statement carries (an offer over many
	// remote tools) keeps the order, the IDs and the stored values.
	large := make([]store.RecordGovernanceEventParams, 1234)
	for i := range large {
		large[i] = event(len(large) - 1 - i) // descending tools, to tell the order
	}
	got, err = f.st.RecordGovernanceEvents(ctx, large)
	if err != nil || len(got) != len(large) {
		t.Fatalf("a batch of %d: %d events, %v", len(large), len(got), err)
	}
	stored := listEvents(t, f.st, store.ListGovernanceEventsParams{Limit: store.MaxGovernanceEventLimit})
	byID := make(map[int64]store.GovernanceEvent, len(stored))
	for _, ev := range stored {
		byID[ev.ID] = ev
	}
	for i := range large {
		if params(got[i]) != large[i] || i > 0 && got[i].ID <= got[i-1].ID {
			t.Fatalf("event %d of the large batch = %+v (previous ID %d), want %+v", i, got[i], got[max(i-1, 0)].ID, large[i])
		}
		if ev, ok := byID[got[i].ID]; ok && params(ev) != large[i] {
			t.Fatalf("stored event %d = %+v, want %+v", got[i].ID, ev, large[i])
		}
	}
}

func testEventsInvalid(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	long := strings.Repeat("x", store.MaxNameLen+1)
	mutations := []struct {
		why string
		fn  func(p *store.RecordGovernanceEventParams)
	}{
		{"empty kind", func(p *store.RecordGovernanceEventParams) { p.Kind = "" }},
		{"kind too long", func(p *store.RecordGovernanceEventParams) { p.Kind = long }},
		{"tool too long", func(p *store.RecordGovernanceEventParams) { p.Tool = long }},
		{"NUL in tool", func(p *store.RecordGovernanceEventParams) { p.Tool = "a\x00b" }},
		{"invalid UTF-8 in reason", func(p *store.RecordGovernanceEventParams) { p.Reason = "\xff" }},
		{"zone too long", func(p *store.RecordGovernanceEventParams) { p.Zone = long }},
		{"NUL in ceiling", func(p *store.RecordGovernanceEventParams) { p.Ceiling = "\x00" }},
		{"invalid UTF-8 in data class", func(p *store.RecordGovernanceEventParams) { p.DataClass = "a\xc3" }},
		{"actor too long", func(p *store.RecordGovernanceEventParams) { p.ActorUsername = long }},
		{"negative uid", func(p *store.RecordGovernanceEventParams) { p.ActorUID = -1 }},
		{"configuration too long", func(p *store.RecordGovernanceEventParams) { p.Configuration = long }},
		{"NUL in run id", func(p *store.RecordGovernanceEventParams) { p.RunID = "r\x00" }},
	}
	for _, m := range mutations {
		p := event(0)
		m.fn(&p)
		if _, err := f.st.RecordGovernanceEvent(ctx, p); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", m.why, err)
		}
	}
	for _, p := range []store.ListGovernanceEventsParams{
		{Limit: -1},
		{Limit: store.MaxGovernanceEventLimit + 1},
		{BeforeID: -1},
		{RunID: "\xff"},
		{Tool: long},
		{Kind: "a\x00"},
	} {
		if _, err := f.st.GovernanceEvents(ctx, p); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("GovernanceEvents %+v: err = %v, want ErrInvalid", p, err)
		}
	}
	if got := listEvents(t, f.st, store.ListGovernanceEventsParams{}); len(got) != 0 {
		t.Errorf("refused events were stored: %+v", got)
	}
}

func testEventsConcurrent(t *testing.T, h harness) {
	f := h.setup(t)
	other := open(t, f.dsn, store.OpenParams{}) // a second process
	stores := []store.Store{f.st, other}
	const n = 20
	err := runAll(n, func(i int) error {
		st := stores[i%2]
		if i%4 == 0 {
			_, err := st.RecordGovernanceEvents(context.Background(), []store.RecordGovernanceEventParams{event(i), event(i)})
			return err
		}
		_, err := st.RecordGovernanceEvent(context.Background(), event(i))
		return err
	})
	if err != nil {
		t.Fatalf("concurrent writers failed: %v", err)
	}
	want := n + n/4
	for i, st := range stores {
		list := listEvents(t, st, store.ListGovernanceEventsParams{})
		if len(list) != want {
			t.Errorf("store %d sees %d events, want %d", i, len(list), want)
		}
		seen := map[int64]bool{}
		for _, ev := range list {
			if seen[ev.ID] {
				t.Errorf("ID %d given twice", ev.ID)
			}
			seen[ev.ID] = true
		}
	}
}
