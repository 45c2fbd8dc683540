// Package accounts holds the builtin tools of the accounts group: the
// site's backend users and groups, for admins. list_be_users,
// list_be_groups and list_be_users_raw (disabled by default).
//
// be_users and be_groups are sensitive tables no record tool may read;
// these tools read them in their own narrow way. They are admin-only and
// secretAdjacent, so the gate offers them to admins talking to a local
// provider only, and they check the admin flag themselves as well. No
// tool ever selects a password, MFA or other credential-like column
// (readpolicy.IsCredentialColumn, plus every column whose name contains
// "password" or starts with "mfa"); the raw variant lists the remaining
// columns by name from the live schema.
package accounts

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

// DeniedAdmin answers a non-admin the gate let through by mistake; it is
// the sentence of a record tool's denial, so it confirms nothing.
const DeniedAdmin = readpolicy.DeniedTable

// Tools returns the accounts tools over site.
func Tools(site *typo3.Site) []tool.Tool {
	e := env{site: site}
	return []tool.Tool{&listUsers{e}, &listGroups{e}, &listUsersRaw{e}}
}

type env struct{ site *typo3.Site }

func spec(name, description string, enabled bool) tool.Spec {
	return tool.Spec{
		Name:             name,
		Description:      description,
		InputSchema:      json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
		Group:            tool.GroupAccounts,
		Effect:           tool.ReadOnly,
		DataClass:        tool.SecretAdjacent,
		AdminOnly:        true,
		EnabledByDefault: enabled,
	}
}

// check refuses anyone but an admin.
func check(call tool.Call) (tool.Result, bool) {
	if call.Actor == nil {
		return tool.Errorf("%s", readpolicy.DeniedUser), false
	}
	if !call.Actor.Admin {
		return tool.Errorf("%s", DeniedAdmin), false
	}
	return tool.Result{}, true
}

// IsSecretColumn reports whether a be_users/be_groups column is never
// read: credential-like names, and anything about passwords or MFA.
func IsSecretColumn(name string) bool {
	l := strings.ToLower(name)
	return readpolicy.IsCredentialColumn(name) || strings.Contains(l, "password") || strings.HasPrefix(l, "mfa") ||
		strings.Contains(l, "_mfa")
}

// columns returns the live spelling of each wanted column of table, ""
// for a column the table lacks (PostgreSQL folds unquoted names).
func (e env) columns(ctx context.Context, table string, want ...string) ([]string, error) {
	live, err := e.site.Columns(ctx, table)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(want))
	for i, w := range want {
		for _, c := range live {
			if c == w || out[i] == "" && strings.EqualFold(c, w) {
				out[i] = c
			}
		}
	}
	return out, nil
}

// selectList quotes the columns; a missing one reads as NULL.
func selectList(db *typo3.DB, cols []string) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		if c == "" {
			parts[i] = "NULL"
			continue
		}
		parts[i] = db.MustQuote(c)
	}
	return strings.Join(parts, ", ")
}

func clean(s string, limit int) string { return tool.Line(s, limit) }

// maxUsers caps list_be_users and list_be_groups.
const maxUsers = 200

type listUsers struct{ env }

func (t *listUsers) Spec() tool.Spec {
	return spec("list_be_users",
		"The TYPO3 backend users (admins only): `- [uid] username (real name, e-mail) · admin · disabled · last "+
			"login`, deleted users left out, at most 200. Never shows passwords or MFA settings.", true)
}

