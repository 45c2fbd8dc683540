package system_test

import (
	"testing"

	"github.com/t3agent/t3agent/internal/builtin/introspect/introspecttest"
	"github.com/t3agent/t3agent/internal/demo"
	"github.com/t3agent/t3agent/internal/typo3"
)

// BenchmarkLargeDemo runs the system tools the issue sets a budget for
// (p50 < 20 ms) on the large demo: 10 000 pages, 200 000 content
// elements, SQLite. Building the demo takes about a minute.
//
//	go test -run '^$' -bench LargeDemo -benchtime 200x ./internal/builtin/system
func BenchmarkLargeDemo(b *testing.B) {
	f := introspecttest.DemoWith(b, typo3.DialectSQLite, demo.InitParams{Pages: 10000, Content: 200000}, tools)
	for name, args := range map[string]map[string]any{
		"get_system_status": nil,
		"list_extensions":   nil,
		"fetch_logs":        {"limit": 50},
		"fetch_logs_error":  {"level": "error", "limit": 50},
	} {
		tool := name
		if name == "fetch_logs_error" {
			tool = "fetch_logs"
		}
		b.Run(name, func(b *testing.B) { f.Bench(b, tool, args) })
	}
}
