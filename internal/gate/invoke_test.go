package gate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
)

// local is a configuration that lets every class through.
func local() gate.Config { return gate.Config{Name: "local", TrustZone: tool.ZoneLocal} }

func invoke(e *env, name, args string) tool.Result {
	e.t.Helper()
	return e.gate.Invoke(context.Background(), gate.InvokeParams{
		Name: name, Args: json.RawMessage(args), Config: local(),
		Call: tool.Call{Actor: admin(), RunID: "run-1", CallID: "call_1"},
	})
}

func wantError(t *testing.T, res tool.Result, content string) {
	t.Helper()
	if !res.IsError || res.Content != content || len(res.Artifacts) != 0 {
		t.Errorf("result = %+v, want the error %q", res, content)
	}
}

const searchSchema = `{
	"type": "object",
	"properties": {
		"table": {"type": "string"},
		"limit": {"type": "integer", "minimum": 1, "maximum": 100},
		"mode": {"enum": ["fast", "full"]},
		"filters": {"type": "array", "items": {
			"type": "object",
			"properties": {"column": {"type": "string"}, "value": {}},
			"required": ["column"],
			"additionalProperties": false
		}}
	},
	"required": ["table"],
	"additionalProperties": false
}`

func TestInvokeSchemaViolations(t *testing.T) {
	t.Parallel()
	search := newTool("search", func(s *tool.Spec) { s.InputSchema = json.RawMessage(searchSchema) })
	e := newEnv(t, envParams{builtins: []tool.Tool{search}})
	for _, c := range []struct{ args, want string }{
		{`{"limit":5}`, `Error: invalid arguments for tool "search": field "table" is required.`},
		{`{"table":"pages","limit":"5"}`, `Error: invalid arguments for tool "search": field "limit": got string, want integer.`},
		{`{"table":"pages","limit":2.5}`, `Error: invalid arguments for tool "search": field "limit": got number, want integer.`},
		{`{"table":"pages","bogus":1}`, `Error: invalid arguments for tool "search": field "bogus" is not allowed.`},
		{`{"table":"pages","filters":[{"column":3}]}`, `Error: invalid arguments for tool "search": field "filters.0.column": got number, want string.`},
		{`{"table":"pages","filters":[{"column":"uid"},{}]}`, `Error: invalid arguments for tool "search": field "filters.1.column" is required.`},
		{`{"table":"pages","filters":[{"column":"uid","op":"="}]}`, `Error: invalid arguments for tool "search": field "filters.0.op" is not allowed.`},
	} {
		wantError(t, invoke(e, "search", c.args), c.want)
	}
	// Keywords whose wording comes from the validator still name the field.
	for args, field := range map[string]string{
		`{"table":"pages","limit":500}`:   `field "limit": `,
		`{"table":"pages","limit":0}`:     `field "limit": `,
		`{"table":"pages","mode":"slow"}`: `field "mode": `,
		`{"table":1,"limit":"x"}`:         `field "`,
	} {
		res := invoke(e, "search", args)
		if !res.IsError || !strings.HasPrefix(res.Content, `Error: invalid arguments for tool "search": `+field) ||
			!strings.HasSuffix(res.Content, ".") || strings.Contains(res.Content, "\n") {
			t.Errorf("args %s: %q, want one sentence naming %s", args, res.Content, field)
		}
	}
	if n := search.calls.Load(); n != 0 {
		t.Errorf("the tool ran %d times on invalid arguments", n)
	}
	if res := invoke(e, "search", `{"table":"pages","limit":10,"filters":[{"column":"uid","value":[1,2]}]}`); res.IsError {
		t.Errorf("valid arguments refused: %q", res.Content)
	}
}

