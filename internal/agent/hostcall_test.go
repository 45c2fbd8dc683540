package agent_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
)

// hostCase is an MCP host's write call suspended for approval, on a
// configuration that requires a second approver. The provider is never
// called: a host call asks no model.
type hostCase struct {
	f      *fixture
	writer *testTool
	srv    *llmtest.Server
	res    agent.Result
}

func newHostCase(t *testing.T, dsn string) *hostCase {
	t.Helper()
	c := &hostCase{}
	c.writer = newTestTool("update_page_title", tool.GroupContent, tool.EditorContent, func(s *tool.Spec) {
		s.Effect = tool.NonIdempotentWrite
		s.InputSchema = json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}`)
	})
	c.writer.run = func(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
		row, err := c.f.st.Run(ctx, call.RunID)
		if err != nil || row.PendingEffect != string(tool.NonIdempotentWrite) {
			t.Errorf("the write ran outside its fence: %+v, %v", row, err)
		}
		return tool.Text("title set to " + args["title"].(string) + " as " + call.Actor.Username + " token sk-ant-api03-" + "abcdefghijklmnopqrstuvwxyz0123456789ABCD"), nil
	}
	c.f = newFixture(t, fixtureParams{extra: []tool.Tool{c.writer}, storeDSN: dsn})
	c.srv = llmtest.NewOpenAI(t)
	c.f.apply(providerDoc("writer", "openai", "externalGlobal", c.srv, 0, "require_second_approver: true"))
	c.res = c.f.rt.SuspendHostCall(context.Background(), agent.HostCallParams{
		Config: c.f.resolve("writer"), Actor: c.f.user("editor"), Caller: agent.Caller{Source: "mcp", Operation: "claude-code"},
		Tool: "update_page_title", Arguments: json.RawMessage(`{"title":"Pumps"}`),
	})
	return c
}

// TestHostCallWaitsForASecondApprover: a host's write waits for approval,
// never runs at once, is refused to its own user (four-eyes), runs once
// under the fence when a second person approves, and its redacted result
// is kept for the host whatever the privacy level.
func TestHostCallWaitsForASecondApprover(t *testing.T) {
	t.Parallel()
	forStores(t, func(t *testing.T, dsn func(testing.TB) string) {
		{
			c := newHostCase(t, dsn(t))
			if c.res.Outcome != agent.OutcomeAwaitingApproval || c.res.Pending == nil || len(c.res.Pending.Calls) != 1 || c.res.Rounds != 0 {
				t.Fatalf("result = %+v", c.res)
			}
			if c.writer.calls.Load() != 0 {
				t.Fatal("the write ran before approval")
			}
			row := c.f.run(c.res.RunID)
			if row.Status != store.RunWaitingForApproval || row.CallerSource != "mcp" || row.CallerOperation != "claude-code" || row.OwnerUsername != "editor" {
				t.Errorf("run row = %+v", row)
			}
			ctx := context.Background()
			if _, err := c.f.rt.Approve(ctx, agent.ApproveParams{RunID: c.res.RunID, Approver: c.f.user("editor"), Approved: true, Digest: c.res.Pending.Digest}); refusal(err) != agent.RefusedSelfApproval {
				t.Fatalf("self-approval: %v", err)
			}
			out, err := c.f.rt.HostResult(ctx, c.f.user("editor"), agent.Access{}, c.res.RunID)
			if err != nil || out.Done || out.Result != nil {
				t.Fatalf("before approval: %+v, %v", out, err)
			}
			res, err := c.f.rt.Approve(ctx, agent.ApproveParams{RunID: c.res.RunID, Approver: c.f.user("admin"), Approved: true, Digest: c.res.Pending.Digest})
			if err != nil || res.Outcome != agent.OutcomeCompleted || res.Rounds != 0 {
				t.Fatalf("approve: %+v, %v", res, err)
			}
			if c.writer.calls.Load() != 1 || len(c.srv.Requests()) != 0 {
				t.Fatalf("write ran %d times, provider asked %d times", c.writer.calls.Load(), len(c.srv.Requests()))
			}
			out, err = c.f.rt.HostResult(ctx, c.f.user("editor"), agent.Access{}, c.res.RunID)
			if err != nil || !out.Done || out.Result == nil || out.Result.IsError {
				t.Fatalf("after approval: %+v, %v", out, err)
			}
			if want := "title set to Pumps as editor token [REDACTED"; len(out.Result.Content) < len(want) || out.Result.Content[:len(want)] != want {
				t.Errorf("result = %q (the write runs as the run's owner; secrets redacted)", out.Result.Content)
			}
			if _, err := c.f.rt.HostResult(ctx, c.f.user("intern"), agent.Access{}, c.res.RunID); err == nil {
				t.Error("another user read the host's result")
			}
		}
	})
}

// TestHostCallDenied: a denied host call never runs and fails
// approval_denied, with no result.
func TestHostCallDenied(t *testing.T) {
	t.Parallel()
	c := newHostCase(t, "")
	ctx := context.Background()
	res, err := c.f.rt.Approve(ctx, agent.ApproveParams{RunID: c.res.RunID, Approver: c.f.user("editor"), Approved: false, Digest: c.res.Pending.Digest})
	if err != nil || res.Outcome != agent.OutcomeFailed || res.Termination != agent.TerminationApprovalDenied {
		t.Fatalf("deny: %+v, %v", res, err)
	}
	out, err := c.f.rt.HostResult(ctx, c.f.user("editor"), agent.Access{}, c.res.RunID)
	if err != nil || !out.Done || out.Result != nil || c.writer.calls.Load() != 0 {
		t.Fatalf("after deny: %+v, %v, %d calls", out, err, c.writer.calls.Load())
	}
}

// TestHostCallOfAReadTool: only approval-bound calls wait; a read tool is
// refused here (the facade calls it directly) and nothing waits.
func TestHostCallOfAReadTool(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureParams{})
	f.apply(providerDoc("reader", "openai", "externalGlobal", llmtest.NewOpenAI(t), 0, ""))
	res := f.rt.SuspendHostCall(context.Background(), agent.HostCallParams{
		Config: f.resolve("reader"), Actor: f.user("editor"), Caller: agent.Caller{Source: "mcp", Operation: "x"},
		Tool: "search_records", Arguments: json.RawMessage(`{"query":"Aqua"}`),
	})
	if res.Outcome != agent.OutcomeFailed || res.Pending != nil {
		t.Fatalf("result = %+v", res)
	}
	if row := f.run(res.RunID); row.Status != store.RunFailed {
		t.Errorf("run row = %+v", row)
	}
}
