package agentconfig_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/secret"
)

const headerSecret = "hdr-Secret-Value-9f8e7d6c5b4a"

// keyDoc has a literal key and a literal header value, and one env key.
const keyDoc = `
providers:
  - identifier: anthropic
    adapter: anthropic
    api_key: ` + literalKey + `
    trust_zone: externalEu
    headers:
      X-Gateway-Token: ` + headerSecret + `
      X-Team: env:TEAM_NAME
  - identifier: openai
    adapter: openai
    api_key: env:OPENAI_API_KEY
    trust_zone: externalGlobal
`

// dbBytes reads the database and its WAL, where fresh writes live.
func dbBytes(t *testing.T, path string) []byte {
	t.Helper()
	var all []byte
	for _, p := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	if len(all) == 0 {
		t.Fatal("the database file is empty")
	}
	return all
}

func TestLiteralKeysAreSealedAtRest(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envParams{})
	e.mustApply(t, keyDoc, false)

	raw := dbBytes(t, e.path)
	for _, plain := range []string{literalKey, headerSecret} {
		if bytes.Contains(raw, []byte(plain)) {
			t.Errorf("the database file holds the plaintext %q", plain[:8])
		}
	}
	// What is stored is a sealed value bound to the provider, and the env
	// reference only by name.
	s := e.snapshot(t)
	anthropic, openai := s.Providers[0], s.Providers[1]
	if !strings.HasPrefix(anthropic.APIKey, "t3s1:") || !strings.HasPrefix(anthropic.Headers["X-Gateway-Token"], "t3s1:") ||
		anthropic.Headers["X-Team"] != "env:TEAM_NAME" || openai.APIKey != "env:OPENAI_API_KEY" {
		t.Errorf("stored keys: %q, headers %q, %q", anthropic.APIKey, anthropic.Headers, openai.APIKey)
	}
	if !bytes.Contains(raw, []byte(anthropic.APIKey)) {
		t.Error("the sealed key is not in the file: the byte check looked at the wrong file")
	}
	if _, err := e.keys.Open(anthropic.APIKey, "llm_provider:openai"); !errors.Is(err, secret.ErrCannotOpen) {
		t.Error("the sealed key opens for another provider")
	}

	// At the moment of use the service hands out the plaintext.
	snap, err := e.svc.Snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	p, _ := snap.Provider("anthropic")
	if key, err := e.svc.APIKey(p); err != nil || key != literalKey {
		t.Errorf("APIKey = %q, %v", key, err)
	}
	e.environ["TEAM_NAME"] = "editors"
	if h, err := e.svc.Headers(p); err != nil || h["X-Gateway-Token"] != headerSecret || h["X-Team"] != "editors" || len(h) != 2 {
		t.Errorf("Headers = %q, %v", h, err)
	}

	// Re-applying keeps the sealed value byte for byte; a new key reseals.
	e.mustApply(t, keyDoc, false)
	if again := e.snapshot(t); again.Providers[0].APIKey != anthropic.APIKey {
		t.Error("re-applying the same literal key sealed it again")
	}
	rep := e.mustApply(t, strings.Replace(keyDoc, literalKey, "sk-ant-api03-another-key-1234567890", 1), false)
	c := rep.Changes[0]
	if c.Identifier != "anthropic" || c.Action != agentconfig.ActionUpdated || !slices.Equal(c.Fields, []string{"api_key"}) {
		t.Errorf("changing the key reported %+v", c)
	}
	if bytes.Contains(dbBytes(t, e.path), []byte("another-key-1234567890")) {
		t.Error("the new key is in the database file in clear")
	}
}

func TestEnvKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envParams{noKeyring: true})
	// Without a master key, env keys still work…
	e.mustApply(t, strings.Replace(strings.Replace(keyDoc, literalKey, "env:ANTHROPIC_KEY", 1), headerSecret, "env:GW", 1), false)
	snap, _ := e.svc.Snapshot(t.Context())
	p, _ := snap.Provider("openai")
	_, err := e.svc.APIKey(p)
	if !errors.Is(err, agentconfig.ErrNoKey) || !strings.Contains(err.Error(), "OPENAI_API_KEY is not set") {
		t.Errorf("APIKey with the variable unset = %v", err)
	}
	e.environ["OPENAI_API_KEY"] = "sk-from-the-environment"
	if key, err := e.svc.APIKey(p); err != nil || key != "sk-from-the-environment" {
		t.Errorf("APIKey = %q, %v", key, err)
	}
	if bytes.Contains(dbBytes(t, e.path), []byte("sk-from-the-environment")) {
		t.Error("an env key was stored")
	}
	// …and a literal one is refused, naming the field, without echoing it.
	_, err = e.apply(t, keyDoc, false)
	if !errors.Is(err, agentconfig.ErrInvalid) || !strings.Contains(err.Error(), `provider "anthropic" (line 3): api_key: a literal value is sealed with the master key`) ||
		!strings.Contains(err.Error(), "headers.X-Gateway-Token") || strings.Contains(err.Error(), literalKey) || strings.Contains(err.Error(), headerSecret) {
		t.Errorf("literal key without a master key: %v", err)
	}
}

func TestSealedKeyWithTheWrongMasterKey(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "t3agent.db")
	first := newEnv(t, envParams{path: path})
	first.mustApply(t, keyDoc, false)

	// The same database opened with another master key: the key is
	// unavailable, with an error that does not show it.
	other := newEnv(t, envParams{path: path})
	snap, _ := other.svc.Snapshot(t.Context())
	p, _ := snap.Provider("anthropic")
	_, err := other.svc.APIKey(p)
	if !errors.Is(err, agentconfig.ErrNoKey) || !strings.Contains(err.Error(), "cannot be opened") || strings.Contains(err.Error(), "t3s1") {
		t.Errorf("APIKey with the wrong master key = %v", err)
	}
	// Applying the literal again with the new master key reseals it.
	rep := other.mustApply(t, keyDoc, false)
	if rep.Changes[0].Action != agentconfig.ActionUpdated {
		t.Errorf("re-apply under a new master key = %+v, want the key resealed", rep.Changes[0])
	}
	snap, _ = other.svc.Snapshot(t.Context())
	p, _ = snap.Provider("anthropic")
	if key, err := other.svc.APIKey(p); err != nil || key != literalKey {
		t.Errorf("after resealing: %q, %v", key, err)
	}
	// Without any keyring the sealed value is unavailable too.
	none := agentconfig.New(agentconfig.Params{Store: other.st})
	if _, err := none.APIKey(p); !errors.Is(err, agentconfig.ErrNoKey) || !strings.Contains(err.Error(), "no master key") {
		t.Errorf("APIKey without a keyring = %v", err)
	}
}

func TestSecretRefPrintsNoValue(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envParams{})
	e.mustApply(t, keyDoc, false)
	snap, _ := e.svc.Snapshot(t.Context())
	p, _ := snap.Provider("anthropic")
	for _, got := range []string{p.APIKey.String(), p.APIKey.GoString()} {
		if strings.Contains(got, "t3s1") || !strings.Contains(got, "sealed") {
			t.Errorf("sealed ref prints %q", got)
		}
	}
	if !p.APIKey.Sealed() || p.APIKey.Env() != "" || p.APIKey.IsZero() {
		t.Errorf("sealed ref: %v", p.APIKey)
	}
	env := agentconfig.EnvSecret("X")
	if env.String() != "env:X" || env.Env() != "X" || env.Sealed() {
		t.Errorf("env ref: %v", env)
	}
	if z := (agentconfig.SecretRef{}); !z.IsZero() || z.String() != "none" {
		t.Errorf("zero ref: %v", z)
	}
}
