package files

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"mime"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

type listStorages struct{ env }

func (t *listStorages) Spec() tool.Spec {
	return spec("list_fal_storages",
		"The TYPO3 file storages (FAL) you may use: `- [uid] name (driver; online|offline, browsable, public)`, "+
			"and for editors the file mounts (folders) they may see in each, such as 1:/user_upload/. "+
			"Storages outside t3agent's allow-list are not listed; the server path of a storage is never shown. "+
			"Use the uid as `storage` in browse_fal_folder, search_fal_files and find_missing_files.",
		`{"type":"object","properties":{},"additionalProperties":false}`)
}

func (t *listStorages) Execute(ctx context.Context, call tool.Call, _ map[string]any) (tool.Result, error) {
	if call.Actor == nil {
		return denyUser(), nil
	}
	fa, err := t.access(ctx, call.Actor)
	if err != nil {
		return tool.Result{}, err
	}
	all := fa.Storages()
	if len(all) == 0 {
		return tool.Text("You may not use any file storage (no file mount on a storage t3agent may read)."), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d file storage(s):\n", len(all))
	for _, st := range all {
		state := "offline"
		if st.Online {
			state = "online"
		}
		flags := []string{state}
		if st.Browsable {
			flags = append(flags, "browsable")
		}
		if st.Public {
			flags = append(flags, "public")
		}
		if st.Default {
			flags = append(flags, "default")
		}
		fmt.Fprintf(&b, "- [%d] %s (%s; %s)\n", st.UID, clean(st.Name, 80), clean(st.Driver, 40), strings.Join(flags, ", "))
		if call.Actor.Admin {
			continue
		}
		for _, m := range fa.Mounts(st.UID) {
			ro := ""
			if m.ReadOnly {
				ro = ", read-only"
			}
			fmt.Fprintf(&b, "  mount %d:%s (%s%s)\n", st.UID, clean(m.Folder, 200), clean(m.Title, 80), ro)
		}
	}
	if !call.Actor.Admin && !fa.HasPermission("readFolder") {
		b.WriteString("You lack the readFolder permission, so folders cannot be browsed.\n")
	}
	return tool.Text(strings.TrimRight(b.String(), "\n")), nil
}

// maxFolderEntries caps a folder listing.
const maxFolderEntries = 100

type browseFolder struct{ env }

func (t *browseFolder) Spec() tool.Spec {
	return spec("browse_fal_folder",
		"List one folder of a TYPO3 file storage (Local driver): its subfolders with their file counts, then its "+
			"files with MIME type, size and, when TYPO3 has indexed them, the sys_file uid; at most 100 entries. "+
			"`folder` is a path inside the storage such as /user_upload/images/ (default /); `storage` is a uid from "+
			"list_fal_storages (default: the first you may use). Editors see only their file mounts; at / they get "+
			"their mounts. Hidden (dot) files are never listed. For files by name anywhere use search_fal_files.",
		`{"type":"object","properties":{`+
			`"folder":{"type":"string","maxLength":1024,"description":"Folder path inside the storage, e.g. /user_upload/."},`+
			`"storage":{"type":"integer","minimum":1,"description":"Storage uid (list_fal_storages)."}`+
			`},"additionalProperties":false}`)
}

// entry is one line of a listing.
type entry struct {
	name  string
	dir   bool
	files int // for folders
	size  int64
	mime  string
	uid   int64 // sys_file uid, 0 when not indexed
}

func (t *browseFolder) Execute(ctx context.Context, call tool.Call, args map[string]any) (tool.Result, error) {
	if call.Actor == nil {
		return denyUser(), nil
	}
	folderArg, _, err := tool.ArgString(args, "folder")
	if err != nil {
		return refuse(err), nil
	}
	folder, err := typo3.CleanIdentifier(strings.TrimSpace(folderArg))
	if err != nil {
		return tool.Errorf("folder is %v.", err), nil
	}
	folder = dirID(folder)
	fa, err := t.access(ctx, call.Actor)
	if err != nil {
		return tool.Result{}, err
	}
	st, res, ok := storageArg(args, fa)
	if !ok {
		return res, nil
	}
	if !fa.HasPermission("readFolder") {
		return tool.Errorf("%s", DeniedFolder), nil
	}
	if !call.Actor.Admin && !fa.CanReadFolder(st.UID, folder) {
		if folder == "/" {
			return tool.Text(mountList(st, fa.Mounts(st.UID))), nil
		}
		return tool.Errorf("%s", DeniedFolder), nil
	}
	switch {
	case !st.Online:
		return tool.Errorf("Storage %d is offline; its folders cannot be listed.", st.UID), nil
	case !st.Browsable:
		return tool.Errorf("Storage %d is not browsable.", st.UID), nil
	case !st.IsLocal():
		return tool.Errorf("Storage %d uses the %s driver; only Local storages can be browsed. Use search_fal_files.", st.UID,
			clean(st.Driver, 40)), nil
	}
	real, realID, err := st.Locate(folder)
	if err != nil {
		return tool.Errorf("%s", DeniedFolder), nil
	}
	realID = dirID(realID)
	if !fa.CanReadFolder(st.UID, realID) {
		return tool.Errorf("%s", DeniedFolder), nil
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return tool.Errorf("%s", DeniedFolder), nil
	}
	entries, total, err := t.list(ctx, fa, st, real, realID)
	if err != nil {
		return tool.Result{}, err
	}
	return tool.Text(render(st, folder, entries, total)), nil
}

// dirID gives a folder identifier its trailing slash.
func dirID(id string) string {
	if strings.HasSuffix(id, "/") {
		return id
	}
	return id + "/"
}

// mountList answers a non-admin's request for a storage's root.
func mountList(st *typo3.Storage, mounts []typo3.FileMount) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Your file mounts in storage %d (%s); browse one of them:\n", st.UID, clean(st.Name, 80))
	for _, m := range mounts {
		fmt.Fprintf(&b, "- %s (%s)\n", clean(m.Folder, 200), clean(m.Title, 80))
	}
	return strings.TrimRight(b.String(), "\n")
}

