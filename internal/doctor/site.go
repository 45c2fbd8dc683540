package doctor

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

// site checks the site database: it answers, t3agent's user cannot write
// it, its clock agrees with ours; then the TCA t3agent would use.
func (d *doctor) site(ctx context.Context) {
	cfg := d.p.Config.Site
	bctx, cancel := d.bounded(ctx)
	defer cancel()
	start := time.Now()
	db, err := typo3.Open(bctx, cfg.DSN, typo3.OpenParams{})
	if err != nil {
		d.fail("site.database", sentence(err)+".",
			"check site.dsn (host, port, database, user, password) and that this machine may reach the database server")
		d.tca(ctx, nil)
		return
	}
	defer db.Close()
	d.ok("site.database", fmt.Sprintf("the %s site database %s answers (%s).", db.Dialect, db.DSN, time.Since(start).Round(time.Millisecond)))
	d.readOnly(bctx, db)
	d.siteClock(bctx, db)
	d.tca(ctx, db)
}

// writePrivileges are the MySQL privileges that change a database.
var writePrivileges = []string{"ALL", "ALL PRIVILEGES", "INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "ALTER", "INDEX", "TRIGGER", "CREATE VIEW", "REPLACE"}

const readOnlyFix = "give t3agent a database user that may only read, e.g. CREATE USER 't3agent_ro'@'%%' IDENTIFIED BY '…'; GRANT SELECT ON %s.* TO 't3agent_ro'@'%%'; and set site.dsn to it"

// readOnly warns loudly when t3agent's database user could change the
// site: t3agent never writes it, but a user that cannot is the guarantee.
func (d *doctor) readOnly(ctx context.Context, db *typo3.DB) {
	switch db.Dialect {
	case typo3.DialectMySQL:
		d.mysqlGrants(ctx, db)
	case typo3.DialectPostgres:
		d.postgresPrivileges(ctx, db)
	default:
		d.sqliteReadOnly(ctx, db)
	}
}

var grantLine = regexp.MustCompile(`^GRANT (.+?) ON (\S+) TO `)

func (d *doctor) mysqlGrants(ctx context.Context, db *typo3.DB) {
	var name sql.NullString
	if err := db.SQL.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&name); err != nil {
		d.warn("site.read_only", "the site database user's grants cannot be read: "+sentence(err)+".", "run SHOW GRANTS as that user and make sure it holds SELECT only")
		return
	}
	rows, err := db.SQL.QueryContext(ctx, "SHOW GRANTS")
	if err != nil {
		d.warn("site.read_only", "the site database user's grants cannot be read: "+sentence(err)+".", "run SHOW GRANTS as that user and make sure it holds SELECT only")
		return
	}
	defer rows.Close()
	var writes []string
	for rows.Next() {
		var g string
		if err := rows.Scan(&g); err != nil {
			break
		}
		m := grantLine.FindStringSubmatch(g)
		if m == nil || !scopeCovers(m[2], name.String) {
			continue
		}
		for _, priv := range splitPrivileges(m[1]) {
			if slices.Contains(writePrivileges, priv) {
				writes = append(writes, priv+" ON "+m[2])
			}
		}
	}
	if len(writes) > 0 {
		d.warn("site.read_only", fmt.Sprintf("WRITE ACCESS: the site database user may change the site (%s); t3agent never writes, but its user should not be able to.", strings.Join(writes, ", ")),
			fmt.Sprintf(readOnlyFix, "`"+name.String+"`"))
		return
	}
	d.ok("site.read_only", "the site database user holds no write privilege on "+name.String+" (SHOW GRANTS).")
}

// splitPrivileges splits "SELECT, UPDATE (`a`, `b`), INSERT" into the
// privilege names, column lists dropped.
func splitPrivileges(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s + "," {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				p := s[start:min(i, len(s))]
				if j := strings.IndexByte(p, '('); j >= 0 {
					p = p[:j]
				}
				out = append(out, strings.ToUpper(strings.TrimSpace(p)))
				start = i + 1
			}
		}
	}
	return out
}

