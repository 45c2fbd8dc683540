// Package storetest is the one test suite every store driver must pass.
// A driver's test calls Run with a function that makes a fresh, empty
// database and returns its DSN; the suite opens stores on it with
// store.Open, so it can also reopen a database, open it twice (as two
// processes would) and inject a clock.
//
// A new kind of record joins the suite by adding a test function to the
// table in Run; every driver then runs it.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/logtest"
	"github.com/t3agent/t3agent/internal/store"
)

// NewDSN returns the DSN of a new, empty database that lives until tb ends.
type NewDSN func(tb testing.TB) string

// Run runs the whole suite, each test in parallel on its own database.
func Run(t *testing.T, newDSN NewDSN) {
	tests := []struct {
		name string
		fn   func(t *testing.T, h harness)
	}{
		{"Overrides/Empty", forEachKind(testOverridesEmpty)},
		{"Overrides/RoundTrip", forEachKind(testOverridesRoundTrip)},
		{"Overrides/Upsert", forEachKind(testOverridesUpsert)},
		{"Overrides/Ordering", forEachKind(testOverridesOrdering)},
		{"Overrides/Clear", forEachKind(testOverridesClear)},
		{"Overrides/Invalid", forEachKind(testOverridesInvalid)},
		{"Overrides/ToolsAndGroupsApart", testToolsAndGroupsApart},
		{"Overrides/ToolPolicy", testToolPolicy},
		{"Settings/Missing", testSettingMissing},
		{"Settings/RoundTrip", testSettingRoundTrip},
		{"Settings/Upsert", testSettingUpsert},
		{"Settings/Ordering", testSettingsOrdering},
		{"Settings/Delete", testSettingDelete},
		{"Settings/Batch", testSetSettingsBatch},
		{"Settings/Invalid", testSettingInvalid},
		{"GovernanceEvents/Empty", testEventsEmpty},
		{"GovernanceEvents/RoundTrip", testEventsRoundTrip},
		{"GovernanceEvents/Paging", testEventsPaging},
		{"GovernanceEvents/DefaultLimit", testEventsDefaultLimit},
		{"GovernanceEvents/Filters", testEventsFilters},
		{"GovernanceEvents/Batch", testEventsBatch},
		{"GovernanceEvents/Invalid", testEventsInvalid},
		{"GovernanceEvents/Concurrent", testEventsConcurrent},
		{"Runs", testRuns},
		{"Chat", testChat},
		{"Credentials", testCredentials},
		{"MCPServerState", testMCPServerState},
		{"Stats", testStats},
		{"AgentConfig/Empty", testAgentConfigEmpty},
		{"AgentConfig/RoundTrip", testAgentConfigRoundTrip},
		{"AgentConfig/Update", testAgentConfigUpdate},
		{"AgentConfig/DeleteOrder", testAgentConfigDeleteOrder},
		{"AgentConfig/References", testAgentConfigReferences},
		{"AgentConfig/Invalid", testAgentConfigInvalid},
		{"AgentConfig/Ordering", testAgentConfigOrdering},
		{"AgentConfig/ConcurrentApply", testAgentConfigConcurrentApply},
		{"AgentConfig/Generation", testAgentConfigGeneration},
		{"Telemetry/Calls", testLLMCallsRoundTrip},
		{"Telemetry/Ledger", testUsageLedger},
		{"Telemetry/Invalid", testTelemetryInvalid},
		{"Telemetry/LedgerConcurrent", testUsageLedgerConcurrent},
		{"MCP/ServerRoundTrip", testMCPServerRoundTrip},
		{"MCP/ServerUpdate", testMCPServerUpdate},
		{"MCP/ServerInvalid", testMCPServerInvalid},
		{"MCP/Contact", testMCPContact},
		{"MCP/ImportReconcile", testMCPImportReconcile},
		{"MCP/ImportConflict", testMCPImportConflict},
		{"MCP/ConcurrentImports", testMCPConcurrentImports},
		{"MCP/Delete", testMCPDelete},
		{"MCP/OAuth", testMCPOAuth},
		{"MCP/ToolEffect", testMCPToolEffect},
		{"MCP/Generation", testMCPGeneration},
		{"MCP/GenerationConcurrent", testMCPGenerationConcurrent},
		{"Clock", testClock},
		{"Concurrent/Writers", testConcurrentWriters},
		{"Concurrent/ReadsDuringWrites", testReadsDuringWrites},
		{"Concurrent/TwoStoresOneDatabase", testTwoStores},
		{"Concurrent/Open", testConcurrentOpen},
		{"Lifecycle/PingAndClose", testPingAndClose},
		{"Lifecycle/CanceledContext", testCanceledContext},
		{"Lifecycle/Reopen", testReopen},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, harness{newDSN: newDSN})
		})
	}
}

