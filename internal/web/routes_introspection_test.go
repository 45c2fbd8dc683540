package web

import (
	"testing"

	"github.com/t3agent/t3agent/internal/gate"
)

// TestIntrospectionToolsExplained: the API describes every
// configuration, code and system tool, with the gate's decision: allowed
// for an admin at home unless disabled by default, requires_admin for an
// editor (the raw variants: tool_disabled first), never allowed for an
// external global zone.
func TestIntrospectionToolsExplained(t *testing.T) {
	t.Parallel()
	e := setup(t, envOptions{})
	editor, admin := e.login("editor"), e.login("admin")
	var calls []call
	for name, class := range map[string]string{
		"get_site_config": "secretAdjacent", "get_last_exception": "secretAdjacent", "read_source": "sourceCode",
		"search_code": "sourceCode", "fetch_logs": "systemDiagnostics", "list_deprecations": "systemDiagnostics",
		"get_system_status": "systemDiagnostics", "list_extensions": "systemDiagnostics", "list_middlewares": "systemDiagnostics",
		"list_scheduler_tasks": "systemDiagnostics", "probe_url": "systemDiagnostics", "get_env": "systemDiagnostics",
		"get_php_info": "systemDiagnostics", "get_env_raw": "secretAdjacent", "get_php_info_raw": "secretAdjacent",
	} {
		path := "/api/v1/tools/" + name + "/explain"
		home := []string{`"allowed":true`, `"dataClass":"` + class + `"`, `"inputSchema":{`}
		editorReason := gate.ReasonRequiresAdmin
		if name == "get_env_raw" || name == "get_php_info_raw" {
			// Disabled by default: the first failing check for everyone.
			home = []string{`"allowed":false`, `"reason":"` + string(gate.ReasonToolDisabled) + `"`, `"dataClass":"` + class + `"`}
			editorReason = gate.ReasonToolDisabled
		}
		calls = append(calls,
			call{name + " as admin", admin, "GET", path + "?zone=local", nil, nil, 200, home, nil},
			call{name + " as editor", editor, "GET", path + "?zone=local", nil, nil, 200,
				[]string{`"allowed":false`, `"reason":"` + string(editorReason) + `"`}, nil},
			call{name + " external", admin, "GET", path + "?zone=externalGlobal", nil, nil, 200, []string{`"allowed":false`}, nil},
		)
	}
	check(t, calls)
}
