package cli_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// explanation is `tools explain NAME --json`.
type explanation struct {
	Tool struct {
		Name      string `json:"name"`
		Group     string `json:"group"`
		DataClass string `json:"dataClass"`
		Effect    string `json:"effect"`
		AdminOnly bool   `json:"adminOnly"`
		Decision  struct {
			Allowed      bool   `json:"allowed"`
			Reason       string `json:"reason"`
			ObservedOnly bool   `json:"observedOnly"`
		} `json:"decision"`
		InputSchema json.RawMessage `json:"inputSchema"`
	} `json:"tool"`
	Actor  string `json:"actor"`
	Checks []struct {
		Check        string `json:"check"`
		Passed       bool   `json:"passed"`
		Detail       string `json:"detail"`
		ObservedOnly bool   `json:"observedOnly"`
	} `json:"checks"`
	ExampleArgs json.RawMessage `json:"exampleArgs"`
	ExampleCall string          `json:"exampleCall"`
}

// checkOf is the check each of the gate's reasons names.
var checkOf = map[string]string{
	"tool_disabled": "enabled", "requires_admin": "admin only", "configuration_group": "configuration group", "trust_zone": "trust zone",
}

func explain(t *testing.T, work string, args ...string) explanation {
	t.Helper()
	out, _, err := run(t, context.Background(), work, nil, append([]string{"tools", "explain"}, append(args, "--json")...)...)
	if err != nil {
		t.Fatalf("explain %v: %v", args, err)
	}
	var x explanation
	if err := json.Unmarshal([]byte(out), &x); err != nil {
		t.Fatalf("explain %v: %v in %s", args, err, out)
	}
	// The chain agrees with the gate: the first failing check is the
	// decision's reason, and a tool every check passes is offered.
	var names []string
	first := ""
	for _, c := range x.Checks {
		names = append(names, c.Check)
		if !c.Passed && first == "" {
			first = c.Check
		}
	}
	if strings.Join(names, ",") != "registered,enabled,admin only,configuration group,trust zone" {
		t.Errorf("explain %v: checks %q, want the gate's five in its order", args, names)
	}
	d := x.Tool.Decision
	switch {
	case d.ObservedOnly:
		if first != "trust zone" || !x.Checks[4].ObservedOnly || !d.Allowed {
			t.Errorf("explain %v: observed-only decision %+v, first failing check %q", args, d, first)
		}
	case d.Allowed != (first == ""), !d.Allowed && checkOf[d.Reason] != first:
		t.Errorf("explain %v: decision %+v, but the first failing check is %q", args, d, first)
	}
	return x
}

// shellWords splits a POSIX shell line with single quotes, as
// exampleCall writes it.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case quoted && c == '\'':
			quoted = false
		case quoted:
			cur.WriteByte(c)
		case c == '\'':
			quoted, inWord = true, true
		case c == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
			inWord = true
		case c == ' ':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// TestToolsExplainOne: `tools explain NAME` shows the tool's group,
// class, effect, markers and schema, every check of the gate in order
// with its own outcome (agreeing with the gate's decision, for every tool
// and configuration tried), and an example call that works as printed.
func TestToolsExplainOne(t *testing.T) {
	t.Parallel()
	work := demoDir(t)
	ctx := context.Background()

	out, _, err := run(t, ctx, work, nil, "tools", "explain", "search_records", "--as", "editor")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Tool search_records (builtin)", "group       content", "data class  editorContent", "effect      read_only",
		"admin only  no", "approval    none: calls run at once", "input       none",
		"The gate's decision for editor (zone local):", "1. registered           pass", "2. enabled              pass  enabled by default",
		"5. trust zone           pass  its output (editorContent) may go to providers of zone local", "→ offered",
		`"required": [`, `"query"`, "Example call:\n  t3agent tools call search_records --as editor --args '{\"query\":\"text\"}'",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("explain search_records lacks %q:\n%s", want, out)
		}
	}

	// Every check is shown with its own outcome, also after the first
	// failure; the decision is the first.
	x := explain(t, work, "get_typoscript", "--as", "editor", "--zone", "externalGlobal", "--groups", "content,structure")
	var passed []bool
	for _, c := range x.Checks {
		passed = append(passed, c.Passed)
	}
	if x.Tool.Decision.Reason != "requires_admin" || !x.Tool.AdminOnly || x.Tool.Group != "configuration" ||
		len(passed) != 5 || !passed[0] || !passed[1] || passed[2] || passed[3] || passed[4] {
		t.Errorf("get_typoscript for editor in externalGlobal with two groups: %+v", x)
	}
	if want := "t3agent tools call get_typoscript --as editor --zone externalGlobal --groups content,structure --args '{\"pageUid\":1}'"; x.ExampleCall != want {
		t.Errorf("example call = %q, want %q", x.ExampleCall, want)
	}

	// The example call works as printed, for the admin it is offered to.
	x = explain(t, work, "get_typoscript", "--as", "admin")
	words := shellWords(x.ExampleCall)
	if len(words) < 3 || words[0] != "t3agent" {
		t.Fatalf("example call %q", x.ExampleCall)
	}
	if out, _, err := run(t, ctx, work, nil, words[1:]...); err != nil {
		t.Errorf("the example call %q failed: %v\n%s", x.ExampleCall, err, out)
	}

	// Availability overrides and the enforcement mode show in the chain.
	if _, _, err := run(t, ctx, work, nil, "tools", "disable", "read_records", "--as", "admin"); err != nil {
		t.Fatal(err)
	}
	if x := explain(t, work, "read_records", "--as", "editor"); x.Checks[1].Passed || !strings.Contains(x.Checks[1].Detail, "disabled by an admin's override") {
		t.Errorf("disabled read_records: %+v", x.Checks[1])
	}
	if _, _, err := run(t, ctx, work, nil, "tools", "enforcement", "observe", "--as", "admin"); err != nil {
		t.Fatal(err)
	}
	out, _, err = run(t, ctx, work, nil, "tools", "explain", "get_table_schema", "--as", "editor", "--zone", "externalGlobal")
	if err != nil || !strings.Contains(out, "5. trust zone           observed") || !strings.Contains(out, "→ offered, observe only") {
		t.Errorf("observed get_table_schema: %v\n%s", err, out)
	}

	// Every tool, in several configurations: the chain agrees with the
	// gate (explain checks it) and every example call is valid input.
	for _, flags := range [][]string{
		{"--as", "editor"}, {"--as", "admin", "--zone", "externalGlobal"}, {"--as", "editor", "--zone", "externalEu", "--groups", "structure"},
	} {
		for name := range decisions(t, work, append([]string{"tools", "list"}, flags...)...) {
			x := explain(t, work, append([]string{name}, flags...)...)
			if x.Tool.Name != name || !json.Valid(x.ExampleArgs) || !strings.Contains(x.ExampleCall, "t3agent tools call "+name+" ") {
				t.Errorf("explain %s %v: %+v", name, flags, x)
			}
		}
	}

	// The list form stays; a name that is no tool is one sentence.
	if out, _, err := run(t, ctx, work, nil, "tools", "explain", "--as", "editor"); err != nil || !strings.HasPrefix(out, "TOOL") {
		t.Errorf("explain without a name: %v\n%s", err, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"tools", "explain", "search_record", "--as", "editor"}, `there is no registered tool "search_record"`},
		{[]string{"tools", "explain", "search_records"}, "explain needs --as USER"},
		{[]string{"tools", "explain", "a", "b", "--as", "editor"}, "accepts at most 1 arg"},
	} {
		if _, _, err := run(t, ctx, work, nil, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want %q", c.args, err, c.want)
		}
	}
}
