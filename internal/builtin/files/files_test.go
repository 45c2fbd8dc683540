package files_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/builtin"
	"github.com/t3agent/t3agent/internal/builtin/files"
	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

var toolNames = []string{"list_fal_storages", "browse_fal_folder", "search_fal_files", "get_fal_references", "find_missing_files"}

func TestSpecs(t *testing.T) {
	t.Parallel()
	f := demoFixture(t, typo3.DialectSQLite)
	var names []string
	for _, tl := range files.Tools(f.site, readpolicy.New(f.site.TCA), nil) {
		s := tl.Spec()
		names = append(names, s.Name)
		if err := s.Validate(); err != nil {
			t.Error(err)
		}
		if s.Group != tool.GroupFiles || s.DataClass != tool.EditorContent || s.Effect != tool.ReadOnly || s.AdminOnly ||
			!s.EnabledByDefault || s.RequiresApproval || len(s.Description) < 150 {
			t.Errorf("%s: %+v", s.Name, s)
		}
	}
	if !slices.Equal(names, toolNames) {
		t.Errorf("tools %v", names)
	}
	var all []string
	for _, tl := range builtin.Tools(f.site, readpolicy.New(f.site.TCA)) {
		all = append(all, tl.Spec().Name)
	}
	for _, n := range toolNames {
		if !slices.Contains(all, n) {
			t.Errorf("builtin.Tools lacks %s", n)
		}
	}
}

// TestDemo walks the demo's files (docs/demo-site.md) as each user, on
// every database.
func TestDemo(t *testing.T) {
	t.Parallel()
	for _, d := range dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			f := demoFixture(t, d)
			storages(t, f)
			browse(t, f)
			search(t, f)
			missing(t, f)
			refs(t, f)
		})
	}
}

func contains(t *testing.T, what, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}

func lacks(t *testing.T, what, got string, unwanted ...string) {
	t.Helper()
	for _, w := range unwanted {
		if strings.Contains(got, w) {
			t.Errorf("%s shows %q:\n%s", what, w, got)
		}
	}
}

func storages(t *testing.T, f *fixture) {
	got := f.ok("admin", "list_fal_storages", nil)
	if got != "1 file storage(s):\n- [1] fileadmin (Local; online, browsable, public, default)" {
		t.Errorf("admin storages:\n%s", got)
	}
	got = f.ok("editor", "list_fal_storages", nil)
	if got != "1 file storage(s):\n- [1] fileadmin (Local; online, browsable, public, default)\n  mount 1:/user_upload/ (Editors' uploads)" {
		t.Errorf("editor storages:\n%s", got)
	}
	contains(t, "intern storages", f.ok("intern", "list_fal_storages", nil), "may not use any file storage")
	if got := f.refused("former", "list_fal_storages", nil); got != readpolicy.DeniedUser {
		t.Errorf("former: %q", got)
	}
}

