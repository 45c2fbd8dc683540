package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/chat/chattest"
	mcpclient "github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/mcpserver"
	"github.com/t3agent/t3agent/internal/tool"
)

// nodeHost runs testdata/host.mjs, the official TypeScript SDK's client,
// for one operation and decodes its JSON answer into out.
func (e *env) nodeHost(t *testing.T, sdk, path, token string, out any, args ...string) {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("testdata", "host.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{script, sdk, e.ts.URL + path, token}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("node host %v: %v\n%s", args, err, stderr.String())
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("node host %v answered %q: %v", args, b, err)
	}
}

type nodeResult struct {
	IsError bool `json:"isError"`
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent map[string]any `json:"structuredContent"`
}

func (r nodeResult) text() string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// TestNodeHost: an MCP host built on the official TypeScript SDK lists
// the editor's offer, calls a read tool, calls a write that waits for
// approval, which a second person approves, and fetches its result. It
// needs T3AGENT_TEST_MCP_SDK, the SDK's package folder, which .ci/run
// installs; locally it skips without it.
func TestNodeHost(t *testing.T) {
	t.Parallel()
	sdk := os.Getenv("T3AGENT_TEST_MCP_SDK")
	if sdk == "" {
		t.Skip("T3AGENT_TEST_MCP_SDK is not set (see .ci/run)")
	}
	e := setup(t, envOptions{})
	path, tok := "/mcp/"+chattest.Configuration, e.tokens["editor-host"]
	var list struct {
		Tools []string `json:"tools"`
	}
	e.nodeHost(t, sdk, path, tok, &list, "list")
	cfg, err := e.f.Tasks.Resolve(context.Background(), chattest.Configuration)
	if err != nil {
		t.Fatal(err)
	}
	if want := e.offer("editor", cfg); !slices.Equal(list.Tools, want) {
		t.Errorf("list = %v, want %v", list.Tools, want)
	}
	var read nodeResult
	e.nodeHost(t, sdk, path, tok, &read, "call", chattest.ReadTool, `{"title":"Aqua"}`)
	if read.IsError || read.text() != "note Aqua: pumps are blue" {
		t.Errorf("read = %+v", read)
	}
	var write nodeResult
	e.nodeHost(t, sdk, path, tok, &write, "call", chattest.WriteTool, `{"text":"from node"}`)
	runID, _ := write.StructuredContent["runId"].(string)
	if write.IsError || runID == "" || e.f.WriteCalls() != 0 {
		t.Fatalf("write = %+v (writes %d)", write, e.f.WriteCalls())
	}
	ctx := context.Background()
	item, err := e.f.Runtime.Pending(ctx, e.f.Users["admin"], agent.Access{}, runID)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := e.f.Runtime.Approve(ctx, agent.ApproveParams{RunID: runID, Approver: e.f.Users["admin"], Approved: true, Digest: item.Digest}); err != nil || res.Outcome != agent.OutcomeCompleted {
		t.Fatalf("approve: %+v, %v", res, err)
	}
	var result nodeResult
	e.nodeHost(t, sdk, path, tok, &result, "call", mcpserver.ToolRunResult, `{"run_id":"`+runID+`"}`)
	if result.IsError || result.text() != "published: from node" || e.f.WriteCalls() != 1 {
		t.Errorf("result = %+v (writes %d)", result, e.f.WriteCalls())
	}

	// A configuration's endpoint shows only its groups.
	e.nodeHost(t, sdk, "/mcp/"+notesConfig, tok, &list, "list")
	if want := sorted(append([]string{chattest.ReadTool, chattest.WriteTool}, runTools...)); !slices.Equal(list.Tools, want) {
		t.Errorf("/mcp/%s lists %v, want %v", notesConfig, list.Tools, want)
	}
	// With the notes server secret-adjacent, the local configuration
	// lists its tools, an externalGlobal one never does.
	class := tool.SecretAdjacent
	if _, err := e.f.MCP.Update(ctx, mcpclient.UpdateParams{Identifier: chattest.MCPServer, DataClass: &class, By: "admin"}); err != nil {
		t.Fatal(err)
	}
	if err := e.f.Gate.Registry().Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	e.nodeHost(t, sdk, path, e.tokens["admin-host"], &list, "list")
	if !slices.Contains(list.Tools, chattest.ReadTool) {
		t.Fatalf("the local configuration does not list the secret-adjacent %s: %v", chattest.ReadTool, list.Tools)
	}
	e.nodeHost(t, sdk, "/mcp/"+globalConfig, e.tokens["admin-host"], &list, "list")
	for _, n := range list.Tools {
		if en, ok := e.f.Gate.Registry().Get(ctx, n); ok && en.Spec.DataClass > tool.EditorContent {
			t.Errorf("the externalGlobal configuration lists %s (%s)", n, en.Spec.DataClass)
		}
	}
}
