package gate_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
)

func TestGovernanceEventFields(t *testing.T) {
	t.Parallel()
	before := time.Now().Add(-time.Minute)
	e := newEnv(t, envParams{builtins: []tool.Tool{
		newTool("get_diag", func(s *tool.Spec) { s.DataClass = tool.SystemDiagnostics }),
	}})
	cfg := gate.Config{Name: "support-eu", TrustZone: tool.ZoneExternalEU}
	for _, mode := range []gate.Enforcement{gate.Enforce, gate.Observe} {
		e.setEnforcement(mode)
		if _, err := e.gate.Decide(t.Context(), gate.DecideParams{Tool: "get_diag", Actor: editor(), Config: cfg, RunID: "run-9"}); err != nil {
			t.Fatal(err)
		}
	}
	evs := e.events() // newest first
	if len(evs) != 2 {
		t.Fatalf("%d events, want 2", len(evs))
	}
	for i, kind := range []string{gate.EventToolObserved, gate.EventToolDenied} {
		got := evs[i]
		want := store.GovernanceEvent{
			ID: got.ID, Kind: kind, Tool: "get_diag", Reason: "trust_zone", Zone: "externalEu",
			Ceiling: "internalConfiguration", DataClass: "systemDiagnostics", ActorUsername: "editor",
			ActorUID: 7, Configuration: "support-eu", RunID: "run-9", CreatedAt: got.CreatedAt,
		}
		if got != want {
			t.Errorf("event %d = %+v, want %+v", i, got, want)
		}
		if got.CreatedAt.Before(before) || got.CreatedAt.After(time.Now().Add(time.Minute)) {
			t.Errorf("event %d CreatedAt = %v, want about now", i, got.CreatedAt)
		}
	}
	logs := e.logs.String()
	if !strings.Contains(logs, `level=DEBUG msg="tools denied" tools="get_diag: trust_zone (systemDiagnostics)" count=1 zone=externalEu`) ||
		!strings.Contains(logs, `level=WARN msg="tool allowed only because enforcement is observe" tool=get_diag`) {
		t.Errorf("log lacks the decisions:\n%s", logs)
	}
}

// TestGovernanceEventsHoldNoArguments calls tools in every way that
// records an event, with a distinctive argument value, then looks for that
// value in every column of every table and in the raw database files.
func TestGovernanceEventsHoldNoArguments(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	const canary = "zebra-canary-7Q4v"
	e := newEnv(t, envParams{builtins: []tool.Tool{
		newTool("diag", func(s *tool.Spec) { s.DataClass = tool.SystemDiagnostics }),
		newTool("admin_only", func(s *tool.Spec) { s.AdminOnly = true }),
		newTool("plain"),
		newTool("other"),
	}})
	args := json.RawMessage(fmt.Sprintf(`{"q":%q}`, canary))
	offered, err := e.gate.Offer(ctx, gate.OfferParams{Requested: []string{"other"}, Actor: editor(), Config: gate.Config{TrustZone: tool.ZoneLocal}})
	if err != nil {
		t.Fatal(err)
	}
	calls := []struct {
		gate.InvokeParams
		mode gate.Enforcement
	}{
		{gate.InvokeParams{Name: "diag"}, gate.Enforce},                                                       // trust_zone
		{gate.InvokeParams{Name: "diag"}, gate.Observe},                                                       // observed only, then runs
		{gate.InvokeParams{Name: "admin_only"}, gate.Enforce},                                                 // requires_admin
		{gate.InvokeParams{Name: "no_such_tool"}, gate.Enforce},                                               // not_registered
		{gate.InvokeParams{Name: "plain", Offered: offered}, gate.Enforce},                                    // not_offered
		{gate.InvokeParams{Name: "plain", Config: gate.Config{AllowedGroups: []string{"rag"}}}, gate.Enforce}, // configuration_group
	}
	for i, c := range calls {
		e.setEnforcement(c.mode)
		p := c.InvokeParams
		p.Args = args
		p.Call = tool.Call{Actor: editor(), RunID: "run-canary", CallID: fmt.Sprint("call_", i)}
		if p.Config == nil {
			p.Config = gate.Config{Name: "cfg", TrustZone: tool.ZoneExternalGlobal}
		}
		e.gate.Invoke(ctx, p)
	}
	evs := e.events()
	reasons := map[string]bool{}
	for _, ev := range evs {
		reasons[ev.Reason] = true
	}
	for _, r := range []gate.Reason{gate.ReasonTrustZone, gate.ReasonRequiresAdmin, gate.ReasonNotRegistered, gate.ReasonNotOffered, gate.ReasonConfigurationGroup} {
		if !reasons[string(r)] {
			t.Errorf("no event with reason %s among %+v", r, evs)
		}
	}

	// Every column of every table.
	raw, err := sql.Open("sqlite", "file:"+e.path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	tables := queryStrings(t, raw, `SELECT name FROM sqlite_master WHERE type = 'table'`)
	if len(tables) < 4 {
		t.Fatalf("found only tables %q", tables)
	}
	cells := 0
	for _, table := range tables {
		rows, err := raw.QueryContext(ctx, `SELECT * FROM "`+table+`"`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				cells++
				if b, ok := v.([]byte); ok {
					v = string(b)
				}
				if strings.Contains(fmt.Sprint(v), canary) {
					t.Errorf("%s.%s holds an argument value: %v", table, cols[i], v)
				}
			}
		}
		_ = rows.Close()
	}
	if cells == 0 {
		t.Fatal("no stored cell was looked at")
	}
	// The raw files, in case something is stored outside a table row.
	for _, f := range []string{e.path, e.path + "-wal"} {
		b, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(canary)) {
			t.Errorf("%s contains an argument value", f)
		}
	}
	if strings.Contains(e.logs.String(), canary) {
		t.Errorf("the log holds an argument value:\n%s", e.logs.String())
	}
}

