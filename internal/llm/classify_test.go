package llm_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/llm"
)

func TestClassifyStatus(t *testing.T) {
	for status, want := range map[int]llm.FailureClass{
		429: llm.FailRateLimit, 500: llm.FailServerError, 502: llm.FailServerError, 529: llm.FailServerError,
		401: llm.FailAuth, 403: llm.FailAuth, 404: llm.FailConfiguration,
		400: llm.FailClientError, 409: llm.FailClientError, 422: llm.FailClientError, 200: llm.FailUnknown,
	} {
		if got := llm.ClassifyStatus(status); got != want {
			t.Errorf("ClassifyStatus(%d) = %s, want %s", status, got, want)
		}
	}
}

func TestFailureClassProperties(t *testing.T) {
	for class, want := range map[llm.FailureClass][2]bool{ // retryable, trips
		llm.FailConnection: {true, true}, llm.FailRateLimit: {true, true}, llm.FailServerError: {true, true},
		llm.FailCircuitOpen: {true, false}, llm.FailAuth: {false, false}, llm.FailConfiguration: {false, false},
		llm.FailClientError: {false, false}, llm.FailUnknown: {false, false}, llm.FailCanceled: {false, false},
	} {
		if got := [2]bool{class.Retryable(), class.TripsCircuit()}; got != want {
			t.Errorf("%s: retryable, trips = %v, want %v", class, got, want)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		header http.Header
		want   time.Duration
	}{
		{http.Header{"Retry-After": {"5"}}, 5 * time.Second},
		{http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond},
		{http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second},
		{http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After": {"-3"}}, 0},
		{http.Header{}, 0},
	}
	for _, tc := range cases {
		if got := llm.ParseRetryAfter(tc.header, now); got != tc.want {
			t.Errorf("ParseRetryAfter(%v) = %s, want %s", tc.header, got, tc.want)
		}
	}
}

func TestErrorText(t *testing.T) {
	e := &llm.Error{Provider: "openai", Class: llm.FailRateLimit, Status: 429, Message: "slow down"}
	if e.Error() != "openai: rateLimit (HTTP 429): slow down" {
		t.Errorf("Error() = %q", e.Error())
	}
	e = &llm.Error{Provider: "ollama", Class: llm.FailConnection, Message: "connection refused"}
	if e.Error() != "ollama: connection: connection refused" {
		t.Errorf("Error() = %q", e.Error())
	}
}
