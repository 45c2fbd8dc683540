package typo3

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// BackendUser is a TYPO3 backend user with the permission data of all of
// its groups merged the way BackendUserAuthentication::fetchGroupData does.
// It is loaded once per request and read-only afterwards.
type BackendUser struct {
	UID      int64
	Username string
	RealName string
	Email    string
	// Lang is the backend's interface language (be_users.lang): "default"
	// (English), an ISO code such as "de", or "" when not set.
	Lang string
	// Admin is bit 0 of be_users.admin.
	Admin bool
	// Options is the mount option bitmask: 1 takes DB mounts from the
	// groups, 2 takes file mounts from the groups.
	Options int

	// Groups are the resolved, active groups in TYPO3's userGroupsUID
	// order: sub groups before the group that includes them; a group
	// reached more than once keeps its last position.
	Groups []BackendGroup
	// GroupUIDs are the uids of Groups, in the same order.
	GroupUIDs []int64

	// TablesSelect is tables_modify ∪ tables_select over all groups.
	TablesSelect []string
	TablesModify []string
	// PageTypesSelect are the doktypes the user may create.
	PageTypesSelect []int
	// NonExcludeFields are "table:field" entries.
	NonExcludeFields []string
	// ExplicitAllowDeny are "table:field:value" entries, compared exactly.
	ExplicitAllowDeny []string
	// AllowedLanguages are sys_language ids; empty means every language.
	AllowedLanguages []int
	CustomOptions    []string
	// DBMounts are the web mounts (the user's own, plus the groups' when
	// Options&1), reduced to pages that exist and that the user may show.
	// Admins have 0 (the tree root) first.
	DBMounts []int64
	// FileMounts are sys_filemounts uids (the user's own, plus the groups'
	// when Options&2).
	FileMounts      []int64
	FilePermissions []string
	// WorkspacePerms is the OR of the user's and the groups' bitmasks.
	WorkspacePerms int
}

// BackendGroup names one resolved group.
type BackendGroup struct {
	UID   int64
	Title string
}

// ErrUserCannotAct is matched (errors.Is) by every refusal to load a
// backend user for acting: unknown, deleted, disabled, outside its
// start/end time, or not stored on the root level.
var ErrUserCannotAct = errors.New("this backend user cannot act")

// CannotActError tells why a user cannot act. Its message is neutral so it
// can be shown; Reason is for logs.
type CannotActError struct {
	Reason InactiveReason
}

func (e *CannotActError) Error() string        { return ErrUserCannotAct.Error() }
func (e *CannotActError) Is(target error) bool { return target == ErrUserCannotAct }

// InactiveReason says why a be_users row cannot act.
type InactiveReason string

const (
	ReasonUnknown    InactiveReason = "unknown user"
	ReasonDeleted    InactiveReason = "deleted"
	ReasonDisabled   InactiveReason = "disabled"
	ReasonNotStarted InactiveReason = "starttime in the future"
	ReasonExpired    InactiveReason = "endtime passed"
	// ReasonNotRoot: be_users rows must lie on pid 0 (ctrl rootLevel 1);
	// TYPO3's login query requires it.
	ReasonNotRoot InactiveReason = "not on the root level"
)

// groupResolutionBudget caps how many group visits one user's resolution
// may take. TYPO3 re-expands a sub group for every parent that includes it,
// which is exponential in pathological hierarchies.
const groupResolutionBudget = 10000

// BackendUserByName loads the backend user that would log in with
// username, for acting. Inactive users yield a *CannotActError.
func (s *Site) BackendUserByName(ctx context.Context, username string) (*BackendUser, error) {
	row, err := s.actingUserRow(ctx, "username", username)
	if err != nil {
		return nil, err
	}
	return s.buildUser(ctx, row)
}

// BackendUserByUID loads backend user uid for acting. Inactive users
// yield a *CannotActError.
func (s *Site) BackendUserByUID(ctx context.Context, uid int64) (*BackendUser, error) {
	row, err := s.actingUserRow(ctx, "uid", uid)
	if err != nil {
		return nil, err
	}
	return s.buildUser(ctx, row)
}

type userRow struct {
	uid, pid                       int64
	username, password             string
	realName, email                string
	lang                           string
	admin, options, workspacePerms int
	usergroup, dbMounts            string
	fileMounts, allowedLanguages   string
	filePermissions                string
	disable, deleted               int
	starttime, endtime             int64
}

// inactive applies the enable columns TYPO3 hard-codes for be_users
// (BackendUserAuthentication::$enablecolumns), which do not depend on TCA.
func (r *userRow) inactive(now int64) InactiveReason {
	switch {
	case r.deleted != 0:
		return ReasonDeleted
	case r.pid != 0:
		return ReasonNotRoot
	case r.disable != 0:
		return ReasonDisabled
	case r.starttime > now:
		return ReasonNotStarted
	case r.endtime != 0 && r.endtime <= now:
		return ReasonExpired
	}
	return ""
}