func browse(t *testing.T, f *fixture) {
	got := f.ok("admin", "browse_fal_folder", nil)
	contains(t, "admin /", got, "Folder 1:/ (storage fileadmin): 3 folder(s), 0 file(s)", "- _processed_/ (0 file(s))",
		"- internal/ (1 file(s))", "- user_upload/ (1 file(s))")
	got = f.ok("admin", "browse_fal_folder", args("folder", "/internal"))
	contains(t, "admin /internal", got, "Folder 1:/internal/", "- price-list-2026.pdf (application/pdf, ", "[sys_file 19]")

	got = f.ok("editor", "browse_fal_folder", args("folder", "/"))
	if got != "Your file mounts in storage 1 (fileadmin); browse one of them:\n- /user_upload/ (Editors' uploads)" {
		t.Errorf("editor /:\n%s", got)
	}
	got = f.ok("editor", "browse_fal_folder", args("folder", "/user_upload/", "storage", 1))
	want := "Folder 1:/user_upload/ (storage fileadmin): 2 folder(s), 1 file(s)\n- documents/ (2 file(s))\n- images/ (16 file(s))\n" +
		"- logo.svg (image/svg+xml, 279 B) [sys_file 17]"
	if got != want {
		t.Errorf("editor /user_upload/:\n%s\nwant:\n%s", got, want)
	}
	got = f.ok("editor", "browse_fal_folder", args("folder", "user_upload/documents"))
	contains(t, "documents", got, "- README.txt (text/plain, ", "[not indexed]", "- aqua-200-datasheet.pdf (application/pdf, ", "[sys_file 18]")
	lacks(t, "documents", got, "fjord") // indexed, but missing from disk
	got = f.ok("editor", "browse_fal_folder", args("folder", "/user_upload/images/"))
	if n := strings.Count(got, "\n- "); n != 16 || !strings.Contains(got, "- app-dashboard.jpg (image/jpeg, ") {
		t.Errorf("images (%d):\n%s", n, got)
	}
	for _, folder := range []string{"/internal/", "/internal", "/_processed_/", "/nothing/", "/user_upload/nothing/"} {
		if got := f.refused("editor", "browse_fal_folder", args("folder", folder)); got != files.DeniedFolder {
			t.Errorf("editor %s: %q", folder, got)
		}
	}
	if got := f.refused("admin", "browse_fal_folder", args("folder", "/nothing/")); got != files.DeniedFolder {
		t.Errorf("admin /nothing/: %q", got)
	}
	// A file is not a folder, and says so only as "not found".
	if got := f.refused("admin", "browse_fal_folder", args("folder", "/user_upload/logo.svg")); got != files.DeniedFolder {
		t.Errorf("a file as folder: %q", got)
	}
	for _, user := range []string{"admin", "editor"} {
		if got := f.refused(user, "browse_fal_folder", args("storage", 2)); got != files.DeniedStorage {
			t.Errorf("%s storage 2: %q", user, got)
		}
	}
	if got := f.refused("intern", "browse_fal_folder", nil); got != files.DeniedStorage {
		t.Errorf("intern: %q", got)
	}
}

func search(t *testing.T, f *fixture) {
	got := f.ok("admin", "search_fal_files", args("query", "DATASHEET"))
	contains(t, "admin datasheet", got, "1 file(s) matching", "- [18] 1:/user_upload/documents/aqua-200-datasheet.pdf (application/pdf, ",
		"· Aqua 200 data sheet")
	lacks(t, "admin datasheet", got, "fjord") // missing files are left out
	contains(t, "admin price", f.ok("admin", "search_fal_files", args("query", "price list")), "- [19] 1:/internal/price-list-2026.pdf")
	contains(t, "editor price", f.ok("editor", "search_fal_files", args("query", "price")), `No file matches "price".`)
	contains(t, "admin minutes", f.ok("admin", "search_fal_files", args("query", "minutes")), `No file matches`)
	// Title and alternative match too; the wildcard characters are literal.
	contains(t, "by title", f.ok("editor", "search_fal_files", args("query", "pump aqua")), "- [1] 1:/user_upload/images/pump-aqua-200.jpg")
	contains(t, "literal %", f.ok("admin", "search_fal_files", args("query", "%")), `No file matches "%".`)
	contains(t, "literal _", f.ok("admin", "search_fal_files", args("query", "_")), `No file matches "_".`)
	got = f.ok("editor", "search_fal_files", args("query", "jpg", "limit", 5))
	if strings.Count(got, "\n- ") != 5 || !strings.Contains(got, "(the limit;") {
		t.Errorf("limit 5:\n%s", got)
	}
	got = f.ok("admin", "search_fal_files", args("query", ".", "limit", 50))
	if n := strings.Count(got, "\n- "); n != 19 {
		t.Errorf("admin .: %d files, want the 19 present files of storage 1:\n%s", n, got)
	}
	if got := f.refused("editor", "search_fal_files", args("query", "jpg", "storage", 2)); got != files.DeniedStorage {
		t.Errorf("storage 2: %q", got)
	}
	contains(t, "intern", f.ok("intern", "search_fal_files", args("query", "jpg")), "nothing to search")
}

