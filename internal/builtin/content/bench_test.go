package content_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/t3agent/t3agent/internal/builtin/content"
	"github.com/t3agent/t3agent/internal/dbtest"
	"github.com/t3agent/t3agent/internal/demo"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/siteindex"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

// The large demo of the benchmarks: 10 000 pages, 200 000 content
// elements.
const (
	bigPages   = 10000
	bigContent = 200000
)

// bigDemos holds the large demo of each dialect. Building one takes about
// a minute, so it is built on first use by a benchmark, shared by every
// benchmark of the test binary, and removed by TestMain. This is the only
// package-level state, and it exists for the benchmarks alone: normal
// tests never touch it.
var bigDemos = &bigDemoSet{m: map[typo3.Dialect]*bigDemo{}}

type bigDemoSet struct {
	mu sync.Mutex
	m  map[typo3.Dialect]*bigDemo
}

type bigDemo struct {
	once    sync.Once
	dsn     string
	err     error
	cleanup []func()
}

// get returns the DSN of the large demo on d, building it once.
func (s *bigDemoSet) get(b *testing.B, d typo3.Dialect) string {
	b.Helper()
	s.mu.Lock()
	bd := s.m[d]
	if bd == nil {
		bd = &bigDemo{}
		s.m[d] = bd
	}
	s.mu.Unlock()
	bd.once.Do(func() { bd.build(d) })
	if bd.err != nil {
		if strings.HasPrefix(bd.err.Error(), "skip: ") {
			b.Skip(strings.TrimPrefix(bd.err.Error(), "skip: "))
		}
		b.Fatal(bd.err)
	}
	return bd.dsn
}

