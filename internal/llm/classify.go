package llm

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ClassifyStatus maps an HTTP status of a failed call to its class:
// 429 rateLimit, 5xx serverError, 401/403 auth, 404 configuration (an
// unknown model or a wrong base URL), any other 4xx clientError.
func ClassifyStatus(status int) FailureClass {
	switch {
	case status == http.StatusTooManyRequests:
		return FailRateLimit
	case status >= 500:
		return FailServerError
	case status == http.StatusUnauthorized, status == http.StatusForbidden:
		return FailAuth
	case status == http.StatusNotFound:
		return FailConfiguration
	case status >= 400:
		return FailClientError
	}
	return FailUnknown
}

// ParseRetryAfter reads how long a 429 asks us to wait: Retry-After-Ms
// (OpenAI's millisecond variant) first, then Retry-After as seconds or an
// HTTP date relative to now. It returns 0 when there is no usable hint.
func ParseRetryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
