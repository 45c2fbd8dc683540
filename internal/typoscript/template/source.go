package template

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/t3agent/t3agent/internal/typo3"
)

// Page is one pages row of a rootline: uid and pid plus every column, with
// integer columns as int64 and the rest as strings (NULL as nil), the way
// conditions see page["…"].
type Page struct {
	UID, PID int64
	Fields   map[string]any
}

// Str returns a column as a string ("" for NULL or a missing column).
func (p Page) Str(col string) string {
	switch v := p.Fields[col].(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	}
	return ""
}

// SysTemplate is the part of a sys_template row resolution needs.
type SysTemplate struct {
	UID, PID                  int64
	Title                     string
	Root                      bool
	Clear                     int
	Constants, Config         string
	IncludeStaticFile         string
	BasedOn                   string
	IncludeStaticAfterBasedOn bool
	StaticFileMode            int
}

// TemplateSource reads the rows resolution needs. Implementations apply
// TYPO3's restrictions; NewSiteSource is the one over a site database.
type TemplateSource interface {
	// Rootline returns the pages from the tree root down to pageUID (a
	// translated page is mapped to its default-language page first).
	// Deleted pages end the walk; hidden ones are included.
	Rootline(ctx context.Context, pageUID int64) ([]Page, error)
	// SysTemplates returns the live, visible sys_template rows of one page
	// in TYPO3's order: root DESC, sorting ASC.
	SysTemplates(ctx context.Context, pid int64) ([]SysTemplate, error)
	// SysTemplatesByUID returns visible rows by uid (for basedOn).
	SysTemplatesByUID(ctx context.Context, uids []int64) (map[int64]SysTemplate, error)
}

// siteSource is TemplateSource over a typo3.Site.
type siteSource struct{ site *typo3.Site }

// NewSiteSource reads rootlines and sys_template rows from a TYPO3 site
// database with TYPO3's default restrictions.
func NewSiteSource(site *typo3.Site) TemplateSource { return siteSource{site: site} }

// ErrPageNotFound is returned for a page that does not exist or is deleted.
var ErrPageNotFound = typo3.ErrPageNotFound

func (s siteSource) Rootline(ctx context.Context, pageUID int64) ([]Page, error) {
	p, err := s.site.Page(ctx, pageUID)
	if err != nil {
		return nil, err
	}
	if p.SysLanguageUID > 0 && p.L10nParent > 0 {
		pageUID = p.L10nParent
	}
	line, err := s.site.Rootline(ctx, pageUID)
	if err != nil {
		return nil, err
	}
	db := s.site.DB
	a := db.NewArgs()
	uids := make([]int64, len(line))
	for i, p := range line {
		uids[i] = p.UID
	}
	q := `SELECT * FROM ` + db.MustQuote("pages") + ` WHERE ` + db.MustQuote("uid") + ` IN (` + a.AddInts(uids) + `)`
	rows, err := db.SQL.QueryContext(ctx, q, a.Values()...)
	if err != nil {
		return nil, fmt.Errorf("read rootline pages: %w", err)
	}
	byUID, err := scanRows(rows)
	if err != nil {
		return nil, fmt.Errorf("read rootline pages: %w", err)
	}
	out := make([]Page, 0, len(line))
	for _, p := range line {
		f := byUID[p.UID]
		if f == nil {
			return nil, fmt.Errorf("page %d vanished while reading its rootline", p.UID)
		}
		out = append(out, Page{UID: p.UID, PID: p.PID, Fields: f})
	}
	return out, nil
}

// scanRows reads rows into maps keyed by uid, typing integer columns.
func scanRows(rows *sql.Rows) (map[int64]map[string]any, error) {
	defer rows.Close()
	cols, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	out := map[int64]map[string]any{}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		m := make(map[string]any, len(cols))
		for i, c := range cols {
			m[c.Name()] = typed(vals[i], c.DatabaseTypeName())
		}
		uid, _ := m["uid"].(int64)
		out[uid] = m
	}
	return out, rows.Err()
}

