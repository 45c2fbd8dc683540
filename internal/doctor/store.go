package doctor

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/config"
	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/llm/anthropic"
	"github.com/t3agent/t3agent/internal/llm/gemini"
	"github.com/t3agent/t3agent/internal/llm/openai"
	"github.com/t3agent/t3agent/internal/mcp"
	"github.com/t3agent/t3agent/internal/secret"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/typo3"
)

// store checks t3agent's own store, then what lives in it: the master key
// against the sealed values, the providers and the MCP servers.
func (d *doctor) store(ctx context.Context) {
	cfg := d.p.Config
	keys := d.masterKey()
	bctx, cancel := d.bounded(ctx)
	st, err := store.Status(bctx, cfg.Store.DSN)
	cancel()
	switch {
	case err != nil && strings.Contains(err.Error(), "does not exist"):
		d.warn("store.database", "the store "+typo3.RedactDSN(cfg.Store.DSN)+" does not exist yet, so providers and MCP servers were not checked.",
			"start t3agent once (t3agent serve) to create it, or check store.dsn")
		return
	case err != nil:
		d.fail("store.database", "the store does not answer: "+sentence(err)+".",
			"check store.dsn and that the database runs and this machine may reach it")
		return
	}
	d.ok("store.database", "the store, "+st.Database+", answers.")
	switch {
	case st.Current > st.Latest:
		d.fail("store.schema", fmt.Sprintf("the store has schema version %d, newer than the %d this t3agent knows.", st.Current, st.Latest),
			"run the t3agent version that wrote the store (or a newer one)")
		return
	case st.Current < st.Latest:
		d.warn("store.schema", fmt.Sprintf("the store has schema version %d and this t3agent brings migrations up to %d; providers and MCP servers were not checked.", st.Current, st.Latest),
			"back the store up (t3agent backup FILE), then start t3agent once: it migrates the store")
		return
	}
	d.ok("store.schema", fmt.Sprintf("the store's schema is current (version %d).", st.Current))
	// Current: opening migrates nothing.
	s, err := store.Open(ctx, cfg.Store.DSN, store.OpenParams{Logger: d.p.Logger})
	if err != nil {
		d.fail("store.database", "the store cannot be opened: "+sentence(err)+".", "check store.dsn")
		return
	}
	defer s.Close()
	if strings.HasPrefix(cfg.Store.DSN, "postgres") {
		if db, err := sql.Open("pgx", cfg.Store.DSN); err == nil {
			bctx, cancel := d.bounded(ctx)
			d.clock(bctx, "store.clock", "store database", db, "SELECT clock_timestamp()")
			cancel()
			_ = db.Close()
		}
	}
	cfgs := agentconfig.New(agentconfig.Params{Store: s, Keyring: keys, LookupEnv: d.p.LookupEnv})
	d.providers(ctx, cfgs)
	d.mcpServers(ctx, s, keys)
}

// masterKey checks the master key is there and safe; it returns the
// keyring, nil without one.
func (d *doctor) masterKey() *secret.Keyring {
	sec := d.p.Config.Security
	if sec.MasterKey == "" && sec.MasterKeyFile != "" {
		if _, err := os.Lstat(sec.MasterKeyFile); errors.Is(err, fs.ErrNotExist) {
			d.warn("security.master_key", "the master key file "+sec.MasterKeyFile+" does not exist yet: nothing sealed can be opened until the first start creates it.",
				"start t3agent once (it creates the key, readable by its owner only), then back the key up apart from the store's backups")
			return nil
		}
	}
	keys, err := d.p.Config.Keyring()
	switch {
	case errors.Is(err, config.ErrNoMasterKey):
		d.fail("security.master_key", "no master key is configured: credentials and waiting runs cannot be sealed or opened.",
			"set security.master_key_file (t3agent creates the file on its first start) or T3AGENT_SECURITY_MASTER_KEY")
		return nil
	case err != nil:
		d.fail("security.master_key", sentence(err)+".", "chmod 600 the key file and make sure it holds the base64 key t3agent created")
		return nil
	}
	where := "given in the configuration"
	if sec.MasterKey == "" {
		where = "in " + sec.MasterKeyFile + ", readable by its owner only"
	}
	d.ok("security.master_key", "the master key is present ("+where+").")
	return keys
}

