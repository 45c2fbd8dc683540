package files_test

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/builtin/files"
	"github.com/t3agent/t3agent/internal/demo"
	"github.com/t3agent/t3agent/internal/demo/demotest"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/gate/gatetest"
	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

// BenchmarkSearchFalFiles runs search_fal_files through the gate on the
// 200k demo (10 000 pages, 200 000 content elements), as it is and with
// 100 000 more indexed files (half inside the editors' mount, half in the
// internal folder), for the admin and for an editor, whose search scans
// up to 1000 rows and filters them by mount. "datasheet" matches many
// files, "solar" one: a full scan. p50-ms and p95-ms are the median and
// 95th percentile of the calls.
func BenchmarkSearchFalFiles(b *testing.B) {
	for _, d := range []typo3.Dialect{typo3.DialectSQLite, typo3.DialectMySQL} {
		b.Run(string(d), func(b *testing.B) {
			s := demotest.NewWith(b, d, demo.InitParams{Pages: 10000, Content: 200000})
			site, err := typo3.NewSite(typo3.SiteParams{DB: s.Open(b), TCA: tca.Bundled(), Root: s.Root, Now: demo.DefaultNow})
			if err != nil {
				b.Fatal(err)
			}
			g := gatetest.New(b, nil, files.Tools(site, readpolicy.New(site.TCA), nil)...)
			users := gatetest.Actors(b, site, "admin", "editor")
			for _, extra := range []int{0, 100000} {
				if extra > 0 {
					plantFiles(b, s.DSN, extra)
				}
				for _, user := range []string{"admin", "editor"} {
					for _, q := range []string{"datasheet", "solar"} {
						b.Run(fmt.Sprintf("files=%d/%s/%s", 21+extra, user, q), func(b *testing.B) {
							args := json.RawMessage(`{"query":"` + q + `","limit":20}`)
							call := func() {
								r := g.Invoke(context.Background(), gate.InvokeParams{Name: "search_fal_files", Args: args,
									Call: tool.Call{Actor: users[user]}, Config: gate.Config{Name: "bench", TrustZone: tool.ZoneLocal}})
								if r.IsError || !strings.Contains(r.Content, "file(s) matching") {
									b.Fatalf("%s: %s", q, r.Content)
								}
							}
							call() // warm the statement caches
							times := make([]time.Duration, 0, b.N)
							b.ResetTimer()
							for i := 0; i < b.N; i++ {
								start := time.Now()
								call()
								times = append(times, time.Since(start))
							}
							b.StopTimer()
							slices.Sort(times)
							b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
							b.ReportMetric(float64(times[len(times)*95/100].Microseconds())/1000, "p95-ms")
						})
					}
				}
			}
		})
	}
}

// plantFiles adds n sys_file rows with metadata, in batches.
func plantFiles(b *testing.B, dsn string, n int) {
	b.Helper()
	ctx := context.Background()
	db, err := typo3.Open(ctx, dsn, typo3.OpenParams{Writable: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	tx, err := db.SQL.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	const batch = 500
	for start := 0; start < n; start += batch {
		var fv, mv []string
		var fa, ma []any
		for i := start; i < min(start+batch, n); i++ {
			uid := 1000 + i
			folder := "/user_upload/import/"
			if i%2 == 1 {
				folder = "/internal/bulk/"
			}
			name, mime := fmt.Sprintf("product-%06d-datasheet.pdf", i), "application/pdf"
			if i%10 != 0 {
				name, mime = fmt.Sprintf("photo-%06d.jpg", i), "image/jpeg"
			}
			id := folder + name
			h := sha1.Sum([]byte(id))
			fh := sha1.Sum([]byte(folder))
			fv = append(fv, "(?, 0, ?, ?, ?, ?, 1, ?, 0, 1000)")
			fa = append(fa, uid, id, hex.EncodeToString(h[:]), hex.EncodeToString(fh[:]), name, mime)
			mv = append(mv, "(?, 0, ?, ?, 0, 0)")
			ma = append(ma, uid, uid, fmt.Sprintf("Imported file %d", i))
		}
		if _, err := tx.ExecContext(ctx, rebind(db, `INSERT INTO sys_file (uid, pid, identifier, identifier_hash, folder_hash, name, storage, mime_type, missing, size) VALUES `+strings.Join(fv, ", ")), fa...); err != nil {
			b.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, rebind(db, `INSERT INTO sys_file_metadata (uid, pid, file, title, sys_language_uid, t3ver_wsid) VALUES `+strings.Join(mv, ", ")), ma...); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}

// rebind numbers the placeholders for PostgreSQL.
func rebind(db *typo3.DB, q string) string {
	if db.Dialect != typo3.DialectPostgres {
		return q
	}
	var out strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			fmt.Fprintf(&out, "$%d", n)
			continue
		}
		out.WriteRune(r)
	}
	return out.String()
}
