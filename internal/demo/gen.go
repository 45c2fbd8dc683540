package demo

import (
	"context"
	"crypto/md5"
	"crypto/sha1"
	"database/sql"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/t3agent/t3agent/internal/typo3"
)

//go:embed records
var recordFiles embed.FS

// generator writes the demo rows. One generator is used for one Init; its
// PRNG is seeded from the parameters, so the rows depend on nothing else.
type generator struct {
	ctx    context.Context
	tx     *sql.Tx
	d      typo3.Dialect
	schema Schema
	r      *rand.Rand
	w      *pools
	now    int64
	p      InitParams
	slugs  slugs
	counts map[string]int

	// catMM collects category relations while records are generated.
	catMM []catRel
	// fileRefs collects file references of content elements.
	fileRefs []fileRef
	// logged collects records that get sys_history/sys_log entries.
	logged []loggedRecord
	// pageTitles maps default-language page uids to titles, for log text.
	pageTitles map[int]string
	// feHashes are the password hashes of the frontend users.
	feHashes []string
}

type catRel struct {
	cat, uid int
	table    string
}

type fileRef struct {
	file, content, pid int
	field              string
	sorting            int
	crdate             int64
}

type loggedRecord struct {
	table         string
	uid, pid      int
	title         string
	crdate, tstam int64
	user          int
	deleted       bool
}

func (g *generator) recordText(name string) string {
	b, err := recordFiles.ReadFile("records/" + name)
	if err != nil {
		// The names are literals of this package; a missing file is a
		// build mistake, caught by every test.
		panic(err)
	}
	return string(b)
}

func (g *generator) inserter(table string, cols []string) (*inserter, error) {
	t := g.schema.Table(table)
	if t == nil {
		return nil, fmt.Errorf("no table %s in the demo schema", table)
	}
	return newInserter(g.ctx, g.tx, g.d, t, cols)
}

// rows inserts rows given as column maps; every map must use the same keys
// as the first one.
func (g *generator) rows(table string, rows []map[string]any) error {
	if len(rows) == 0 {
		return nil
	}
	cols := make([]string, 0, len(rows[0]))
	for _, c := range g.schema.Table(table).Columns {
		if _, ok := rows[0][c.Name]; ok {
			cols = append(cols, c.Name)
		}
	}
	if len(cols) != len(rows[0]) {
		return fmt.Errorf("%s: row names a column the schema lacks", table)
	}
	ins, err := g.inserter(table, cols)
	if err != nil {
		return err
	}
	for _, row := range rows {
		if err := ins.addMap(row); err != nil {
			return err
		}
	}
	if err := ins.close(); err != nil {
		return err
	}
	g.counts[table] += ins.total
	return nil
}

// pageInfo is what content generation needs to know about a page.
type pageInfo struct {
	uid, doktype int
	translated   bool
}

