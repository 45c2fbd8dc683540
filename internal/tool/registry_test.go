package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/t3agent/t3agent/internal/logtest"
	"github.com/t3agent/t3agent/internal/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// echo is a small real tool: it answers with its own name.
type echo struct{ spec tool.Spec }

func (e echo) Spec() tool.Spec { return e.spec }

func (e echo) Execute(context.Context, tool.Call, map[string]any) (tool.Result, error) {
	return tool.Text(e.spec.Name), nil
}

func spec(name string) tool.Spec {
	return tool.Spec{
		Name:             name,
		Description:      "Returns its own name. Test tool.",
		InputSchema:      json.RawMessage(`{"type":"object","properties":{}}`),
		Group:            tool.GroupContent,
		Effect:           tool.ReadOnly,
		DataClass:        tool.EditorContent,
		EnabledByDefault: true,
	}
}

func tools(names ...string) []tool.Tool {
	out := make([]tool.Tool, len(names))
	for i, n := range names {
		out[i] = &echo{spec(n)}
	}
	return out
}

// catalogue is a real Provider over tools held in memory, as the MCP
// catalogue holds them in the store. It counts how often it is read.
type catalogue struct {
	name  string
	mu    sync.Mutex
	tools []tool.Tool
	err   error
	reads atomic.Int64
}

func (c *catalogue) Tools(ctx context.Context) ([]tool.Tool, error) {
	c.reads.Add(1)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return nil, c.err
	}
	return slices.Clone(c.tools), nil
}

func (c *catalogue) String() string { return c.name }

func (c *catalogue) set(ts []tool.Tool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tools, c.err = ts, err
}

func logTo(r *tool.Registry) *logtest.Buffer {
	var buf logtest.Buffer
	r.SetLogger(slog.New(slog.NewTextHandler(&buf, nil)))
	return &buf
}

func names(entries []tool.Entry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Spec.Name
	}
	return out
}

func TestNewRegistryRefuses(t *testing.T) {
	t.Parallel()
	bad := func(mut func(*tool.Spec)) tool.Tool {
		s := spec("bad_tool")
		mut(&s)
		return &echo{s}
	}
	cases := []struct {
		name      string
		builtins  []tool.Tool
		providers []tool.Provider
		want      string
	}{
		{"duplicate", tools("a", "b", "a"), nil, `two builtin tools are named "a"`},
		{"nil builtin", []tool.Tool{&echo{spec("a")}, nil}, nil, "builtin 1 is nil"},
		{"nil provider", tools("a"), []tool.Provider{&catalogue{}, nil}, "provider 1 is nil"},
		{"bad name", []tool.Tool{bad(func(s *tool.Spec) { s.Name = "has space" })}, nil, `tool name "has space" does not match`},
		{"long name", []tool.Tool{bad(func(s *tool.Spec) { s.Name = strings.Repeat("n", 65) })}, nil, "does not match"},
		{"no description", []tool.Tool{bad(func(s *tool.Spec) { s.Description = "" })}, nil, "bad_tool has no description"},
		{"no group", []tool.Tool{bad(func(s *tool.Spec) { s.Group = "" })}, nil, "bad_tool has no group"},
		{"no data class", []tool.Tool{bad(func(s *tool.Spec) { s.DataClass = 0 })}, nil, "no valid data class"},
		{"bad effect", []tool.Tool{bad(func(s *tool.Spec) { s.Effect = "delete" })}, nil, `effect "delete"`},
		{"array schema", []tool.Tool{bad(func(s *tool.Spec) { s.InputSchema = json.RawMessage(`{"type":"array"}`) })}, nil, "must be a JSON object schema"},
		{"input and approval", []tool.Tool{bad(func(s *tool.Spec) {
			s.InputRequest = json.RawMessage(`{"type":"object"}`)
			s.RequiresApproval = true
		})}, nil, "cannot both require input and be approval-bound"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r, err := tool.NewRegistry(c.builtins, c.providers...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("NewRegistry = %v, %v; want an error containing %q", r, err, c.want)
			}
		})
	}
}

