package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// demoDir creates a small demo in a temp dir and returns the working dir.
func demoDir(t *testing.T) string {
	t.Helper()
	work := t.TempDir()
	if _, _, err := run(t, context.Background(), work, nil, "demo", "init", "--pages", "30", "--content", "40", "--fast-hashes"); err != nil {
		t.Fatal(err)
	}
	return work
}

type decisionRow struct {
	Tool    string `json:"tool"`
	Allowed bool   `json:"allowed"`
	Reason  string `json:"reason"`
	Group   string `json:"group"`
	// ObservedOnly: allowed only because enforcement is observe.
	ObservedOnly bool `json:"observedOnly"`
}

func decisions(t *testing.T, work string, args ...string) map[string]decisionRow {
	t.Helper()
	out, _, err := run(t, context.Background(), work, nil, append(args, "--json")...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	var rows []decisionRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v: %v in %s", args, err, out)
	}
	m := map[string]decisionRow{}
	for _, r := range rows {
		m[r.Tool] = r
	}
	return m
}

func TestToolsListExplainAndToggle(t *testing.T) {
	t.Parallel()
	work := demoDir(t)
	ctx := context.Background()

	local := decisions(t, work, "tools", "list", "--as", "editor")
	if len(local) < 9 || !local["search_records"].Allowed || !local["get_page_content"].Allowed {
		t.Fatalf("editor, local zone: %+v", local)
	}
	// An external provider may not receive internalConfiguration output.
	global := decisions(t, work, "tools", "explain", "--as", "editor", "--zone", "externalGlobal")
	if global["get_table_schema"].Allowed || global["get_table_schema"].Reason != "trust_zone" || !global["read_records"].Allowed {
		t.Errorf("externalGlobal: %+v / %+v", global["get_table_schema"], global["read_records"])
	}
	grouped := decisions(t, work, "tools", "list", "--as", "editor", "--groups", "structure")
	if grouped["read_records"].Reason != "configuration_group" || !grouped["get_page_tree"].Allowed {
		t.Errorf("--groups structure: %+v", grouped)
	}

	// Only admins toggle.
	if _, _, err := run(t, ctx, work, nil, "tools", "disable", "read_records", "--as", "editor"); err == nil || !strings.Contains(err.Error(), "only TYPO3 admins") {
		t.Errorf("editor toggled a tool: %v", err)
	}
	if _, _, err := run(t, ctx, work, nil, "tools", "disable", "read_records", "--as", "former"); err == nil || !strings.Contains(err.Error(), "cannot act") {
		t.Errorf("former toggled a tool: %v", err)
	}
	if _, _, err := run(t, ctx, work, nil, "tools", "disable", "read_record", "--as", "admin"); err == nil || !strings.Contains(err.Error(), "no registered tool") {
		t.Errorf("typo toggled: %v", err)
	}
	if _, _, err := run(t, ctx, work, nil, "tools", "disable", "--group", "content", "--as", "admin"); err != nil {
		t.Fatal(err)
	}
	after := decisions(t, work, "tools", "list", "--as", "editor")
	if after["read_records"].Allowed || after["read_records"].Reason != "tool_disabled" || !after["get_page_tree"].Allowed {
		t.Errorf("after disabling group content: %+v", after["read_records"])
	}
	// A tool override cannot re-enable a tool in a disabled group.
	if _, _, err := run(t, ctx, work, nil, "tools", "enable", "read_records", "--as", "admin"); err != nil {
		t.Fatal(err)
	}
	if d := decisions(t, work, "tools", "list", "--as", "editor")["read_records"]; d.Allowed {
		t.Errorf("tool override re-enabled a tool in a disabled group")
	}
	if _, _, err := run(t, ctx, work, nil, "tools", "enable", "--group", "content", "--clear", "--as", "admin"); err != nil {
		t.Fatal(err)
	}
	if d := decisions(t, work, "tools", "list", "--as", "editor")["read_records"]; !d.Allowed {
		t.Errorf("clearing the group override did not restore the tool: %+v", d)
	}
}

