package mcpserver_test

import (
	"context"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// conformanceScenarios are the server scenarios of the MCP conformance
// suite (@modelcontextprotocol/conformance, pinned in .ci/run) that apply
// to a tools server whose tools are the gate's. The others test the
// reference server's own fixture tools (test_simple_text, test_image, …),
// prompts, resources, completion, logging, sampling or server-side SSE
// streams, none of which t3agent offers; docs/mcp-server.md lists them
// with the reason.
var conformanceScenarios = []string{
	"server-initialize",
	"ping",
	"tools-list",
	"dns-rebinding-protection",
}

// withToken is a proxy that adds a service token to every request, as a
// host configured with one would; the suite itself sends none. It keeps
// the Host the suite sent, so DNS-rebinding checks reach the server.
func withToken(t *testing.T, target, token string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &httputil.ReverseProxy{FlushInterval: -1, Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(u)
		pr.Out.Host = pr.In.Host
		pr.Out.Header.Set("Authorization", "Bearer "+token)
	}}
	ts := httptest.NewServer(p)
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestConformance runs the official MCP conformance suite's applicable
// server scenarios against /mcp. It needs T3AGENT_TEST_MCP_CONFORMANCE,
// the suite's dist/index.js, which .ci/run installs; locally it skips
// without it.
func TestConformance(t *testing.T) {
	t.Parallel()
	cli := os.Getenv("T3AGENT_TEST_MCP_CONFORMANCE")
	if cli == "" {
		t.Skip("T3AGENT_TEST_MCP_CONFORMANCE is not set (see .ci/run)")
	}
	e := setup(t, envOptions{})
	base := withToken(t, e.ts.URL, e.tokens["editor-host"])
	for _, sc := range conformanceScenarios {
		t.Run(sc, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "node", cli, "server", "--url", base+"/mcp", "--scenario", sc, "-o", t.TempDir())
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), ", 0 failed") {
				t.Errorf("scenario %s: %v\n%s", sc, err, out)
			}
		})
	}
}
