package typo3_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/typo3"
)

func TestDemoUsers(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		admin, editor, intern := e.user(t, "admin"), e.user(t, "editor"), e.user(t, "intern")

		if !admin.Admin || admin.UID != 1 || len(admin.GroupUIDs) != 0 {
			t.Errorf("admin: %+v", admin)
		}
		if editor.Admin || editor.UID != 2 || !slices.Equal(editor.GroupUIDs, []int64{1}) {
			t.Errorf("editor: admin %v uid %d groups %v", editor.Admin, editor.UID, editor.GroupUIDs)
		}
		// intern: usergroup 2,5,7 resolves to 3,2,6,5 (sub groups first,
		// the 5↔6 cycle cut, hidden group 7 dropped).
		if !slices.Equal(intern.GroupUIDs, []int64{3, 2, 6, 5}) {
			t.Errorf("intern groups %v, want [3 2 6 5]", intern.GroupUIDs)
		}
		titles := []string{}
		for _, g := range intern.Groups {
			titles = append(titles, g.Title)
		}
		if !slices.Equal(titles, []string{"News readers", "Interns", "Cycle B", "Cycle A"}) {
			t.Errorf("intern group titles %v", titles)
		}

		// tables_select includes tables_modify, modify first (TYPO3's order).
		if !slices.Equal(editor.TablesSelect, []string{"tt_content", "pages", "sys_category"}) ||
			!slices.Equal(editor.TablesModify, []string{"tt_content"}) {
			t.Errorf("editor tables: select %v modify %v", editor.TablesSelect, editor.TablesModify)
		}
		if !slices.Equal(intern.TablesSelect, []string{"tt_content", "pages"}) {
			t.Errorf("intern tables_select %v, want [tt_content pages]", intern.TablesSelect)
		}
		for _, c := range []struct {
			user   *typo3.BackendUser
			table  string
			sel    bool
			modify bool
		}{
			{admin, "be_users", true, true}, // admins pass the group check; the read policy refuses be_users elsewhere
			{editor, "tt_content", true, true},
			{editor, "pages", true, false},
			{editor, "sys_category", true, false},
			{editor, "sys_file", false, false},
			{intern, "pages", true, false},
			{intern, "tt_content", true, false},
			{intern, "sys_template", false, false}, // only through the hidden group
			{intern, "sys_category", false, false},
		} {
			if got := c.user.CanSelectTable(c.table); got != c.sel {
				t.Errorf("%s CanSelectTable(%s) = %v", c.user.Username, c.table, got)
			}
			if got := c.user.CanModifyTable(c.table); got != c.modify {
				t.Errorf("%s CanModifyTable(%s) = %v", c.user.Username, c.table, got)
			}
		}

		// Languages: Editors allow 0 only; intern has no list (all);
		// -1 always; admin always.
		for _, c := range []struct {
			user *typo3.BackendUser
			lang int
			want bool
		}{
			{editor, 0, true}, {editor, 1, false}, {editor, -1, true},
			{intern, 0, true}, {intern, 1, true}, {intern, 7, true},
			{admin, 1, true},
		} {
			if got := c.user.CanAccessLanguage(c.lang); got != c.want {
				t.Errorf("%s CanAccessLanguage(%d) = %v", c.user.Username, c.lang, got)
			}
		}
		var nobody *typo3.BackendUser
		if nobody.CanSelectTable("pages") || nobody.CanAccessLanguage(0) || nobody.IsMemberOf(1) {
			t.Error("a nil user was granted something")
		}
	})
}

