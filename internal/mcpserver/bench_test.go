package mcpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/mcpserver"
	"github.com/t3agent/t3agent/internal/tool"
)

// benchTool is a builtin read over the demo site.
const benchTool = "get_page_content"

// rawCall is the wire request a 2026-07-28 host sends for one call.
const rawCall = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},` +
	`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"get_page_content","arguments":{"uid":1}}}`

// BenchmarkReadCall is one read-tool call three ways: "gate" is the
// in-process gate path, as `t3agent tools call` makes it; "http" is the
// same call through /mcp as a host's one HTTP request (protocol
// 2026-07-28: bearer check, the SDK's server, the gate, redaction, the
// call's record); "sdk" is that request made by the official Go SDK's
// client, whose own cost it adds. Each reports its median as p50-ns; the
// facade's overhead is http minus gate (docs/performance.md).
func BenchmarkReadCall(b *testing.B) {
	e := setup(b, envOptions{facade: func(p *mcpserver.Params) { p.CallsPerCredential, p.CallsPerUser = -1, -1 }})
	ctx := context.Background()
	args := map[string]any{"uid": 1}
	raw, _ := json.Marshal(args)
	measure := func(b *testing.B, call func() error) {
		var d []time.Duration
		for b.Loop() {
			start := time.Now()
			if err := call(); err != nil {
				b.Fatal(err)
			}
			d = append(d, time.Since(start))
		}
		slices.Sort(d)
		b.ReportMetric(float64(d[len(d)/2].Nanoseconds()), "p50-ns")
	}
	b.Run("gate", func(b *testing.B) {
		p := gate.InvokeParams{Name: benchTool, Args: raw, Call: tool.Call{Actor: e.f.Users["admin"]}, Config: gate.Config{Name: "mcp", TrustZone: tool.ZoneExternalGlobal}}
		measure(b, func() error {
			if res := e.f.Gate.Invoke(ctx, p); res.IsError {
				return errorString(res.Content)
			}
			return nil
		})
	})
	hc := &http.Client{}
	post := func(version, body string) func() error {
		return func() error {
			req, _ := http.NewRequest(http.MethodPost, e.ts.URL+"/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", version)
			req.Header.Set("Mcp-Method", "tools/call")
			req.Header.Set("Mcp-Name", benchTool)
			req.Header.Set("Authorization", "Bearer "+e.tokens["admin-host"])
			resp, err := hc.Do(req)
			if err != nil {
				return err
			}
			out, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(out), `"content"`) || strings.Contains(string(out), `"isError":true`) {
				return errorString(string(out))
			}
			return nil
		}
	}
	b.Run("http", func(b *testing.B) { measure(b, post(modern, rawCall)) })
	b.Run("http-2025-06-18", func(b *testing.B) {
		measure(b, post(older, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_page_content","arguments":{"uid":1}}}`))
	})
	b.Run("sdk", func(b *testing.B) {
		cs := e.connect("/mcp", e.tokens["admin-host"], modern, nil)
		params := &mcp.CallToolParams{Name: benchTool, Arguments: args}
		measure(b, func() error {
			res, err := cs.CallTool(ctx, params)
			if err == nil && res.IsError {
				err = errorString(text(res))
			}
			return err
		})
	})
}

type errorString string

func (e errorString) Error() string { return string(e) }
