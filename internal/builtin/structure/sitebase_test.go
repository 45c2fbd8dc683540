package structure_test

import (
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/builtin/structure"
)

func TestJoinBase(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ site, lang, host, path string }{
		{"http://127.0.0.1:8080/", "/", "127.0.0.1:8080", "/"},
		{"http://127.0.0.1:8080/", "/de/", "127.0.0.1:8080", "/de/"},
		{"https://WWW.Example.com/shop", "de", "www.example.com", "/shop/de/"},
		{"/", "/da/", "", "/da/"},
		{"www.example.com/", "/", "www.example.com", "/"},
		{"https://example.com/", "https://example.de/", "example.de", "/"},
		{"//example.com", "", "example.com", "/"},
	} {
		host, path, ok := structure.JoinBase(c.site, c.lang)
		if !ok || host != c.host || path != c.path {
			t.Errorf("JoinBase(%q, %q) = %q, %q, %v; want %q, %q", c.site, c.lang, host, path, ok, c.host, c.path)
		}
	}
	if _, _, ok := structure.JoinBase("http://[::1", "/"); ok {
		t.Error("a broken base joined")
	}
}

func FuzzJoinBase(f *testing.F) {
	f.Add("http://127.0.0.1:8080/", "/de/")
	f.Add("/", "https://example.de/x")
	f.Add("www.example.com", "%env(LANG)%")
	f.Fuzz(func(t *testing.T, site, lang string) {
		host, path, ok := structure.JoinBase(site, lang)
		if !ok {
			return
		}
		if !strings.HasPrefix(path, "/") || !strings.HasSuffix(path, "/") || host != strings.ToLower(host) {
			t.Fatalf("JoinBase(%q, %q) = %q, %q", site, lang, host, path)
		}
	})
}