// actingUserRow finds the rows matching column = value and returns the
// first active one by uid; several rows can share a username when all
// but one are deleted.
func (s *Site) actingUserRow(ctx context.Context, column string, value any) (*userRow, error) {
	rows, err := s.userRows(ctx, column, value)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, &CannotActError{Reason: ReasonUnknown}
	}
	now := s.Now().Unix()
	for _, r := range rows {
		if r.inactive(now) == "" {
			return r, nil
		}
	}
	return nil, &CannotActError{Reason: rows[0].inactive(now)}
}

func (s *Site) userRows(ctx context.Context, column string, value any) ([]*userRow, error) {
	db := s.DB
	a := db.NewArgs()
	realName, err := s.liveColumn(ctx, "be_users", "realName")
	if err != nil {
		return nil, err
	}
	realNameExpr := "''"
	if realName != "" {
		realNameExpr = db.MustQuote(realName)
	}
	lang, err := s.liveColumn(ctx, "be_users", "lang")
	if err != nil {
		return nil, err
	}
	langExpr := "''"
	if lang != "" {
		langExpr = db.MustQuote(lang)
	}
	q := `SELECT ` + quoteList(db, "uid", "pid", "username", "password") + `, ` + realNameExpr + `, ` + langExpr + `, ` +
		quoteList(db, "email", "admin", "options", "workspace_perms", "usergroup", "db_mountpoints",
			"file_mountpoints", "allowed_languages", "file_permissions", "disable", "deleted", "starttime", "endtime") +
		` FROM ` + db.MustQuote("be_users") + ` WHERE ` + db.MustQuote(column) + ` = ` + a.Add(value) +
		` ORDER BY ` + db.MustQuote("uid")
	rs, err := db.QueryPrepared(ctx, q, a.Values()...)
	if err != nil {
		return nil, fmt.Errorf("read be_users: %w", err)
	}
	defer rs.Close()
	var out []*userRow
	for rs.Next() {
		var r userRow
		var username, password, realName, uiLang, email, usergroup, dbm, fm, langs, fperm sql.NullString
		if err := rs.Scan(&r.uid, &r.pid, &username, &password, &realName, &uiLang, &email, &r.admin, &r.options,
			&r.workspacePerms, &usergroup, &dbm, &fm, &langs, &fperm, &r.disable, &r.deleted,
			&r.starttime, &r.endtime); err != nil {
			return nil, fmt.Errorf("read be_users: %w", err)
		}
		r.username, r.password, r.realName, r.email = username.String, password.String, realName.String, email.String
		r.lang = uiLang.String
		r.usergroup, r.dbMounts, r.fileMounts = usergroup.String, dbm.String, fm.String
		r.allowedLanguages, r.filePermissions = langs.String, fperm.String
		out = append(out, &r)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("read be_users: %w", err)
	}
	return out, nil
}

// liveColumn returns the live spelling of a column whose case may have
// been folded (a PostgreSQL schema created without quoting turns realName
// into realname), or "" when the table has no such column.
func (s *Site) liveColumn(ctx context.Context, table, name string) (string, error) {
	cols, err := s.Columns(ctx, table)
	if err != nil {
		return "", err
	}
	for _, c := range cols {
		if c == name {
			return c, nil
		}
	}
	for _, c := range cols {
		if strings.EqualFold(c, name) {
			return c, nil
		}
	}
	return "", nil
}

func quoteList(db *DB, names ...string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = db.MustQuote(n)
	}
	return strings.Join(q, ", ")
}

type groupRow struct {
	uid                                   int64
	title, subgroup                       string
	tablesSelect, tablesModify, pageTypes string
	nonExclude, explicitAllowDeny         string
	allowedLanguages, customOptions       string
	dbMounts, fileMounts, filePermissions string
	workspacePerms                        int
}

