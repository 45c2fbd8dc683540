package console

import (
	"net/http/httptest"
	"net/url"
	"testing"
)

// TestSafeNext: the page a login returns to stays on this site.
func TestSafeNext(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/chat/3":              "/chat/3",
		"/runs?status=failed":  "/runs?status=failed",
		"":                     "/",
		"https://evil.example": "/",
		"//evil.example/x":     "/",
		"/\\evil.example":      "/",
		"javascript:alert(1)":  "/",
	} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSameOrigin: a post is refused when the browser says it came from
// another site, and taken from this origin or a client that sends no
// origin at all (a form without JavaScript in an old browser, curl).
func TestSameOrigin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, fetchSite, origin string
		want                    bool
	}{
		{"same origin", "same-origin", "", true},
		{"typed by the user", "none", "", true},
		{"cross site", "cross-site", "", false},
		{"same site, other origin", "same-site", "", false},
		{"origin of this host", "", "http://console.example", true},
		{"origin of another host", "", "http://evil.example", false},
		{"null origin", "", "null", false},
		{"no header", "", "", true},
	} {
		r := httptest.NewRequest("POST", "http://console.example/chat", nil)
		if tc.fetchSite != "" {
			r.Header.Set("Sec-Fetch-Site", tc.fetchSite)
		}
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		if got := sameOrigin(r); got != tc.want {
			t.Errorf("%s: sameOrigin = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// FuzzAnswerOf: any form against any schema yields fields and, when it
// fits, a JSON object; it never panics.
func FuzzAnswerOf(f *testing.F) {
	f.Add(`{"type":"object","properties":{"choice":{"type":"string","enum":["a","b"]}},"required":["choice"]}`, "f.choice=b")
	f.Add(`{"type":"object","properties":{"n":{"type":["integer","null"]},"ok":{"type":"boolean"}}}`, "f.n=12&f.ok=on")
	f.Add(`{"properties":{"x":{"type":"number"}}}`, "f.x=1e400")
	f.Add(`not json`, "")
	f.Fuzz(func(t *testing.T, schema, form string) {
		vals, err := parseQuery(form)
		if err != nil {
			return
		}
		_, data, ok := answerOf([]byte(schema), vals)
		if ok && (len(data) == 0 || data[0] != '{') {
			t.Errorf("answer %q is no object", data)
		}
	})
}

func parseQuery(s string) (url.Values, error) { return url.ParseQuery(s) }