// list reads the directory real (the folder realID of st) and returns the
// entries the user may see, sorted folders first, at most
// maxFolderEntries, with the number there are.
func (t *browseFolder) list(ctx context.Context, fa *typo3.FileAccess, st *typo3.Storage, real, realID string) ([]entry, int, error) {
	des, err := os.ReadDir(real)
	if err != nil {
		return nil, 0, fmt.Errorf("read a folder of storage %d: %w", st.UID, err)
	}
	var out []entry
	for _, de := range des {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		name := de.Name()
		if strings.HasPrefix(name, ".") || !validName(name) {
			continue
		}
		// Every entry is located again: a symlink must stay inside the
		// storage, away from hidden entries and inside the user's mounts.
		target, targetID, err := st.Locate(realID + name)
		if err != nil {
			continue
		}
		fi, err := os.Stat(target)
		if err != nil {
			continue
		}
		switch {
		case fi.IsDir():
			if !fa.CanReadFolder(st.UID, dirID(targetID)) {
				continue
			}
			out = append(out, entry{name: name, dir: true, files: countFiles(target)})
		case fi.Mode().IsRegular():
			if !fa.CanReadFile(st.UID, targetID) {
				continue
			}
			out = append(out, entry{name: name, size: fi.Size()})
		}
	}
	slices.SortFunc(out, func(a, b entry) int {
		if a.dir != b.dir {
			if a.dir {
				return -1
			}
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	total := len(out)
	if len(out) > maxFolderEntries {
		out = out[:maxFolderEntries]
	}
	if err := t.index(ctx, st.UID, realID, out); err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// validName keeps entry names that can be printed and named back.
func validName(name string) bool {
	id, err := typo3.CleanIdentifier("/" + name)
	return err == nil && id == "/"+name
}

// countFiles counts the visible regular files directly in dir.
func countFiles(dir string) int {
	des, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, de := range des {
		if !strings.HasPrefix(de.Name(), ".") && de.Type().IsRegular() {
			n++
		}
	}
	return n
}

// index fills MIME types and sys_file uids from TYPO3's index of the
// folder, and guesses the MIME type from the extension for files TYPO3
// has not indexed.
func (t *browseFolder) index(ctx context.Context, storage int64, folder string, entries []entry) error {
	db := t.site.DB
	a := db.NewArgs()
	h := sha1.Sum([]byte(folder))
	q := `SELECT ` + db.MustQuote("uid") + `, ` + db.MustQuote("identifier") + `, ` + db.MustQuote("mime_type") +
		` FROM ` + db.MustQuote("sys_file") + ` WHERE ` + db.MustQuote("storage") + ` = ` + a.Add(storage) +
		` AND ` + db.MustQuote("folder_hash") + ` = ` + a.Add(hex.EncodeToString(h[:]))
	rows, err := db.SQL.QueryContext(ctx, q, a.Values()...)
	if err != nil {
		return fmt.Errorf("read sys_file: %w", err)
	}
	defer rows.Close()
	type known struct {
		uid  int64
		mime string
	}
	byName := map[string]known{}
	for rows.Next() {
		var uid int64
		var ident, mt *string
		if err := rows.Scan(&uid, &ident, &mt); err != nil {
			return fmt.Errorf("read sys_file: %w", err)
		}
		id := derefS(ident)
		if path.Dir(id)+"/" == folder || folder == "/" && path.Dir(id) == "/" {
			byName[path.Base(id)] = known{uid, derefS(mt)}
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read sys_file: %w", err)
	}
	for i := range entries {
		if entries[i].dir {
			continue
		}
		if k, ok := byName[entries[i].name]; ok {
			entries[i].uid, entries[i].mime = k.uid, k.mime
		}
		if entries[i].mime == "" {
			entries[i].mime = guessMime(entries[i].name)
		}
	}
	return nil
}

// guessMime is the MIME type of a file name's extension, from Go's table.
func guessMime(name string) string {
	if mt := mime.TypeByExtension(strings.ToLower(filepath.Ext(name))); mt != "" {
		if i := strings.IndexByte(mt, ';'); i > 0 {
			mt = mt[:i]
		}
		return mt
	}
	return "unknown type"
}

func render(st *typo3.Storage, folder string, entries []entry, total int) string {
	var b strings.Builder
	dirs, files := 0, 0
	for _, e := range entries {
		if e.dir {
			dirs++
		} else {
			files++
		}
	}
	fmt.Fprintf(&b, "Folder %d:%s (storage %s)", st.UID, clean(folder, 300), clean(st.Name, 80))
	if total == 0 {
		b.WriteString(" is empty.")
		return b.String()
	}
	fmt.Fprintf(&b, ": %d folder(s), %d file(s)", dirs, files)
	if total > len(entries) {
		fmt.Fprintf(&b, " of %d entries", total)
	}
	b.WriteString("\n")
	for _, e := range entries {
		if e.dir {
			fmt.Fprintf(&b, "- %s/ (%d file(s))\n", clean(e.name, 200), e.files)
			continue
		}
		fmt.Fprintf(&b, "- %s (%s, %s)", clean(e.name, 200), clean(e.mime, 80), humanSize(e.size))
		if e.uid > 0 {
			fmt.Fprintf(&b, " [sys_file %d]", e.uid)
		} else {
			b.WriteString(" [not indexed]")
		}
		b.WriteByte('\n')
	}
	if total > len(entries) {
		fmt.Fprintf(&b, "… %d more entries not shown (the limit is %d).\n", total-len(entries), maxFolderEntries)
	}
	return strings.TrimRight(b.String(), "\n")
}
