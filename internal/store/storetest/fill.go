package storetest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/store"
)

// FillParams size Fill. The zero value writes the sample only.
type FillParams struct {
	// Runs finished runs with EventsPerRun events each are added beside
	// the sample, for a store of a realistic size.
	Runs, EventsPerRun int
}

// Fill writes the suite's sample data into st through the Store
// interface: at least one row in every table the schema has, with the
// values a lossy copy would change (non-ASCII text, NULL beside zero,
// sealed values, timestamps with microseconds). Backup, restore and copy
// are tested on a store it filled; a migration that adds a table must add
// rows for it here, or those tests fail naming the empty table.
func Fill(tb testing.TB, st store.Store, p FillParams) {
	tb.Helper()
	ctx := tb.Context()
	must := func(what string, err error) {
		tb.Helper()
		if err != nil {
			tb.Fatalf("storetest.Fill: %s: %v", what, err)
		}
	}

	// Overrides and settings.
	_, err := st.SetToolOverride(ctx, store.SetToolOverrideParams{Name: "search_records", Enabled: false, UpdatedBy: "admin"})
	must("tool override", err)
	_, err = st.SetToolGroupOverride(ctx, store.SetToolGroupOverrideParams{Group: "mcp_docs", Enabled: true, UpdatedBy: "admin"})
	must("group override", err)
	_, err = st.SetSettings(ctx, []store.SetSettingParams{{Key: "tools.enforcement", Value: "observe"}, {Key: "grüße", Value: ""}})
	must("settings", err)

	// Governance events.
	_, err = st.RecordGovernanceEvents(ctx, []store.RecordGovernanceEventParams{event(1), event(2), event(3)})
	must("governance events", err)

	// The MCP catalogue, a sealed credential included.
	_, err = st.CreateMCPServer(ctx, mcpServer("docs"))
	must("MCP server", err)
	_, err = st.ApplyMCPImport(ctx, store.ApplyMCPImportParams{Identifier: "docs", Tools: []store.MCPToolImport{mcpTool("docs", "search"), mcpTool("docs", "write_page")}})
	must("MCP import", err)
	must("MCP contact", st.RecordMCPContact(ctx, store.RecordMCPContactParams{Identifier: "docs", Latency: 42 * time.Millisecond}))
	_, err = st.PutMCPOAuth(ctx, mcpOAuthRecord("docs"))
	must("MCP OAuth record", err)

	// The agent configuration and its telemetry.
	must("agent configuration", st.ApplyAgentConfig(ctx, sampleBatch()))
	in, out, cost := int64(1200), int64(0), int64(180_000_000)
	_, err = st.RecordLLMCall(ctx, store.RecordLLMCallParams{
		RunID: "fill-done", Source: "chat", Operation: "chatTurn", Username: "jürgen", RequestedConfiguration: "support",
		Configuration: "support", Provider: "openai", Model: "gpt-4o-mini", ModelID: "gpt-4o-mini-2024", Success: true,
		InputTokens: &in, OutputTokens: &out, Cost: &cost, Latency: 850 * time.Millisecond, Attempts: 1, Day: "2025-03-14",
	})
	must("provider call", err)
	_, err = st.RecordLLMCall(ctx, store.RecordLLMCallParams{
		RunID: "fill-done", Source: "cli", Operation: "run", Username: "editor", RequestedConfiguration: "support",
		Configuration: "local", FallbackIndex: 1, Provider: "ollama", Model: "llama", ModelID: "llama3.1:8b",
		ErrorClass: "connection", Latency: 10 * time.Second, Attempts: 3, Day: "2025-03-15",
	})
	must("failed provider call", err)

	// Runs: finished, waiting with a sealed state, queued with a sealed request.
	fillRun(tb, st, "fill-done", 3)
	_, err = st.CreateRun(ctx, store.CreateRunParams{
		ID: "fill-waiting", OwnerUsername: "editor", OwnerUID: 7, Configuration: "support", CallerSource: "chat",
		CallerOperation: "chatTurn", Privacy: "full", LeaseOwner: "interactive:host:1", Lease: time.Minute,
		Events: []store.RunEventParams{ev(0, "request", 1, `{"messages":2}`)},
	})
	must("waiting run", err)
	_, err = st.SuspendRun(ctx, store.SuspendRunParams{
		ID: "fill-waiting", LeaseOwner: "interactive:host:1", Status: store.RunWaitingForApproval, Outcome: "awaiting_approval",
		TurnDigest: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", SuspendedState: "t3s1:abcd:sealed-state",
		Events: []store.RunEventParams{ev(1, "approval", 1, `{"pending":[{"name":"mcp_docs_write_page"}]}`)},
	})
	must("suspend run", err)
	_, err = st.EnqueueRun(ctx, store.EnqueueRunParams{CreateRunParams: newRun("fill-queued", "editor"), QueuedRequest: "t3s1:abcd:sealed-request"})
	must("queued run", err)
	for i := range p.Runs {
		fillRun(tb, st, fmt.Sprintf("fill-%06d", i), p.EventsPerRun)
	}

	// Chat: one answered conversation, one waiting for a worker.
	c, err := st.CreateConversation(ctx, store.CreateConversationParams{OwnerUID: 7, OwnerUsername: "editor", Title: "Öffnungszeiten", Task: "chat"})
	must("conversation", err)
	_, err = st.ChangeConversation(ctx, store.ChangeConversationParams{
		ID: c.ID, From: []store.ConversationStatus{store.ConversationIdle}, To: store.ConversationIdle, KeepMessages: -1,
		Append: []store.NewChatMessage{userMsg("Wann habt ihr offen?"), {Role: store.ChatRoleAssistant, Content: "Ich sehe nach.", BesideToolCall: true}, assistantMsg("Mo–Fr 9–17 Uhr.")},
	})
	must("chat messages", err)
	c2, err := st.CreateConversation(ctx, store.CreateConversationParams{OwnerUID: 1, OwnerUsername: "admin"})
	must("second conversation", err)
	_, err = st.ChangeConversation(ctx, store.ChangeConversationParams{
		ID: c2.ID, From: []store.ConversationStatus{store.ConversationIdle}, To: store.ConversationProcessing, KeepMessages: -1,
		Append: []store.NewChatMessage{userMsg("Status?")},
	})
	must("queued chat turn", err)

	// API credentials.
	tok := newToken("ci")
	tok.ExpiresAt = time.Date(2031, 1, 2, 3, 4, 5, 678900000, time.UTC)
	_, err = st.CreateServiceToken(ctx, tok)
	must("service token", err)
	must("web session", st.CreateWebSession(ctx, store.WebSession{
		IDHash: hashOf("cookie"), Username: "editor", CSRFToken: "csrf-cookie", ExpiresAt: time.Now().Add(12 * time.Hour),
	}))

	// t3agent as an MCP server: a host's call record, its OAuth client,
	// a pending authorization, a grant and its tokens.
	_, err = st.RecordMCPCall(ctx, store.RecordMCPCallParams{
		ActorUsername: "editor", ActorUID: 7, Client: "claude-code", Credential: "grant:fill-grant", Method: "tools/call",
		Tool: "search_records", Decision: "allowed", Outcome: "ok", Duration: 3 * time.Millisecond,
	})
	must("MCP host call", err)
	_, err = st.PutOAuthClient(ctx, store.OAuthClient{ClientID: "fill-client", Name: "Cursor", RedirectURIs: []string{"http://127.0.0.1:3000/cb"}, Kind: store.OAuthClientRegistered})
	must("OAuth client", err)
	must("OAuth request", st.CreateOAuthRequest(ctx, store.OAuthRequest{
		ID: "fill-request", ClientID: "fill-client", RedirectURI: "http://127.0.0.1:3000/cb", State: "st", Scopes: []string{"mcp"},
		Resource: "http://127.0.0.1:8080/mcp", CodeChallenge: "abc", CodeChallengeMethod: "S256", ExpiresAt: time.Now().Add(10 * time.Minute),
	}))
	_, err = st.CreateOAuthGrant(ctx, store.OAuthGrant{ID: "fill-grant", Username: "editor", UserUID: 7, ClientID: "fill-client", ClientName: "Cursor", Resource: "http://127.0.0.1:8080/mcp", Scopes: []string{"mcp"}})
	must("OAuth grant", err)
	must("OAuth token", st.CreateOAuthToken(ctx, store.OAuthToken{ID: hashOf("fill-access"), GrantID: "fill-grant", Kind: store.OAuthAccessToken, ExpiresAt: time.Now().Add(time.Hour)}))
}

