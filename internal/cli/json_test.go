package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/dbtest"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/store"
)

// camelKey is the shape of every field name the API prints.
var camelKey = regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)

// dataKeys hold data under the data's own names (TYPO3 table and ctrl
// keys, JSON Schema properties and arguments, event payloads, HTTP header
// names), not field names of t3agent's.
var dataKeys = map[string]bool{"payload": true, "raw": true, "counts": true, "inputSchema": true, "headers": true, "exampleArgs": true}

// badKeys lists the field names in v that are not camelCase, by path.
func badKeys(v any, path string) []string {
	var bad []string
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			if !camelKey.MatchString(k) {
				bad = append(bad, path+"."+k)
			}
			if !dataKeys[k] {
				bad = append(bad, badKeys(child, path+"."+k)...)
			}
		}
	case []any:
		for i, child := range v {
			bad = append(bad, badKeys(child, fmt.Sprintf("%s[%d]", path, i))...)
		}
	}
	return bad
}

// TestJSONOutputIsCamelCase runs every command that prints --json, in
// the order a real site would see them, and checks that every field name
// is camelCase as in /api/v1 (no key starts with an upper-case letter or
// holds an underscore).
func TestJSONOutputIsCamelCase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	work := t.TempDir()
	mcpSrv, _ := newWriteServer(t)
	shout := llmtest.Calls(llmtest.Call("call_1", "mcp_docs_shout", `{}`))
	srv := llmtest.NewOpenAI(t, llmtest.Text("Hello."), shout, llmtest.Text("Shouted."), shout, llmtest.Text("Not shouted."))
	env := []string{"DEMO_OPENAI_KEY=" + llmtest.Key}
	doc := agentsDoc(t, srv.BaseURL(), "tasks:\n  - identifier: chat\n    configuration: assistant\nbudgets:\n  - user: editor\n    requests_per_day: 100\n")
	material := dbtest.TYPO3Material(t)

	var runID, digest string
	waiting := func(errOut string) {
		t.Helper()
		m := regexp.MustCompile(`run ([0-9a-f-]{36})`).FindStringSubmatch(errOut)
		if m == nil {
			t.Fatalf("no run id in %q", errOut)
		}
		runID = m[1]
	}
	readDigest := func(out, _ string) {
		t.Helper()
		var items []struct {
			Pending struct {
				Digest string `json:"digest"`
			} `json:"pending"`
		}
		if err := json.Unmarshal([]byte(out), &items); err != nil || len(items) != 1 {
			t.Fatalf("inbox = %s (%v)", out, err)
		}
		digest = items[0].Pending.Digest
	}
	steps := []struct {
		args    []string
		fails   bool                 // the command exits non-zero but prints its JSON
		after   func(string, string) // reads what later steps need
		noCheck bool                 // a step that prints no JSON
	}{
		{args: []string{"demo", "init", "--pages", "30", "--content", "40", "--fast-hashes"}},
		{args: []string{"demo", "import-t3d", filepath.Join(material, "introduction", "Initialisation", "data.xml"),
			"--schema", filepath.Join(material, "schema-sqlite-introduction.sql"), "--site-dsn", "sqlite:" + filepath.Join(t.TempDir(), "intro.db")}},
		{args: []string{"version"}},
		{args: []string{"tca", "show"}},
		{args: []string{"tca", "show", "pages"}},
		{args: []string{"apply", "-f", doc}},
		{args: []string{"config", "list"}},
		{args: []string{"config", "show", "assistant"}},
		{args: []string{"config", "show", "chat"}},
		{args: []string{"config", "show", "demo-model"}},
		{args: []string{"config", "show", "demo-openai"}},
		{args: []string{"mcp", "add", "docs", "--url", mcpSrv.URL, "--data-class", "editorContent", "--enable", "--as", "admin"}},
		{args: []string{"mcp", "import", "docs", "--as", "admin"}},
		{args: []string{"mcp", "list"}},
		{args: []string{"mcp", "show", "docs"}},
		{args: []string{"mcp", "ping", "docs", "--as", "admin"}},
		{args: []string{"mcp", "call", "docs", "shout", "--as", "admin"}},
		{args: []string{"tools", "enable", "mcp_docs_shout", "--as", "admin"}, noCheck: true},
		{args: []string{"tools", "list", "--as", "editor"}},
		{args: []string{"tools", "explain", "--as", "editor"}},
		{args: []string{"tools", "explain", "search_records", "--as", "editor"}},
		{args: []string{"tools", "explain", "mcp_docs_shout", "--as", "admin"}},
		{args: []string{"tools", "call", "search_records", "--as", "editor", "--args", `{"query":"Aqua"}`}},
		{args: []string{"run", "-C", "assistant", "--as", "editor", "Hi"}},
		{args: []string{"run", "-C", "assistant", "--as", "admin", "Shout."}, fails: true, after: func(_, errOut string) { waiting(errOut) }},
		{args: []string{"runs", "list"}},
		{args: []string{"runs", "inbox", "--as", "admin"}, after: readDigest},
		{args: []string{"runs", "approve", "RUN", "--as", "admin", "--digest", "DIGEST"}},
		{args: []string{"runs", "show", "RUN"}},
		{args: []string{"run", "-C", "assistant", "--as", "admin", "Shout."}, fails: true, after: func(_, errOut string) { waiting(errOut) }},
		{args: []string{"runs", "inbox", "--as", "admin"}, after: readDigest},
		{args: []string{"runs", "deny", "RUN", "--as", "admin", "--digest", "DIGEST"}},
		{args: []string{"usage", "--by", "user"}},
		{args: []string{"token", "create", "--name", "ci", "--user", "editor", "--scopes", "agent:read"}},
		{args: []string{"token", "list"}},
		{args: []string{"chat", "cleanup"}},
		{args: []string{"chat", "process", "CONVERSATION"}, fails: true},
	}
	conversation := ""
	for _, s := range steps {
		args := make([]string, len(s.args))
		for i, a := range s.args {
			args[i] = strings.NewReplacer("RUN", runID, "DIGEST", digest, "CONVERSATION", conversation).Replace(a)
		}
		if args[0] == "chat" && args[1] == "process" {
			st := demoStore(t, work, &chatClock{})
			c := queueTurn(t, st, "", "Hello?", store.ConversationState{})
			args[2] = strconv.FormatInt(c.ID, 10)
		}
		if !s.noCheck {
			args = append(args, "--json")
		}
		out, errOut, err := run(t, ctx, work, env, args...)
		if (err != nil) != s.fails {
			t.Fatalf("%v: err = %v (stderr %s)", args, err, errOut)
		}
		if s.after != nil {
			s.after(out, errOut)
		}
		if s.noCheck {
			continue
		}
		var v any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Errorf("%v --json printed no JSON: %v\n%s", s.args, err, out)
			continue
		}
		if bad := badKeys(v, ""); len(bad) > 0 {
			t.Errorf("%v --json: keys not in camelCase: %v", s.args, bad)
		}
	}
}