func TestGroupResolution(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		// Extra groups: a hidden and a deleted group whose sub group (4,
		// Management) must not be reached through them; a self-including
		// group; a chain; a group listing a missing uid.
		e.beGroup(t, 21, "Hidden parent", map[string]any{"subgroup": "4", "hidden": 1})
		e.beGroup(t, 22, "Deleted parent", map[string]any{"subgroup": "4", "deleted": 1})
		e.beGroup(t, 23, "Self", map[string]any{"subgroup": "23", "tables_select": "sys_file"})
		e.beGroup(t, 24, "Chain top", map[string]any{"subgroup": "25"})
		e.beGroup(t, 25, "Chain middle", map[string]any{"subgroup": "26,9999"})
		e.beGroup(t, 26, "Chain bottom", map[string]any{"workspace_perms": 4})
		e.beGroup(t, 27, "Includes 2 and 3", map[string]any{"subgroup": "2,3"})

		cases := []struct {
			usergroup string
			want      []int64
		}{
			{"7,8,1", []int64{1}},          // hidden 7 and deleted 8 drop out
			{"21,22", []int64{}},           // and their sub groups with them
			{"21,4", []int64{4}},           // 4 is still reachable directly
			{"23", []int64{23}},            // self-inclusion is cut
			{"24", []int64{26, 25, 24}},    // sub groups before parents; missing 9999 ignored
			{"5", []int64{6, 5}},           // cycle entered from 5
			{"6", []int64{5, 6}},           // cycle entered from 6
			{"2,5,7", []int64{3, 2, 6, 5}}, // the demo's intern
			// 2 includes 3, so the resolver yields 3,2,3; userGroupsUID keeps
			// each group's LAST position (fetchGroupData).
			{"2,3", []int64{2, 3}},
			{"3,2", []int64{3, 2}},
			// 27 includes 2 (which includes 3) and 3: 3,2,3,27 → 2,3,27.
			{"27", []int64{2, 3, 27}},
			{"9999, 1 ,x,", []int64{1}}, // junk and spaces in the CSV
			{"", []int64{}},
		}
		for i, c := range cases {
			uid := int64(300 + i)
			name := "groups-" + string(rune('a'+i))
			e.beUser(t, uid, name, map[string]any{"usergroup": c.usergroup})
			u := e.user(t, name)
			if !slices.Equal(u.GroupUIDs, c.want) {
				t.Errorf("usergroup %q: groups %v, want %v", c.usergroup, u.GroupUIDs, c.want)
			}
			if len(u.Groups) != len(u.GroupUIDs) {
				t.Errorf("usergroup %q: %d group records for %d uids", c.usergroup, len(u.Groups), len(u.GroupUIDs))
			}
		}

		// Hidden/deleted groups contribute nothing.
		u := e.user(t, "groups-a") // 7,8,1
		if u.CanSelectTable("sys_template") || u.CanSelectTable("sys_file") || !slices.Equal(u.DBMounts, []int64{5}) {
			t.Errorf("7,8,1: tables %v mounts %v", u.TablesSelect, u.DBMounts)
		}
		u = e.user(t, "groups-b") // 21,22
		if len(u.DBMounts) != 0 || u.CanSelectTable("pages") {
			t.Errorf("21,22: mounts %v tables %v; want none", u.DBMounts, u.TablesSelect)
		}
		// workspace_perms ORs the user's (default 1) with the groups'.
		u = e.user(t, "groups-e") // 24 → 26,25,24
		if u.WorkspacePerms != 1|4 {
			t.Errorf("workspace_perms %d, want 5", u.WorkspacePerms)
		}
		if !u.IsMemberOf(26) || u.IsMemberOf(9999) || u.IsMemberOf(0) {
			t.Errorf("IsMemberOf wrong for %v", u.GroupUIDs)
		}
	})
}

