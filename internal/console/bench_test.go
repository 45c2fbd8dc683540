package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/chat/chattest"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/web"
)

// benchServer is the real server (API and console) over the chat
// fixture, with the editor's session cookie.
func benchServer(b *testing.B) (*chattest.Fixture, http.Handler, *http.Cookie) {
	b.Helper()
	f := chattest.New(b, chattest.Options{})
	api := &web.API{Site: f.Site, Credentials: f.Store, Runtime: f.Runtime, Chat: f.Service,
		Gate: f.Gate, Configs: f.Tasks, Now: f.Clock.Now}
	srv := web.New(web.Params{Logger: f.Logger, SiteName: "Nordlicht Pumps", Version: "bench", API: api, Console: true})
	body := fmt.Sprintf(`{"username":"editor","password":%q}`, f.Demo.Password(b, "editor"))
	req := httptest.NewRequest("POST", "/api/v1/login", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	if rec.Code != 200 {
		b.Fatalf("login: %d %s", rec.Code, rec.Body)
	}
	for _, c := range rec.Result().Cookies() {
		if c.Name == web.SessionCookie {
			return f, srv, c
		}
	}
	b.Fatal("no session cookie")
	return nil, nil, nil
}

// measure serves path b.N times and reports the median and the 95th
// percentile of the server-side time.
func measure(b *testing.B, h http.Handler, ck *http.Cookie, path, want string) {
	b.Helper()
	var times []time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		req := httptest.NewRequest("GET", path, nil)
		req.AddCookie(ck)
		rec := httptest.NewRecorder()
		start := time.Now()
		h.ServeHTTP(rec, req)
		times = append(times, time.Since(start))
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), want) {
			b.Fatalf("GET %s: %d, lacks %q", path, rec.Code, want)
		}
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(times[len(times)*95/100].Microseconds())/1000, "p95-ms")
}

func benchRunID(i int) string { return fmt.Sprintf("00000000-0000-7000-8000-%012d", i) }

// BenchmarkConversationPage renders the chat page of a conversation with
// 200 messages whose run made 100 tool calls (arguments and results
// recorded), through the whole server: session, chat service, store,
// runtime, templates.
func BenchmarkConversationPage(b *testing.B) {
	f, srv, ck := benchServer(b)
	ctx := context.Background()
	editor := f.Users["editor"]
	evs := make([]store.RunEventParams, 100)
	for i := range evs {
		p, _ := json.Marshal(agent.ToolPayload{Tool: chattest.ReadTool, CallID: fmt.Sprintf("call-%d", i), Bytes: 120,
			ToolArguments: `{"title":"pumps of series ` + fmt.Sprint(i) + `"}`, ToolResult: strings.Repeat("note: pumps are blue. ", 6)})
		evs[i] = store.RunEventParams{Seq: int64(i), Kind: string(agent.EventTool), Round: i/4 + 1, Duration: 35 * time.Millisecond, Payload: p}
	}
	if _, err := f.Store.CreateRun(ctx, store.CreateRunParams{ID: benchRunID(1), OwnerUsername: editor.Username, OwnerUID: editor.UID,
		Configuration: chattest.Configuration, CallerSource: "chat", CallerOperation: "chatTurn", LeaseOwner: "bench", Lease: time.Hour, Events: evs}); err != nil {
		b.Fatal(err)
	}
	c, err := f.Store.CreateConversation(ctx, store.CreateConversationParams{OwnerUID: editor.UID, OwnerUsername: editor.Username, Title: "Pumps", Task: chattest.Task})
	if err != nil {
		b.Fatal(err)
	}
	msgs := make([]store.NewChatMessage, 200)
	for i := range msgs {
		role := store.ChatRoleUser
		if i%2 == 1 {
			role = store.ChatRoleAssistant
		}
		msgs[i] = store.NewChatMessage{Role: role, Content: strings.Repeat(fmt.Sprintf("Message %d about the pumps page. ", i), 8)}
	}
	if _, err := f.Store.ChangeConversation(ctx, store.ChangeConversationParams{ID: c.ID, From: []store.ConversationStatus{store.ConversationIdle},
		To: store.ConversationFailed, State: store.ConversationState{RunID: benchRunID(1), ErrorCode: "runFailed"}, KeepMessages: -1, Append: msgs}); err != nil {
		b.Fatal(err)
	}
	measure(b, srv, ck, fmt.Sprintf("/chat/%d", c.ID), "Message 199 about")
}

// BenchmarkRunsPage renders the first page of the runs list with 10,000
// runs in the store.
func BenchmarkRunsPage(b *testing.B) {
	f, srv, ck := benchServer(b)
	ctx := context.Background()
	editor := f.Users["editor"]
	for i := range 10_000 {
		if _, err := f.Store.CreateRun(ctx, store.CreateRunParams{ID: benchRunID(i), OwnerUsername: editor.Username, OwnerUID: editor.UID,
			Configuration: chattest.Configuration, CallerSource: "api", CallerOperation: "run", LeaseOwner: "bench", Lease: time.Hour}); err != nil {
			b.Fatal(err)
		}
	}
	measure(b, srv, ck, "/runs", benchRunID(9_999))
}