func TestInvokeArgumentsMustBeAnObject(t *testing.T) {
	t.Parallel()
	plain := newTool("plain", func(s *tool.Spec) {
		s.InputSchema = json.RawMessage(`{"type":"object"}`)
	})
	var got map[string]any
	plain.run = func(_ context.Context, _ tool.Call, args map[string]any) (tool.Result, error) {
		got = args
		return tool.Text("ok"), nil
	}
	e := newEnv(t, envParams{builtins: []tool.Tool{plain}})
	const prefix = `Error: the arguments for tool "plain" `
	for args, want := range map[string]string{
		`[]`:              "must be a JSON object, not an array.",
		`[{"a":1}]`:       "must be a JSON object, not an array.",
		`null`:            "must be a JSON object, not null.",
		`"{}"`:            "must be a JSON object, not a string.",
		`42`:              "must be a JSON object, not a number.",
		`true`:            "must be a JSON object, not a boolean.",
		`{`:               "are not valid JSON.",
		`{"a":1} {"b":2}`: "are not valid JSON.",
		`{'a':1}`:         "are not valid JSON.",
	} {
		wantError(t, invoke(e, "plain", args), prefix+want)
	}
	big := `{"a":"` + strings.Repeat("x", gate.MaxArgumentBytes) + `"}`
	wantError(t, invoke(e, "plain", big), fmt.Sprintf("%sare %d bytes, more than the %d allowed.", prefix, len(big), gate.MaxArgumentBytes))
	if n := plain.calls.Load(); n != 0 {
		t.Fatalf("the tool ran %d times on refused arguments", n)
	}
	// No arguments at all mean {}.
	for _, args := range []string{"", "  \n"} {
		if res := invoke(e, "plain", args); res.IsError || got == nil || len(got) != 0 {
			t.Errorf("args %q: %+v, tool got %v; want it to run with {}", args, res, got)
		}
	}
	// Numbers keep their precision.
	if res := invoke(e, "plain", `{"uid":12345678901234567890}`); res.IsError || got["uid"] != json.Number("12345678901234567890") {
		t.Errorf("uid arrived as %#v", got["uid"])
	}
}

func TestInvokeDenied(t *testing.T) {
	t.Parallel()
	secret := newTool("secret", func(s *tool.Spec) { s.AdminOnly = true })
	e := newEnv(t, envParams{builtins: []tool.Tool{secret}})
	res := e.gate.Invoke(t.Context(), gate.InvokeParams{Name: "secret", Args: json.RawMessage(`{}`), Config: local(), Call: tool.Call{Actor: editor()}})
	wantError(t, res, `Error: tool "secret" is not available.`)
	// An unknown tool reads the same, so the model learns nothing.
	wantError(t, invoke(e, "unknown_tool", `{}`), `Error: tool "unknown_tool" is not available.`)
	long := strings.Repeat("ä", 100) + "\x00\xff"
	res = invoke(e, long, `{}`)
	if !res.IsError || !utf8.ValidString(res.Content) || len(res.Content) > 120 || strings.Contains(res.Content, "\x00") {
		t.Errorf("a made-up name came back as %q", res.Content)
	}
	if n := secret.calls.Load(); n != 0 {
		t.Errorf("the denied tool ran %d times", n)
	}
	if n := len(e.events()); n != 3 {
		t.Errorf("%d events, want one per denied call", n)
	}
}

func TestInvokeWithOfferedSet(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	var cs *countingStore
	a, b := newTool("a_tool"), newTool("b_tool")
	e := newEnv(t, envParams{builtins: []tool.Tool{a, b}, wrap: func(st store.Store) gate.Store {
		cs = &countingStore{Store: st}
		return cs
	}})
	o, err := e.gate.Offer(ctx, gate.OfferParams{Requested: []string{"a_tool"}, Config: local()})
	if err != nil {
		t.Fatal(err)
	}
	loads := cs.loads()
	call := func(name string) tool.Result {
		return e.gate.Invoke(ctx, gate.InvokeParams{Name: name, Config: local(), Offered: o, Call: tool.Call{RunID: "r"}})
	}
	if res := call("a_tool"); res.IsError {
		t.Errorf("offered tool: %+v", res)
	}
	wantError(t, call("b_tool"), `Error: tool "b_tool" is not available.`)
	if b.calls.Load() != 0 {
		t.Error("a tool outside the offered set ran")
	}
	if cs.loads() != loads {
		t.Errorf("calls within an offered set read the overrides %d times; the offer's are reused", cs.loads()-loads)
	}
	evs := e.events()
	if len(evs) != 1 || evs[0].Reason != string(gate.ReasonNotOffered) || evs[0].Tool != "b_tool" {
		t.Errorf("events = %+v, want one not_offered", evs)
	}
	// Without an offered set each call decides afresh.
	e.gate.Invoke(ctx, gate.InvokeParams{Name: "b_tool", Config: local()})
	if cs.loads() != loads+1 {
		t.Errorf("a call without an offered set read the overrides %d times, want 1", cs.loads()-loads)
	}
}

