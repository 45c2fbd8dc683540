package builtin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/builtin"
	"github.com/t3agent/t3agent/internal/demo"
	"github.com/t3agent/t3agent/internal/demo/demotest"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/gate/gatetest"
	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

var (
	matrixUsers = []string{"admin", "editor", "intern", "former"}
	matrixZones = []tool.TrustZone{tool.ZoneLocal, tool.ZonePrivateHosted, tool.ZoneExternalEU, tool.ZoneExternalGlobal}
)

// matrixCalls are the arguments each tool is tried with, chosen to reach
// what a user must not see: the internal folder outside the editors'
// mount, the storage outside the allow-list, sensitive tables, pages
// outside the editors' web mount. A tool without an entry is called with
// no arguments.
var matrixCalls = map[string][]string{
	"list_fal_storages":   {`{}`},
	"browse_fal_folder":   {`{}`, `{"folder":"/user_upload/"}`, `{"folder":"/internal/"}`, `{"storage":2}`, `{"folder":"/../config/system"}`},
	"search_fal_files":    {`{"query":"pdf"}`, `{"query":"price"}`, `{"query":"minutes"}`},
	"get_fal_references":  {`{"uid":18}`, `{"uid":19}`, `{"uid":21}`},
	"find_missing_files":  {`{}`, `{"storage":2}`},
	"get_tca":             {`{}`, `{"table":"tt_content"}`, `{"table":"tt_content","path":"columns"}`, `{"table":"be_users"}`, `{"table":"sys_file_storage","path":"columns"}`},
	"validate_tca":        {`{}`, `{"table":"be_users"}`},
	"resolve_url":         {`{"url":"/"}`, `{"url":"/products/internal-pricing"}`, `{"url":"/de/produkte"}`},
	"read_fal_asset_meta": {`{"uid":19}`, `{"uid":21}`},
	"list_be_users":       {`{}`},
	"list_be_groups":      {`{}`},
	"list_be_users_raw":   {`{}`},
	"get_full_tca":        {`{}`},
	"get_table_schema":    {`{"table":"tt_content"}`, `{"table":"be_users"}`},
	"read_records":        {`{"table":"be_users"}`, `{"table":"sys_file_storage"}`, `{"table":"sys_file","limit":50}`},
	"search_records":      {`{"query":"price"}`},
	"site_rag_query":      {`{"question":"internal pricing price list"}`, `{"question":"Aqua 200","language":"de"}`},
	"site_fetch_source":   {`{"source_id":"ke_search:1"}`, `{"source_id":"indexed_search:0123456789abcdef0123456789abcdef"}`},
}

// leakPatterns match what no answer may hold, whoever asks: password
// hashes.
var leakPatterns = []*regexp.Regexp{
	regexp.MustCompile(`\$argon2i|\$2[aby]\$|\$pbkdf2|\$P\$`),
}

// foreignStorage matches the storage outside the allow-list, which no
// file tool shows to anybody. (The sys_file table itself is a record
// table admins may read with read_records.)
var foreignStorage = regexp.MustCompile(`(?i)board archive|minutes-2025|1:/board/|2:/board/`)

// nonAdminLeaks match what only admins may see: the internal folder of
// storage 1 outside the editors' mount and the internal pricing page.
var nonAdminLeaks = regexp.MustCompile(`(?i)price-list-2026|1:/internal/|pages:9\b|\[9\] Internal pricing|Internal documents`)

// ownGroups are the groups whose answers get the strict checks: no
// credential-like column named, no sensitive table listed.
var ownGroups = map[string]bool{tool.GroupFiles: true, tool.GroupAccounts: true, tool.GroupRAG: true}

var ownStructure = map[string]bool{"get_tca": true, "validate_tca": true, "resolve_url": true, "read_fal_asset_meta": true}

var sensitiveLine = regexp.MustCompile(`(?m)^(- |  )?(be_users|be_groups|fe_users|fe_groups|sys_log|sys_history|sys_refindex|sys_http_report|sys_lockedrecords|sys_file_storage)\b`)

var credentialField = regexp.MustCompile(`(?im)^\s*-?\s*(password|mfa|api_token|access_token|l18n_diffsource|password_reset_token)\b`)

