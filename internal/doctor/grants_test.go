package doctor

import (
	"slices"
	"testing"
)

// TestGrantParsing: SHOW GRANTS lines as MariaDB and MySQL print them,
// read for the privileges they give on the site database.
func TestGrantParsing(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		line  string
		privs []string
		site  bool
	}{
		{"GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` WITH GRANT OPTION", []string{"ALL PRIVILEGES"}, true},
		{"GRANT USAGE ON *.* TO `t3agent_ro`@`%` IDENTIFIED BY PASSWORD '*AB'", []string{"USAGE"}, true},
		{"GRANT SELECT ON `typo3`.* TO `t3agent_ro`@`%`", []string{"SELECT"}, true},
		{"GRANT SELECT, UPDATE (`title`, `hidden`) ON `typo3`.`pages` TO `x`@`%`", []string{"SELECT", "UPDATE"}, true},
		{"GRANT SELECT, INSERT ON `typo\\_3`.* TO `x`@`%`", []string{"SELECT", "INSERT"}, false},
		{"GRANT ALL PRIVILEGES ON `typ%`.* TO `x`@`%`", []string{"ALL PRIVILEGES"}, true},
		{"GRANT INSERT ON `other`.* TO `x`@`%`", []string{"INSERT"}, false},
		{"GRANT PROXY ON ''@'%' TO 'root'@'localhost' WITH GRANT OPTION", []string{"PROXY"}, false},
	} {
		m := grantLine.FindStringSubmatch(c.line)
		if m == nil {
			if c.privs != nil {
				t.Errorf("%s: not read as a grant", c.line)
			}
			continue
		}
		if got := splitPrivileges(m[1]); !slices.Equal(got, c.privs) {
			t.Errorf("%s: privileges %q, want %q", c.line, got, c.privs)
		}
		if got := scopeCovers(m[2], "typo3"); got != c.site {
			t.Errorf("%s: covers typo3 = %v, want %v", c.line, got, c.site)
		}
	}
}
