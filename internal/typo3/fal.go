package typo3

import (
	"context"
	"database/sql"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// The file abstraction layer (FAL) as t3agent reads it: storages
// (sys_file_storage with the FlexForm of its driver configuration), file
// mounts (sys_filemounts, as "<storage>:<folder>" identifiers) and the
// acting user's file permissions. Only the Local driver has a directory
// t3agent can read; its base directory is used to open files and is never
// shown.

// DefaultFileStorages is the storage allow-list of the reference's
// FalStorageGate: storage 1 only. A storage outside it is invisible to
// every tool and every user, admins included.
var DefaultFileStorages = []int64{1}

// Storage is one sys_file_storage row that is not deleted.
type Storage struct {
	UID       int64
	Name      string
	Driver    string
	Online    bool
	Browsable bool
	Public    bool
	Writable  bool
	Default   bool
	// BaseDir is the absolute directory of a Local storage, "" for other
	// drivers or when the configuration names none. It is for opening
	// files only and must never appear in an answer.
	BaseDir string
}

// IsLocal reports whether the storage's files are in a directory t3agent
// can read.
func (s *Storage) IsLocal() bool { return s.Driver == "Local" && s.BaseDir != "" }

// FileStorages reads the storages that are not deleted, by uid. The
// configuration column is parsed for the Local driver's basePath and
// pathType and nothing else is kept of it: remote drivers store their
// credentials there.
func (s *Site) FileStorages(ctx context.Context) ([]*Storage, error) {
	db := s.DB
	q := `SELECT ` + quoteList(db, "uid", "name", "driver", "is_online", "is_browsable", "is_public", "is_writable",
		"is_default", "configuration") + ` FROM ` + db.MustQuote("sys_file_storage") +
		` WHERE ` + db.MustQuote("deleted") + ` = 0 ORDER BY ` + db.MustQuote("uid")
	rows, err := db.QueryPrepared(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("read sys_file_storage: %w", err)
	}
	defer rows.Close()
	public := publicDir(s.Root)
	var out []*Storage
	for rows.Next() {
		var st Storage
		var name, driver, conf sql.NullString
		var online, browsable, pub, writable, def sql.NullInt64
		if err := rows.Scan(&st.UID, &name, &driver, &online, &browsable, &pub, &writable, &def, &conf); err != nil {
			return nil, fmt.Errorf("read sys_file_storage: %w", err)
		}
		st.Name, st.Driver = name.String, driver.String
		st.Online, st.Browsable, st.Public = online.Int64 != 0, browsable.Int64 != 0, pub.Int64 != 0
		st.Writable, st.Default = writable.Int64 != 0, def.Int64 != 0
		if st.Driver == "Local" {
			st.BaseDir = localBaseDir(ParseStorageConfiguration(conf.String), public)
		}
		out = append(out, &st)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read sys_file_storage: %w", err)
	}
	return out, nil
}

// maxFlexFormBytes caps a storage configuration; TYPO3 writes a few hundred
// bytes.
const maxFlexFormBytes = 64 << 10

// flexForm is the T3FlexForms document TYPO3 stores a driver configuration
// in.
type flexForm struct {
	Sheets []struct {
		Index     string `xml:"index,attr"`
		Languages []struct {
			Index  string `xml:"index,attr"`
			Fields []struct {
				Index  string `xml:"index,attr"`
				Values []struct {
					Index string `xml:"index,attr"`
					Text  string `xml:",chardata"`
				} `xml:"value"`
			} `xml:"field"`
		} `xml:"language"`
	} `xml:"data>sheet"`
}

// ParseStorageConfiguration reads the vDEF values of the sDEF/lDEF sheet
// of a storage's FlexForm configuration (basePath, pathType,
// caseSensitive, …). A document it cannot read yields an empty map; the
// storage then has no base directory.
func ParseStorageConfiguration(doc string) map[string]string {
	out := map[string]string{}
	if doc == "" || len(doc) > maxFlexFormBytes {
		return out
	}
	var ff flexForm
	dec := xml.NewDecoder(strings.NewReader(doc))
	dec.Strict = true
	if err := dec.Decode(&ff); err != nil {
		return out
	}
	for _, sh := range ff.Sheets {
		if sh.Index != "sDEF" {
			continue
		}
		for _, l := range sh.Languages {
			if l.Index != "lDEF" {
				continue
			}
			for _, f := range l.Fields {
				for _, v := range f.Values {
					if v.Index == "vDEF" && f.Index != "" {
						out[f.Index] = strings.TrimSpace(v.Text)
					}
				}
			}
		}
	}
	return out
}

// localBaseDir is LocalDriver::calculateBasePath: a relative basePath is
// taken from the public directory, an absolute one as it is. A relative
// path may not climb out of the public directory.
func localBaseDir(conf map[string]string, public string) string {
	base := conf["basePath"]
	if base == "" || strings.ContainsRune(base, 0) {
		return ""
	}
	if conf["pathType"] == "absolute" {
		if !filepath.IsAbs(base) {
			return ""
		}
		return filepath.Clean(base)
	}
	if public == "" {
		return ""
	}
	rel := filepath.Clean(filepath.FromSlash(strings.TrimPrefix(base, "/")))
	if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return ""
	}
	return filepath.Join(public, rel)
}

