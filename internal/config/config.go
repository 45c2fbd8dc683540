// Package config loads t3agent's configuration: a YAML file, then
// T3AGENT_* environment overrides, then validation. Every error names the
// key and the problem in one sentence, so an operator can fix the file
// without reading code.
//
// Every key has an environment override built from its path: site.dsn is
// T3AGENT_SITE_DSN, log.level is T3AGENT_LOG_LEVEL.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/t3agent/t3agent/internal/chat"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/tracing"
)

// Config is the whole configuration. Relative paths are resolved against
// the directory of the file they were read from (or the working directory
// for environment values and defaults).
type Config struct {
	// Listen is the address the HTTP server binds to.
	Listen string `yaml:"listen"`
	// DataDir holds t3agent's own files (SQLite store, generated keys).
	DataDir  string   `yaml:"data_dir"`
	Store    Store    `yaml:"store"`
	Site     Site     `yaml:"site"`
	Log      Log      `yaml:"log"`
	HTTP     HTTP     `yaml:"http"`
	Security Security `yaml:"security"`
	MCP      MCP      `yaml:"mcp"`
	Chat     Chat     `yaml:"chat"`
	Otel     Otel     `yaml:"otel"`
	Search   Search   `yaml:"search"`
	// SiteIndex configures t3agent's own index of the site (package siteindex).
	SiteIndex SiteIndex `yaml:"site_index"`
}

// Search configures the site search tools (site_rag_query,
// site_fetch_source).
type Search struct {
	// SolrURL, when set, is the base URL of the Apache Solr server that
	// EXT:solr indexes the site into, up to the cores
	// (http://solr:8983/solr); the cores come from the site
	// configuration's solr_core_read. Solr is then asked first, and only
	// this host is reached.
	SolrURL string `yaml:"solr_url"`
	// SolrTimeout bounds one Solr request; 0 means 10s.
	SolrTimeout time.Duration `yaml:"solr_timeout"`
}

func (s Search) check() error {
	if s.SolrURL != "" {
		u, err := url.Parse(s.SolrURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			return errors.New("search.solr_url: must be an http(s) URL without credentials, such as http://solr:8983/solr")
		}
	}
	if s.SolrTimeout < 0 {
		return errors.New("search.solr_timeout: must not be negative")
	}
	return nil
}

// SiteIndex configures the site index: serve keeps it fresh in the
// background when Enabled, and search_records uses it while its last sync
// is younger than MaxAge.
type SiteIndex struct {
	// Enabled runs the syncer in serve (building the index when there is
	// none) and lets search_records use the index.
	Enabled bool `yaml:"enabled"`
	// Interval is the time between two syncs.
	Interval time.Duration `yaml:"interval"`
	// MaxAge is the age of the last sync after which the index is stale
	// and search_records scans the site instead.
	MaxAge time.Duration `yaml:"max_age"`
}

func (c SiteIndex) check() error {
	if c.Interval < time.Second || c.Interval > 24*time.Hour {
		return fmt.Errorf("site_index.interval: must be a duration between 1s and 24h such as 30s")
	}
	if c.MaxAge < c.Interval || c.MaxAge > 7*24*time.Hour {
		return fmt.Errorf("site_index.max_age: must be a duration of at least site_index.interval and at most 168h, such as 10m")
	}
	return nil
}

// Otel configures OpenTelemetry traces, exported over OTLP. Tracing is off
// unless an endpoint is set here or by the standard OTEL_* variables
// (OTEL_EXPORTER_OTLP_ENDPOINT and the others the OpenTelemetry SDKs
// read); a key set here wins over its variable.
type Otel struct {
	// Endpoint is the collector's base URL, e.g. http://collector:4318
	// (HTTP; /v1/traces is added) or http://collector:4317 (gRPC).
	Endpoint string `yaml:"endpoint"`
	// Protocol is http/protobuf (the default) or grpc.
	Protocol string `yaml:"protocol"`
	// Headers are comma-separated key=value pairs sent with every export.
	Headers string `yaml:"headers"`
	// Insecure allows a gRPC endpoint without TLS.
	Insecure bool `yaml:"insecure"`
	// ServiceName is service.name on every span (default t3agent).
	ServiceName string `yaml:"service_name"`
	// CaptureContent puts prompts and completions on the provider spans,
	// after secret redaction. Off by default: spans carry ids, models,
	// token counts and outcomes only.
	CaptureContent bool `yaml:"capture_content"`
}

