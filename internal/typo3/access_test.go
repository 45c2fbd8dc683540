package typo3_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/t3agent/t3agent/internal/typo3"
)

// The expectations below are worked out by hand from docs/demo-site.md and
// FACTS.md §b, not computed by the code under test:
//
//   - admin passes every page that is not deleted (11 is).
//   - editor (groups [1], mount 5): its clause passes every group-1 page
//     (perms_group 27 has the show bit) and page 15 (perms_everybody 1);
//     the mount 5 subtree is 5–12 minus 9 (group 4), 10 (reachable only
//     through 9) and 11 (deleted); translations 23 (of 5) and 24 (of 6)
//     map to their default-language pages.
//   - intern (groups [3 2 6 5], mount 13 from News readers; Hidden group 7
//     and its mount 16 are gone): its clause passes 13, 14 (group 3, bit 1),
//     15 (everybody 1) and 25 (the translation of 13, group 3 like 13); all
//     of them lie under mount 13.
//   - former is disabled: it cannot be loaded, so its checker has no user.
//
// Translations (21–25) carry the permissions of their default-language
// page, as the demo generator writes them.
func showMatrix() map[string][]int64 {
	all := span(1, 25)
	return map[string][]int64{
		"admin":  slices.DeleteFunc(all, func(u int64) bool { return u == 11 }),
		"editor": {5, 6, 7, 8, 12, 23, 24},
		"intern": {13, 14, 15, 25},
		"former": {},
	}
}

// clauseMatrix lists, per user, the fixed pages that pass the PAGE_SHOW
// perms clause alone (no mount test), deleted page 11 excluded.
func clauseMatrix() map[string][]int64 {
	return map[string][]int64{
		"admin":  slices.DeleteFunc(span(1, 25), func(u int64) bool { return u == 11 }),
		"editor": {1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24},
		"intern": {13, 14, 15, 25},
		"former": {},
	}
}

// demoUser loads a demo user for acting; former cannot act and gives nil.
func demoUser(t *testing.T, e *env, name string) *typo3.BackendUser {
	t.Helper()
	u, err := e.site.BackendUserByName(context.Background(), name)
	if name == "former" {
		if !errors.Is(err, typo3.ErrUserCannotAct) || u != nil {
			t.Fatalf("former: got %v, %v; want ErrUserCannotAct", u, err)
		}
		return nil
	}
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return u
}

func TestPageShowMatrix(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		for name, want := range showMatrix() {
			acc := typo3.NewPageAccess(e.site, demoUser(t, e, name))
			for uid := int64(1); uid <= 25; uid++ {
				got, err := acc.CanShow(ctx, uid)
				if err != nil {
					t.Fatalf("%s CanShow(%d): %v", name, uid, err)
				}
				if exp := slices.Contains(want, uid); got != exp {
					t.Errorf("%s CanShow(%d) = %v, want %v", name, uid, got, exp)
				}
				// The memo answers the same.
				if again, _ := acc.CanShow(ctx, uid); again != got {
					t.Errorf("%s CanShow(%d) changed on the second call", name, uid)
				}
			}
		}
	})
}

func TestPermsClauseMatrix(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		db := e.site.DB
		for name, want := range clauseMatrix() {
			u := demoUser(t, e, name)
			// SQL side: the clause as a query over the fixed pages.
			a := db.NewArgs()
			clause, err := u.PermsClause(a, "p", typo3.PermPageShow)
			if err != nil {
				t.Fatal(err)
			}
			notDeleted, err := e.site.Restrict(a, "pages", "p", typo3.RestrictDeleted)
			if err != nil {
				t.Fatal(err)
			}
			q := `SELECT p.uid FROM pages p WHERE ` + clause + ` AND ` + notDeleted + ` AND p.uid <= ` + a.Add(25) + ` ORDER BY p.uid`
			if got := uids(t, db, q, a.Values()...); !slices.Equal(got, want) {
				t.Errorf("%s: SQL clause selects %v, want %v", name, got, want)
			}
			// Go side: the same decision on loaded rows.
			acc := typo3.NewPageAccess(e.site, u)
			var got []int64
			for uid := int64(1); uid <= 25; uid++ {
				p, err := acc.Page(context.Background(), uid)
				if errors.Is(err, typo3.ErrPageNotFound) {
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if u.MatchesPermsClause(p, typo3.PermPageShow) {
					got = append(got, uid)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: MatchesPermsClause passes %v, want %v", name, got, want)
			}
		}
	})
}

