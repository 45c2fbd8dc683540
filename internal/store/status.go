package store

import (
	"context"
)

// SchemaStatus is how a store's schema compares with the migrations this
// t3agent carries.
type SchemaStatus struct {
	// Database names the database, without credentials.
	Database string `json:"database"`
	// Current is the store's schema version, 0 for a database t3agent
	// has not set up yet.
	Current int64 `json:"current"`
	// Latest is the highest migration this t3agent knows.
	Latest int64 `json:"latest"`
}

// Status reads the schema version of the store at dsn without migrating
// or writing anything (a SQLite file is opened read-only and must
// exist).
func Status(ctx context.Context, dsn string) (SchemaStatus, error) {
	e, err := openSource(ctx, dsn)
	if err != nil {
		return SchemaStatus{}, err
	}
	defer e.close()
	st := SchemaStatus{Database: e.desc}
	if st.Latest, err = latestVersion(e.migrations); err != nil {
		return st, err
	}
	// A database without goose's table is one t3agent never opened.
	_ = e.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version_id), 0) FROM `+versionTable).Scan(&st.Current)
	if err := e.db.PingContext(ctx); err != nil {
		return st, err
	}
	return st, nil
}
