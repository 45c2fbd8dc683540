package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/llm/llmtest"
	"github.com/t3agent/t3agent/internal/tool"
	"github.com/t3agent/t3agent/internal/typo3"
)

// plantedConstants are the credentials the demo plants in its TypoScript
// constants for redaction to find: internal/demo/records/
// sys_template_1.constants.typoscript (docs/demo-site.md, sys_template 1)
// sets site.stagingUrl with a user:pass@ password and
// site.analytics.apiKey. The demo exports no list of them;
// demoCredentials checks that each is still planted in the site database.
var plantedConstants = []string{"Xq7-demo-preview", "nlp-demo-7f3c1e9a04b2d86e"}

// encryptionKey finds the key the demo writes into settings.php.
var encryptionKey = regexp.MustCompile(`'encryptionKey' => '([^']+)'`)

// demoCredentials lists every credential of the fixture's demo site: the
// planted constants, the backend users' passwords (from the demo's own
// result), the stored password hashes of backend and frontend users, and
// the installation's encryption key.
func demoCredentials(t *testing.T, f *fixture) []string {
	t.Helper()
	db := f.site.Open(t)
	constants := strings.Join(column(t, db, "SELECT constants FROM sys_template"), "\n")
	var out []string
	for _, s := range plantedConstants {
		if !strings.Contains(constants, s) {
			t.Fatalf("the demo no longer plants %q in its constants; update plantedConstants", s)
		}
		out = append(out, s)
	}
	for _, u := range f.site.Result.Users {
		out = append(out, u.Password)
	}
	for _, table := range []string{"be_users", "fe_users"} {
		out = append(out, column(t, db, "SELECT password FROM "+table+" WHERE password <> ''")...)
	}
	settings, err := os.ReadFile(filepath.Join(f.site.Root, "config", "system", "settings.php"))
	if err != nil {
		t.Fatal(err)
	}
	m := encryptionKey.FindSubmatch(settings)
	if m == nil {
		t.Fatal("the demo's settings.php has no encryptionKey")
	}
	out = append(out, string(m[1]))
	if len(out) < len(plantedConstants)+4 {
		t.Fatalf("only %d demo credentials found", len(out))
	}
	return out
}

// column reads the one column query selects from the site database.
func column(t *testing.T, db *typo3.DB, query string) []string {
	t.Helper()
	rows, err := db.SQL.QueryContext(context.Background(), query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// leaks names the credentials of secrets that text holds, verbatim or
// JSON-escaped.
func leaks(text string, secrets []string) []int {
	var out []int
	for i, s := range secrets {
		esc, _ := json.Marshal(s)
		if strings.Contains(text, s) || strings.Contains(text, strings.Trim(string(esc), `"`)) {
			out = append(out, i)
		}
	}
	return out
}

// TestLoopDemoCredentialsNeverLeave: an agent turn whose model asks the
// content tools for the demo's credential-bearing rows (the sys_template
// constants with site.analytics.apiKey and the staging URL's password)
// sends none of the demo's credentials to an externalGlobal provider and
// stores none in the run, at privacy level full, on every store.
func TestLoopDemoCredentialsNeverLeave(t *testing.T) {
	t.Parallel()
	forStores(t, func(t *testing.T, dsn func(testing.TB) string) {
		f := newFixture(t, fixtureParams{storeDSN: dsn(t)})
		secrets := demoCredentials(t, f)
		calls := []llm.ToolCall{
			llmtest.Call("c1", "search_records", `{"query":"apiKey"}`),
			llmtest.Call("c2", "search_records", `{"query":"stagingUrl"}`),
			llmtest.Call("c3", "search_records", `{"query":"Preview host","table":"sys_template"}`),
			llmtest.Call("c4", "read_records", `{"table":"sys_template","uid":1,"fields":["title","constants","config"]}`),
			llmtest.Call("c5", "read_records", `{"table":"sys_template","where_equals":{"pid":1},"fields":["constants"]}`),
			llmtest.Call("c6", "get_page_content", `{"uid":1}`),
		}

		// Unscreened, the tools' answers carry the credentials: the
		// run below has something to keep back.
		var raw strings.Builder
		for _, c := range calls {
			r := f.gate.Invoke(context.Background(), gate.InvokeParams{
				Name: c.Name, Args: json.RawMessage(c.Arguments), Call: tool.Call{Actor: f.user("admin"), RunID: "probe"},
				Config: gate.Config{Name: "probe", TrustZone: tool.ZoneExternalGlobal},
			})
			if r.IsError {
				t.Fatalf("%s %s: %s", c.Name, c.Arguments, r.Content)
			}
			raw.WriteString(r.Content)
		}
		if got := leaks(raw.String(), secrets); len(got) < len(plantedConstants) {
			t.Fatalf("the tools' raw answers hold %d of the planted credentials; the run would prove nothing", len(got))
		}

		srv := llmtest.NewOpenAI(t, llmtest.Calls(calls...).WithUsage(900, 60), llmtest.Text("Analytics and a staging host are configured.").WithUsage(1800, 20))
		f.apply(providerDoc("leaky", "openai", "externalGlobal", srv, 0, "privacy_level: full"))
		res := f.rt.Run(context.Background(), f.request("leaky", "admin", "What does the site configure for analytics and its staging host?"))
		if res.Outcome != agent.OutcomeCompleted || res.ToolCalls != len(calls) {
			t.Fatalf("result = %+v", res)
		}

		for _, r := range srv.Requests() {
			for _, i := range leaks(string(r.Body), secrets) {
				t.Errorf("request %d carried demo credential %d (%d bytes) to the provider", r.Index, i, len(secrets[i]))
			}
		}
		for _, e := range f.events(res.RunID) {
			for _, i := range leaks(string(e.Payload), secrets) {
				t.Errorf("event %d (%s) stores demo credential %d", e.Seq, e.Kind, i)
			}
		}
		b, err := json.Marshal([]any{f.run(res.RunID), f.calls(res.RunID)})
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range leaks(string(b), secrets) {
			t.Errorf("the run's row or telemetry stores demo credential %d", i)
		}

		// The model still reads what is there, and that something
		// was redacted.
		sent := string(srv.Request(1).Body)
		for _, want := range []string{"siteId = 42 apiKey = [REDACTED:password_assignment]", "https://preview:[REDACTED:url_password]@staging"} {
			if !strings.Contains(sent, want) {
				t.Errorf("the second request lacks %q", want)
			}
		}
	})
}
