package typo3

import (
	"context"
	"fmt"
)

// BackendUserSummary is a backend user as a listing shows it: no password
// hash, no permissions.
type BackendUserSummary struct {
	UID      int64
	Username string
	Admin    bool
	// CanAct is false for disabled, timed-out or misplaced users.
	CanAct bool
}

// ListBackendUsers returns the non-deleted backend users ordered by
// username, for overviews such as the start page.
func (s *Site) ListBackendUsers(ctx context.Context) ([]BackendUserSummary, error) {
	db := s.DB
	a := db.NewArgs()
	q := `SELECT ` + quoteList(db, "uid", "pid", "username", "admin", "disable", "deleted", "starttime", "endtime") +
		` FROM ` + db.MustQuote("be_users") + ` WHERE ` + db.MustQuote("deleted") + ` = ` + a.Add(0) +
		` ORDER BY ` + db.MustQuote("username")
	rs, err := db.SQL.QueryContext(ctx, q, a.Values()...)
	if err != nil {
		return nil, fmt.Errorf("list be_users: %w", err)
	}
	defer rs.Close()
	now := s.Now().Unix()
	var out []BackendUserSummary
	for rs.Next() {
		var r userRow
		if err := rs.Scan(&r.uid, &r.pid, &r.username, &r.admin, &r.disable, &r.deleted, &r.starttime, &r.endtime); err != nil {
			return nil, fmt.Errorf("list be_users: %w", err)
		}
		out = append(out, BackendUserSummary{UID: r.uid, Username: r.username, Admin: r.admin&1 == 1, CanAct: r.inactive(now) == ""})
	}
	return out, rs.Err()
}
