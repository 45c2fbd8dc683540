package files_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/t3agent/t3agent/internal/builtin/files"
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

// demoUsers are the demo's backend users; former is disabled and acts as
// nobody.
var demoUsers = []string{"admin", "editor", "intern", "former"}

// fixture runs the files tools of a demo site through a real gate with a
// real store.
type fixture struct {
	t     *testing.T
	site  *typo3.Site
	root  string
	gate  *gate.Gate
	users map[string]*typo3.BackendUser
}

func demoFixture(t *testing.T, d typo3.Dialect) *fixture {
	t.Helper()
	s := demotest.New(t, d)
	site, err := typo3.NewSite(typo3.SiteParams{DB: s.Open(t), TCA: tca.Bundled(), Root: s.Root, Now: demo.DefaultNow})
	if err != nil {
		t.Fatal(err)
	}
	g := gatetest.New(t, nil, files.Tools(site, readpolicy.New(site.TCA), nil)...)
	return &fixture{t: t, site: site, root: s.Root, gate: g, users: gatetest.Actors(t, site, demoUsers...)}
}

// call invokes a tool as user ("" for nobody) for a provider in zone.
func (f *fixture) callIn(zone tool.TrustZone, user, name string, args map[string]any) tool.Result {
	f.t.Helper()
	actor, ok := f.users[user]
	if !ok && user != "" {
		f.t.Fatalf("user %q was not loaded", user)
	}
	if args == nil {
		args = map[string]any{}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		f.t.Fatal(err)
	}
	return f.gate.Invoke(context.Background(), gate.InvokeParams{
		Name:   name,
		Args:   raw,
		Call:   tool.Call{Actor: actor, RunID: "test"},
		Config: gate.Config{Name: "test", TrustZone: zone},
	})
}

func (f *fixture) call(user, name string, args map[string]any) tool.Result {
	f.t.Helper()
	return f.callIn(tool.ZoneExternalGlobal, user, name, args)
}

// ok calls and fails on an error result.
func (f *fixture) ok(user, name string, args map[string]any) string {
	f.t.Helper()
	r := f.call(user, name, args)
	if r.IsError {
		f.t.Fatalf("%s %v as %s: unexpected error: %s", name, args, user, r.Content)
	}
	f.noLeak(name, user, r.Content)
	return r.Content
}

// refused calls and fails unless the result is an error.
func (f *fixture) refused(user, name string, args map[string]any) string {
	f.t.Helper()
	r := f.call(user, name, args)
	if !r.IsError {
		f.t.Fatalf("%s %v as %s: want an error, got: %s", name, args, user, r.Content)
	}
	f.noLeak(name, user, r.Content)
	return r.Content
}

// noLeak fails when an answer shows what no files tool may: a server path,
// the storage outside the allow-list, a hidden file, and for non-admins
// anything of the internal folder outside their mount.
func (f *fixture) noLeak(name, user, content string) {
	f.t.Helper()
	bad := []string{f.root, "/public/", "fileadmin/internal/", "archive", "Board", "minutes-2025", ".htaccess", ".editor-notes",
		"settings.php", "encryptionKey", "$argon2"}
	if user != "admin" {
		bad = append(bad, "price-list", "/internal", "Price list", "pages:9 ")
	}
	for _, b := range bad {
		if strings.Contains(content, b) {
			f.t.Errorf("%s as %s shows %q:\n%s", name, user, b, content)
		}
	}
}

// storageBase is the directory of storage 1.
func (f *fixture) storageBase() string { return filepath.Join(f.root, "public", "fileadmin") }

// symlink creates a link below storage 1.
func (f *fixture) symlink(target, rel string) {
	f.t.Helper()
	if err := os.Symlink(target, filepath.Join(f.storageBase(), filepath.FromSlash(rel))); err != nil {
		f.t.Fatal(err)
	}
}

func args(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

func dialects() []typo3.Dialect {
	return []typo3.Dialect{typo3.DialectSQLite, typo3.DialectMySQL, typo3.DialectPostgres}
}
