package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/t3agent/t3agent/internal/demo"
	"github.com/t3agent/t3agent/internal/demowrite"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
)

// The demo's write server as t3agent knows it.
const (
	demoWritesID    = "demo_writes"
	demoWritesAdmin = "admin"
)

// startDemoWrites starts the demo's write server (package demowrite) on
// its own loopback port, logs in to it as the demo's admin through its
// OAuth flow, and registers it as the MCP server demo_writes: data class
// editorContent, approval required, enabled, its tools imported and
// enabled. Only `t3agent demo` calls it, never serve. The returned stop
// ends the server.
func (a *app) startDemoWrites(ctx context.Context, r *runtime, res *demo.Result, addr string, out io.Writer) (func(), error) {
	if r.keyring == nil {
		return nil, errors.New("the demo write server needs the demo's master key")
	}
	admin, ok := res.User(demoWritesAdmin)
	if !ok || admin.Password == "" {
		return nil, errors.New("the demo write server needs the demo admin's password (credentials.txt)")
	}
	ws, err := demowrite.New(ctx, demowrite.Params{
		Demo: res, Site: r.site, Store: r.store, Key: r.keyring.Derive("demo-writes-oauth"),
		Addr: addr, SiteName: r.cfg.Site.Name, Logger: a.logger,
	})
	if err != nil {
		return nil, err
	}
	if err := ws.Start(ctx); err != nil {
		ws.Stop()
		return nil, err
	}
	if err := a.registerDemoWrites(ctx, r, ws, admin.Password); err != nil {
		ws.Stop()
		return nil, err
	}
	a.logger.Info("demo write server", "url", ws.URL()+"/mcp", "mcp_server", demoWritesID)
	fmt.Fprintf(out, "Demo write server: %s/mcp (OAuth 2.1; MCP server %s, its writes wait for approval)\n", ws.URL(), demoWritesID)
	return ws.Stop, nil
}

// registerDemoWrites points the demo_writes record at the running server
// with a fresh token, then imports and enables its tools. An operator's
// later changes to the record (data class, approval, a disabled tool) are
// kept; only the URL and the credential follow the server.
func (a *app) registerDemoWrites(ctx context.Context, r *runtime, ws *demowrite.Server, password string) error {
	tok, err := demowrite.Login(ctx, demowrite.LoginParams{URL: ws.URL(), Username: demoWritesAdmin, Password: password, ClientName: "t3agent demo"})
	if err != nil {
		return err
	}
	endpoint := ws.URL() + "/mcp"
	bearer := mcp.AuthBearer
	_, err = r.mcp.Server(ctx, demoWritesID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		_, err = r.mcp.Add(ctx, mcp.AddParams{
			Identifier: demoWritesID, Name: "Demo site writes",
			Description: "The demo's write server: page metadata, hidden content drafts and file alternative texts of the demo site, each recorded in sys_history.",
			URL:         endpoint, Auth: bearer, Credential: tok.Access, DataClass: tool.EditorContent, Enabled: true, By: demoWritesAdmin,
		})
	case err == nil:
		_, err = r.mcp.Update(ctx, mcp.UpdateParams{Identifier: demoWritesID, URL: &endpoint, Auth: &bearer, Credential: &tok.Access, By: demoWritesAdmin})
	}
	if err != nil {
		return fmt.Errorf("the demo write server cannot be registered: %w", err)
	}
	if _, err := r.mcp.Import(ctx, mcp.ImportParams{Server: demoWritesID, Registry: r.registry}); err != nil {
		return fmt.Errorf("the demo write server's tools cannot be imported: %w", err)
	}
	tools, err := r.mcp.Tools(ctx, demoWritesID)
	if err != nil {
		return err
	}
	overrides, err := r.store.ToolOverrides(ctx)
	if err != nil {
		return err
	}
	decided := map[string]bool{}
	for _, o := range overrides {
		decided[o.Name] = true
	}
	// A write tool is off until an admin enables it; the demo does that
	// once, so a newcomer's model is offered them, and keeps a later
	// decision.
	for _, t := range tools {
		if decided[t.Name] {
			continue
		}
		if _, err := r.gate.Availability().SetTool(ctx, gate.SetToolParams{Name: t.Name, Enabled: true, By: demoWritesAdmin}); err != nil {
			return fmt.Errorf("the demo write tool %s cannot be enabled: %w", t.Name, err)
		}
	}
	return nil
}
