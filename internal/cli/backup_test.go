package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/dbtest"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
)

// TestBackupRestoreAndStoreCopyCommands: the demo's store, with a run, an
// applied configuration and an MCP server with a sealed credential, is
// backed up while the files stay in place, restored into a new SQLite
// file and copied to PostgreSQL; every command on the new stores shows
// what the old one showed.
func TestBackupRestoreAndStoreCopyCommands(t *testing.T) {
	t.Parallel()
	work := demoDir(t)
	ctx := context.Background()
	srv := llmtest.NewOpenAI(t, llmtest.Text("Backed up."))
	env := []string{"DEMO_OPENAI_KEY=" + llmtest.Key, "MCP_TOKEN=secret-token"}
	ok := func(env []string, args ...string) string {
		t.Helper()
		out, errOut, err := run(t, ctx, work, env, args...)
		if err != nil {
			t.Fatalf("%v: %v (%s)", args, err, errOut)
		}
		return out
	}
	ok(env, "apply", "-f", agentsDoc(t, srv.BaseURL(), ""))
	ok(env, "mcp", "add", "docs", "--url", "https://mcp.example.com/mcp", "--auth", "bearer", "--credential-env", "MCP_TOKEN",
		"--data-class", "editorContent", "--as", "admin")
	ok(env, "run", "-C", "assistant", "--as", "editor", "Back me up.")
	views := func(env []string) []string {
		return []string{ok(env, "runs", "list", "--json"), ok(env, "config", "list", "--json"), ok(env, "mcp", "list", "--json"), ok(env, "usage", "--json")}
	}
	want := views(env)

	file := filepath.Join(t.TempDir(), "t3agent.backup")
	out := ok(env, "backup", file)
	if !strings.HasPrefix(out, "Backed up "+file+" (schema version ") || !strings.Contains(out, "Keep the master key apart") {
		t.Errorf("backup printed %q", out)
	}
	if _, _, err := run(t, ctx, work, env, "backup", file); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("backup onto an existing file: %v", err)
	}

	restored := append(env[:len(env):len(env)], "T3AGENT_STORE_DSN=sqlite:"+filepath.Join(t.TempDir(), "restored.db"))
	out = ok(restored, "restore", file)
	if !strings.Contains(out, "each verified") {
		t.Errorf("restore printed %q", out)
	}
	for i, got := range views(restored) {
		if got != want[i] {
			t.Errorf("after the restore, view %d differs:\n%s\nwant\n%s", i, got, want[i])
		}
	}
	if _, _, err := run(t, ctx, work, restored, "restore", file); err == nil || !strings.Contains(err.Error(), "is not empty") {
		t.Errorf("restore into a used store: %v", err)
	}

	pg := dbtest.Postgres(t)
	var rep struct {
		SchemaVersion int64 `json:"schemaVersion"`
		Tables        []struct {
			Table string `json:"table"`
			Rows  int64  `json:"rows"`
		} `json:"tables"`
	}
	if err := json.Unmarshal([]byte(ok(env, "store", "copy", "--to", pg, "--json")), &rep); err != nil || rep.SchemaVersion == 0 || len(rep.Tables) < 20 {
		t.Fatalf("store copy --json: %+v, %v", rep, err)
	}
	copied := append(env[:len(env):len(env)], "T3AGENT_STORE_DSN="+pg)
	for i, got := range views(copied) {
		if got != want[i] {
			t.Errorf("after the copy, view %d differs:\n%s\nwant\n%s", i, got, want[i])
		}
	}
	if _, _, err := run(t, ctx, work, env, "store", "copy"); err == nil || !strings.Contains(err.Error(), "needs --to") {
		t.Errorf("store copy without --to: %v", err)
	}
	if _, err := os.Stat(file + "-wal"); err == nil {
		t.Error("the backup has a write-ahead log beside it")
	}
}