// Tracing is the section as package tracing takes it.
func (o Otel) Tracing() tracing.Config {
	return tracing.Config{
		Endpoint: strings.TrimSpace(o.Endpoint), Protocol: strings.TrimSpace(o.Protocol), Headers: o.Headers,
		Insecure: o.Insecure, ServiceName: strings.TrimSpace(o.ServiceName), CaptureContent: o.CaptureContent,
	}
}

func (o Otel) check() error {
	switch strings.TrimSpace(o.Protocol) {
	case "", tracing.ProtocolHTTP, tracing.ProtocolGRPC:
	default:
		return fmt.Errorf("otel.protocol: %q is not http/protobuf or grpc", o.Protocol)
	}
	if e := strings.TrimSpace(o.Endpoint); e != "" {
		u, err := url.Parse(e)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("otel.endpoint: %q is not an http:// or https:// URL such as http://collector:4318", redact(e))
		}
	}
	for _, kv := range strings.Split(o.Headers, ",") {
		if k, _, ok := strings.Cut(kv, "="); strings.TrimSpace(kv) != "" && (!ok || strings.TrimSpace(k) == "") {
			return errors.New("otel.headers: give comma-separated key=value pairs")
		}
	}
	return nil
}

// MCP tunes the client for external MCP servers.
type MCP struct {
	// AllowedHosts, when set, are the only hosts MCP servers may live on:
	// comma-separated "host" (any port) or "host:port" entries, IPv6 as
	// in URLs ("[::1]:8080"). Empty allows every host the guard does not
	// refuse anyway (link-local and cloud metadata addresses).
	AllowedHosts string `yaml:"allowed_hosts"`
	// OperationTimeout is the deadline of one MCP operation (a call, an
	// import, a ping), shared by all its HTTP requests.
	OperationTimeout time.Duration `yaml:"operation_timeout"`
	// OAuthClientMetadataURL is the https URL where the operator publishes
	// t3agent's OAuth Client ID Metadata Document; authorization servers
	// that support such documents then know t3agent by it instead of a
	// dynamic registration. Empty means none.
	OAuthClientMetadataURL string `yaml:"oauth_client_metadata_url"`
}

// Hosts returns the allow-list entries, trimmed, without empty ones.
func (m MCP) Hosts() []string {
	var out []string
	for _, h := range strings.Split(m.AllowedHosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			out = append(out, h)
		}
	}
	return out
}

// check names the first entry that is not a host or host:port, and a
// deadline that is not positive (zero must never mean "no deadline").
func (m MCP) check() error {
	for _, h := range m.Hosts() {
		if strings.ContainsAny(h, "/@?#\\ \t") {
			return fmt.Errorf("mcp.allowed_hosts: %q is not a host or host:port", h)
		}
		host := h
		if hh, port, err := net.SplitHostPort(h); err == nil {
			if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
				return fmt.Errorf("mcp.allowed_hosts: %q has no valid port", h)
			}
			host = hh
		}
		if _, err := netip.ParseAddr(host); err == nil {
			continue
		}
		if host == "" || strings.ContainsAny(host, ":[]") {
			return fmt.Errorf("mcp.allowed_hosts: %q is not a host or host:port", h)
		}
	}
	if m.OperationTimeout <= 0 {
		return errors.New("mcp.operation_timeout: must be a positive duration such as 20s")
	}
	if m.OAuthClientMetadataURL != "" {
		u, err := url.Parse(m.OAuthClientMetadataURL)
		if err != nil || u.Scheme != "https" || u.Host == "" || strings.Trim(u.Path, "/") == "" {
			return fmt.Errorf("mcp.oauth_client_metadata_url: %q is not an https URL with a path", m.OAuthClientMetadataURL)
		}
	}
	return nil
}

