package web

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/store"
)

// stream is an open event stream.
type stream struct {
	t    *testing.T
	resp *http.Response
	r    *bufio.Reader
}

// open starts a stream of path for c; it ends with the test at the
// latest, and a read waits at most 30 s.
func (c *client) stream(path string) *stream {
	c.e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	c.e.t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", c.base+path, nil)
	if err != nil {
		c.e.t.Fatal(err)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.e.t.Fatal(err)
	}
	c.e.t.Cleanup(func() { _ = resp.Body.Close() })
	return &stream{t: c.e.t, resp: resp, r: bufio.NewReader(resp.Body)}
}

// next reads the next event, skipping comments.
func (s *stream) next() (string, string, error) {
	var event, data string
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			return "", "", err
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "" && event != "":
			return event, data, nil
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		}
	}
}

// conversation reads the next event, which must be a conversation.
func (s *stream) conversation() viewEvent {
	s.t.Helper()
	ev, data, err := s.next()
	if err != nil || ev != "conversation" {
		s.t.Fatalf("next event: %q %q %v", ev, data, err)
	}
	var v viewEvent
	if err := json.Unmarshal([]byte(data), &v); err != nil {
		s.t.Fatal(err)
	}
	return v
}

// TestStream: the view at once, then on every change this process makes
// (signalled: the poll interval is an hour), keep-alive comments between;
// an unreadable conversation refuses before streaming; CloseStreams ends
// open streams.
func TestStream(t *testing.T) {
	t.Parallel()
	e := setup(t, envOptions{api: func(a *API) { a.KeepAlive = 5 * time.Millisecond; a.StreamPoll = time.Hour }})
	editor, admin := e.login("editor"), e.login("admin")
	conv := editor.create()

	s := editor.stream(conv + "/stream")
	if s.resp.StatusCode != 200 || s.resp.Header.Get("Content-Type") != "text/event-stream; charset=utf-8" {
		t.Fatalf("stream = %d %q", s.resp.StatusCode, s.resp.Header.Get("Content-Type"))
	}
	if v := s.conversation(); v.Status != store.ConversationIdle || v.Pinned {
		t.Fatalf("first event: %+v", v)
	}
	check(t, []call{{"pin", editor, "POST", conv + "/pin", map[string]bool{"pinned": true}, nil, 200, nil, nil}})
	if v := s.conversation(); !v.Pinned {
		t.Errorf("after pinning: %+v", v)
	}
	check(t, []call{{"send", editor, "POST", conv + "/messages", map[string]string{"content": "Hello"}, nil, 202, nil, nil}})
	v := s.conversation()
	// Sending may signal twice (the turn, then its title); the last view counts.
	for v.Title == "" {
		v = s.conversation()
	}
	if v.Status != store.ConversationProcessing || v.TotalCount != 1 || v.Title != "Hello" {
		t.Errorf("after sending: %+v", v)
	}
	// Keep-alives flow while nothing changes.
	for seen := 0; seen < 2; {
		line, err := s.r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == ": keepalive\n" {
			seen++
		}
	}

	// Another's conversation: a JSON refusal, no stream.
	res := admin.do("GET", conv+"/stream", nil)
	if res.code != 404 || !strings.Contains(res.body, errBody("conversationNotFound")) {
		t.Errorf("another's stream = %d %s", res.code, res.body)
	}

	// A shutdown ends the stream.
	e.srv.CloseStreams()
	for {
		if _, _, err := s.next(); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Errorf("the stream ended with %v, want EOF", err)
			}
			break
		}
	}
}

// TestStreamPolls: a change another process makes (written to the store
// directly, no signal) reaches the stream by polling; a conversation that
// disappears ends the stream with an error event.
func TestStreamPolls(t *testing.T) {
	t.Parallel()
	e := setup(t, envOptions{api: func(a *API) { a.KeepAlive = time.Hour; a.StreamPoll = 5 * time.Millisecond }})
	editor := e.login("editor")
	conv := editor.create()
	id := idOf(t, conv)
	s := editor.stream(conv + "/stream")
	if v := s.conversation(); v.Title != "" {
		t.Fatalf("first event: %+v", v)
	}
	title := "Renamed elsewhere"
	if _, err := e.f.Store.SetConversationFlags(context.Background(), store.SetConversationFlagsParams{ID: id, Title: &title}); err != nil {
		t.Fatal(err)
	}
	if v := s.conversation(); v.Title != title {
		t.Errorf("after the change elsewhere: %+v", v)
	}
	archived := true
	if _, err := e.f.Store.SetConversationFlags(context.Background(), store.SetConversationFlagsParams{ID: id, Archived: &archived}); err != nil {
		t.Fatal(err)
	}
	if v := s.conversation(); !v.Archived {
		t.Errorf("after archiving elsewhere: %+v", v)
	}
	if n, err := e.f.Store.DeleteArchivedConversations(context.Background(), e.f.Clock.Now().Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("delete: %d, %v", n, err)
	}
	ev, data, err := s.next()
	if err != nil || ev != "error" || !strings.Contains(data, errBody("conversationNotFound")) {
		t.Errorf("after the deletion: %q %q %v", ev, data, err)
	}
	if _, _, err := s.next(); !errors.Is(err, io.EOF) {
		t.Errorf("the stream goes on after its error: %v", err)
	}
}

