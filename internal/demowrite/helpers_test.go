package demowrite_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/t3agent/t3agent/internal/demo"
	"github.com/t3agent/t3agent/internal/demowrite"
	"github.com/t3agent/t3agent/internal/logtest"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

// built is the demo every test copies: building one takes long under
// the race detector, copying its database file does not.
var built *demo.Result

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "demowrite-test-")
	if err != nil {
		panic(err)
	}
	built, err = demo.Init(context.Background(), demo.InitParams{Dir: filepath.Join(dir, "demo"), Pages: 30, Content: 40, FastHashes: true})
	if err != nil {
		panic(err)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	if code == 0 {
		goleak.VerifyNone(nil)
	}
	os.Exit(code)
}

// password is a demo user's password.
func password(t *testing.T, user string) string {
	t.Helper()
	u, ok := built.User(user)
	if !ok {
		t.Fatalf("no demo user %s", user)
	}
	return u.Password
}

// copyDemo gives a test its own copy of the demo's site database.
func copyDemo(t *testing.T) *demo.Result {
	t.Helper()
	src := strings.TrimPrefix(built.SiteDSN, "sqlite:")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "site.db")
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
	res := *built
	res.SiteDSN = "sqlite:" + dst
	return &res
}

// clock is the fixture's time: tstamp values are checked against it.
var clock = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

// fixture is a small demo site, a store and a started write server.
type fixture struct {
	demo  *demo.Result
	store store.Store
	site  *typo3.Site
	srv   *demowrite.Server
	log   *logtest.Buffer
	db    *sql.DB // reads the site to check writes
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{demo: copyDemo(t), log: &logtest.Buffer{}}
	ctx := context.Background()
	var err error
	f.store, err = store.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "t3agent.db"), store.OpenParams{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.store.Close() })
	ro, err := typo3.Open(ctx, f.demo.SiteDSN, typo3.OpenParams{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ro.Close() })
	f.db = ro.SQL
	f.site, err = typo3.NewSite(typo3.SiteParams{DB: ro, TCA: tca.Bundled(), Root: f.demo.ProjectRoot})
	if err != nil {
		t.Fatal(err)
	}
	f.srv = f.start(t, "demo-writes")
	return f
}

// start starts a write server over the fixture with a key derived from
// label.
func (f *fixture) start(t *testing.T, label string) *demowrite.Server {
	t.Helper()
	srv, err := demowrite.New(context.Background(), demowrite.Params{
		Demo: f.demo, Site: f.site, Store: f.store, Key: sha256.Sum256([]byte(label)), SiteName: "Nordlicht Pumps",
		Now: func() time.Time { return clock }, Logger: slog.New(slog.NewTextHandler(f.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv
}

// login obtains a token through the real OAuth flow as user.
func (f *fixture) login(t *testing.T, srv *demowrite.Server, user, resource string) string {
	t.Helper()
	return f.loginToken(t, srv, user, resource).Access
}

func (f *fixture) loginToken(t *testing.T, srv *demowrite.Server, user, resource string) demowrite.Token {
	t.Helper()
	tok, err := demowrite.Login(context.Background(), demowrite.LoginParams{URL: srv.URL(), Username: user, Password: password(t, user), Resource: resource})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok.Access, "t3o_") || tok.Refresh == "" || !tok.ExpiresAt.After(time.Now()) {
		t.Fatalf("token = %+v", tok)
	}
	return tok
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens an MCP session to srv with token.
func connect(t *testing.T, srv *demowrite.Server, token string) (*mcp.ClientSession, error) {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: srv.URL() + "/mcp", HTTPClient: &http.Client{Transport: bearer{token}}, DisableStandaloneSSE: true,
	}, nil)
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

func mustConnect(t *testing.T, srv *demowrite.Server, token string) *mcp.ClientSession {
	t.Helper()
	cs, err := connect(t, srv, token)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// count is the number of rows of a query on the site.
func (f *fixture) count(t *testing.T, q string, args ...any) int {
	t.Helper()
	var n int
	if err := f.db.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func (f *fixture) historyRows(t *testing.T, table string, uid int64) int {
	t.Helper()
	return f.count(t, `SELECT COUNT(*) FROM sys_history WHERE tablename = ? AND recuid = ?`, table, uid)
}

func (f *fixture) allHistory(t *testing.T) int {
	t.Helper()
	return f.count(t, `SELECT COUNT(*) FROM sys_history`)
}

func (f *fixture) str(t *testing.T, q string, args ...any) string {
	t.Helper()
	var s sql.NullString
	if err := f.db.QueryRow(q, args...).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s.String
}
