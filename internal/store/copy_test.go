package store_test

import (
	"crypto/sha256"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // "pgx" for raw statements
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/dbtest"
	"github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/secret"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/store/storetest"
	"github.com/t3agent/t3agent/internal/tool"
)

// kinds are the store databases every test here runs on.
var kinds = []struct {
	name   string
	newDSN func(tb testing.TB) string
}{
	{"sqlite", func(tb testing.TB) string { return "sqlite:" + filepath.Join(tb.TempDir(), "t3agent.db") }},
	{"postgres", func(tb testing.TB) string { return dbtest.Postgres(tb) }},
}

func openStore(tb testing.TB, dsn string) store.Store {
	tb.Helper()
	st, err := store.Open(tb.Context(), dsn, store.OpenParams{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = st.Close() })
	return st
}

func inventory(tb testing.TB, dsn string) []store.TableSum {
	tb.Helper()
	inv, err := store.Inventory(tb.Context(), dsn)
	if err != nil {
		tb.Fatal(err)
	}
	return inv
}

// sameInventory fails naming each table whose rows differ, a table one
// side lacks included.
func sameInventory(t *testing.T, what string, want, got []store.TableSum) {
	t.Helper()
	byName := map[string]store.TableSum{}
	for _, s := range got {
		byName[s.Table] = s
	}
	for _, w := range want {
		g, ok := byName[w.Table]
		switch {
		case !ok:
			t.Errorf("%s: table %s (%d rows) is missing", what, w.Table, w.Rows)
		case g != w:
			t.Errorf("%s: table %s has %d rows, checksum %.12s; the source %d rows, %.12s", what, w.Table, g.Rows, g.Checksum, w.Rows, w.Checksum)
		}
		delete(byName, w.Table)
	}
	for name := range byName {
		t.Errorf("%s: table %s is not in the source", what, name)
	}
}

// sealedFixture writes the values sealed with the master key that a
// copy must carry so they still open: a provider's API key and header
// and an MCP server's bearer token.
type sealedFixture struct {
	keys   *secret.Keyring
	mcpURL string
}

const (
	providerKey = "sk-live-Ünïcode-123"
	mcpToken    = "mcp-token-42"
)

func newSealed(t *testing.T) sealedFixture {
	t.Helper()
	k, err := secret.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := secret.NewKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	// A real MCP server that answers only with the token.
	s := sdk.NewServer(&sdk.Implementation{Name: "sealed-check", Version: "1.0.0"}, nil)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+mcpToken {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		srv.Close()
		for ss := range s.Sessions() {
			_ = ss.Close()
		}
	})
	return sealedFixture{keys: keys, mcpURL: srv.URL}
}

