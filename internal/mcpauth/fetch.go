package mcpauth

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// Follow returns a fetcher that follows the authorization URL itself,
// without a person: for authorization servers that approve at once and
// redirect to the callback (the conformance suite's, or an operator's
// machine-to-machine setup). It reads the redirect's code, state and iss
// without calling the redirect URL. client must not follow redirects.
func Follow(client *http.Client) auth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, fmt.Errorf("the authorization URL cannot be followed: %w", err)
		}
		discard(resp)
		if resp.StatusCode < 300 || resp.StatusCode > 399 {
			return nil, fmt.Errorf("the authorization server answered HTTP %d, not a redirect: it needs a person (log in without --follow)", resp.StatusCode)
		}
		loc, err := url.Parse(resp.Header.Get("Location"))
		if err != nil {
			return nil, errors.New("the authorization server redirected to a URL that cannot be parsed")
		}
		return resultOf(loc.Query())
	}
}

// resultOf reads an authorization response (RFC 6749 §4.1.2, RFC 9207).
func resultOf(q url.Values) (*auth.AuthorizationResult, error) {
	if e := q.Get("error"); e != "" {
		return nil, fmt.Errorf("the authorization server refused: %s", textOf(e, 100))
	}
	if q.Get("code") == "" {
		return nil, errors.New("the authorization response has no code")
	}
	return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}

func textOf(s string, n int) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			continue
		}
		out = append(out, r)
		if len(out) == n {
			break
		}
	}
	return string(out)
}

// Callbacks pairs authorization responses arriving at the redirect URL
// with the logins waiting for them, by state. Mount it at the redirect
// URL's path. It is safe for concurrent use.
type Callbacks struct {
	mu      sync.Mutex
	waiting map[string]chan callback
}

type callback struct {
	res *auth.AuthorizationResult
	err error
}

// Fetcher returns a fetcher that calls show with the authorization URL
// (for a person to open) and waits for the callback or ctx's end.
func (c *Callbacks) Fetcher(show func(authURL string)) auth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		u, err := url.Parse(args.URL)
		if err != nil {
			return nil, err
		}
		state := u.Query().Get("state")
		ch := make(chan callback, 1)
		c.mu.Lock()
		if c.waiting == nil {
			c.waiting = map[string]chan callback{}
		}
		c.waiting[state] = ch
		c.mu.Unlock()
		defer func() {
			c.mu.Lock()
			delete(c.waiting, state)
			c.mu.Unlock()
		}()
		show(args.URL)
		select {
		case cb := <-ch:
			return cb.res, cb.err
		case <-ctx.Done():
			return nil, fmt.Errorf("no authorization response arrived: %w", ctx.Err())
		}
	}
}

var donePage = template.Must(template.New("done").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>t3agent</title></head>
<body><main><h1>{{.}}</h1><p>You can close this window.</p></main></body></html>`))

func (c *Callbacks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	c.mu.Lock()
	ch := c.waiting[q.Get("state")]
	c.mu.Unlock()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if ch == nil {
		w.WriteHeader(http.StatusBadRequest)
		_ = donePage.Execute(w, "This login is unknown or has ended.")
		return
	}
	res, err := resultOf(q)
	select {
	case ch <- callback{res: res, err: err}:
	default:
	}
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		_ = donePage.Execute(w, "The login was refused.")
		return
	}
	_ = donePage.Execute(w, "t3agent is connected.")
}
