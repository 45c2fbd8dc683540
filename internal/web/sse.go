package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// chatStream is a conversation's live stream (Server-Sent Events): an
// `event: conversation` with the view whenever it changes, first at once,
// and a `: keepalive` comment every KeepAlive. Changes this process makes
// arrive as signals; changes made elsewhere (a worker in another process,
// cleanup) are found by re-reading every StreamPoll. A conversation that
// can no longer be read ends the stream with `event: error` and the
// error's JSON; polling GET …/messages is the client's fallback.
func (s *Server) chatStream(w http.ResponseWriter, r *http.Request, c *caller) {
	id, ok := s.chatID(w, r)
	if !ok {
		return
	}
	rc := http.NewResponseController(w)
	// Subscribe before the first read, so no change falls between them.
	changed, cancel := s.api.Chat.Changes(id)
	defer cancel()
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
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.closing:
			return
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
			status, body := classify(err)
			if status >= 500 {
				s.p.Logger.Error("conversation stream: reading the conversation", "conversation", id, "err", err)
			}
			b, _ := jsonBytes(body)
			_ = writeEvent(w, rc, "error", b)
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