// Chat configures the backend chat: which task it runs, who may use it,
// the per-user limits, cleanup and the worker. Durations are Go durations
// (5m, 720h); a day is 24h.
type Chat struct {
	// Task is the default chat task (an agentconfig task identifier); empty
	// leaves the chat unconfigured, and every turn then fails with
	// chatNotConfigured.
	Task string `yaml:"task"`
	// AllowedGroups are comma-separated be_groups uids whose members
	// (subgroups included) may chat; empty allows every backend user.
	// Admins always may.
	AllowedGroups string `yaml:"allowed_groups"`
	// GroupTasks map groups to tasks as comma-separated "uid:task" pairs
	// ("3:editors_chat,5:support_chat"); the first pair whose group the
	// user is in wins, else Task.
	GroupTasks string `yaml:"group_tasks"`
	// MaxActivePerUser bounds a user's conversations with a turn queued
	// or running.
	MaxActivePerUser int `yaml:"max_active_per_user"`
	// MaxConversationsPerUser bounds a user's unarchived conversations.
	MaxConversationsPerUser int `yaml:"max_conversations_per_user"`
	// MaxMessageLength bounds one message, in characters.
	MaxMessageLength int `yaml:"max_message_length"`
	// StaleAfter: a turn queued or running for longer fails (cleanup).
	StaleAfter time.Duration `yaml:"stale_after"`
	// ArchiveAfter: idle conversations untouched for longer are archived
	// by cleanup; 0 never archives.
	ArchiveAfter time.Duration `yaml:"archive_after"`
	// DeleteAfter: archived conversations untouched for longer are
	// deleted by cleanup; 0 never deletes.
	DeleteAfter time.Duration `yaml:"delete_after"`
	// ReconcileGrace is how long a recorded decision may wait for a
	// worker before reconcile repairs the conversation.
	ReconcileGrace time.Duration `yaml:"reconcile_grace"`
	// PollInterval is how often an idle chat worker looks for turns.
	PollInterval time.Duration `yaml:"poll_interval"`
	// MaintenanceInterval is how often serve and every chat worker run
	// reconcile and cleanup (stale turns failed, idle conversations
	// archived, archived ones deleted), so that a turn left locked by a
	// crashed process is freed without an operator.
	MaintenanceInterval time.Duration `yaml:"maintenance_interval"`
	// WorkerConcurrency is how many turns one chat worker runs at once.
	WorkerConcurrency int `yaml:"worker_concurrency"`
	// StreamPoll is how often a conversation's live stream reads the
	// conversation again, to see what other processes changed (a change
	// made by the serving process arrives at once).
	StreamPoll time.Duration `yaml:"stream_poll"`
}

// DefaultStreamPoll is the default of chat.stream_poll: with several
// processes a stream sees another's change within a second.
const DefaultStreamPoll = time.Second

// DefaultChatWorkerConcurrency is the default of chat.worker_concurrency:
// a turn mostly waits for the model, so one slot would queue every user
// behind the slowest answer.
const DefaultChatWorkerConcurrency = 4

// Bounds of the chat keys.
const (
	maxChatWorkerConcurrency = 256
	minChatPollInterval      = 10 * time.Millisecond
	maxChatPollInterval      = time.Minute
	minChatMaintenance       = time.Second
	maxChatMaintenance       = 24 * time.Hour
	// A message of MaxMessageLength characters must fit the store's byte
	// limit even when every character takes four bytes in UTF-8.
	maxChatMessageLength = store.MaxChatMessageLen / 4
)

// DefaultChat returns the chat defaults: unconfigured (no task), open to
// every backend user, with internal/chat's limits and periods.
func DefaultChat() Chat {
	return Chat{
		MaxActivePerUser:        chat.DefaultMaxActivePerUser,
		MaxConversationsPerUser: chat.DefaultMaxConversationsPerUser,
		MaxMessageLength:        chat.DefaultMaxMessageLength,
		StaleAfter:              chat.DefaultStaleAfter,
		ArchiveAfter:            chat.DefaultArchiveAfter,
		DeleteAfter:             chat.DefaultDeleteAfter,
		ReconcileGrace:          chat.DefaultReconcileGrace,
		PollInterval:            chat.DefaultPollInterval,
		MaintenanceInterval:     chat.DefaultMaintainEvery,
		WorkerConcurrency:       DefaultChatWorkerConcurrency,
		StreamPoll:              DefaultStreamPoll,
	}
}

