package content_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/builtin/content"
	"github.com/t3agent/t3agent/internal/demo/demotest"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/gate/gatetest"
	"github.com/t3agent/t3agent/internal/logtest"
	"github.com/t3agent/t3agent/internal/readpolicy"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

// fixedNow is the site clock: between the demo's expired endtime
// (2020-01-01) and its future starttime (2030-01-01).
func fixedNow() time.Time { return time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC) }

// Secrets planted in the test database. None may ever appear in a tool's
// content or artifacts.
const (
	secretToken     = "SECRET-api-token-7f3c9e"
	secretFlex      = "SECRET-flex-apikey-41ab"
	secretFlexTok   = "SECRET-flex-token-0c17"
	secretHistOld   = "SECRET-history-old-55aa"
	secretHistNew   = "SECRET-history-new-66bb"
	secretDiff      = "SECRET-diffsource-77cc"
	secretSensitive = "SECRET-sensitive-row-88dd"
	secretGadget    = "SECRET-gadget-access-99ee"
)

func allSecrets() []string {
	return []string{secretToken, secretFlex, secretFlexTok, secretHistOld, secretHistNew, secretDiff, secretSensitive, secretGadget}
}

// sensitiveTables are every table of SPEC §4 rule 1, with one example of
// each prefix. The test database and TCA have all of them.
var sensitiveTables = []string{
	"be_users", "be_groups", "fe_users", "fe_groups", "sys_log", "sys_history", "sys_refindex",
	"sys_http_report", "sys_lockedrecords", "sys_file_storage", "tx_nrllm_configuration", "tx_nrvault_secret",
}

// users of the demo; former cannot act, so it calls with no actor.
var userNames = []string{"admin", "editor", "intern", "former"}

// env is one test's demo site behind the real gate, with the site
// database opened through a query log.
type env struct {
	d     typo3.Dialect
	site  *typo3.Site
	rw    *typo3.DB
	log   *queryLog
	gate  *gate.Gate
	logs  *logtest.Buffer
	users map[string]*typo3.BackendUser
}

// newGate registers tools behind a real gate whose log the test reads.
func newGate(t testing.TB, tools []tool.Tool) (*gate.Gate, *logtest.Buffer) {
	t.Helper()
	logs := &logtest.Buffer{}
	return gatetest.New(t, slog.New(slog.NewTextHandler(logs, nil)), tools...), logs
}

