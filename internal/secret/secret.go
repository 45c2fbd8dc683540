// Package secret seals values t3agent must keep at rest but never show:
// MCP server credentials, provider API keys, suspended run state. It uses
// AES-256-GCM with a keyring: the current key seals, every listed key opens,
// so a key can be rotated by adding the new one as current and keeping the
// old one until everything is resealed.
//
// A sealed value is text: "t3s1:<key id>:<base64url(nonce || ciphertext)>".
// The key id travels with the value, so opening never guesses. Callers bind
// a value to its place with associated data (for example "mcp_server:7"), so
// a sealed credential copied to another row does not open there.
package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

const prefix = "t3s1"

// KeySize is the length of a master key in bytes.
const KeySize = 32

// ErrCannotOpen is returned for a value that is corrupt, was sealed with
// another key or for another place, or whose key is not in the keyring. The
// message never includes the value.
var ErrCannotOpen = errors.New("a sealed value cannot be opened (wrong key, wrong place or corrupt)")

// Keyring holds the master keys. It is immutable after NewKeyring and safe
// for concurrent use.
type Keyring struct {
	current string
	aeads   map[string]cipher.AEAD
	// derive is the current key's material, for Derive.
	derive []byte
}

// NewKeyring builds a keyring from base64 (std or url, padded or not) or hex
// encoded 32-byte keys. current seals; previous keys only open.
func NewKeyring(current string, previous ...string) (*Keyring, error) {
	k := &Keyring{aeads: map[string]cipher.AEAD{}}
	for i, enc := range append([]string{current}, previous...) {
		raw, err := decodeKey(enc)
		if err != nil {
			if i == 0 {
				return nil, fmt.Errorf("the master key %w", err)
			}
			return nil, fmt.Errorf("previous master key %d %w", i, err)
		}
		id := KeyID(raw)
		block, err := aes.NewCipher(raw)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			k.current = id
			k.derive = raw
		}
		k.aeads[id] = aead
	}
	return k, nil
}

// NewKey returns a fresh random key, base64 encoded.
func NewKey() (string, error) {
	b := make([]byte, KeySize)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random key: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// KeyID is a short, non-secret fingerprint of a key.
func KeyID(raw []byte) string {
	sum := sha256.Sum256(append([]byte("t3agent key id\x00"), raw...))
	return hex.EncodeToString(sum[:4])
}

// CurrentKeyID names the key that seals.
func (k *Keyring) CurrentKeyID() string { return k.current }

func decodeKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("is empty")
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == KeySize {
			return b, nil
		}
	}
	if b, err := hex.DecodeString(s); err == nil && len(b) == KeySize {
		return b, nil
	}
	return nil, fmt.Errorf("must be %d random bytes, base64 or hex encoded", KeySize)
}

// Seal encrypts plaintext bound to the associated data.
func (k *Keyring) Seal(plaintext []byte, associated string) (string, error) {
	aead := k.aeads[k.current]
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("random nonce: %w", err)
	}
	out := aead.Seal(nonce, nonce, plaintext, []byte(associated))
	return prefix + ":" + k.current + ":" + base64.RawURLEncoding.EncodeToString(out), nil
}

// Open decrypts a value sealed for the same associated data.
func (k *Keyring) Open(sealed string, associated string) ([]byte, error) {
	parts := strings.SplitN(sealed, ":", 3)
	if len(parts) != 3 || parts[0] != prefix {
		return nil, ErrCannotOpen
	}
	aead, ok := k.aeads[parts[1]]
	if !ok {
		return nil, ErrCannotOpen
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(raw) < aead.NonceSize()+aead.Overhead() {
		return nil, ErrCannotOpen
	}
	plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(associated))
	if err != nil {
		return nil, ErrCannotOpen
	}
	return plain, nil
}

// KeyIDOf returns the key id a sealed value names, for rotation reports.
func KeyIDOf(sealed string) (string, bool) {
	parts := strings.SplitN(sealed, ":", 3)
	if len(parts) != 3 || parts[0] != prefix {
		return "", false
	}
	return parts[1], true
}

// NeedsReseal reports whether a value was sealed with a key other than the
// current one.
func (k *Keyring) NeedsReseal(sealed string) bool {
	id, ok := KeyIDOf(sealed)
	return !ok || id != k.current
}

// Derive returns a 32-byte subkey of the current master key for purpose
// (HMAC-SHA256 of the purpose under the key), for a part that needs key
// material of its own, such as the OAuth server's token keys. It changes
// when the current key changes; what it protected then no longer opens.
func (k *Keyring) Derive(purpose string) [32]byte {
	m := hmac.New(sha256.New, k.derive)
	m.Write([]byte("t3agent derive: " + purpose))
	var out [32]byte
	copy(out[:], m.Sum(nil))
	return out
}
