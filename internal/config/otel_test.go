package config

import (
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/tracing"
)

// TestOtelSection: the otel: keys reach package tracing as given, from
// the file or the environment, and a wrong one is one sentence naming it.
func TestOtelSection(t *testing.T) {
	t.Parallel()
	env := []string{"T3AGENT_SITE_DSN=sqlite:x.db", "T3AGENT_OTEL_ENDPOINT=http://collector:4318",
		"T3AGENT_OTEL_PROTOCOL=grpc", "T3AGENT_OTEL_HEADERS=api-key=1", "T3AGENT_OTEL_CAPTURE_CONTENT=true", "T3AGENT_OTEL_SERVICE_NAME=t3-eu"}
	cfg, err := FromEnv(t.TempDir(), env)
	if err != nil {
		t.Fatal(err)
	}
	want := tracing.Config{Endpoint: "http://collector:4318", Protocol: "grpc", Headers: "api-key=1", ServiceName: "t3-eu", CaptureContent: true}
	if got := cfg.Otel.Tracing(); got != want {
		t.Errorf("Tracing() = %+v, want %+v", got, want)
	}
	if cfg, err := FromEnv(t.TempDir(), env[:1]); err != nil || cfg.Otel.Tracing() != (tracing.Config{}) {
		t.Errorf("default otel section = %+v, %v", cfg.Otel, err)
	}
	for _, c := range []struct{ kv, want string }{
		{"T3AGENT_OTEL_PROTOCOL=zipkin", "otel.protocol:"},
		{"T3AGENT_OTEL_ENDPOINT=collector:4318", "otel.endpoint:"},
		{"T3AGENT_OTEL_ENDPOINT=http://user:secret@collector:4318/%zz", "otel.endpoint:"},
		{"T3AGENT_OTEL_HEADERS=key-only", "otel.headers:"},
	} {
		_, err := FromEnv(t.TempDir(), []string{env[0], c.kv})
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: %v, want an error naming %s without the password", c.kv, err, c.want)
		}
	}
}