// harness hands a test its databases and stores.
type harness struct{ newDSN NewDSN }

// fixture is one open store with its own clock.
type fixture struct {
	st    store.Store
	clock *clock
	dsn   string
}

// setup opens a store on a fresh database; it is closed when t ends.
func (h harness) setup(t *testing.T) fixture {
	t.Helper()
	dsn := h.newDSN(t)
	c := newClock()
	return fixture{st: open(t, dsn, store.OpenParams{Now: c.Now}), clock: c, dsn: dsn}
}

func open(t *testing.T, dsn string, p store.OpenParams) store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), dsn, p)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return st
}

// clock is the injected time source: it moves only when told.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock {
	// Not UTC and finer than a microsecond, so the store's normalisation shows.
	return &clock{now: time.Date(2025, 3, 14, 10, 26, 53, 589793238, time.FixedZone("CET", 3600))}
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Stamp is what the store must record for the clock's present reading.
func (c *clock) Stamp() time.Time { return c.Now().UTC().Truncate(time.Microsecond) }

func checkTime(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if !got.Equal(want) || got.Location() != time.UTC {
		t.Errorf("%s = %v, want %v in UTC", what, got, want)
	}
}

// ---- overrides: tool and group overrides behave alike ----

// override is ToolOverride and ToolGroupOverride seen the same way.
type override struct {
	Name      string
	Enabled   bool
	UpdatedAt time.Time
	UpdatedBy string
}

// kind binds the generic override tests to one pair of tables.
type kind struct {
	name  string
	set   func(ctx context.Context, st store.Store, name string, enabled bool, by string) (override, error)
	list  func(ctx context.Context, st store.Store) ([]override, error)
	clear func(ctx context.Context, st store.Store, name string) error
}

func toolKind() kind {
	return kind{
		name: "Tool",
		set: func(ctx context.Context, st store.Store, name string, enabled bool, by string) (override, error) {
			o, err := st.SetToolOverride(ctx, store.SetToolOverrideParams{Name: name, Enabled: enabled, UpdatedBy: by})
			return override(o), err
		},
		list: func(ctx context.Context, st store.Store) ([]override, error) {
			rows, err := st.ToolOverrides(ctx)
			if rows == nil {
				return nil, err
			}
			out := make([]override, len(rows))
			for i, o := range rows {
				out[i] = override(o)
			}
			return out, err
		},
		clear: func(ctx context.Context, st store.Store, name string) error { return st.ClearToolOverride(ctx, name) },
	}
}

func groupKind() kind {
	conv := func(o store.ToolGroupOverride) override {
		return override{Name: o.Group, Enabled: o.Enabled, UpdatedAt: o.UpdatedAt, UpdatedBy: o.UpdatedBy}
	}
	return kind{
		name: "Group",
		set: func(ctx context.Context, st store.Store, name string, enabled bool, by string) (override, error) {
			o, err := st.SetToolGroupOverride(ctx, store.SetToolGroupOverrideParams{Group: name, Enabled: enabled, UpdatedBy: by})
			return conv(o), err
		},
		list: func(ctx context.Context, st store.Store) ([]override, error) {
			rows, err := st.ToolGroupOverrides(ctx)
			if rows == nil {
				return nil, err
			}
			out := make([]override, len(rows))
			for i, o := range rows {
				out[i] = conv(o)
			}
			return out, err
		},
		clear: func(ctx context.Context, st store.Store, name string) error {
			return st.ClearToolGroupOverride(ctx, name)
		},
	}
}

func forEachKind(fn func(t *testing.T, h harness, k kind)) func(t *testing.T, h harness) {
	return func(t *testing.T, h harness) {
		for _, k := range []kind{toolKind(), groupKind()} {
			t.Run(k.name, func(t *testing.T) {
				t.Parallel()
				fn(t, h, k)
			})
		}
	}
}

func mustList(t *testing.T, k kind, st store.Store) []override {
	t.Helper()
	got, err := k.list(t.Context(), st)
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	return got
}