func TestInvokePanic(t *testing.T) {
	t.Parallel()
	boom := newTool("boom")
	boom.run = func(context.Context, tool.Call, map[string]any) (tool.Result, error) {
		panic("kaboom: secret detail")
	}
	e := newEnv(t, envParams{builtins: []tool.Tool{boom}})
	wantError(t, invoke(e, "boom", `{}`), `Error: tool "boom" failed.`)
	logs := e.logs.String()
	for _, w := range []string{`msg="tool panicked" tool=boom call_id=call_1 run_id=run-1`, "kaboom: secret detail", "goroutine ", "invoke_test.go"} {
		if !strings.Contains(logs, w) {
			t.Errorf("log lacks %q:\n%s", w, logs)
		}
	}
}

func TestInvokeGoError(t *testing.T) {
	t.Parallel()
	broken := newTool("broken")
	broken.run = func(context.Context, tool.Call, map[string]any) (tool.Result, error) {
		return tool.Text("partial output"), errors.New("database is down at db.internal:3306")
	}
	e := newEnv(t, envParams{builtins: []tool.Tool{broken}})
	wantError(t, invoke(e, "broken", `{}`), `Error: tool "broken" failed.`)
	if !strings.Contains(e.logs.String(), `msg="tool failed" tool=broken`) || !strings.Contains(e.logs.String(), "database is down at db.internal:3306") {
		t.Errorf("the cause is not logged:\n%s", e.logs.String())
	}
	// A tool's own error result is an answer, passed on as it is.
	answer := newTool("answer")
	answer.run = func(context.Context, tool.Call, map[string]any) (tool.Result, error) {
		return tool.Errorf("No page with uid 4711."), nil
	}
	e = newEnv(t, envParams{builtins: []tool.Tool{answer}})
	wantError(t, invoke(e, "answer", `{}`), "No page with uid 4711.")
}

func TestInvokeDeadline(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	slow := newTool("slow")
	slow.run = func(ctx context.Context, _ tool.Call, _ map[string]any) (tool.Result, error) {
		<-ctx.Done()
		return tool.Result{}, ctx.Err()
	}
	deadline := newTool("deadline")
	deadline.run = func(ctx context.Context, _ tool.Call, _ map[string]any) (tool.Result, error) {
		d, ok := ctx.Deadline()
		if !ok {
			return tool.Errorf("no deadline"), nil
		}
		return tool.Text(time.Until(d).String()), nil
	}
	var mu sync.Mutex
	var reports []gate.CallReport
	e := newEnv(t, envParams{builtins: []tool.Tool{slow, deadline}, finished: func(_ context.Context, r gate.CallReport) {
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, r)
	}})

	res := e.gate.Invoke(ctx, gate.InvokeParams{Name: "slow", Config: local(), Timeout: 20 * time.Millisecond})
	wantError(t, res, `Error: tool "slow" did not finish within 20ms.`)
	if !strings.Contains(e.logs.String(), `msg="tool call timed out" tool=slow`) {
		t.Errorf("the timeout is not logged:\n%s", e.logs.String())
	}

	// The default deadline is 30 s.
	res = invoke(e, "deadline", `{}`)
	left, err := time.ParseDuration(res.Content)
	if err != nil || left <= 25*time.Second || left > gate.DefaultTimeout {
		t.Errorf("time left under the default deadline = %q, want just under %v", res.Content, gate.DefaultTimeout)
	}

	// The caller ending its context stops the tool too.
	cctx, cancel := context.WithCancel(ctx)
	started := make(chan struct{})
	waiting := newTool("waiting")
	waiting.run = func(ctx context.Context, _ tool.Call, _ map[string]any) (tool.Result, error) {
		close(started)
		<-ctx.Done()
		return tool.Result{}, ctx.Err()
	}
	e2 := newEnv(t, envParams{builtins: []tool.Tool{waiting}})
	go func() {
		<-started
		cancel()
	}()
	res = e2.gate.Invoke(cctx, gate.InvokeParams{Name: "waiting", Config: local()})
	wantError(t, res, `Error: tool "waiting" was stopped before it finished.`)

	mu.Lock()
	defer mu.Unlock()
	if len(reports) != 2 || reports[0].Outcome != gate.OutcomeTimeout || !reports[0].IsError || reports[0].Duration < 20*time.Millisecond ||
		reports[1].Outcome != gate.OutcomeOK || reports[1].Tool != "deadline" || reports[1].CallID != "call_1" || reports[1].RunID != "run-1" {
		t.Errorf("reports = %+v", reports)
	}
}

