// Package introspecttest gives the tests of the introspection tools
// (code, system, get_site_config) the real thing: the demo TYPO3 site,
// the tools registered behind a real gate over a real store, the demo's
// backend users, and the credentials the demo planted, which no answer may
// ever contain.
package introspecttest

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/demo"
	"github.com/t3agent/t3agent/internal/demo/demotest"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/gate/gatetest"
	"github.com/t3agent/t3agent/internal/guardrail/credential"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/dotenv"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

// Users are the demo's backend users: admin, editor and intern can act,
// former is disabled and acts as no user.
func Users() []string { return []string{"admin", "editor", "intern", "former"} }

// Zones are the four trust zones, most trusted first.
func Zones() []tool.TrustZone {
	return []tool.TrustZone{tool.ZoneLocal, tool.ZonePrivateHosted, tool.ZoneExternalEU, tool.ZoneExternalGlobal}
}

// Fixture is one demo site with tools behind a gate.
type Fixture struct {
	T     testing.TB
	Site  *typo3.Site
	Demo  *demotest.Site
	Gate  *gate.Gate
	Users map[string]*typo3.BackendUser
}

// Demo builds the demo on d (default size) and registers the tools make
// returns for it.
func Demo(t testing.TB, d typo3.Dialect, make func(*typo3.Site) []tool.Tool) *Fixture {
	t.Helper()
	return DemoWith(t, d, demo.InitParams{}, make)
}

// DemoWith is Demo with explicit demo parameters.
func DemoWith(t testing.TB, d typo3.Dialect, p demo.InitParams, make func(*typo3.Site) []tool.Tool) *Fixture {
	t.Helper()
	s := demotest.NewWith(t, d, p)
	now := s.Result.Params.Now
	site, err := typo3.NewSite(typo3.SiteParams{DB: s.Open(t), TCA: tca.Bundled(), Root: s.Root, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return Over(t, site, s, make)
}

// Over registers tools for an existing site.
func Over(t testing.TB, site *typo3.Site, s *demotest.Site, make func(*typo3.Site) []tool.Tool) *Fixture {
	t.Helper()
	g := gatetest.New(t, nil, make(site)...)
	return &Fixture{T: t, Site: site, Demo: s, Gate: g, Users: gatetest.Actors(t, site, Users()...)}
}

// Call invokes a tool as user ("" for no user) through the gate for a
// provider in zone.
func (f *Fixture) Call(user, name string, args map[string]any, zone tool.TrustZone) tool.Result {
	f.T.Helper()
	actor, ok := f.Users[user]
	if !ok && user != "" {
		f.T.Fatalf("user %q is not a demo user", user)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		f.T.Fatal(err)
	}
	if args == nil {
		raw = []byte("{}")
	}
	return f.Gate.Invoke(context.Background(), gate.InvokeParams{
		Name: name, Args: raw, Call: tool.Call{Actor: actor, RunID: "test"},
		Config: gate.Config{Name: "test", TrustZone: zone},
	})
}

// OK calls as admin for a local provider and fails on an error result.
func (f *Fixture) OK(name string, args map[string]any) string {
	f.T.Helper()
	r := f.Call("admin", name, args, tool.ZoneLocal)
	if r.IsError {
		f.T.Fatalf("%s %v: unexpected error result: %s", name, args, r.Content)
	}
	return r.Content
}

// Refused calls as admin for a local provider and fails unless the
// result is an error.
func (f *Fixture) Refused(name string, args map[string]any) string {
	f.T.Helper()
	r := f.Call("admin", name, args, tool.ZoneLocal)
	if !r.IsError {
		f.T.Fatalf("%s %v: want an error result, got: %s", name, args, r.Content)
	}
	return r.Content
}

var serializedSecret = regexp.MustCompile(`s:8:"password";s:\d+:"([^"]+)"`)

// Secrets returns the credentials the demo planted: the values of the
// credential names in the project's .env, the password inside the
// MAILER_DSN, and the password in a scheduler task's serialized object.
func (f *Fixture) Secrets() []string {
	f.T.Helper()
	vars, _, err := dotenv.Read(f.Site.Root)
	if err != nil {
		f.T.Fatal(err)
	}
	var out []string
	for _, v := range vars {
		switch {
		case v.Name == "MAILER_DSN":
			if m := regexp.MustCompile(`:([^:@/]+)@`).FindStringSubmatch(v.Value); m != nil {
				out = append(out, m[1])
			}
		case credential.Name(v.Name) != credential.None || regexp.MustCompile(`KEY|PASSWORD`).MatchString(v.Name):
			out = append(out, v.Value)
		}
	}
	var obj []byte
	err = f.Site.DB.SQL.QueryRow("SELECT serialized_task_object FROM tx_scheduler_task WHERE uid = 3").Scan(&obj)
	if err != nil {
		f.T.Fatal(err)
	}
	if m := serializedSecret.FindSubmatch(obj); m != nil {
		out = append(out, string(m[1]))
	}
	if len(out) < 4 {
		f.T.Fatalf("the demo planted %d credentials, want at least 4: %q", len(out), out)
	}
	return out
}

// Enable switches tools that are off by default on, as an administrator
// would.
func (f *Fixture) Enable(names ...string) {
	f.T.Helper()
	for _, n := range names {
		if _, err := f.Gate.Availability().SetTool(context.Background(), gate.SetToolParams{Name: n, Enabled: true, By: "test"}); err != nil {
			f.T.Fatal(err)
		}
	}
}

// NoSecrets fails t when got holds a credential the demo planted.
func (f *Fixture) NoSecrets(t testing.TB, what, got string) {
	t.Helper()
	for _, s := range f.Secrets() {
		if strings.Contains(got, s) {
			t.Errorf("%s leaks the planted credential %q:\n%s", what, s, got)
		}
	}
}

// Has fails t for every want that got lacks.
func Has(t testing.TB, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}
