// Package files holds the builtin tools of the files group: the TYPO3 file
// abstraction layer (FAL) as an editor sees it in the file list.
// list_fal_storages, browse_fal_folder, search_fal_files,
// get_fal_references and find_missing_files.
//
// Every tool decides through typo3.FileAccess, the reference's
// FalStorageGate: a storage must be in the allow-list (storage 1 unless
// configured otherwise), and non-admins see only storages they have a file
// mount in, only files and folders inside their mounts, and need the
// readFolder or readFile permission of their groups. A storage's base path
// (its directory on the server) is never shown; folders are named by FAL
// identifiers such as 1:/user_upload/.
//
// browse_fal_folder reads the directory of a Local storage. Paths are
// cleaned first (no "." or "..", no percent-escapes or backslashes, no
// hidden segments), then every symlink on the way is resolved: a target
// outside the storage, a hidden target, or (for non-admins) a target
// outside the user's mounts counts as missing. Dotfiles are never listed.
// Unlike TYPO3's file list, browsing never indexes a file.
//
// Denials use neutral sentences that never confirm that a storage, folder
// or file exists.
package files

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

// Neutral denials.
const (
	DeniedStorage = "Storage not found or not permitted."
	DeniedFolder  = "Folder not found or not permitted."
	DeniedFile    = "File not found or not permitted."
)

// Tools returns the files tools over site. allow is the storage
// allow-list; nil means typo3.DefaultFileStorages.
func Tools(site *typo3.Site, policy *readpolicy.Policy, allow []int64) []tool.Tool {
	e := env{site: site, policy: policy, allow: allow}
	return []tool.Tool{
		&listStorages{e},
		&browseFolder{e},
		&searchFiles{e},
		&references{e},
		&missingFiles{e},
	}
}

// env is what every tool of the package shares.
type env struct {
	site   *typo3.Site
	policy *readpolicy.Policy
	allow  []int64
}

// access loads what the acting user may see of the site's files.
func (e env) access(ctx context.Context, user *typo3.BackendUser) (*typo3.FileAccess, error) {
	return e.site.NewFileAccess(ctx, user, e.allow)
}

// spec fills the fields every tool of the group shares.
func spec(name, description, schema string) tool.Spec {
	return tool.Spec{
		Name:             name,
		Description:      description,
		InputSchema:      json.RawMessage(schema),
		Group:            tool.GroupFiles,
		Effect:           tool.ReadOnly,
		DataClass:        tool.EditorContent,
		EnabledByDefault: true,
	}
}

// refuse turns an argument error into the model's error result.
func refuse(err error) tool.Result {
	var ae tool.ArgError
	if errors.As(err, &ae) {
		return tool.Errorf("%s", ae)
	}
	return tool.Errorf("%s.", err)
}

func denyUser() tool.Result { return tool.Errorf("%s", readpolicy.DeniedUser) }

// storageArg picks the storage of a call: the named one, or the first the
// user may see. ok is false with the result to return.
func storageArg(args map[string]any, fa *typo3.FileAccess) (*typo3.Storage, tool.Result, bool) {
	sid, given, err := tool.ArgInt(args, "storage", 0, 1, 1<<31)
	if err != nil {
		return nil, refuse(err), false
	}
	if !given {
		if all := fa.Storages(); len(all) > 0 {
			return all[0], tool.Result{}, true
		}
		return nil, tool.Errorf("%s", DeniedStorage), false
	}
	st := fa.Storage(sid)
	if st == nil {
		return nil, tool.Errorf("%s", DeniedStorage), false
	}
	return st, tool.Result{}, true
}

// storageFilter is the storages a query may touch: the named one or every
// allowed one. An empty list means none.
func storageFilter(args map[string]any, fa *typo3.FileAccess) ([]int64, tool.Result, bool) {
	if _, given := args["storage"]; given && args["storage"] != nil {
		st, res, ok := storageArg(args, fa)
		if !ok {
			return nil, res, false
		}
		return []int64{st.UID}, tool.Result{}, true
	}
	return fa.StorageUIDs(), tool.Result{}, true
}