func missing(t *testing.T, f *fixture) {
	want := "1 file(s) marked missing:\n- [20] 1:/user_upload/documents/fjord-350-datasheet.pdf (application/pdf)"
	if got := f.ok("admin", "find_missing_files", nil); got != want {
		t.Errorf("admin missing:\n%s", got)
	}
	want = "1 file(s) inside your file mounts marked missing:\n- [20] 1:/user_upload/documents/fjord-350-datasheet.pdf (application/pdf)"
	if got := f.ok("editor", "find_missing_files", args("storage", 1)); got != want {
		t.Errorf("editor missing:\n%s", got)
	}
	contains(t, "intern missing", f.ok("intern", "find_missing_files", nil), "no file of yours")
}

func refs(t *testing.T, f *fixture) {
	if got := f.ok("admin", "get_fal_references", args("uid", 19)); got != "File [19] 1:/internal/price-list-2026.pdf is referenced 1 time(s):\n- pages:9 (field media)" {
		t.Errorf("admin refs 19:\n%s", got)
	}
	for _, uid := range []int{19, 21, 99999} {
		if got := f.refused("editor", "get_fal_references", args("uid", uid)); got != files.DeniedFile {
			t.Errorf("editor refs %d: %q", uid, got)
		}
	}
	if got := f.refused("admin", "get_fal_references", args("uid", 21)); got != files.DeniedFile {
		t.Errorf("admin refs 21 (storage 2): %q", got)
	}
	if got := f.ok("editor", "get_fal_references", args("uid", 18)); got != "File [18] 1:/user_upload/documents/aqua-200-datasheet.pdf is referenced 1 time(s):\n- pages:6 (field media) [hidden]" {
		t.Errorf("editor refs 18:\n%s", got)
	}
	contains(t, "logo", f.ok("admin", "get_fal_references", args("uid", 17)), "has no references you may see.")
	// Content images: the editor sees a part of what the admin sees.
	for uid := 1; uid <= 16; uid++ {
		a := lines(f.ok("admin", "get_fal_references", args("uid", uid)))
		e := lines(f.ok("editor", "get_fal_references", args("uid", uid)))
		for _, l := range e {
			if !slices.Contains(a, l) {
				t.Errorf("file %d: the editor sees %q, the admin does not", uid, l)
			}
		}
		if uid == 1 && (len(a) == 0 || len(e) >= len(a)) {
			t.Errorf("file 1: admin %d references, editor %d; the editor's mount holds only a part", len(a), len(e))
		}
	}
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "- ") {
			out = append(out, l)
		}
	}
	return out
}

