package cli_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/cli"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/store"
)

// TestDemoWriteServerEndToEnd: `t3agent demo` serves its write server,
// logs in to it through OAuth and registers it as demo_writes. A queued
// run whose model calls update_page_metadata waits for approval in the
// demo process; `runs approve` in this process (a second runtime on the
// same store file) approves it; the page's new title is in the demo site
// with exactly one new sys_history row, and approving again writes
// nothing.
func TestDemoWriteServerEndToEnd(t *testing.T) {
	t.Parallel()
	work := demoDir(t)
	ctx := context.Background()
	llm := llmtest.NewOpenAI(t)
	env := []string{"DEMO_OPENAI_KEY=" + llmtest.Key}
	if _, errOut, err := run(t, ctx, work, env, "apply", "-f", agentsDoc(t, llm.BaseURL(), "")); err != nil {
		t.Fatalf("apply: %v (%s)", err, errOut)
	}
	site := openSite(t, work)
	before := countRows(t, site, `SELECT COUNT(*) FROM sys_history WHERE tablename = 'pages' AND recuid = 2`)

	p := startProcess(t, work, env, "demo", "demo", "--listen", "127.0.0.1:0")
	if !strings.Contains(p.logs.String(), "Demo write server: http://127.0.0.1:") {
		t.Fatalf("the demo did not announce its write server:\n%s", p.logs.String())
	}
	out, _, err := run(t, ctx, work, nil, "mcp", "list", "--json")
	if err != nil || !strings.Contains(out, `"identifier": "demo_writes"`) || !strings.Contains(out, `"dataClass": "editorContent"`) || !strings.Contains(out, `"requiresApproval": true`) {
		t.Fatalf("mcp list = %s, %v", out, err)
	}

	llm.Push(llmtest.Calls(llmtest.Call("call_1", "mcp_demo_writes_update_page_metadata", `{"uid":2,"title":"About Nordlicht"}`)), llmtest.Text("Renamed."))
	id := enqueue(t, work, env, "Rename page 2 to About Nordlicht.")
	row := awaitStatus(t, ctx, work, id, store.RunWaitingForApproval)
	if got := titleOf(t, site, 2); got != "About us" {
		t.Fatalf("the page changed before the approval: %q", got)
	}

	out, errOut, err := run(t, ctx, work, env, "runs", "approve", id, "--as", "admin", "--digest", row.TurnDigest)
	if err != nil {
		t.Fatalf("runs approve: %v (%s)", err, errOut)
	}
	if row := awaitStatus(t, ctx, work, id, store.RunCompleted); row.Status != store.RunCompleted {
		t.Fatalf("run = %+v (%s)", row, out)
	}
	if got := titleOf(t, site, 2); got != "About Nordlicht" {
		t.Errorf("page 2 title = %q after the approval", got)
	}
	if n := countRows(t, site, `SELECT COUNT(*) FROM sys_history WHERE tablename = 'pages' AND recuid = 2`); n != before+1 {
		t.Errorf("sys_history rows for pages:2 = %d, want %d", n, before+1)
	}
	// A second approval of the same turn is refused and writes nothing.
	if _, _, err := run(t, ctx, work, env, "runs", "approve", id, "--as", "admin", "--digest", row.TurnDigest); err == nil {
		t.Error("a second approval was accepted")
	}
	if n := countRows(t, site, `SELECT COUNT(*) FROM sys_history WHERE tablename = 'pages' AND recuid = 2`); n != before+1 {
		t.Errorf("after the second approval: %d history rows, want %d", n, before+1)
	}
	if strings.Contains(p.logs.String(), "t3o_") {
		t.Error("an OAuth token is in the demo's output")
	}
}

// TestServeNeverStartsTheDemoWriteServer: serve on a demo directory
// offers no write server and registers none; only the demo command
// imports package demowrite.
func TestServeNeverStartsTheDemoWriteServer(t *testing.T) {
	t.Parallel()
	work := demoDir(t)
	p := startServeProcess(t, work, nil, "serve")
	out, _, err := run(t, context.Background(), work, nil, "mcp", "list", "--json")
	if err != nil || strings.Contains(out, "demo_writes") {
		t.Errorf("mcp list after serve = %s, %v", out, err)
	}
	if strings.Contains(strings.ToLower(p.logs.String()), "demo write server") {
		t.Errorf("serve started the demo write server:\n%s", p.logs.String())
	}
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(f, "_test.go") && strings.Contains(string(b), `"github.com/t3agent/t3agent/internal/demowrite"`) && f != "demo.go" && f != "demowrites.go" {
			t.Errorf("%s imports package demowrite; only the demo command may", f)
		}
	}
}

func openSite(t *testing.T, work string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(work, cli.DefaultDataDir, "site.db")+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func countRows(t *testing.T, db *sql.DB, q string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func titleOf(t *testing.T, db *sql.DB, uid int) string {
	t.Helper()
	var s string
	if err := db.QueryRow(`SELECT title FROM pages WHERE uid = ?`, uid).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// awaitStatus reads the run from the store until it has status; another
// process changes it, so there is no signal to wait on but the store.
func awaitStatus(t *testing.T, ctx context.Context, work, id string, status store.RunStatus) store.Run {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		row := runRow(t, ctx, work, id)
		if row.Status == status || time.Now().After(deadline) {
			if row.Status != status {
				b, _ := json.Marshal(row)
				t.Fatalf("run %s is %s, not %s, after a minute: %s", id, row.Status, status, b)
			}
			return row
		}
		<-tick.C
	}
}