// taskPattern is the shape of an agentconfig identifier (agentconfig's
// identifierPattern); checked here so a typo fails at start-up, not on
// the first turn.
var taskPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,63}$`)

// Settings converts the section into the chat service's settings; the
// error names the first key that is wrong, in one sentence.
func (c Chat) Settings() (chat.Settings, error) {
	s := chat.Settings{
		Task:                    strings.TrimSpace(c.Task),
		MaxActivePerUser:        c.MaxActivePerUser,
		MaxConversationsPerUser: c.MaxConversationsPerUser,
		MaxMessageLength:        c.MaxMessageLength,
		StaleAfter:              c.StaleAfter,
		ArchiveAfter:            c.ArchiveAfter,
		DeleteAfter:             c.DeleteAfter,
		ReconcileGrace:          c.ReconcileGrace,
	}
	if s.Task != "" && !taskPattern.MatchString(s.Task) {
		return chat.Settings{}, fmt.Errorf("chat.task: %q is not a task identifier (lower-case letters, digits, _ . -)", s.Task)
	}
	for _, e := range splitList(c.AllowedGroups) {
		uid, err := strconv.ParseInt(e, 10, 64)
		if err != nil || uid <= 0 {
			return chat.Settings{}, fmt.Errorf("chat.allowed_groups: %q is not a be_groups uid; give comma-separated uids such as 3,5", e)
		}
		if !slices.Contains(s.AllowedGroups, uid) {
			s.AllowedGroups = append(s.AllowedGroups, uid)
		}
	}
	for _, e := range splitList(c.GroupTasks) {
		g, task, ok := strings.Cut(e, ":")
		g, task = strings.TrimSpace(g), strings.TrimSpace(task)
		uid, err := strconv.ParseInt(g, 10, 64)
		if !ok || err != nil || uid <= 0 || !taskPattern.MatchString(task) {
			return chat.Settings{}, fmt.Errorf("chat.group_tasks: %q is not a uid:task pair such as 3:editors_chat", e)
		}
		for _, gt := range s.GroupTasks {
			if gt.Group == uid {
				return chat.Settings{}, fmt.Errorf("chat.group_tasks: group %d is mapped twice", uid)
			}
		}
		s.GroupTasks = append(s.GroupTasks, chat.GroupTask{Group: uid, Task: task})
	}
	switch {
	case s.MaxActivePerUser < 1:
		return chat.Settings{}, errors.New("chat.max_active_per_user: must be at least 1")
	case s.MaxConversationsPerUser < 1:
		return chat.Settings{}, errors.New("chat.max_conversations_per_user: must be at least 1")
	case s.MaxMessageLength < 1 || s.MaxMessageLength > maxChatMessageLength:
		return chat.Settings{}, fmt.Errorf("chat.max_message_length: must be between 1 and %d characters", maxChatMessageLength)
	case s.StaleAfter <= 0:
		return chat.Settings{}, errors.New("chat.stale_after: must be a positive duration such as 5m")
	case s.ArchiveAfter < 0:
		return chat.Settings{}, errors.New("chat.archive_after: must be a duration such as 720h (30 days), or 0 to never archive")
	case s.DeleteAfter < 0:
		return chat.Settings{}, errors.New("chat.delete_after: must be a duration such as 2160h (90 days), or 0 to never delete")
	case s.ReconcileGrace <= 0:
		return chat.Settings{}, errors.New("chat.reconcile_grace: must be a positive duration such as 45s")
	}
	return s, nil
}

// check validates the section, including the worker keys Settings does
// not carry.
func (c Chat) check() error {
	if _, err := c.Settings(); err != nil {
		return err
	}
	if c.PollInterval < minChatPollInterval || c.PollInterval > maxChatPollInterval {
		return fmt.Errorf("chat.poll_interval: must be a duration between %s and %s such as 200ms", minChatPollInterval, maxChatPollInterval)
	}
	if c.MaintenanceInterval < minChatMaintenance || c.MaintenanceInterval > maxChatMaintenance {
		return fmt.Errorf("chat.maintenance_interval: must be a duration between %s and %s such as 1m", minChatMaintenance, maxChatMaintenance)
	}
	if c.WorkerConcurrency < 1 || c.WorkerConcurrency > maxChatWorkerConcurrency {
		return fmt.Errorf("chat.worker_concurrency: must be between 1 and %d", maxChatWorkerConcurrency)
	}
	if c.StreamPoll < minChatPollInterval || c.StreamPoll > maxChatPollInterval {
		return fmt.Errorf("chat.stream_poll: must be a duration between %s and %s such as 1s", minChatPollInterval, maxChatPollInterval)
	}
	return nil
}

// splitList splits a comma-separated value, trimmed, without empty entries.
func splitList(s string) []string {
	var out []string
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// Security holds the master key that seals credentials and suspended run
// state at rest (AES-256-GCM). Give either the key itself (usually through
// T3AGENT_SECURITY_MASTER_KEY) or a file holding it.
type Security struct {
	// MasterKey is 32 random bytes, base64 or hex encoded.
	MasterKey string `yaml:"master_key"`
	// MasterKeyFile names a file holding the key; used when MasterKey is
	// empty. A missing file is created with a fresh key on start
	// (EnsureMasterKey); an existing one must be readable by its owner only.
	MasterKeyFile string `yaml:"master_key_file"`
	// PreviousKeys are comma-separated older keys that still open values
	// sealed before a rotation.
	PreviousKeys string `yaml:"previous_keys"`
}

// Store names t3agent's own database: never the TYPO3 site database.
type Store struct {
	// DSN is sqlite:PATH or postgres://…
	DSN string `yaml:"dsn"`
}

// Site describes the TYPO3 installation t3agent reads.
type Site struct {
	// Name is shown in the UI.
	Name string `yaml:"name"`
	// DSN of the site database: sqlite:PATH, mysql://… or postgres://…
	// Give t3agent a read-only database user.
	DSN string `yaml:"dsn"`
	// Root is the TYPO3 project root (where composer.json, config/ and var/ live).
	Root string `yaml:"root"`
	// TCA optionally names a JSON export of the resolved TCA, used when the
	// installation has no TCA cache file.
	TCA string `yaml:"tca"`
}

// Log configures logging.
type Log struct {
	Level  string `yaml:"level"`  // debug, info, warn, error
	Format string `yaml:"format"` // text or json
}

// HTTP tunes the server.
type HTTP struct {
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`
	// TrustedProxies lists the reverse proxies (addresses or CIDR
	// prefixes, comma-separated) whose X-Forwarded-For the login limit
	// believes; empty trusts none.
	TrustedProxies string `yaml:"trusted_proxies"`
}

