package mcpauth_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/mcpauth"
	"github.com/t3agent/t3agent/internal/secret"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
)

// The conformance suite runs a client command per scenario. That command
// is this test binary itself, re-executed with conformanceClientEnv set
// (TestMain turns it into the client): it needs no separate build, and
// the client is t3agent's real one — a Service over a SQLite store, a
// Manager, a login that follows the authorization URL (the suite's
// authorization servers approve without a person), an import and a call
// — with nothing conformance-specific shipped in the t3agent binary.
const conformanceClientEnv = "T3AGENT_CONFORMANCE_CLIENT"

// conformanceScenarios are every client scenario of conformance 0.1.12.
var conformanceScenarios = []string{
	"initialize",
	"tools_call",
	"sse-retry",
	"elicitation-sep1034-client-defaults",
	"auth/metadata-default",
	"auth/metadata-var1",
	"auth/metadata-var2",
	"auth/metadata-var3",
	"auth/basic-cimd",
	"auth/scope-from-www-authenticate",
	"auth/scope-from-scopes-supported",
	"auth/scope-omitted-when-undefined",
	"auth/scope-step-up",
	"auth/scope-retry-limit",
	"auth/token-endpoint-auth-basic",
	"auth/token-endpoint-auth-post",
	"auth/token-endpoint-auth-none",
	"auth/resource-mismatch",
	"auth/pre-registration",
	"auth/2025-03-26-oauth-metadata-backcompat",
	"auth/2025-03-26-oauth-endpoint-fallback",
	"auth/client-credentials-jwt",
	"auth/client-credentials-basic",
}

// knownFailing are scenarios that fail today, with the reason; they are
// run and reported, and a pass makes the test fail so the entry is
// removed.
var knownFailing = map[string]string{
	// Conformance 0.1.12 serves these authorization servers under /tenant1
	// (the protected resource metadata names http://host/tenant1) but
	// their metadata says "issuer": "http://host". RFC 8414 §3.3 requires
	// the two to be identical, and the Go SDK (v1.8.0) refuses the
	// metadata, as t3agent must: accepting another issuer's metadata
	// would defeat the mix-up defence. Later suite releases fixed it.
	"auth/metadata-var2": "the suite's metadata issuer differs from its issuer URL (RFC 8414 §3.3)",
	"auth/metadata-var3": "the suite's metadata issuer differs from its issuer URL (RFC 8414 §3.3)",
	// The suite's server sends elicitation/create unrelated to the call
	// (server.request without a related request id), so on the
	// standalone GET stream, which t3agent does not open: it answers only
	// questions asked on the call's own stream or as input_required.
	"elicitation-sep1034-client-defaults": "the question comes on the standalone stream, which t3agent does not open",
}

// TestConformanceClient runs the official MCP conformance suite's client
// scenarios against t3agent's MCP client. It needs
// T3AGENT_TEST_MCP_CONFORMANCE (the suite's dist/index.js, installed
// beside @modelcontextprotocol/sdk 1.25.2 by .ci/run); locally it skips
// without it.
func TestConformanceClient(t *testing.T) {
	t.Parallel()
	cli := os.Getenv("T3AGENT_TEST_MCP_CONFORMANCE")
	if cli == "" {
		t.Skip("T3AGENT_TEST_MCP_CONFORMANCE is not set (see .ci/run)")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range conformanceScenarios {
		t.Run(strings.ReplaceAll(sc, "/", "_"), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "node", cli, "client", "--command", self, "--scenario", sc, "-o", t.TempDir(), "--timeout", "60000")
			cmd.Env = append(os.Environ(), conformanceClientEnv+"=1")
			out, err := cmd.CombinedOutput()
			passed := err == nil && strings.Contains(string(out), ", 0 failed")
			if why, known := knownFailing[sc]; known {
				if passed {
					t.Errorf("scenario %s passes now; remove it from knownFailing (%s)", sc, why)
				} else {
					t.Logf("scenario %s fails as known: %s", sc, why)
				}
				return
			}
			if !passed {
				t.Errorf("scenario %s: %v\n%s", sc, err, out)
			}
		})
	}
}