// generate writes every table. Users come last so that the password hashes,
// computed concurrently, are ready by then.
func (g *generator) generate(hashes func() ([]userRow, []string, error)) error {
	pagesList, err := g.pages()
	if err != nil {
		return err
	}
	if err := g.content(pagesList); err != nil {
		return err
	}
	steps := []func() error{
		g.categories, g.files, g.templates, g.backendLayouts, g.storage,
		g.refindex, g.history, g.registry, g.groups,
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	users, feHashes, err := hashes()
	if err != nil {
		return err
	}
	g.feHashes = feHashes
	if err := g.feUsers(); err != nil {
		return err
	}
	return g.beUsers(users)
}

func (g *generator) pages() ([]pageInfo, error) {
	ins, err := g.inserter("pages", pageColumns())
	if err != nil {
		return nil, err
	}
	fixed := g.fixedPageRows()
	byUID := make(map[int]*page, len(fixed))
	infos := make([]pageInfo, 0, g.p.Pages)
	translated := map[int]bool{}
	for _, p := range fixed {
		if p.lang == 0 {
			byUID[p.uid] = p
			g.slugs.unique(0, p.slug)
		} else {
			translated[p.l10nParent] = true
		}
		if err := ins.add(p.values()...); err != nil {
			return nil, err
		}
		if p.lang == 0 {
			g.pageTitles[p.uid] = p.title
		}
		if p.uid <= 20 && p.uid%4 == 1 {
			g.logged = append(g.logged, loggedRecord{table: "pages", uid: p.uid, pid: p.pid, title: p.title, crdate: p.crdate, tstam: p.tstamp, user: 1, deleted: p.deleted == 1})
		}
	}
	for _, p := range fixed {
		if p.lang == 0 {
			infos = append(infos, pageInfo{uid: p.uid, doktype: p.doktype, translated: translated[p.uid]})
		}
	}
	for n, uid := 0, fixedPages+1; uid <= g.p.Pages; n, uid = n+1, uid+1 {
		parent := byUID[fillerParent(n)]
		p := g.fillerPage(n, uid, parent)
		if g.r.IntN(7) == 0 {
			p.categories = 1
			g.catMM = append(g.catMM, catRel{cat: 1 + g.r.IntN(8), uid: uid, table: "pages"})
		}
		if err := ins.add(p.values()...); err != nil {
			return nil, err
		}
		infos = append(infos, pageInfo{uid: uid, doktype: p.doktype})
		g.pageTitles[uid] = p.title
		if n%25 == 0 {
			g.logged = append(g.logged, loggedRecord{table: "pages", uid: uid, pid: p.pid, title: p.title, crdate: p.crdate, tstam: p.tstamp, user: 1 + g.r.IntN(2)})
		}
	}
	if err := ins.close(); err != nil {
		return nil, err
	}
	g.counts["pages"] += ins.total
	return infos, nil
}

func (g *generator) content(pagesList []pageInfo) error {
	ins, err := g.inserter("tt_content", contentColumns())
	if err != nil {
		return err
	}
	for _, c := range g.fixedContentRows() {
		if err := ins.add(c.values()...); err != nil {
			return err
		}
	}
	g.logged = append(g.logged, loggedRecord{table: "tt_content", uid: 1, pid: 6, title: "Product A at a glance", crdate: g.now - 299*86400, tstam: g.now - 299*86400 + 7200, user: 2})

	// Pages 6 and 19 keep only their fixed content; folders and shortcuts
	// hold none.
	var targets []pageInfo
	for _, p := range pagesList {
		if p.doktype == doktypeStandard && p.uid != 6 && p.uid != 19 {
			targets = append(targets, p)
		}
	}
	sorting := make(map[int]int, len(targets))
	uid := fixedContent + 1
	for uid <= g.p.Content {
		pg := targets[g.r.IntN(len(targets))]
		sorting[pg.uid] += 256
		c := g.fillerContent(uid, pg.uid, sorting[pg.uid])
		if g.r.IntN(9) == 0 {
			c.categories = 1
			g.catMM = append(g.catMM, catRel{cat: 1 + g.r.IntN(8), uid: uid, table: "tt_content"})
		}
		g.collectFiles(c)
		if err := ins.add(c.values()...); err != nil {
			return err
		}
		if uid%40 == 0 {
			g.logged = append(g.logged, loggedRecord{table: "tt_content", uid: uid, pid: c.pid, title: c.header, crdate: c.crdate, tstam: c.tstamp, user: 1 + g.r.IntN(2), deleted: c.deleted == 1})
		}
		uid++
		if pg.translated && uid <= g.p.Content && c.deleted == 0 && g.r.IntN(10) < 7 {
			if err := ins.add(g.translate(c, uid).values()...); err != nil {
				return err
			}
			uid++
		}
	}
	if err := ins.close(); err != nil {
		return err
	}
	g.counts["tt_content"] += ins.total
	return nil
}

// demoFiles are the images and documents of fileadmin/ the content uses.
type demoFile struct {
	name, folder, mime, ext string
	width, height           int
	title                   string
	// storage is the sys_file_storage uid (0 means 1).
	storage int
	// missing files are indexed but not on disk (sys_file.missing 1).
	missing bool
}

func demoFileList() []demoFile {
	imgs := []string{"pump-aqua-200", "pump-fjord-350", "factory-kiel", "service-van", "team-workshop",
		"irrigation-field", "control-unit", "trade-fair-booth", "apprentices", "warehouse-hamburg",
		"test-bench", "solar-pump", "customer-day", "spare-parts", "app-dashboard", "headquarters"}
	files := make([]demoFile, 0, len(imgs)+3)
	for i, n := range imgs {
		files = append(files, demoFile{name: n + ".jpg", folder: "/user_upload/images/", mime: "image/jpeg", ext: "jpg",
			width: 192, height: 128 - (i%3)*20, title: strings.ReplaceAll(n, "-", " ")})
	}
	files = append(files,
		demoFile{name: "logo.svg", folder: "/user_upload/", mime: "image/svg+xml", ext: "svg", width: 240, height: 64, title: "Nordlicht Pumps logo"},
		demoFile{name: "aqua-200-datasheet.pdf", folder: "/user_upload/documents/", mime: "application/pdf", ext: "pdf", title: "Aqua 200 data sheet"},
		demoFile{name: "price-list-2026.pdf", folder: "/internal/", mime: "application/pdf", ext: "pdf", title: "Price list 2026 (internal)"},
		demoFile{name: "fjord-350-datasheet.pdf", folder: "/user_upload/documents/", mime: "application/pdf", ext: "pdf", title: "Fjord 350 data sheet", missing: true},
		demoFile{name: "minutes-2025-q4.pdf", folder: "/board/", mime: "application/pdf", ext: "pdf", title: "Board minutes Q4 2025", storage: 2},
	)
	for i := range files {
		if files[i].storage == 0 {
			files[i].storage = 1
		}
	}
	return files
}

func (g *generator) collectFiles(c *content) {
	n, field := c.assets, "assets"
	if c.image > 0 {
		n, field = c.image, "image"
	}
	for i := 0; i < n; i++ {
		g.fileRefs = append(g.fileRefs, fileRef{file: 1 + g.r.IntN(16), content: c.uid, pid: c.pid, field: field, sorting: i + 1, crdate: c.crdate})
	}
}

func sha1hex(s string) string {
	h := sha1.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

func (g *generator) files() error {
	var files, meta, refs []map[string]any
	for i, f := range demoFileList() {
		uid := i + 1
		id := f.folder + f.name
		typ := 2 // image
		if f.ext == "pdf" {
			typ = 5 // application
		}
		ts := g.now - int64(400-i)*86400
		body := demoFileBytes(i, f)
		missing := 0
		if f.missing {
			missing = 1
		}
		files = append(files, map[string]any{
			"uid": uid, "pid": 0, "tstamp": ts, "last_indexed": ts, "identifier": id,
			"identifier_hash": sha1hex(id), "folder_hash": sha1hex(f.folder), "extension": f.ext, "name": f.name,
			"sha1": sha1hex(string(body)), "creation_date": ts, "modification_date": ts, "size": len(body),
			"storage": f.storage, "type": typ, "mime_type": f.mime, "missing": missing, "metadata": 0,
		})
		meta = append(meta, map[string]any{
			"uid": uid, "pid": 0, "tstamp": ts, "crdate": ts, "file": uid, "title": f.title,
			"alternative": nullIfEmpty(f.title), "description": nil, "width": f.width, "height": f.height,
			"sys_language_uid": 0, "l10n_parent": 0, "categories": 0,
		})
	}
	crop := `{"default":{"cropArea":{"x":0,"y":0,"width":1,"height":1},"selectedRatio":"NaN","focusArea":null}}`
	for i, fr := range g.fileRefs {
		refs = append(refs, map[string]any{
			"uid": i + 1, "pid": fr.pid, "tstamp": fr.crdate, "crdate": fr.crdate, "deleted": 0, "hidden": 0,
			"sys_language_uid": 0, "l10n_parent": 0, "uid_local": fr.file, "uid_foreign": fr.content,
			"tablenames": "tt_content", "fieldname": fr.field, "sorting_foreign": fr.sorting,
			"title": nil, "alternative": nil, "description": nil, "link": "", "crop": crop,
		})
	}
	for i, x := range extraFileRefs() {
		ts := g.now - int64(90-i)*86400
		refs = append(refs, map[string]any{
			"uid": len(g.fileRefs) + i + 1, "pid": x.pid, "tstamp": ts, "crdate": ts, "deleted": x.deleted, "hidden": x.hidden,
			"sys_language_uid": 0, "l10n_parent": 0, "uid_local": x.file, "uid_foreign": x.foreign,
			"tablenames": x.table, "fieldname": x.field, "sorting_foreign": 1,
			"title": nil, "alternative": nil, "description": nil, "link": "", "crop": nil,
		})
	}
	for _, st := range []struct {
		table string
		rows  []map[string]any
	}{{"sys_file", files}, {"sys_file_metadata", meta}, {"sys_file_reference", refs}} {
		if err := g.rows(st.table, st.rows); err != nil {
			return err
		}
	}
	return nil
}

func (g *generator) categories() error {
	type cat struct {
		title, desc string
		parent      int
	}
	cats := []cat{
		{"Products", "Everything we sell.", 0},
		{"Domestic pumps", "Pumps for homes and gardens.", 1},
		{"Industrial pumps", "Pumps for factories and utilities.", 1},
		{"Agriculture", "Irrigation and livestock water supply.", 1},
		{"Company", "News about Nordlicht Pumps itself.", 0},
		{"Events", "Trade fairs, customer days, open house.", 5},
		{"Sustainability", "Energy, water and materials.", 5},
		{"Internal", "Not for the public website.", 0},
	}
	items := make([]int, len(cats)+1)
	sortingPerCat := make([]int, len(cats)+1)
	var mm []map[string]any
	seen := map[[3]int]bool{}
	for _, rel := range g.catMM {
		tableID := 0
		if rel.table == "pages" {
			tableID = 1
		}
		key := [3]int{rel.cat, rel.uid, tableID}
		if seen[key] {
			continue
		}
		seen[key] = true
		items[rel.cat]++
		sortingPerCat[rel.cat]++
		mm = append(mm, map[string]any{
			"uid_local": rel.cat, "uid_foreign": rel.uid, "sorting": sortingPerCat[rel.cat], "sorting_foreign": 1,
			"tablenames": rel.table, "fieldname": "categories",
		})
	}
	var rows []map[string]any
	for i, c := range cats {
		ts := g.now - int64(500-i)*86400
		rows = append(rows, map[string]any{
			"uid": i + 1, "pid": 16, "tstamp": ts, "crdate": ts, "deleted": 0, "hidden": 0, "sorting": 256 * (i + 1),
			"title": c.title, "description": c.desc, "parent": c.parent, "items": items[i+1],
			"sys_language_uid": 0, "l10n_parent": 0,
		})
	}
	// German translations of the two top-level public categories.
	for i, t := range []struct {
		orig  int
		title string
	}{{1, "Produkte"}, {5, "Unternehmen"}} {
		ts := g.now - int64(450-i)*86400
		rows = append(rows, map[string]any{
			"uid": len(cats) + 1 + i, "pid": 16, "tstamp": ts, "crdate": ts, "deleted": 0, "hidden": 0,
			"sorting": 256 * t.orig, "title": t.title, "description": nil, "parent": 0, "items": 0,
			"sys_language_uid": 1, "l10n_parent": t.orig,
		})
	}
	if err := g.rows("sys_category", rows); err != nil {
		return err
	}
	return g.rows("sys_category_record_mm", mm)
}

func (g *generator) templates() error {
	ts := g.now - 410*86400
	return g.rows("sys_template", []map[string]any{
		{
			"uid": 1, "pid": 1, "tstamp": ts + 86400*30, "crdate": ts, "deleted": 0, "hidden": 0, "sorting": 256,
			"title": "Nordlicht Pumps", "description": "Main template of the site. Setup comes from EXT:site_demo.",
			"root": 1, "clear": 3, "constants": g.recordText("sys_template_1.constants.typoscript"),
			"config":              g.recordText("sys_template_1.config.typoscript"),
			"include_static_file": "EXT:fluid_styled_content/Configuration/TypoScript/,EXT:site_demo/Configuration/TypoScript",
			"basedOn":             "", "includeStaticAfterBasedOn": 0, "static_file_mode": 0,
		},
		{
			"uid": 2, "pid": 5, "tstamp": ts + 86400*60, "crdate": ts + 86400*45, "deleted": 0, "hidden": 0, "sorting": 256,
			"title": "+ext Products", "description": "Extension template of the products section.",
			"root": 0, "clear": 0, "constants": g.recordText("sys_template_2.constants.typoscript"),
			"config":              g.recordText("sys_template_2.config.typoscript"),
			"include_static_file": nil, "basedOn": "", "includeStaticAfterBasedOn": 0, "static_file_mode": 0,
		},
	})
}

func (g *generator) backendLayouts() error {
	ts := g.now - 380*86400
	return g.rows("backend_layout", []map[string]any{
		{
			"uid": 1, "pid": 16, "tstamp": ts, "crdate": ts, "deleted": 0, "hidden": 0, "sorting": 256,
			"title": "Landing page", "description": "Full-width stage and three teaser columns.",
			"config": g.recordText("backend_layout_1.txt"),
			"icon":   0,
		},
		{
			"uid": 2, "pid": 16, "tstamp": ts, "crdate": ts, "deleted": 0, "hidden": 1, "sorting": 512,
			"title": "Campaign (unused)", "description": nil,
			"config": g.recordText("backend_layout_2.txt"),
			"icon":   0,
		},
	})
}

func (g *generator) storage() error {
	ts := g.now - 430*86400
	if err := g.rows("sys_file_storage", []map[string]any{{
		"uid": 1, "pid": 0, "tstamp": ts, "crdate": ts, "deleted": 0,
		"name": "fileadmin", "description": "Default storage created during installation.", "driver": "Local",
		"configuration": `<?xml version="1.0" encoding="utf-8" standalone="yes" ?>
<T3FlexForms>
    <data>
        <sheet index="sDEF">
            <language index="lDEF">
                <field index="basePath">
                    <value index="vDEF">fileadmin/</value>
                </field>
                <field index="pathType">
                    <value index="vDEF">relative</value>
                </field>
                <field index="caseSensitive">
                    <value index="vDEF">1</value>
                </field>
            </language>
        </sheet>
    </data>
</T3FlexForms>`,
		"is_browsable": 1, "is_public": 1, "is_writable": 1, "is_online": 1, "is_default": 1,
		"auto_extract_metadata": 1, "processingfolder": "1:/_processed_/",
	}, archiveStorage(ts)}); err != nil {
		return err
	}
	return g.rows("sys_filemounts", []map[string]any{
		{"uid": 1, "pid": 0, "tstamp": ts, "deleted": 0, "hidden": 0, "sorting": 256, "title": "Editors' uploads",
			"description": "Images and documents editors may use.", "identifier": "1:/user_upload/", "read_only": 0},
		{"uid": 2, "pid": 0, "tstamp": ts, "deleted": 0, "hidden": 0, "sorting": 512, "title": "Internal documents",
			"description": "Price lists; management only.", "identifier": "1:/internal/", "read_only": 1},
	})
}

func (g *generator) feUsers() error {
	ts := g.now - 200*86400
	if err := g.rows("fe_groups", []map[string]any{
		{"uid": 1, "pid": 16, "tstamp": ts, "crdate": ts, "deleted": 0, "hidden": 0, "title": "Customers", "description": "Registered customers", "subgroup": ""},
		{"uid": 2, "pid": 16, "tstamp": ts, "crdate": ts, "deleted": 0, "hidden": 0, "title": "Dealers", "description": "Authorised dealers see dealer prices", "subgroup": "1"},
	}); err != nil {
		return err
	}
	var rows []map[string]any
	people := []struct{ user, first, last, group, city string }{
		{"m.hansen", "Mette", "Hansen", "1", "Aarhus"},
		{"k.lorenz", "Karl", "Lorenz", "1", "Lübeck"},
		{"dealer.nord", "Svea", "Lindqvist", "2", "Malmö"},
	}
	for i, p := range people {
		rows = append(rows, map[string]any{
			"uid": i + 1, "pid": 16, "tstamp": ts + int64(i)*86400, "crdate": ts + int64(i)*86400, "deleted": 0, "disable": 0,
			"username": p.user, "password": g.feHashes[i], "usergroup": p.group, "name": p.first + " " + p.last,
			"first_name": p.first, "last_name": p.last, "email": p.user + "@customer.example", "city": p.city,
			"country": "", "company": "", "lastlogin": g.now - int64(i+1)*3*86400,
		})
	}
	return g.rows("fe_users", rows)
}

// refindex writes sys_refindex rows for the relations the demo creates, in
// the shape TYPO3's ReferenceIndex stores them.
func (g *generator) refindex() error {
	ins, err := g.inserter("sys_refindex", []string{"hash", "tablename", "recuid", "field", "sorting", "workspace", "ref_table", "ref_uid", "ref_string"})
	if err != nil {
		return err
	}
	add := func(table string, uid int, field string, sorting int, refTable string, refUID int) error {
		key := table + ":" + strconv.Itoa(uid) + ":" + field + "::::" + strconv.Itoa(sorting) + ":0:" + refTable + ":" + strconv.Itoa(refUID)
		h := md5.Sum([]byte(key))
		return ins.add(hex.EncodeToString(h[:]), table, uid, field, sorting, 0, refTable, refUID, "")
	}
	if err := add("pages", 20, "shortcut", 0, "pages", 2); err != nil {
		return err
	}
	for i, fr := range g.fileRefs {
		if err := add("tt_content", fr.content, fr.field, fr.sorting-1, "sys_file_reference", i+1); err != nil {
			return err
		}
		if err := add("sys_file_reference", i+1, "uid_local", 0, "sys_file", fr.file); err != nil {
			return err
		}
	}
	for i, x := range extraFileRefs() {
		if x.deleted != 0 {
			continue
		}
		uid := len(g.fileRefs) + i + 1
		if err := add(x.table, x.foreign, x.field, 0, "sys_file_reference", uid); err != nil {
			return err
		}
		if err := add("sys_file_reference", uid, "uid_local", 0, "sys_file", x.file); err != nil {
			return err
		}
	}
	seen := map[[3]int]bool{}
	for _, rel := range g.catMM {
		tid := 0
		if rel.table == "pages" {
			tid = 1
		}
		if seen[[3]int{rel.cat, rel.uid, tid}] {
			continue
		}
		seen[[3]int{rel.cat, rel.uid, tid}] = true
		if err := add(rel.table, rel.uid, "categories", 0, "sys_category", rel.cat); err != nil {
			return err
		}
	}
	if err := ins.close(); err != nil {
		return err
	}
	g.counts["sys_refindex"] += ins.total
	return nil
}

func (g *generator) registry() error {
	return g.rows("sys_registry", []map[string]any{
		{"uid": 1, "entry_namespace": "core", "entry_key": "sys_refindex_lastUpdate", "entry_value": []byte("i:" + strconv.FormatInt(g.now-86400, 10) + ";")},
		{"uid": 2, "entry_namespace": "installUpdate", "entry_key": `TYPO3\CMS\Install\Updates\BackendGroupsExplicitAllowDenyMigration`, "entry_value": []byte("i:1;")},
		{"uid": 3, "entry_namespace": "installUpdate", "entry_key": `TYPO3\CMS\Install\Updates\SysLogChannel`, "entry_value": []byte("i:1;")},
		{"uid": 4, "entry_namespace": "extensionDataImport", "entry_key": "typo3conf/ext/site_demo/ext_tables_static+adt.sql", "entry_value": []byte("s:0:\"\";")},
		{"uid": 5, "entry_namespace": "core", "entry_key": "formProtectionSessionToken:1", "entry_value": []byte(`s:64:"` + hex.EncodeToString(g.bytes(32)) + `";`)},
	})
}

// bytes returns n pseudo-random bytes from the seeded generator.
func (g *generator) bytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.r.UintN(256))
	}
	return b
}

// requestID is a 13-hex-digit id like PHP's uniqid(), which TYPO3 uses for
// sys_log.request_id.
func (g *generator) requestID() string {
	return hex.EncodeToString(g.bytes(7))[:13]
}

// jsonString encodes v like PHP's json_encode with
// JSON_UNESCAPED_SLASHES: no HTML escaping of <, > and &.
func jsonString(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // only maps of strings and numbers are encoded here
	}
	return strings.TrimSuffix(b.String(), "\n")
}