// publicDir is the installation's public (web) directory: composer.json's
// extra.typo3/cms.web-dir, else public/ when it exists (composer mode),
// else the root itself (classic mode).
func publicDir(root string) string {
	if root == "" {
		return ""
	}
	if b, err := os.ReadFile(filepath.Join(root, "composer.json")); err == nil && len(b) < 1<<20 {
		var c struct {
			Extra map[string]json.RawMessage `json:"extra"`
		}
		if json.Unmarshal(b, &c) == nil {
			var cms struct {
				WebDir string `json:"web-dir"`
			}
			if raw, ok := c.Extra["typo3/cms"]; ok && json.Unmarshal(raw, &cms) == nil && cms.WebDir != "" &&
				filepath.IsLocal(filepath.FromSlash(cms.WebDir)) {
				return filepath.Join(root, filepath.FromSlash(cms.WebDir))
			}
		}
	}
	if fi, err := os.Stat(filepath.Join(root, "public")); err == nil && fi.IsDir() {
		return filepath.Join(root, "public")
	}
	return root
}

// FileMount is one sys_filemounts row: a folder of a storage.
type FileMount struct {
	UID     int64
	Title   string
	Storage int64
	// Folder is the mounted folder's identifier, with a leading and a
	// trailing slash ("/user_upload/").
	Folder   string
	ReadOnly bool
}

// FileMountsOf reads the user's file mounts (BackendUser.FileMounts) that
// are neither hidden nor deleted and whose identifier names a storage and
// a clean folder. Admins need none and get none.
func (s *Site) FileMountsOf(ctx context.Context, u *BackendUser) ([]FileMount, error) {
	if u == nil || u.Admin || len(u.FileMounts) == 0 {
		return nil, nil
	}
	db := s.DB
	a := db.NewArgs()
	q := `SELECT ` + quoteList(db, "uid", "title", "identifier", "read_only") + ` FROM ` + db.MustQuote("sys_filemounts") +
		` WHERE ` + db.MustQuote("uid") + ` IN (` + a.AddInts(u.FileMounts) + `) AND ` + db.MustQuote("deleted") +
		` = 0 AND ` + db.MustQuote("hidden") + ` = 0`
	rows, err := db.SQL.QueryContext(ctx, q, a.Values()...)
	if err != nil {
		return nil, fmt.Errorf("read sys_filemounts: %w", err)
	}
	defer rows.Close()
	byUID := map[int64]FileMount{}
	for rows.Next() {
		var m FileMount
		var title, ident sql.NullString
		var ro sql.NullInt64
		if err := rows.Scan(&m.UID, &title, &ident, &ro); err != nil {
			return nil, fmt.Errorf("read sys_filemounts: %w", err)
		}
		sid, folder, ok := ParseCombinedIdentifier(ident.String)
		if !ok {
			continue
		}
		m.Title, m.Storage, m.Folder, m.ReadOnly = title.String, sid, folderIdentifier(folder), ro.Int64 != 0
		byUID[m.UID] = m
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read sys_filemounts: %w", err)
	}
	var out []FileMount
	for _, id := range u.FileMounts { // the user's order
		if m, ok := byUID[id]; ok {
			out = append(out, m)
		}
	}
	return out, nil
}

var combinedIdentifier = regexp.MustCompile(`^([0-9]{1,9}):(/.*)$`)

