package llmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/llm/anthropic"
	"github.com/t3agent/t3agent/internal/llm/gemini"
	"github.com/t3agent/t3agent/internal/llm/openai"
)

// Provider returns the real adapter for the server's wire, pointed at it
// with Key. It has no retries or breaker: wrap it as the code under test
// would. Its idle connections are closed at cleanup.
func (s *Server) Provider(t testing.TB) llm.Streamer {
	t.Helper()
	var (
		p interface {
			llm.Streamer
			Close()
		}
		err error
	)
	switch s.opts.Wire {
	case OpenAI:
		p, err = openai.New(openai.Params{BaseURL: s.BaseURL(), APIKey: Key})
	case Anthropic:
		p, err = anthropic.New(anthropic.Params{BaseURL: s.BaseURL(), APIKey: Key})
	case Gemini:
		p, err = gemini.New(context.Background(), gemini.Params{BaseURL: s.BaseURL(), APIKey: Key})
	}
	if err != nil {
		t.Fatalf("llmtest: building the %s adapter: %v", s.opts.Wire, err)
	}
	t.Cleanup(p.Close)
	return p
}

// Golden compares got, a JSON document, with the file at path after
// normalising both (sorted keys, two-space indent), so golden files diff
// well. With update it writes the file instead. Pass the test package's
// own -update flag.
func Golden(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	norm, err := normJSON(got)
	if err != nil {
		t.Fatalf("llmtest: golden %s: the value is not JSON: %v", path, err)
	}
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, norm, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("llmtest: golden %s: %v (run with -update to create it)", path, err)
	}
	if !bytes.Equal(norm, want) {
		t.Errorf("llmtest: %s differs (run with -update to accept)\n--- got\n%s\n--- want\n%s", path, norm, want)
	}
}

func normJSON(b []byte) ([]byte, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // keep numbers exactly as sent
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}
