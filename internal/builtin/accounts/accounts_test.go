package accounts_test

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/t3agent/t3agent/internal/builtin/accounts"
	"github.com/t3agent/t3agent/internal/demo"
	"github.com/t3agent/t3agent/internal/demo/demotest"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/gate/gatetest"
	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var toolNames = []string{"list_be_users", "list_be_groups", "list_be_users_raw"}

type fixture struct {
	t     *testing.T
	site  *typo3.Site
	rw    *typo3.DB
	gate  *gate.Gate
	users map[string]*typo3.BackendUser
}

func newFixture(t *testing.T, d typo3.Dialect, wrap func(tool.Tool) tool.Tool) *fixture {
	t.Helper()
	s := demotest.New(t, d)
	site, err := typo3.NewSite(typo3.SiteParams{DB: s.Open(t), TCA: tca.Bundled(), Root: s.Root, Now: demo.DefaultNow})
	if err != nil {
		t.Fatal(err)
	}
	tools := accounts.Tools(site)
	if wrap != nil {
		for i := range tools {
			tools[i] = wrap(tools[i])
		}
	}
	rw, err := typo3.Open(context.Background(), s.DSN, typo3.OpenParams{Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rw.Close() })
	g := gatetest.New(t, nil, tools...)
	return &fixture{t: t, site: site, rw: rw, gate: g, users: gatetest.Actors(t, site, "admin", "editor", "intern", "former")}
}

func (f *fixture) call(zone tool.TrustZone, user, name string) tool.Result {
	f.t.Helper()
	return f.gate.Invoke(context.Background(), gate.InvokeParams{
		Name: name, Args: json.RawMessage(`{}`),
		Call:   tool.Call{Actor: f.users[user], RunID: "test"},
		Config: gate.Config{Name: "test", TrustZone: zone},
	})
}

func (f *fixture) enableRaw() {
	f.t.Helper()
	if _, err := f.gate.Availability().SetTool(context.Background(), gate.SetToolParams{Name: "list_be_users_raw", Enabled: true, By: "test"}); err != nil {
		f.t.Fatal(err)
	}
}

// secrets match what no accounts answer may hold: password hashes of any
// algorithm TYPO3 writes, MFA settings, reset tokens and the columns'
// names.
var secrets = regexp.MustCompile(`(?i)\$argon2|\$2[aby]\$|\$pbkdf2|\$P\$|password|mfa|reset_token|totp|secret`)

func TestSpecs(t *testing.T) {
	t.Parallel()
	f := newFixture(t, typo3.DialectSQLite, nil)
	var names []string
	for _, tl := range accounts.Tools(f.site) {
		s := tl.Spec()
		names = append(names, s.Name)
		if err := s.Validate(); err != nil {
			t.Error(err)
		}
		if s.Group != tool.GroupAccounts || s.DataClass != tool.SecretAdjacent || !s.AdminOnly || s.Effect != tool.ReadOnly ||
			s.EnabledByDefault != (s.Name != "list_be_users_raw") {
			t.Errorf("%s: %+v", s.Name, s)
		}
	}
	if !slices.Equal(names, toolNames) {
		t.Errorf("tools %v", names)
	}
}