// buildUser merges the user's own lists with those of its resolved groups
// in fetchGroupData's order, then filters the web mounts.
func (s *Site) buildUser(ctx context.Context, r *userRow) (*BackendUser, error) {
	u := &BackendUser{
		UID:            r.uid,
		Username:       r.username,
		RealName:       r.realName,
		Lang:           r.lang,
		Email:          r.email,
		Admin:          r.admin&1 == 1,
		Options:        r.options,
		WorkspacePerms: r.workspacePerms,
	}
	res := groupResolver{site: s, rows: map[int64]*groupRow{}, budget: groupResolutionBudget}
	groups, err := res.resolve(ctx, intList(r.usergroup), nil)
	if err != nil {
		return nil, err
	}

	webMounts := intList(r.dbMounts)
	fileMounts := intList(r.fileMounts)
	languages := splitList(r.allowedLanguages)
	filePerms := splitList(r.filePermissions)
	var tablesSelect, tablesModify, pageTypes, nonExclude, allowDeny, custom []string
	var uids []int64
	for _, g := range groups {
		uids = append(uids, g.uid)
		if r.options&1 != 0 {
			webMounts = append(webMounts, intList(g.dbMounts)...)
		}
		if r.options&2 != 0 {
			fileMounts = append(fileMounts, intList(g.fileMounts)...)
		}
		tablesSelect = append(tablesSelect, splitList(g.tablesSelect)...)
		tablesModify = append(tablesModify, splitList(g.tablesModify)...)
		pageTypes = append(pageTypes, splitList(g.pageTypes)...)
		nonExclude = append(nonExclude, splitList(g.nonExclude)...)
		allowDeny = append(allowDeny, splitList(g.explicitAllowDeny)...)
		languages = append(languages, splitList(g.allowedLanguages)...)
		custom = append(custom, splitList(g.customOptions)...)
		filePerms = append(filePerms, splitList(g.filePermissions)...)
		u.WorkspacePerms |= g.workspacePerms
	}
	// userGroupsUID keeps each group at its last position.
	slices.Reverse(uids)
	uids = uniqueList(uids)
	slices.Reverse(uids)
	u.GroupUIDs = uids
	for _, id := range uids {
		u.Groups = append(u.Groups, BackendGroup{UID: id, Title: res.rows[id].title})
	}

	if u.Admin {
		webMounts = append([]int64{0}, webMounts...)
	}
	u.TablesSelect = uniqueList(append(slices.Clone(tablesModify), tablesSelect...))
	u.TablesModify = uniqueList(tablesModify)
	u.PageTypesSelect = numericList(uniqueList(pageTypes))
	u.NonExcludeFields = uniqueList(nonExclude)
	u.ExplicitAllowDeny = uniqueList(allowDeny)
	u.AllowedLanguages = numericList(uniqueList(languages))
	u.CustomOptions = uniqueList(custom)
	u.FileMounts = uniqueList(fileMounts)
	u.FilePermissions = uniqueList(filePerms)
	u.DBMounts, err = s.filterWebMounts(ctx, u, uniqueList(webMounts))
	if err != nil {
		return nil, err
	}
	return u, nil
}

// filterWebMounts keeps the mounts that are not deleted pages the user may
// show (filterValidWebMounts); non-positive entries such as the admin's 0
// stay.
func (s *Site) filterWebMounts(ctx context.Context, u *BackendUser, mounts []int64) ([]int64, error) {
	var ids []int64
	for _, m := range mounts {
		if m > 0 {
			ids = append(ids, m)
		}
	}
	readable := map[int64]bool{}
	if len(ids) > 0 {
		db := s.DB
		a := db.NewArgs()
		notDeleted, err := s.Restrict(a, "pages", "", RestrictDeleted)
		if err != nil {
			return nil, err
		}
		perms, err := u.PermsClause(a, "pages", PermPageShow)
		if err != nil {
			return nil, err
		}
		q := `SELECT ` + db.MustQuote("uid") + ` FROM ` + db.MustQuote("pages") + ` WHERE ` + notDeleted +
			` AND ` + perms + ` AND ` + db.MustQuote("pages") + `.` + db.MustQuote("uid") + ` IN (` + a.AddInts(ids) + `)`
		rows, err := db.QueryPrepared(ctx, q, a.Values()...)
		if err != nil {
			return nil, fmt.Errorf("check web mounts: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return nil, fmt.Errorf("check web mounts: %w", err)
			}
			readable[id] = true
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("check web mounts: %w", err)
		}
	}
	out := []int64{}
	for _, m := range mounts {
		if m <= 0 || readable[m] {
			out = append(out, m)
		}
	}
	return out, nil
}

// groupResolver follows GroupResolver::fetchGroupsRecursive: for each id
// in order, skip it if missing, deleted, hidden or already on the path from
// the user (which makes cycles safe), otherwise emit its sub groups first
// and then itself. A group included by two parents is emitted twice; the
// caller keeps its last position, as fetchGroupData does.
type groupResolver struct {
	site   *Site
	rows   map[int64]*groupRow // nil entry: looked up, not active
	budget int
}

func (g *groupResolver) resolve(ctx context.Context, ids []int64, path []int64) ([]*groupRow, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	if err := g.fetch(ctx, ids); err != nil {
		return nil, err
	}
	var out []*groupRow
	for _, id := range ids {
		row := g.rows[id]
		if row == nil || slices.Contains(path, id) {
			continue
		}
		if g.budget--; g.budget < 0 {
			return nil, errors.New("the backend group hierarchy is too large to resolve")
		}
		if subs := intList(row.subgroup); len(subs) > 0 {
			sub, err := g.resolve(ctx, subs, append(slices.Clone(path), id))
			if err != nil {
				return nil, err
			}
			out = append(out, sub...)
		}
		out = append(out, row)
	}
	return out, nil
}