// Proxies parses TrustedProxies.
func (h HTTP) Proxies() ([]netip.Prefix, error) {
	var out []netip.Prefix
	for part := range strings.SplitSeq(h.TrustedProxies, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if p, err := netip.ParsePrefix(part); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(part)
		if err != nil {
			return nil, fmt.Errorf("http.trusted_proxies: %q is not an address or a prefix such as 10.0.0.0/8", part)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// Default returns the built-in defaults, rooted at dataDir.
func Default(dataDir string) Config {
	return Config{
		Listen:    "127.0.0.1:8080",
		DataDir:   dataDir,
		Store:     Store{DSN: "sqlite:" + filepath.Join(dataDir, "t3agent.db")},
		Site:      Site{Name: "TYPO3 site"},
		Log:       Log{Level: "info", Format: "text"},
		HTTP:      HTTP{ShutdownTimeout: 15 * time.Second},
		MCP:       MCP{OperationTimeout: 20 * time.Second}, // mcp.DefaultTimeout
		Chat:      DefaultChat(),
		SiteIndex: SiteIndex{Interval: 30 * time.Second, MaxAge: 10 * time.Minute},
	}
}

// Load reads path (which must exist), applies environment overrides from
// env (os.Environ format) and validates. A missing file is an error; use
// Default for a configuration without a file.
func Load(path string, env []string) (Config, error) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("configuration file %s cannot be read: %w", path, err)
	}
	base := filepath.Dir(path)
	cfg := Default(filepath.Join(base, "data"))
	if err := decodeYAML(data, &cfg); err != nil {
		return Config{}, fmt.Errorf("configuration file %s: %w", path, err)
	}
	cfg.resolvePaths(base)
	return finish(cfg, env)
}

// FromEnv returns the defaults (data dir dataDir) with environment
// overrides applied, validated.
func FromEnv(dataDir string, env []string) (Config, error) {
	return finish(Default(dataDir), env)
}

func finish(cfg Config, env []string) (Config, error) {
	if err := applyEnv(&cfg, env); err != nil {
		return Config{}, err
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

func decodeYAML(data []byte, cfg *Config) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil {
		if errors.Is(err, io.EOF) {
			return nil // an empty file keeps the defaults
		}
		var te *yaml.TypeError
		if errors.As(err, &te) {
			msgs := make([]string, len(te.Errors))
			for i, m := range te.Errors {
				msgs[i] = unknownField.ReplaceAllString(m, `unknown key "$1"`)
			}
			return errors.New(strings.Join(msgs, "; "))
		}
		return errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	return nil
}

var unknownField = regexp.MustCompile(`field (\S+) not found in type \S+`)

// resolvePaths makes file paths relative to the configuration file's
// directory absolute, so the process may run from anywhere.
func (c *Config) resolvePaths(base string) {
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(base, p)
	}
	c.DataDir = abs(c.DataDir)
	c.Site.Root = abs(c.Site.Root)
	c.Site.TCA = abs(c.Site.TCA)
	c.Security.MasterKeyFile = abs(c.Security.MasterKeyFile)
	c.Store.DSN = absSQLite(c.Store.DSN, base)
	c.Site.DSN = absSQLite(c.Site.DSN, base)
}

func absSQLite(dsn, base string) string {
	if p, ok := strings.CutPrefix(dsn, "sqlite:"); ok && p != "" && !filepath.IsAbs(p) {
		return "sqlite:" + filepath.Join(base, p)
	}
	return dsn
}

// EnvName returns the environment variable that overrides the key path
// (for example "site.dsn" → T3AGENT_SITE_DSN).
func EnvName(key string) string {
	return "T3AGENT_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// applyEnv walks the yaml-tagged fields and takes T3AGENT_* values.
func applyEnv(cfg *Config, env []string) error {
	vars := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "T3AGENT_") {
			vars[k] = v
		}
	}
	return walk(reflect.ValueOf(cfg).Elem(), "", func(key string, f reflect.Value) error {
		v, ok := vars[EnvName(key)]
		if !ok {
			return nil
		}
		if err := setScalar(f, v); err != nil {
			return fmt.Errorf("%s (from %s): %w", key, EnvName(key), err)
		}
		return nil
	})
}

// Keys lists every configuration key, for documentation and tests.
func Keys() []string {
	var keys []string
	var c Config
	_ = walk(reflect.ValueOf(&c).Elem(), "", func(key string, _ reflect.Value) error {
		keys = append(keys, key)
		return nil
	})
	return keys
}

func walk(v reflect.Value, prefix string, fn func(key string, f reflect.Value) error) error {
	t := v.Type()
	for i := range t.NumField() {
		tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
		if tag == "" || tag == "-" {
			continue
		}
		key := tag
		if prefix != "" {
			key = prefix + "." + tag
		}
		f := v.Field(i)
		if f.Kind() == reflect.Struct {
			if err := walk(f, key, fn); err != nil {
				return err
			}
			continue
		}
		if err := fn(key, f); err != nil {
			return err
		}
	}
	return nil
}

func setScalar(f reflect.Value, s string) error {
	switch {
	case f.Type() == reflect.TypeFor[time.Duration]():
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("%q is not a duration such as 15s or 2m", s)
		}
		f.SetInt(int64(d))
	case f.Kind() == reflect.String:
		f.SetString(s)
	case f.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("%q is not true or false", s)
		}
		f.SetBool(b)
	case f.Kind() == reflect.Int:
		n, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("%q is not a whole number", s)
		}
		f.SetInt(int64(n))
	default:
		return fmt.Errorf("cannot be set from the environment")
	}
	return nil
}