func TestInvokeOutcomes(t *testing.T) {
	t.Parallel()
	mk := func(name string, run func() (tool.Result, error)) *testTool {
		tt := newTool(name)
		tt.run = func(context.Context, tool.Call, map[string]any) (tool.Result, error) { return run() }
		return tt
	}
	var mu sync.Mutex
	var got []string
	e := newEnv(t, envParams{
		builtins: []tool.Tool{
			mk("ok", func() (tool.Result, error) { return tool.Text("fine"), nil }),
			mk("answer", func() (tool.Result, error) { return tool.Errorf("no"), nil }),
			mk("fails", func() (tool.Result, error) { return tool.Result{}, errors.New("x") }),
			mk("panics", func() (tool.Result, error) { panic("p") }),
			newTool("admin", func(s *tool.Spec) { s.AdminOnly = true }),
		},
		finished: func(_ context.Context, r gate.CallReport) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, fmt.Sprintf("%s:%s:%v:%v", r.Tool, r.Outcome, r.IsError, r.Registered))
		},
	})
	for _, n := range []string{"ok", "answer", "fails", "panics"} {
		invoke(e, n, `{}`)
	}
	invoke(e, "ok", `[]`)
	e.gate.Invoke(t.Context(), gate.InvokeParams{Name: "admin", Config: local(), Call: tool.Call{Actor: editor()}})
	invoke(e, "no_such_tool", `{}`)
	want := []string{
		"ok:ok:false:true", "answer:tool_error:true:true", "fails:failed:true:true", "panics:panic:true:true",
		"ok:invalid_arguments:true:true", "admin:denied:true:true", "no_such_tool:denied:true:false",
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(got, want) {
		t.Errorf("reports = %q, want %q", got, want)
	}
}

func TestInvokeContentCap(t *testing.T) {
	t.Parallel()
	var content string
	var mu sync.Mutex
	out := newTool("out")
	out.run = func(context.Context, tool.Call, map[string]any) (tool.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		return tool.Text(content), nil
	}
	e := newEnv(t, envParams{builtins: []tool.Tool{out}})
	const marker = "…[tool result truncated at 50000 bytes]"
	if !strings.Contains(marker, fmt.Sprint(gate.MaxContentBytes)) {
		t.Fatalf("the marker does not name the cap %d", gate.MaxContentBytes)
	}
	a := func(n int) string { return strings.Repeat("a", n) }
	for _, c := range []struct {
		name, in, want string
	}{
		{"exactly the cap", a(50000), a(50000)},
		{"one byte over", a(50001), a(50000) + marker},
		{"2-byte rune across the cap", a(49999) + "é" + "tail", a(49999) + marker},
		{"2-byte rune ending at the cap", a(49998) + "é" + "b", a(49998) + "é" + marker},
		{"3-byte rune across the cap", a(49998) + "€" + "tail", a(49998) + marker},
		{"4-byte rune across the cap", a(49997) + "🚀" + "tail", a(49997) + marker},
		{"4-byte runes only", strings.Repeat("🚀", 20000), strings.Repeat("🚀", 12500) + marker},
		{"invalid UTF-8", "ok \xff\xfe end \xc3", "ok \uFFFD end \uFFFD"},
		{"invalid UTF-8 over the cap", a(49999) + "\xff" + a(10), a(49999) + marker},
		{"empty", "", ""},
	} {
		mu.Lock()
		content = c.in
		mu.Unlock()
		res := invoke(e, "out", `{}`)
		if res.IsError || res.Content != c.want {
			t.Errorf("%s: got %d bytes ending %q, want %d bytes ending %q", c.name,
				len(res.Content), tail(res.Content), len(c.want), tail(c.want))
		}
		if !utf8.ValidString(res.Content) {
			t.Errorf("%s: result is not valid UTF-8", c.name)
		}
	}
}

