package typo3_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

// contentOn returns the tt_content uids on page pid that pass r, aliased,
// leaving out the demo's generated filler (uid > 6).
func contentOn(t *testing.T, s *typo3.Site, pid int64, r typo3.Restriction) []int64 {
	t.Helper()
	a := s.DB.NewArgs()
	q := `SELECT c.uid FROM tt_content c WHERE c.pid = ` + a.Add(pid) + ` AND (c.uid <= 6 OR c.uid > 700) AND `
	cond, err := s.Restrict(a, "tt_content", "c", r)
	if err != nil {
		t.Fatal(err)
	}
	q += cond + ` ORDER BY c.uid`
	return uids(t, s.DB, q, a.Values()...)
}

// fixedPagesPassing returns the pages 1–25 that pass r (no alias).
func fixedPagesPassing(t *testing.T, s *typo3.Site, r typo3.Restriction) []int64 {
	t.Helper()
	a := s.DB.NewArgs()
	cond, err := s.Restrict(a, "pages", "", r)
	if err != nil {
		t.Fatal(err)
	}
	q := `SELECT uid FROM pages WHERE ` + cond + ` AND uid <= ` + a.Add(25) + ` ORDER BY uid`
	return uids(t, s.DB, q, a.Values()...)
}

func without(all []int64, drop ...int64) []int64 {
	return slices.DeleteFunc(slices.Clone(all), func(u int64) bool { return slices.Contains(drop, u) })
}

func TestRestrictionsOnDemoContent(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		// Content 1–5 on page 6: 1 visible, 2 hidden, 3 deleted, 4 the
		// workspace version of 1, 5 starting 2030.
		for _, c := range []struct {
			name string
			r    typo3.Restriction
			want []int64
		}{
			{"none", 0, []int64{1, 2, 3, 4, 5}},
			{"deleted", typo3.RestrictDeleted, []int64{1, 2, 4, 5}},
			{"disabled", typo3.RestrictDisabled, []int64{1, 3, 4, 5}},
			{"starttime", typo3.RestrictStartTime, []int64{1, 2, 3, 4}},
			{"endtime", typo3.RestrictEndTime, []int64{1, 2, 3, 4, 5}},
			{"live workspace", typo3.RestrictLiveWorkspace, []int64{1, 2, 3, 5}},
			{"default", typo3.RestrictDefault, []int64{1, 4}},
			{"live", typo3.RestrictLive, []int64{1}},
		} {
			if got := contentOn(t, e.site, 6, c.r); !slices.Equal(got, c.want) {
				t.Errorf("tt_content %s: %v, want %v", c.name, got, c.want)
			}
		}
		// Pages: 7 hidden, 8 starts 2030, 11 deleted, 12 ended 2020.
		all := span(1, 25)
		for _, c := range []struct {
			name string
			r    typo3.Restriction
			want []int64
		}{
			{"none", 0, all},
			{"deleted", typo3.RestrictDeleted, without(all, 11)},
			{"default", typo3.RestrictDefault, without(all, 7, 8, 11, 12)},
			{"live", typo3.RestrictLive, without(all, 7, 8, 11, 12)},
		} {
			if got := fixedPagesPassing(t, e.site, c.r); !slices.Equal(got, c.want) {
				t.Errorf("pages %s: %v, want %v", c.name, got, c.want)
			}
		}
		// The clock decides the timed pages, with TYPO3's boundaries:
		// starttime <= now, endtime > now.
		for _, c := range []struct {
			now  int64
			want []int64
		}{
			{start2030 - 1, without(all, 7, 8, 11, 12)},
			{start2030, without(all, 7, 11, 12)},
			{end2020 - 1, without(all, 7, 8, 11)},
			{end2020, without(all, 7, 8, 11, 12)},
		} {
			s := e.withClock(t, time.Unix(c.now, 0))
			if got := fixedPagesPassing(t, s, typo3.RestrictDefault); !slices.Equal(got, c.want) {
				t.Errorf("pages at %d: %v, want %v", c.now, got, c.want)
			}
		}
	})
}

func TestWorkspaceRestriction(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.page(t, 700, 1, nil)
		rows := []map[string]any{
			{"uid": 701, "pid": 700}, // live
			{"uid": 702, "pid": 700, "t3ver_wsid": 1, "t3ver_oid": 701, "t3ver_state": 0}, // modified version
			{"uid": 703, "pid": 700, "t3ver_wsid": 1, "t3ver_oid": 0, "t3ver_state": 1},   // new in workspace 1
			{"uid": 704, "pid": 700, "t3ver_wsid": 1, "t3ver_oid": 701, "t3ver_state": 2}, // delete placeholder
			{"uid": 705, "pid": 700, "t3ver_wsid": 1, "t3ver_oid": 701, "t3ver_state": 4}, // move pointer
			{"uid": 706, "pid": 700, "t3ver_wsid": 0, "t3ver_oid": 701, "t3ver_state": 0}, // pre-v11 archive version
			{"uid": 707, "pid": 700, "t3ver_wsid": 0, "t3ver_oid": 701, "t3ver_state": 4}, // kept as TYPO3 keeps it
		}
		for _, r := range rows {
			r["CType"] = "text"
			e.insert(t, "tt_content", r)
		}
		if got := contentOn(t, e.site, 700, typo3.RestrictLiveWorkspace); !slices.Equal(got, []int64{701, 707}) {
			t.Errorf("live workspace: %v, want [701 707]", got)
		}
		// Tables without versioningWS get no workspace condition at all.
		a := e.site.DB.NewArgs()
		cond, err := e.site.Restrict(a, "be_groups", "", typo3.RestrictLiveWorkspace)
		if err != nil || cond != "1=1" {
			t.Errorf("be_groups workspace restriction: %q %v, want 1=1", cond, err)
		}
	})
}