// TestCatalogueMatrix runs every builtin tool for every demo user in
// every trust zone through the real gate: the decision follows the
// tool's declaration (admin-only tools refused to everyone else with the
// gate's neutral sentence, classes above a zone's ceiling never offered,
// so secretAdjacent and systemDiagnostics tools never reach an
// externalGlobal provider), and no answer leaks password hashes, the
// storage outside the allow-list, a server path, the encryption key, or,
// to non-admins, files outside their mount and pages outside their web
// mount.
func TestCatalogueMatrix(t *testing.T) {
	t.Parallel()
	d := demotest.New(t, typo3.DialectSQLite)
	site, err := typo3.NewSite(typo3.SiteParams{DB: d.Open(t), TCA: tca.Bundled(), Root: d.Root, Now: demo.DefaultNow})
	if err != nil {
		t.Fatal(err)
	}
	tools := builtin.Tools(site, readpolicy.New(site.TCA))
	g := gatetest.New(t, nil, tools...)
	users := gatetest.Actors(t, site, matrixUsers...)
	if users["former"] != nil {
		t.Fatal("former can act; the matrix needs a user who cannot")
	}
	ctx := context.Background()
	// Tools disabled by default are switched on, so that their answers
	// are checked too; the gate's other checks still apply.
	for _, tl := range tools {
		if s := tl.Spec(); !s.EnabledByDefault {
			if _, err := g.Availability().SetTool(ctx, gate.SetToolParams{Name: s.Name, Enabled: true, By: "matrix"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	secrets := plantedSecrets(t, d.Root)

	answered := map[string]int{}
	for _, tl := range tools {
		s := tl.Spec()
		calls := matrixCalls[s.Name]
		if calls == nil {
			calls = []string{`{}`}
		}
		for _, user := range matrixUsers {
			actor := users[user]
			admin := actor != nil && actor.Admin
			for _, zone := range matrixZones {
				cfg := gate.Config{Name: "matrix", TrustZone: zone}
				dec, err := g.Decide(ctx, gate.DecideParams{Tool: s.Name, Actor: actor, Config: cfg})
				if err != nil {
					t.Fatal(err)
				}
				var want gate.Reason
				switch {
				case s.AdminOnly && !admin:
					want = gate.ReasonRequiresAdmin
				case !zone.Permits(s.DataClass):
					want = gate.ReasonTrustZone
				}
				if dec.Allowed != (want == "") || !dec.Allowed && dec.Reason != want {
					t.Errorf("%s as %s in %s: decision %+v, want reason %q", s.Name, user, zone, dec, want)
				}
				if zone == tool.ZoneExternalGlobal && dec.Allowed &&
					(s.DataClass == tool.SecretAdjacent || s.DataClass == tool.SystemDiagnostics) {
					t.Errorf("%s (%s) is offered to an externalGlobal provider", s.Name, s.DataClass)
				}
				for _, args := range calls {
					what := fmt.Sprintf("%s %s as %s in %s", s.Name, args, user, zone)
					res := g.Invoke(ctx, gate.InvokeParams{Name: s.Name, Args: json.RawMessage(args),
						Call: tool.Call{Actor: actor, RunID: "matrix"}, Config: cfg})
					if !dec.Allowed {
						if want := `Error: tool "` + s.Name + `" is not available.`; res.Content != want || !res.IsError {
							t.Errorf("%s: %q, want the gate's neutral %q", what, res.Content, want)
						}
						continue
					}
					answered[s.Name]++
					checkAnswer(t, what, s, admin, res, secrets)
				}
			}
		}
	}
	// Every tool answered somebody somewhere: the matrix is not passing
	// by refusing everything.
	for _, tl := range tools {
		if answered[tl.Spec().Name] == 0 {
			t.Errorf("%s never answered", tl.Spec().Name)
		}
	}

	// The offer to an externalGlobal provider holds nothing above
	// editorContent, for the admin too.
	off, err := g.Offer(ctx, gate.OfferParams{Actor: users["admin"], Config: gate.Config{Name: "matrix", TrustZone: tool.ZoneExternalGlobal}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range off.Specs() {
		if s.DataClass.Rank() > tool.EditorContent.Rank() {
			t.Errorf("externalGlobal is offered %s (%s)", s.Name, s.DataClass)
		}
	}
}

// plantedSecrets are values of the demo installation no answer may
// contain: the project root (a server path) and settings.php's
// encryption key.
func plantedSecrets(t *testing.T, root string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "config", "system", "settings.php"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`'encryptionKey' => '([0-9a-f]+)'`).FindSubmatch(b)
	if m == nil {
		t.Fatal("settings.php has no encryption key")
	}
	return []string{root, string(m[1])}
}

func checkAnswer(t *testing.T, what string, s tool.Spec, admin bool, res tool.Result, secrets []string) {
	t.Helper()
	text := res.Content
	for _, a := range res.Artifacts {
		text += "\n" + a.Text
		for _, r := range a.Rows {
			text += "\n" + strings.Join(r, " ")
		}
	}
	for _, re := range leakPatterns {
		if m := re.FindString(text); m != "" {
			t.Errorf("%s leaks %q:\n%s", what, m, res.Content)
		}
	}
	for _, sec := range secrets {
		if strings.Contains(text, sec) {
			t.Errorf("%s shows a server path or the encryption key:\n%s", what, res.Content)
		}
	}
	if !admin {
		if m := nonAdminLeaks.FindString(text); m != "" {
			t.Errorf("%s shows a non-admin %q:\n%s", what, m, res.Content)
		}
	}
	if ownGroups[s.Group] || ownStructure[s.Name] {
		if m := foreignStorage.FindString(text); m != "" {
			t.Errorf("%s shows the storage outside the allow-list %q:\n%s", what, m, res.Content)
		}
		if m := credentialField.FindString(text); m != "" {
			t.Errorf("%s names a credential field %q:\n%s", what, m, res.Content)
		}
		if s.Group != tool.GroupAccounts {
			if m := sensitiveLine.FindString(text); m != "" {
				t.Errorf("%s lists a sensitive table %q:\n%s", what, m, res.Content)
			}
		}
	}
}