func TestPermsClauseShape(t *testing.T) {
	t.Parallel()
	db := &typo3.DB{Dialect: typo3.DialectPostgres}
	var nobody *typo3.BackendUser
	for _, tc := range []struct {
		name string
		user *typo3.BackendUser
		want string
		args []any
	}{
		{"no user", nobody, "1=0", nil},
		{"admin", &typo3.BackendUser{UID: 1, Admin: true}, "1=1", nil},
		{"no groups", &typo3.BackendUser{UID: 7},
			`(("pages"."perms_everybody" & $1) = $2 OR ("pages"."perms_userid" = $3 AND ("pages"."perms_user" & $4) = $5))`,
			[]any{int64(1), int64(1), int64(7), int64(1), int64(1)}},
		{"groups", &typo3.BackendUser{UID: 7, GroupUIDs: []int64{3, 2}},
			`(("pages"."perms_everybody" & $1) = $2 OR ("pages"."perms_userid" = $3 AND ("pages"."perms_user" & $4) = $5) OR ("pages"."perms_groupid" IN ($6, $7) AND ("pages"."perms_group" & $8) = $9))`,
			[]any{int64(1), int64(1), int64(7), int64(1), int64(1), int64(3), int64(2), int64(1), int64(1)}},
	} {
		a := db.NewArgs()
		got, err := tc.user.PermsClause(a, "", typo3.PermPageShow)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want || !slices.Equal(a.Values(), tc.args) {
			t.Errorf("%s: got %s %v, want %s %v", tc.name, got, a.Values(), tc.want, tc.args)
		}
	}
	if _, err := (&typo3.BackendUser{UID: 2}).PermsClause(db.NewArgs(), "p; DROP", typo3.PermPageShow); !errors.Is(err, typo3.ErrBadIdentifier) {
		t.Errorf("bad alias: got %v, want ErrBadIdentifier", err)
	}
}

func TestWebMountsAndCalcPerms(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		admin, editor, intern := e.user(t, "admin"), e.user(t, "editor"), e.user(t, "intern")
		if !slices.Equal(admin.DBMounts, []int64{0}) || !slices.Equal(editor.DBMounts, []int64{5}) || !slices.Equal(intern.DBMounts, []int64{13}) {
			t.Fatalf("mounts: admin %v editor %v intern %v; want [0] [5] [13]", admin.DBMounts, editor.DBMounts, intern.DBMounts)
		}
		type want struct {
			mount int64
			in    bool
			perms typo3.Permission
		}
		cases := []struct {
			user *typo3.BackendUser
			uid  int64
			want want
		}{
			{admin, 11, want{0, true, typo3.PermAll}}, // admins pass even deleted pages in calcPerms
			{admin, 9, want{0, true, typo3.PermAll}},
			{editor, 5, want{5, true, 27}},
			{editor, 6, want{5, true, 27}},
			{editor, 7, want{5, true, 27}},  // hidden pages are still backend pages
			{editor, 24, want{5, true, 27}}, // translation of 6
			{editor, 9, want{0, false, 0}},  // group 4: clause fails
			{editor, 10, want{0, false, 0}}, // page 9 above breaks the chain
			{editor, 11, want{0, false, 0}}, // deleted
			{editor, 1, want{0, false, 0}},  // above the mount
			{editor, 15, want{0, false, 0}}, // passes the clause, 13 above does not
			{intern, 13, want{13, true, 1}},
			{intern, 14, want{13, true, 1}},
			{intern, 15, want{13, true, 1}}, // perms_everybody 1
			{intern, 25, want{13, true, 1}}, // translation of 13
			{intern, 6, want{0, false, 0}},
			{intern, 9999, want{0, false, 0}},
		}
		for _, c := range cases {
			acc := typo3.NewPageAccess(e.site, c.user)
			mount, in, err := acc.IsInWebMount(ctx, c.uid)
			if err != nil {
				t.Fatal(err)
			}
			perms, err := acc.CalcPerms(ctx, c.uid)
			if err != nil {
				t.Fatal(err)
			}
			if (want{mount, in, perms}) != c.want {
				t.Errorf("%s page %d: mount %d in %v perms %d, want %+v", c.user.Username, c.uid, mount, in, perms, c.want)
			}
		}
		ok, err := typo3.NewPageAccess(e.site, editor).DoesUserHaveAccess(ctx, 6, typo3.PermPageEdit|typo3.PermContentEdit)
		if err != nil || !ok {
			t.Errorf("editor edit access to 6: %v %v, want true", ok, err)
		}
		ok, err = typo3.NewPageAccess(e.site, editor).DoesUserHaveAccess(ctx, 6, typo3.PermPageDelete)
		if err != nil || ok {
			t.Errorf("editor delete access to 6: %v %v, want false (perms_group 27 lacks 4)", ok, err)
		}
		// No user: nothing at all, not even the root.
		none := typo3.NewPageAccess(e.site, nil)
		for _, uid := range []int64{0, 1, 6} {
			if ok, _ := none.CanShow(ctx, uid); ok {
				t.Errorf("nil user CanShow(%d) = true", uid)
			}
			if p, _ := none.CalcPerms(ctx, uid); p != 0 {
				t.Errorf("nil user CalcPerms(%d) = %d", uid, p)
			}
		}
		if ok, _ := typo3.NewPageAccess(e.site, admin).CanShow(ctx, 0); !ok {
			t.Error("admin CanShow(0) = false, want true (tree root)")
		}
		if ok, _ := typo3.NewPageAccess(e.site, editor).CanShow(ctx, 0); ok {
			t.Error("editor CanShow(0) = true, want false")
		}
	})
}