// scopeCovers reports whether a grant's scope ("*.*", "`db`.*",
// "`db`.`table`", with LIKE wildcards in the database name) reaches db.
func scopeCovers(scope, db string) bool {
	part, _, _ := strings.Cut(scope, ".")
	if strings.HasPrefix(part, "`") {
		// `db`.* — the name may hold a dot only when quoted.
		if end := strings.Index(scope[1:], "`"); end >= 0 {
			part = scope[1 : end+1]
		}
	}
	if part == "*" {
		return true
	}
	return likeMatch(part, db)
}

// likeMatch is SQL LIKE with % and _ and backslash escapes, as grants use.
func likeMatch(pattern, s string) bool {
	var re strings.Builder
	re.WriteString("^")
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; {
		case c == '\\' && i+1 < len(pattern):
			i++
			re.WriteString(regexp.QuoteMeta(pattern[i : i+1]))
		case c == '%':
			re.WriteString(".*")
		case c == '_':
			re.WriteString(".")
		default:
			re.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	re.WriteString("$")
	ok, _ := regexp.MatchString(re.String(), s)
	return ok
}

func (d *doctor) postgresPrivileges(ctx context.Context, db *typo3.DB) {
	var user string
	var super bool
	err := db.SQL.QueryRowContext(ctx, `SELECT current_user, rolsuper FROM pg_roles WHERE rolname = current_user`).Scan(&user, &super)
	if err != nil {
		d.warn("site.read_only", "the site database user's privileges cannot be read: "+sentence(err)+".", "make sure t3agent's user holds SELECT only on the site's tables")
		return
	}
	if super {
		d.warn("site.read_only", fmt.Sprintf("WRITE ACCESS: the site database user %s is a superuser and may change anything; t3agent never writes, but its user should not be able to.", user),
			fmt.Sprintf(readOnlyFix, "…")+" (on PostgreSQL: CREATE ROLE t3agent_ro LOGIN PASSWORD '…'; GRANT SELECT ON ALL TABLES IN SCHEMA public TO t3agent_ro)")
		return
	}
	// pages is in every TYPO3 installation: a user that may write it may
	// write the site.
	var ins, upd, del sql.NullBool
	err = db.SQL.QueryRowContext(ctx, `SELECT has_table_privilege(c.oid, 'INSERT'), has_table_privilege(c.oid, 'UPDATE'), has_table_privilege(c.oid, 'DELETE')
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relname = 'pages' AND n.nspname = current_schema()`).Scan(&ins, &upd, &del)
	if errors.Is(err, sql.ErrNoRows) {
		d.warn("site.read_only", "the site database has no pages table in schema "+user+"'s search path, so its privileges cannot be checked.", "point site.dsn at the TYPO3 database (and its schema)")
		return
	}
	if err != nil {
		d.warn("site.read_only", "the site database user's privileges cannot be read: "+sentence(err)+".", "make sure t3agent's user holds SELECT only on the site's tables")
		return
	}
	var can []string
	for _, p := range []struct {
		name string
		v    sql.NullBool
	}{{"INSERT", ins}, {"UPDATE", upd}, {"DELETE", del}} {
		if p.v.Bool {
			can = append(can, p.name)
		}
	}
	if len(can) > 0 {
		d.warn("site.read_only", fmt.Sprintf("WRITE ACCESS: the site database user %s may %s the site's tables (checked on pages); t3agent never writes, but its user should not be able to.", user, strings.Join(can, ", ")),
			"REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON ALL TABLES IN SCHEMA public FROM "+user+", or give t3agent a role with SELECT only (GRANT SELECT ON ALL TABLES IN SCHEMA public TO t3agent_ro) and set site.dsn to it")
		return
	}
	d.ok("site.read_only", "the site database user "+user+" may only read the site's tables (checked on pages).")
}

// sqliteReadOnly: a SQLite site has no users; t3agent opens the file
// read-only (mode=ro), and this asks SQLite whether the connection is.
func (d *doctor) sqliteReadOnly(ctx context.Context, db *typo3.DB) {
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		d.warn("site.read_only", "the SQLite site database cannot be checked: "+sentence(err)+".", "check site.dsn")
		return
	}
	defer conn.Close()
	var ro bool
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(interface{ IsReadOnly(string) (bool, error) })
		if !ok {
			return errors.New("the SQLite driver cannot say")
		}
		var err error
		ro, err = c.IsReadOnly("main")
		return err
	})
	switch {
	case err != nil:
		d.warn("site.read_only", "whether the SQLite site database is opened read-only cannot be told: "+sentence(err)+".", "check site.dsn")
	case !ro:
		d.fail("site.read_only", "the SQLite site database is opened writable, though t3agent opens site files read-only.", "report this: t3agent must open sqlite: site DSNs with mode=ro")
	default:
		d.ok("site.read_only", "the SQLite site database file is opened read-only (mode=ro).")
	}
}

