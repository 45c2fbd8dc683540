package gate_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/logtest"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func admin() *typo3.BackendUser  { return &typo3.BackendUser{UID: 1, Username: "admin", Admin: true} }
func editor() *typo3.BackendUser { return &typo3.BackendUser{UID: 7, Username: "editor"} }

// testTool is a small real tool whose behaviour a test chooses. It counts
// its executions so a test can prove a refused call never ran.
type testTool struct {
	spec  tool.Spec
	run   func(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error)
	calls atomic.Int64
}

func (t *testTool) Spec() tool.Spec { return t.spec }

func (t *testTool) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	t.calls.Add(1)
	if t.run == nil {
		return tool.Text("ok"), nil
	}
	return t.run(ctx, call, args)
}

// newTool makes a read-only, enabled content tool; mut adjusts its spec.
func newTool(name string, mut ...func(*tool.Spec)) *testTool {
	s := tool.Spec{
		Name:             name,
		Description:      "A test tool. Returns ok.",
		InputSchema:      json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`),
		Group:            tool.GroupContent,
		Effect:           tool.ReadOnly,
		DataClass:        tool.EditorContent,
		EnabledByDefault: true,
	}
	for _, m := range mut {
		m(&s)
	}
	return &testTool{spec: s}
}

// env is one gate over a real SQLite store file.
type env struct {
	t    testing.TB
	gate *gate.Gate
	st   store.Store
	path string // the SQLite file
	logs *logtest.Buffer
	reg  *tool.Registry
}

type envParams struct {
	builtins  []tool.Tool
	providers []tool.Provider
	wrap      func(store.Store) gate.Store // instrument the store
	finished  func(context.Context, gate.CallReport)
	denied    func(context.Context, gate.Denial)
}

func newEnv(t testing.TB, p envParams) *env {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t3agent.db")
	st, err := store.Open(context.Background(), "sqlite:"+path, store.OpenParams{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	reg, err := tool.NewRegistry(p.builtins, p.providers...)
	if err != nil {
		t.Fatal(err)
	}
	logs := &logtest.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	reg.SetLogger(logger)
	var gst gate.Store = st
	if p.wrap != nil {
		gst = p.wrap(st)
	}
	g, err := gate.New(gate.Params{Registry: reg, Store: gst, Logger: logger, OnCallFinished: p.finished, OnDenied: p.denied})
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, gate: g, st: st, path: path, logs: logs, reg: reg}
}

func (e *env) events() []store.GovernanceEvent {
	e.t.Helper()
	evs, err := e.st.GovernanceEvents(context.Background(), store.ListGovernanceEventsParams{Limit: store.MaxGovernanceEventLimit})
	if err != nil {
		e.t.Fatal(err)
	}
	return evs
}

func (e *env) setTool(name string, enabled bool) {
	e.t.Helper()
	if _, err := e.gate.Availability().SetTool(context.Background(), gate.SetToolParams{Name: name, Enabled: enabled, By: "admin"}); err != nil {
		e.t.Fatal(err)
	}
}

// setEnforcement stores the operator's enforcement mode as given.
func (e *env) setEnforcement(mode gate.Enforcement) {
	e.t.Helper()
	if _, err := e.st.SetSetting(context.Background(), store.SetSettingParams{Key: gate.EnforcementSetting, Value: string(mode)}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) setGroup(group string, enabled bool) {
	e.t.Helper()
	if _, err := e.gate.Availability().SetGroup(context.Background(), gate.SetGroupParams{Group: group, Enabled: enabled, By: "admin"}); err != nil {
		e.t.Fatal(err)
	}
}

// countingStore is the real store with the override reads counted, to
// prove how often the gate goes to the database.
type countingStore struct {
	store.Store
	toolReads, groupReads, bothReads, settingReads atomic.Int64
}

func (c *countingStore) ToolOverrides(ctx context.Context) ([]store.ToolOverride, error) {
	c.toolReads.Add(1)
	return c.Store.ToolOverrides(ctx)
}

func (c *countingStore) ToolGroupOverrides(ctx context.Context) ([]store.ToolGroupOverride, error) {
	c.groupReads.Add(1)
	return c.Store.ToolGroupOverrides(ctx)
}

// ToolPolicy counts the one query that reads both sets and the
// enforcement mode.
func (c *countingStore) ToolPolicy(ctx context.Context, settingKey string) (store.ToolPolicy, error) {
	c.bothReads.Add(1)
	return c.Store.ToolPolicy(ctx, settingKey)
}

// Setting counts reads of single settings, which the gate never needs.
func (c *countingStore) Setting(ctx context.Context, key string) (string, error) {
	c.settingReads.Add(1)
	return c.Store.Setting(ctx, key)
}

// loads counts the reads of the overrides, whichever way.
func (c *countingStore) loads() int64 { return c.toolReads.Load() + c.bothReads.Load() }
