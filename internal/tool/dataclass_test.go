package tool_test

import (
	"encoding/json"
	"testing"

	"github.com/t3agent/t3agent/internal/tool"
)

func TestDataClassJSON(t *testing.T) {
	t.Parallel()
	for c := tool.PublicContent; c <= tool.SecretAdjacent; c++ {
		b, err := json.Marshal(c)
		if err != nil || string(b) != `"`+c.String()+`"` {
			t.Errorf("Marshal(%v) = %s, %v", c, b, err)
		}
		var back tool.DataClass
		if err := json.Unmarshal(b, &back); err != nil || back != c {
			t.Errorf("Unmarshal(%s) = %v, %v", b, back, err)
		}
	}
	if _, err := json.Marshal(tool.DataClass(0)); err == nil {
		t.Error("the zero class encoded")
	}
	var c tool.DataClass
	if err := json.Unmarshal([]byte(`"topSecret"`), &c); err == nil {
		t.Error("an unknown class decoded")
	}
}

func TestGroupDataClass(t *testing.T) {
	t.Parallel()
	for group, want := range map[string]tool.DataClass{
		tool.GroupContent:       tool.EditorContent,
		tool.GroupFiles:         tool.EditorContent,
		tool.GroupRAG:           tool.PublicContent,
		tool.GroupStructure:     tool.InternalConfiguration,
		tool.GroupConfiguration: tool.InternalConfiguration,
		tool.GroupSystem:        tool.SystemDiagnostics,
		tool.GroupAccounts:      tool.SecretAdjacent,
		// Unknown groups, MCP groups included, fail closed.
		"mcp_docs": tool.SecretAdjacent,
		"my_ext":   tool.SecretAdjacent,
		"":         tool.SecretAdjacent,
		"Content":  tool.SecretAdjacent,
	} {
		if got := tool.GroupDataClass(group); got != want {
			t.Errorf("GroupDataClass(%q) = %v, want %v", group, got, want)
		}
	}
}