func mustSet(t *testing.T, k kind, st store.Store, name string, enabled bool, by string) override {
	t.Helper()
	o, err := k.set(t.Context(), st, name, enabled, by)
	if err != nil {
		t.Fatalf("set %q: %v", name, err)
	}
	return o
}

func names(list []override) []string {
	out := make([]string, len(list))
	for i, o := range list {
		out[i] = o.Name
	}
	return out
}

func testOverridesEmpty(t *testing.T, h harness, k kind) {
	f := h.setup(t)
	got := mustList(t, k, f.st)
	// Never nil, so an API renders [] rather than null.
	if got == nil || len(got) != 0 {
		t.Fatalf("list on a new store = %#v, want an empty non-nil slice", got)
	}
}

func testOverridesRoundTrip(t *testing.T, h harness, k kind) {
	f := h.setup(t)
	want := override{Name: "typo3_page_tree", Enabled: false, UpdatedAt: f.clock.Stamp(), UpdatedBy: "admin"}
	got := mustSet(t, k, f.st, want.Name, want.Enabled, want.UpdatedBy)
	checkTime(t, "returned UpdatedAt", got.UpdatedAt, want.UpdatedAt)
	if got.Name != want.Name || got.Enabled != want.Enabled || got.UpdatedBy != want.UpdatedBy {
		t.Errorf("set returned %+v, want %+v", got, want)
	}
	list := mustList(t, k, f.st)
	if len(list) != 1 {
		t.Fatalf("list = %+v, want exactly %+v", list, want)
	}
	checkTime(t, "listed UpdatedAt", list[0].UpdatedAt, want.UpdatedAt)
	if list[0].Name != want.Name || list[0].Enabled != want.Enabled || list[0].UpdatedBy != want.UpdatedBy {
		t.Errorf("list = %+v, want %+v", list[0], want)
	}
}

func testOverridesUpsert(t *testing.T, h harness, k kind) {
	f := h.setup(t)
	mustSet(t, k, f.st, "content", false, "alice")
	f.clock.Advance(90 * time.Minute)
	mustSet(t, k, f.st, "content", true, "bob")
	list := mustList(t, k, f.st)
	if len(list) != 1 {
		t.Fatalf("after two sets of one name, list = %+v, want one entry", list)
	}
	got := list[0]
	if !got.Enabled || got.UpdatedBy != "bob" {
		t.Errorf("list[0] = %+v, want the second set (enabled by bob)", got)
	}
	checkTime(t, "UpdatedAt", got.UpdatedAt, f.clock.Stamp())

	// Setting the same value again still records who and when.
	f.clock.Advance(time.Second)
	again := mustSet(t, k, f.st, "content", true, "carol")
	if again.UpdatedBy != "carol" {
		t.Errorf("re-set UpdatedBy = %q, want carol", again.UpdatedBy)
	}
	checkTime(t, "re-set UpdatedAt", again.UpdatedAt, f.clock.Stamp())
}

func testOverridesOrdering(t *testing.T, h harness, k kind) {
	f := h.setup(t)
	// Mixed case, underscore and non-ASCII tell bytewise order from a
	// locale's order.
	in := []string{"b", "a_b", "aB", "A", "ab", "B", "a", "ä", "mcp_docs_search", "Z"}
	for _, n := range in {
		mustSet(t, k, f.st, n, true, "admin")
	}
	want := slices.Clone(in)
	slices.Sort(want)
	if got := names(mustList(t, k, f.st)); !slices.Equal(got, want) {
		t.Errorf("order = %q, want bytewise %q", got, want)
	}
}

func testOverridesClear(t *testing.T, h harness, k kind) {
	f := h.setup(t)
	ctx := t.Context()
	mustSet(t, k, f.st, "x", false, "admin")
	mustSet(t, k, f.st, "y", false, "admin")
	if err := k.clear(ctx, f.st, "x"); err != nil {
		t.Fatalf("clear x: %v", err)
	}
	if got := names(mustList(t, k, f.st)); !slices.Equal(got, []string{"y"}) {
		t.Errorf("after clearing x, list = %q, want [y]", got)
	}
	for _, n := range []string{"x", "never-set"} {
		err := k.clear(ctx, f.st, n)
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("clear %q without an override: err = %v, want ErrNotFound", n, err)
		} else if !strings.Contains(err.Error(), `"`+n+`"`) {
			t.Errorf("clear %q: message %q does not name it", n, err)
		}
	}
}