// fillRun records one finished run with n events (n ≥ 1).
func fillRun(tb testing.TB, st store.Store, id string, n int) {
	tb.Helper()
	ctx := tb.Context()
	n = max(n, 1)
	evs := make([]store.RunEventParams, n)
	for i := range evs {
		payload, _ := json.Marshal(map[string]any{"i": i, "model": "gpt-4o-mini", "text": "Schöne Grüße ✓"})
		evs[i] = ev(int64(i), "llm", 1+i/2, string(payload))
	}
	p := newRun(id, "editor")
	p.Events = evs
	if _, err := st.CreateRun(ctx, p); err != nil {
		tb.Fatalf("storetest.Fill: run %s: %v", id, err)
	}
	_, err := st.SettleRun(ctx, store.SettleRunParams{
		ID: id, LeaseOwner: p.LeaseOwner, Status: store.RunCompleted, Outcome: "completed", TerminationReason: "completed",
		Progress: store.RunProgress{Rounds: 2, ToolCalls: 1, InputTokens: 1200, OutputTokens: 80, Cost: 180_000_000},
		Answer:   `{"content":"Schöne Grüße ✓","beside":["Ich sehe nach."]}`,
	})
	if err != nil {
		tb.Fatalf("storetest.Fill: settle run %s: %v", id, err)
	}
}