func TestDemo(t *testing.T) {
	t.Parallel()
	for _, d := range []typo3.Dialect{typo3.DialectSQLite, typo3.DialectMySQL, typo3.DialectPostgres} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, d, nil)
			// Plant an MFA setting and a reset token on the editor.
			if _, err := f.rw.SQL.ExecContext(context.Background(), `UPDATE be_users SET mfa = '{"totp":{"secret":"JBSWY3DPEHPK3PXP","active":true}}', password_reset_token = '$argon2id$plantedtoken' WHERE uid = 2`); err != nil {
				t.Fatal(err)
			}
			r := f.call(tool.ZoneLocal, "admin", "list_be_users")
			want := "4 backend user(s):\n" +
				"- [1] admin (Site Administrator, admin@nordlicht-pumps.example) · admin · last login 2026-05-31 00:00 UTC\n" +
				"- [2] editor (Erika Editor, erika.editor@nordlicht-pumps.example) · last login 2026-05-30 00:00 UTC\n" +
				"- [3] intern (Ivo Intern, ivo.intern@nordlicht-pumps.example) · last login 2026-05-29 00:00 UTC\n" +
				"- [4] former (Frida Former, frida.former@nordlicht-pumps.example) · disabled · last login 2026-05-28 00:00 UTC"
			if r.IsError || r.Content != want {
				t.Errorf("list_be_users:\n%s\nwant:\n%s", r.Content, want)
			}
			r = f.call(tool.ZoneLocal, "admin", "list_be_groups")
			want = "7 backend group(s):\n- [1] Editors\n- [2] Interns\n- [3] News readers\n- [4] Management\n- [5] Cycle A\n- [6] Cycle B\n- [7] Hidden group [hidden]"
			if r.IsError || r.Content != want {
				t.Errorf("list_be_groups:\n%s", r.Content)
			}
			// Disabled by default: the gate refuses until an admin enables it.
			if r := f.call(tool.ZoneLocal, "admin", "list_be_users_raw"); !r.IsError || !strings.Contains(r.Content, "not available") {
				t.Errorf("raw before enabling: %q", r.Content)
			}
			f.enableRaw()
			r = f.call(tool.ZoneLocal, "admin", "list_be_users_raw")
			if r.IsError || !strings.HasPrefix(r.Content, "4 backend user(s)") || !strings.Contains(r.Content, "- be_users:2\n") ||
				!strings.Contains(r.Content, "  username: editor\n") || !strings.Contains(r.Content, "  lang: default") ||
				!strings.Contains(r.Content, "  realName: Erika Editor") && !strings.Contains(r.Content, "  realname: Erika Editor") {
				t.Errorf("list_be_users_raw:\n%s", r.Content)
			}
			for _, name := range toolNames {
				r := f.call(tool.ZoneLocal, "admin", name)
				body := strings.ReplaceAll(r.Content, "passwords, MFA", "")
				if m := secrets.FindAllString(body, -1); len(m) > 0 {
					t.Errorf("%s shows %v:\n%s", name, m, r.Content)
				}
				for _, line := range strings.Split(r.Content, "\n") {
					if len([]rune(line)) > 260 {
						t.Errorf("%s: a line of %d characters", name, len([]rune(line)))
					}
				}
			}
		})
	}
}

// TestGate: non-admins and no user never reach the tools; no zone but
// local may receive them.
func TestGate(t *testing.T) {
	t.Parallel()
	f := newFixture(t, typo3.DialectSQLite, nil)
	f.enableRaw()
	ctx := context.Background()
	for _, name := range toolNames {
		for _, user := range []string{"editor", "intern", "former"} {
			want := `Error: tool "` + name + `" is not available.`
			if r := f.call(tool.ZoneLocal, user, name); !r.IsError || r.Content != want {
				t.Errorf("%s as %s: %q, want %q", name, user, r.Content, want)
			}
		}
		for _, z := range []tool.TrustZone{tool.ZonePrivateHosted, tool.ZoneExternalEU, tool.ZoneExternalGlobal} {
			d, err := f.gate.Decide(ctx, gate.DecideParams{Tool: name, Actor: f.users["admin"], Config: gate.Config{Name: "z", TrustZone: z}})
			if err != nil || d.Allowed || d.Reason != gate.ReasonTrustZone {
				t.Errorf("%s for %s: %+v %v", name, z, d, err)
			}
		}
	}
}

// relaxed drops the admin-only flag, the registration mistake the tools'
// own check defends against.
type relaxed struct{ tool.Tool }

func (r relaxed) Spec() tool.Spec {
	s := r.Tool.Spec()
	s.AdminOnly = false
	s.EnabledByDefault = true
	return s
}

func TestOwnAdminCheck(t *testing.T) {
	t.Parallel()
	f := newFixture(t, typo3.DialectSQLite, func(tl tool.Tool) tool.Tool { return relaxed{tl} })
	for _, name := range toolNames {
		for user, want := range map[string]string{"editor": accounts.DeniedAdmin, "intern": accounts.DeniedAdmin,
			"former": readpolicy.DeniedUser} {
			if r := f.call(tool.ZoneLocal, user, name); !r.IsError || r.Content != want {
				t.Errorf("%s as %s: %q, want %q", name, user, r.Content, want)
			}
		}
	}
}

func TestIsSecretColumn(t *testing.T) {
	t.Parallel()
	for _, c := range []string{"password", "mfa", "mfa_providers", "password_reset_token", "passwordChanged", "user_mfa", "api_key"} {
		if !accounts.IsSecretColumn(c) {
			t.Errorf("%s is not secret", c)
		}
	}
	for _, c := range []string{"username", "email", "realName", "lang", "lastlogin", "uc", "TSconfig", "admin"} {
		if accounts.IsSecretColumn(c) {
			t.Errorf("%s is secret", c)
		}
	}
}