// ParseCombinedIdentifier splits "<storage>:<identifier>" and cleans the
// identifier (CleanIdentifier). ok is false for anything else.
func ParseCombinedIdentifier(s string) (storage int64, identifier string, ok bool) {
	m := combinedIdentifier.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, "", false
	}
	id, err := CleanIdentifier(m[2])
	if err != nil {
		return 0, "", false
	}
	return phpInt(m[1]), id, true
}

// folderIdentifier gives a folder identifier its trailing slash.
func folderIdentifier(id string) string {
	if !strings.HasSuffix(id, "/") {
		return id + "/"
	}
	return id
}

// ErrBadIdentifierPath is matched by every refusal of CleanIdentifier.
var ErrBadIdentifierPath = errors.New("not a valid file or folder path")

var percentEscape = regexp.MustCompile(`%[0-9A-Fa-f]{2}`)

// maxIdentifierLen caps a FAL identifier (sys_file.identifier is text, but
// no real path is longer).
const maxIdentifierLen = 1024

// CleanIdentifier checks a FAL file or folder identifier given by a model
// or read from the database and returns it in canonical form: a leading
// slash, "/" separators, no empty segments, a trailing slash kept. It
// refuses what could leave the storage or reach a hidden entry: "." and
// ".." segments, segments starting with a dot (hidden files are never
// shown), backslashes, control characters and percent-escapes (paths are
// given plainly, never URL-encoded). The error sentence names the rule,
// never a directory.
func CleanIdentifier(id string) (string, error) {
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("%w: %s", ErrBadIdentifierPath, why)
	}
	if id == "" {
		return "/", nil
	}
	if len(id) > maxIdentifierLen {
		return bad("it is longer than 1024 characters")
	}
	if !strings.HasPrefix(id, "/") {
		id = "/" + id
	}
	for _, r := range id {
		if r < 0x20 || r == 0x7f {
			return bad("it contains control characters")
		}
	}
	if strings.ContainsRune(id, '\\') {
		return bad(`it contains a backslash; use "/"`)
	}
	if percentEscape.MatchString(id) {
		return bad("it is percent-encoded; give the path plainly")
	}
	var segs []string
	for _, seg := range strings.Split(id, "/") {
		switch {
		case seg == "":
			continue
		case seg == "." || seg == "..":
			return bad(`"." and ".." are not allowed`)
		case strings.HasPrefix(seg, "."):
			return bad("hidden (dot) files and folders are not shown")
		}
		segs = append(segs, seg)
	}
	out := "/" + strings.Join(segs, "/")
	if len(segs) > 0 && strings.HasSuffix(id, "/") {
		out += "/"
	}
	return out, nil
}

// InFolder reports whether identifier lies in folder (a folder identifier
// with its trailing slash) or is that folder.
func InFolder(identifier, folder string) bool {
	folder = folderIdentifier(folder)
	return strings.HasPrefix(identifier, folder) || folderIdentifier(identifier) == folder
}

// ErrOutsideStorage is returned by Storage.Locate for a path that does not
// exist or resolves (through symlinks) to a place outside the storage or
// to a hidden entry. Its message is neutral.
var ErrOutsideStorage = errors.New("not found")

// Locate maps a clean identifier (CleanIdentifier) of a Local storage to
// the real path of the entry it names and the identifier of that real
// location, which differs from the given one when a symlink was followed.
// Symlinks are resolved completely; a target outside the storage's base
// directory, or one whose path below it has a hidden segment, counts as
// missing (ErrOutsideStorage), so neither a link out of the storage nor a
// link to a dotfile is ever followed.
func (s *Storage) Locate(identifier string) (real, realIdentifier string, err error) {
	if !s.IsLocal() {
		return "", "", ErrOutsideStorage
	}
	base, err := filepath.EvalSymlinks(s.BaseDir)
	if err != nil {
		return "", "", ErrOutsideStorage
	}
	target, err := filepath.EvalSymlinks(filepath.Join(base, filepath.FromSlash(strings.TrimPrefix(identifier, "/"))))
	if err != nil {
		return "", "", ErrOutsideStorage
	}
	rel, err := filepath.Rel(base, target)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", "", ErrOutsideStorage
	}
	realID := "/"
	if rel != "." {
		realID = "/" + filepath.ToSlash(rel)
		if slices.ContainsFunc(strings.Split(realID, "/"), func(seg string) bool { return strings.HasPrefix(seg, ".") }) {
			return "", "", ErrOutsideStorage
		}
	}
	return target, realID, nil
}

