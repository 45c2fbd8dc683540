package mcp_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/logtest"
	"github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/store"
)

// EverythingEnv names the installed @modelcontextprotocol/server-everything
// entry point (dist/index.js); .ci/run installs it and sets it.
const EverythingEnv = "T3AGENT_TEST_MCP_EVERYTHING"

// startEverything runs the reference server's Streamable HTTP transport
// (event-stream answers with sessions) on a free loopback port.
func startEverything(t *testing.T) string {
	t.Helper()
	entry := os.Getenv(EverythingEnv)
	if entry == "" {
		t.Skipf("%s is not set; .ci/run installs @modelcontextprotocol/server-everything", EverythingEnv)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("%s is set but node is not installed: %v", EverythingEnv, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()

	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, entry, "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	var out logtest.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		cancel()
		<-exited
	})

	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for range 600 { // 30 s at most
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			_ = c.Close()
			return "http://" + addr + "/mcp"
		}
		select {
		case <-exited:
			t.Fatalf("server-everything exited before listening:\n%s", out.String())
		case <-tick.C:
		}
	}
	t.Fatalf("server-everything did not listen on %s within 30s:\n%s", addr, out.String())
	return ""
}

// TestEverythingEndToEnd imports the reference server and calls its
// tools through the registry and the gate.
func TestEverythingEndToEnd(t *testing.T) {
	url := startEverything(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	f := newFixture(t)
	f.add(t, "everything", url)
	g := f.gated(t)

	ping, err := f.svc.Ping(ctx, "everything")
	if err != nil || ping.ServerName == "" || ping.ProtocolVersion == "" {
		t.Fatalf("Ping = %+v, %v", ping, err)
	}
	t.Logf("ping: %+v", ping)
	res := f.importTools(t, g, "everything",
		"mcp_everything_echo", "mcp_everything_get-sum", "mcp_everything_get-structured-content", "mcp_everything_get-tiny-image")
	if res.Server.ImportStatus == store.MCPImportError || res.Imported < 4 {
		t.Fatalf("Import = %+v", res)
	}
	t.Logf("imported %d of %d tools; skipped: %q", res.Imported, res.Advertised, res.Skipped)

	// Imported tools of an enabled server are on by default; one the
	// operator switches off is not offered.
	if _, err := g.gate.Availability().SetTool(ctx, gate.SetToolParams{Name: "mcp_everything_get-env", Enabled: false, By: "admin"}); err != nil {
		t.Fatal(err)
	}
	offered, err := g.gate.Offer(ctx, gate.OfferParams{Actor: admin(), Config: gate.Config{TrustZone: "local"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"mcp_everything_echo", "mcp_everything_get-sum", "mcp_everything_get-structured-content", "mcp_everything_get-tiny-image"} {
		if !offered.Has(name) {
			t.Errorf("%s not offered; offered %q", name, offered.Names())
		}
	}
	if offered.Has("mcp_everything_get-env") {
		t.Error("a tool switched off is offered")
	}

	for _, c := range []struct{ tool, args, want string }{
		{"mcp_everything_echo", `{"message":"hello from t3agent"}`, "hello from t3agent"},
		{"mcp_everything_get-sum", `{"a":19,"b":23}`, "42"},
		{"mcp_everything_get-structured-content", `{"location":"Chicago"}`, "36"},
		{"mcp_everything_get-tiny-image", `{}`, "[t3agent reads text only and left out 1 non-text content block(s): image.]"},
	} {
		got := g.invoke(ctx, c.tool, c.args)
		if got.IsError || !strings.Contains(got.Content, c.want) {
			t.Errorf("%s = %+v, want %q", c.tool, got, c.want)
		}
	}
	// A tool the server does not advertise is refused by the gate and
	// never reaches the server.
	got := g.invoke(ctx, "mcp_everything_delete-everything", `{}`)
	if !got.IsError || !strings.Contains(got.Content, "is not available") {
		t.Errorf("an unadvertised tool = %+v", got)
	}
	d, err := g.gate.Decide(ctx, gate.DecideParams{Tool: "mcp_everything_delete-everything", Actor: admin(), Config: gate.Config{TrustZone: "local"}})
	if err != nil || d.Reason != gate.ReasonNotRegistered {
		t.Errorf("Decide(unadvertised) = %+v, %v", d, err)
	}
	if _, err := f.svc.Call(ctx, mcp.CallParams{Server: "everything", Tool: "delete-everything"}); mcp.KindOf(err) != mcp.KindNotImported {
		t.Errorf("the diagnostic call of an unadvertised tool: %v", err)
	}
	if err := f.svc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if f.server(t, "everything").LastContact.IsZero() {
		t.Error("no contact recorded")
	}
}