// siteOn builds a Site over db with tc and the fixed clock.
func siteOn(t testing.TB, db *typo3.DB, tc *tca.TCA, root string) *typo3.Site {
	t.Helper()
	s, err := typo3.NewSite(typo3.SiteParams{DB: db, TCA: tc, Root: root, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// newEnv opens dsn through the query log with TCA tc, registers the
// content tools behind a gate and loads the named users.
func newEnv(t testing.TB, d typo3.Dialect, dsn string, tc *tca.TCA, names []string) *env {
	t.Helper()
	ctx := context.Background()
	rw, err := typo3.Open(ctx, dsn, typo3.OpenParams{Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rw.Close() })
	db, log := openLogged(t, dsn, d)
	site := siteOn(t, db, tc, "")
	g, logs := newGate(t, content.Tools(site, readpolicy.New(tc)))
	return &env{d: d, site: site, rw: rw, log: log, gate: g, logs: logs, users: gatetest.Actors(t, site, names...)}
}

// call invokes a tool through the gate as user (nil for former), for a
// provider in the externalGlobal zone, whose ceiling is editorContent.
func (e *env) call(t testing.TB, user, name string, args map[string]any) tool.Result {
	t.Helper()
	return invoke(t, e.gate, e.logs, tool.ZoneExternalGlobal, e.users[user], name, args)
}

// invoke calls a tool through g as actor for a provider in zone, failing
// the test when the tool broke or was not offered (logs tells why).
func invoke(t testing.TB, g *gate.Gate, logs *logtest.Buffer, zone tool.TrustZone, actor *typo3.BackendUser,
	name string, args map[string]any) tool.Result {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	res := g.Invoke(context.Background(), gate.InvokeParams{
		Name: name, Args: raw,
		Call:   tool.Call{Actor: actor, RunID: "test"},
		Config: gate.Config{Name: "test", TrustZone: zone},
	})
	if strings.HasSuffix(res.Content, "failed.") || strings.Contains(res.Content, "is not available") {
		who := "nobody"
		if actor != nil {
			who = actor.Username
		}
		t.Fatalf("%s as %s %v: %s\nlog:\n%s", name, who, args, res.Content, logs.String())
	}
	return res
}

// exec runs a statement on the writable handle.
func (e *env) exec(t testing.TB, q string, args ...any) {
	t.Helper()
	if _, err := e.rw.SQL.ExecContext(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// insert adds one row, values bound.
func (e *env) insert(t testing.TB, table string, row map[string]any) {
	t.Helper()
	a := e.rw.NewArgs()
	cols := slices.Sorted(maps.Keys(row))
	names := make([]string, len(cols))
	ph := make([]string, len(cols))
	for i, c := range cols {
		names[i] = e.rw.MustQuote(c)
		ph[i] = a.Add(row[c])
	}
	e.exec(t, "INSERT INTO "+e.rw.MustQuote(table)+" ("+strings.Join(names, ", ")+") VALUES ("+strings.Join(ph, ", ")+")", a.Values()...)
}

// ---- the planted test site -------------------------------------------

// plantedTCA is the bundled TCA plus what plant adds to the database: a
// credential column on tt_content (searchable and a label_alt, so the
// suppression is exercised), TCA for every sensitive table (so rule 1,
// not a missing TCA entry, is what denies them) and a table whose label
// is a credential column.
func plantedTCA() *tca.TCA {
	tc := tca.Bundled()
	tt := tc.Tables["tt_content"]
	tt.Columns["api_token"] = &tca.Column{Name: "api_token", Config: tca.ColumnConfig{Type: "input"}}
	tt.ColumnOrder = append(tt.ColumnOrder, "api_token")
	tt.Ctrl.SearchFields = append(tt.Ctrl.SearchFields, "api_token")
	tt.Ctrl.LabelAlt = append([]string{"api_token"}, tt.Ctrl.LabelAlt...)
	for _, name := range []string{"sys_log", "sys_history", "sys_refindex", "sys_http_report", "sys_lockedrecords",
		"tx_nrllm_configuration", "tx_nrvault_secret"} {
		if tc.Tables[name] == nil {
			tc.Tables[name] = simpleTable(name, "title", "title", "secret_value")
		}
	}
	for _, name := range []string{"be_users", "be_groups", "sys_file_storage"} {
		// Not adminOnly, so only rule 1 stands between a user and them.
		tc.Tables[name].Ctrl.AdminOnly = false
	}
	g := simpleTable("tx_demo_gadget", "access_token", "access_token", "title")
	g.Ctrl.LabelAlt = []string{"title"}
	g.Ctrl.SearchFields = []string{"access_token", "title"}
	tc.Tables["tx_demo_gadget"] = g
	return tc
}

// simpleTable is a TCA table with text columns, a delete flag and a label.
func simpleTable(name, label string, cols ...string) *tca.Table {
	t := &tca.Table{Name: name, Columns: map[string]*tca.Column{}, Ctrl: tca.Ctrl{Label: label, Delete: "deleted", SearchFields: cols}}
	for _, c := range cols {
		t.Columns[c] = &tca.Column{Name: c, Config: tca.ColumnConfig{Type: "input"}}
		t.ColumnOrder = append(t.ColumnOrder, c)
	}
	return t
}

// plantedFlexForm holds credential-named plugin settings and one
// harmless one.
const plantedFlexForm = `<?xml version="1.0" encoding="utf-8" standalone="yes" ?>
<T3FlexForms><data><sheet index="sDEF"><language index="lDEF">
<field index="settings.apiKey"><value index="vDEF">` + secretFlex + `</value></field>
<field index="settings.token"><value index="vDEF">` + secretFlexTok + `</value></field>
<field index="settings.title"><value index="vDEF">Visible flex title</value></field>
</language></sheet></data></T3FlexForms>`

// plant adds the secrets to the database: tt_content.api_token on every
// row, credential-named FlexForm settings on tt_content 1 (page 6, in the
// editor's mount) and 6 (page 19), sys_history entries of tt_content 1
// changing api_token and l10n_diffsource, the sensitive tables the demo
// lacks, the credential-labelled tx_demo_gadget table, and every
// sensitive table in the Editors' tables_select.
func (e *env) plant(t testing.TB) {
	t.Helper()
	e.exec(t, "ALTER TABLE tt_content ADD api_token VARCHAR(255) DEFAULT '' NOT NULL")
	e.exec(t, "UPDATE tt_content SET api_token = "+e.rw.Placeholder(1), secretToken)
	a := e.rw.NewArgs()
	e.exec(t, "UPDATE tt_content SET pi_flexform = "+a.Add(plantedFlexForm)+" WHERE uid IN (1, 6)", a.Values()...)
	hist := func(uid, ts, action int64, data string) {
		e.insert(t, "sys_history", map[string]any{"uid": uid, "tstamp": ts, "actiontype": action, "usertype": "BE",
			"userid": 2, "originaluserid": 1, "recuid": 1, "tablename": "tt_content", "history_data": data,
			"workspace": 0, "correlation_id": ""})
	}
	hist(900001, fixedNow().Unix()-3600, 2, `{"oldRecord":{"api_token":"`+secretHistOld+`","header":"Old header","l10n_diffsource":"a:1:{s:9:\"api_token\";s:4:\"`+secretDiff+`\";}"},"newRecord":{"api_token":"`+secretHistNew+`","header":"Product A at a glance","l10n_diffsource":"x"}}`)
	hist(900002, fixedNow().Unix()-1800, 2, `{"oldRecord":{"pi_flexform":"","bodytext":"before"},"newRecord":{"pi_flexform":`+mustJSON(plantedFlexForm)+`,"bodytext":"after"}}`)
	// Real TYPO3 has sys_http_report and sys_lockedrecords; the demo
	// schema does not, nor any tx_nrllm/tx_nrvault table.
	for _, name := range []string{"sys_http_report", "sys_lockedrecords", "tx_nrllm_configuration", "tx_nrvault_secret", "tx_demo_gadget"} {
		e.exec(t, "CREATE TABLE "+name+" (uid INTEGER NOT NULL PRIMARY KEY, pid INTEGER DEFAULT 0 NOT NULL, "+
			"deleted SMALLINT DEFAULT 0 NOT NULL, title VARCHAR(255) DEFAULT '' NOT NULL, "+
			"secret_value VARCHAR(255) DEFAULT '' NOT NULL, access_token VARCHAR(255) DEFAULT '' NOT NULL)")
		title, secret := "Product A "+secretSensitive, secretSensitive
		if name == "tx_demo_gadget" {
			// Readable, but its label column is a credential.
			title, secret = "Product A gadget", secretGadget
		}
		for uid, pid := range map[int64]int64{1: 6, 2: 0, 3: 13} {
			e.insert(t, name, map[string]any{"uid": uid, "pid": pid, "title": title, "secret_value": secret, "access_token": secret})
		}
	}
	// The demo's sys_log, sys_history and sys_refindex have no title
	// column; the planted TCA says they do, so add one with the secret.
	for _, name := range []string{"sys_log", "sys_history", "sys_refindex"} {
		e.exec(t, "ALTER TABLE "+name+" ADD title VARCHAR(255) DEFAULT '' NOT NULL")
		e.exec(t, "ALTER TABLE "+name+" ADD secret_value VARCHAR(255) DEFAULT '' NOT NULL")
		e.exec(t, "UPDATE "+name+" SET title = 'Product A "+secretSensitive+"', secret_value = '"+secretSensitive+"'")
	}
	for _, name := range []string{"be_users", "be_groups", "fe_users", "fe_groups", "sys_file_storage"} {
		e.exec(t, "ALTER TABLE "+name+" ADD secret_value VARCHAR(255) DEFAULT '' NOT NULL")
		e.exec(t, "UPDATE "+name+" SET secret_value = '"+secretSensitive+"'")
	}
	e.exec(t, "UPDATE be_groups SET tables_select = "+e.rw.Placeholder(1)+" WHERE uid = 1",
		"pages,sys_category,tx_demo_gadget,"+strings.Join(sensitiveTables, ","))
}

func mustJSON(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// plantedEnv is the demo on d with the secrets planted and every demo
// user loaded.
func plantedEnv(t testing.TB, d typo3.Dialect) *env {
	t.Helper()
	s := demotest.New(t, d)
	tc := plantedTCA()
	// Plant through a first env, then load the users afresh so the
	// changed group applies.
	pre := newEnv(t, d, s.DSN, tc, nil)
	pre.plant(t)
	return newEnv(t, d, s.DSN, tc, userNames)
}
