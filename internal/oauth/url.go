package oauth

import (
	"net/http"
	"strings"
)

// BaseURL is the scheme and host under which the client reached t3agent:
// https when the connection is TLS or a proxy says so (as the session
// cookie decides), else http. The issuer, the resource URLs and the
// metadata documents are all built on it, so a token issued through one
// name of the server is bound to that name.
func BaseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
