package endpoint_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/llm/endpoint"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func chat(t *testing.T, p endpoint.Provider) llm.Response {
	t.Helper()
	t.Cleanup(p.Close)
	resp, err := p.Chat(context.Background(), llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestKindsReachTheirWire(t *testing.T) {
	for kind, wire := range map[string]llmtest.Wire{
		"openai": llmtest.OpenAI, "ollama": llmtest.OpenAI, "groq": llmtest.OpenAI,
		"anthropic": llmtest.Anthropic, "gemini": llmtest.Gemini,
	} {
		t.Run(kind, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.Options{Wire: wire}, llmtest.Text("hi from "+kind))
			p, err := endpoint.New(context.Background(), endpoint.Params{Kind: kind, BaseURL: srv.BaseURL(), APIKey: llmtest.Key})
			if err != nil {
				t.Fatal(err)
			}
			if resp := chat(t, p); resp.Content != "hi from "+kind || resp.Provider != kind {
				t.Errorf("response = %+v", resp)
			}
		})
	}
}

func TestAzure(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.Text("ok"))
	p, err := endpoint.New(context.Background(), endpoint.Params{
		Kind: "azure", Name: "azure-eu", BaseURL: srv.URL + "/openai/deployments/gpt4o", APIKey: llmtest.Key, APIVersion: "2024-10-21",
	})
	if err != nil {
		t.Fatal(err)
	}
	chat(t, p)
	r := srv.Request(0)
	if r.Path != "/openai/deployments/gpt4o/chat/completions" || r.RawQuery != "api-version=2024-10-21" ||
		r.Header.Get("api-key") != llmtest.Key || r.Header.Get("Authorization") != "" {
		t.Errorf("path %s query %s api-key %q authorization %q", r.Path, r.RawQuery, r.Header.Get("api-key"), r.Header.Get("Authorization"))
	}
}

func TestConfigurationErrors(t *testing.T) {
	for _, p := range []endpoint.Params{{Kind: "watson"}, {Kind: "azure"}, {Kind: "custom"}, {Kind: "gemini"}} {
		_, err := endpoint.New(context.Background(), p)
		var e *llm.Error
		if !errors.As(err, &e) || e.Class != llm.FailConfiguration {
			t.Errorf("%s: err = %v, want a configuration error", p.Kind, err)
		}
	}
	if got := strings.Join(endpoint.Kinds(), ","); got != "anthropic,azure,custom,gemini,groq,llamacpp,lmstudio,mistral,ollama,openai,openrouter,vllm" {
		t.Errorf("Kinds() = %s", got)
	}
}