func testOverridesInvalid(t *testing.T, h harness, k kind) {
	f := h.setup(t)
	ctx := t.Context()
	cases := []struct{ name, by, why string }{
		{"", "admin", "empty name"},
		{"x", "", "empty actor"},
		{strings.Repeat("n", store.MaxNameLen+1), "admin", "name too long"},
		{"x", strings.Repeat("a", store.MaxNameLen+1), "actor too long"},
		{"a\x00b", "admin", "NUL in name"},
		{"a\xffb", "admin", "invalid UTF-8 in name"},
		{"x", "ad\x00min", "NUL in actor"},
	}
	for _, c := range cases {
		if _, err := k.set(ctx, f.st, c.name, true, c.by); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: set err = %v, want ErrInvalid", c.why, err)
		}
	}
	if err := k.clear(ctx, f.st, ""); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("clear empty name: err = %v, want ErrInvalid", err)
	}
	if got := mustList(t, k, f.st); len(got) != 0 {
		t.Errorf("refused sets stored %+v", got)
	}
	// The longest allowed name is accepted.
	long := strings.Repeat("n", store.MaxNameLen)
	if got := mustSet(t, k, f.st, long, true, "admin"); got.Name != long {
		t.Errorf("longest name came back as %d bytes", len(got.Name))
	}
}

func testToolsAndGroupsApart(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	tool, group := toolKind(), groupKind()
	mustSet(t, tool, f.st, "content", false, "admin")
	if got := mustList(t, group, f.st); len(got) != 0 {
		t.Fatalf("a tool override showed up as a group override: %+v", got)
	}
	mustSet(t, group, f.st, "content", true, "admin")
	if err := tool.clear(ctx, f.st, "content"); err != nil {
		t.Fatalf("clear tool override: %v", err)
	}
	if got := names(mustList(t, group, f.st)); !slices.Equal(got, []string{"content"}) {
		t.Errorf("clearing the tool override touched the group's: groups = %q", got)
	}
}

// ---- settings ----

func setSetting(t *testing.T, st store.Store, key, value string) store.Setting {
	t.Helper()
	s, err := st.SetSetting(t.Context(), store.SetSettingParams{Key: key, Value: value})
	if err != nil {
		t.Fatalf("SetSetting %q: %v", key, err)
	}
	return s
}

func wantSetting(t *testing.T, st store.Store, key, want string) {
	t.Helper()
	got, err := st.Setting(t.Context(), key)
	if err != nil {
		t.Fatalf("Setting %q: %v", key, err)
	}
	if got != want {
		t.Errorf("Setting %q = %.60q (%d bytes), want %.60q (%d bytes)", key, got, len(got), want, len(want))
	}
}

func wantNoSetting(t *testing.T, st store.Store, key string) {
	t.Helper()
	_, err := st.Setting(t.Context(), key)
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Setting %q: err = %v, want ErrNotFound", key, err)
	}
	if !strings.Contains(err.Error(), `"`+key+`"`) {
		t.Errorf("ErrNotFound message %q does not name key %q", err, key)
	}
}

func testSettingMissing(t *testing.T, h harness) {
	f := h.setup(t)
	wantNoSetting(t, f.st, "provider.default")
	list, err := f.st.Settings(t.Context())
	if err != nil || list == nil || len(list) != 0 {
		t.Errorf("Settings on a new store = %#v, %v; want an empty non-nil slice", list, err)
	}
}

func testSettingRoundTrip(t *testing.T, h harness) {
	f := h.setup(t)
	values := map[string]string{
		"empty":     "", // set but empty is not missing
		"multiline": "line one\nline two\r\n\ttabbed",
		"unicode":   "Grüße, 世界, 🚀",
		"json":      `{"model":"gpt","temperature":0.2}`,
		"largest":   strings.Repeat("x", store.MaxSettingValueLen),
	}
	for k, v := range values {
		got := setSetting(t, f.st, k, v)
		if got.Key != k || got.Value != v {
			t.Errorf("SetSetting %q returned key %q and %d bytes, want %d bytes", k, got.Key, len(got.Value), len(v))
		}
		checkTime(t, "returned UpdatedAt", got.UpdatedAt, f.clock.Stamp())
	}
	for k, v := range values {
		wantSetting(t, f.st, k, v)
	}
	list, err := f.st.Settings(t.Context())
	if err != nil {
		t.Fatalf("Settings: %v", err)
	}
	if len(list) != len(values) {
		t.Fatalf("Settings has %d entries, want %d", len(list), len(values))
	}
	for _, s := range list {
		if s.Value != values[s.Key] {
			t.Errorf("Settings entry %q has %d bytes, want %d", s.Key, len(s.Value), len(values[s.Key]))
		}
		checkTime(t, "listed UpdatedAt of "+s.Key, s.UpdatedAt, f.clock.Stamp())
	}
}