func (bd *bigDemo) build(d typo3.Dialect) {
	dir, err := os.MkdirTemp("", "t3agent-content-bench-")
	if err != nil {
		bd.err = err
		return
	}
	bd.cleanup = append(bd.cleanup, func() { _ = os.RemoveAll(dir) })
	p := demo.InitParams{Dir: filepath.Join(dir, "demo"), Pages: bigPages, Content: bigContent, FastHashes: true}
	if d == typo3.DialectMySQL {
		if p.SiteDSN, err = bd.mysqlDatabase(); err != nil {
			bd.err = err
			return
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	res, err := demo.Init(ctx, p)
	if err != nil {
		bd.err = err
		return
	}
	bd.dsn = res.SiteDSN
}

// mysqlDatabase creates an empty database on the test server and
// registers its removal.
func (bd *bigDemo) mysqlDatabase() (string, error) {
	base := os.Getenv(dbtest.MySQLEnv)
	if base == "" {
		return "", &skipError{dbtest.MySQLEnv + " is not set"}
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	cfg := mysql.NewConfig()
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.Net, cfg.Addr = "tcp", u.Host
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return "", err
	}
	rnd := make([]byte, 6)
	_, _ = rand.Read(rnd)
	name := "t3a_bench_" + hex.EncodeToString(rnd)
	if _, err := admin.Exec("CREATE DATABASE `" + name + "` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"); err != nil {
		_ = admin.Close()
		return "", err
	}
	bd.cleanup = append(bd.cleanup, func() {
		_, _ = admin.Exec("DROP DATABASE IF EXISTS `" + name + "`")
		_ = admin.Close()
	})
	u.Path = "/" + name
	return u.String(), nil
}

type skipError struct{ why string }

func (e *skipError) Error() string { return "skip: " + e.why }

// close removes every large demo built.
func (s *bigDemoSet) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, bd := range s.m {
		for i := len(bd.cleanup) - 1; i >= 0; i-- {
			bd.cleanup[i]()
		}
	}
}

// benchEnv is the large demo opened as t3agent opens it (no query log),
// the content tools behind the gate, and the demo's users.
type benchEnv struct {
	d     typo3.Dialect
	dsn   string
	site  *typo3.Site
	gate  *gate.Gate
	users map[string]*typo3.BackendUser
}

func newBenchEnv(b *testing.B, d typo3.Dialect) *benchEnv {
	b.Helper()
	dsn := bigDemos.get(b, d)
	db, err := typo3.Open(context.Background(), dsn, typo3.OpenParams{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	tc := tca.Bundled()
	site := siteOn(b, db, tc, "")
	g, _ := newGate(b, content.Tools(site, readpolicy.New(tc)))
	e := &benchEnv{d: d, dsn: dsn, site: site, gate: g, users: map[string]*typo3.BackendUser{}}
	for _, n := range []string{"admin", "editor"} {
		u, err := site.BackendUserByName(context.Background(), n)
		if err != nil {
			b.Fatal(err)
		}
		e.users[n] = u
	}
	return e
}

func (e *benchEnv) invoke(b *testing.B, user, name string, args map[string]any) tool.Result {
	raw, _ := json.Marshal(args)
	res := e.gate.Invoke(context.Background(), gate.InvokeParams{
		Name: name, Args: raw, Call: tool.Call{Actor: e.users[user]},
		Config: gate.Config{Name: "bench", TrustZone: tool.ZoneExternalGlobal},
	})
	if res.IsError {
		b.Fatalf("%s as %s: %s", name, user, res.Content)
	}
	return res
}

// capture returns the statements one warm call sends (the schema is
// cached by then, as in a running server), for the raw benchmarks.
func (e *benchEnv) capture(b *testing.B, user, name string, args map[string]any) []statement {
	b.Helper()
	db, log := openLogged(b, e.dsn, e.d)
	tc := tca.Bundled()
	site := siteOn(b, db, tc, "")
	g, _ := newGate(b, content.Tools(site, readpolicy.New(tc)))
	raw, _ := json.Marshal(args)
	call := func() {
		res := g.Invoke(context.Background(), gate.InvokeParams{Name: name, Args: raw,
			Call: tool.Call{Actor: e.users[user]}, Config: gate.Config{Name: "bench", TrustZone: tool.ZoneExternalGlobal}})
		if res.IsError {
			b.Fatal(res.Content)
		}
	}
	call()
	m := log.mark()
	call()
	var out []statement
	for _, s := range log.since(m) {
		// The MySQL driver's prepared path logs the text once more.
		if !strings.HasPrefix(s.text, "PREPARE ") {
			out = append(out, s)
		}
	}
	return out
}

// replay runs the captured statements directly and reads every row.
func replay(b *testing.B, db *typo3.DB, stmts []statement) {
	ctx := context.Background()
	for _, s := range stmts {
		rows, err := db.SQL.QueryContext(ctx, s.text, s.args...)
		if err != nil {
			b.Fatal(err)
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				b.Fatal(err)
			}
		}
		if err := rows.Err(); err != nil {
			b.Fatal(err)
		}
		_ = rows.Close()
	}
}

// benchCase is one benchmarked call.
type benchCase struct {
	name, user string
	args       map[string]any
}

func searchCases() []benchCase {
	return []benchCase{
		// A common word: every table stops early once the budget is met.
		{"admin/common", "admin", map[string]any{"query": "pump"}},
		{"editor/common", "editor", map[string]any{"query": "pump"}},
		// A word that occurs nowhere: every searchable column of every
		// readable table is scanned in full.
		{"admin/absent", "admin", map[string]any{"query": "zyxwvq"}},
		{"admin/content", "admin", map[string]any{"query": "warranty", "table": "tt_content", "limit": 50}},
	}
}

func readCases() []benchCase {
	return []benchCase{
		{"admin/filtered", "admin", map[string]any{"table": "tt_content", "where_equals": map[string]any{"CType": "text"},
			"limit": 50, "offset": 1000, "fields": []string{"pid", "header", "bodytext"}}},
		{"editor/filtered", "editor", map[string]any{"table": "tt_content", "where_equals": map[string]any{"CType": "text"},
			"limit": 50, "fields": []string{"pid", "header", "bodytext"}}},
		{"admin/page", "admin", map[string]any{"table": "tt_content", "pid": 27, "limit": 50}},
	}
}

func pageCases() []benchCase {
	return []benchCase{
		{"admin/27", "admin", map[string]any{"uid": 27}},
		{"editor/27", "editor", map[string]any{"uid": 27}},
	}
}

func benchDialects() []typo3.Dialect { return []typo3.Dialect{typo3.DialectSQLite, typo3.DialectMySQL} }

// benchTool times the tool through the gate and reports the median.
func benchTool(b *testing.B, tool string, cases []benchCase) {
	for _, d := range benchDialects() {
		b.Run(string(d), func(b *testing.B) {
			e := newBenchEnv(b, d)
			for _, c := range cases {
				b.Run(c.name, func(b *testing.B) {
					e.invoke(b, c.user, tool, c.args) // warm the schema cache
					var times []time.Duration
					for b.Loop() {
						start := time.Now()
						e.invoke(b, c.user, tool, c.args)
						times = append(times, time.Since(start))
					}
					reportP50(b, times)
				})
			}
		})
	}
}

// benchRaw replays the statements the tool sends, without the tool.
func benchRaw(b *testing.B, tool string, cases []benchCase) {
	for _, d := range benchDialects() {
		b.Run(string(d), func(b *testing.B) {
			e := newBenchEnv(b, d)
			for _, c := range cases {
				b.Run(c.name, func(b *testing.B) {
					stmts := e.capture(b, c.user, tool, c.args)
					var times []time.Duration
					for b.Loop() {
						start := time.Now()
						replay(b, e.site.DB, stmts)
						times = append(times, time.Since(start))
					}
					b.ReportMetric(float64(len(stmts)), "stmts/op")
					reportP50(b, times)
				})
			}
		})
	}
}

func reportP50(b *testing.B, times []time.Duration) {
	if len(times) == 0 {
		return
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
}

func BenchmarkSearchRecords(b *testing.B)    { benchTool(b, "search_records", searchCases()) }
func BenchmarkRawSearchRecords(b *testing.B) { benchRaw(b, "search_records", searchCases()) }
func BenchmarkReadRecords(b *testing.B)      { benchTool(b, "read_records", readCases()) }
func BenchmarkRawReadRecords(b *testing.B)   { benchRaw(b, "read_records", readCases()) }
func BenchmarkGetPageContent(b *testing.B)   { benchTool(b, "get_page_content", pageCases()) }
func BenchmarkRawGetPageContent(b *testing.B) {
	benchRaw(b, "get_page_content", pageCases())
}

// benchIndexed is benchTool with search_records over a site index in a
// SQLite store (the site on SQLite) or a PostgreSQL store (the site on
// MariaDB); the build's duration is reported once as build-s.
func benchIndexed(b *testing.B, cases []benchCase) {
	for _, d := range benchDialects() {
		b.Run(string(d), func(b *testing.B) {
			e := newBenchEnv(b, d)
			storeDSN := "sqlite:" + filepath.Join(b.TempDir(), "t3agent.db")
			if d == typo3.DialectMySQL {
				storeDSN = dbtest.Postgres(b)
			}
			st, err := store.Open(context.Background(), storeDSN, store.OpenParams{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = st.Close() })
			tc := tca.Bundled()
			policy := readpolicy.New(tc)
			ix, err := siteindex.New(siteindex.Params{Store: st, Site: e.site, Policy: policy, MaxAge: time.Hour})
			if err != nil {
				b.Fatal(err)
			}
			res, err := ix.Build(context.Background(), nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Logf("index build: %d documents in %s", res.Docs, res.Duration)
			g, _ := newGate(b, content.ToolsWith(content.ToolsParams{Site: e.site, Policy: policy, Index: ix}))
			e.gate = g
			for _, c := range cases {
				b.Run(c.name, func(b *testing.B) {
					e.invoke(b, c.user, "search_records", c.args)
					var times []time.Duration
					for b.Loop() {
						start := time.Now()
						e.invoke(b, c.user, "search_records", c.args)
						times = append(times, time.Since(start))
					}
					reportP50(b, times)
				})
			}
			b.Run("sync1000", func(b *testing.B) {
				rw, err := typo3.Open(context.Background(), e.dsn, typo3.OpenParams{Writable: true})
				if err != nil {
					b.Fatal(err)
				}
				defer rw.Close()
				var times []time.Duration
				stamp := int64(1900000000)
				for b.Loop() {
					stamp++
					a := rw.NewArgs()
					q := "UPDATE tt_content SET tstamp = " + a.Add(stamp) + " WHERE uid <= 1000"
					if _, err := rw.SQL.ExecContext(context.Background(), q, a.Values()...); err != nil {
						b.Fatal(err)
					}
					start := time.Now()
					r, err := ix.Sync(context.Background())
					if err != nil {
						b.Fatal(err)
					}
					times = append(times, time.Since(start))
					if r.Changed < 1000 {
						b.Fatalf("sync read %d rows", r.Changed)
					}
				}
				reportP50(b, times)
			})
		})
	}
}

func BenchmarkSearchRecordsIndexed(b *testing.B) { benchIndexed(b, searchCases()) }
