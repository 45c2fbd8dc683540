package siteindex_test

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/dbtest"
	"github.com/t3agent/t3agent/internal/demo/demotest"
	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/siteindex"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

// storeKinds are the store databases every index test runs on.
var storeKinds = []struct {
	name   string
	newDSN func(tb testing.TB) string
}{
	{"sqlite", func(tb testing.TB) string { return "sqlite:" + filepath.Join(tb.TempDir(), "t3agent.db") }},
	{"postgres", func(tb testing.TB) string { return dbtest.Postgres(tb) }},
}

func fixedNow() time.Time { return time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC) }

// fixture is the demo site (SQLite, writable for edits) and an index of
// it in a fresh store.
type fixture struct {
	site  *typo3.Site
	rw    *typo3.DB
	ix    *siteindex.Index
	st    store.Store
	now   *time.Time
	clock func() time.Time
}

func newFixture(t *testing.T, storeDSN string) *fixture {
	t.Helper()
	ctx := t.Context()
	s := demotest.New(t, typo3.DialectSQLite)
	db, err := typo3.Open(ctx, s.DSN, typo3.OpenParams{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	rw, err := typo3.Open(ctx, s.DSN, typo3.OpenParams{Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rw.Close() })
	tc := tca.Bundled()
	site, err := typo3.NewSite(typo3.SiteParams{DB: db, TCA: tc, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	f := &fixture{site: site, rw: rw, now: &now}
	var mu sync.Mutex
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return *f.now
	}
	f.clock = clock
	f.st, err = store.Open(ctx, storeDSN, store.OpenParams{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.st.Close() })
	f.ix, err = siteindex.New(siteindex.Params{Store: f.st, Site: site, Policy: readpolicy.New(tc), Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) exec(t *testing.T, q string, args ...any) {
	t.Helper()
	if _, err := f.rw.SQL.ExecContext(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func hasHit(hits []siteindex.Hit, table string, uid int64) bool {
	return slices.ContainsFunc(hits, func(h siteindex.Hit) bool { return h.Table == table && h.UID == uid })
}

// TestBuildQuerySync: a build indexes the demo with a progress report;
// ranked queries find rows by folded, stemmed words; a sync picks up an
// edit, a new row and a row removed for good; the status tells rows and
// age, and the index goes stale after MaxAge.
func TestBuildQuerySync(t *testing.T) {
	t.Parallel()
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			f := newFixture(t, k.newDSN(t))
			if _, err := f.ix.Query(ctx, siteindex.QueryParams{Text: "pump"}); err != siteindex.ErrAbsent {
				t.Fatalf("query before a build: %v, want ErrAbsent", err)
			}
			var reports int
			res, err := f.ix.Build(ctx, func(siteindex.Progress) { reports++ })
			if err != nil {
				t.Fatal(err)
			}
			if res.Docs < 100 || reports == 0 || res.Tables < 3 {
				t.Fatalf("build: %+v, %d progress reports", res, reports)
			}
			st, err := f.ix.Status(ctx, true)
			if err != nil {
				t.Fatal(err)
			}
			if !st.Built || st.Docs != res.Docs || st.Stale || st.Lag != 0 {
				t.Fatalf("status after build: %+v (built %d)", st, res.Docs)
			}

			var header string
			var uid int64
			if err := f.rw.SQL.QueryRowContext(ctx, "SELECT uid, header FROM tt_content WHERE header <> '' ORDER BY uid LIMIT 1").Scan(&uid, &header); err != nil {
				t.Fatal(err)
			}
			hits, err := f.ix.Query(ctx, siteindex.QueryParams{Text: header, Tables: []string{"tt_content"}, Limit: 50})
			if err != nil {
				t.Fatal(err)
			}
			if !hasHit(hits, "tt_content", uid) {
				t.Fatalf("query %q: tt_content:%d not among %v", header, uid, hits)
			}

			// Edit, add and remove rows, then sync.
			f.exec(t, "UPDATE tt_content SET bodytext = 'Die Wasserpumpen müssen gewartet werden', tstamp = (SELECT MAX(tstamp) FROM tt_content) + 100 WHERE uid = ?", uid)
			f.exec(t, "INSERT INTO tt_content (uid, pid, header, bodytext, tstamp) VALUES (900001, 1, 'Zyxel quokka', '', 1)")
			var gone int64
			if err := f.rw.SQL.QueryRowContext(ctx, "SELECT MAX(uid) FROM tt_content WHERE uid < 900000").Scan(&gone); err != nil {
				t.Fatal(err)
			}
			f.exec(t, "DELETE FROM tt_content WHERE uid = ?", gone)
			sr, err := f.ix.Sync(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if sr.Changed < 2 || sr.Deleted != 1 {
				t.Fatalf("sync: %+v", sr)
			}
			for _, c := range []struct {
				q    string
				uid  int64
				want bool
			}{
				{"Wartung der Wasserpumpe", uid, true}, // stems: Wasserpumpen, gewartet
				{"WASSERPUMPE", uid, true},
				{"quokka", 900001, true},
				{"zyxel", 900001, true},
			} {
				hits, err := f.ix.Query(ctx, siteindex.QueryParams{Text: c.q, Limit: 20})
				if err != nil {
					t.Fatal(err)
				}
				if hasHit(hits, "tt_content", c.uid) != c.want {
					t.Errorf("query %q after sync: tt_content:%d found %v, want %v (%v)", c.q, c.uid, !c.want, c.want, hits)
				}
			}
			uids, err := f.st.SiteIndexUIDs(ctx, "tt_content")
			if err != nil {
				t.Fatal(err)
			}
			if slices.Contains(uids, gone) {
				t.Errorf("tt_content:%d was removed from the site but stays indexed", gone)
			}

			*f.now = f.now.Add(siteindex.DefaultMaxAge + time.Second)
			st, err = f.ix.Status(ctx, false)
			if err != nil {
				t.Fatal(err)
			}
			if !st.Stale {
				t.Errorf("status %+v after MaxAge is not stale", st)
			}
			snap, err := f.ix.Snapshot(ctx)
			if err != nil || snap != nil {
				t.Errorf("a stale index gives a snapshot (%v, %v)", snap, err)
			}
		})
	}
}

// TestPublicOnly: the public pre-filter leaves out hidden, timed and
// fe_group-restricted rows as indexed.
func TestPublicOnly(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := newFixture(t, storeKinds[0].newDSN(t))
	now := fixedNow().Unix()
	for _, r := range []struct {
		uid        int64
		hidden     int
		start, end int64
		feGroup    string
		public     bool
	}{
		{910001, 0, 0, 0, "", true},
		{910002, 1, 0, 0, "", false},
		{910003, 0, now + 3600, 0, "", false},
		{910004, 0, 0, now - 3600, "", false},
		{910005, 0, 0, 0, "1", false},
	} {
		f.exec(t, "INSERT INTO tt_content (uid, pid, header, hidden, starttime, endtime, fe_group, tstamp) VALUES (?, 1, 'Okapi visibility probe', ?, ?, ?, ?, 1)",
			r.uid, r.hidden, r.start, r.end, r.feGroup)
	}
	if _, err := f.ix.Build(ctx, nil); err != nil {
		t.Fatal(err)
	}
	all, err := f.ix.Query(ctx, siteindex.QueryParams{Text: "okapi", Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	pub, err := f.ix.Query(ctx, siteindex.QueryParams{Text: "okapi", PublicOnly: true, Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 5 || len(pub) != 1 || pub[0].UID != 910001 {
		t.Fatalf("all %v, public %v", all, pub)
	}
}
