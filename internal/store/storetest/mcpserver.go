package storetest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/store"
)

// ---- t3agent as an MCP server: facade calls and OAuth state ----

// testMCPServerState runs every test of the MCP server's state; Run lists
// it as one entry.
func testMCPServerState(t *testing.T, h harness) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, h harness)
	}{
		{"Calls", testMCPCalls},
		{"Clients", testOAuthClients},
		{"RequestFlow", testOAuthRequestFlow},
		{"RequestExpiry", testOAuthRequestExpiry},
		{"GrantsAndTokens", testOAuthGrantsTokens},
		{"RefreshRotatesOnce", testOAuthRefreshOnce},
		{"Sweep", testOAuthSweep},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, h)
		})
	}
}

func testMCPCalls(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	for i, tool := range []string{"search_records", "get_page"} {
		c, err := f.st.RecordMCPCall(ctx, store.RecordMCPCallParams{
			ActorUsername: "editor", ActorUID: 2, Client: "claude-code", Credential: "grant:g1", Method: "tools/call",
			Tool: tool, Decision: "allowed", Outcome: "ok", Duration: time.Duration(i+1) * time.Millisecond,
		})
		if err != nil || c.ID <= 0 || c.Tool != tool {
			t.Fatalf("RecordMCPCall: %+v, %v", c, err)
		}
	}
	if _, err := f.st.RecordMCPCall(ctx, store.RecordMCPCallParams{ActorUsername: "admin", Method: "tools/list", Decision: "allowed", Outcome: "ok"}); err != nil {
		t.Fatal(err)
	}
	got, err := f.st.MCPCalls(ctx, store.ListMCPCallsParams{ActorUsername: "editor"})
	if err != nil || len(got) != 2 || got[0].Tool != "get_page" || got[0].Duration != 2*time.Millisecond || got[1].Client != "claude-code" {
		t.Fatalf("MCPCalls = %+v, %v", got, err)
	}
	all, err := f.st.MCPCalls(ctx, store.ListMCPCallsParams{})
	if err != nil || len(all) != 3 {
		t.Fatalf("all = %d, %v", len(all), err)
	}
	if _, err := f.st.RecordMCPCall(ctx, store.RecordMCPCallParams{Method: "tools/call", Decision: "", Outcome: "ok"}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("a call without a decision: %v", err)
	}
}

func testOAuthClients(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	if _, err := f.st.OAuthClient(ctx, "c1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing client: %v", err)
	}
	c, err := f.st.PutOAuthClient(ctx, store.OAuthClient{ClientID: "c1", Name: "Cursor", RedirectURIs: []string{"http://127.0.0.1:3000/cb"}, Kind: store.OAuthClientRegistered})
	if err != nil || c.Name != "Cursor" {
		t.Fatalf("PutOAuthClient: %+v, %v", c, err)
	}
	f.clock.Advance(time.Minute)
	c2, err := f.st.PutOAuthClient(ctx, store.OAuthClient{ClientID: "c1", Name: "Cursor 2", RedirectURIs: []string{"http://a/cb", "http://b/cb"}, Kind: store.OAuthClientRegistered})
	if err != nil || !c2.CreatedAt.Equal(c.CreatedAt) || !c2.UpdatedAt.After(c.UpdatedAt) {
		t.Fatalf("update: %+v, %v", c2, err)
	}
	got, err := f.st.OAuthClient(ctx, "c1")
	if err != nil || !slices.Equal(got.RedirectURIs, []string{"http://a/cb", "http://b/cb"}) || got.Name != "Cursor 2" {
		t.Fatalf("OAuthClient = %+v, %v", got, err)
	}
	for _, bad := range []store.OAuthClient{
		{ClientID: "", Name: "x", RedirectURIs: []string{"http://a"}, Kind: store.OAuthClientRegistered},
		{ClientID: "x", Name: "x", Kind: store.OAuthClientRegistered},
		{ClientID: "x", Name: "x", RedirectURIs: []string{"http://a"}, Kind: "confidential"},
	} {
		if _, err := f.st.PutOAuthClient(ctx, bad); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("PutOAuthClient(%+v) = %v, want invalid", bad, err)
		}
	}
}

func newOAuthRequest(f fixture, id string) store.OAuthRequest {
	return store.OAuthRequest{
		ID: id, ClientID: "c1", RedirectURI: "http://127.0.0.1/cb", State: "st", Scopes: []string{"mcp"},
		Resource: "http://127.0.0.1:8080/mcp", CodeChallenge: "abc", CodeChallengeMethod: "S256",
		ExpiresAt: f.clock.Now().Add(10 * time.Minute),
	}
}

