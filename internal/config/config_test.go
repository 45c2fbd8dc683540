package config

import (
	"encoding/base64"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/chat"
)

func writeFile(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "t3agent.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadResolvesPathsAndEnv(t *testing.T) {
	t.Parallel()
	p := writeFile(t, `
listen: 127.0.0.1:9000
data_dir: .
store:
  dsn: sqlite:own.db
site:
  name: Example
  dsn: sqlite:site.db
log:
  level: debug
`)
	dir := filepath.Dir(p)
	cfg, err := Load(p, []string{"T3AGENT_LOG_FORMAT=json", "T3AGENT_HTTP_SHUTDOWN_TIMEOUT=3s", "OTHER=1"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != "127.0.0.1:9000" || cfg.Site.Name != "Example" || cfg.Log.Level != "debug" {
		t.Errorf("file values not taken: %+v", cfg)
	}
	if cfg.Store.DSN != "sqlite:"+filepath.Join(dir, "own.db") || cfg.Site.DSN != "sqlite:"+filepath.Join(dir, "site.db") {
		t.Errorf("relative sqlite paths not resolved against the file: %q %q", cfg.Store.DSN, cfg.Site.DSN)
	}
	if cfg.DataDir != dir {
		t.Errorf("data_dir = %q, want %q", cfg.DataDir, dir)
	}
	if cfg.Log.Format != "json" || cfg.HTTP.ShutdownTimeout != 3*time.Second {
		t.Errorf("environment overrides not applied: %+v", cfg)
	}
}

func TestTrustedProxies(t *testing.T) {
	t.Parallel()
	h := HTTP{TrustedProxies: " 10.1.2.3/8, 192.0.2.7,::ffff:198.51.100.1 ,fd00::/8,"}
	got, err := h.Proxies()
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.7/32"),
		netip.MustParsePrefix("198.51.100.1/32"), netip.MustParsePrefix("fd00::/8")}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("Proxies() = %v, %v; want %v", got, err, want)
	}
	if got, err := (HTTP{}).Proxies(); err != nil || len(got) != 0 {
		t.Errorf("none = %v, %v", got, err)
	}
}

func TestErrorsNameTheKey(t *testing.T) {
	t.Parallel()
	site := "site:\n  dsn: sqlite:s.db\n"
	cases := []struct {
		name, body string
		env        []string
		want       string
	}{
		{"unknown key", site + "colour: red\n", nil, `line 3: unknown key "colour"`},
		{"bad listen", site + "listen: nowhere\n", nil, "listen:"},
		{"bad level", site + "log:\n  level: loud\n", nil, "log.level:"},
		{"bad format", site + "log:\n  format: xml\n", nil, "log.format:"},
		{"no site", "listen: 127.0.0.1:1\n", nil, "site.dsn:"},
		{"bad site dsn", "site:\n  dsn: oracle://x\n", nil, "site.dsn:"},
		{"bad store dsn", site + "store:\n  dsn: mysql://u:secret@h/db\n", nil, "store.dsn:"},
		{"missing root", "site:\n  dsn: sqlite:s.db\n  root: /does/not/exist\n", nil, "site.root: /does/not/exist is not a directory"},
		{"bad env duration", site, []string{"T3AGENT_HTTP_SHUTDOWN_TIMEOUT=soon"}, "http.shutdown_timeout (from T3AGENT_HTTP_SHUTDOWN_TIMEOUT)"},
		{"bad yaml", "listen: [\n", nil, "configuration file"},
		{"bad proxy", site + "http:\n  trusted_proxies: 10.0.0.0/8, lb.internal\n", nil, `http.trusted_proxies: "lb.internal" is not an address`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := Load(writeFile(t, c.body), c.env)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not contain %q", err, c.want)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error leaks a credential: %q", err)
			}
			if strings.Count(strings.TrimSpace(err.Error()), "\n") > 0 {
				t.Errorf("error is not one sentence: %q", err)
			}
		})
	}
}

