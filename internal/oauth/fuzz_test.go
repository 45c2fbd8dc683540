package oauth

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// FuzzRedirectURI: whatever a client registers, an admitted redirect URI
// is absolute, has no fragment, and is https, http on loopback, or a
// private-use scheme a browser does not run.
func FuzzRedirectURI(f *testing.F) {
	for _, s := range []string{
		"http://127.0.0.1:33418/callback", "http://localhost/cb", "https://vscode.dev/redirect", "cursor://anysphere.cursor-retrieval/oauth",
		"http://evil.example/cb", "javascript:alert(1)", "data:text/html,x", "https://a/#frag", "HTTP://127.0.0.1/", "http://[::1]:80/x",
		"http://127.0.0.1.evil.example/", "//127.0.0.1/x", "vbscript:x", "https:///nohost", "ws://127.0.0.1/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if checkRedirect(raw) != nil {
			return
		}
		u, err := url.Parse(raw)
		if err != nil || !u.IsAbs() || u.Fragment != "" {
			t.Fatalf("admitted %q", raw)
		}
		switch s := strings.ToLower(u.Scheme); s {
		case "javascript", "data", "file", "vbscript", "about", "blob", "ws", "wss":
			t.Fatalf("admitted scheme %s in %q", s, raw)
		case "http":
			if h := u.Hostname(); h != "localhost" && !strings.HasPrefix(h, "127.") && h != "::1" {
				t.Fatalf("admitted http off loopback: %q", raw)
			}
		}
	})
}

// FuzzResource: an admitted resource indicator is an MCP endpoint of the
// server the request reached, nothing else.
func FuzzResource(f *testing.F) {
	for _, s := range []string{"", "http://example.com/mcp", "http://example.com/mcp/editor-eu", "http://example.com/mcp/a/b",
		"http://evil.example/mcp", "http://example.com/api/v1/runs", "http://example.com/mcp?x=1", "http://example.com/mcp/../api", "http://example.com/mcp/..", "https://example.com/mcp"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		r := httptest.NewRequest("GET", "http://example.com/authorize", nil)
		got, err := resourceOf(r, raw)
		if err != nil {
			return
		}
		rest, ok := strings.CutPrefix(got, "http://example.com/mcp")
		if !ok || rest != "" && (!strings.HasPrefix(rest, "/") || strings.Count(rest, "/") != 1 || strings.HasPrefix(rest, "/.")) {
			t.Fatalf("resourceOf(%q) = %q", raw, got)
		}
	})
}
