package cli_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/store"
)

// TestServeMetrics: serve's /metrics carries the runtime's counters and
// the store's aggregates, read at scrape time, beside the HTTP counters:
// a turn another process queued shows without a restart.
func TestServeMetrics(t *testing.T) {
	t.Parallel()
	work := demoDir(t)
	base := startServe(t, work, nil, nil, "--no-worker")
	scrape := func() string {
		t.Helper()
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("/metrics = %d: %v", resp.StatusCode, err)
		}
		return string(body)
	}
	body := scrape()
	for _, line := range []string{
		"t3agent_store_up 1",
		`t3agent_runs{status="queued"} 0`,
		"t3agent_run_queue_depth 0",
		"t3agent_run_queue_oldest_age_seconds 0",
		`t3agent_chat_conversations{status="processing"} 0`,
		`t3agent_build_info{version=`,
		`t3agent_gate_denials_total{reason="trust_zone",stage="call"} 0`,
	} {
		if !strings.Contains(body, "\n"+line) {
			t.Errorf("/metrics lacks %q", line)
		}
	}
	st := demoStore(t, work, &chatClock{})
	queueTurn(t, st, "chat", "Hello from elsewhere", store.ConversationState{})
	if body := scrape(); !strings.Contains(body, "\n"+`t3agent_chat_conversations{status="processing"} 1`) {
		t.Errorf("a turn queued by another process is not counted:\n%s", grep(body, "t3agent_chat_conversations"))
	}
}

// grep keeps the lines of s that contain sub.
func grep(s, sub string) string {
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestWorkerMetrics: `worker` and `chat worker` with --metrics-listen
// serve their own counters and the Go runtime's; an address that cannot
// be used is one sentence.
func TestWorkerMetrics(t *testing.T) {
	t.Parallel()
	work := demoDir(t)
	for _, args := range [][]string{{"worker"}, {"chat", "worker"}} {
		rest := startCommand(t, work, nil, nil, `msg="serving metrics" url=`, append(args, "--metrics-listen", "127.0.0.1:0")...)
		url, _, _ := strings.Cut(rest, " ")
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%v: %s = %d: %v", args, url, resp.StatusCode, err)
		}
		for _, line := range []string{`t3agent_gate_denials_total{reason="not_offered",stage="call"} 0`, "go_goroutines "} {
			if !strings.Contains(string(body), "\n"+line) {
				t.Errorf("%v: /metrics lacks %q", args, line)
			}
		}
	}
	_, _, err := run(t, t.Context(), work, nil, "worker", "--metrics-listen", "256.0.0.1:1")
	if err == nil || !strings.Contains(err.Error(), "--metrics-listen 256.0.0.1:1 cannot be used") || strings.Contains(err.Error(), "\n") {
		t.Errorf("unusable address: %v", err)
	}
}