func clean(s string, limit int) string { return tool.Line(s, limit) }

// humanSize prints a byte count the way TYPO3's file list does.
func humanSize(n int64) string {
	switch {
	case n < 1024:
		return strconv.FormatInt(n, 10) + " B"
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	case n < 1024*1024*1024:
		return fmt.Sprintf("%.1f MB", float64(n)/(1024*1024))
	}
	return fmt.Sprintf("%.1f GB", float64(n)/(1024*1024*1024))
}

// likeEscape is the escape character of LIKE patterns; see likeContains.
const likeEscape = "!"

// likeContains is a lower-case LIKE pattern matching s anywhere, its
// wildcards and the escape character escaped.
func likeContains(s string) string {
	r := strings.NewReplacer(likeEscape, likeEscape+likeEscape, "%", likeEscape+"%", "_", likeEscape+"_")
	return "%" + r.Replace(strings.ToLower(s)) + "%"
}

// fileRow is one sys_file row as the tools read it.
type fileRow struct {
	uid, storage, size int64
	identifier, name   string
	mime               string
	missing            bool
	// title and alt come from the metadata row (search only).
	title, alt string
}

// combined is a file's FAL identifier with its storage, "1:/a/b.jpg".
func (f fileRow) combined() string { return strconv.FormatInt(f.storage, 10) + ":" + f.identifier }

// visible reports whether the user may see file f: an allowed storage and,
// for non-admins, readFile inside a mount.
func visible(fa *typo3.FileAccess, f fileRow) bool {
	return fa.Storage(f.storage) != nil && fa.CanReadFile(f.storage, f.identifier)
}

// fileByUID reads one sys_file row; nil when there is none.
func (e env) fileByUID(ctx context.Context, uid int64) (*fileRow, error) {
	db := e.site.DB
	a := db.NewArgs()
	q := `SELECT ` + fileColumns(db, "") + ` FROM ` + db.MustQuote("sys_file") + ` WHERE ` + db.MustQuote("uid") + ` = ` + a.Add(uid)
	rows, err := db.SQL.QueryContext(ctx, q, a.Values()...)
	if err != nil {
		return nil, fmt.Errorf("read sys_file: %w", err)
	}
	list, err := scanFiles(rows, false)
	if err != nil || len(list) == 0 {
		return nil, err
	}
	return &list[0], nil
}

// fileColumns are the sys_file columns of fileRow, prefixed with alias.
func fileColumns(db *typo3.DB, alias string) string {
	var cols []string
	for _, c := range []string{"uid", "storage", "size", "identifier", "name", "mime_type", "missing"} {
		q := db.MustQuote(c)
		if alias != "" {
			q = alias + "." + q
		}
		cols = append(cols, q)
	}
	return strings.Join(cols, ", ")
}

// sqlRows is the part of *sql.Rows scanFiles needs.
type sqlRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// scanFiles reads fileColumns rows (followed by the metadata title and
// alternative when withMeta) and closes them. Rows with an identifier
// that is not clean are dropped: no tool names a path that could leave
// its storage.
func scanFiles(rows sqlRows, withMeta bool) ([]fileRow, error) {
	defer rows.Close()
	var out []fileRow
	for rows.Next() {
		var f fileRow
		var size, storage, missing *int64
		var ident, name, mime, title, alt *string
		dest := []any{&f.uid, &storage, &size, &ident, &name, &mime, &missing}
		if withMeta {
			dest = append(dest, &title, &alt)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("read sys_file: %w", err)
		}
		f.storage, f.size, f.missing = deref(storage), deref(size), deref(missing) != 0
		f.identifier, f.name, f.mime = derefS(ident), derefS(name), derefS(mime)
		f.title, f.alt = derefS(title), derefS(alt)
		if id, err := typo3.CleanIdentifier(f.identifier); err != nil || id != f.identifier {
			continue
		}
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read sys_file: %w", err)
	}
	return out, nil
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func derefS(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
