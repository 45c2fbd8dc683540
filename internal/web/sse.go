package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// chatStream is a conversation's live stream (Server-Sent Events): an
// `event: conversation` with the view whenever it changes, first at once,
// and a `: keepalive` comment every KeepAlive. Changes this process makes
// arrive as signals; changes made elsewhere (a worker in another process,
// cleanup) are found by re-reading every StreamPoll. A conversation that
// can no longer be read ends the stream with `event: error` and the
// error's JSON; polling GET …/messages is the client's fallback. The
// stream lives no longer than its session: every StreamAuthCheck it
// authenticates again (the session may have expired or been deleted, its
// user disabled), and a logout in this process ends it at once; either
// ends it with `event: error` (401 unauthorized).
func (s *Server) chatStream(w http.ResponseWriter, r *http.Request, c *caller) {
	id, ok := s.chatID(w, r)
	if !ok {
		return
	}
	rc := http.NewResponseController(w)
	// Subscribe before the first read, so no change falls between them.
	changed, cancel := s.api.Chat.Changes(id)
	defer cancel()
	ended, unwatch := s.sessions.watch(c)
	defer unwatch()
	ctx := r.Context()
	p, err := s.chatView(ctx, c, id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	last, err := viewEventOf(p)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx would hold the events back
	w.WriteHeader(http.StatusOK)
	if writeEvent(w, rc, "conversation", last) != nil {
		return
	}
	// Streams outlive requests; the write deadline of the server must not
	// cut them.
	_ = rc.SetWriteDeadline(time.Time{})

	keep := time.NewTicker(s.api.KeepAlive)
	defer keep.Stop()
	poll := time.NewTicker(s.api.StreamPoll)
	defer poll.Stop()
	auth := time.NewTicker(s.api.StreamAuthCheck)
	defer auth.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.closing:
			return
		case <-ended:
			s.endStream(w, rc, apiErr(http.StatusUnauthorized, "unauthorized", errors.New("the session ended")))
			return
		case <-auth.C:
			fresh, err := s.recheck(ctx, c)
			if err != nil {
				if ctx.Err() == nil {
					s.endStream(w, rc, err)
				}
				return
			}
			c = fresh
			continue
		case <-keep.C:
			if _, err := fmt.Fprint(w, ": keepalive\n\n"); err != nil || rc.Flush() != nil {
				return
			}
			continue
		case <-changed:
		case <-poll.C:
		}
		next, err := s.reread(ctx, c, id)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			s.endStream(w, rc, fmt.Errorf("conversation stream: reading conversation %d: %w", id, err))
			return
		}
		if bytes.Equal(next, last) {
			continue
		}
		last = next
		if writeEvent(w, rc, "conversation", last) != nil {
			return
		}
	}
}

// endStream ends a stream with `event: error` and err's JSON, public-safe
// as every API error; the cause goes to the log.
func (s *Server) endStream(w http.ResponseWriter, rc *http.ResponseController, err error) {
	status, body := classify(err)
	if status >= 500 {
		s.p.Logger.Error("stream ended by a failure", "err", err)
	} else {
		s.p.Logger.Debug("stream ended", "status", status, "code", body.Code, "err", err)
	}
	b, _ := jsonBytes(body)
	_ = writeEvent(w, rc, "error", b)
}

func (s *Server) reread(ctx context.Context, c *caller, id int64) ([]byte, error) {
	p, err := s.chatView(ctx, c, id)
	if err != nil {
		return nil, err
	}
	return viewEventOf(p)
}

// writeEvent writes one event (data is one line of JSON) and flushes it.
func writeEvent(w http.ResponseWriter, rc *http.ResponseController, event string, data []byte) error {
	if bytes.ContainsAny(data, "\r\n") {
		return errors.New("event data spans lines")
	}
	if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data); err != nil {
		return err
	}
	return rc.Flush()
}

// jsonBytes is v as one line of JSON.
func jsonBytes(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := jsonEncoder(&buf).Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// sessionStreams lets the streams of a session end at once when the
// session ends in this process. It is safe for concurrent use.
type sessionStreams struct {
	mu sync.Mutex
	// open maps a session's hash to the end signals of its streams.
	open map[string]map[chan struct{}]struct{}
}

func newSessionStreams() *sessionStreams {
	return &sessionStreams{open: map[string]map[chan struct{}]struct{}{}}
}

// watch returns a channel closed when c's session ends, and the function
// that stops watching. A token's stream gets a channel that never
// closes: tokens end only by the periodic check.
func (ss *sessionStreams) watch(c *caller) (<-chan struct{}, func()) {
	if c.session == nil {
		return nil, func() {}
	}
	hash := c.session.IDHash
	ch := make(chan struct{})
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.open[hash] == nil {
		ss.open[hash] = map[chan struct{}]struct{}{}
	}
	ss.open[hash][ch] = struct{}{}
	return ch, func() {
		ss.mu.Lock()
		defer ss.mu.Unlock()
		if _, ok := ss.open[hash][ch]; ok {
			delete(ss.open[hash], ch)
			if len(ss.open[hash]) == 0 {
				delete(ss.open, hash)
			}
		}
	}
}

// end ends every stream of the session stored under hash.
func (ss *sessionStreams) end(hash string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for ch := range ss.open[hash] {
		close(ch)
	}
	delete(ss.open, hash)
}
