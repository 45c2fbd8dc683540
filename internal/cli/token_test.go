package cli_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/t3agent/t3agent/internal/store"
)

// TestTokenRoundTrip: create prints the secret once and stores only its
// hash; list never shows a secret or a hash; revoke marks the token;
// every wrong input is one clear sentence.
func TestTokenRoundTrip(t *testing.T) {
	t.Parallel()
	work := demoDir(t)
	ctx := context.Background()
	st := demoStore(t, work, &chatClock{})

	before := time.Now()
	out, errOut, err := run(t, ctx, work, nil, "token", "create", "--name", "ci-approver", "--user", "editor",
		"--scopes", "agent:read,agent:approve", "--expires", "30d")
	if err != nil {
		t.Fatalf("token create: %v (stderr %s)", err, errOut)
	}
	secret := strings.TrimSuffix(out, "\n")
	raw, ok := strings.CutPrefix(secret, "t3a_")
	if b, err := base64.RawURLEncoding.DecodeString(raw); !ok || err != nil || len(b) != 32 || strings.Contains(secret, "\n") {
		t.Fatalf("stdout is not the secret alone (t3a_ and 32 bytes base64url): %q", out)
	}
	if !strings.Contains(errOut, "Token ci-approver acts as editor with agent:read,agent:approve") || !strings.Contains(errOut, "not shown again") {
		t.Errorf("stderr = %q", errOut)
	}
	sum := sha256.Sum256([]byte(secret))
	tok, err := st.ServiceTokenByHash(ctx, hex.EncodeToString(sum[:]))
	if err != nil {
		t.Fatalf("no token stored under the secret's SHA-256: %v", err)
	}
	if tok.Name != "ci-approver" || tok.Username != "editor" || tok.CreatedBy != "cli" || tok.Revoked ||
		len(tok.Scopes) != 2 || tok.Scopes[0] != store.ScopeAgentRead || tok.Scopes[1] != store.ScopeAgentApprove {
		t.Errorf("stored token: %+v", tok)
	}
	if exp := tok.ExpiresAt.Sub(before); exp < 30*24*time.Hour || exp > 30*24*time.Hour+time.Minute {
		t.Errorf("expires %v after creation, want 30 days", exp)
	}

	// A second token, by an admin, never expiring, printed as JSON.
	out, _, err = run(t, ctx, work, nil, "token", "create", "--name", "ops", "--user", "admin", "--scopes", "admin", "--as", "admin", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var created struct {
		Name      string     `json:"name"`
		Secret    string     `json:"secret"`
		CreatedBy string     `json:"createdBy"`
		ExpiresAt *time.Time `json:"expiresAt"`
	}
	if err := json.Unmarshal([]byte(out), &created); err != nil || created.Name != "ops" || !strings.HasPrefix(created.Secret, "t3a_") ||
		created.Secret == secret || created.CreatedBy != "admin" || created.ExpiresAt != nil {
		t.Fatalf("token create --json = %s (%v)", out, err)
	}

	out, _, err = run(t, ctx, work, nil, "token", "list")
	if err != nil {
		t.Fatal(err)
	}
	hash := hex.EncodeToString(sum[:])
	for _, leak := range []string{secret, raw, created.Secret, hash} {
		if strings.Contains(out, leak) {
			t.Fatalf("token list shows a secret or its hash:\n%s", out)
		}
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "NAME") || !strings.HasPrefix(lines[1], "ci-approver") || !strings.Contains(lines[1], "agent:read,agent:approve  active") ||
		!strings.HasPrefix(lines[2], "ops") || !strings.Contains(lines[2], "admin") {
		t.Errorf("token list:\n%s", out)
	}

	if out, _, err := run(t, ctx, work, nil, "token", "revoke", "ci-approver"); err != nil || out != "Token ci-approver revoked.\n" {
		t.Fatalf("token revoke = %q, %v", out, err)
	}
	if tok, err := st.ServiceTokenByHash(ctx, hash); err != nil || !tok.Revoked {
		t.Errorf("after revoke: %+v, %v", tok, err)
	}
	out, _, err = run(t, ctx, work, nil, "token", "list", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var listed []map[string]any
	if err := json.Unmarshal([]byte(out), &listed); err != nil || len(listed) != 2 || listed[0]["name"] != "ci-approver" || listed[0]["revoked"] != true {
		t.Fatalf("token list --json = %s (%v)", out, err)
	}
	for _, row := range listed {
		for k := range row {
			if strings.Contains(strings.ToLower(k), "secret") || strings.Contains(strings.ToLower(k), "hash") {
				t.Errorf("token list --json has the key %q", k)
			}
		}
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"token", "create", "--name", "x", "--user", "editor", "--scopes", "agent:write"},
			`--scopes: "agent:write" is not a scope; the scopes are agent:read, agent:run, agent:approve, agent:cancel, admin`},
		{[]string{"token", "create", "--name", "x", "--user", "editor"}, "token create needs --scopes"},
		{[]string{"token", "create", "--user", "editor", "--scopes", "agent:read"}, "token create needs --name"},
		{[]string{"token", "create", "--name", "two words", "--user", "editor", "--scopes", "agent:read"}, `--name: "two words" is not a token name`},
		{[]string{"token", "create", "--name", "x", "--scopes", "agent:read"}, "token create needs --user USERNAME"},
		{[]string{"token", "create", "--name", "x", "--user", "former", "--scopes", "agent:read"}, "--user former: this backend user cannot act"},
		{[]string{"token", "create", "--name", "x", "--user", "nobody", "--scopes", "agent:read"}, "--user nobody: this backend user cannot act"},
		{[]string{"token", "create", "--name", "x", "--user", "editor", "--scopes", "admin"}, "--scopes: admin needs a TYPO3 admin as the token's user"},
		{[]string{"token", "create", "--name", "x", "--user", "editor", "--scopes", "agent:read", "--as", "editor"}, "--as editor: only TYPO3 admins create service tokens"},
		{[]string{"token", "create", "--name", "x", "--user", "editor", "--scopes", "agent:read", "--expires", "soon"}, `"soon" is not a duration`},
		{[]string{"token", "create", "--name", "x", "--user", "editor", "--scopes", "agent:read", "--expires", "-1h"}, "--expires must not be negative"},
		{[]string{"token", "create", "--name", "ops", "--user", "editor", "--scopes", "agent:read"}, "--name: a token named ops already exists"},
		{[]string{"token", "revoke", "nope"}, "there is no token named nope"},
	} {
		_, _, err := run(t, ctx, work, nil, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: err = %v, want one sentence containing %q", c.args, err, c.want)
		}
	}
	toks, err := st.ServiceTokens(ctx)
	if err != nil || len(toks) != 2 {
		t.Errorf("refused creates stored tokens: %d, %v", len(toks), err)
	}
}