func TestRestrictionJoinNumbering(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		// Two restricted tables in one statement share one Args, so
		// PostgreSQL's $n stay in order.
		s := e.site
		a := s.DB.NewArgs()
		pc, err := s.Restrict(a, "pages", "p", typo3.RestrictLive)
		if err != nil {
			t.Fatal(err)
		}
		cc, err := s.Restrict(a, "tt_content", "c", typo3.RestrictLive)
		if err != nil {
			t.Fatal(err)
		}
		q := `SELECT c.uid FROM tt_content c JOIN pages p ON p.uid = c.pid WHERE ` + pc + ` AND ` + cc +
			` AND c.uid <= ` + a.Add(6) + ` ORDER BY c.uid`
		// Content 6 on the Login page and content 1 on page 6 survive.
		if got := uids(t, s.DB, q, a.Values()...); !slices.Equal(got, []int64{1, 6}) {
			t.Errorf("joined live content: %v, want [1 6]", got)
		}
	})
}

func TestRestrictShapes(t *testing.T) {
	t.Parallel()
	tc := tca.Bundled()
	now := func() time.Time { return time.Unix(1000, 0) }
	for _, c := range []struct {
		d    typo3.Dialect
		want string
	}{
		{typo3.DialectSQLite, `("c"."deleted" = 0 AND "c"."hidden" = 0 AND "c"."starttime" <= ? AND ("c"."endtime" = 0 OR "c"."endtime" > ?) AND "c"."t3ver_wsid" = 0 AND ("c"."t3ver_oid" = 0 OR "c"."t3ver_state" = 4))`},
		{typo3.DialectMySQL, "(`c`.`deleted` = 0 AND `c`.`hidden` = 0 AND `c`.`starttime` <= ? AND (`c`.`endtime` = 0 OR `c`.`endtime` > ?) AND `c`.`t3ver_wsid` = 0 AND (`c`.`t3ver_oid` = 0 OR `c`.`t3ver_state` = 4))"},
		{typo3.DialectPostgres, `("c"."deleted" = 0 AND "c"."hidden" = 0 AND "c"."starttime" <= $2 AND ("c"."endtime" = 0 OR "c"."endtime" > $3) AND "c"."t3ver_wsid" = 0 AND ("c"."t3ver_oid" = 0 OR "c"."t3ver_state" = 4))`},
	} {
		s, err := typo3.NewSite(typo3.SiteParams{DB: &typo3.DB{Dialect: c.d}, TCA: tc, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		a := s.DB.NewArgs()
		a.Add("an earlier argument")
		got, err := s.Restrict(a, "tt_content", "c", typo3.RestrictLive)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want || !slices.Equal(a.Values(), []any{"an earlier argument", int64(1000), int64(1000)}) {
			t.Errorf("%s:\n got %s %v\nwant %s", c.d, got, a.Values(), c.want)
		}
	}
	s, err := typo3.NewSite(typo3.SiteParams{DB: &typo3.DB{Dialect: typo3.DialectSQLite}, TCA: tc})
	if err != nil {
		t.Fatal(err)
	}
	// sys_file has no delete flag and no enable columns.
	if got, err := s.Restrict(s.DB.NewArgs(), "sys_file", "", typo3.RestrictLive); err != nil || got != "1=1" {
		t.Errorf("sys_file: %q %v, want 1=1", got, err)
	}
	// be_groups: deleted and hidden only.
	if got, _ := s.Restrict(s.DB.NewArgs(), "be_groups", "", typo3.RestrictLive); got != `("be_groups"."deleted" = 0 AND "be_groups"."hidden" = 0)` {
		t.Errorf("be_groups: %s", got)
	}
	// Only TCA tables, only identifier-shaped aliases.
	if _, err := s.Restrict(s.DB.NewArgs(), "tx_unknown", "", typo3.RestrictDefault); !errors.Is(err, typo3.ErrUnknownTable) {
		t.Errorf("unknown table: %v", err)
	}
	if _, err := s.Restrict(s.DB.NewArgs(), "pages; DROP TABLE pages", "", typo3.RestrictDefault); !errors.Is(err, typo3.ErrUnknownTable) {
		t.Errorf("injected table: %v", err)
	}
	for _, alias := range []string{"p p", "p;", `p"`, "p`", "p.x", "(p)"} {
		if _, err := s.Restrict(s.DB.NewArgs(), "pages", alias, typo3.RestrictDefault); !errors.Is(err, typo3.ErrBadIdentifier) {
			t.Errorf("alias %q: %v, want ErrBadIdentifier", alias, err)
		}
	}
	// A TCA naming an impossible column is refused, not quoted.
	bad := &tca.TCA{Tables: map[string]*tca.Table{"t": {Name: "t", Ctrl: tca.Ctrl{Delete: "deleted = 0 OR 1"}}}}
	s2, _ := typo3.NewSite(typo3.SiteParams{DB: &typo3.DB{Dialect: typo3.DialectSQLite}, TCA: bad})
	if _, err := s2.Restrict(s2.DB.NewArgs(), "t", "", typo3.RestrictDeleted); !errors.Is(err, typo3.ErrBadIdentifier) {
		t.Errorf("bad TCA column: %v", err)
	}
}

func TestRootline(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		ids := func(rl []typo3.Page) []int64 {
			out := []int64{}
			for _, p := range rl {
				out = append(out, p.UID)
			}
			return out
		}
		for _, c := range []struct {
			uid  int64
			want []int64
		}{
			{1, []int64{1}},
			{3, []int64{1, 2, 3}},
			{6, []int64{1, 5, 6}},
			{7, []int64{1, 5, 7}}, // hidden pages stay in
			{8, []int64{1, 5, 8}}, // so do timed ones
			{10, []int64{1, 5, 9, 10}},
			{15, []int64{1, 13, 15}},
			{21, []int64{21}},       // translation of 1: its own pid 0
			{24, []int64{1, 5, 24}}, // translation of 6 lies beside it
		} {
			rl, err := e.site.Rootline(ctx, c.uid)
			if err != nil {
				t.Errorf("Rootline(%d): %v", c.uid, err)
				continue
			}
			if got := ids(rl); !slices.Equal(got, c.want) {
				t.Errorf("Rootline(%d) = %v, want %v", c.uid, got, c.want)
			}
		}
		rl, err := e.site.Rootline(ctx, 6)
		if err != nil {
			t.Fatal(err)
		}
		if rl[0].Title != "Home" || !rl[0].IsSiteRoot || rl[0].PID != 0 || rl[2].Title != "Product A" || rl[2].PermsGroup != 27 {
			t.Errorf("rootline rows: %+v", rl)
		}
		if p, err := e.site.Page(ctx, 24); err != nil || p.SysLanguageUID != 1 || p.L10nParent != 6 {
			t.Errorf("page 24: %+v %v", p, err)
		}

		// Missing and deleted pages.
		for _, uid := range []int64{11, 9999, 0, -3} {
			if _, err := e.site.Rootline(ctx, uid); !errors.Is(err, typo3.ErrPageNotFound) {
				t.Errorf("Rootline(%d): %v, want ErrPageNotFound", uid, err)
			}
		}
		// Below a deleted page the walk stops: an orphan's rootline starts
		// with a page whose pid is not 0.
		e.page(t, 800, 11, nil)
		e.page(t, 801, 800, nil)
		if rl, err := e.site.Rootline(ctx, 801); err != nil || !slices.Equal(ids(rl), []int64{800, 801}) || rl[0].PID != 11 {
			t.Errorf("orphan rootline: %v %v", ids(rl), err)
		}
		// A pid loop and a chain deeper than the cap are broken trees.
		e.page(t, 810, 811, nil)
		e.page(t, 811, 810, nil)
		e.page(t, 812, 812, nil)
		for _, uid := range []int64{810, 812} {
			if _, err := e.site.Rootline(ctx, uid); !errors.Is(err, typo3.ErrBrokenRootline) {
				t.Errorf("loop at %d: %v, want ErrBrokenRootline", uid, err)
			}
		}
		parent := int64(1)
		for i := int64(0); i < typo3.MaxRootlineDepth; i++ {
			e.page(t, 900+i, parent, nil)
			parent = 900 + i
		}
		// 1 plus 99 pages: exactly the cap.
		if rl, err := e.site.Rootline(ctx, 900+typo3.MaxRootlineDepth-2); err != nil || len(rl) != typo3.MaxRootlineDepth {
			t.Errorf("rootline at the cap: %d pages, %v", len(rl), err)
		}
		if _, err := e.site.Rootline(ctx, 900+typo3.MaxRootlineDepth-1); !errors.Is(err, typo3.ErrBrokenRootline) {
			t.Errorf("rootline over the cap: %v", err)
		}
		// Access checks on a broken tree deny rather than fail or loop.
		acc := typo3.NewPageAccess(e.site, e.user(t, "editor"))
		for _, uid := range []int64{810, 812, 801, 900 + typo3.MaxRootlineDepth - 1} {
			if ok, err := acc.CanShow(ctx, uid); err != nil || ok {
				t.Errorf("editor CanShow(%d) on a broken tree: %v %v", uid, ok, err)
			}
		}
		// The memoised rootline agrees with the direct one.
		if rl, err := acc.Rootline(ctx, 10); err != nil || !slices.Equal(ids(rl), []int64{1, 5, 9, 10}) {
			t.Errorf("PageAccess.Rootline(10) = %v %v", ids(rl), err)
		}
	})
}