// TestServeEndsStreams: a graceful shutdown closes open streams instead
// of waiting for them until its timeout.
func TestServeEndsStreams(t *testing.T) {
	t.Parallel()
	e := setup(t, envOptions{api: func(a *API) { a.KeepAlive = time.Hour; a.StreamPoll = time.Hour }})
	editor := e.login("editor")
	conv := editor.create()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, e.srv.Handler(), time.Minute, slogDiscard()) }()

	// The same client, pointed at the served listener.
	c := *editor
	c.base = "http://" + ln.Addr().String()
	s := c.stream(conv + "/stream")
	s.conversation()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the shutdown waited for the open stream")
	}
	if _, _, err := s.next(); !errors.Is(err, io.EOF) {
		t.Errorf("the stream did not end: %v", err)
	}
}

// endsUnauthorized reads the stream to its end, which must be an
// `event: error` with 401 unauthorized, then EOF.
func (s *stream) endsUnauthorized(what string) {
	s.t.Helper()
	for {
		ev, data, err := s.next()
		if err != nil {
			s.t.Fatalf("%s: the stream ended with %v before its error event", what, err)
		}
		if ev == "conversation" {
			continue
		}
		if ev != "error" || !strings.Contains(data, errBody("unauthorized")) {
			s.t.Fatalf("%s: event %q %s, want an unauthorized error", what, ev, data)
		}
		break
	}
	if _, _, err := s.next(); !errors.Is(err, io.EOF) {
		s.t.Errorf("%s: the stream goes on after its error: %v", what, err)
	}
}

// TestStreamEndsWithItsSession: a stream lives no longer than its
// session. A logout, and a login that replaces the session, end it at
// once (the periodic check is an hour away); the periodic check ends it
// when the user is disabled in TYPO3, the session is deleted by another
// process, or the session expires (injected clock), and leaves a live
// session's stream alone.
func TestStreamEndsWithItsSession(t *testing.T) {
	t.Parallel()
	t.Run("at once", func(t *testing.T) {
		t.Parallel()
		e := setup(t, envOptions{api: func(a *API) { a.KeepAlive = time.Hour; a.StreamPoll = time.Hour; a.StreamAuthCheck = time.Hour }})
		editor, admin := e.login("editor"), e.login("admin")
		s := editor.stream(editor.create() + "/stream")
		s.conversation()
		other := admin.stream(admin.create() + "/stream")
		other.conversation()
		check(t, []call{{"logout", editor, "POST", "/api/v1/logout", nil, nil, 204, nil, nil}})
		s.endsUnauthorized("after the logout")

		// A new login in the same browser replaces the admin's session.
		conv := admin.create()
		relogin := admin.do("POST", "/api/v1/login", map[string]string{"username": "admin", "password": e.f.Demo.Password(t, "admin")})
		if relogin.code != 200 {
			t.Fatalf("login again: %d %s", relogin.code, relogin.body)
		}
		other.endsUnauthorized("after the session was replaced")
		var out struct {
			CSRFToken string `json:"csrfToken"`
		}
		relogin.decode(t, &out)
		admin.csrf = out.CSRFToken
		fresh := admin.stream(conv + "/stream")
		if fresh.resp.StatusCode != 200 {
			t.Fatalf("stream of the new session = %d", fresh.resp.StatusCode)
		}
		fresh.conversation()
	})
	t.Run("checked", func(t *testing.T) {
		t.Parallel()
		e := setup(t, envOptions{api: func(a *API) {
			a.KeepAlive = time.Millisecond
			a.StreamPoll = time.Hour
			a.StreamAuthCheck = time.Millisecond
			a.SessionTTL = time.Hour
		}})
		editor, admin, intern := e.login("editor"), e.login("admin"), e.login("intern")
		se := editor.stream(editor.create() + "/stream")
		sa := admin.stream(admin.create() + "/stream")
		si := intern.stream(intern.create() + "/stream")
		for _, s := range []*stream{se, sa, si} {
			s.conversation()
		}

		if _, err := e.siteDB().Exec(`UPDATE be_users SET disable = 1 WHERE username = 'intern'`); err != nil {
			t.Fatal(err)
		}
		si.endsUnauthorized("after the intern was disabled")

		u, _ := url.Parse(e.ts.URL)
		cookies := admin.hc.Jar.Cookies(u)
		if len(cookies) != 1 {
			t.Fatalf("admin's cookies: %v", cookies)
		}
		if err := e.f.Store.DeleteWebSession(context.Background(), HashSecret(cookies[0].Value)); err != nil {
			t.Fatal(err)
		}
		sa.endsUnauthorized("after the session was deleted elsewhere")

		// The editor's stream outlived many checks (one per keep-alive
		// tick, both every millisecond) and still delivers.
		for seen := 0; seen < 20; {
			line, err := se.r.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if line == ": keepalive\n" {
				seen++
			}
		}
		e.f.Clock.Advance(time.Hour)
		se.endsUnauthorized("after the session expired")
	})
}
