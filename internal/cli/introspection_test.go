package cli_test

import (
	"context"
	"strings"
	"testing"
)

// TestExplainIntrospectionTools: tools explain describes every
// configuration, code and system tool, and an admin can call one.
func TestExplainIntrospectionTools(t *testing.T) {
	t.Parallel()
	work := demoDir(t)
	ctx := context.Background()
	for name, word := range map[string]string{
		"get_site_config": "baseVariant", "get_last_exception": "stack frames", "read_source": "project root",
		"search_code": "RE2", "fetch_logs": "sys_log", "list_deprecations": "deprecation", "get_system_status": "TYPO3 version",
		"list_extensions": "installed.json", "list_middlewares": "middleware", "list_scheduler_tasks": "scheduler",
		"probe_url": "site base", "get_env": ".env", "get_env_raw": "Disabled by default", "get_php_info": "php -r",
		"get_php_info_raw": "php -i",
	} {
		out, _, err := run(t, ctx, work, nil, "tools", "explain", name, "--as", "admin")
		if err != nil {
			t.Errorf("explain %s: %v", name, err)
			continue
		}
		if !strings.Contains(out, name) || !strings.Contains(out, word) {
			t.Errorf("explain %s lacks %q:\n%s", name, word, out)
		}
	}
	out, _, err := run(t, ctx, work, nil, "tools", "call", "get_system_status", "--as", "admin")
	if err != nil || !strings.Contains(out, "TYPO3: 13.4.34") {
		t.Errorf("call get_system_status: %v\n%s", err, out)
	}
}