func testOAuthRequestFlow(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	if err := f.st.CreateOAuthRequest(ctx, newOAuthRequest(f, "r1")); err != nil {
		t.Fatal(err)
	}
	if err := f.st.CreateOAuthRequest(ctx, newOAuthRequest(f, "r1")); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a taken id: %v", err)
	}
	consent := hashOf("consent")
	if err := f.st.CompleteOAuthRequest(ctx, "r1", consent); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("completed before a login: %v", err)
	}
	if err := f.st.AuthenticateOAuthRequest(ctx, store.AuthenticateOAuthRequestParams{ID: "r1", Username: "editor", ConsentHash: consent}); err != nil {
		t.Fatal(err)
	}
	if err := f.st.SetOAuthRequestCode(ctx, "r1", hashOf("code")); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a code before consent: %v", err)
	}
	if err := f.st.CompleteOAuthRequest(ctx, "r1", hashOf("other")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("completed with the wrong consent secret: %v", err)
	}
	if err := f.st.CompleteOAuthRequest(ctx, "r1", consent); err != nil {
		t.Fatal(err)
	}
	if err := f.st.AuthenticateOAuthRequest(ctx, store.AuthenticateOAuthRequestParams{ID: "r1", Username: "admin", ConsentHash: consent}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a second login after consent: %v", err)
	}
	if err := f.st.SetOAuthRequestCode(ctx, "r1", hashOf("code")); err != nil {
		t.Fatal(err)
	}
	if err := f.st.SetOAuthRequestCode(ctx, "r1", hashOf("code2")); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a second code: %v", err)
	}
	r, err := f.st.OAuthRequestByCode(ctx, hashOf("code"))
	if err != nil || r.ID != "r1" || r.Username != "editor" || !r.Done || r.AuthTime.IsZero() || !slices.Equal(r.Scopes, []string{"mcp"}) || r.Resource != "http://127.0.0.1:8080/mcp" {
		t.Fatalf("OAuthRequestByCode = %+v, %v", r, err)
	}
	if err := f.st.DeleteOAuthRequest(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.OAuthRequestByCode(ctx, hashOf("code")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a redeemed code: %v", err)
	}
}

func testOAuthRequestExpiry(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	if err := f.st.CreateOAuthRequest(ctx, newOAuthRequest(f, "r1")); err != nil {
		t.Fatal(err)
	}
	consent := hashOf("consent")
	if err := f.st.AuthenticateOAuthRequest(ctx, store.AuthenticateOAuthRequestParams{ID: "r1", Username: "editor", ConsentHash: consent}); err != nil {
		t.Fatal(err)
	}
	if err := f.st.CompleteOAuthRequest(ctx, "r1", consent); err != nil {
		t.Fatal(err)
	}
	if err := f.st.SetOAuthRequestCode(ctx, "r1", hashOf("code")); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(10 * time.Minute)
	if _, err := f.st.OAuthRequestByCode(ctx, hashOf("code")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an expired code: %v", err)
	}
	if _, err := f.st.OAuthRequest(ctx, "r1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an expired request: %v", err)
	}
}

