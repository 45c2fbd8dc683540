package web

import (
	_ "embed"
	"net/http"
)

// openAPIDoc is the OpenAPI 3.1 document of /api/v1. A test checks it
// against the route table, both ways.
//
//go:embed openapi.json
var openAPIDoc []byte

func (s *Server) openAPI(w http.ResponseWriter, _ *http.Request, _ *caller) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(openAPIDoc)
}