func (f sealedFixture) write(t *testing.T, st store.Store) {
	t.Helper()
	ctx := t.Context()
	doc, err := agentconfig.ParseDocument([]byte(`
providers:
  - identifier: sealed
    adapter: openai
    endpoint: https://api.example.com/v1
    api_key: ` + providerKey + `
    headers:
      X-Tenant: tenant-secret
    trust_zone: externalGlobal
`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agentconfig.New(agentconfig.Params{Store: st, Keyring: f.keys}).Apply(ctx, agentconfig.ApplyParams{Document: doc, By: "admin"}); err != nil {
		t.Fatal(err)
	}
	svc, err := mcp.New(mcp.Params{Store: st, Keyring: f.keys, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	if _, err := svc.Add(ctx, mcp.AddParams{Identifier: "sealed", URL: f.mcpURL, Auth: mcp.AuthBearer, Credential: mcpToken,
		DataClass: tool.EditorContent, By: "admin"}); err != nil {
		t.Fatal(err)
	}
}

// check opens every sealed value on st with the same keyring.
func (f sealedFixture) check(t *testing.T, st store.Store) {
	t.Helper()
	ctx := t.Context()
	cfgs := agentconfig.New(agentconfig.Params{Store: st, Keyring: f.keys})
	snap, err := cfgs.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(snap.Providers, func(p agentconfig.Provider) bool { return p.Identifier == "sealed" })
	if i < 0 {
		t.Fatal("the provider with the sealed key is gone")
	}
	if key, err := cfgs.APIKey(snap.Providers[i]); err != nil || key != providerKey {
		t.Errorf("API key after the copy = %q, %v", key, err)
	}
	if h, err := cfgs.Headers(snap.Providers[i]); err != nil || h["X-Tenant"] != "tenant-secret" {
		t.Errorf("headers after the copy = %v, %v", h, err)
	}
	svc, err := mcp.New(mcp.Params{Store: st, Keyring: f.keys, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	if res, err := svc.Ping(ctx, "sealed"); err != nil || res.ServerName != "sealed-check" {
		t.Errorf("ping with the copied MCP credential = %+v, %v", res, err)
	}
}

// filled is a store filled by the store suite plus sealed values.
func filled(t *testing.T, dsn string, sf sealedFixture) {
	t.Helper()
	st := openStore(t, dsn)
	storetest.Fill(t, st, storetest.FillParams{Runs: 3, EventsPerRun: 5})
	sf.write(t, st)
}

// TestFillCoversEveryTable: the suite's sample data puts rows in every
// table of the schema, so the round trips below prove every table is
// carried. A migration that adds a table fails here until Fill writes it.
func TestFillCoversEveryTable(t *testing.T) {
	t.Parallel()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			dsn := k.newDSN(t)
			st := openStore(t, dsn)
			storetest.Fill(t, st, storetest.FillParams{})
			inv := inventory(t, dsn)
			if len(inv) < 20 {
				t.Fatalf("the inventory lists %d tables: %v", len(inv), inv)
			}
			for _, s := range inv {
				if s.Rows == 0 {
					t.Errorf("storetest.Fill leaves table %s empty; add rows for it so backup, restore and copy are proven on it", s.Table)
				}
			}
		})
	}
}

// TestBackupRestoreRoundTrip: a store of either database, backed up while
// open and restored into a new store of either database, holds the same
// rows in every table, its sealed values open with the same master key,
// and new ids continue past the old ones.
func TestBackupRestoreRoundTrip(t *testing.T) {
	t.Parallel()
	for _, from := range kinds {
		for _, to := range kinds {
			t.Run(from.name+"_to_"+to.name, func(t *testing.T) {
				t.Parallel()
				ctx := t.Context()
				sf := newSealed(t)
				src := from.newDSN(t)
				filled(t, src, sf)
				serving := openStore(t, src) // the store stays open: backups are taken while serving

				file := filepath.Join(t.TempDir(), "backup.t3b")
				rep, err := store.Backup(ctx, store.BackupParams{From: src, To: file})
				if err != nil {
					t.Fatal(err)
				}
				if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != rep.Bytes {
					t.Errorf("backup file %v (%v), report %+v", fi, err, rep)
				}
				if _, err := os.Stat(file + "-wal"); err == nil {
					t.Error("the backup left a write-ahead log beside it")
				}
				want := inventory(t, src)
				sameInventory(t, "backup", want, rep.Tables)
				if _, err := store.Backup(ctx, store.BackupParams{From: src, To: file}); err == nil || !strings.Contains(err.Error(), "already exists") {
					t.Errorf("a second backup onto the file: %v", err)
				}

				dst := to.newDSN(t)
				crep, err := store.Restore(ctx, store.RestoreParams{From: file, To: dst})
				if err != nil {
					t.Fatal(err)
				}
				if crep.Rows() == 0 || crep.SchemaVersion != rep.SchemaVersion {
					t.Errorf("restore report %+v", crep)
				}
				sameInventory(t, "restore", want, inventory(t, dst))

				restored := openStore(t, dst)
				sf.check(t, restored)
				checkSequences(t, serving, restored)
			})
		}
	}
}

// checkSequences: an id handed out after the copy is past every id the
// source handed out.
func checkSequences(t *testing.T, src, dst store.Store) {
	t.Helper()
	ctx := t.Context()
	last, err := src.GovernanceEvents(ctx, store.ListGovernanceEventsParams{Limit: 1})
	if err != nil || len(last) != 1 {
		t.Fatal(err)
	}
	ev, err := dst.RecordGovernanceEvent(ctx, store.RecordGovernanceEventParams{Kind: "tool_denied", Tool: "y", Reason: "trust_zone", Zone: "local", Ceiling: "secretAdjacent", DataClass: "publicContent"})
	if err != nil || ev.ID <= last[0].ID {
		t.Errorf("a new governance event got id %d (%v); the source's last was %d", ev.ID, err, last[0].ID)
	}
	convs, err := src.Conversations(ctx, store.ListConversationsParams{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := dst.CreateConversation(ctx, store.CreateConversationParams{OwnerUID: 1, OwnerUsername: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	for _, old := range convs {
		if c.ID <= old.ID {
			t.Errorf("a new conversation got id %d, not past %d", c.ID, old.ID)
		}
	}
}

func fileSum(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// TestCopySQLiteToPostgres is the move to PostgreSQL: every table with
// its ids, the sealed values open, the sequences past the highest id,
// and the source file not changed by one byte.
func TestCopySQLiteToPostgres(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	sf := newSealed(t)
	path := filepath.Join(t.TempDir(), "t3agent.db")
	src := "sqlite:" + path
	filled(t, src, sf)
	want := inventory(t, src)
	before := fileSum(t, path)

	dst := dbtest.Postgres(t)
	rep, err := store.Copy(ctx, store.CopyParams{From: src, To: dst})
	if err != nil {
		t.Fatal(err)
	}
	sameInventory(t, "copy report", want, rep.Tables)
	sameInventory(t, "copy", want, inventory(t, dst))
	if after := fileSum(t, path); after != before {
		t.Error("the copy changed the source file")
	}
	sf.check(t, openStore(t, dst))
	checkSequences(t, openStore(t, src), openStore(t, dst))

	// A second copy finds the target in use and changes nothing.
	if _, err := store.Copy(ctx, store.CopyParams{From: src, To: dst}); err == nil || !strings.Contains(err.Error(), "is not empty") {
		t.Errorf("copy into a used store: %v", err)
	}
}

// TestCopyRefusals: a used target, the same database twice, a database
// without a store and a file that is no backup are refused in one
// sentence, and the target keeps what it had.
func TestCopyRefusals(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			src := "sqlite:" + filepath.Join(t.TempDir(), "src.db")
			storetest.Fill(t, openStore(t, src), storetest.FillParams{})
			dst := k.newDSN(t)
			used := openStore(t, dst)
			if _, err := used.SetSetting(ctx, store.SetSettingParams{Key: "mine", Value: "keep"}); err != nil {
				t.Fatal(err)
			}
			_, err := store.Copy(ctx, store.CopyParams{From: src, To: dst})
			if err == nil || !strings.Contains(err.Error(), "is not empty (table settings has 1 rows)") || strings.Contains(err.Error(), "\n") {
				t.Errorf("copy into a used store: %v", err)
			}
			if v, err := used.Setting(ctx, "mine"); err != nil || v != "keep" {
				t.Errorf("the used store lost its setting: %q, %v", v, err)
			}
			if _, err := store.Copy(ctx, store.CopyParams{From: dst, To: dst}); err == nil || !strings.Contains(err.Error(), "the same database") {
				t.Errorf("copy onto itself: %v", err)
			}
		})
	}
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	db, err := sql.Open("sqlite", empty)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE x (a INTEGER)`); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	target := "sqlite:" + filepath.Join(dir, "target.db")
	for _, c := range []struct {
		from string
		want string
	}{
		{empty, "holds no t3agent store"},
		{filepath.Join(dir, "missing.db"), "does not exist"},
	} {
		if _, err := store.Copy(ctx, store.CopyParams{From: "sqlite:" + c.from, To: target}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("copy from %s: %v, want %q", c.from, err, c.want)
		}
	}
	notBackup := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notBackup, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Restore(ctx, store.RestoreParams{From: notBackup, To: target}); err == nil || !strings.Contains(err.Error(), "is not a backup") {
		t.Errorf("restore of a text file: %v", err)
	}
}

// TestCopyCarriesUnknownTables: a table no code here names (as a later
// migration would add) is found in the catalog and copied with its rows
// and sequence.
func TestCopyCarriesUnknownTables(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "t3agent.db")
	src := "sqlite:" + path
	storetest.Fill(t, openStore(t, src), storetest.FillParams{})
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE future_notes (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL REFERENCES runs (id), body TEXT NOT NULL, done INTEGER NOT NULL, at TIMESTAMP)`,
		`INSERT INTO future_notes (run_id, body, done, at) VALUES ('fill-done', 'über', 1, '2025-03-14 09:26:53.5897+00:00'), ('fill-done', 'b', 0, NULL)`,
		`DELETE FROM future_notes WHERE body = 'b'`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	_ = raw.Close()

	dst := dbtest.Postgres(t)
	openStore(t, dst) // migrated, as an operator's first start would
	pg, err := sql.Open("pgx", dst)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	if _, err := pg.Exec(`CREATE TABLE future_notes (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, run_id text NOT NULL REFERENCES runs (id), body text NOT NULL, done boolean NOT NULL, at timestamptz)`); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Copy(ctx, store.CopyParams{From: src, To: dst}); err != nil {
		t.Fatal(err)
	}
	sameInventory(t, "copy", inventory(t, src), inventory(t, dst))
	var id int64
	if err := pg.QueryRow(`INSERT INTO future_notes (run_id, body, done) VALUES ('fill-done', 'next', false) RETURNING id`).Scan(&id); err != nil || id != 3 {
		t.Errorf("the next id of the unknown table = %d, %v; want 3 (past the deleted 2)", id, err)
	}
}
