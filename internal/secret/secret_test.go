package secret

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func newKey(t *testing.T) string {
	t.Helper()
	k, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSealOpenRoundTrip(t *testing.T) {
	t.Parallel()
	k, err := NewKeyring(newKey(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, plain := range [][]byte{{}, []byte("sk-live-12345"), bytes.Repeat([]byte{0, 0xff}, 5000)} {
		s, err := k.Seal(plain, "mcp_server:7")
		if err != nil {
			t.Fatal(err)
		}
		if len(plain) > 3 && strings.Contains(s, string(plain)) {
			t.Fatalf("sealed value contains the plaintext")
		}
		got, err := k.Open(s, "mcp_server:7")
		if err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("Open = %q, %v", got, err)
		}
	}
	a, _ := k.Seal([]byte("x"), "p")
	b, _ := k.Seal([]byte("x"), "p")
	if a == b {
		t.Error("two seals of the same value are equal: nonce reuse")
	}
}

func TestOpenRefusals(t *testing.T) {
	t.Parallel()
	k1, _ := NewKeyring(newKey(t))
	k2, _ := NewKeyring(newKey(t))
	sealed, err := k1.Seal([]byte("token-abc"), "mcp_server:1")
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.SplitN(sealed, ":", 3)
	raw, _ := base64.RawURLEncoding.DecodeString(parts[2])
	raw[len(raw)-1] ^= 1
	flipped := parts[0] + ":" + parts[1] + ":" + base64.RawURLEncoding.EncodeToString(raw)
	cases := map[string]struct {
		k     *Keyring
		value string
		ad    string
	}{
		"other place":    {k1, sealed, "mcp_server:2"},
		"other key":      {k2, sealed, "mcp_server:1"},
		"flipped bit":    {k1, flipped, "mcp_server:1"},
		"no prefix":      {k1, "token-abc", "mcp_server:1"},
		"bad base64":     {k1, parts[0] + ":" + parts[1] + ":!!!", "mcp_server:1"},
		"truncated":      {k1, sealed[:len(sealed)-30], "mcp_server:1"},
		"empty":          {k1, "", "mcp_server:1"},
		"unknown key id": {k1, parts[0] + ":00000000:" + parts[2], "mcp_server:1"},
	}
	for name, c := range cases {
		got, err := c.k.Open(c.value, c.ad)
		if !errors.Is(err, ErrCannotOpen) || got != nil {
			t.Errorf("%s: Open = %q, %v", name, got, err)
		}
		if err != nil && strings.Contains(err.Error(), "token") {
			t.Errorf("%s: error leaks the value", name)
		}
	}
}

func TestRotation(t *testing.T) {
	t.Parallel()
	oldKey, newK := newKey(t), newKey(t)
	before, _ := NewKeyring(oldKey)
	sealed, _ := before.Seal([]byte("v"), "x")
	after, err := NewKeyring(newK, oldKey)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := after.Open(sealed, "x"); err != nil || string(got) != "v" {
		t.Fatalf("old value does not open after rotation: %v", err)
	}
	if !after.NeedsReseal(sealed) {
		t.Error("a value under the previous key does not report NeedsReseal")
	}
	resealed, _ := after.Seal([]byte("v"), "x")
	if after.NeedsReseal(resealed) {
		t.Error("a value under the current key reports NeedsReseal")
	}
	if id, _ := KeyIDOf(resealed); id != after.CurrentKeyID() {
		t.Errorf("KeyIDOf = %s, want %s", id, after.CurrentKeyID())
	}
}

func TestKeyEncodings(t *testing.T) {
	t.Parallel()
	raw := bytes.Repeat([]byte{7}, KeySize)
	ids := map[string]bool{}
	for _, enc := range []string{
		base64.StdEncoding.EncodeToString(raw),
		base64.RawURLEncoding.EncodeToString(raw),
		hex.EncodeToString(raw),
		"  " + hex.EncodeToString(raw) + "\n",
	} {
		k, err := NewKeyring(enc)
		if err != nil {
			t.Fatalf("%q: %v", enc, err)
		}
		ids[k.CurrentKeyID()] = true
	}
	if len(ids) != 1 {
		t.Errorf("the same key in different encodings gave ids %v", ids)
	}
	for _, bad := range []string{"", "short", base64.StdEncoding.EncodeToString(raw[:16]), strings.Repeat("z", 64)} {
		if _, err := NewKeyring(bad); err == nil || !strings.HasPrefix(err.Error(), "the master key ") {
			t.Errorf("%q: err = %v", bad, err)
		}
	}
	if _, err := NewKeyring(hex.EncodeToString(raw), "nope"); err == nil || !strings.Contains(err.Error(), "previous master key 1") {
		t.Errorf("bad previous key: %v", err)
	}
}

// TestDerive: a subkey is stable for a key and purpose, and differs by
// purpose and by key.
func TestDerive(t *testing.T) {
	t.Parallel()
	k1, _ := NewKey()
	k2, _ := NewKey()
	a, _ := NewKeyring(k1)
	b, _ := NewKeyring(k1, k2)
	c, _ := NewKeyring(k2, k1)
	if a.Derive("oauth") != b.Derive("oauth") {
		t.Error("the same current key derives different subkeys")
	}
	if a.Derive("oauth") == a.Derive("other") || a.Derive("oauth") == c.Derive("oauth") {
		t.Error("subkeys of different purposes or keys are equal")
	}
}