func TestEveryKeyHasAnEnvironmentOverride(t *testing.T) {
	t.Parallel()
	keys := Keys()
	if len(keys) < 8 {
		t.Fatalf("only %d keys found: %v", len(keys), keys)
	}
	for _, k := range keys {
		if k == "http.shutdown_timeout" || k == "mcp.operation_timeout" {
			continue
		}
		env := []string{"T3AGENT_SITE_DSN=sqlite:x.db", EnvName(k) + "=probe"}
		_, err := FromEnv(t.TempDir(), env)
		// Every string key accepts the value; validation may then reject
		// it, but the message must name the key that was overridden. A
		// number or duration key refuses the value, naming key and variable.
		if err != nil && !strings.HasPrefix(err.Error(), k+":") && !strings.HasPrefix(err.Error(), k+" (from "+EnvName(k)+"):") {
			t.Errorf("override of %s gave an error not naming it: %v", k, err)
		}
	}
}

func TestMissingFile(t *testing.T) {
	t.Parallel()
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"), nil)
	if err == nil || !strings.Contains(err.Error(), "cannot be read") {
		t.Fatalf("err = %v", err)
	}
}

func TestKeyring(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	key := "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=" // 32 bytes, base64
	if err := os.WriteFile(filepath.Join(dir, "master.key"), []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "t3agent.yaml")
	if err := os.WriteFile(p, []byte("site:\n  dsn: sqlite:s.db\nsecurity:\n  master_key_file: master.key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	fromFile, err := cfg.Keyring()
	if err != nil {
		t.Fatal(err)
	}
	cfg2, err := Load(p, []string{"T3AGENT_SECURITY_MASTER_KEY=" + key})
	if err != nil {
		t.Fatal(err)
	}
	fromEnv, err := cfg2.Keyring()
	if err != nil || fromEnv.CurrentKeyID() != fromFile.CurrentKeyID() {
		t.Fatalf("env key differs from file key: %v", err)
	}
	none, _ := FromEnv(dir, []string{"T3AGENT_SITE_DSN=sqlite:x.db"})
	if _, err := none.Keyring(); err != ErrNoMasterKey {
		t.Errorf("no key: %v", err)
	}
	bad, _ := FromEnv(dir, []string{"T3AGENT_SITE_DSN=sqlite:x.db", "T3AGENT_SECURITY_MASTER_KEY=short"})
	if _, err := bad.Keyring(); err == nil || !strings.HasPrefix(err.Error(), "security: the master key") || strings.Contains(err.Error(), "short") {
		t.Errorf("bad key: %v", err)
	}
	// A missing key file is created on start, not refused by validation.
	missing, err := FromEnv(dir, []string{"T3AGENT_SITE_DSN=sqlite:x.db", "T3AGENT_SECURITY_MASTER_KEY_FILE=" + filepath.Join(dir, "new", "master.key")})
	if err != nil {
		t.Fatalf("missing key file: %v", err)
	}
	if _, err := missing.Keyring(); err == nil || !strings.HasPrefix(err.Error(), "security.master_key_file:") {
		t.Errorf("keyring of a missing key file: %v", err)
	}
	if created, err := missing.EnsureMasterKey(); err != nil || !created {
		t.Fatalf("EnsureMasterKey = %v, %v", created, err)
	}
	if _, err := missing.Keyring(); err != nil {
		t.Errorf("keyring of the created key file: %v", err)
	}
}

// TestEnsureMasterKeyFile: a missing key is created once (owner-only,
// directory included) and never replaced; a key file others may read, or
// one that holds no key, is refused by start-up and validation alike, in
// one sentence naming the file.
func TestEnsureMasterKeyFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "data", "keys", "master.key")
	created, err := EnsureMasterKeyFile(path)
	if err != nil || !created {
		t.Fatalf("first EnsureMasterKeyFile = %v, %v", created, err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("created key: %v, mode %v", err, st.Mode())
	}
	if dst, err := os.Stat(filepath.Dir(path)); err != nil || dst.Mode().Perm() != 0o700 {
		t.Errorf("created directory: %v, mode %v", err, dst.Mode())
	}
	key, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(key))); err != nil || len(raw) != 32 {
		t.Errorf("key %q is not 32 bytes base64: %v", key, err)
	}
	if created, err := EnsureMasterKeyFile(path); err != nil || created {
		t.Errorf("second EnsureMasterKeyFile = %v, %v", created, err)
	}
	if again, _ := os.ReadFile(path); string(again) != string(key) {
		t.Error("the key was replaced")
	}

	cfgFile := filepath.Join(dir, "t3agent.yaml")
	if err := os.WriteFile(cfgFile, []byte("site:\n  dsn: sqlite:s.db\nsecurity:\n  master_key_file: "+path+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		mode os.FileMode
		body string
		want string
	}{
		{"world-readable", 0o644, string(key), "may be read by group or others (mode 0644); run chmod 600"},
		{"group-readable", 0o640, string(key), "may be read by group or others (mode 0640)"},
		{"malformed", 0o600, "not a key\n", "is malformed: the master key must be 32 random bytes"},
		{"empty", 0o600, "", "is malformed: the master key is empty"},
	} {
		p := filepath.Join(dir, c.name+".key")
		if err := os.WriteFile(p, []byte(c.body), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, c.mode); err != nil {
			t.Fatal(err)
		}
		_, ensureErr := EnsureMasterKeyFile(p)
		_, loadErr := Load(cfgFile, []string{"T3AGENT_SECURITY_MASTER_KEY_FILE=" + p})
		for what, err := range map[string]error{"EnsureMasterKeyFile": ensureErr, "Load": loadErr} {
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), p) ||
				!strings.HasPrefix(err.Error(), "security.master_key_file: ") || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s, %s: err = %v, want one sentence containing %q", c.name, what, err, c.want)
			}
		}
		if after, _ := os.ReadFile(p); string(after) != c.body {
			t.Errorf("%s: the refused file was changed", c.name)
		}
	}
}

