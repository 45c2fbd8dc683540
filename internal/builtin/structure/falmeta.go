package structure

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/t3agent/t3agent/internal/tool"
)

// deniedFile is the neutral answer of read_fal_asset_meta.
const deniedFile = "File not found or not permitted."

type falAssetMeta struct{ env }

func (t *falAssetMeta) Spec() tool.Spec {
	s := spec("read_fal_asset_meta", tool.GroupStructure,
		"Metadata of one file of the TYPO3 file storages (admins only): its identifier, MIME type and size from "+
			"sys_file, whether TYPO3 marks it missing, and the title, alternative text, description and dimensions of "+
			"its live default-language metadata record. `uid` is the sys_file uid (search_fal_files finds it). "+
			"Only files of the storages t3agent may read (storage 1).",
		`{"type":"object","properties":{`+
			`"uid":{"type":"integer","minimum":1,"description":"The file's sys_file uid."}`+
			`},"required":["uid"],"additionalProperties":false}`)
	s.AdminOnly = true
	return s
}

func (t *falAssetMeta) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	if call.Actor == nil {
		return denyUser(), nil
	}
	if !call.Actor.Admin {
		return tool.Errorf("%s", deniedFile), nil
	}
	uid, err := intArg(args, "uid", 0)
	if err != nil {
		return tool.Errorf("%v.", err), nil
	}
	if uid < 1 {
		return tool.Errorf("uid must be a sys_file uid (1 or more)."), nil
	}
	db := t.site.DB
	q := func(s string) string { return db.MustQuote(s) }
	a := db.NewArgs()
	var storage, size, missing sql.NullInt64
	var ident, mime sql.NullString
	err = db.SQL.QueryRowContext(ctx, `SELECT `+q("storage")+`, `+q("identifier")+`, `+q("mime_type")+`, `+q("size")+`, `+
		q("missing")+` FROM `+q("sys_file")+` WHERE `+q("uid")+` = `+a.Add(uid), a.Values()...).
		Scan(&storage, &ident, &mime, &size, &missing)
	if err == sql.ErrNoRows {
		return tool.Errorf("%s", deniedFile), nil
	}
	if err != nil {
		return tool.Result{}, fmt.Errorf("read sys_file: %w", err)
	}
	fa, err := t.site.NewFileAccess(ctx, call.Actor, nil)
	if err != nil {
		return tool.Result{}, err
	}
	if !fa.CanReadFile(storage.Int64, ident.String) {
		return tool.Errorf("%s", deniedFile), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "File [%d] %d:%s\n", uid, storage.Int64, clean(ident.String, 300))
	fmt.Fprintf(&b, "mime: %s\nsize: %d bytes\n", clean(mime.String, 80), size.Int64)
	if missing.Int64 != 0 {
		b.WriteString("missing: yes (indexed, but not in the storage)\n")
	}
	meta, err := t.metadata(ctx, uid)
	if err != nil {
		return tool.Result{}, err
	}
	if meta == nil {
		b.WriteString("No metadata record.")
		return tool.Text(b.String()), nil
	}
	for _, kv := range meta {
		fmt.Fprintf(&b, "%s: %s\n", kv[0], kv[1])
	}
	return tool.Text(strings.TrimRight(b.String(), "\n")), nil
}

// metadata reads the live default-language metadata row with the lowest
// uid: title, alternative, description, width and height, where the
// table has them and they are set.
func (t *falAssetMeta) metadata(ctx context.Context, file int64) ([][2]string, error) {
	db := t.site.DB
	live, err := t.site.Columns(ctx, "sys_file_metadata")
	if err != nil {
		return nil, err
	}
	has := func(c string) bool {
		for _, l := range live {
			if l == c {
				return true
			}
		}
		return false
	}
	var cols []string
	for _, c := range []string{"title", "alternative", "description", "width", "height"} {
		if has(c) {
			cols = append(cols, c)
		}
	}
	if len(cols) == 0 || !has("file") {
		return nil, nil
	}
	a := db.NewArgs()
	sel := make([]string, len(cols))
	for i, c := range cols {
		sel[i] = db.MustQuote(c)
	}
	where := db.MustQuote("file") + ` = ` + a.Add(file)
	for _, c := range []string{"sys_language_uid", "t3ver_wsid"} {
		if has(c) {
			where += ` AND ` + db.MustQuote(c) + ` = 0`
		}
	}
	row := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range row {
		ptrs[i] = &row[i]
	}
	err = db.SQL.QueryRowContext(ctx, `SELECT `+strings.Join(sel, ", ")+` FROM `+db.MustQuote("sys_file_metadata")+
		` WHERE `+where+` ORDER BY `+db.MustQuote("uid")+` LIMIT 1`, a.Values()...).Scan(ptrs...)
	if err == sql.ErrNoRows {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read sys_file_metadata: %w", err)
	}
	out := [][2]string{}
	for i, c := range cols {
		v := clean(row[i].String, 300)
		if !row[i].Valid || v == "" || (c == "width" || c == "height") && v == "0" {
			continue
		}
		out = append(out, [2]string{c, v})
	}
	return out, nil
}