func testSettingUpsert(t *testing.T, h harness) {
	f := h.setup(t)
	setSetting(t, f.st, "enforcement", "enforce")
	f.clock.Advance(24 * time.Hour)
	setSetting(t, f.st, "enforcement", "observe")
	wantSetting(t, f.st, "enforcement", "observe")
	list, err := f.st.Settings(t.Context())
	if err != nil {
		t.Fatalf("Settings: %v", err)
	}
	if len(list) != 1 || list[0].Value != "observe" {
		t.Fatalf("Settings = %+v, want the one replaced entry", list)
	}
	checkTime(t, "UpdatedAt", list[0].UpdatedAt, f.clock.Stamp())
}

func testSettingsOrdering(t *testing.T, h harness) {
	f := h.setup(t)
	in := []string{"ui.theme", "UI.Theme", "provider_default", "provider.default", "a", "Ä", "z"}
	for _, k := range in {
		setSetting(t, f.st, k, "v-"+k)
	}
	list, err := f.st.Settings(t.Context())
	if err != nil {
		t.Fatalf("Settings: %v", err)
	}
	var got []string
	for _, s := range list {
		got = append(got, s.Key)
		if s.Value != "v-"+s.Key {
			t.Errorf("Settings entry %q = %q", s.Key, s.Value)
		}
	}
	want := slices.Clone(in)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("order = %q, want bytewise %q", got, want)
	}
}

func testSettingDelete(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	setSetting(t, f.st, "keep", "1")
	setSetting(t, f.st, "drop", "2")
	if err := f.st.DeleteSetting(ctx, "drop"); err != nil {
		t.Fatalf("DeleteSetting: %v", err)
	}
	wantNoSetting(t, f.st, "drop")
	wantSetting(t, f.st, "keep", "1")
	for _, k := range []string{"drop", "never-set"} {
		err := f.st.DeleteSetting(ctx, k)
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("DeleteSetting %q again: err = %v, want ErrNotFound", k, err)
		}
	}
}

func testSetSettingsBatch(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	setSetting(t, f.st, "b", "old")
	f.clock.Advance(time.Minute)
	batch := []store.SetSettingParams{{Key: "c", Value: "3"}, {Key: "a", Value: "1"}, {Key: "b", Value: "2"}}
	got, err := f.st.SetSettings(ctx, batch)
	if err != nil {
		t.Fatalf("SetSettings: %v", err)
	}
	if len(got) != len(batch) {
		t.Fatalf("SetSettings returned %d settings, want %d", len(got), len(batch))
	}
	for i, p := range batch {
		if got[i].Key != p.Key || got[i].Value != p.Value {
			t.Errorf("SetSettings result %d = %+v, want %+v in the order given", i, got[i], p)
		}
		checkTime(t, "UpdatedAt of "+p.Key, got[i].UpdatedAt, f.clock.Stamp())
		wantSetting(t, f.st, p.Key, p.Value)
	}

	// All or nothing: a bad entry anywhere stores none of the batch.
	for _, bad := range [][]store.SetSettingParams{
		{{Key: "new1", Value: "x"}, {Key: "", Value: "y"}},
		{{Key: "new1", Value: "x"}, {Key: "a", Value: "bad\x00"}},
		{{Key: "new1", Value: "x"}, {Key: "new1", Value: "again"}},
	} {
		if _, err := f.st.SetSettings(ctx, bad); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("SetSettings %+v: err = %v, want ErrInvalid", bad, err)
		}
	}
	wantNoSetting(t, f.st, "new1")
	wantSetting(t, f.st, "a", "1")

	empty, err := f.st.SetSettings(ctx, nil)
	if err != nil || len(empty) != 0 {
		t.Errorf("SetSettings(nil) = %+v, %v; want nothing and no error", empty, err)
	}
}

