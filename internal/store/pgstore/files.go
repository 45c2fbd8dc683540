package pgstore

import "io/fs"

// MigrationFiles are the PostgreSQL schema migrations, for readers of
// the schema that open no Driver.
func MigrationFiles() fs.FS { return (*Driver)(nil).Migrations() }