// siteClock compares the site database's clock with ours.
func (d *doctor) siteClock(ctx context.Context, db *typo3.DB) {
	var q string
	switch db.Dialect {
	case typo3.DialectMySQL:
		q = "SELECT UTC_TIMESTAMP(6)"
	case typo3.DialectPostgres:
		q = "SELECT clock_timestamp()"
	default:
		return // a file on this machine: our own clock
	}
	d.clock(ctx, "site.clock", "site database", db.SQL, q)
}

// clock measures the skew between the database behind db and this
// machine: the database's time against the middle of the round trip.
func (d *doctor) clock(ctx context.Context, check, what string, db *sql.DB, q string) {
	before := d.p.Now()
	var raw any
	err := db.QueryRowContext(ctx, q).Scan(&raw)
	after := d.p.Now()
	if err != nil {
		d.warn(check, "the "+what+"'s clock cannot be read: "+sentence(err)+".", "check that the database answers")
		return
	}
	t, ok := dbTime(raw)
	if !ok {
		d.warn(check, fmt.Sprintf("the %s's clock answered %v, which is not a time.", what, raw), "check the database server's time zone settings")
		return
	}
	rtt := after.Sub(before)
	skew := t.Sub(before.Add(rtt / 2))
	abs := max(skew, -skew)
	switch {
	case abs <= MaxSkew+rtt/2:
		d.ok(check, fmt.Sprintf("the %s's clock agrees with this machine's (%s apart).", what, skew.Round(time.Millisecond)))
	default:
		// To the second: the round trip blurs the milliseconds.
		d.warn(check, fmt.Sprintf("the %s's clock is %s off this machine's; leases, cleanup and budgets compare times across machines.", what, skew.Round(time.Second)),
			"synchronise the clocks of this machine and the database server (chrony or systemd-timesyncd against the same NTP servers)")
	}
}

// dbTime reads a timestamp as a driver hands it over: time.Time, or the
// text MySQL sends without parseTime (in UTC for UTC_TIMESTAMP).
func dbTime(v any) (time.Time, bool) {
	switch x := v.(type) {
	case time.Time:
		return x, true
	case []byte:
		return dbTime(string(x))
	case string:
		for _, layout := range []string{"2006-01-02 15:04:05.999999", time.RFC3339Nano} {
			if t, err := time.ParseInLocation(layout, x, time.UTC); err == nil {
				return t, true
			}
		}
	}
	return time.Time{}, false
}

// tca reports the TCA source t3agent would load. The bundled core TCA is
// fine for a site whose every record table it knows; a site with tables
// it lacks has lost its cache file (or never had one written).
func (d *doctor) tca(ctx context.Context, db *typo3.DB) {
	cfg := d.p.Config.Site
	t, err := tca.Load(tca.LoadParams{ProjectRoot: cfg.Root, JSONPath: d.p.TCAExport})
	if err != nil {
		d.fail("site.tca", "the site's TCA cannot be loaded: "+sentence(err)+".",
			"run `vendor/bin/typo3 cache:flush` and `cache:warmup` on the site so TYPO3 writes var/cache/code/core/tca_base_*.php again, or remove a broken export (site.tca)")
		return
	}
	bundled := t.Source == tca.BundledSource
	if !bundled {
		d.ok("site.tca", fmt.Sprintf("the TCA comes from %s (%d tables).", t.Source, len(t.Tables)))
		return
	}
	if db == nil {
		d.warn("site.tca", "no TCA cache file and no export: t3agent uses its bundled core TCA, and the site database cannot be compared with it.", tcaFix(cfg.Root))
		return
	}
	missing, err := recordTablesWithoutTCA(ctx, db, t)
	if err != nil {
		d.warn("site.tca", "no TCA cache file and no export: t3agent uses its bundled core TCA; the site's tables cannot be listed to compare: "+sentence(err)+".", tcaFix(cfg.Root))
		return
	}
	if len(missing) > 0 {
		shown := missing[:min(len(missing), 5)]
		more := ""
		if len(missing) > len(shown) {
			more = fmt.Sprintf(" and %d more", len(missing)-len(shown))
		}
		d.warn("site.tca", fmt.Sprintf("no TCA cache file (var/cache/code/core/tca_base_*.php) and no export: the bundled core TCA lacks %d record tables of the site (%s%s), whose records t3agent cannot read.",
			len(missing), strings.Join(shown, ", "), more), tcaFix(cfg.Root))
		return
	}
	d.ok("site.tca", fmt.Sprintf("the TCA is t3agent's bundled core TCA, which knows every record table of the site (%d tables).", len(t.Tables)))
}