func TestMergedLists(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.beGroup(t, 30, "Lists A", map[string]any{
			"tables_select": "pages, tt_content,,pages", "tables_modify": "sys_category",
			"pagetypes_select": "1,254,x", "non_exclude_fields": "pages:hidden,tt_content:header",
			"explicit_allowdeny": "tt_content:CType:text,tt_content:CType:image:ALLOW",
			"allowed_languages":  "1,2", "file_mountpoints": "7", "db_mountpoints": "5", "custom_options": "a:b",
		})
		e.beGroup(t, 31, "Lists B", map[string]any{"subgroup": "30", "tables_select": "sys_file", "allowed_languages": "2,0",
			"file_mountpoints": "8", "file_permissions": "readFile"})
		e.beUser(t, 400, "lists", map[string]any{"usergroup": "31", "allowed_languages": "3", "file_mountpoints": "6",
			"file_permissions": "readFolder", "options": 2})
		u := e.user(t, "lists")
		checks := []struct {
			what      string
			got, want any
		}{
			{"groups", u.GroupUIDs, []int64{30, 31}},
			{"tables_select", u.TablesSelect, []string{"sys_category", "pages", "tt_content", "sys_file"}},
			{"tables_modify", u.TablesModify, []string{"sys_category"}},
			{"pagetypes", u.PageTypesSelect, []int{1, 254}},
			{"non_exclude", u.NonExcludeFields, []string{"pages:hidden", "tt_content:header"}},
			{"allowdeny", u.ExplicitAllowDeny, []string{"tt_content:CType:text", "tt_content:CType:image:ALLOW"}},
			{"languages", u.AllowedLanguages, []int{3, 1, 2, 0}}, // the user's own first
			{"file mounts", u.FileMounts, []int64{6, 7, 8}},      // options 2: groups' file mounts
			{"db mounts", u.DBMounts, []int64{}},                 // options 2 lacks bit 1
			{"file perms", u.FilePermissions, []string{"readFolder", "readFile"}},
			{"custom", u.CustomOptions, []string{"a:b"}},
		}
		for _, c := range checks {
			if !equalAny(c.got, c.want) {
				t.Errorf("%s: %v, want %v", c.what, c.got, c.want)
			}
		}
		for _, c := range []struct {
			fn   func() bool
			want bool
			what string
		}{
			{func() bool { return u.CanUsePageType(254) }, true, "doktype 254"},
			{func() bool { return u.CanUsePageType(0) }, false, "doktype 0 (from 'x')"},
			{func() bool { return u.IsNonExcludeField("pages", "hidden") }, true, "pages:hidden"},
			{func() bool { return u.IsNonExcludeField("pages", "title") }, false, "pages:title"},
			{func() bool { return u.CheckAuthMode("tt_content", "CType", "text") }, true, "CType text"},
			// The pre-v12 ":ALLOW" suffix does not match in v13.
			{func() bool { return u.CheckAuthMode("tt_content", "CType", "image") }, false, "CType image:ALLOW"},
			{func() bool { return u.CheckAuthMode("tt_content", "CType", "") }, true, "empty value"},
			{func() bool { return u.CheckAuthMode("tt_content", "CType", "--div--") }, true, "divider"},
			{func() bool { return u.CheckAuthMode("tt_content", "CType", "text,image") }, false, "value with comma"},
			{func() bool { return u.CanAccessLanguage(0) }, true, "language 0"},
			{func() bool { return u.CanAccessLanguage(5) }, false, "language 5"},
		} {
			if got := c.fn(); got != c.want {
				t.Errorf("%s: %v, want %v", c.what, got, c.want)
			}
		}
	})
}

func equalAny(a, b any) bool {
	switch x := a.(type) {
	case []int64:
		return slices.Equal(x, b.([]int64))
	case []int:
		return slices.Equal(x, b.([]int))
	case []string:
		return slices.Equal(x, b.([]string))
	}
	return false
}