func testOAuthGrantsTokens(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	g, err := f.st.CreateOAuthGrant(ctx, store.OAuthGrant{ID: "g1", Username: "editor", UserUID: 2, ClientID: "c1", ClientName: "Cursor", Resource: "http://x/mcp", Scopes: []string{"mcp"}})
	if err != nil || g.ID != "g1" || !g.RevokedAt.IsZero() {
		t.Fatalf("CreateOAuthGrant: %+v, %v", g, err)
	}
	if _, err := f.st.CreateOAuthGrant(ctx, store.OAuthGrant{ID: "g2", Username: "admin", ClientID: "c1", Resource: "http://x/mcp"}); err != nil {
		t.Fatal(err)
	}
	exp := f.clock.Now().Add(time.Hour)
	if err := f.st.CreateOAuthToken(ctx, store.OAuthToken{ID: "a1", GrantID: "g1", Kind: store.OAuthAccessToken, ExpiresAt: exp}); err != nil {
		t.Fatal(err)
	}
	tok, gr, err := f.st.OAuthToken(ctx, "a1")
	if err != nil || tok.GrantID != "g1" || gr.Username != "editor" || !tok.ExpiresAt.Equal(exp.UTC().Truncate(time.Microsecond)) {
		t.Fatalf("OAuthToken = %+v %+v, %v", tok, gr, err)
	}
	if err := f.st.TouchOAuthGrant(ctx, "g1"); err != nil {
		t.Fatal(err)
	}
	list, err := f.st.OAuthGrants(ctx, store.ListOAuthGrantsParams{Username: "editor"})
	if err != nil || len(list) != 1 || list[0].LastUsedAt.IsZero() {
		t.Fatalf("OAuthGrants(editor) = %+v, %v", list, err)
	}
	if err := f.st.RevokeOAuthGrant(ctx, "g1"); err != nil {
		t.Fatal(err)
	}
	if err := f.st.RevokeOAuthGrant(ctx, "g1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("revoked twice: %v", err)
	}
	if _, gr, err := f.st.OAuthToken(ctx, "a1"); err != nil || gr.RevokedAt.IsZero() {
		t.Errorf("a token of a revoked grant shows it live: %+v, %v", gr, err)
	}
	if err := f.st.CreateOAuthToken(ctx, store.OAuthToken{ID: "a2", GrantID: "g1", Kind: store.OAuthAccessToken, ExpiresAt: exp}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a token for a revoked grant: %v", err)
	}
	live, err := f.st.OAuthGrants(ctx, store.ListOAuthGrantsParams{})
	if err != nil || len(live) != 1 || live[0].ID != "g2" {
		t.Fatalf("live grants = %+v, %v", live, err)
	}
	every, err := f.st.OAuthGrants(ctx, store.ListOAuthGrantsParams{Revoked: true})
	if err != nil || len(every) != 2 {
		t.Fatalf("every grant = %+v, %v", every, err)
	}
	if err := f.st.RevokeOAuthToken(ctx, "a1"); err != nil {
		t.Fatal(err)
	}
	if tok, _, err := f.st.OAuthToken(ctx, "a1"); err != nil || tok.RevokedAt.IsZero() {
		t.Errorf("revoked token: %+v, %v", tok, err)
	}
}

// testOAuthRefreshOnce: of two concurrent rotations of one refresh token
// exactly one wins; a replay is a conflict.
func testOAuthRefreshOnce(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	if _, err := f.st.CreateOAuthGrant(ctx, store.OAuthGrant{ID: "g1", Username: "editor", ClientID: "c1", Resource: "http://x/mcp"}); err != nil {
		t.Fatal(err)
	}
	id := hashOf("refresh")
	if err := f.st.CreateOAuthToken(ctx, store.OAuthToken{ID: id, GrantID: "g1", Kind: store.OAuthRefreshToken, ExpiresAt: f.clock.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 2)
	for range 2 {
		go func() { errs <- f.st.UseOAuthRefreshToken(ctx, id) }()
	}
	won := 0
	for range 2 {
		err := <-errs
		switch {
		case err == nil:
			won++
		case !errors.Is(err, store.ErrConflict):
			t.Errorf("rotate: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d rotations won, want 1", won)
	}
	if err := f.st.UseOAuthRefreshToken(ctx, id); !errors.Is(err, store.ErrConflict) {
		t.Errorf("replay: %v", err)
	}
}

func testOAuthSweep(t *testing.T, h harness) {
	f := h.setup(t)
	ctx := t.Context()
	if err := f.st.CreateOAuthRequest(ctx, newOAuthRequest(f, "r1")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.CreateOAuthGrant(ctx, store.OAuthGrant{ID: "g1", Username: "editor", ClientID: "c1", Resource: "http://x/mcp"}); err != nil {
		t.Fatal(err)
	}
	if err := f.st.CreateOAuthToken(ctx, store.OAuthToken{ID: "a1", GrantID: "g1", Kind: store.OAuthAccessToken, ExpiresAt: f.clock.Now().Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if err := f.st.CreateOAuthToken(ctx, store.OAuthToken{ID: "r1", GrantID: "g1", Kind: store.OAuthRefreshToken, ExpiresAt: f.clock.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(11 * time.Minute)
	n, err := f.st.DeleteExpiredOAuth(ctx, f.clock.Now().Add(-24*time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("DeleteExpiredOAuth = %d, %v; want the request and the access token", n, err)
	}
	if _, _, err := f.st.OAuthToken(ctx, "r1"); err != nil {
		t.Errorf("a live refresh token went: %v", err)
	}
}