func tail(s string) string {
	if len(s) > 60 {
		return s[len(s)-60:]
	}
	return s
}

func TestInvokeArtifacts(t *testing.T) {
	t.Parallel()
	var result tool.Result
	var mu sync.Mutex
	out := newTool("out")
	out.run = func(context.Context, tool.Call, map[string]any) (tool.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		return result, nil
	}
	e := newEnv(t, envParams{builtins: []tool.Tool{out}})
	run := func(r tool.Result) tool.Result {
		mu.Lock()
		result = r
		mu.Unlock()
		return invoke(e, "out", `{}`)
	}
	table := func(cols, rows int, cell string) tool.Artifact {
		a := tool.Artifact{Kind: tool.ArtifactTable, Title: "t"}
		for c := range cols {
			a.Columns = append(a.Columns, fmt.Sprint("c", c))
		}
		for range rows {
			row := make([]string, cols)
			for c := range row {
				row[c] = cell
			}
			a.Rows = append(a.Rows, row)
		}
		return a
	}

	// Within bounds: kept, coerced to UTF-8, stray fields dropped.
	res := run(tool.Text("two artifacts",
		tool.Artifact{Kind: tool.ArtifactTable, Title: "Pages", Columns: []string{"uid", "title"}, Rows: [][]string{{"1", "Home"}, {"2", "Ab\xffout"}}, Text: "stray"},
		tool.Artifact{Kind: tool.ArtifactText, Title: "Note", Text: "fine", Columns: []string{"stray"}},
	))
	want := []tool.Artifact{
		{Kind: tool.ArtifactTable, Title: "Pages", Columns: []string{"uid", "title"}, Rows: [][]string{{"1", "Home"}, {"2", "Ab\uFFFDout"}}},
		{Kind: tool.ArtifactText, Title: "Note", Text: "fine"},
	}
	if !reflect.DeepEqual(res.Artifacts, want) || res.Content != "two artifacts" {
		t.Errorf("artifacts = %+v, want %+v", res.Artifacts, want)
	}

	many := make([]tool.Artifact, gate.MaxArtifacts+1)
	for i := range many {
		many[i] = tool.Artifact{Kind: tool.ArtifactText, Text: "x"}
	}
	ragged := table(2, 2, "v")
	ragged.Rows[1] = []string{"only one"}
	for _, c := range []struct {
		name string
		arts []tool.Artifact
		why  string
	}{
		{"too many", many, "17 artifacts, more than the 16 allowed"},
		{"too many rows", []tool.Artifact{table(1, gate.MaxArtifactRows+1, "v")}, "1001 rows, more than the 1000 allowed"},
		{"too many columns", []tool.Artifact{table(gate.MaxArtifactColumns+1, 1, "v")}, "65 columns, more than the 64 allowed"},
		{"ragged", []tool.Artifact{ragged}, "row 2 of table 1 has 1 cells for 2 columns"},
		{"unknown kind", []tool.Artifact{{Kind: "chart"}}, `artifact 1 has the unknown kind "chart"`},
		{"too large", []tool.Artifact{table(2, 500, strings.Repeat("x", 60))}, "bytes as JSON, more than the 50000 allowed"},
	} {
		res := run(tool.Text("content stays", c.arts...))
		if res.Content != "content stays" || len(res.Artifacts) != 1 {
			t.Errorf("%s: %+v", c.name, res)
			continue
		}
		a := res.Artifacts[0]
		if a.Kind != tool.ArtifactText || !strings.HasPrefix(a.Text, "Artifacts omitted: ") || !strings.Contains(a.Text, c.why) || a.Rows != nil {
			t.Errorf("%s: artifact = %+v, want one text artifact saying %q", c.name, a, c.why)
		}
	}
	// Just under the limits passes.
	res = run(tool.Text("ok", table(gate.MaxArtifactColumns, 1, "v"), table(1, gate.MaxArtifactRows, "v")))
	if len(res.Artifacts) != 2 || res.Artifacts[1].Kind != tool.ArtifactTable {
		t.Errorf("artifacts at the limits were replaced: %+v", res.Artifacts[0])
	}
	// Error results carry no artifacts.
	res = run(tool.Result{Content: "failed", IsError: true, Artifacts: []tool.Artifact{{Kind: tool.ArtifactText, Text: "x"}}})
	if !res.IsError || len(res.Artifacts) != 0 {
		t.Errorf("error result = %+v, want no artifacts", res)
	}
}

