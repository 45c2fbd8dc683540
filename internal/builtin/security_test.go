package builtin_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/builtin"
	"github.com/t3agent/t3agent/internal/builtin/introspect/introspecttest"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

// introspection are the configuration, code and system tools of issue
// 15 with arguments that make each one read as much as it can.
var introspection = map[string]map[string]any{
	"get_site_config":      {"identifier": "campaign"},
	"get_last_exception":   {"search": "transport"},
	"read_source":          {"path": "packages/site_demo/Classes/DataProcessing/TeaserPagesProcessor.php", "lines": 200},
	"search_code":          {"pattern": "a", "max_results": 100},
	"fetch_logs":           {"limit": 50},
	"list_deprecations":    {"limit": 40},
	"get_system_status":    {},
	"list_extensions":      {},
	"list_middlewares":     {},
	"list_scheduler_tasks": {},
	"probe_url":            {"url": "http://169.254.169.254/latest/meta-data"},
	"get_env":              {},
	"get_env_raw":          {},
	"get_php_info":         {},
	"get_php_info_raw":     {},
}

// TestIntrospectionSecurityMatrix runs every introspection tool as every
// demo user for a provider in every trust zone, through the real gate
// with every builtin registered:
//   - non-admins (and former, who cannot act) are refused with the gate's
//     neutral sentence, before the tool runs;
//   - systemDiagnostics, secretAdjacent and sourceCode tools are never
//     offered to externalGlobal (nor anything above a zone's ceiling), and
//     an admin calling one there is refused as well;
//   - where an admin may call them, no answer holds a credential the demo
//     planted (.env, the SMTP password in a log, the scheduler's
//     serialized task), the encryption key of settings.php, a sys_log IP
//     address, or the marker of a file behind a denied path.
func TestIntrospectionSecurityMatrix(t *testing.T) {
	t.Parallel()
	f := introspecttest.Demo(t, typo3.DialectSQLite, func(s *typo3.Site) []tool.Tool { return builtin.Tools(s, readpolicy.New(s.TCA)) })
	f.Enable("get_env_raw", "get_php_info_raw")
	ctx := context.Background()
	forbidden := append(f.Secrets(), settingsKey(t, f.Site.Root))
	rows, err := f.Site.DB.SQL.Query("SELECT DISTINCT IP FROM sys_log WHERE IP <> ''")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var ip string
		if err := rows.Scan(&ip); err != nil {
			t.Fatal(err)
		}
		forbidden = append(forbidden, ip)
	}
	_ = rows.Close()
	// A file that only a broken guard would read, linked from the site package.
	marker := "DENIED-FILE-MARKER-0815"
	if err := os.WriteFile(filepath.Join(f.Site.Root, "config", "system", "additional.php"), []byte("<?php // "+marker+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "..", "config", "system", "additional.php"), filepath.Join(f.Site.Root, "packages", "site_demo", "additional.md")); err != nil {
		t.Fatal(err)
	}
	forbidden = append(forbidden, marker)

	classes := map[string]tool.DataClass{}
	for _, e := range f.Gate.Registry().List(ctx) {
		if _, ok := introspection[e.Spec.Name]; ok {
			classes[e.Spec.Name] = e.Spec.DataClass
		}
	}
	if len(classes) != len(introspection) {
		t.Fatalf("registered %d of the %d introspection tools: %v", len(classes), len(introspection), classes)
	}
	for _, zone := range introspecttest.Zones() {
		cfg := gate.Config{Name: "matrix", TrustZone: zone}
		for _, user := range introspecttest.Users() {
			actor := f.Users[user]
			offered, err := f.Gate.Offer(ctx, gate.OfferParams{Actor: actor, Config: cfg})
			if err != nil {
				t.Fatal(err)
			}
			for name, args := range introspection {
				what := fmt.Sprintf("%s as %s for %s", name, user, zone)
				class := classes[name]
				d, err := f.Gate.Decide(ctx, gate.DecideParams{Tool: name, Actor: actor, Config: cfg})
				if err != nil {
					t.Fatal(err)
				}
				res := f.Call(user, name, args, zone)
				switch {
				case user != "admin":
					if d.Allowed || d.Reason != gate.ReasonRequiresAdmin || offered.Has(name) {
						t.Errorf("%s: decision %+v, offered %v; want requires_admin", what, d, offered.Has(name))
					}
					if want := `Error: tool "` + name + `" is not available.`; !res.IsError || res.Content != want {
						t.Errorf("%s: %q, want the neutral %q", what, res.Content, want)
					}
				case !zone.Permits(class):
					if d.Allowed || d.Reason != gate.ReasonTrustZone || offered.Has(name) || !res.IsError {
						t.Errorf("%s (%s above the zone's ceiling): decision %+v, offered %v, result %q", what, class, d, offered.Has(name), res.Content)
					}
				default:
					if !d.Allowed || !offered.Has(name) {
						t.Errorf("%s: decision %+v, offered %v; want allowed", what, d, offered.Has(name))
					}
					// Every tool really ran; probe_url's metadata URL is refused by its guard.
					if res.IsError != (name == "probe_url") {
						t.Errorf("%s: result %q (error %v)", what, res.Content, res.IsError)
					}
				}
				for _, s := range forbidden {
					if strings.Contains(res.Content, s) {
						t.Errorf("%s: the answer holds %q:\n%.500s", what, s, res.Content)
					}
				}
			}
			if zone == tool.ZoneExternalGlobal {
				for _, n := range offered.Names() {
					if c := classes[n]; c == tool.SystemDiagnostics || c == tool.SecretAdjacent {
						t.Errorf("%s is offered to externalGlobal as %s", n, user)
					}
				}
			}
		}
	}
	// Admin, local: the denied file stays unread through every path tool.
	for _, args := range []map[string]any{
		{"path": "packages/site_demo/additional.md"}, {"path": "config/system/additional.php"},
	} {
		if r := f.Call("admin", "read_source", args, tool.ZoneLocal); !r.IsError || r.Content != "File not found or not permitted." {
			t.Errorf("read_source %v: %q", args, r.Content)
		}
	}
	if r := f.Call("admin", "search_code", map[string]any{"pattern": marker}, tool.ZoneLocal); r.IsError || !strings.HasPrefix(r.Content, "No match") {
		t.Errorf("search_code found the denied file: %q", r.Content)
	}
}

var encryptionKey = regexp.MustCompile(`'encryptionKey' => '([0-9a-f]+)'`)

func settingsKey(t *testing.T, root string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "config", "system", "settings.php"))
	if err != nil {
		t.Fatal(err)
	}
	m := encryptionKey.FindSubmatch(b)
	if m == nil {
		t.Fatal("settings.php has no encryptionKey")
	}
	return string(m[1])
}
