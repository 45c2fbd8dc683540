package web

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain checks for leaked goroutines and, when the whole package ran,
// that the scenario tests reached every API route and saw every error
// status the API answers.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 && flag.Lookup("test.run").Value.String() == "" && !testing.Short() {
		routes, statuses := hits.missing()
		for _, r := range routes {
			fmt.Fprintf(os.Stderr, "no test reaches the route %s\n", r)
			code = 1
		}
		for _, c := range statuses {
			fmt.Fprintf(os.Stderr, "no test sees the status %d\n", c)
			code = 1
		}
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, rec.Body.String()
}

func TestReadiness(t *testing.T) {
	t.Parallel()
	down := errors.New("dial tcp 10.0.0.9:5432: secret-host refused")
	cases := []struct {
		name     string
		store    error
		site     error
		wantCode int
	}{
		{"all up", nil, nil, 200},
		{"store down", down, nil, 503},
		{"site down", nil, down, 503},
		{"both down", down, down, 503},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := New(Params{Checks: []Check{
				{Name: "store", Probe: func(context.Context) error { return c.store }},
				{Name: "site", Probe: func(context.Context) error { return c.site }},
			}})
			code, body := get(t, s.Handler(), "/readyz")
			if code != c.wantCode {
				t.Errorf("code = %d, want %d", code, c.wantCode)
			}
			if strings.Contains(body, "secret-host") {
				t.Errorf("readiness body leaks the cause: %q", body)
			}
			if (c.store != nil) != strings.Contains(body, "store: unavailable") {
				t.Errorf("store state not reported: %q", body)
			}
		})
	}
}

func TestHealthMetricsHome(t *testing.T) {
	t.Parallel()
	s := New(Params{SiteName: "Demo <site>", Version: "v9"})
	h := s.Handler()
	if code, body := get(t, h, "/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("healthz = %d %q", code, body)
	}
	code, body := get(t, h, "/")
	if code != 200 || !strings.Contains(body, "Demo &lt;site&gt;") || !strings.Contains(body, "POST /api/v1/login") {
		t.Errorf("home = %d %s", code, body)
	}
	if code, _ := get(t, h, "/nope"); code != 404 {
		t.Errorf("unknown path = %d", code)
	}
	_, metrics := get(t, h, "/metrics")
	for _, want := range []string{`t3agent_http_requests_total{code="200",route="GET /healthz"} 1`, `t3agent_build_info{version="v9"} 1`,
		`t3agent_login_failures_total{reason="rate_limited"} 0`, "go_goroutines"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// demoUsername matches the demo's backend users that are no common
// word, and the start page's old user table.
var demoUsername = regexp.MustCompile(`\b(intern|former)\b|<td>(admin|editor)</td>`)

// TestPublicPagesNameNoUser: no page a visitor reaches without logging
// in names a backend user of the site.
func TestPublicPagesNameNoUser(t *testing.T) {
	t.Parallel()
	e := setup(t, envOptions{})
	anon := e.anonymous()
	for _, path := range []string{"/", "/healthz", "/readyz", "/metrics", "/api/v1/labels", "/api/v1/openapi.json", "/api/v1/me", "/api/v1/nope"} {
		res := anon.do("GET", path, nil)
		if m := demoUsername.FindString(res.body); m != "" {
			t.Errorf("%s (%d) names %q", path, res.code, m)
		}
	}
}

func TestServeShutsDownGracefully(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, New(Params{}).Handler(), 5*time.Second, slogDiscard()) }()
	resp, err := http.Get("http://" + ln.Addr().String() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if string(b) != "ok\n" {
		t.Errorf("body = %q", b)
	}
	http.DefaultClient.CloseIdleConnections()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve returned %v after a clean shutdown", err)
	}
	if _, err := http.Get("http://" + ln.Addr().String() + "/healthz"); err == nil {
		t.Error("server still answers after shutdown")
	}
}
