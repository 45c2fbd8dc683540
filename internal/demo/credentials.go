package demo

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"time"
)

// writeCredentials writes the backend logins to path with mode 0600: it is
// the only place the plain passwords are kept.
func writeCredentials(path string, users []User, now time.Time) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# t3agent demo site: backend logins (demo clock %s).\n", now.Format(time.RFC3339))
	b.WriteString("# Keep this file private. Columns: username, password, role.\n")
	for _, u := range users {
		role := "editor (groups " + u.Groups + ")"
		switch {
		case u.Admin:
			role = "administrator"
		case u.Disabled:
			role = "disabled account"
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\n", u.Username, u.Password, role)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("credentials file: %w", err)
	}
	if _, err := f.WriteString(b.String()); err != nil {
		_ = f.Close()
		return fmt.Errorf("credentials file: %w", err)
	}
	return f.Close()
}

// readCredentials reads a credentials file back, completing each login
// with the fixed facts of docs/demo-site.md.
func readCredentials(path string) ([]User, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	known := map[string]User{}
	for _, u := range demoUsers() {
		known[u.Username] = u.User
	}
	var users []User
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, "\t")
		if len(fields) < 2 {
			continue
		}
		u, ok := known[fields[0]]
		if !ok {
			continue
		}
		u.Password = fields[1]
		users = append(users, u)
	}
	return users, sc.Err()
}