// fetch loads the groups not seen yet, with be_groups' default
// restrictions from TCA (deleted, hidden).
func (g *groupResolver) fetch(ctx context.Context, ids []int64) error {
	var missing []int64
	for _, id := range ids {
		if _, seen := g.rows[id]; !seen && !slices.Contains(missing, id) {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	for _, id := range missing {
		g.rows[id] = nil
	}
	db := g.site.DB
	a := db.NewArgs()
	restrict, err := g.site.Restrict(a, "be_groups", "", RestrictDefault)
	if err != nil {
		return err
	}
	q := `SELECT ` + quoteList(db, "uid", "title", "subgroup", "tables_select", "tables_modify", "pagetypes_select",
		"non_exclude_fields", "explicit_allowdeny", "allowed_languages", "custom_options", "db_mountpoints",
		"file_mountpoints", "file_permissions", "workspace_perms") +
		` FROM ` + db.MustQuote("be_groups") + ` WHERE ` + restrict +
		` AND ` + db.MustQuote("be_groups") + `.` + db.MustQuote("uid") + ` IN (` + a.AddInts(missing) + `)`
	rows, err := db.QueryPrepared(ctx, q, a.Values()...)
	if err != nil {
		return fmt.Errorf("read be_groups: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r groupRow
		var f [12]sql.NullString
		if err := rows.Scan(&r.uid, &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8], &f[9], &f[10], &f[11],
			&r.workspacePerms); err != nil {
			return fmt.Errorf("read be_groups: %w", err)
		}
		r.title, r.subgroup, r.tablesSelect, r.tablesModify = f[0].String, f[1].String, f[2].String, f[3].String
		r.pageTypes, r.nonExclude, r.explicitAllowDeny = f[4].String, f[5].String, f[6].String
		r.allowedLanguages, r.customOptions, r.dbMounts = f[7].String, f[8].String, f[9].String
		r.fileMounts, r.filePermissions = f[10].String, f[11].String
		g.rows[r.uid] = &r
	}
	return rows.Err()
}

// IsMemberOf reports whether groupUID is among the resolved groups.
func (u *BackendUser) IsMemberOf(groupUID int64) bool {
	return u != nil && groupUID != 0 && slices.Contains(u.GroupUIDs, groupUID)
}

// CanSelectTable reports whether the user may read table by its group
// rights (admins: always). The read policy adds its own refusals on top
// (sensitive tables, adminOnly).
func (u *BackendUser) CanSelectTable(table string) bool {
	return u != nil && (u.Admin || slices.Contains(u.TablesSelect, table))
}

// CanModifyTable reports whether table is in tables_modify (admins: always).
func (u *BackendUser) CanModifyTable(table string) bool {
	return u != nil && (u.Admin || slices.Contains(u.TablesModify, table))
}

// CanAccessLanguage follows checkLanguageAccess: an empty
// allowed_languages list allows every language, -1 ("all languages") is
// always allowed, admins always pass.
func (u *BackendUser) CanAccessLanguage(id int) bool {
	if u == nil {
		return false
	}
	if u.Admin || len(u.AllowedLanguages) == 0 || id == -1 {
		return true
	}
	return slices.Contains(u.AllowedLanguages, id)
}

// CanUsePageType reports whether doktype is in pagetypes_select (admins:
// always).
func (u *BackendUser) CanUsePageType(doktype int) bool {
	return u != nil && (u.Admin || slices.Contains(u.PageTypesSelect, doktype))
}

// IsNonExcludeField reports whether table:field is granted for columns
// that TCA marks exclude (admins: always).
func (u *BackendUser) IsNonExcludeField(table, field string) bool {
	return u != nil && (u.Admin || slices.Contains(u.NonExcludeFields, table+":"+field))
}

// CheckAuthMode follows checkAuthMode for a select field with authMode
// explicitAllow (the caller checks that the TCA column has it): admins,
// empty values and "--div--" pass; values with ":", "|" or "," fail;
// otherwise "table:field:value" must be listed exactly. Entries carrying a
// pre-v12 ":ALLOW" suffix therefore never match, as in TYPO3 v13.
func (u *BackendUser) CheckAuthMode(table, field, value string) bool {
	if u == nil {
		return false
	}
	if u.Admin || value == "" || value == "--div--" {
		return true
	}
	if strings.ContainsAny(value, ":|,") {
		return false
	}
	return slices.Contains(u.ExplicitAllowDeny, table+":"+field+":"+value)
}