// conformanceClient is the client the suite runs: the server URL is the
// last argument, the scenario and its context come in the environment.
func conformanceClient() int {
	serverURL := os.Args[len(os.Args)-1]
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	var conf map[string]any
	_ = json.Unmarshal([]byte(os.Getenv("MCP_CONFORMANCE_CONTEXT")), &conf)
	if err := runConformance(serverURL, scenario, conf); err != nil {
		fmt.Fprintf(os.Stderr, "scenario %s: %v\n", scenario, err)
		return 1
	}
	return 0
}

func runConformance(serverURL, scenario string, conf map[string]any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	dir, err := os.MkdirTemp("", "t3agent-conformance-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	st, err := store.Open(ctx, "sqlite:"+filepath.Join(dir, "t3agent.db"), store.OpenParams{})
	if err != nil {
		return err
	}
	defer st.Close()
	key, _ := secret.NewKey()
	keys, err := secret.NewKeyring(key)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	client, err := mcp.NewHTTPClient(nil)
	if err != nil {
		return err
	}
	mgr, err := mcpauth.New(mcpauth.Params{
		Store: st, Keyring: keys, HTTPClient: client, Logger: log,
		ClientMetadataURL: "https://conformance-test.local/client-metadata.json",
		Authorize:         mcpauth.Follow(client),
	})
	if err != nil {
		return err
	}
	svc, err := mcp.New(mcp.Params{Store: st, Keyring: keys, Logger: log, ClientVersion: "conformance", OAuth: mgr, Timeout: 10 * time.Second})
	if err != nil {
		return err
	}
	defer svc.Close()
	if _, err := svc.Add(ctx, mcp.AddParams{Identifier: "conf", URL: serverURL, DataClass: tool.PublicContent, Enabled: true, By: "conformance"}); err != nil {
		return err
	}
	str := func(k string) string { s, _ := conf[k].(string); return s }
	if strings.HasPrefix(scenario, "auth/") {
		cp := mcpauth.ConfigureParams{Server: "conf", RedirectURL: "http://localhost:3000/callback", ClientID: str("client_id"), ClientSecret: str("client_secret")}
		if strings.HasPrefix(scenario, "auth/client-credentials") {
			cp.Flow, cp.RedirectURL, cp.PrivateKeyPEM = mcpauth.FlowClientCredentials, "", str("private_key_pem")
		}
		if err := mgr.Configure(ctx, cp); err != nil {
			return err
		}
		if _, err := mgr.Login(ctx, mcpauth.LoginParams{
			Server: "conf", Fetch: mcpauth.Follow(client),
			Connect: func(ctx context.Context, h auth.OAuthHandler) error {
				_, err := svc.Authorize(ctx, mcp.AuthorizeParams{Server: "conf", Handler: h, Timeout: 20 * time.Second})
				return err
			},
		}); err != nil {
			return err
		}
	}
	if _, err := svc.Import(ctx, mcp.ImportParams{Server: "conf"}); err != nil {
		return err
	}
	call := func(name string, args string) error {
		// Nobody is there to answer a question: the suite's scenario asks
		// for its schema's defaults (SEP-1034), which a diagnostic call
		// accepts when told to.
		res, err := svc.Call(ctx, mcp.CallParams{Server: "conf", Tool: name, Args: json.RawMessage(args), Elicitation: mcp.ElicitDefaults})
		if err != nil {
			return err
		}
		if res.IsError {
			return fmt.Errorf("tool %s answered with an error: %s", name, res.Content)
		}
		return nil
	}
	switch {
	case scenario == "initialize":
		return nil
	case scenario == "tools_call":
		return call("add_numbers", `{"a":5,"b":3}`)
	case scenario == "sse-retry":
		return call("test_reconnection", `{}`)
	case scenario == "elicitation-sep1034-client-defaults":
		return call("test_client_elicitation_defaults", `{}`)
	case strings.HasPrefix(scenario, "auth/"):
		return call("test-tool", `{}`)
	}
	return fmt.Errorf("unknown scenario %q", scenario)
}