func tcaFix(root string) string {
	if root == "" {
		return "set site.root to the TYPO3 project root so t3agent finds TYPO3's TCA cache file, or export the TCA as JSON and run `t3agent tca import FILE`"
	}
	return "run `vendor/bin/typo3 cache:warmup` in " + root + " so TYPO3 writes var/cache/code/core/tca_base_*.php (t3agent's user must be able to read it), or export the TCA as JSON and run `t3agent tca import FILE`"
}

// recordTablesWithoutTCA lists the site's tables that hold records (a uid
// and a pid column) but have no TCA in t.
func recordTablesWithoutTCA(ctx context.Context, db *typo3.DB, t *tca.TCA) ([]string, error) {
	var q string
	switch db.Dialect {
	case typo3.DialectMySQL:
		q = `SELECT table_name FROM information_schema.columns WHERE table_schema = DATABASE() AND column_name IN ('uid', 'pid')
			GROUP BY table_name HAVING COUNT(*) = 2`
	case typo3.DialectPostgres:
		q = `SELECT table_name FROM information_schema.columns WHERE table_schema = current_schema() AND column_name IN ('uid', 'pid')
			GROUP BY table_name HAVING COUNT(*) = 2`
	default:
		q = `SELECT m.name FROM sqlite_master m WHERE m.type = 'table'
			AND (SELECT COUNT(*) FROM pragma_table_info(m.name) c WHERE c.name IN ('uid', 'pid')) = 2`
	}
	rows, err := db.SQL.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var missing []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		if _, ok := t.Tables[name]; !ok {
			missing = append(missing, name)
		}
	}
	slices.Sort(missing)
	return missing, rows.Err()
}

// files checks the project root and its log directory, which the file
// tools (TypoScript and Fluid files, FlexForms, logs) read.
func (d *doctor) files() {
	root := d.p.Config.Site.Root
	if root == "" {
		d.warn("site.root", "site.root is not set: the tools that read the site's files (TypoScript, TSconfig, Fluid, FlexForms, logs) find nothing.",
			"set site.root to the TYPO3 project root, where composer.json, config/ and var/ are")
		return
	}
	if _, err := os.ReadDir(root); err != nil {
		d.fail("site.root", "the project root "+root+" cannot be read: "+sentence(err)+".",
			"give t3agent's user read access to "+root+" (for example a group with r-x on the directories)")
		return
	}
	d.ok("site.root", "the project root "+root+" is readable.")
	for _, rel := range []string{filepath.Join("var", "log"), filepath.Join("typo3temp", "var", "log")} {
		dir := filepath.Join(root, rel)
		entries, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			d.warn("site.logs", dir+" cannot be read, so fetch_logs and get_last_exception see no log: "+sentence(err)+".",
				"give t3agent's user read access to "+dir+", e.g. setfacl -R -m u:t3agent:rX "+dir)
			return
		}
		d.ok("site.logs", fmt.Sprintf("the log directory %s is readable (%d files).", dir, len(entries)))
		return
	}
	d.warn("site.logs", "there is no var/log (or typo3temp/var/log) under "+root+", so fetch_logs and get_last_exception see no log.",
		"check site.root; TYPO3 writes its logs to var/log in composer mode")
}