// typed normalises a scanned value: integers as int64, text as string.
func typed(v any, dbType string) any {
	isInt := strings.Contains(strings.ToUpper(dbType), "INT")
	switch x := v.(type) {
	case nil:
		return nil
	case int64:
		return x
	case int32:
		return int64(x)
	case float64:
		if isInt {
			return int64(x)
		}
		return x
	case []byte:
		return typedString(string(x), isInt)
	case string:
		return typedString(x, isInt)
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	}
	return fmt.Sprint(v)
}

func typedString(s string, isInt bool) any {
	if isInt {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n
		}
	}
	return s
}

var sysTemplateColumns = []string{"uid", "pid", "title", "root", "clear", "constants", "config",
	"include_static_file", "basedOn", "includeStaticAfterBasedOn", "static_file_mode", "sorting"}

func (s siteSource) query(ctx context.Context, where func(a *typo3.Args) string, r typo3.Restriction, order string) ([]SysTemplate, error) {
	db := s.site.DB
	a := db.NewArgs()
	// Placeholders are bound in text order: the WHERE part first.
	cond := where(a)
	restrict, err := s.site.Restrict(a, "sys_template", "", r)
	if err != nil {
		return nil, err
	}
	cols := make([]string, len(sysTemplateColumns))
	for i, c := range sysTemplateColumns {
		cols[i] = db.MustQuote("sys_template") + "." + db.MustQuote(c)
	}
	q := `SELECT ` + strings.Join(cols, ", ") + ` FROM ` + db.MustQuote("sys_template") +
		` WHERE ` + cond + ` AND ` + restrict + order
	rows, err := db.SQL.QueryContext(ctx, q, a.Values()...)
	if err != nil {
		return nil, fmt.Errorf("read sys_template: %w", err)
	}
	defer rows.Close()
	var out []SysTemplate
	for rows.Next() {
		var t SysTemplate
		var title, constants, config, statics, basedOn sql.NullString
		var root, clear, after, mode, sorting sql.NullInt64
		if err := rows.Scan(&t.UID, &t.PID, &title, &root, &clear, &constants, &config, &statics, &basedOn,
			&after, &mode, &sorting); err != nil {
			return nil, fmt.Errorf("read sys_template: %w", err)
		}
		t.Title, t.Constants, t.Config = title.String, constants.String, config.String
		t.IncludeStaticFile, t.BasedOn = statics.String, basedOn.String
		t.Root, t.Clear = root.Int64 != 0, int(clear.Int64)
		t.IncludeStaticAfterBasedOn, t.StaticFileMode = after.Int64 != 0, int(mode.Int64)
		out = append(out, t)
	}
	return out, rows.Err()
}

func (s siteSource) SysTemplates(ctx context.Context, pid int64) ([]SysTemplate, error) {
	db := s.site.DB
	order := ` ORDER BY ` + db.MustQuote("sys_template") + "." + db.MustQuote("root") + ` DESC, ` +
		db.MustQuote("sys_template") + "." + db.MustQuote("sorting") + ` ASC`
	return s.query(ctx, func(a *typo3.Args) string {
		return db.MustQuote("sys_template") + "." + db.MustQuote("pid") + ` = ` + a.Add(pid)
	}, typo3.RestrictLive, order)
}

func (s siteSource) SysTemplatesByUID(ctx context.Context, uids []int64) (map[int64]SysTemplate, error) {
	if len(uids) == 0 {
		return map[int64]SysTemplate{}, nil
	}
	db := s.site.DB
	rows, err := s.query(ctx, func(a *typo3.Args) string {
		return db.MustQuote("sys_template") + "." + db.MustQuote("uid") + ` IN (` + a.AddInts(uids) + `)`
	}, typo3.RestrictDefault, "")
	if err != nil {
		return nil, err
	}
	out := make(map[int64]SysTemplate, len(rows))
	for _, r := range rows {
		out[r.UID] = r
	}
	return out, nil
}

// ErrNoTemplate is returned when a page has neither sys_template rows nor
// a site providing TypoScript.
var ErrNoTemplate = errors.New("no TypoScript template on the rootline")
