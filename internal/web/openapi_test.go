package web

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// TestOpenAPIMatchesRoutes walks the registered API routes and the
// document's paths and methods, and fails on any difference either way;
// it also checks that every route really is registered on the server and
// that every reference in the document resolves.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	t.Parallel()
	s := New(Params{API: &API{}})
	var doc struct {
		OpenAPI    string                                `json:"openapi"`
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components map[string]map[string]json.RawMessage `json:"components"`
	}
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q, want 3.1.0", doc.OpenAPI)
	}
	var inDoc []string
	for path, ops := range doc.Paths {
		for method := range ops {
			switch method {
			case "get", "put", "post", "delete", "patch", "head", "options", "trace":
				inDoc = append(inDoc, strings.ToUpper(method)+" "+path)
			}
		}
	}
	var inRoutes []string
	for _, rt := range s.apiRoutes() {
		inRoutes = append(inRoutes, rt.pattern)
		method, path, _ := strings.Cut(rt.pattern, " ")
		req := httptest.NewRequest(method, strings.NewReplacer("{id}", "1", "{seq}", "1", "{name}", "x").Replace(path), nil)
		if _, pattern := s.mux.Handler(req); pattern != rt.pattern {
			t.Errorf("%s is served by %q", rt.pattern, pattern)
		}
	}
	for _, r := range inRoutes {
		if !slices.Contains(inDoc, r) {
			t.Errorf("route %s is not in openapi.json", r)
		}
	}
	for _, d := range inDoc {
		if !slices.Contains(inRoutes, d) {
			t.Errorf("openapi.json documents %s, which is no route", d)
		}
	}
	if len(inRoutes) != len(inDoc) {
		t.Errorf("%d routes, %d documented operations", len(inRoutes), len(inDoc))
	}
	// The input check at the boundary (input.go) may refuse any route.
	for path, ops := range doc.Paths {
		for method, raw := range ops {
			var op struct {
				Responses map[string]json.RawMessage `json:"responses"`
			}
			if json.Unmarshal(raw, &op) == nil && op.Responses != nil && op.Responses["400"] == nil {
				t.Errorf("%s %s does not document 400", method, path)
			}
		}
	}

	// Every $ref points at a component that exists.
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok {
				parts := strings.Split(strings.TrimPrefix(ref, "#/components/"), "/")
				if len(parts) != 2 || doc.Components[parts[0]][parts[1]] == nil {
					t.Errorf("unresolved $ref %s", ref)
				}
			}
			for _, y := range x {
				walk(y)
			}
		case []any:
			for _, y := range x {
				walk(y)
			}
		}
	}
	var all any
	if err := json.Unmarshal(openAPIDoc, &all); err != nil {
		t.Fatal(err)
	}
	walk(all)

	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/openapi.json", nil))
	if rec.Code != 200 || rec.Body.String() != string(openAPIDoc) || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Errorf("GET openapi.json = %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
}

// TestAPIFallback: unknown API paths and methods answer JSON, and the
// route metrics count API routes under their patterns, never raw paths.
func TestAPIFallback(t *testing.T) {
	t.Parallel()
	s := New(Params{API: &API{}})
	h := s.Handler()
	for _, c := range []struct {
		method, path string
		code         int
		allow        string
		body         string
	}{
		{"GET", "/api/v1/nothing", 404, "", errBody("notFound")},
		{"DELETE", "/api/v1/runs/abc", 405, "GET", errBody("methodNotAllowed")},
		{"PUT", "/api/v1/chat/conversations/7", 405, "GET, PATCH", errBody("methodNotAllowed")},
		{"GET", "/api/v1/me", 401, "", errBody("unauthorized")},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
		if rec.Code != c.code || rec.Header().Get("Allow") != c.allow || !strings.Contains(rec.Body.String(), c.body) ||
			rec.Header().Get("Content-Type") != "application/json; charset=utf-8" {
			t.Errorf("%s %s = %d Allow %q %s", c.method, c.path, rec.Code, rec.Header().Get("Allow"), rec.Body)
		}
	}
	// Not the API: the start page still 404s for unknown paths.
	if code, _ := get(t, h, "/nope"); code != 404 {
		t.Errorf("unknown path = %d", code)
	}
	_, metrics := get(t, h, "/metrics")
	for _, want := range []string{
		`t3agent_http_requests_total{code="401",route="GET /api/v1/me"} 1`,
		`t3agent_http_requests_total{code="404",route="/api/v1/"} 1`,
		`t3agent_http_requests_total{code="405",route="/api/v1/"} 2`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(metrics, "/api/v1/runs/abc") || strings.Contains(metrics, "/conversations/7") {
		t.Error("metrics carry a raw path")
	}
}