// TestToolsEnforcement: the mode is shown to anyone, set by admins only
// and to the exact words only, and the explain readout follows it.
func TestToolsEnforcement(t *testing.T) {
	t.Parallel()
	work := demoDir(t)
	ctx := context.Background()
	show := func() string {
		t.Helper()
		out, _, err := run(t, ctx, work, nil, "tools", "enforcement")
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if out := show(); !strings.HasPrefix(out, "enforce: ") {
		t.Errorf("default: %q", out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"observe", "--as", "editor"}, "only TYPO3 admins"},
		{[]string{"observe"}, "needs --as ADMIN"},
		{[]string{"OBSERVE", "--as", "admin"}, `enforcement "OBSERVE" is not understood: use enforce or observe`},
		{[]string{"observe ", "--as", "admin"}, "is not understood"},
	} {
		if _, _, err := run(t, ctx, work, nil, append([]string{"tools", "enforcement"}, c.args...)...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("enforcement %q: %v, want %q", c.args, err, c.want)
		}
	}
	if out := show(); !strings.HasPrefix(out, "enforce: ") {
		t.Errorf("after refused changes: %q", out)
	}
	if _, _, err := run(t, ctx, work, nil, "tools", "enforcement", "observe", "--as", "admin"); err != nil {
		t.Fatal(err)
	}
	if out := show(); !strings.HasPrefix(out, "observe: ") {
		t.Errorf("after observe: %q", out)
	}
	global := decisions(t, work, "tools", "explain", "--as", "editor", "--zone", "externalGlobal")
	if d := global["get_table_schema"]; !d.Allowed || !d.ObservedOnly || d.Reason != "trust_zone" {
		t.Errorf("observing, externalGlobal: %+v", d)
	}
	if _, _, err := run(t, ctx, work, nil, "tools", "enforcement", "enforce", "--as", "admin"); err != nil {
		t.Fatal(err)
	}
	if d := decisions(t, work, "tools", "explain", "--as", "editor", "--zone", "externalGlobal")["get_table_schema"]; d.Allowed {
		t.Errorf("enforcing again, externalGlobal: %+v", d)
	}
}

func TestToolsCall(t *testing.T) {
	t.Parallel()
	work := demoDir(t)
	ctx := context.Background()
	out, _, err := run(t, ctx, work, nil, "tools", "call", "get_page_content", "--as", "editor", "--args", `{"uid":6}`)
	if err != nil || !strings.Contains(out, "Product A") {
		t.Fatalf("editor reading page 6: %v\n%s", err, out)
	}
	// Page 9 is outside what the editor may show; the answer is neutral.
	out, _, err = run(t, ctx, work, nil, "tools", "call", "get_page_content", "--as", "editor", "--args", `{"uid":9}`)
	if err == nil || strings.Contains(out, "Internal pricing") || !strings.Contains(out, "not found or not permitted") {
		t.Errorf("editor reading page 9: %v\n%s", err, out)
	}
	// Bad arguments name the field.
	out, _, err = run(t, ctx, work, nil, "tools", "call", "get_page_content", "--as", "editor", "--args", `{"uid":"six"}`, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Content string `json:"content"`
		IsError bool   `json:"isError"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || !res.IsError || !strings.Contains(res.Content, "uid") {
		t.Errorf("bad arguments: %v %+v", err, res)
	}
	if _, _, err := run(t, ctx, work, nil, "tools", "call", "get_page_content", "--args", `{"uid":6}`); err == nil || !strings.Contains(err.Error(), "--as") {
		t.Errorf("call without --as: %v", err)
	}
	if _, _, err := run(t, ctx, work, nil, "tools", "list", "--zone", "moon"); err == nil || !strings.Contains(err.Error(), "--zone") {
		t.Errorf("bad zone: %v", err)
	}
}

func TestToolsListForAStoredConfiguration(t *testing.T) {
	t.Parallel()
	work := demoDir(t)
	ctx := context.Background()
	yaml := `providers:
  - identifier: cloud
    adapter: openai
    api_key: env:T3AGENT_TEST_UNUSED_KEY
    trust_zone: externalGlobal
  - identifier: onprem
    adapter: openai_compatible
    endpoint: http://127.0.0.1:11434/v1
    trust_zone: local
models:
  - identifier: cloud-model
    provider: cloud
    model_id: m1
  - identifier: local-model
    provider: onprem
    model_id: m2
configurations:
  - identifier: local-structure
    model: local-model
    allowed_tool_groups: [structure]
  - identifier: local-with-cloud-fallback
    model: local-model
    fallback_chain: [cloud-only]
  - identifier: cloud-only
    model: cloud-model
`
	f := filepath.Join(work, "agents.yaml")
	if err := os.WriteFile(f, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, ctx, work, nil, "apply", "-f", f); err != nil {
		t.Fatal(err)
	}
	grouped := decisions(t, work, "tools", "list", "--as", "editor", "--configuration", "local-structure")
	if grouped["read_records"].Reason != "configuration_group" || !grouped["get_table_schema"].Allowed {
		t.Errorf("local-structure: %+v / %+v", grouped["read_records"], grouped["get_table_schema"])
	}
	// A cloud fallback lowers the zone of a local configuration.
	fb := decisions(t, work, "tools", "list", "--as", "editor", "-C", "local-with-cloud-fallback")
	if fb["get_table_schema"].Reason != "trust_zone" || !fb["read_records"].Allowed {
		t.Errorf("local with cloud fallback: %+v / %+v", fb["get_table_schema"], fb["read_records"])
	}
	if _, _, err := run(t, ctx, work, nil, "tools", "list", "-C", "local-structure", "--zone", "local"); err == nil || !strings.Contains(err.Error(), "leave out --zone") {
		t.Errorf("--configuration with --zone: %v", err)
	}
	if _, _, err := run(t, ctx, work, nil, "tools", "list", "-C", "nope"); err == nil || !strings.Contains(err.Error(), "--configuration nope") {
		t.Errorf("unknown configuration: %v", err)
	}
}
