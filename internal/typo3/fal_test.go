package typo3_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/demo/demotest"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

func TestCleanIdentifier(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                         "/",
		"/":                        "/",
		"user_upload":              "/user_upload",
		"/user_upload/":            "/user_upload/",
		"//user_upload///images//": "/user_upload/images/",
		"/user_upload/a b.jpg":     "/user_upload/a b.jpg",
		"/user_upload/ä.pdf":       "/user_upload/ä.pdf",
		"/a%zz":                    "/a%zz", // not an escape
	} {
		got, err := typo3.CleanIdentifier(in)
		if err != nil || got != want {
			t.Errorf("CleanIdentifier(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, why := range map[string]string{
		"/../etc/passwd":                `".."`,
		"/user_upload/../..":            `".."`,
		"/user_upload/./x":              `"."`,
		"..":                            `".."`,
		"/user_upload/.htaccess":        "hidden",
		"/.git/config":                  "hidden",
		"/%2e%2e/etc":                   "percent-encoded",
		"/user_upload%2F..%2F":          "percent-encoded",
		"/%2E%2E%2Fconfig":              "percent-encoded",
		`/user_upload\..\config`:        "backslash",
		"/user_upload/\x00.jpg":         "control",
		"/user_upload/\n":               "control",
		"/" + strings.Repeat("a", 1100): "1024",
	} {
		got, err := typo3.CleanIdentifier(in)
		if !errors.Is(err, typo3.ErrBadIdentifierPath) || !strings.Contains(err.Error(), why) {
			t.Errorf("CleanIdentifier(%q) = %q, %v; want a refusal mentioning %s", in, got, err, why)
		}
	}
}

func FuzzCleanIdentifier(f *testing.F) {
	for _, s := range []string{"/", "/user_upload/", "/../x", "/a/./b", "/%2e%2e/", "\\x", "/.env", "a//b/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := typo3.CleanIdentifier(s)
		if err != nil {
			if !errors.Is(err, typo3.ErrBadIdentifierPath) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("bad error %v", err)
			}
			return
		}
		if !strings.HasPrefix(got, "/") || strings.Contains(got, "//") || strings.Contains(got, "/.") ||
			strings.Contains(got, `\`) {
			t.Fatalf("CleanIdentifier(%q) = %q", s, got)
		}
		if again, err := typo3.CleanIdentifier(got); err != nil || again != got {
			t.Fatalf("not idempotent: %q → %q → %q, %v", s, got, again, err)
		}
	})
}

func TestParseStorageConfiguration(t *testing.T) {
	t.Parallel()
	doc := `<?xml version="1.0" encoding="utf-8" standalone="yes" ?>
<T3FlexForms><data><sheet index="sDEF"><language index="lDEF">
<field index="basePath"><value index="vDEF"> fileadmin/ </value></field>
<field index="pathType"><value index="vDEF">relative</value></field>
<field index="secretKey"><value index="vDEF">s3cr3t</value><value index="vOther">x</value></field>
</language></sheet><sheet index="sOther"><language index="lDEF"><field index="basePath"><value index="vDEF">/etc/</value></field></language></sheet></data></T3FlexForms>`
	got := typo3.ParseStorageConfiguration(doc)
	if got["basePath"] != "fileadmin/" || got["pathType"] != "relative" || len(got) != 3 {
		t.Errorf("parsed %v", got)
	}
	for _, bad := range []string{"", "<T3FlexForms>", "not xml", "<a><b></a>", strings.Repeat("<x>", 70000)} {
		if got := typo3.ParseStorageConfiguration(bad); len(got) != 0 {
			t.Errorf("%.40q parsed as %v", bad, got)
		}
	}
}

func FuzzParseStorageConfiguration(f *testing.F) {
	f.Add(`<T3FlexForms><data><sheet index="sDEF"><language index="lDEF"><field index="basePath"><value index="vDEF">fileadmin/</value></field></language></sheet></data></T3FlexForms>`)
	f.Add(`<T3FlexForms><data><sheet index="sDEF">`)
	f.Add(`<!DOCTYPE x [<!ENTITY a "aaaa">]><T3FlexForms/>`)
	f.Fuzz(func(t *testing.T, s string) {
		_ = typo3.ParseStorageConfiguration(s) // must not panic or hang
	})
}

// falSite is the demo with its installation folder, as the file tools
// read it.
func falSite(t *testing.T, d typo3.Dialect) (*typo3.Site, string) {
	t.Helper()
	s := demotest.New(t, d)
	site, err := typo3.NewSite(typo3.SiteParams{DB: s.Open(t), TCA: tca.Bundled(), Root: s.Root, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	return site, s.Root
}

func TestFileAccessDemo(t *testing.T) {
	t.Parallel()
	for _, d := range allDialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			site, root := falSite(t, d)
			ctx := context.Background()
			all, err := site.FileStorages(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(all) != 2 || all[0].Name != "fileadmin" || all[0].BaseDir != filepath.Join(root, "public", "fileadmin") ||
				!all[0].Public || !all[0].Default || all[1].BaseDir != filepath.Join(root, "public", "archive") || all[1].Public {
				t.Fatalf("storages %+v %+v", all[0], all[1])
			}
			access := func(name string) *typo3.FileAccess {
				u, err := site.BackendUserByName(ctx, name)
				if err != nil {
					t.Fatal(err)
				}
				fa, err := site.NewFileAccess(ctx, u, nil)
				if err != nil {
					t.Fatal(err)
				}
				return fa
			}
			admin, editor, intern := access("admin"), access("editor"), access("intern")
			if !slices.Equal(admin.StorageUIDs(), []int64{1}) || !slices.Equal(editor.StorageUIDs(), []int64{1}) ||
				len(intern.StorageUIDs()) != 0 {
				t.Errorf("storages: admin %v editor %v intern %v", admin.StorageUIDs(), editor.StorageUIDs(), intern.StorageUIDs())
			}
			if m := editor.Mounts(1); len(m) != 1 || m[0].Folder != "/user_upload/" || m[0].Title != "Editors' uploads" {
				t.Errorf("editor mounts %+v", m)
			}
			for _, c := range []struct {
				fa      *typo3.FileAccess
				who, id string
				file    bool
				want    bool
			}{
				{admin, "admin", "/internal/price-list-2026.pdf", true, true},
				{editor, "editor", "/internal/price-list-2026.pdf", true, false},
				{editor, "editor", "/user_upload/logo.svg", true, true},
				{editor, "editor", "/user_upload/../internal/price-list-2026.pdf", true, false},
				{editor, "editor", "/user_uploads/x.pdf", true, false},
				{editor, "editor", "/user_upload/.editor-notes.txt", true, false},
				{intern, "intern", "/user_upload/logo.svg", true, false},
				{editor, "editor", "/user_upload", false, true},
				{editor, "editor", "/user_upload/images/", false, true},
				{editor, "editor", "/", false, false},
				{editor, "editor", "/internal/", false, false},
				{admin, "admin", "/", false, true},
			} {
				var got bool
				if c.file {
					got = c.fa.CanReadFile(1, c.id)
				} else {
					got = c.fa.CanReadFolder(1, c.id)
				}
				if got != c.want {
					t.Errorf("%s %s: %v, want %v", c.who, c.id, got, c.want)
				}
			}
			if admin.CanReadFile(2, "/board/minutes-2025-q4.pdf") || admin.Storage(2) != nil {
				t.Error("storage 2 is outside the allow-list, admins included")
			}
			wide, err := site.NewFileAccess(ctx, admin.User(), []int64{1, 2})
			if err != nil || !wide.CanReadFile(2, "/board/minutes-2025-q4.pdf") {
				t.Errorf("an explicit allow-list of 1,2 should open storage 2 to admins: %v", err)
			}
		})
	}
}

// TestLocate: a path reaches its target only while every symlink on the
// way stays inside the storage and never reaches a hidden entry.
func TestLocate(t *testing.T) {
	t.Parallel()
	site, root := falSite(t, "sqlite")
	all, err := site.FileStorages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	st := all[0]
	base := st.BaseDir
	link := func(target, name string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(base, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	link(filepath.Join(root, "config", "system"), "user_upload/system")
	link(filepath.Join(root, "config", "system", "settings.php"), "user_upload/settings.php")
	link("../.htaccess", "user_upload/htaccess")
	link("../internal", "user_upload/internal-link")
	link("images", "user_upload/pictures")
	link("/etc", "user_upload/etc")
	for id, want := range map[string]string{
		"/":                          "/",
		"/user_upload/logo.svg":      "/user_upload/logo.svg",
		"/user_upload/pictures/":     "/user_upload/images",
		"/user_upload/internal-link": "/internal",
		"/user_upload/internal-link/price-list-2026.pdf": "/internal/price-list-2026.pdf",
	} {
		real, realID, err := st.Locate(id)
		if err != nil || realID != want || !strings.HasPrefix(real, base) {
			t.Errorf("Locate(%q) = %q, %q, %v; want %q", id, real, realID, err, want)
		}
	}
	for _, id := range []string{"/user_upload/system", "/user_upload/system/settings.php", "/user_upload/settings.php",
		"/user_upload/htaccess", "/user_upload/etc", "/user_upload/etc/passwd", "/nothing", "/../config"} {
		if real, realID, err := st.Locate(id); !errors.Is(err, typo3.ErrOutsideStorage) || real != "" || realID != "" {
			t.Errorf("Locate(%q) = %q, %q, %v; want ErrOutsideStorage", id, real, realID, err)
		}
	}
}