func (t *listUsers) Execute(ctx context.Context, call tool.Call, _ map[string]any) (tool.Result, error) {
	if res, ok := check(call); !ok {
		return res, nil
	}
	db := t.site.DB
	cols, err := t.columns(ctx, "be_users", "uid", "username", "realName", "email", "admin", "disable", "lastlogin", "deleted")
	if err != nil {
		return tool.Result{}, err
	}
	if cols[0] == "" || cols[7] == "" {
		return tool.Errorf("The site has no be_users table t3agent can read."), nil
	}
	q := `SELECT ` + selectList(db, cols[:7]) + ` FROM ` + db.MustQuote("be_users") + ` WHERE ` + db.MustQuote(cols[7]) +
		` = 0 ORDER BY ` + db.MustQuote(cols[0]) + ` LIMIT ` + strconv.Itoa(maxUsers+1)
	rows, err := db.SQL.QueryContext(ctx, q)
	if err != nil {
		return tool.Result{}, fmt.Errorf("read be_users: %w", err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var uid int64
		var username, realName, email sql.NullString
		var admin, disable, lastlogin sql.NullInt64
		if err := rows.Scan(&uid, &username, &realName, &email, &admin, &disable, &lastlogin); err != nil {
			return tool.Result{}, fmt.Errorf("read be_users: %w", err)
		}
		line := fmt.Sprintf("- [%d] %s", uid, clean(username.String, 100))
		var who []string
		if s := clean(realName.String, 100); s != "" {
			who = append(who, s)
		}
		if s := clean(email.String, 120); s != "" {
			who = append(who, s)
		}
		if len(who) > 0 {
			line += " (" + strings.Join(who, ", ") + ")"
		}
		if admin.Int64&1 == 1 {
			line += " · admin"
		}
		if disable.Int64 != 0 {
			line += " · disabled"
		}
		if lastlogin.Int64 > 0 {
			line += " · last login " + time.Unix(lastlogin.Int64, 0).UTC().Format("2006-01-02 15:04") + " UTC"
		} else {
			line += " · never logged in"
		}
		lines = append(lines, line)
	}
	if err := rows.Err(); err != nil {
		return tool.Result{}, fmt.Errorf("read be_users: %w", err)
	}
	return tool.Text(listing("backend user", lines)), nil
}

// listing renders lines under a count, at most maxUsers of them.
func listing(noun string, lines []string) string {
	if len(lines) == 0 {
		return "No " + noun + "s."
	}
	var b strings.Builder
	if len(lines) > maxUsers {
		fmt.Fprintf(&b, "The first %d %ss (there are more):\n", maxUsers, noun)
		lines = lines[:maxUsers]
	} else {
		fmt.Fprintf(&b, "%d %s(s):\n", len(lines), noun)
	}
	b.WriteString(strings.Join(lines, "\n"))
	return b.String()
}

type listGroups struct{ env }

func (t *listGroups) Spec() tool.Spec {
	return spec("list_be_groups",
		"The TYPO3 backend user groups (admins only): `- [uid] title`, marked [hidden] when the group is "+
			"disabled; deleted groups left out; at most 200.", true)
}

func (t *listGroups) Execute(ctx context.Context, call tool.Call, _ map[string]any) (tool.Result, error) {
	if res, ok := check(call); !ok {
		return res, nil
	}
	db := t.site.DB
	cols, err := t.columns(ctx, "be_groups", "uid", "title", "hidden", "deleted")
	if err != nil {
		return tool.Result{}, err
	}
	if cols[0] == "" || cols[3] == "" {
		return tool.Errorf("The site has no be_groups table t3agent can read."), nil
	}
	q := `SELECT ` + selectList(db, cols[:3]) + ` FROM ` + db.MustQuote("be_groups") + ` WHERE ` + db.MustQuote(cols[3]) +
		` = 0 ORDER BY ` + db.MustQuote(cols[0]) + ` LIMIT ` + strconv.Itoa(maxUsers+1)
	rows, err := db.SQL.QueryContext(ctx, q)
	if err != nil {
		return tool.Result{}, fmt.Errorf("read be_groups: %w", err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var uid int64
		var title sql.NullString
		var hidden sql.NullInt64
		if err := rows.Scan(&uid, &title, &hidden); err != nil {
			return tool.Result{}, fmt.Errorf("read be_groups: %w", err)
		}
		line := fmt.Sprintf("- [%d] %s", uid, clean(title.String, 120))
		if hidden.Int64 != 0 {
			line += " [hidden]"
		}
		lines = append(lines, line)
	}
	if err := rows.Err(); err != nil {
		return tool.Result{}, fmt.Errorf("read be_groups: %w", err)
	}
	return tool.Text(listing("backend group", lines)), nil
}

// Limits of list_be_users_raw.
const (
	maxRawUsers    = 100
	maxRawValue    = 200
	maxRawResponse = 48 << 10
)

type listUsersRaw struct{ env }

func (t *listUsersRaw) Spec() tool.Spec {
	return spec("list_be_users_raw",
		"Every column of the TYPO3 backend users (admins only; disabled unless an administrator enables it): "+
			"`- be_users:uid` then `  column: value` lines, values cut at 200 characters, at most 100 users. "+
			"Password, MFA and other credential columns are never read. Prefer list_be_users.", false)
}

func (t *listUsersRaw) Execute(ctx context.Context, call tool.Call, _ map[string]any) (tool.Result, error) {
	if res, ok := check(call); !ok {
		return res, nil
	}
	db := t.site.DB
	live, err := t.site.Columns(ctx, "be_users")
	if err != nil {
		return tool.Result{}, err
	}
	var cols []string
	uidCol, deleted := "", ""
	for _, c := range live {
		switch {
		case IsSecretColumn(c):
			continue
		case strings.EqualFold(c, "uid"):
			uidCol = c
		case strings.EqualFold(c, "deleted"):
			deleted = c
		}
		cols = append(cols, c)
	}
	if uidCol == "" || deleted == "" {
		return tool.Errorf("The site has no be_users table t3agent can read."), nil
	}
	q := `SELECT ` + selectList(db, cols) + ` FROM ` + db.MustQuote("be_users") + ` WHERE ` + db.MustQuote(deleted) +
		` = 0 ORDER BY ` + db.MustQuote(uidCol) + ` LIMIT ` + strconv.Itoa(maxRawUsers+1)
	rows, err := db.SQL.QueryContext(ctx, q)
	if err != nil {
		return tool.Result{}, fmt.Errorf("read be_users: %w", err)
	}
	defer rows.Close()
	var b strings.Builder
	n, truncated := 0, false
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if n == maxRawUsers {
			truncated = true
			break
		}
		if err := rows.Scan(ptrs...); err != nil {
			return tool.Result{}, fmt.Errorf("read be_users: %w", err)
		}
		var rec strings.Builder
		var uid string
		for i, c := range cols {
			if c == uidCol {
				uid = string(vals[i])
				continue
			}
			if vals[i] == nil {
				continue
			}
			v := clean(string(vals[i]), maxRawValue)
			if v == "" {
				continue
			}
			fmt.Fprintf(&rec, "  %s: %s\n", c, v)
		}
		if b.Len()+rec.Len() > maxRawResponse {
			truncated = true
			break
		}
		fmt.Fprintf(&b, "- be_users:%s\n%s", clean(uid, 20), rec.String())
		n++
	}
	if err := rows.Err(); err != nil {
		return tool.Result{}, fmt.Errorf("read be_users: %w", err)
	}
	if n == 0 {
		return tool.Text("No backend users."), nil
	}
	head := fmt.Sprintf("%d backend user(s), every column but passwords, MFA and credentials:\n", n)
	if truncated {
		head = fmt.Sprintf("The first %d backend user(s) (more exist; the answer is capped), every column but passwords, MFA and credentials:\n", n)
	}
	return tool.Text(head + strings.TrimRight(b.String(), "\n")), nil
}