// FileAccess decides which storages, folders and files one user may see:
// the reference's FalStorageGate. Storages must be in the allow-list;
// non-admins see only storages they have a file mount in, only files and
// folders inside those mounts, and need the readFolder or readFile
// permission (be_groups/be_users file_permissions). Make one per call.
type FileAccess struct {
	user     *BackendUser
	storages []*Storage // allowed, by uid
	mounts   []FileMount
}

// NewFileAccess loads what user may see of the site's files; allow is the
// storage allow-list (DefaultFileStorages when nil).
func (s *Site) NewFileAccess(ctx context.Context, user *BackendUser, allow []int64) (*FileAccess, error) {
	fa := &FileAccess{user: user}
	if user == nil {
		return fa, nil
	}
	if allow == nil {
		allow = DefaultFileStorages
	}
	all, err := s.FileStorages(ctx)
	if err != nil {
		return nil, err
	}
	mounts, err := s.FileMountsOf(ctx, user)
	if err != nil {
		return nil, err
	}
	for _, st := range all {
		if !slices.Contains(allow, st.UID) {
			continue
		}
		if !user.Admin && !slices.ContainsFunc(mounts, func(m FileMount) bool { return m.Storage == st.UID }) {
			continue
		}
		fa.storages = append(fa.storages, st)
	}
	for _, m := range mounts {
		if fa.Storage(m.Storage) != nil {
			fa.mounts = append(fa.mounts, m)
		}
	}
	return fa, nil
}

// User is the acting user.
func (fa *FileAccess) User() *BackendUser { return fa.user }

// Storages returns the storages the user may see, by uid.
func (fa *FileAccess) Storages() []*Storage { return fa.storages }

// Storage returns an allowed storage, or nil.
func (fa *FileAccess) Storage(uid int64) *Storage {
	for _, st := range fa.storages {
		if st.UID == uid {
			return st
		}
	}
	return nil
}

// StorageUIDs are the uids of Storages.
func (fa *FileAccess) StorageUIDs() []int64 {
	out := make([]int64, len(fa.storages))
	for i, st := range fa.storages {
		out[i] = st.UID
	}
	return out
}

// Mounts returns the user's mounts on storage (none for admins, who see
// the whole storage).
func (fa *FileAccess) Mounts(storage int64) []FileMount {
	var out []FileMount
	for _, m := range fa.mounts {
		if m.Storage == storage {
			out = append(out, m)
		}
	}
	return out
}

// HasPermission reports whether the user holds a file permission such as
// readFile or readFolder; admins hold every one.
func (fa *FileAccess) HasPermission(name string) bool {
	if fa.user == nil {
		return false
	}
	return fa.user.Admin || slices.Contains(fa.user.FilePermissions, name)
}

// inMount reports whether a clean identifier lies in one of the user's
// mounts on storage; admins need no mount.
func (fa *FileAccess) inMount(storage int64, identifier string) bool {
	if fa.user == nil || fa.Storage(storage) == nil {
		return false
	}
	if fa.user.Admin {
		return true
	}
	for _, m := range fa.Mounts(storage) {
		if InFolder(identifier, m.Folder) {
			return true
		}
	}
	return false
}

// CanReadFile reports whether the user may see the file identifier of
// storage: an allowed storage, a clean identifier inside a mount, and
// readFile.
func (fa *FileAccess) CanReadFile(storage int64, identifier string) bool {
	clean, err := CleanIdentifier(identifier)
	if err != nil || clean != identifier {
		return false
	}
	return fa.HasPermission("readFile") && fa.inMount(storage, clean)
}

// CanReadFolder reports whether the user may list the folder identifier
// of storage: an allowed storage, a clean identifier inside a mount, and
// readFolder.
func (fa *FileAccess) CanReadFolder(storage int64, identifier string) bool {
	clean, err := CleanIdentifier(identifier)
	if err != nil {
		return false
	}
	return fa.HasPermission("readFolder") && fa.inMount(storage, folderIdentifier(clean))
}

// IsNotExist reports whether err from Locate or a read means the entry is
// not there.
func IsNotExist(err error) bool {
	return errors.Is(err, ErrOutsideStorage) || errors.Is(err, fs.ErrNotExist)
}