// providers lists the models of every active provider: a cheap call that
// needs a valid key, so it proves the endpoint and the key.
func (d *doctor) providers(ctx context.Context, cfgs *agentconfig.Service) {
	snap, err := cfgs.Snapshot(ctx)
	if err != nil {
		d.fail("providers", "the agent configuration cannot be read: "+sentence(err)+".", "check the store")
		return
	}
	if len(snap.Providers) == 0 {
		d.warn("providers", "no provider is configured, so the chat and agent runs have no model.",
			"declare a provider, a model and a configuration and run `t3agent apply -f agents.yaml` (docs/configuration.md)")
		return
	}
	for _, p := range snap.Providers {
		check := "provider:" + p.Identifier
		if !p.Active {
			d.ok(check, "provider "+p.Identifier+" is inactive; not checked.")
			continue
		}
		key, err := cfgs.APIKey(p)
		if err == nil {
			_, err = cfgs.Headers(p)
		}
		if err != nil {
			if errors.Is(err, secret.ErrCannotOpen) || strings.Contains(err.Error(), "cannot be opened") {
				d.fail(check, "the master key does not open provider "+p.Identifier+"'s sealed key: "+sentence(err)+".",
					"configure the master key the store's credentials were sealed with (security.master_key_file, older keys in security.previous_keys), or apply the key again")
			} else {
				d.fail(check, "provider "+p.Identifier+"'s key cannot be read: "+sentence(err)+".",
					"set the variable its api_key names in t3agent's environment, or apply the key again")
			}
			continue
		}
		d.provider(ctx, cfgs, snap, p, key)
	}
}

// lister is a provider adapter that can list models.
type lister interface {
	llm.ModelLister
	Close()
}

func (d *doctor) provider(ctx context.Context, cfgs *agentconfig.Service, snap *agentconfig.Snapshot, p agentconfig.Provider, key string) {
	check := "provider:" + p.Identifier
	headers, _ := cfgs.Headers(p)
	timeout := d.p.Timeout
	var a lister
	var err error
	switch p.Adapter {
	case agentconfig.AdapterOpenAI, agentconfig.AdapterOpenAICompatible:
		a, err = openai.New(openai.Params{Name: p.Identifier, BaseURL: p.Endpoint, APIKey: key, Headers: headers, Timeout: timeout})
	case agentconfig.AdapterAnthropic:
		a, err = anthropic.New(anthropic.Params{Name: p.Identifier, BaseURL: p.Endpoint, APIKey: key, Headers: headers, Timeout: timeout})
	case agentconfig.AdapterGemini:
		a, err = gemini.New(ctx, gemini.Params{Name: p.Identifier, BaseURL: p.Endpoint, APIKey: key, Headers: headers, Timeout: timeout})
	default:
		err = fmt.Errorf("adapter %q is not supported", p.Adapter)
	}
	if err != nil {
		d.fail(check, "provider "+p.Identifier+" cannot be set up: "+sentence(err)+".", "correct the provider and run `t3agent apply` again")
		return
	}
	defer a.Close()
	bctx, cancel := d.bounded(ctx)
	defer cancel()
	models, err := a.ListModels(bctx)
	where := p.Endpoint
	if where == "" {
		where = "its default endpoint"
	}
	if err != nil {
		le := llm.AsError(p.Identifier, err)
		switch le.Class {
		case llm.FailAuth:
			d.fail(check, fmt.Sprintf("provider %s at %s refuses t3agent's API key (HTTP %d).", p.Identifier, where, le.Status),
				"store a valid key: set api_key in the agents document (or the variable it names) and run `t3agent apply -f FILE`")
		case llm.FailConnection, llm.FailServerError, llm.FailRateLimit:
			d.fail(check, fmt.Sprintf("provider %s at %s is not reachable: %s.", p.Identifier, where, strings.TrimSuffix(le.Message, ".")),
				"check providers[].endpoint of "+p.Identifier+", that the server runs and that this machine may reach it (proxy, firewall)")
		default:
			d.fail(check, fmt.Sprintf("provider %s at %s does not list its models: %s.", p.Identifier, where, strings.TrimSuffix(le.Message, ".")),
				"check the endpoint and the adapter of "+p.Identifier+" (an OpenAI-compatible server must serve GET /models)")
		}
		return
	}
	ids := make([]string, len(models))
	for i, m := range models {
		ids[i] = m.ID
	}
	var unknown []string
	for _, m := range snap.Models {
		if m.Provider == p.Identifier && m.Active && len(ids) > 0 && !slices.Contains(ids, m.ModelID) {
			unknown = append(unknown, m.Identifier+" ("+m.ModelID+")")
		}
	}
	if len(unknown) > 0 {
		d.warn(check, fmt.Sprintf("provider %s answers, but does not list the model ids of %s.", p.Identifier, strings.Join(unknown, ", ")),
			"correct models[].model_id to one the provider lists (GET "+strings.TrimSuffix(p.Endpoint, "/")+"/models)")
		return
	}
	d.ok(check, fmt.Sprintf("provider %s at %s answers with %d models.", p.Identifier, where, len(models)))
}

