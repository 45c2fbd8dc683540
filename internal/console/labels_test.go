package console

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
)

// codePrefixes are the label keys the HTTP layer's labels hold (Auth.Label).
var codePrefixes = []string{"status.", "error.", "notice.", "gate.", "chat.approvalPending"}

// TestLabelsComplete: both languages have the same keys, none empty or
// left English; every key a template names literally, every run status,
// event kind and effect has one.
func TestLabelsComplete(t *testing.T) {
	t.Parallel()
	en, de := texts["en"], texts["de"]
	for k, v := range en {
		switch {
		case strings.TrimSpace(v) == "":
			t.Errorf("%s has no English text", k)
		case strings.TrimSpace(de[k]) == "":
			t.Errorf("%s has no German text", k)
		case de[k] == v && !sameInBoth[k]:
			t.Errorf("%s: the German text is the English one: %q", k, v)
		}
	}
	for k := range de {
		if _, ok := en[k]; !ok {
			t.Errorf("%s has no English text", k)
		}
	}
	keys := []string{}
	for _, st := range []store.RunStatus{store.RunQueued, store.RunRunning, store.RunWaitingForApproval, store.RunWaitingForInput,
		store.RunCompleted, store.RunFailed, store.RunCancelled} {
		keys = append(keys, "run."+string(st))
	}
	for _, k := range []agent.EventKind{agent.EventContext, agent.EventRequest, agent.EventLLM, agent.EventTool, agent.EventGuardrail,
		agent.EventApproval, agent.EventInput, agent.EventDecision, agent.EventInputSubmitted, agent.EventRefused, agent.EventHostResult} {
		keys = append(keys, "event."+string(k))
	}
	for _, e := range []tool.Effect{tool.ReadOnly, tool.IdempotentWrite, tool.NonIdempotentWrite} {
		keys = append(keys, "effect."+string(e))
	}
	for _, r := range []store.ChatRole{store.ChatRoleUser, store.ChatRoleAssistant} {
		keys = append(keys, "role."+string(r))
	}
	literal := regexp.MustCompile(`\.L[f]? "([^"]+)"`)
	err := fs.WalkDir(templateFS, "templates", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(templateFS, path)
		for _, m := range literal.FindAllStringSubmatch(string(b), -1) {
			keys = append(keys, m[1])
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if _, ok := en[k]; ok {
			continue
		}
		code := false
		for _, p := range codePrefixes {
			code = code || strings.HasPrefix(k, p)
		}
		if !code {
			t.Errorf("the label %s is missing", k)
		}
	}
}

// sameInBoth are labels that read the same in English and German.
var sameInBoth = map[string]bool{"chat.title": true, "nav.chat": true, "role.system": true, "runs.status": true}