func queryStrings(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// TestObserveNeedsItsRecord: when governance events cannot be stored, an
// observed-only decision becomes a denial and the failure is logged.
func TestObserveNeedsItsRecord(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	diag := newTool("diag", func(s *tool.Spec) { s.DataClass = tool.SystemDiagnostics })
	e := newEnv(t, envParams{builtins: []tool.Tool{diag, newTool("plain")}})
	e.dropGovernanceEvents()
	cfg := gate.Config{TrustZone: tool.ZoneExternalGlobal}
	e.setEnforcement(gate.Observe)
	d, err := e.gate.Decide(ctx, gate.DecideParams{Tool: "diag", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if d.Allowed || d.ObservedOnly || d.Reason != gate.ReasonTrustZone {
		t.Errorf("observed decision without a record = %+v, want denied", d)
	}
	o, err := e.gate.Offer(ctx, gate.OfferParams{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if o.Has("diag") || !o.Has("plain") {
		t.Errorf("offered %q; want plain only", o.Names())
	}
	res := e.gate.Invoke(ctx, gate.InvokeParams{Name: "diag", Config: cfg})
	if !res.IsError || diag.calls.Load() != 0 {
		t.Errorf("observed call without a record ran: %+v", res)
	}
	if !strings.Contains(e.logs.String(), "cannot store governance events; observed-only tools are denied instead") {
		t.Errorf("the failure is not logged:\n%s", e.logs.String())
	}
}

// TestRecordUnapproved: a write_unapproved event carries who, what and
// why like the gate's own; a store that cannot keep it says so.
func TestRecordUnapproved(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	e := newEnv(t, envParams{builtins: []tool.Tool{newTool("notify", func(s *tool.Spec) { s.RequiresApproval = true })}})
	cfg := gate.Config{Name: "support-eu", TrustZone: tool.ZoneExternalEU}
	for _, name := range []string{"notify", "vanished\x00tool"} {
		if err := e.gate.RecordUnapproved(ctx, gate.UnapprovedParams{Tool: name, Actor: editor(), Config: cfg, RunID: "run-7"}); err != nil {
			t.Fatal(err)
		}
	}
	evs := e.events() // newest first
	if len(evs) != 2 {
		t.Fatalf("%d events, want 2", len(evs))
	}
	want := store.GovernanceEvent{
		ID: evs[1].ID, Kind: gate.EventWriteUnapproved, Tool: "notify", Reason: string(gate.ReasonWriteUnapproved), Zone: "externalEu",
		Ceiling: "internalConfiguration", DataClass: "editorContent", ActorUsername: "editor",
		ActorUID: 7, Configuration: "support-eu", RunID: "run-7", CreatedAt: evs[1].CreatedAt,
	}
	if evs[1] != want {
		t.Errorf("event = %+v, want %+v", evs[1], want)
	}
	// An unknown name is stored as the strictest class, made storable.
	if evs[0].Tool != "vanished\uFFFDtool" || evs[0].DataClass != "secretAdjacent" {
		t.Errorf("event of an unknown tool = %+v", evs[0])
	}
	if !strings.Contains(e.logs.String(), `level=WARN msg="approval-bound call refused: its turn was never approved" tool=notify reason=write_unapproved`) {
		t.Errorf("log lacks the event:\n%s", e.logs.String())
	}
	e.dropGovernanceEvents()
	if err := e.gate.RecordUnapproved(ctx, gate.UnapprovedParams{Tool: "notify", Actor: editor(), Config: cfg, RunID: "run-7"}); err == nil {
		t.Error("a lost write_unapproved event was not reported")
	}
}

// TestOfferLogsDenialsOnce: an offer that denies several tools stores an
// event for each and logs them in one line, while every observed-only
// tool keeps a warning of its own.
func TestOfferLogsDenialsOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envParams{builtins: []tool.Tool{
		newTool("admin_a", func(s *tool.Spec) { s.AdminOnly = true }),
		newTool("admin_b", func(s *tool.Spec) { s.AdminOnly = true }),
		newTool("diag_a", func(s *tool.Spec) { s.DataClass = tool.SystemDiagnostics }),
		newTool("diag_b", func(s *tool.Spec) { s.DataClass = tool.SystemDiagnostics }),
		newTool("plain"),
	}})
	e.setEnforcement(gate.Observe)
	o, err := e.gate.Offer(t.Context(), gate.OfferParams{Actor: editor(), Config: gate.Config{Name: "eu", TrustZone: tool.ZoneExternalEU}, RunID: "run-3"})
	if err != nil {
		t.Fatal(err)
	}
	if got := o.Names(); !slices.Equal(got, []string{"diag_a", "diag_b", "plain"}) {
		t.Errorf("offered %q", got)
	}
	if n := len(e.events()); n != 4 {
		t.Errorf("%d events, want 4 (two denied, two observed)", n)
	}
	logs := e.logs.String()
	if n := strings.Count(logs, `msg="tools denied"`); n != 1 ||
		!strings.Contains(logs, `tools="admin_a: requires_admin (editorContent); admin_b: requires_admin (editorContent)" count=2`) {
		t.Errorf("want one line listing both denials:\n%s", logs)
	}
	if n := strings.Count(logs, `msg="tool allowed only because enforcement is observe"`); n != 2 {
		t.Errorf("%d observe warnings, want one per tool:\n%s", n, logs)
	}
}

// TestOnDenied: every recorded denial is reported once with its stage and
// reason; allowed and observed-only decisions are not, unless the record
// of an observed-only one cannot be stored and it becomes a denial.
func TestOnDenied(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	var mu sync.Mutex
	var got []string
	diag := newTool("diag", func(s *tool.Spec) { s.DataClass = tool.SystemDiagnostics })
	e := newEnv(t, envParams{
		builtins: []tool.Tool{diag, newTool("plain"), newTool("admin_only", func(s *tool.Spec) { s.AdminOnly = true })},
		denied: func(_ context.Context, d gate.Denial) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, fmt.Sprintf("%s:%s:%s", d.Stage, d.Reason, d.Tool))
		},
	})
	take := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := got
		got = nil
		return out
	}
	eu := gate.Config{Name: "eu", TrustZone: tool.ZoneExternalEU}
	o, err := e.gate.Offer(ctx, gate.OfferParams{Actor: editor(), Config: eu})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.gate.Decide(ctx, gate.DecideParams{Tool: "missing", Actor: editor(), Config: eu}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.gate.Decide(ctx, gate.DecideParams{Tool: "plain", Actor: editor(), Config: eu}); err != nil {
		t.Fatal(err)
	}
	e.gate.Invoke(ctx, gate.InvokeParams{Name: "plain", Config: eu, Offered: o, Call: tool.Call{Actor: editor()}})
	e.gate.Invoke(ctx, gate.InvokeParams{Name: "admin_only", Config: eu, Offered: o, Call: tool.Call{Actor: editor()}})
	if err := e.gate.RecordUnapproved(ctx, gate.UnapprovedParams{Tool: "plain", Actor: editor(), Config: eu}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"offer:requires_admin:admin_only", "offer:trust_zone:diag",
		"decide:not_registered:missing",
		"call:requires_admin:admin_only",
		"call:write_unapproved:plain",
	}
	if g := take(); !slices.Equal(g, want) {
		t.Errorf("denials = %q, want %q", g, want)
	}

	e.setEnforcement(gate.Observe)
	if _, err := e.gate.Decide(ctx, gate.DecideParams{Tool: "diag", Config: eu}); err != nil {
		t.Fatal(err)
	}
	if g := take(); len(g) != 0 {
		t.Errorf("an observed-only decision was reported as a denial: %q", g)
	}
	e.dropGovernanceEvents()
	if _, err := e.gate.Decide(ctx, gate.DecideParams{Tool: "diag", Config: eu}); err != nil {
		t.Fatal(err)
	}
	if g := take(); !slices.Equal(g, []string{"decide:trust_zone:diag"}) {
		t.Errorf("an observed-only decision without its record = %q, want a trust_zone denial", g)
	}
}

// dropGovernanceEvents drops the events' table behind the store's back,
// so that recording an event fails.
func (e *env) dropGovernanceEvents() {
	e.t.Helper()
	raw, err := sql.Open("sqlite", "file:"+e.path)
	if err != nil {
		e.t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.ExecContext(context.Background(), `DROP TABLE governance_events`); err != nil {
		e.t.Fatal(err)
	}
}