// TestPathGuard tries to leave the storage, reach a hidden file or a
// folder outside the mount, as admin and as editor. Every attempt ends in
// one sentence that names no server path.
func TestPathGuard(t *testing.T) {
	t.Parallel()
	f := demoFixture(t, typo3.DialectSQLite)
	f.symlink(filepath.Join(f.root, "config", "system"), "user_upload/system")
	f.symlink(filepath.Join(f.root, "config", "system", "settings.php"), "user_upload/settings-link.php")
	f.symlink("/etc", "user_upload/etc")
	f.symlink("../.htaccess", "user_upload/htaccess.txt")
	f.symlink(".editor-notes.txt", "user_upload/notes.txt")
	f.symlink("../internal", "user_upload/internal-link")
	f.symlink("../internal/price-list-2026.pdf", "user_upload/prices.pdf")
	f.symlink("images", "user_upload/pictures")
	base := f.storageBase()
	cases := []struct {
		folder string
		want   string // part of the sentence
	}{
		{"/..", `".."`},
		{"/../config/system", `".."`},
		{"/user_upload/../../config", `".."`},
		{"/user_upload/./", `"."`},
		{"..", `".."`},
		{"/%2e%2e/config", "percent-encoded"},
		{"/user_upload%2F..%2F..", "percent-encoded"},
		{"%2E%2E", "percent-encoded"},
		{`\..\config`, "backslash"},
		{"/user_upload/\x00", "control"},
		{"/.git", "hidden"},
		{"/user_upload/.editor-notes.txt", "hidden"},
		{base, files.DeniedFolder},
		{filepath.Join(f.root, "config", "system"), files.DeniedFolder},
		{"/etc", files.DeniedFolder},
		{"/user_upload/system", files.DeniedFolder},
		{"/user_upload/etc", files.DeniedFolder},
		{"/user_upload/settings-link.php", files.DeniedFolder},
	}
	for _, user := range []string{"admin", "editor"} {
		for _, c := range cases {
			got := f.refused(user, "browse_fal_folder", args("folder", c.folder))
			if !strings.Contains(got, c.want) || strings.Contains(got, "\n") || !strings.HasSuffix(got, ".") {
				t.Errorf("%s %q: %q, want one sentence with %q", user, c.folder, got, c.want)
			}
		}
		// Links out of the storage or to hidden files are not listed.
		got := f.ok(user, "browse_fal_folder", args("folder", "/user_upload/"))
		lacks(t, user+" /user_upload/", got, "system", "etc", "settings-link", "htaccess.txt", "notes.txt")
		contains(t, user+" /user_upload/", got, "- pictures/ (16 file(s))", "- images/ (16 file(s))")
		contains(t, user+" pictures", f.ok(user, "browse_fal_folder", args("folder", "/user_upload/pictures")), "- app-dashboard.jpg")
	}
	// Links into the internal folder work for the admin only.
	got := f.ok("admin", "browse_fal_folder", args("folder", "/user_upload/"))
	contains(t, "admin /user_upload/", got, "- internal-link/ (1 file(s))", "- prices.pdf (application/pdf")
	got = f.ok("editor", "browse_fal_folder", args("folder", "/user_upload/"))
	lacks(t, "editor /user_upload/", got, "internal-link", "prices.pdf")
	if got := f.refused("editor", "browse_fal_folder", args("folder", "/user_upload/internal-link/")); got != files.DeniedFolder {
		t.Errorf("editor through the link: %q", got)
	}
	contains(t, "admin through the link", f.ok("admin", "browse_fal_folder", args("folder", "/user_upload/internal-link/")),
		"price-list-2026.pdf")
}

// TestBadInput: arguments the schema lets through but the tools refuse,
// and arguments the gate's schema check refuses.
func TestBadInput(t *testing.T) {
	t.Parallel()
	f := demoFixture(t, typo3.DialectSQLite)
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"search_fal_files", args("query", "   "), "1 to 100"},
		{"search_fal_files", args("query", "x", "limit", 51), "invalid arguments"},
		{"search_fal_files", args("query", "x", "limit", 0), "invalid arguments"},
		{"search_fal_files", args("query", 5), "invalid arguments"},
		{"search_fal_files", args(), "invalid arguments"},
		{"search_fal_files", args("query", "x", "storage", 99), files.DeniedStorage},
		{"find_missing_files", args("limit", 500), "invalid arguments"},
		{"find_missing_files", args("storage", 2), files.DeniedStorage},
		{"get_fal_references", args("uid", 0), "invalid arguments"},
		{"get_fal_references", args("uid", "1 OR 1=1"), "invalid arguments"},
		{"get_fal_references", args(), "invalid arguments"},
		{"browse_fal_folder", args("folder", strings.Repeat("a/", 600)), "invalid arguments"},
		{"browse_fal_folder", args("storage", 0), "invalid arguments"},
		{"browse_fal_folder", args("path", "/"), "invalid arguments"},
		{"list_fal_storages", args("storage", 1), "invalid arguments"},
	} {
		got := f.refused("editor", c.tool, c.args)
		if !strings.Contains(got, c.want) {
			t.Errorf("%s %v: %q, want %q", c.tool, c.args, got, c.want)
		}
	}
	// SQL metacharacters are data.
	contains(t, "quote", f.ok("admin", "search_fal_files", args("query", "' OR 1=1 --")), "No file matches")
	for _, name := range toolNames {
		a := args()
		switch name {
		case "search_fal_files":
			a = args("query", "jpg")
		case "get_fal_references":
			a = args("uid", 1)
		}
		if got := f.refused("former", name, a); got != readpolicy.DeniedUser {
			t.Errorf("%s without an actor: %q", name, got)
		}
		if got := f.refused("", name, a); got != readpolicy.DeniedUser {
			t.Errorf("%s with no user: %q", name, got)
		}
	}
}