func TestMCP(t *testing.T) {
	t.Parallel()
	site := "site:\n  dsn: sqlite:s.db\n"
	def, err := Load(writeFile(t, site), nil)
	if err != nil {
		t.Fatal(err)
	}
	if def.MCP.OperationTimeout != 20*time.Second || def.MCP.Hosts() != nil {
		t.Errorf("defaults: %+v, hosts %q", def.MCP, def.MCP.Hosts())
	}
	cfg, err := Load(writeFile(t, site+"mcp:\n  allowed_hosts: docs.example.com\n  operation_timeout: 5s\n"),
		[]string{"T3AGENT_MCP_ALLOWED_HOSTS= MCP.example.com, 127.0.0.1:8080,,[::1]:9000 , ::1 "})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"MCP.example.com", "127.0.0.1:8080", "[::1]:9000", "::1"}
	if got := cfg.MCP.Hosts(); strings.Join(got, "|") != strings.Join(want, "|") || cfg.MCP.OperationTimeout != 5*time.Second {
		t.Errorf("hosts %q, timeout %v; want %q (the environment wins) and 5s", got, cfg.MCP.OperationTimeout, want)
	}
	for _, c := range []struct {
		body string
		env  []string
		want string
	}{
		{site + "mcp:\n  allowed_hosts: https://mcp.example.com\n", nil, `mcp.allowed_hosts: "https://mcp.example.com" is not a host or host:port`},
		{site, []string{"T3AGENT_MCP_ALLOWED_HOSTS=ok.example, user@evil.example"}, `mcp.allowed_hosts: "user@evil.example"`},
		{site, []string{"T3AGENT_MCP_ALLOWED_HOSTS=mcp.example.com:http"}, `mcp.allowed_hosts: "mcp.example.com:http" has no valid port`},
		{site, []string{"T3AGENT_MCP_ALLOWED_HOSTS=[::1]"}, `mcp.allowed_hosts: "[::1]"`},
		{site + "mcp:\n  operation_timeout: 0s\n", nil, "mcp.operation_timeout: must be a positive duration"},
		{site, []string{"T3AGENT_MCP_OPERATION_TIMEOUT=-1s"}, "mcp.operation_timeout: must be a positive duration"},
		{site, []string{"T3AGENT_MCP_OPERATION_TIMEOUT=soon"}, "mcp.operation_timeout (from T3AGENT_MCP_OPERATION_TIMEOUT)"},
		{site, []string{"T3AGENT_MCP_OAUTH_CLIENT_METADATA_URL=http://t3agent.example/client.json"}, `mcp.oauth_client_metadata_url: "http://t3agent.example/client.json" is not an https URL with a path`},
		{site, []string{"T3AGENT_MCP_OAUTH_CLIENT_METADATA_URL=https://t3agent.example/"}, "mcp.oauth_client_metadata_url"},
	} {
		if _, err := Load(writeFile(t, c.body), c.env); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q %q: err = %v, want %q", c.body, c.env, err, c.want)
		}
	}
}

