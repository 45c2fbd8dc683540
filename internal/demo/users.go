package demo

import (
	"crypto/rand"
	"fmt"
	"strings"
)

// User is a backend login the generator or the importer created.
type User struct {
	UID      int
	Username string
	// Password is the plain password. It is known right after generation
	// and, for an existing demo, read back from credentials.txt.
	Password string
	Admin    bool
	// Groups is be_users.usergroup (CSV of be_groups uids).
	Groups   string
	Disabled bool
}

// userRow is a backend user ready to insert.
type userRow struct {
	User
	hash     string
	realName string
	email    string
	options  int
	tsconfig string
}

// demoUsers lists the backend users of docs/demo-site.md without passwords.
func demoUsers() []userRow {
	return []userRow{
		{User: User{UID: 1, Username: "admin", Admin: true}, realName: "Site Administrator", email: "admin@nordlicht-pumps.example", options: 3},
		{User: User{UID: 2, Username: "editor", Groups: "1"}, realName: "Erika Editor", email: "erika.editor@nordlicht-pumps.example", options: 3,
			tsconfig: "options.pageTree.showPageIdWithTitle = 1\nsetup.default.edit_docModuleUpload = 1\n"},
		{User: User{UID: 3, Username: "intern", Groups: "2,5,7"}, realName: "Ivo Intern", email: "ivo.intern@nordlicht-pumps.example", options: 3},
		{User: User{UID: 4, Username: "former", Groups: "1", Disabled: true}, realName: "Frida Former", email: "frida.former@nordlicht-pumps.example", options: 3},
	}
}

// passwordAlphabet leaves out look-alikes (0/o, 1/l/i) so a password read
// off a terminal can be typed back.
const passwordAlphabet = "abcdefghjkmnpqrstuvwxyz23456789"

// NewPassword returns a random, readable password of four groups of five
// characters (about 99 bits), e.g. "k7mqa-x2vdn-9fbhr-tw3np".
func NewPassword() (string, error) {
	const groups, per = 4, 5
	b := make([]byte, groups*per)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random password: %w", err)
	}
	var s strings.Builder
	for i, c := range b {
		if i > 0 && i%per == 0 {
			s.WriteByte('-')
		}
		// 31 symbols: rejection sampling is not worth it for a demo
		// password; the bias of 256 mod 31 is below 4 %.
		s.WriteByte(passwordAlphabet[int(c)%len(passwordAlphabet)])
	}
	return s.String(), nil
}

func (g *generator) groups() error {
	ts := g.now - 440*86400
	grp := func(uid int, title string) map[string]any {
		return map[string]any{
			"uid": uid, "pid": 0, "tstamp": ts + int64(uid)*86400, "crdate": ts, "deleted": 0, "hidden": 0,
			"title": title, "description": nil, "subgroup": "", "tables_select": nil, "tables_modify": nil,
			"db_mountpoints": nil, "file_mountpoints": "", "file_permissions": nil, "workspace_perms": 1,
			"pagetypes_select": nil, "non_exclude_fields": nil, "explicit_allowdeny": nil, "allowed_languages": "",
			"custom_options": nil, "groupMods": nil, "mfa_providers": nil, "TSconfig": nil, "category_perms": nil,
		}
	}
	editors := grp(1, "Editors")
	editors["description"] = "Everyday editors of the products section."
	editors["tables_select"] = "pages,sys_category"
	editors["tables_modify"] = "tt_content"
	editors["db_mountpoints"] = "5"
	editors["allowed_languages"] = "0"
	editors["file_mountpoints"] = "1"
	editors["file_permissions"] = "readFolder,readFile,addFile,writeFile,renameFile,replaceFile"
	editors["pagetypes_select"] = "1,4,254"
	editors["non_exclude_fields"] = "pages:hidden,pages:nav_hide,tt_content:hidden,tt_content:starttime,tt_content:endtime,tt_content:fe_group"
	editors["explicit_allowdeny"] = "tt_content:CType:text,tt_content:CType:textmedia,tt_content:CType:header,tt_content:CType:bullets,tt_content:CType:image"
	editors["groupMods"] = "web_layout,web_list,file_FilelistList"
	editors["category_perms"] = "1,2,3,4"
	editors["TSconfig"] = "options.clearCache.pages = 1\nmod.web_list.hideTables = sys_category\n"

	interns := grp(2, "Interns")
	interns["subgroup"] = "3"
	interns["tables_select"] = "pages"

	newsReaders := grp(3, "News readers")
	newsReaders["tables_select"] = "tt_content"
	newsReaders["db_mountpoints"] = "13"

	management := grp(4, "Management")
	management["tables_select"] = "pages,tt_content,sys_category,sys_file"
	management["db_mountpoints"] = "1"
	management["file_mountpoints"] = "1,2"
	management["description"] = "Owners of the internal pricing pages."

	cycleA := grp(5, "Cycle A")
	cycleA["subgroup"] = "6"
	cycleB := grp(6, "Cycle B")
	cycleB["subgroup"] = "5"

	hidden := grp(7, "Hidden group")
	hidden["tables_select"] = "sys_template"
	hidden["db_mountpoints"] = "16"
	hidden["hidden"] = 1

	deleted := grp(8, "Deleted group")
	deleted["tables_select"] = "sys_file"
	deleted["db_mountpoints"] = "1"
	deleted["deleted"] = 1

	return g.rows("be_groups", []map[string]any{editors, interns, newsReaders, management, cycleA, cycleB, hidden, deleted})
}

func (g *generator) beUsers(users []userRow) error {
	ts := g.now - 445*86400
	rows := make([]map[string]any, 0, len(users))
	for _, u := range users {
		admin, disable := 0, 0
		if u.Admin {
			admin = 1
		}
		if u.Disabled {
			disable = 1
		}
		rows = append(rows, map[string]any{
			"uid": u.UID, "pid": 0, "tstamp": ts + int64(u.UID)*86400, "crdate": ts, "deleted": 0, "disable": disable,
			"starttime": 0, "endtime": 0, "description": nil, "lang": "default", "uc": []byte("a:0:{}"), "workspace_id": 0,
			"mfa": nil, "password_reset_token": "", "username": u.Username, "password": u.hash, "usergroup": u.Groups,
			"avatar": 0, "db_mountpoints": nil, "file_mountpoints": "", "email": u.email, "realName": u.realName,
			"admin": admin, "options": u.options, "file_permissions": nil, "workspace_perms": 1, "userMods": nil,
			"allowed_languages": "", "TSconfig": nullIfEmpty(u.tsconfig), "lastlogin": g.now - int64(u.UID)*86400,
			"category_perms": nil,
		})
	}
	return g.rows("be_users", rows)
}