// Validate checks every key and returns the first problem as one sentence
// naming the key.
func (c Config) Validate() error {
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return fmt.Errorf("listen: %q is not a host:port address", c.Listen)
	}
	if c.DataDir == "" {
		return errors.New("data_dir: must name a directory")
	}
	if err := checkStoreDSN(c.Store.DSN); err != nil {
		return fmt.Errorf("store.dsn: %w", err)
	}
	if c.Site.DSN == "" {
		return errors.New("site.dsn: must name the TYPO3 site database (sqlite:PATH, mysql://… or postgres://…)")
	}
	if err := checkSiteDSN(c.Site.DSN); err != nil {
		return fmt.Errorf("site.dsn: %w", err)
	}
	if c.Site.Root != "" {
		if st, err := os.Stat(c.Site.Root); err != nil || !st.IsDir() {
			return fmt.Errorf("site.root: %s is not a directory", c.Site.Root)
		}
	}
	if c.Site.TCA != "" {
		if _, err := os.Stat(c.Site.TCA); err != nil {
			return fmt.Errorf("site.tca: %s cannot be read", c.Site.TCA)
		}
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("log.level: %q is not one of debug, info, warn, error", c.Log.Level)
	}
	switch c.Log.Format {
	case "text", "json":
	default:
		return fmt.Errorf("log.format: %q is not text or json", c.Log.Format)
	}
	// A missing key file is not a mistake: EnsureMasterKey creates it on
	// start. One that exists must be fit to use.
	if c.Security.MasterKey == "" && c.Security.MasterKeyFile != "" {
		if _, err := os.Lstat(c.Security.MasterKeyFile); !errors.Is(err, fs.ErrNotExist) {
			if _, err := readKeyFile(c.Security.MasterKeyFile); err != nil {
				return err
			}
		}
	}
	if c.HTTP.ShutdownTimeout <= 0 {
		return errors.New("http.shutdown_timeout: must be a positive duration such as 15s")
	}
	if _, err := c.HTTP.Proxies(); err != nil {
		return err
	}
	if err := c.MCP.check(); err != nil {
		return err
	}
	if err := c.SiteIndex.check(); err != nil {
		return err
	}
	if err := c.Chat.check(); err != nil {
		return err
	}
	if err := c.Search.check(); err != nil {
		return err
	}
	return c.Otel.check()
}

func checkStoreDSN(dsn string) error {
	switch {
	case dsn == "":
		return errors.New("must name t3agent's own database (sqlite:PATH or postgres://…)")
	case strings.HasPrefix(dsn, "sqlite:") && len(dsn) > len("sqlite:"):
		return nil
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return nil
	}
	return fmt.Errorf("%q is not sqlite:PATH or postgres://…", redact(dsn))
}

func checkSiteDSN(dsn string) error {
	for _, p := range []string{"sqlite:", "mysql://", "mariadb://", "postgres://", "postgresql://"} {
		if strings.HasPrefix(dsn, p) && len(dsn) > len(p) {
			return nil
		}
	}
	return fmt.Errorf("%q is not sqlite:PATH, mysql://… or postgres://…", redact(dsn))
}

// redact hides anything between "://" and "@", where credentials live.
func redact(dsn string) string {
	if i := strings.Index(dsn, "://"); i >= 0 {
		if j := strings.LastIndex(dsn, "@"); j > i {
			return dsn[:i+3] + "…@" + dsn[j+1:]
		}
	}
	return dsn
}
