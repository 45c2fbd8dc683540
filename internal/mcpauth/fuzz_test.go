package mcpauth

import (
	"github.com/modelcontextprotocol/go-sdk/auth"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// FuzzAuthorizationResponse: whatever query reaches the callback, it is
// answered with a page (never a panic), a response with an error or
// without a code is refused, and a refused one carries no code.
func FuzzAuthorizationResponse(f *testing.F) {
	for _, s := range []string{"code=abc&state=xyz&iss=https%3A%2F%2Fas.example", "error=access_denied&state=xyz",
		"code=&state=", "state=%ZZ", "error=%1b%5b31m&code=x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		res, err := resultOf(q)
		if err == nil && (res.Code == "" || q.Get("error") != "") {
			t.Fatalf("accepted %q", raw)
		}
		if err != nil && strings.ContainsAny(err.Error(), "\x1b\r\n") {
			t.Fatalf("error %q carries control characters", err)
		}
		cb := &Callbacks{}
		w := httptest.NewRecorder()
		cb.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/oauth/mcp/callback?"+q.Encode(), nil))
		if w.Code != http.StatusBadRequest {
			t.Fatalf("an unknown login's callback answered %d", w.Code)
		}
	})
}

// FuzzPrivateKey: a private key file is parsed or refused with one
// sentence, never a panic.
func FuzzPrivateKey(f *testing.F) {
	f.Add("-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----\n")
	f.Add("-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n")
	f.Add("not pem")
	f.Fuzz(func(t *testing.T, s string) {
		if _, err := parsePrivateKey(s); err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("error %q is not one sentence", err)
		}
	})
}

// TestCallbacks: the browser's return reaches the login waiting for its
// state, and only that one.
func TestCallbacks(t *testing.T) {
	t.Parallel()
	cb := &Callbacks{}
	ts := httptest.NewServer(cb)
	defer ts.Close()
	status := make(chan int, 2)
	fetch := cb.Fetcher(func(authURL string) {
		// The person's browser: first a stranger's state, then the right one.
		go func() {
			for _, state := range []string{"other", "s1"} {
				resp, err := http.Get(ts.URL + "/oauth/mcp/callback?code=c1&iss=https%3A%2F%2Fas.example&state=" + state)
				if err != nil {
					status <- 0
					continue
				}
				resp.Body.Close()
				status <- resp.StatusCode
			}
		}()
	})
	res, err := fetch(t.Context(), &auth.AuthorizationArgs{URL: "https://as.example/authorize?state=s1"})
	if err != nil || res.Code != "c1" || res.State != "s1" || res.Iss != "https://as.example" {
		t.Fatalf("fetch = %+v, %v", res, err)
	}
	if a, b := <-status, <-status; a != http.StatusBadRequest || b != http.StatusOK {
		t.Errorf("callback statuses %d, %d; want 400 for the stranger, 200 for the login", a, b)
	}
}