func TestChat(t *testing.T) {
	t.Parallel()
	site := "site:\n  dsn: sqlite:s.db\n"
	def, err := Load(writeFile(t, site), nil)
	if err != nil {
		t.Fatal(err)
	}
	if def.Chat != DefaultChat() {
		t.Errorf("defaults: %+v", def.Chat)
	}
	ds, err := def.Chat.Settings()
	if err != nil {
		t.Fatal(err)
	}
	if ds.Task != "" || ds.AllowedGroups != nil || ds.GroupTasks != nil || ds.MaxActivePerUser != chat.DefaultMaxActivePerUser ||
		ds.MaxConversationsPerUser != chat.DefaultMaxConversationsPerUser || ds.MaxMessageLength != chat.DefaultMaxMessageLength ||
		ds.StaleAfter != chat.DefaultStaleAfter || ds.ArchiveAfter != chat.DefaultArchiveAfter || ds.DeleteAfter != chat.DefaultDeleteAfter ||
		ds.ReconcileGrace != chat.DefaultReconcileGrace || def.Chat.PollInterval != chat.DefaultPollInterval ||
		def.Chat.MaintenanceInterval != time.Minute {
		t.Errorf("default settings: %+v", ds)
	}

	cfg, err := Load(writeFile(t, site+`chat:
  task: editors_chat
  allowed_groups: 3
  group_tasks: 3:editors_chat, 5:support.chat
  max_active_per_user: 2
  max_conversations_per_user: 10
  max_message_length: 4000
  stale_after: 10m
  archive_after: 0s
  delete_after: 2160h
  reconcile_grace: 1m
  poll_interval: 500ms
  maintenance_interval: 30s
  worker_concurrency: 8
`), []string{"T3AGENT_CHAT_ALLOWED_GROUPS= 3, 7,,3 ", "T3AGENT_CHAT_MAX_ACTIVE_PER_USER=5", "T3AGENT_CHAT_STALE_AFTER=2m"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := cfg.Chat.Settings()
	if err != nil {
		t.Fatal(err)
	}
	want := chat.Settings{
		Task:             "editors_chat",
		AllowedGroups:    []int64{3, 7}, // the environment wins; duplicates collapse
		GroupTasks:       []chat.GroupTask{{Group: 3, Task: "editors_chat"}, {Group: 5, Task: "support.chat"}},
		MaxActivePerUser: 5, MaxConversationsPerUser: 10, MaxMessageLength: 4000,
		StaleAfter: 2 * time.Minute, ArchiveAfter: 0, DeleteAfter: 90 * 24 * time.Hour, ReconcileGrace: time.Minute,
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("settings\n got %+v\nwant %+v", s, want)
	}
	if cfg.Chat.PollInterval != 500*time.Millisecond || cfg.Chat.WorkerConcurrency != 8 || cfg.Chat.MaintenanceInterval != 30*time.Second {
		t.Errorf("worker keys: %+v", cfg.Chat)
	}

	for _, c := range []struct {
		body string
		env  []string
		want string
	}{
		{site + "chat:\n  task: Editors Chat\n", nil, `chat.task: "Editors Chat" is not a task identifier`},
		{site, []string{"T3AGENT_CHAT_ALLOWED_GROUPS=3,editors"}, `chat.allowed_groups: "editors" is not a be_groups uid`},
		{site, []string{"T3AGENT_CHAT_ALLOWED_GROUPS=0"}, `chat.allowed_groups: "0" is not a be_groups uid`},
		{site, []string{"T3AGENT_CHAT_GROUP_TASKS=3"}, `chat.group_tasks: "3" is not a uid:task pair`},
		{site, []string{"T3AGENT_CHAT_GROUP_TASKS=x:chat"}, `chat.group_tasks: "x:chat" is not a uid:task pair`},
		{site, []string{"T3AGENT_CHAT_GROUP_TASKS=3:"}, `chat.group_tasks: "3:" is not a uid:task pair`},
		{site, []string{"T3AGENT_CHAT_GROUP_TASKS=3:a,3:b"}, "chat.group_tasks: group 3 is mapped twice"},
		{site, []string{"T3AGENT_CHAT_MAX_ACTIVE_PER_USER=0"}, "chat.max_active_per_user: must be at least 1"},
		{site, []string{"T3AGENT_CHAT_MAX_ACTIVE_PER_USER=many"}, `chat.max_active_per_user (from T3AGENT_CHAT_MAX_ACTIVE_PER_USER): "many" is not a whole number`},
		{site, []string{"T3AGENT_CHAT_MAX_CONVERSATIONS_PER_USER=-1"}, "chat.max_conversations_per_user: must be at least 1"},
		{site, []string{"T3AGENT_CHAT_MAX_MESSAGE_LENGTH=0"}, "chat.max_message_length: must be between 1 and 262144 characters"},
		{site, []string{"T3AGENT_CHAT_MAX_MESSAGE_LENGTH=300000"}, "chat.max_message_length: must be between 1 and 262144"},
		{site, []string{"T3AGENT_CHAT_STALE_AFTER=0s"}, "chat.stale_after: must be a positive duration"},
		{site + "chat:\n  archive_after: 30d\n", nil, "configuration file"},
		{site, []string{"T3AGENT_CHAT_ARCHIVE_AFTER=30d"}, `chat.archive_after (from T3AGENT_CHAT_ARCHIVE_AFTER): "30d" is not a duration`},
		{site, []string{"T3AGENT_CHAT_ARCHIVE_AFTER=-1h"}, "chat.archive_after: must be a duration such as 720h (30 days), or 0 to never archive"},
		{site, []string{"T3AGENT_CHAT_DELETE_AFTER=-1h"}, "chat.delete_after: must be a duration such as 2160h (90 days), or 0 to never delete"},
		{site, []string{"T3AGENT_CHAT_RECONCILE_GRACE=0s"}, "chat.reconcile_grace: must be a positive duration"},
		{site, []string{"T3AGENT_CHAT_POLL_INTERVAL=1ms"}, "chat.poll_interval: must be a duration between 10ms and 1m0s"},
		{site, []string{"T3AGENT_CHAT_POLL_INTERVAL=2m"}, "chat.poll_interval: must be a duration between"},
		{site, []string{"T3AGENT_CHAT_MAINTENANCE_INTERVAL=0s"}, "chat.maintenance_interval: must be a duration between 1s and 24h0m0s"},
		{site, []string{"T3AGENT_CHAT_MAINTENANCE_INTERVAL=48h"}, "chat.maintenance_interval: must be a duration between"},
		{site, []string{"T3AGENT_CHAT_WORKER_CONCURRENCY=0"}, "chat.worker_concurrency: must be between 1 and 256"},
		{site, []string{"T3AGENT_CHAT_WORKER_CONCURRENCY=257"}, "chat.worker_concurrency: must be between 1 and 256"},
	} {
		_, err := Load(writeFile(t, c.body), c.env)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q %q: err = %v, want %q", c.body, c.env, err, c.want)
			continue
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%q %q: error spans lines: %q", c.body, c.env, err)
		}
	}

	// A hand-built section is checked by Settings as well.
	bad := DefaultChat()
	bad.GroupTasks = "3:Chat"
	if _, err := bad.Settings(); err == nil || !strings.HasPrefix(err.Error(), "chat.group_tasks:") {
		t.Errorf("hand-built bad section: %v", err)
	}
}