// mcpServers pings every enabled MCP server with its credential: it must
// answer the handshake and accept the login.
func (d *doctor) mcpServers(ctx context.Context, s store.Store, keys *secret.Keyring) {
	cfg := d.p.Config
	svc, err := mcp.New(mcp.Params{Store: s, Keyring: keys, Logger: d.p.Logger, Timeout: min(cfg.MCP.OperationTimeout, d.p.Timeout),
		AllowedHosts: cfg.MCP.Hosts(), ClientVersion: d.p.Version})
	if err != nil {
		d.fail("mcp", "the MCP client cannot be set up: "+sentence(err)+".", "check mcp.allowed_hosts")
		return
	}
	defer svc.Close()
	servers, err := svc.Servers(ctx)
	if err != nil {
		d.fail("mcp", "the MCP servers cannot be read: "+sentence(err)+".", "check the store")
		return
	}
	for _, srv := range servers {
		check := "mcp:" + srv.Identifier
		login := "login: none"
		switch srv.Auth {
		case mcp.AuthBearer:
			login = "login: bearer token"
		case mcp.AuthHeader:
			login = "login: header " + srv.AuthHeader
		}
		if srv.Auth != mcp.AuthNone && !srv.HasCredential {
			login += " (none stored)"
		}
		if !srv.Enabled {
			d.ok(check, "MCP server "+srv.Identifier+" is disabled; not checked.")
			continue
		}
		res, err := svc.Ping(ctx, srv.Identifier)
		if err != nil {
			setCred := fmt.Sprintf("store a valid credential: t3agent mcp set %s --credential-env VAR --as ADMIN", srv.Identifier)
			switch mcp.KindOf(err) {
			case mcp.KindCredential:
				d.fail(check, fmt.Sprintf("MCP server %s cannot log in (%s): %s.", srv.Identifier, login, sentence(err)),
					"configure the master key its credential was sealed with, or "+setCred)
			case mcp.KindUnauthorized:
				d.fail(check, fmt.Sprintf("MCP server %s refuses t3agent's login (%s): %s.", srv.Identifier, login, sentence(err)), setCred)
			case mcp.KindUnreachable, mcp.KindTimeout, mcp.KindRefused:
				d.fail(check, fmt.Sprintf("MCP server %s at %s is not reachable: %s.", srv.Identifier, srv.URL, sentence(err)),
					fmt.Sprintf("check that it runs and its URL (t3agent mcp set %s --url URL --as ADMIN), or disable it: t3agent mcp disable %s --as ADMIN", srv.Identifier, srv.Identifier))
			default:
				d.fail(check, fmt.Sprintf("MCP server %s does not answer the handshake: %s.", srv.Identifier, sentence(err)),
					fmt.Sprintf("run `t3agent mcp ping %s` and check the server's own log", srv.Identifier))
			}
			continue
		}
		if srv.Inert() {
			d.warn(check, fmt.Sprintf("MCP server %s answers (%s), but has no data class, so its tools are never offered.", srv.Identifier, login),
				fmt.Sprintf("declare what its tools return: t3agent mcp set %s --data-class editorContent --as ADMIN", srv.Identifier))
			continue
		}
		d.ok(check, fmt.Sprintf("MCP server %s answers (%s %s, protocol %s, %s; %s).", srv.Identifier, res.ServerName, res.ServerVersion,
			res.ProtocolVersion, res.Latency.Round(time.Millisecond), login))
	}
}

// listen warns when the HTTP server is reachable from other machines:
// t3agent speaks plain HTTP, so logins, tokens and cookies would cross
// the network unencrypted.
func (d *doctor) listen() {
	addr := d.p.Config.Listen
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		d.fail("http.listen", "listen "+addr+" is not a host:port address.", "set listen to 127.0.0.1:8080")
		return
	}
	if host == "localhost" {
		d.ok("http.listen", "t3agent listens on "+addr+", this machine only.")
		return
	}
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil && ip.IsLoopback() {
		d.ok("http.listen", "t3agent listens on "+addr+", this machine only.")
		return
	}
	d.warn("http.listen", "t3agent listens on "+addr+" with plain HTTP, reachable from other machines: logins, tokens and session cookies would travel unencrypted.",
		"listen on 127.0.0.1 and put a TLS-terminating reverse proxy (nginx, Caddy, a load balancer) in front, forwarding to it")
}
