package llm

import (
	"net"
	"net/http"
	"time"
)

// Defaults for provider HTTP, from the runtime reference.
const (
	DefaultTimeout = 120 * time.Second
	dialTimeout    = 10 * time.Second
)

// HTTPClientParams configures NewHTTPClient.
type HTTPClientParams struct {
	// Timeout bounds one whole attempt, streaming included; 0 means
	// DefaultTimeout.
	Timeout time.Duration
}

// NewHTTPClient returns a client with its own transport (never
// http.DefaultTransport, so one provider's pool and timeouts do not leak
// into another's) and the timeouts a provider call needs.
func NewHTTPClient(p HTTPClientParams) *http.Client {
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          16,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   dialTimeout,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{Transport: tr, Timeout: timeout}
}