func TestUsersWhoCannotAct(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		now := fixedNow().Unix()
		e.beUser(t, 500, "deleted-user", map[string]any{"usergroup": "1", "deleted": 1})
		e.beUser(t, 501, "future-user", map[string]any{"usergroup": "1", "starttime": now + 60})
		e.beUser(t, 502, "expired-user", map[string]any{"usergroup": "1", "endtime": now - 60})
		e.beUser(t, 503, "ends-now", map[string]any{"usergroup": "1", "endtime": now})
		e.beUser(t, 504, "starts-now", map[string]any{"usergroup": "1", "starttime": now})
		e.beUser(t, 505, "still-valid", map[string]any{"usergroup": "1", "starttime": now - 3600, "endtime": now + 3600})
		e.beUser(t, 506, "on-a-page", map[string]any{"usergroup": "1", "pid": 5})
		// A deleted and an active row sharing a username: the active one acts.
		e.beUser(t, 507, "reused", map[string]any{"usergroup": "3", "deleted": 1})
		e.beUser(t, 508, "reused", map[string]any{"usergroup": "1"})

		for _, c := range []struct {
			name   string
			reason typo3.InactiveReason
		}{
			{"former", typo3.ReasonDisabled},
			{"deleted-user", typo3.ReasonDeleted},
			{"future-user", typo3.ReasonNotStarted},
			{"expired-user", typo3.ReasonExpired},
			{"ends-now", typo3.ReasonExpired}, // endtime must lie after now
			{"on-a-page", typo3.ReasonNotRoot},
			{"nobody-here", typo3.ReasonUnknown},
		} {
			u, err := e.site.BackendUserByName(ctx, c.name)
			var cae *typo3.CannotActError
			if u != nil || !errors.Is(err, typo3.ErrUserCannotAct) || !errors.As(err, &cae) || cae.Reason != c.reason {
				t.Errorf("%s: got %v, %v; want ErrUserCannotAct (%s)", c.name, u, err, c.reason)
				continue
			}
			if err.Error() != typo3.ErrUserCannotAct.Error() {
				t.Errorf("%s: message %q is not the neutral one", c.name, err)
			}
		}
		for _, name := range []string{"starts-now", "still-valid"} {
			if _, err := e.site.BackendUserByName(ctx, name); err != nil {
				t.Errorf("%s cannot act: %v", name, err)
			}
		}
		if u, err := e.site.BackendUserByName(ctx, "reused"); err != nil || u.UID != 508 {
			t.Errorf("reused: %v %v, want uid 508", u, err)
		}
		// By uid, with the same rules.
		if _, err := e.site.BackendUserByUID(ctx, 4); !errors.Is(err, typo3.ErrUserCannotAct) {
			t.Errorf("uid 4 (former): %v", err)
		}
		if u, err := e.site.BackendUserByUID(ctx, 2); err != nil || u.Username != "editor" {
			t.Errorf("uid 2: %v %v", u, err)
		}
		if _, err := e.site.BackendUserByUID(ctx, 507); !errors.Is(err, typo3.ErrUserCannotAct) {
			t.Errorf("uid 507 (deleted): %v", err)
		}
		// The clock decides: at a later instant the expiring user is gone,
		// at an earlier one the future user is not yet there.
		if _, err := e.withClock(t, fixedNow().Add(2*time.Hour)).BackendUserByName(ctx, "still-valid"); !errors.Is(err, typo3.ErrUserCannotAct) {
			t.Errorf("still-valid two hours later: %v", err)
		}
		if _, err := e.withClock(t, fixedNow().Add(2*time.Minute)).BackendUserByName(ctx, "future-user"); err != nil {
			t.Errorf("future-user two minutes later: %v", err)
		}
	})
}

// TestDemoUserListing covers Site.ListBackendUsers (userlist.go), which
// shares the acting rules of BackendUserByName.
func TestDemoUserListing(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.beUser(t, 520, "gone", map[string]any{"deleted": 1})
		e.beUser(t, 521, "expired", map[string]any{"endtime": fixedNow().Unix() - 1})
		list, err := e.site.ListBackendUsers(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, u := range list {
			s := u.Username
			if u.Admin {
				s += "+admin"
			}
			if !u.CanAct {
				s += "-inactive"
			}
			got = append(got, s)
		}
		want := []string{"admin+admin", "editor", "expired-inactive", "former-inactive", "intern"}
		if !slices.Equal(got, want) {
			t.Errorf("listing %v, want %v", got, want)
		}
	})
}
