package mcp_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/secret"
)

const (
	tokenA = "tok-A-9f8e7d6c5b4a"
	tokenB = "tok-B-0a1b2c3d4e5f"
)

// TestCredentials checks that each server's credential reaches its own
// server only, is sealed at rest, is never in logs, errors, results or
// the server view, and that changing it retires the pooled session.
func TestCredentials(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := newFixture(t)
	srv := newSDKServer(t, serverKinds[2]) // sessions: pooling shows
	f.add(t, "bearer", srv.URL, func(p *mcp.AddParams) { p.Auth, p.Credential = mcp.AuthBearer, tokenA })
	f.add(t, "header", srv.URL, func(p *mcp.AddParams) {
		p.Auth, p.AuthHeader, p.Credential = mcp.AuthHeader, "X-Api-Key", tokenB
	})
	g := f.gated(t)
	f.importTools(t, g, "bearer", "mcp_bearer_echo", "mcp_bearer_fails")
	f.importTools(t, g, "header", "mcp_header_echo")

	var seen []string
	for _, name := range []string{"mcp_bearer_echo", "mcp_header_echo", "mcp_bearer_echo", "mcp_bearer_fails"} {
		res := g.invoke(ctx, name, `{"text":"hi"}`)
		seen = append(seen, res.Content)
	}
	srv.rec.mu.Lock()
	for i, m := range srv.rec.methods {
		a, k := srv.rec.auth[i], srv.rec.apiKeys[i]
		if a != "" && a != "Bearer "+tokenA || k != "" && k != tokenB || a != "" && k != "" {
			t.Errorf("request %d (%s) carried Authorization %q and X-Api-Key %q: credentials mixed", i, m, a, k)
		}
		if a == "" && k == "" && strings.HasPrefix(m, "POST") {
			t.Errorf("request %d (%s) carried no credential", i, m)
		}
	}
	srv.rec.mu.Unlock()

	// Sealed at rest, bound to its server.
	row := f.server(t, "bearer")
	if strings.Contains(row.SealedCredential, tokenA) || row.SealedCredential == "" {
		t.Errorf("the stored credential is not sealed: %q", row.SealedCredential)
	}
	if _, err := f.keys.Open(row.SealedCredential, "mcp_server:header"); err == nil {
		t.Error("the credential opens for another server")
	}
	view, err := f.svc.Server(ctx, "bearer")
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(view)
	rowJS, _ := json.Marshal(row)
	seen = append(seen, string(js), string(rowJS), view.URL)

	// A new credential: the next call opens a new session with it.
	inits := srv.rec.count("initialize")
	newTok := tokenA + "-2"
	if _, err := f.svc.Update(ctx, mcp.UpdateParams{Identifier: "bearer", Credential: &newTok, By: "admin"}); err != nil {
		t.Fatal(err)
	}
	if res := g.invoke(ctx, "mcp_bearer_echo", `{"text":"again"}`); res.IsError {
		t.Fatalf("call after the credential change: %+v", res)
	}
	if srv.rec.count("initialize") != inits+1 {
		t.Errorf("the credential change did not retire the session (%d handshakes after %d)", srv.rec.count("initialize"), inits)
	}
	if last := srv.rec.authSeen(); last[len(last)-1] != "Bearer "+newTok {
		t.Errorf("the last request carried %q, want the new token", last[len(last)-1])
	}

	// Refusals and failures name no credential either.
	unauthorized := newRawServer(t, "tools/call", func(w http.ResponseWriter, _ *http.Request, _ json.RawMessage) {
		http.Error(w, "no", http.StatusUnauthorized)
	})
	f.add(t, "denied", unauthorized.URL, func(p *mcp.AddParams) { p.Auth, p.Credential = mcp.AuthBearer, tokenA })
	f.importTools(t, g, "denied", "mcp_denied_echo")
	res := g.invoke(ctx, "mcp_denied_echo", `{}`)
	if !res.IsError || !strings.Contains(res.Content, "HTTP 401") {
		t.Errorf("401 = %+v", res)
	}
	seen = append(seen, res.Content)
	_, err = f.svc.Ping(ctx, "denied")
	if err != nil {
		seen = append(seen, err.Error())
	}

	// A keyring that cannot open the value fails closed.
	otherKey, _ := secret.NewKey()
	other, _ := secret.NewKeyring(otherKey)
	g2 := newFixtureOn(t, f, other)
	_, err = g2.Ping(ctx, "bearer")
	if mcp.KindOf(err) != mcp.KindCredential {
		t.Errorf("Ping with the wrong master key: %v, want a credential error", err)
	}
	seen = append(seen, err.Error())
	noKeys := newFixtureOn(t, f, nil)
	if _, err := noKeys.Ping(ctx, "bearer"); mcp.KindOf(err) != mcp.KindCredential {
		t.Errorf("Ping without a master key: %v", err)
	}
	if _, err := noKeys.Add(ctx, mcp.AddParams{Identifier: "x", URL: srv.URL, Auth: mcp.AuthBearer, Credential: tokenA, By: "a"}); err == nil {
		t.Error("a credential was stored without a master key")
	}

	seen = append(seen, f.logs.String())
	for _, s := range seen {
		for _, tok := range []string{tokenA, tokenB} {
			if strings.Contains(s, tok) {
				t.Errorf("the credential %q leaked into: %.300s", tok, s)
			}
		}
	}
	if !slices.ContainsFunc(strings.Split(f.logs.String(), "\n"), func(l string) bool { return strings.Contains(l, "MCP call failed") }) {
		t.Error("the failed call was not logged at all (the leak check would be vacuous)")
	}
}

// newFixtureOn is a second Service on f's store with another keyring.
func newFixtureOn(t *testing.T, f *fixture, keys *secret.Keyring) *mcp.Service {
	t.Helper()
	svc, err := mcp.New(mcp.Params{Store: f.st, Keyring: keys, Logger: f.log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	return svc
}