func TestMountEdgeCases(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		// Own mounts that are deleted, missing or not showable drop out;
		// the group's mount stays.
		e.beUser(t, 100, "mounts-filtered", map[string]any{"usergroup": "1", "db_mountpoints": "13,11,9999,5"})
		// options 0: the group's mount 5 is not taken.
		e.beUser(t, 101, "no-group-mounts", map[string]any{"usergroup": "1", "options": 0})
		// options 0 with an own mount on page 9 and Management's rights.
		e.beUser(t, 102, "own-mount", map[string]any{"usergroup": "4", "options": 0, "db_mountpoints": "9"})
		// No groups at all, own mount on page 15 (perms_everybody 1).
		e.beUser(t, 103, "groupless", map[string]any{"db_mountpoints": "15"})
		// A workspace version of page 6 (t3ver_oid 6) maps to page 6.
		e.page(t, 200, 5, map[string]any{"t3ver_wsid": 1, "t3ver_oid": 6, "t3ver_state": 0})
		// A page below the deleted page 11 is unreachable.
		e.page(t, 201, 11, nil)
		// A group-1 page below Management's page 9, for own-mount.
		e.page(t, 202, 9, map[string]any{"perms_groupid": 4})

		cases := []struct {
			user   string
			mounts []int64
			show   map[int64]bool
		}{
			{"mounts-filtered", []int64{5}, map[int64]bool{5: true, 6: true, 13: false, 9: false}},
			{"no-group-mounts", []int64{}, map[int64]bool{5: false, 6: false}},
			{"own-mount", []int64{9}, map[int64]bool{9: true, 202: true, 10: false, 5: false, 1: false}},
			{"groupless", []int64{15}, map[int64]bool{15: true, 13: false, 14: false}},
			{"editor", []int64{5}, map[int64]bool{200: true, 201: false}},
		}
		for _, c := range cases {
			u := e.user(t, c.user)
			if !slices.Equal(u.DBMounts, c.mounts) {
				t.Errorf("%s mounts %v, want %v", c.user, u.DBMounts, c.mounts)
			}
			acc := typo3.NewPageAccess(e.site, u)
			for uid, want := range c.show {
				if got, err := acc.CanShow(ctx, uid); err != nil || got != want {
					t.Errorf("%s CanShow(%d) = %v %v, want %v", c.user, uid, got, err, want)
				}
			}
		}
		// Without groups, calcPerms is 0 even where CanShow passes.
		acc := typo3.NewPageAccess(e.site, e.user(t, "groupless"))
		if p, err := acc.CalcPerms(ctx, 15); err != nil || p != 0 {
			t.Errorf("groupless CalcPerms(15) = %d %v, want 0", p, err)
		}
		// With a group, the same everybody bit counts.
		e.beUser(t, 104, "grouped", map[string]any{"usergroup": "2", "db_mountpoints": "15", "options": 0})
		acc = typo3.NewPageAccess(e.site, e.user(t, "grouped"))
		if p, err := acc.CalcPerms(ctx, 15); err != nil || p != 1 {
			t.Errorf("grouped CalcPerms(15) = %d %v, want 1", p, err)
		}
	})
}

func TestPageAccessMemoises(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		acc := typo3.NewPageAccess(e.site, e.user(t, "editor"))
		if ok, _ := acc.CanShow(ctx, 6); !ok {
			t.Fatal("editor cannot show page 6")
		}
		// A change after the first answer is not seen by the same checker
		// (one per request), but a new checker sees it.
		e.update(t, "pages", 6, map[string]any{"perms_group": 0})
		if ok, _ := acc.CanShow(ctx, 6); !ok {
			t.Error("memoised answer changed within the request")
		}
		if ok, _ := typo3.NewPageAccess(e.site, e.user(t, "editor")).CanShow(ctx, 6); ok {
			t.Error("a new checker still shows page 6 after its group bits were removed")
		}
	})
}

// TestPageAccessConcurrent shares one checker between goroutines, as a
// tool filtering rows in parallel would; run with -race.
func TestPageAccessConcurrent(t *testing.T) {
	t.Parallel()
	e := setup(t, typo3.DialectSQLite)
	acc := typo3.NewPageAccess(e.site, e.user(t, "editor"))
	want := showMatrix()["editor"]
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		go func() {
			for uid := int64(25); uid >= 1; uid-- {
				got, err := acc.CanShow(context.Background(), uid)
				if err == nil && got != slices.Contains(want, uid) {
					err = errors.New("wrong answer under concurrency")
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for w := 0; w < 8; w++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