func TestBuiltinsOnly(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	r, err := tool.NewRegistry(tools("zeta", "alpha", "Mid", "mid_2"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(r.List(ctx)), []string{"Mid", "alpha", "mid_2", "zeta"}; !slices.Equal(got, want) {
		t.Errorf("List = %q, want %q (bytewise)", got, want)
	}
	if got := r.BuiltinNames(); !slices.Equal(got, []string{"Mid", "alpha", "mid_2", "zeta"}) {
		t.Errorf("BuiltinNames = %q", got)
	}
	e, ok := r.Get(ctx, "alpha")
	if !ok || !e.Builtin || e.Spec.Name != "alpha" || e.Tool == nil {
		t.Errorf("Get(alpha) = %+v, %v", e, ok)
	}
	if _, ok := r.Get(ctx, "ALPHA"); ok {
		t.Error("Get is case-insensitive; names must match exactly")
	}
	if _, ok := r.Get(ctx, "missing"); ok {
		t.Error("Get(missing) found a tool")
	}
	if !r.IsBuiltin("zeta") || r.IsBuiltin("missing") {
		t.Error("IsBuiltin is wrong")
	}
	// List is the caller's: changing it does not change the registry.
	l := r.List(ctx)
	l[0] = tool.Entry{}
	if names(r.List(ctx))[0] != "Mid" {
		t.Error("List returned the registry's own slice")
	}
	if r.Len(ctx) != 4 {
		t.Errorf("Len = %d, want 4", r.Len(ctx))
	}
}

func TestProviderMerge(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	collider := spec("shared")
	collider.Description = "provider copy"
	invalid := spec("mcp_docs_bad")
	invalid.DataClass = 0
	first := &catalogue{name: "docs", tools: []tool.Tool{
		&echo{spec("mcp_docs_search")}, &echo{collider}, &echo{invalid}, nil, &echo{spec("mcp_both")},
	}}
	second := &catalogue{name: "wiki", tools: tools("mcp_wiki_page", "mcp_both")}
	broken := &catalogue{name: "broken", err: errors.New("catalogue table missing"), tools: tools("mcp_broken_x")}
	r, err := tool.NewRegistry(tools("shared", "builtin_b"), first, broken, second)
	if err != nil {
		t.Fatal(err)
	}
	logs := logTo(r)

	want := []string{"builtin_b", "mcp_both", "mcp_docs_search", "mcp_wiki_page", "shared"}
	if got := names(r.List(ctx)); !slices.Equal(got, want) {
		t.Fatalf("List = %q, want %q", got, want)
	}
	// The builtin keeps its name; the provider cannot shadow it.
	if e, _ := r.Get(ctx, "shared"); !e.Builtin || e.Spec.Description == "provider copy" {
		t.Errorf("shared = %+v, want the builtin", e)
	}
	// Between providers the earlier one keeps the name.
	if e, _ := r.Get(ctx, "mcp_both"); e.Builtin || e.Tool != first.tools[4] {
		t.Errorf("mcp_both = %+v, want the first provider's tool", e)
	}
	if _, ok := r.Get(ctx, "mcp_broken_x"); ok {
		t.Error("a failing provider contributed a tool")
	}
	if _, ok := r.Get(ctx, "mcp_docs_bad"); ok {
		t.Error("a provider tool with an invalid spec was registered")
	}
	out := logs.String()
	for _, w := range []string{
		`provider tool dropped: name collision" provider=docs tool=shared`,
		`the name belongs to a builtin tool`,
		`provider=wiki tool=mcp_both`,
		`the name belongs to an earlier provider tool`,
		`provider tool skipped: invalid spec" provider=docs tool=mcp_docs_bad`,
		`returned a nil tool`,
		`tool provider failed; none of its tools are registered" provider=broken`,
		`catalogue table missing`,
	} {
		if !strings.Contains(out, w) {
			t.Errorf("log lacks %q:\n%s", w, out)
		}
	}
	// Builtin lookups never load providers.
	if got := r.BuiltinNames(); !slices.Equal(got, []string{"builtin_b", "shared"}) {
		t.Errorf("BuiltinNames = %q", got)
	}
}

func TestProviderLoadAndRefresh(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := &catalogue{name: "c", tools: tools("mcp_c_one")}
	r, err := tool.NewRegistry(tools("builtin"), c)
	if err != nil {
		t.Fatal(err)
	}
	logTo(r)
	if n := c.reads.Load(); n != 0 {
		t.Fatalf("NewRegistry read the provider %d times; loading waits for the first lookup", n)
	}
	if !r.IsBuiltin("builtin") || len(r.Builtins()) != 1 || len(r.BuiltinNames()) != 1 || c.reads.Load() != 0 {
		t.Fatal("a builtin lookup loaded the provider")
	}

	// A lookup whose ctx is already done loads without keeping the
	// result, so the next caller loads again.
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, ok := r.Get(done, "mcp_c_one"); ok {
		t.Error("a canceled load still returned the provider's tool")
	}
	if _, ok := r.Get(ctx, "mcp_c_one"); !ok {
		t.Fatal("the view of a canceled load was kept")
	}
	reads := c.reads.Load()
	for range 10 {
		r.Get(ctx, "mcp_c_one")
		r.List(ctx)
	}
	if n := c.reads.Load(); n != reads {
		t.Errorf("lookups read the provider %d more times; the view is loaded once", n-reads)
	}

	// The catalogue changes; lookups see it only after Refresh.
	c.set(tools("mcp_c_two"), nil)
	if _, ok := r.Get(ctx, "mcp_c_two"); ok {
		t.Error("a new provider tool showed up before Refresh")
	}
	if err := r.Refresh(ctx); err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	if got := names(r.List(ctx)); !slices.Equal(got, []string{"builtin", "mcp_c_two"}) {
		t.Errorf("after Refresh List = %q", got)
	}

	// Refresh reports problems and still replaces the view.
	c.set(tools("builtin", "mcp_c_three"), nil)
	err = r.Refresh(ctx)
	if err == nil || !strings.Contains(err.Error(), `tool "builtin" dropped`) {
		t.Errorf("Refresh with a collision = %v, want it reported", err)
	}
	if got := names(r.List(ctx)); !slices.Equal(got, []string{"builtin", "mcp_c_three"}) {
		t.Errorf("after a Refresh with problems List = %q", got)
	}
	c.set(nil, errors.New("store down"))
	if err := r.Refresh(ctx); err == nil || !strings.Contains(err.Error(), "store down") {
		t.Errorf("Refresh of a failing provider = %v", err)
	}
	if got := names(r.List(ctx)); !slices.Equal(got, []string{"builtin"}) {
		t.Errorf("a failing provider still contributes %q", got)
	}

	// A Refresh cut short keeps the old view.
	c.set(tools("mcp_c_four"), nil)
	if err := r.Refresh(done); !errors.Is(err, context.Canceled) {
		t.Errorf("Refresh with a canceled ctx = %v, want context.Canceled", err)
	}
	if got := names(r.List(ctx)); !slices.Equal(got, []string{"builtin"}) {
		t.Errorf("a canceled Refresh replaced the view: %q", got)
	}
}

func TestRegistryConcurrent(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := &catalogue{name: "c", tools: tools("mcp_c_0")}
	r, err := tool.NewRegistry(tools("builtin"), c)
	if err != nil {
		t.Fatal(err)
	}
	logTo(r)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				if g == 0 && i%10 == 0 {
					c.set(tools(fmt.Sprintf("mcp_c_%d", i)), nil)
					if err := r.Refresh(ctx); err != nil {
						errs <- err
						return
					}
				}
				// Every view holds the builtin and exactly one provider tool.
				l := r.List(ctx)
				if len(l) != 2 || l[0].Spec.Name != "builtin" {
					errs <- fmt.Errorf("a reader saw %q", names(l))
					return
				}
				if _, ok := r.Get(ctx, "builtin"); !ok {
					errs <- errors.New("the builtin vanished")
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// versioned is a catalogue that says when it changed, as the MCP
// catalogue does with the store's generation: change bumps it.
type versioned struct {
	catalogue
	gen     atomic.Int64
	genErr  atomic.Pointer[error]
	genAsks atomic.Int64
}

func (v *versioned) Generation(context.Context) (int64, error) {
	v.genAsks.Add(1)
	if err := v.genErr.Load(); err != nil {
		return 0, *err
	}
	return v.gen.Load(), nil
}

func (v *versioned) change(ts []tool.Tool, err error) {
	v.set(ts, err)
	v.gen.Add(1)
}

// TestVersionedProviderIsLive: every lookup asks a Versioned provider for
// its generation and reads its tools again only when it moved, so a
// change is seen by the next lookup without Refresh; one View answers
// many lookups with one ask.
func TestVersionedProviderIsLive(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := &versioned{catalogue: catalogue{name: "c", tools: tools("mcp_c_one")}}
	r, err := tool.NewRegistry(tools("builtin"), c)
	if err != nil {
		t.Fatal(err)
	}
	logs := logTo(r)
	if _, ok := r.Get(ctx, "mcp_c_one"); !ok {
		t.Fatal("the provider's tool is not registered")
	}
	reads, asks := c.reads.Load(), c.genAsks.Load()
	for range 10 {
		r.Get(ctx, "mcp_c_one")
		r.List(ctx)
	}
	if n := c.reads.Load() - reads; n != 0 {
		t.Errorf("lookups of an unchanged provider read its tools %d times", n)
	}
	if n := c.genAsks.Load() - asks; n != 20 {
		t.Errorf("20 lookups asked the generation %d times, want 20", n)
	}

	c.change(tools("mcp_c_two"), nil)
	if got := names(r.List(ctx)); !slices.Equal(got, []string{"builtin", "mcp_c_two"}) {
		t.Errorf("the lookup after a change lists %q", got)
	}
	asks = c.genAsks.Load()
	v := r.View(ctx)
	for range 5 {
		if _, ok := v.Get("mcp_c_two"); !ok || v.Len() != 2 {
			t.Fatal("the view lost a tool")
		}
	}
	if n := c.genAsks.Load() - asks; n != 1 {
		t.Errorf("one View and five lookups in it asked the generation %d times, want 1", n)
	}
	// A view never changes: a later change makes a new one.
	c.change(tools("mcp_c_three"), nil)
	if _, ok := v.Get("mcp_c_three"); ok {
		t.Error("a view changed after it was taken")
	}
	if _, ok := r.Get(ctx, "mcp_c_three"); !ok {
		t.Error("the change was not seen by the next lookup")
	}

	// The generation cannot be read: the tools loaded before stay, and
	// the failure is logged.
	down := errors.New("store down")
	c.genErr.Store(&down)
	c.change(tools("mcp_c_four"), nil)
	if got := names(r.List(ctx)); !slices.Equal(got, []string{"builtin", "mcp_c_three"}) {
		t.Errorf("with the generation unreadable List = %q, want the tools loaded before", got)
	}
	if !strings.Contains(logs.String(), "cannot ask a provider whether its tools changed") {
		t.Errorf("the unreadable generation was not logged:\n%s", logs.String())
	}
	c.genErr.Store(nil)
	if _, ok := r.Get(ctx, "mcp_c_four"); !ok {
		t.Error("the change was not seen once the generation was readable again")
	}

	// The tools cannot be read: none are registered, and the next lookup
	// tries again even though the generation did not move.
	c.change(nil, down)
	if got := names(r.List(ctx)); !slices.Equal(got, []string{"builtin"}) {
		t.Errorf("a failing provider contributes %q", got)
	}
	c.set(tools("mcp_c_five"), nil)
	if _, ok := r.Get(ctx, "mcp_c_five"); !ok {
		t.Error("a provider that failed once is not read again")
	}
	reads = c.reads.Load()
	r.Get(ctx, "mcp_c_five")
	if n := c.reads.Load() - reads; n != 0 {
		t.Errorf("a recovered provider is read on every lookup (%d more)", n)
	}
}

// TestVersionedConcurrent: lookups from many goroutines while the
// generation moves each see one whole view, and a lookup after a change
// never sees an older one.
func TestVersionedConcurrent(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := &versioned{catalogue: catalogue{name: "c", tools: tools("mcp_c_0")}}
	r, err := tool.NewRegistry(tools("builtin"), c)
	if err != nil {
		t.Fatal(err)
	}
	logTo(r)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				if g == 0 && i%10 == 0 {
					name := fmt.Sprintf("mcp_c_%d", i)
					c.change(tools(name), nil)
					if _, ok := r.Get(ctx, name); !ok {
						errs <- fmt.Errorf("the lookup after the change to %s missed it", name)
						return
					}
				}
				l := r.List(ctx)
				if len(l) != 2 || l[0].Spec.Name != "builtin" {
					errs <- fmt.Errorf("a reader saw %q", names(l))
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