func testSettingInvalid(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	for _, p := range []store.SetSettingParams{
		{Key: "", Value: "v"},
		{Key: strings.Repeat("k", store.MaxNameLen+1), Value: "v"},
		{Key: "k\x00", Value: "v"},
		{Key: "k\xc3", Value: "v"},
		{Key: "k", Value: "v\x00"},
		{Key: "k", Value: "\xff"},
		{Key: "k", Value: strings.Repeat("v", store.MaxSettingValueLen+1)},
	} {
		if _, err := f.st.SetSetting(ctx, p); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("SetSetting key %.20q value %.20q: err = %v, want ErrInvalid", p.Key, p.Value, err)
		}
	}
	if _, err := f.st.Setting(ctx, ""); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Setting(\"\"): err = %v, want ErrInvalid", err)
	}
	if err := f.st.DeleteSetting(ctx, ""); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("DeleteSetting(\"\"): err = %v, want ErrInvalid", err)
	}
	if list, err := f.st.Settings(ctx); err != nil || len(list) != 0 {
		t.Errorf("refused sets left %+v, %v", list, err)
	}
}

// ---- clock ----

func testClock(t *testing.T, h harness) {
	f := h.setup(t)
	// 2025-03-14 10:26:53.589793238 CET is 09:26:53.589793 UTC once cut to
	// microseconds; the store must neither use the wall clock nor round up.
	want := time.Date(2025, 3, 14, 9, 26, 53, 589793000, time.UTC)
	o, err := f.st.SetToolOverride(t.Context(), store.SetToolOverrideParams{Name: "t", UpdatedBy: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	checkTime(t, "tool override", o.UpdatedAt, want)
	g, err := f.st.SetToolGroupOverride(t.Context(), store.SetToolGroupOverrideParams{Group: "g", UpdatedBy: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	checkTime(t, "group override", g.UpdatedAt, want)
	f.clock.Advance(-48 * time.Hour) // clocks may step back; the store records what it is told
	s := setSetting(t, f.st, "k", "v")
	checkTime(t, "setting", s.UpdatedAt, want.Add(-48*time.Hour))
}

// ---- concurrency ----

// runAll starts n goroutines at once and returns their errors joined.
func runAll(n int, fn func(i int) error) error {
	start := make(chan struct{})
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = fn(i)
		})
	}
	close(start)
	wg.Wait()
	return errors.Join(errs...)
}

func testConcurrentWriters(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	const n = 20
	err := runAll(n, func(i int) error {
		name := fmt.Sprintf("tool_%02d", i)
		if _, err := f.st.SetToolOverride(ctx, store.SetToolOverrideParams{Name: name, Enabled: i%2 == 0, UpdatedBy: "w"}); err != nil {
			return err
		}
		// Everyone fights over one row too.
		if _, err := f.st.SetToolGroupOverride(ctx, store.SetToolGroupOverrideParams{Group: "shared", Enabled: i%2 == 0, UpdatedBy: name}); err != nil {
			return err
		}
		if _, err := f.st.SetSetting(ctx, store.SetSettingParams{Key: "shared", Value: name}); err != nil {
			return err
		}
		_, err := f.st.SetSettings(ctx, []store.SetSettingParams{{Key: name + ".a", Value: "a"}, {Key: name + ".b", Value: "b"}})
		return err
	})
	if err != nil {
		t.Fatalf("concurrent writers failed: %v", err)
	}
	tools, err := f.st.ToolOverrides(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != n {
		t.Errorf("%d tool overrides stored, want %d", len(tools), n)
	}
	for i, o := range tools {
		if want := fmt.Sprintf("tool_%02d", i); o.Name != want || o.Enabled != (i%2 == 0) {
			t.Errorf("tool override %d = %+v, want %s enabled=%v", i, o, want, i%2 == 0)
		}
	}
	groups, err := f.st.ToolGroupOverrides(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 1 || !strings.HasPrefix(groups[0].UpdatedBy, "tool_") {
		t.Errorf("group overrides = %+v, want the one shared row from one writer", groups)
	}
	settings, err := f.st.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(settings) != 1+2*n {
		t.Errorf("%d settings stored, want %d", len(settings), 1+2*n)
	}
}

func testReadsDuringWrites(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	const writes = 50
	done := make(chan struct{})
	var wg sync.WaitGroup
	readErrs := make([]error, 4)
	for r := range readErrs {
		wg.Go(func() {
			// The writer only adds, so a reader must never see fewer rows
			// than it saw before.
			seen := 0
			for {
				select {
				case <-done:
					return
				default:
				}
				list, err := f.st.ToolOverrides(ctx)
				if err != nil {
					readErrs[r] = err
					return
				}
				if len(list) < seen {
					readErrs[r] = fmt.Errorf("reader saw %d overrides after %d", len(list), seen)
					return
				}
				seen = len(list)
			}
		})
	}
	var werr error
	for i := range writes {
		if _, werr = f.st.SetToolOverride(ctx, store.SetToolOverrideParams{Name: fmt.Sprintf("t%03d", i), UpdatedBy: "w"}); werr != nil {
			break
		}
		// A write is visible to the read pool as soon as it returns.
		list, err := f.st.ToolOverrides(ctx)
		if err != nil || len(list) != i+1 {
			werr = fmt.Errorf("read after write %d: %d overrides, %v", i+1, len(list), err)
			break
		}
	}
	close(done)
	wg.Wait()
	if werr != nil {
		t.Fatalf("writer: %v", werr)
	}
	if err := errors.Join(readErrs...); err != nil {
		t.Fatalf("readers: %v", err)
	}
	list, err := f.st.ToolOverrides(ctx)
	if err != nil || len(list) != writes {
		t.Fatalf("after the writes: %d overrides, %v; want %d", len(list), err, writes)
	}
}

func testTwoStores(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	// A second store on the same database stands for a second process.
	other := open(t, f.dsn, store.OpenParams{})
	stores := []store.Store{f.st, other}
	const n = 20
	err := runAll(n, func(i int) error {
		st := stores[i%2]
		_, err := st.SetToolOverride(ctx, store.SetToolOverrideParams{Name: fmt.Sprintf("p%d_%02d", i%2, i), UpdatedBy: "w"})
		if err != nil {
			return err
		}
		_, err = st.SetSetting(ctx, store.SetSettingParams{Key: "shared", Value: fmt.Sprint(i)})
		return err
	})
	if err != nil {
		t.Fatalf("writers in two stores failed: %v", err)
	}
	for i, st := range stores {
		list, err := st.ToolOverrides(ctx)
		if err != nil || len(list) != n {
			t.Errorf("store %d sees %d overrides, %v; want all %d from both", i, len(list), err, n)
		}
	}
	a, errA := f.st.Setting(ctx, "shared")
	b, errB := other.Setting(ctx, "shared")
	if errA != nil || errB != nil || a != b {
		t.Errorf("the two stores disagree on the last write: %q (%v) vs %q (%v)", a, errA, b, errB)
	}
}

func testConcurrentOpen(t *testing.T, h harness) {
	dsn := h.newDSN(t)
	const n = 3
	stores := make([]store.Store, n)
	err := runAll(n, func(i int) error {
		st, err := store.Open(t.Context(), dsn, store.OpenParams{})
		stores[i] = st
		return err
	})
	for _, st := range stores {
		if st != nil {
			t.Cleanup(func() { _ = st.Close() })
		}
	}
	if err != nil {
		t.Fatalf("opening a new database %d times at once: %v", n, err)
	}
	var versions []int64
	for _, st := range stores {
		v, err := st.SchemaVersion(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		versions = append(versions, v)
	}
	if versions[0] < 1 || slices.ContainsFunc(versions, func(v int64) bool { return v != versions[0] }) {
		t.Errorf("schema versions after concurrent opens = %v, want one version ≥ 1", versions)
	}
}

// ---- lifecycle ----

func testPingAndClose(t *testing.T, h harness) {
	dsn := h.newDSN(t)
	st, err := store.Open(t.Context(), dsn, store.OpenParams{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Ping(t.Context()); err != nil {
		t.Errorf("Ping on an open store: %v", err)
	}
	v, err := st.SchemaVersion(t.Context())
	if err != nil || v < 1 {
		t.Errorf("SchemaVersion = %d, %v; want ≥ 1", v, err)
	}
	if err := st.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := st.Ping(t.Context()); err == nil {
		t.Error("Ping after Close succeeded")
	}
}

func testCanceledContext(t *testing.T, h harness) {
	f := h.setup(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := f.st.SetSetting(ctx, store.SetSettingParams{Key: "k", Value: "v"}); !errors.Is(err, context.Canceled) {
		t.Errorf("SetSetting with a canceled context: err = %v, want context.Canceled", err)
	}
	if _, err := f.st.SetSettings(ctx, []store.SetSettingParams{{Key: "k", Value: "v"}}); !errors.Is(err, context.Canceled) {
		t.Errorf("SetSettings with a canceled context: err = %v, want context.Canceled", err)
	}
	if _, err := f.st.ToolOverrides(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("ToolOverrides with a canceled context: err = %v, want context.Canceled", err)
	}
	if err := f.st.Ping(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Ping with a canceled context: err = %v, want context.Canceled", err)
	}
	wantNoSetting(t, f.st, "k")
}

func testReopen(t *testing.T, h harness) {
	dsn := h.newDSN(t)
	c := newClock()
	var logs logtest.Buffer
	p := store.OpenParams{Now: c.Now, Logger: slog.New(slog.NewTextHandler(&logs, nil))}

	st, err := store.Open(t.Context(), dsn, p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "store migration applied") {
		t.Errorf("first Open logged no migration:\n%s", logs.String())
	}
	first, err := st.SchemaVersion(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	o, err := st.SetToolOverride(t.Context(), store.SetToolOverrideParams{Name: "kept", UpdatedBy: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetToolGroupOverride(t.Context(), store.SetToolGroupOverrideParams{Group: "files", Enabled: true, UpdatedBy: "admin"}); err != nil {
		t.Fatal(err)
	}
	setSetting(t, st, "kept", "yes")
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	logs.Reset()
	st = open(t, dsn, p)
	if strings.Contains(logs.String(), "store migration applied") {
		t.Errorf("reopening applied migrations again:\n%s", logs.String())
	}
	if v, err := st.SchemaVersion(t.Context()); err != nil || v != first {
		t.Errorf("SchemaVersion after reopen = %d, %v; want %d", v, err, first)
	}
	tools, err := st.ToolOverrides(t.Context())
	if err != nil || len(tools) != 1 || tools[0].Name != o.Name || !tools[0].UpdatedAt.Equal(o.UpdatedAt) {
		t.Errorf("after reopen tool overrides = %+v, %v; want [%+v]", tools, err, o)
	}
	groups, err := st.ToolGroupOverrides(t.Context())
	if err != nil || len(groups) != 1 || !groups[0].Enabled {
		t.Errorf("after reopen group overrides = %+v, %v", groups, err)
	}
	wantSetting(t, st, "kept", "yes")
}

// testToolPolicy: one read holds exactly the tool overrides, the group
// overrides (each ordered as their own lists) and the one setting asked
// for, and says when that setting is unset.
func testToolPolicy(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	const key = "tools.data_class_enforcement"
	p, err := f.st.ToolPolicy(ctx, key)
	if err != nil {
		t.Fatalf("ToolPolicy: %v", err)
	}
	if p.Tools == nil || p.Groups == nil || len(p.Tools)+len(p.Groups) != 0 || p.SettingSet || p.Setting != "" {
		t.Fatalf("policy of a new store = %#v", p)
	}
	for _, n := range []string{"b_tool", "a_tool", "Z_tool", "ä_tool"} {
		mustSet(t, toolKind(), f.st, n, n != "a_tool", "admin")
	}
	for _, n := range []string{"content", "mcp_docs"} {
		mustSet(t, groupKind(), f.st, n, n == "content", "admin")
	}
	for k, v := range map[string]string{key: "observe ", "other.setting": "x", "tools.data_class": "y"} {
		if _, err := f.st.SetSetting(ctx, store.SetSettingParams{Key: k, Value: v}); err != nil {
			t.Fatal(err)
		}
	}
	p, err = f.st.ToolPolicy(ctx, key)
	if err != nil {
		t.Fatalf("ToolPolicy: %v", err)
	}
	tools, err := f.st.ToolOverrides(ctx)
	if err != nil {
		t.Fatal(err)
	}
	groups, err := f.st.ToolGroupOverrides(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.Tools, tools) || !reflect.DeepEqual(p.Groups, groups) {
		t.Errorf("policy overrides\n tools %+v\ngroups %+v\nwant\n tools %+v\ngroups %+v", p.Tools, p.Groups, tools, groups)
	}
	if !p.SettingSet || p.Setting != "observe " {
		t.Errorf("policy setting = %q (set %v), want %q kept as stored", p.Setting, p.SettingSet, "observe ")
	}
	if p, err := f.st.ToolPolicy(ctx, "never.set"); err != nil || p.SettingSet || len(p.Tools) != 4 {
		t.Errorf("policy with an unset setting: %+v, %v", p, err)
	}
	if _, err := f.st.ToolPolicy(ctx, ""); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("ToolPolicy(\"\"): %v, want ErrInvalid", err)
	}
}