// TestRebuildKnowsEveryField fails when tool.Result or tool.Artifact gains
// a field: Invoke rebuilds results field by field (bound.go), and a new
// field would be silently dropped until the rebuild learns it. Update
// bound and then this list.
func TestRebuildKnowsEveryField(t *testing.T) {
	t.Parallel()
	fields := func(v any) []string {
		var out []string
		for f := range reflect.TypeOf(v).Fields() {
			out = append(out, f.Name)
		}
		return out
	}
	if got := fields(tool.Result{}); !slices.Equal(got, []string{"Content", "IsError", "Artifacts", "Question"}) {
		t.Errorf("tool.Result has fields %q; teach gate's bound() the new ones", got)
	}
	if got := fields(tool.Artifact{}); !slices.Equal(got, []string{"Kind", "Title", "Columns", "Rows", "Text"}) {
		t.Errorf("tool.Artifact has fields %q; teach gate's rebuildArtifacts() the new ones", got)
	}
}

func TestInvokeProviderToolWithBrokenSchema(t *testing.T) {
	t.Parallel()
	broken := newTool("mcp_x_broken", func(s *tool.Spec) {
		s.InputSchema = json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}`)
	})
	e := newEnv(t, envParams{providers: []tool.Provider{provider{broken}}})
	wantError(t, invoke(e, "mcp_x_broken", `{"a":1}`), `Error: tool "mcp_x_broken" failed.`)
	if broken.calls.Load() != 0 {
		t.Error("a tool whose schema does not compile ran")
	}
	if !strings.Contains(e.logs.String(), "input schema does not compile") {
		t.Errorf("not logged:\n%s", e.logs.String())
	}
}

// provider is a fixed catalogue of tools.
type provider []tool.Tool

func (p provider) Tools(context.Context) ([]tool.Tool, error) { return p, nil }

func TestInvokePassesTheCall(t *testing.T) {
	t.Parallel()
	var got tool.Call
	who := newTool("who")
	who.run = func(_ context.Context, call tool.Call, _ map[string]any) (tool.Result, error) {
		got = call
		return tool.Text("ok"), nil
	}
	e := newEnv(t, envParams{builtins: []tool.Tool{who}})
	invoke(e, "who", `{}`)
	if got.Actor == nil || got.Actor.Username != "admin" || got.RunID != "run-1" || got.CallID != "call_1" {
		t.Errorf("the tool got %+v", got)
	}
}

// countingProvider counts how often the registry reads it.
type countingProvider struct {
	tools []tool.Tool
	reads *atomic.Int64
}

func (p countingProvider) Tools(context.Context) ([]tool.Tool, error) {
	p.reads.Add(1)
	return p.tools, nil
}

func TestNewDoesNotLoadProviders(t *testing.T) {
	t.Parallel()
	var reads atomic.Int64
	e := newEnv(t, envParams{builtins: []tool.Tool{newTool("b")}, providers: []tool.Provider{countingProvider{tools: []tool.Tool{newTool("mcp_p_x")}, reads: &reads}}})
	if n := reads.Load(); n != 0 {
		t.Fatalf("gate.New read the provider %d times", n)
	}
	if res := invoke(e, "mcp_p_x", `{}`); res.IsError || reads.Load() != 1 {
		t.Errorf("first call: %+v after %d reads, want the provider tool to run after one read", res, reads.Load())
	}
}
